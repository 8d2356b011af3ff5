// The host rig: one toroid-node process per node of the partition, wired by
// DPDK memif pairs or io_uring unix sockets. The rig is the control system:
// it writes every personality, starts the processes, streams their logs
// (with node prefixes, and to one file per node under the run directory),
// follows their progress from the events they print, enforces every
// timeout, stops them all together, and aggregates their verdicts into one
// case table and one exit status. See docs/host-rig.md.
//
// Stopping, always in two phases (a memif PMD can crash in a process that
// polls while its peer disconnects): SIGTERM to every live node (each stops
// polling and prints "quiesced"), then SIGUSR1 to all of them (each closes
// its ports and exits), then SIGKILL for any that did not exit in time.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/torus.h"
#include "firmware/rig/bench_report.h"
#include "firmware/rig/events.h"
#include "firmware/rig/kernel_links.h"
#include "firmware/rig/process.h"

namespace toroid::rig {

struct RigOptions {
  Dims dims;
  std::string job = "selftest";
  std::string driver = "memif";  // memif | uring | af_xdp | af_packet (kernel NICs: veths in namespaces)
  uint64_t seed = 1;
  std::map<std::string, std::string> job_args;
  std::string run_root = "run";  // the rig makes RUN_ROOT/rig-YYYYmmdd-HHMMSS/
  std::string node_bin;          // toroid-node
  uint64_t timeout_ns = 60 * kSec;       // every node's verdict within this (from launch)
  uint64_t train_timeout_ns = 5 * kSec;  // connect + link training, per node
  uint64_t hold_ns = 0;                  // keep the nodes idle this long after the verdicts
  uint64_t fail_grace_ns = 2 * kSec;     // after a failure: wait this long for the other verdicts
  uint64_t quiesce_timeout_ns = 3 * kSec;
  uint64_t exit_timeout_ns = 5 * kSec;
  // Test faults.
  bool kill = false;  // send kill_signal to kill_node kill_at_ns after every node trained
  int kill_signal = 9;  // SIGKILL (--kill) or SIGSTOP (--freeze: a hung node)
  Coord kill_node;
  uint64_t kill_at_ns = 0;
  bool remove_socket = false;  // remove that cable's socket before its client connects
  std::vector<VethSwap> swaps;  // kernel drivers: veths swapped at a node (miscabling)
  // --partitions A,B,...: the x dimension split into partitions cabled as
  // one torus (split_partition_x): their wrap cables cross.
  std::vector<std::string> partitions;
  // --chaos kill,stop,cut,reboot with the soak job (host_rig_chaos.cc):
  // faults at random, one at a time, for soak_ns; nodes killed are started
  // again. soak_ns > 0: the soak job's length (--minutes / --seconds).
  std::vector<std::string> chaos;
  uint64_t soak_ns = 0;
  Coord remove_node;
  Dir remove_dir = Dir::kXp;
  std::string cpus;  // the nodes' EAL lcore CPU list; empty: the rig's affinity
  std::string log_level;
  std::vector<std::string> node_args;
  bool stream = true;  // node log lines on stdout (always in the files)
  // Bench job (docs/bench.md): the JSON file of the sweep, and the frame size.
  std::string json_path;
  uint32_t frame = 0;  // 9000: memif bsize=9216 on every port; 0: the driver's default
};

class HostRig {
 public:
  explicit HostRig(RigOptions opt);
  ~HostRig();
  HostRig(const HostRig&) = delete;
  HostRig& operator=(const HostRig&) = delete;

  // Runs the rig to the end and prints the report; returns the exit status:
  // 0 every node passed, 1 a failure, 2 a setup error, 130 interrupted.
  int run();

