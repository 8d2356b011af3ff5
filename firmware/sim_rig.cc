#include "firmware/sim_rig.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "collectives/comm.h"
#include "firmware/sim_capture.h"
#include "firmware/sim_link_model.h"

namespace toroid {

// --preallocate's free in-flight frames per node: more than a node's links
// carry at once in the allocation test's collectives.
constexpr size_t kPreallocFramesPerNode = 64;

Result<PortSwap> parse_port_swap(const std::string& s, const Dims& dims) {
  const auto colon = s.find(':');
  const auto comma = s.find(',', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || comma == std::string::npos)
    return error(Code::kInvalid, "swap-ports '%s': expected X.Y.Z:DIR1,DIR2 (e.g. 1.0.1:x+,x-)", s.c_str());
  auto node = parse_coord(s.substr(0, colon), dims);
  if (!node) return error(node.status().code(), "swap-ports: %s", node.status().message().c_str());
  PortSwap sw;
  sw.node = *node;
  const std::string a = s.substr(colon + 1, comma - colon - 1), b = s.substr(comma + 1);
  if (!parse_dir(a, &sw.a) || !parse_dir(b, &sw.b))
    return error(Code::kInvalid, "swap-ports '%s': directions must be x+ x- y+ y- z+ z-", s.c_str());
  if (sw.a == sw.b) return error(Code::kInvalid, "swap-ports '%s': the two directions are the same", s.c_str());
  if (!has_link(sw.a, dims) || !has_link(sw.b, dims))
    return error(Code::kInvalid, "swap-ports '%s': dims %s have no link in one of those directions", s.c_str(),
                 dims.to_string().c_str());
  return sw;
}

// One node of the rig as the scheduler sees it.
struct SimRig::SimNode final : SimEndpoint {
  explicit SimNode(uint32_t frame_bytes) : pool(frame_bytes + tuning::kPacketHeadroom, tuning::kSimPoolMaxPackets) {}
  HeapPacketPool pool;
  std::vector<SimPort*> ports;  // physical ports, in default (cabling) order
  std::unique_ptr<Node> node;
  bool booted = false;
  uint64_t livelocks = 0;
  // What a reboot needs to build the node again, and the node's faults.
  Personality personality;
  std::vector<Port*> node_ports;  // ports as the node sees them (capture wrappers)
  const Clock* clock = nullptr;
  NodeOptions options;
  uint64_t seed = 1;
  uint32_t rank = 0;
  std::vector<uint64_t> reboots;                     // times, ascending
  size_t next_reboot = 0;
  std::vector<std::pair<uint64_t, uint64_t>> stops;  // [from, until)
  uint32_t boots = 0;

  void make_node() {
    NodeOptions o = options;
    // The first boot keeps the id derived from seed and rank; every reboot
    // draws a new one, still replayable from the seed.
    if (boots > 0) o.boot_id = mix64(seed ^ mix64(rank) ^ mix64(0xb007 + boots));
    ++boots;
    node = std::make_unique<Node>(personality, *clock, pool, node_ports, o);
    booted = false;
  }

