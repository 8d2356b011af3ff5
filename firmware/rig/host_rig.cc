#include "firmware/rig/host_rig.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/files.h"
#include "firmware/rig/kernel_links.h"
#include "firmware/rig/wiring.h"

namespace toroid::rig {

namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string coord_file_part(const Coord& c) {
  char b[48];
  snprintf(b, sizeof b, "%u-%u-%u", c.c[0], c.c[1], c.c[2]);
  return b;
}

std::string fmt_secs(double s) {
  char b[32];
  snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

}  // namespace

HostRig::HostRig(RigOptions opt) : opt_(std::move(opt)) {}

HostRig::~HostRig() {
  for (auto& n : nodes_) {
    if (n->child.out_fd >= 0) close(n->child.out_fd);
    if (n->log) fclose(n->log);
  }
  if (rig_log_) fclose(rig_log_);
}

void HostRig::say(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fputs(buf, stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  if (rig_log_) {
    std::fputs(buf, rig_log_);
    std::fputc('\n', rig_log_);
    std::fflush(rig_log_);
  }
}

HostRig::NodeProc* HostRig::node_named(const std::string& name) {
  for (auto& n : nodes_)
    if (n->name == name) return n.get();
  return nullptr;
}

int HostRig::setup() {
  if (access(opt_.node_bin.c_str(), X_OK) != 0) {
    fprintf(stderr, "toroid-rig: node program %s: %s\n", opt_.node_bin.c_str(), std::strerror(errno));
    return 2;
  }
  // Run directory: RUN_ROOT/rig-YYYYmmdd-HHMMSS[-N].
  if (Status st = mkdir_p(opt_.run_root); !st) {
    fprintf(stderr, "toroid-rig: run dir: %s\n", st.message().c_str());
    return 2;
  }
  char stamp[32];
  const time_t now = time(nullptr);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
  std::string base = opt_.run_root + "/rig-" + stamp;
  run_dir_ = base;
  for (int k = 2; mkdir(run_dir_.c_str(), 0755) != 0; ++k) {
    if (errno != EEXIST || k > 1000) {
      fprintf(stderr, "toroid-rig: mkdir %s: %s\n", run_dir_.c_str(), std::strerror(errno));
      return 2;
    }
    run_dir_ = base + "-" + std::to_string(k);
  }
  char real[PATH_MAX];
  if (!realpath(run_dir_.c_str(), real)) {
    fprintf(stderr, "toroid-rig: realpath %s: %s\n", run_dir_.c_str(), std::strerror(errno));
    return 2;
  }
  run_dir_ = real;
  rig_log_ = fopen((run_dir_ + "/rig.log").c_str(), "w");
  if (is_kernel_driver(opt_.driver)) return setup_kernel();
  // Sockets under the run dir when the paths fit a sockaddr_un and the
  // personality syntax; otherwise in a private directory under /tmp.
  sock_dir_ = run_dir_ + "/sock";
  if (check_socket_dir(sock_dir_, opt_.dims) && mkdir(sock_dir_.c_str(), 0700) == 0) {
    sock_dir_tmp_ = false;
  } else {
    char tmpl[] = "/tmp/toroid-rig.XXXXXX";
    if (!mkdtemp(tmpl)) {
      fprintf(stderr, "toroid-rig: mkdtemp: %s\n", std::strerror(errno));
      return 2;
    }
    sock_dir_ = tmpl;
    sock_dir_tmp_ = true;
  }

  WiringOptions w;
  w.dims = opt_.dims;
  w.driver = opt_.driver;
  w.socket_dir = sock_dir_;
  w.job = opt_.job;
  w.seed = opt_.seed;
  w.job_args = opt_.job_args;
  w.partitions = opt_.partitions;
  if (opt_.frame == 9000 && opt_.driver == "memif") w.memif_bsize = 9216;
  if (opt_.soak_ns) {
    // One end for every process, also the ones --chaos starts again: the
    // soak stops starting operations at this CLOCK_MONOTONIC time.
    const uint64_t until = mono_ns() + opt_.train_timeout_ns + 2 * kSec + opt_.soak_ns;
    w.job_args["until"] = std::to_string(until);
    chaos_setup(until);
  }
  auto wired = wire_partition(w);
  if (!wired) {
    fprintf(stderr, "toroid-rig: %s\n", wired.status().message().c_str());
    return 2;
  }
  for (uint32_t r = 0; r < wired.value().size(); ++r) {
    const Personality& p = wired.value()[r];
    // Named by where it is cabled in the whole torus: with --partitions, two
    // partitions' nodes share coordinates within their own partition.
    const Coord at = coord_of(r, opt_.dims);
    NodeProc* n = add_node(at);
    n->personality_file = run_dir_ + "/node-" + coord_file_part(at) + ".personality";
    FILE* f = fopen(n->personality_file.c_str(), "w");
    if (!f) {
      fprintf(stderr, "toroid-rig: cannot write %s: %s\n", n->personality_file.c_str(), std::strerror(errno));
      return 2;
    }
    const std::string text = personality_text(p);
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  }
  if (opt_.remove_socket) {
    if (!has_link(opt_.remove_dir, opt_.dims)) {
      fprintf(stderr, "toroid-rig: --remove-socket %s:%s: no link there\n", opt_.remove_node.to_string().c_str(),
              dir_name(opt_.remove_dir));
      return 2;
    }
    const Cable k = cable_at(opt_.dims, sock_dir_, opt_.remove_node, opt_.remove_dir);
    removed_socket_ = k.socket;
    delayed_ = node_named(k.client.to_string());
  }
  return 0;
}

HostRig::NodeProc* HostRig::add_node(const Coord& c) {
  auto n = std::make_unique<NodeProc>();
  n->coord = c;
  n->name = c.to_string();
  n->log_file = run_dir_ + "/node-" + coord_file_part(c) + ".log";
  n->log = fopen(n->log_file.c_str(), "w");
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

void HostRig::launch(NodeProc& n) {
  // Kernel NICs: the node runs in its own network namespace and boots from
  // the partition's topology, as a deployed node does.
  std::vector<std::string> argv = {opt_.node_bin, "--personality", n.personality_file};
  if (links_)
    argv = {KernelLinks::ip_path(), "netns", "exec", links_->netns(n.coord), opt_.node_bin, "--topology",
            topology_file_, "--rank", std::to_string(rank_of(n.coord, opt_.dims))};
  const uint64_t margin = 3 * kSec;
  const uint64_t job_ns =
      opt_.timeout_ns > opt_.train_timeout_ns + margin + kSec ? opt_.timeout_ns - opt_.train_timeout_ns - margin : kSec;
  argv.insert(argv.end(), {"--train-timeout", ms_arg(opt_.train_timeout_ns), "--job-timeout", ms_arg(job_ns),
                           "--coll-timeout", ms_arg(std::min<uint64_t>(job_ns, 30 * kSec)),
                           // The rig always stops its nodes; linger only bounds an orphan.
                           "--linger", ms_arg(opt_.timeout_ns + opt_.hold_ns + 60 * kSec),
                           "--stop-grace", ms_arg(opt_.quiesce_timeout_ns + 5 * kSec)});
  // A soak's operations fail fast when something breaks (the partition
  // resets); the deadline only backs that up.
  if (opt_.soak_ns) argv.insert(argv.end(), {"--coll-timeout", "10000ms"});
  if (!chaos_.cut_dir.empty()) argv.insert(argv.end(), {"--cut-dir", chaos_.cut_dir});
  if (!opt_.cpus.empty()) argv.insert(argv.end(), {"--cpus", opt_.cpus});
  // More node processes than cores: idle nodes must give their core to the
  // peer they wait for instead of spinning on it.
  if (opt_.dims.nodes() > static_cast<uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))))
    argv.push_back("--yield-when-idle");
  if (!opt_.log_level.empty()) argv.insert(argv.end(), {"--log-level", opt_.log_level});
  argv.insert(argv.end(), opt_.node_args.begin(), opt_.node_args.end());
  auto c = spawn(argv);
  n.spawned = true;
  ++n.starts;
  if (!c) {
    n.exited = true;
    n.exit_mono = mono_ns();
    n.rig_note = "could not start: " + c.status().message();
    note_failure(n.exit_mono, "node " + n.name + " " + n.rig_note);
    return;
  }
  n.child = c.value();
  if (n.log) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    fprintf(n.log, "# %s\n", cmd.c_str());
    fflush(n.log);
  }
}

