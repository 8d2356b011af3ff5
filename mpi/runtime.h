// The MPI process's runtime: the node it runs (built from the personality
// its launcher wrote, as toroid-node builds it), the event loop every MPI
// call drives, the control link to toroid-mpirun, and the blocking wait
// every blocking call uses (bounded by TOROID_MPI_TIMEOUT, failing with a
// message that says what it waited for).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <mpi.h>

#include "base/clock.h"
#include "base/event_loop.h"
#include "firmware/host_port_factory.h"
#include "firmware/node.h"

namespace toroid::mpi {

// The control socket to toroid-mpirun (mpi/launch_protocol.h).
class LaunchLink {
 public:
  bool open_from_env();
  bool active() const { return fd_ >= 0; }
  void send(const std::string& line);
  // A whole line if one arrived (non-blocking); false otherwise.
  bool poll_line(std::string* line);
  // Waits up to timeout_ns for a line.
  bool wait_line(std::string* line, uint64_t timeout_ns);
  void close_link();

 private:
  bool take_line(std::string* line);
  int fd_ = -1;
  std::string buf_;
};

class Runtime {
 public:
  enum class Phase : uint8_t { kBefore, kUp, kDown };

  Phase phase() const { return phase_; }
  bool up() const { return phase_ == Phase::kUp; }
  // MPI_Init: boot the node, train its links, pass a world barrier.
  // Failures print their reason and end the process (nothing to return to).
  void init(int thread_level);
  // MPI_Finalize, in two parts: quiesce() passes a world barrier and the
  // launcher's two-phase stop (the links are served until every rank is
  // there); the caller then frees every object that holds a communicator;
  // shutdown() destroys the node and closes its ports.
  Status quiesce();
  void shutdown();
  // MPI_Abort and fatal errors: tell the launcher, then exit with `code`.
  [[noreturn]] void abort(int code, const std::string& why);

  Node& node() { return *node_; }
  EventLoop& loop() { return node_->loop(); }
  Comm& world() { return node_->comm(); }
  Messenger& msgr() { return node_->comm().msgr(); }
  uint32_t rank() const { return rank_; }
  uint32_t size() const { return size_; }
  int thread_level() const { return thread_level_; }
  bool is_main_thread() const;
  uint64_t timeout_ns() const { return timeout_ns_; }
  const std::string& processor_name() const { return processor_name_; }
  double wtime() const;
  Repro default_repro() const { return repro_; }

  // One round of the event loop (MPI_Test and friends).
  bool progress() { return node_->loop().run_once(); }
  // Drive the loop until done(), at most the MPI timeout; kTimeout names `what`.
  template <typename Done>
  Status wait(Done&& done, const char* what) {
    return node_->loop().run_until(done, timeout_ns_, what);
  }

 private:
  Status boot();
  static void check_link(void* self);
  void say_stop(const std::string& text);

  Phase phase_ = Phase::kBefore;
  int thread_level_ = MPI_THREAD_SINGLE;
  unsigned long main_thread_ = 0;
  uint32_t rank_ = 0, size_ = 1;
  uint64_t timeout_ns_ = 300 * kSec;
  uint64_t train_timeout_ns_ = tuning::kTrainTimeoutRealNs;
  uint64_t linger_ns_ = 0;
  Repro repro_ = Repro::kNone;
  std::string processor_name_;
  RealClock clock_;
  std::unique_ptr<HostPorts> ports_;
  std::unique_ptr<Node> node_;
  LaunchLink link_;
  Timer link_timer_;
};

Runtime& rt();

}  // namespace toroid::mpi