 private:
  struct Case {
    std::string coll, algo, name, result, detail;
    uint64_t ns = 0;
  };
  struct LinkDown {
    std::string port, dir, peer, reason;
    uint64_t mono = 0;
  };
  struct NodeProc {
    Coord coord;
    std::string name;  // "1,0,1"
    std::string personality_file, log_file;
    FILE* log = nullptr;
    Child child;
    LineBuffer lines;
    bool spawned = false, up = false, ports = false, trained = false, quiesced = false;
    std::string state = "starting";
    bool have_verdict = false, pass = false;
    std::string reason;
    std::vector<Case> cases;
    std::vector<std::pair<std::string, uint64_t>> totals;
    std::string totals_group;
    std::vector<LinkDown> linkdowns;
    bool exited = false;
    int wait_status = 0;
    uint64_t exit_mono = 0;
    double cpu_s = 0;        // user + system over the whole run (wait4)
    uint64_t hwm_kb = 0;     // peak RSS (VmHWM), read before the stop
    int64_t hold_ticks0 = -1, hold_ticks1 = -1;
    double open_ms = 0, connect_ms = 0;  // from its "ports" event
    std::string drivers;                 // its ports' drivers ("ports" event)
    std::vector<BenchRecord> bench;  // its "bench" lines
    BenchInfo bench_info;
    bool has_bench_info = false;
    std::string rig_note;    // what the rig did to it: "killed (--kill)", "no verdict within 60 s"
    bool killed_by_rig = false;
    bool died = false;  // exited before the rig stopped it (crash, --kill, exit)
    bool chaos_killed = false;  // killed by --chaos: started again, not a death
    uint32_t starts = 0;        // processes started for this node
  };
  // --chaos: one fault at a time, then quiet, then the next.
  struct Chaos {
    uint64_t seed = 1;
    uint64_t next_at = 0;      // the next fault starts then
    uint64_t stop_at = 0;      // no fault starts after this (the run ends clean)
    bool active = false;
    std::string kind;          // kill, stop, cut, reboot
    NodeProc* node = nullptr;
    std::string cut_file;
    uint64_t started = 0, ends_at = 0;
    std::string cut_dir;
    uint64_t kills = 0, stops = 0, cuts = 0, reboots = 0, restarts = 0;
    uint64_t wrong_lines = 0, hang_lines = 0, resets = 0;
  };
  enum class Phase : uint8_t { kRun, kHold, kQuiesce, kRelease, kDone };

  int setup();
  // Kernel drivers (host_rig_kernel.cc): namespaces, veths, the topology.
  int setup_kernel();
  NodeProc* add_node(const Coord& c);
  void launch(NodeProc& n);
  void say(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void read_output(NodeProc& n, bool eof);
  void handle_line(NodeProc& n, const std::string& line);
  void reap();
  void step(uint64_t now);
  void begin_stop(uint64_t now, const std::string& why);
  // --chaos (host_rig_chaos.cc)
  void chaos_setup(uint64_t until_mono);
  void chaos_step(uint64_t now);
  void chaos_end_fault(uint64_t now);
  void restart(NodeProc& n);
  void chaos_report();
  void progress(uint64_t now, bool force);
  void note_failure(uint64_t now, const std::string& what);
  int report();
  // The bench sweep's table and JSON file (host_rig_bench.cc); false if the
  // JSON file could not be written.
  bool report_bench();
  void cleanup_files();
  NodeProc* node_named(const std::string& name);
  double since_launch(uint64_t t) const { return static_cast<double>(t - t_launch_) / 1e9; }

  RigOptions opt_;
  std::string run_dir_, sock_dir_;
  std::string topology_file_;            // kernel drivers
  std::unique_ptr<KernelLinks> links_;   // kernel drivers
  bool sock_dir_tmp_ = false;
  FILE* rig_log_ = nullptr;
  std::vector<std::unique_ptr<NodeProc>> nodes_;
  Phase phase_ = Phase::kRun;
  uint64_t t_launch_ = 0, t_all_trained_ = 0, t_all_verdicts_ = 0;
  uint64_t t_failure_ = 0;  // first failure (0: none)
  uint64_t t_death_ = 0;    // first node that exited before the stop
  std::string first_failure_;
  std::string first_death_;  // the first node that died, named (reported before first_failure_)
  uint64_t t_hold0_ = 0, t_hold_sample_ = 0, t_hold_end_ = 0;
  bool hold_sampled_ = false, hold_done_ = false;
  uint64_t t_phase_deadline_ = 0;
  std::string stop_reason_;
  bool interrupted_ = false, timed_out_ = false;
  // --kill
  bool kill_done_ = false;
  uint64_t t_kill_ = 0;
  // --remove-socket: the client node waits until the socket is removed.
  NodeProc* delayed_ = nullptr;
  std::string removed_socket_;
  bool socket_removed_ = false;
  // progress
  uint64_t t_last_progress_ = 0;
  std::string last_progress_;
  uint32_t milestones_ = 0;  // bit per milestone printed
  Chaos chaos_;
};

}  // namespace toroid::rig