void HostRig::reap() {
  for (auto& np : nodes_) {
    NodeProc& n = *np;
    if (!n.spawned || n.exited || n.child.pid <= 0) continue;
    int status = 0;
    rusage ru{};
    const pid_t r = wait4(n.child.pid, &status, WNOHANG, &ru);
    if (r != n.child.pid) continue;
    n.exited = true;
    n.wait_status = status;
    n.exit_mono = mono_ns();
    n.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    read_output(n, true);
    if (n.log) {
      fprintf(n.log, "# %s at +%.3f s\n", describe_exit(status).c_str(), since_launch(n.exit_mono));
      fflush(n.log);
    }
    if (n.chaos_killed) {  // --chaos: started again by chaos_step, not a death
      say("rig: node %s %s (--chaos)", n.name.c_str(), describe_exit(status).c_str());
      continue;
    }
    if (n.killed_by_rig) n.died = true;
    if (phase_ == Phase::kRun || phase_ == Phase::kHold) {
      n.died = true;
      const std::string how = describe_exit(status);
      if (n.killed_by_rig) {
        say("rig: node %s %s (the rig killed it: %s)", n.name.c_str(), how.c_str(), n.rig_note.c_str());
      } else {
        if (n.rig_note.empty()) n.rig_note = "died: " + how + (n.have_verdict ? " after its verdict" : "");
        say("rig: node %s %s before the rig stopped it", n.name.c_str(), how.c_str());
      }
      if (t_death_ == 0) {
        t_death_ = n.exit_mono;
        first_death_ = "node " + n.name + " " + (n.killed_by_rig ? n.rig_note : "died: " + how);
      }
      note_failure(n.exit_mono, "node " + n.name + " " + (n.killed_by_rig ? n.rig_note : "died: " + how));
    }
  }
}