  uint64_t sim_step(uint64_t now) override {
    for (const auto& [from, until] : stops)
      if (now >= from && now < until) return until;  // frozen: frames wait in the rx rings
    if (next_reboot < reboots.size() && reboots[next_reboot] <= now) {
      ++next_reboot;
      kLog.warn("sim: node %s reboots (fault plan)", personality.coord.to_string().c_str());
      node.reset();  // its state is gone; frames already in its rx rings stay, as in a NIC
      make_node();
    }
    if (!booted) {
      booted = true;
      node->boot();
    }
    uint32_t rounds = 0;
    while (node->loop().run_once()) {
      if (++rounds >= tuning::kSimMaxStepRounds) {
        ++livelocks;  // still busy: let the others run, come back in 1 ns
        return now + 1;
      }
    }
    const uint64_t next = node->loop().next_deadline();
    return next_reboot < reboots.size() ? std::min(next, reboots[next_reboot]) : next;
  }
};

SimRig::SimRig(SimOptions opt) : opt_(std::move(opt)) {}

SimRig::~SimRig() {
  // Nodes hold packets of other nodes' pools in their queues: destroy every
  // node first, then the fabric (which frees what is in flight), then pools.
  for (auto& n : nodes_) n->node.reset();
  capture_.reset();  // before the fabric it observes
  fabric_.reset();
}

const Node& SimRig::node(uint32_t rank) const { return *nodes_[rank]->node; }
Node& SimRig::node(uint32_t rank) { return *nodes_[rank]->node; }

Status SimRig::build() {
  const Dims& dims = opt_.dims;
  // The world tree every node installs from its own entry (Node), checked
  // here once for the partition: O(nodes), where a check per node would
  // cost O(nodes^2).
  if (Status st = verify_route(make_tree_route(dims, coord_of(0, dims))); !st)
    return error(st.code(), "sim: world tree: %s", st.message().c_str());
  const uint32_t n = dims.nodes();
  // Regions: contiguous ranks (x fastest), so a region holds whole z-slabs
  // or y-rows and only their faces talk to another region. Several per
  // thread: the threads share out the regions with work window by window,
  // so work that sits in one part of the torus is still split.
  const uint32_t threads = std::max<uint32_t>(1, std::min(opt_.threads, n));
  const uint32_t regions = threads == 1 ? 1 : std::min(n, threads * tuning::kSimRegionsPerThread);
  if (threads > 1 && opt_.link.min_latency() + opt_.faults.delay_ns == 0)
    return error(Code::kInvalid, "sim: --threads %u needs a link latency of at least 1 ns (the lookahead)", threads);
  if (threads > 1 && !opt_.pcap_dir.empty())
    return error(Code::kInvalid, "sim: --pcap runs on one scheduler thread (drop --threads %u)", threads);
  fabric_ = std::make_unique<SimFabric>(opt_.seed, opt_.link, opt_.faults, regions, threads);
  if (!opt_.pcap_dir.empty()) {
    auto cap = SimCapture::create(opt_.pcap_dir, *fabric_);
    if (!cap) return cap.status();
    capture_ = std::move(cap.value());
  }
  const auto cabling = default_ports(dims, "sim");
  // A medium that corrupts nothing delivers every frame bit for bit, as
  // memif's shared memory does: its links skip the software CRC (data and
  // acks; docs/sim.md). A plan with corrupt=P keeps it on every frame.
  const bool integrity = opt_.faults.corrupt == 0;
  nodes_.reserve(n);
  region_of_.resize(n);
  for (uint32_t r = 0; r < n; ++r) {
    auto sn = std::make_unique<SimNode>(opt_.frame_bytes);
    region_of_[r] = static_cast<uint32_t>(uint64_t{r} * regions / n);
    const uint32_t id = fabric_->add_node(sn.get(), region_of_[r]);
    for (const auto& ps : cabling) sn->ports.push_back(fabric_->add_port(id, ps.name, &sn->pool, opt_.frame_bytes, integrity));
    if (opt_.preallocate) sn->pool.reserve(tuning::kSimPoolMaxPackets / 4);
    nodes_.push_back(std::move(sn));
  }
  if (opt_.preallocate) fabric_->reserve_events(kPreallocFramesPerNode * size_t{n});
  // Port index of each direction in the cabling order.
  int port_of_dir[kNumDirs];
  for (int& v : port_of_dir) v = -1;
  for (size_t i = 0; i < cabling.size(); ++i) port_of_dir[static_cast<int>(cabling[i].dir)] = static_cast<int>(i);
  // One cable per (node, plus direction): node.d+ <-> neighbour.d-.
  std::vector<int> link_of(static_cast<size_t>(n) * kNumDirs, -1);
  for (uint32_t r = 0; r < n; ++r) {
    const Coord c = coord_of(r, dims);
    for (int d = 0; d < kDims; ++d) {
      const Dir plus = dir_of(d, true);
      if (!has_link(plus, dims)) continue;
      const uint32_t peer = rank_of(neighbour(c, plus, dims), dims);
      SimPort* a = nodes_[r]->ports[port_of_dir[static_cast<int>(plus)]];
      SimPort* b = nodes_[peer]->ports[port_of_dir[static_cast<int>(opposite(plus))]];
      const int link = fabric_->connect(a, b);
      link_of[r * kNumDirs + static_cast<int>(plus)] = link;
      link_of[peer * kNumDirs + static_cast<int>(opposite(plus))] = link;
    }
  }
  for (const auto& cut : opt_.faults.linkdown) {
    const int link = link_of[rank_of(cut.node, dims) * kNumDirs + static_cast<int>(cut.dir)];
    if (link < 0)
      return error(Code::kInvalid, "faults: linkdown %s:%s: no link there", cut.node.to_string().c_str(),
                   dir_name(cut.dir));
    fabric_->cut_link(link, cut.at_ns, cut.for_ns ? cut.at_ns + cut.for_ns : kNever);
  }
  NodeOptions no;
  no.train_timeout_ns = tuning::kTrainTimeoutSimNs;
  no.coll_timeout_ns = tuning::kCollTimeoutSimNs;
  no.net.link.rto_ns = sim_link_rto_ns(opt_.link, opt_.frame_bytes, tuning::kLinkAckDelaySimNs);
  no.net.link.rto_max_ns = tuning::kLinkRtoMaxSimNs;
  no.net.link.ack_delay_ns = tuning::kLinkAckDelaySimNs;
  no.net.link.down_after_ns = tuning::kLinkDownSimNs;
  no.net.link.keepalive_ns = tuning::kLinkKeepaliveSimNs;
  no.net.dateline = opt_.dateline;
  for (int v = 0; v < wire::kNumVcs; ++v) {
    if (opt_.vc_credits) no.net.link.rx_credits[v] = opt_.vc_credits;
  }
  no.job_timeout_ns = opt_.job_timeout_ns;
  no.log_boot = opt_.log_boot;
  no.log_verdict = false;  // the rig prints one table; failures are still logged
  for (uint32_t r = 0; r < n; ++r) {
    Personality p;
    p.dims = dims;
    p.coord = coord_of(r, dims);
    if (Status st = split_partition_x(&p, opt_.partitions); !st) return st;
    p.has_dims = p.has_coord = true;
    p.job = opt_.job;
    p.seed = opt_.seed;
    p.job_args = opt_.job_args;
    p.ports = cabling;
    for (const auto& sw : opt_.swaps) {
      if (!(sw.node == p.coord)) continue;
      std::swap(p.ports[port_of_dir[static_cast<int>(sw.a)]].dir, p.ports[port_of_dir[static_cast<int>(sw.b)]].dir);
    }
    Status st = validate(p);
    if (!st) return st;
    std::vector<Port*> ports(nodes_[r]->ports.begin(), nodes_[r]->ports.end());
    if (capture_) {
      auto cp = capture_->add_node(p, nodes_[r]->ports);
      if (!cp) return cp.status();
      ports = cp.value();
    }
    SimNode& sn = *nodes_[r];
    sn.personality = p;
    sn.node_ports = ports;
    sn.clock = &fabric_->clock(region_of_[r]);
    sn.options = no;
    sn.seed = opt_.seed;
    sn.rank = r;
    sn.make_node();
    fabric_->wake(r, 0);
  }
  for (const NodeFaultSpec& f : opt_.faults.reboot) {
    SimNode& sn = *nodes_[rank_of(f.node, dims)];
    sn.reboots.push_back(f.at_ns);
    std::sort(sn.reboots.begin(), sn.reboots.end());  // sim_step wakes the node for each
  }
  for (const NodeFaultSpec& f : opt_.faults.stop)
    nodes_[rank_of(f.node, dims)]->stops.emplace_back(f.at_ns, f.for_ns ? f.at_ns + f.for_ns : kNever);
  return Status::ok();
}

SimSummary SimRig::run() {
  SimSummary s;
  s.nodes = node_count();
  const double wall0 = wall_seconds();
  double last_wall = wall0;
  uint64_t last_events = 0;
  // Progress at most once a wall second: the fabric pauses on a wall budget
  // (between two windows, so the run is the same as without pauses) and the
  // rig reads the nodes while every thread is parked.
  auto progress = [&] {
    const double now = wall_seconds();
    if (!opt_.progress || now - last_wall < 1.0) return;
    uint32_t booted = 0, finished = 0;
    // The job's cases: where the slowest node is (a self-test runs its
    // cases in one order on every node).
    const Job* slowest = nullptr;
    for (const auto& sn : nodes_) {
      booted += sn->node->state() != NodeState::kCreated && sn->node->state() != NodeState::kTraining;
      finished += sn->node->finished();
      const Job* j = sn->node->job();
      if (j && j->cases().size() < j->planned_cases() && !sn->node->finished() &&
          (!slowest || j->cases().size() < slowest->cases().size()))
        slowest = j;
    }
    std::string cases;
    if (slowest)
      cases = ", slowest node at case " + std::to_string(slowest->cases().size() + 1) + " of " +
              std::to_string(slowest->planned_cases()) + " (" + slowest->current_case() + ")";
    const uint64_t events = fabric_->stats().events;
    char vt[32];
    kLog.info("sim: %s virtual, %u/%u nodes booted, %u done, %lu events (%.2f M/s)%s",
              format_duration(fabric_->now(), vt, sizeof vt), booted, s.nodes, finished,
              static_cast<unsigned long>(events), static_cast<double>(events - last_events) / (now - last_wall) / 1e6,
              cases.c_str());
    last_wall = now;
    last_events = events;
  };
  constexpr uint64_t kSlice = 100 * kUs;
  uint64_t t = 0;
  for (;;) {
    t = std::min(t + kSlice, opt_.time_limit_ns);
    // Stop conditions are checked only at slice ends, so where the run stops
    // (and the counters it ends with) never depends on wall time.
    while (fabric_->next_event() <= t) {
      fabric_->run(t, opt_.progress ? 1.0 : 0);
      progress();
    }
    uint32_t finished = 0, boot_failed = 0;
    for (const auto& sn : nodes_) {
      finished += sn->node->finished();
      boot_failed += sn->node->boot_failed();
    }
    if (finished == s.nodes || boot_failed > 0 || fabric_->idle() || t >= opt_.time_limit_ns) {
      if (boot_failed > 0 && finished < s.nodes)
        kLog.error("sim: %u node(s) failed to boot; stopping the partition", boot_failed);
      else if (finished < s.nodes && fabric_->idle())
        kLog.error("sim: no events left but %u node(s) unfinished (a wait without a timeout?)", s.nodes - finished);
      else if (finished < s.nodes) {
        char lim[32];
        kLog.error("sim: virtual time limit %s reached with %u node(s) unfinished",
                   format_duration(opt_.time_limit_ns, lim, sizeof lim), s.nodes - finished);
      }
      break;
    }
  }
  s.wall_s = wall_seconds() - wall0;
  s.trace_hash = fabric_->trace_hash();
  for (const auto& sn : nodes_) {
    const Node& nd = *sn->node;
    if (nd.state() == NodeState::kPassed) ++s.passed;
    else if (nd.state() == NodeState::kFailed) ++s.failed;
    else ++s.unfinished;
    s.boot_failures += nd.boot_failed();
    s.virtual_ns = std::max(s.virtual_ns, nd.finished() ? nd.done_ns() : fabric_->now());
    if (s.first_error.empty() && nd.state() == NodeState::kFailed)
      s.first_error = nd.log().prefix() + " " + nd.status().to_string();
  }
  return s;
}

int SimRig::report(const SimSummary& s) const {
  // Aggregate the cases over all nodes, in the order the first node ran them.
  struct Row {
    std::string coll, algo, name;
    uint32_t pass = 0, fail = 0, skip = 0;
    uint64_t max_ns = 0;
    std::string detail;
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> index;
  uint32_t ran_job = 0;
  for (const auto& sn : nodes_) {
    const Job* job = sn->node->job();
    if (!job) continue;
    ++ran_job;
    for (const auto& c : job->cases()) {
      const std::string key = c.coll + "\t" + c.algo + "\t" + c.name;
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, rows.size()).first;
        rows.push_back(Row{c.coll, c.algo, c.name});
      }
      Row& r = rows[it->second];
      if (c.verdict == CaseVerdict::kPass) ++r.pass;
      else if (c.verdict == CaseVerdict::kFail) ++r.fail;
      else ++r.skip;
      if (r.detail.empty() && !c.detail.empty()) r.detail = c.detail;
      r.max_ns = std::max(r.max_ns, c.elapsed_ns);
    }
  }
  printf("\n%s on sim %s (%u nodes), seed %lu, faults %s\n", opt_.job.c_str(), opt_.dims.to_string().c_str(), s.nodes,
         static_cast<unsigned long>(opt_.seed), opt_.faults.to_string().c_str());
  if (!rows.empty()) {
    printf("%-14s %-18s %-34s %-6s %-11s %s\n", "collective", "algorithm", "case", "result", "nodes", "time (max)");
    uint32_t cases_ok = 0, cases_skipped = 0;
    for (const auto& r : rows) {
      const bool ok = r.fail == 0 && r.pass + r.skip == s.nodes;
      cases_ok += ok;
      cases_skipped += ok && r.pass == 0;
      char nodes[32], dur[32];
      snprintf(nodes, sizeof nodes, "%u/%u", r.pass, s.nodes);
      printf("%-14s %-18s %-34s %-6s %-11s %s%s%s\n", r.coll.c_str(), r.algo.c_str(), r.name.c_str(),
             ok ? (r.pass ? "PASS" : "SKIP") : "FAIL", nodes, format_duration(r.max_ns, dur, sizeof dur),
             r.detail.empty() ? "" : "  ", r.detail.c_str());
    }
    if (cases_skipped)
      printf("cases: %u/%zu passed on every node (%u of them skipped as not applicable here)\n", cases_ok,
             rows.size(), cases_skipped);
    else
      printf("cases: %u/%zu passed on every node\n", cases_ok, rows.size());
  } else if (ran_job == 0) {
    printf("no node ran its job\n");
  }
  // Job totals (e.g. the traffic line), summed over the nodes that ran the job.
  std::vector<std::pair<std::string, uint64_t>> totals;
  const char* totals_name = "";
  for (const auto& sn : nodes_) {
    const Job* job = sn->node->job();
    if (!job) continue;
    const auto t = job->totals();
    if (t.empty()) continue;
    totals_name = job->totals_name();
    if (totals.empty()) totals = t;
    else
      for (size_t i = 0; i < t.size() && i < totals.size(); ++i) totals[i].second += t[i].second;
  }
  if (!totals.empty()) {
    printf("%s:", totals_name);
    for (const auto& [k, v] : totals) printf(" %s=%lu", k.c_str(), static_cast<unsigned long>(v));
    printf("\n");
  }
  // Link and medium counters, summed over the partition.
  LinkCounters links;
  NetCounters net;
  CollCounters coll;
  for (const auto& sn : nodes_) {
    const Node& nd = *sn->node;
    for (uint16_t i = 0; i < nd.net().port_count(); ++i)
      add_counters(&links, &nd.net().link(i).counters(), kLinkCountersFields, kLinkCountersFieldCount);
    add_counters(&net, &nd.net().counters(), kNetCountersFields, kNetCountersFieldCount);
    const uint64_t most = std::max(coll.max_incoming_per_step, nd.comm().counters().max_incoming_per_step);
    add_counters(&coll, &nd.comm().counters(), kCollCountersFields, kCollCountersFieldCount);
    coll.max_incoming_per_step = most;  // a maximum over the nodes, not a sum
  }
  const std::string links_s = format_counters(&links, kLinkCountersFields, kLinkCountersFieldCount);
  const std::string net_s = format_counters(&net, kNetCountersFields, kNetCountersFieldCount);
  const std::string coll_s = format_counters(&coll, kCollCountersFields, kCollCountersFieldCount);
  if (!links_s.empty()) printf("links: %s\n", links_s.c_str());
  if (!net_s.empty()) printf("netstack: %s\n", net_s.c_str());
  if (!coll_s.empty()) printf("collectives: %s\n", coll_s.c_str());
  printf("medium: %s\n", format_counters(&fabric_->stats(), kFabricStatsFields, kFabricStatsFieldCount).c_str());
  uint64_t livelocks = 0;
  for (const auto& sn : nodes_) livelocks += sn->livelocks;
  if (livelocks)
    printf("scheduler: %lu node steps hit the %u-round guard (a node that never goes idle)\n",
           static_cast<unsigned long>(livelocks), tuning::kSimMaxStepRounds);
  printf("trace hash: %016lx\n", static_cast<unsigned long>(s.trace_hash));
  if (capture_) printf("%s\n", capture_->summary().c_str());
  char vt[32];
  const bool pass = s.passed == s.nodes;
  printf("verdict: %s (%u/%u nodes passed", pass ? "PASS" : "FAIL", s.passed, s.nodes);
  if (s.failed) printf(", %u failed", s.failed);
  if (s.boot_failures) printf(" (%u at boot)", s.boot_failures);
  if (s.unfinished) printf(", %u unfinished", s.unfinished);
  printf(") in %s virtual, %.2f s wall\n", format_duration(s.virtual_ns, vt, sizeof vt), s.wall_s);
  if (!pass && !s.first_error.empty()) printf("first failure: %s\n", s.first_error.c_str());
  fflush(stdout);
  return pass ? 0 : 1;
}

}  // namespace toroid
