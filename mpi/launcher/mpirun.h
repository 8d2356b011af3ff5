// toroid-mpirun (./toroid mpirun): runs an MPI program on the host rig, one
// process per node (rank = the node's linear rank), each booting its node
// from the personality the launcher wrote, wired by memif pairs or io_uring
// sockets as toroid-rig wires toroid-node (firmware/rig/wiring.h).
//
// Output: every line a rank prints goes to the same stream of the launcher
// with its rank in front ("[3] ..."; --no-tag-output drops it), and to
// RUN_DIR/rank-R.out. The ranks talk to the launcher over a control socket
// (mpi/launch_protocol.h): it lets MPI_Finalize close the links in two
// phases, and tells every rank to stop as soon as one aborts, dies, or the
// job runs out of time; the message names the rank and why.
//
// Exit status: MPI_Abort's code; else the first failing rank's status
// (128 + N for a signal); 0 when every rank exited with 0; 2 for usage
// errors; 130 when interrupted.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/torus.h"
#include "firmware/rig/process.h"

namespace toroid::mpirun {

struct Options {
  Dims dims;
  std::string driver = "memif";  // memif | uring
  std::string run_root = "run";
  std::vector<std::string> program;  // argv
  std::vector<std::pair<std::string, std::string>> env;  // --env K=V
  uint64_t timeout_ns = 600 * kSec;    // the whole job
  uint64_t train_timeout_ns = 20 * kSec;
  uint64_t wait_timeout_ns = 0;        // TOROID_MPI_TIMEOUT for the ranks (0: theirs)
  std::string cpus;
  bool tag_output = true;
  bool quiet = false;  // no launcher lines on success
  // A rank that dies or aborts does not stop the others: they find out
  // through their links and their waits (tests of the library's own
  // failure detection). The job timeout still stops everything.
  bool no_stop = false;
};

class Launcher {
 public:
  explicit Launcher(Options o) : opt_(std::move(o)) {}
  ~Launcher();
  int run();

 private:
  struct Rank {
    uint32_t rank = 0;
    Coord coord;
    std::string personality;
    pid_t pid = -1;
    int out_fd = -1, err_fd = -1, ctl_fd = -1;
    rig::LineBuffer out, err, ctl;
    FILE* log = nullptr;
    bool up = false, ready = false, finalizing = false, quiesced = false, released = false;
    bool exited = false;
    int wait_status = 0;
    bool aborted = false;
  };

  int setup();
  int spawn_rank(Rank& r);
  void read_fd(Rank& r, int which);
  void emit(Rank& r, int which, const std::string& line);
  void on_ctl(Rank& r, const std::string& line);
  void reap();
  void fail(const std::string& why, int status, bool force = false);
  void stop_all(uint64_t now);
  void step(uint64_t now);
  void cleanup();
  void say(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  std::string rank_name(const Rank& r) const;

  Options opt_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::string run_dir_, sock_dir_;
  bool sock_tmp_ = false;
  uint64_t t_start_ = 0;
  // Failure handling: the first failure wins; the others follow.
  bool failed_ = false;
  std::string failure_;
  int fail_status_ = 0;
  bool stopping_ = false;
  uint64_t t_stop_ = 0;
  bool termed_ = false, killed_ = false;
  bool quiesce_sent_ = false, release_sent_ = false;
  bool interrupted_ = false;
};

// "-n N": a torus of N nodes, as balanced as MPI_Dims_create makes it.
Dims dims_for(uint32_t n);

}  // namespace toroid::mpirun