void HostRig::begin_stop(uint64_t now, const std::string& why) {
  if (phase_ != Phase::kRun && phase_ != Phase::kHold) return;
  stop_reason_ = why;
  for (auto& n : nodes_) {
    if (n->spawned && !n->exited) {
      n->hwm_kb = proc_status_kb(n->child.pid, "VmHWM");
      kill(n->child.pid, SIGTERM);
    } else if (!n->spawned) {
      n->rig_note = "never started";
    }
  }
  phase_ = Phase::kQuiesce;
  t_phase_deadline_ = now + opt_.quiesce_timeout_ns;
}

void HostRig::progress(uint64_t now, bool force) {
  uint32_t up = 0, ports = 0, trained = 0, verdicts = 0;
  const uint32_t total = static_cast<uint32_t>(nodes_.size());
  std::string waiting;
  for (auto& n : nodes_) {
    up += n->up;
    ports += n->ports;
    trained += n->trained;
    verdicts += n->have_verdict;
    if (!n->have_verdict && !n->exited && waiting.size() < 200)
      waiting += (waiting.empty() ? "" : ", ") + n->name + " (" + n->state + ")";
  }
  const uint32_t counts[4] = {up, ports, trained, verdicts};
  const char* const what[4] = {"started", "connected their links", "trained", "reported"};
  bool printed = false;
  for (int i = 0; i < 4; ++i) {
    if (counts[i] == total && !(milestones_ & (1u << i))) {
      milestones_ |= 1u << i;
      say("rig: all %u nodes %s (+%.2f s)", total, what[i], since_launch(now));
      printed = true;
      if (i == 2 && t_all_trained_ == 0) t_all_trained_ = now;
    }
  }
  if (printed) t_last_progress_ = now;
  if (force || (phase_ == Phase::kRun && now - t_last_progress_ >= 5 * kSec)) {
    t_last_progress_ = now;
    say("rig: +%.1f s: started %u/%u, connected %u/%u, trained %u/%u, verdicts %u/%u%s%s", since_launch(now), up,
        total, ports, total, trained, total, verdicts, total, waiting.empty() ? "" : "; waiting for ",
        waiting.c_str());
  }
}

void HostRig::step(uint64_t now) {
  if (phase_ == Phase::kRun || phase_ == Phase::kHold) {
    progress(now, false);
    // --remove-socket: the link's client starts once its socket is gone.
    if (delayed_ && !delayed_->spawned) {
      if (file_exists(removed_socket_)) {
        unlink(removed_socket_.c_str());
        socket_removed_ = true;
        say("rig: removed %s (--remove-socket); starting node %s", removed_socket_.c_str(), delayed_->name.c_str());
        launch(*delayed_);
      } else if (now - t_launch_ > opt_.train_timeout_ns) {
        say("rig: %s never appeared; starting node %s anyway", removed_socket_.c_str(), delayed_->name.c_str());
        launch(*delayed_);
      }
    }
    chaos_step(now);
    // --kill: after every node trained (or the training deadline).
    if (opt_.kill && !kill_done_) {
      const uint64_t base = t_all_trained_ ? t_all_trained_ : t_launch_ + opt_.train_timeout_ns + kSec;
      if (now >= base + opt_.kill_at_ns) {
        NodeProc* v = node_named(opt_.kill_node.to_string());
        kill_done_ = true;
        t_kill_ = mono_ns();
        if (v && v->spawned && !v->exited) {
          const bool freeze = opt_.kill_signal == SIGSTOP;
          v->killed_by_rig = !freeze;
          char note[128];
          snprintf(note, sizeof note, "%s by the rig (%s) at +%.2f s",
                   freeze ? "frozen with SIGSTOP" : "killed with SIGKILL", freeze ? "--freeze" : "--kill",
                   since_launch(now));
          v->rig_note = note;
          say("rig: %s node %s (pid %d) with %s (%s)", freeze ? "freezing" : "killing", v->name.c_str(),
              static_cast<int>(v->child.pid), freeze ? "SIGSTOP" : "SIGKILL", freeze ? "--freeze" : "--kill");
          kill(v->child.pid, opt_.kill_signal);
          // A death: the failure grace starts now, so the neighbours report.
          // It is what the report names first unless something had already
          // failed before the rig acted (then that is the first failure).
          t_death_ = t_kill_;
          if (t_failure_ == 0) first_death_ = "node " + v->name + " " + v->rig_note;
          note_failure(t_kill_, "node " + v->name + " " + v->rig_note);
        }
      }
    }
  }
  switch (phase_) {
    case Phase::kRun: {
      bool all_done = true;
      for (auto& n : nodes_) all_done &= (n->have_verdict || n->exited) && !n->chaos_killed;
      const bool kill_pending = opt_.kill && !kill_done_;
      if (all_done && t_all_verdicts_ == 0) t_all_verdicts_ = now;
      if (t_failure_ && now >= t_failure_ + opt_.fail_grace_ns) {
        begin_stop(now, "a failure");
      } else if (all_done && !kill_pending && t_death_ == 0) {
        // After a death the grace runs out first: the neighbours report.
        if (opt_.hold_ns > 0 && t_failure_ == 0) {
          phase_ = Phase::kHold;
          t_hold0_ = now;
          // Let the post-job spin phases end before sampling.
          t_hold_sample_ = now + 250 * kMs;
          t_hold_end_ = t_hold_sample_ + opt_.hold_ns;
          say("rig: holding the idle nodes for %s (--hold), measuring their CPU use",
              fmt_secs(static_cast<double>(opt_.hold_ns) / 1e9).c_str());
        } else {
          begin_stop(now, "every node reported");
        }
      } else if (now >= t_launch_ + opt_.timeout_ns) {
        timed_out_ = true;
        for (auto& n : nodes_) {
          if (n->have_verdict || n->exited) continue;
          n->rig_note = "no verdict within the " + fmt_secs(static_cast<double>(opt_.timeout_ns) / 1e9) +
                        " job timeout (state " + n->state + "): stopped";
          say("rig: node %s: %s", n->name.c_str(), n->rig_note.c_str());
          note_failure(now, "node " + n->name + ": " + n->rig_note);
        }
        begin_stop(now, "the job timeout");
      }
      break;
    }
    case Phase::kHold:
      if (!hold_sampled_ && now >= t_hold_sample_) {
        for (auto& n : nodes_)
          if (n->spawned && !n->exited) n->hold_ticks0 = proc_cpu_ticks(n->child.pid);
        hold_sampled_ = true;
        t_hold_sample_ = mono_ns();
      }
      if (hold_sampled_ && now >= t_hold_end_) {
        for (auto& n : nodes_)
          if (n->spawned && !n->exited) n->hold_ticks1 = proc_cpu_ticks(n->child.pid);
        t_hold_end_ = mono_ns();
        hold_done_ = true;
        begin_stop(now, "the hold is over");
      } else if (t_failure_ && now >= t_failure_ + opt_.fail_grace_ns) {
        begin_stop(now, "a failure");
      }
      break;
    case Phase::kQuiesce: {
      bool all = true;
      for (auto& n : nodes_) all &= !n->spawned || n->exited || n->quiesced;
      if (all || now >= t_phase_deadline_) {
        // Every node that could has stopped polling: release them; one that
        // did not quiesce (hung, or still connecting) will not listen to
        // SIGUSR1 either, and nobody polls its links any more: SIGKILL.
        for (auto& n : nodes_) {
          if (!n->spawned || n->exited) continue;
          if (n->quiesced) {
            kill(n->child.pid, SIGUSR1);
            continue;
          }
          say("rig: node %s did not stop polling within %s of SIGTERM; SIGKILL", n->name.c_str(),
              fmt_secs(static_cast<double>(opt_.quiesce_timeout_ns) / 1e9).c_str());
          n->rig_note += std::string(n->rig_note.empty() ? "" : "; ") + "did not stop when told: killed";
          kill(n->child.pid, SIGKILL);
        }
        phase_ = Phase::kRelease;
        t_phase_deadline_ = now + opt_.exit_timeout_ns;
      }
      break;
    }
    case Phase::kRelease: {
      bool all = true;
      for (auto& n : nodes_) all &= !n->spawned || n->exited;
      if (all) {
        phase_ = Phase::kDone;
      } else if (now >= t_phase_deadline_) {
        for (auto& n : nodes_) {
          if (!n->spawned || n->exited) continue;
          say("rig: node %s did not exit within %s of the stop; SIGKILL", n->name.c_str(),
              fmt_secs(static_cast<double>(opt_.quiesce_timeout_ns + opt_.exit_timeout_ns) / 1e9).c_str());
          if (n->rig_note.empty()) n->rig_note = "did not exit when stopped: killed";
          kill(n->child.pid, SIGKILL);
        }
        for (auto& n : nodes_) {
          if (!n->spawned || n->exited) continue;
          int status = 0;
          rusage ru{};
          if (wait4(n->child.pid, &status, 0, &ru) == n->child.pid) {
            n->exited = true;
            n->wait_status = status;
            n->exit_mono = mono_ns();
            n->cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
          }
          read_output(*n, true);
        }
        phase_ = Phase::kDone;
      }
      break;
    }
    case Phase::kDone:
      break;
  }
}

int HostRig::run() {
  install_supervisor_signals();
  if (int rc = setup(); rc) {
    cleanup_files();
    return rc;
  }
  say("rig: %s host rig over %s: %u node processes, job %s, seed %lu", opt_.dims.to_string().c_str(),
      opt_.driver.c_str(), static_cast<unsigned>(nodes_.size()), opt_.job.c_str(),
      static_cast<unsigned long>(opt_.seed));
  say("rig: run dir %s (node-X-Y-Z.log, node-X-Y-Z.personality)%s%s", run_dir_.c_str(),
      sock_dir_tmp_ ? "; sockets in " : "", sock_dir_tmp_ ? sock_dir_.c_str() : "");
  t_launch_ = mono_ns();
  t_last_progress_ = t_launch_;
  for (auto& n : nodes_)
    if (n.get() != delayed_) launch(*n);

  bool hard_stop = false;
  while (phase_ != Phase::kDone) {
    std::vector<pollfd> fds;
    std::vector<NodeProc*> who;
    if (signal_wake_fd() >= 0) fds.push_back({signal_wake_fd(), POLLIN, 0});
    who.push_back(nullptr);
    for (auto& n : nodes_) {
      if (n->child.out_fd < 0) continue;
      fds.push_back({n->child.out_fd, POLLIN, 0});
      who.push_back(n.get());
    }
    const int r = poll(fds.data(), fds.size(), 20);
    if (r > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        if (fds[i].fd == signal_wake_fd()) {
          drain_signal_wake();
        } else {
          read_output(*who[i], false);
        }
      }
    }
    reap();
    const uint64_t now = mono_ns();
    if (interrupts_received() > 0 && !interrupted_) {
      interrupted_ = true;
      say("rig: interrupted; stopping every node (Ctrl-C again to kill them at once)");
      note_failure(now, "interrupted");
      begin_stop(now, "an interrupt");
    }
    if (interrupts_received() > 1 && !hard_stop) {
      hard_stop = true;
      for (auto& n : nodes_)
        if (n->spawned && !n->exited) kill(n->child.pid, SIGKILL);
      t_phase_deadline_ = now;
      phase_ = Phase::kRelease;
    }
    step(now);
  }
  for (auto& n : nodes_) read_output(*n, true);
  const int rc = report();
  cleanup_files();
  return rc;
}

void HostRig::cleanup_files() {
  // A node that did not exit normally leaves its EAL runtime directory
  // (--file-prefix toroid-nX-Y-Z-PID, empty with --no-shconf): remove it.
  std::vector<std::string> bases = {"/var/run/dpdk"};
  if (const char* x = std::getenv("XDG_RUNTIME_DIR")) bases.push_back(std::string(x) + "/dpdk");
  bases.push_back("/tmp/dpdk");
  for (auto& n : nodes_) {
    if (!n->spawned || n->child.pid <= 0 || !n->exited || WIFEXITED(n->wait_status)) continue;
    char name[96];
    snprintf(name, sizeof name, "toroid-n%u-%u-%u-%d", n->coord.c[0], n->coord.c[1], n->coord.c[2],
             static_cast<int>(n->child.pid));
    for (const auto& b : bases) {
      const std::string d = b + "/" + name;
      if (DIR* dir = opendir(d.c_str())) {
        while (dirent* e = readdir(dir)) {
          if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            unlink((d + "/" + e->d_name).c_str());
        }
        closedir(dir);
        rmdir(d.c_str());
      }
    }
  }
  if (links_) links_->remove();
  // Sockets the nodes left (a killed memif server cannot remove its own).
  if (!sock_dir_.empty()) {
    for (const auto& k : cables(opt_.dims, sock_dir_)) unlink(k.socket.c_str());
    if (rmdir(sock_dir_.c_str()) != 0 && errno != ENOENT)
      say("rig: could not remove %s: %s", sock_dir_.c_str(), std::strerror(errno));
  }
}

}  // namespace toroid::rig
