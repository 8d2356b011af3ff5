#include "firmware/node.h"

#include "base/rng.h"

namespace toroid {

const char* node_state_name(NodeState s) {
  switch (s) {
    case NodeState::kCreated: return "created";
    case NodeState::kTraining: return "training";
    case NodeState::kRunning: return "running";
    case NodeState::kPassed: return "passed";
    case NodeState::kFailed: return "failed";
  }
  return "?";
}

Node::Node(const Personality& p, const Clock& clock, PacketPool& pool, const std::vector<Port*>& ports,
           const NodeOptions& opt)
    : p_(p), opt_(opt), log_("[node " + p.coord.to_string() + "]"), loop_(clock) {
  // Links carry data once training brings them up, tagged with the partition.
  opt_.net.link.start_up = false;
  opt_.net.link.partition = wire::partition_tag(p_.partition.data(), p_.partition.size());
  net_ = std::make_unique<NetStack>(p_.dims, p_.coord, pool, loop_, opt_.net);
  for (uint16_t i = 0; i < ports.size(); ++i) {
    const std::string label =
        i < p_.ports.size() ? p_.ports[i].name + " (" + dir_name(p_.ports[i].dir) + ")" : ports[i]->info().name;
    net_->add_port(i, ports[i], label);
  }
  for (uint16_t i = 0; i < p_.ports.size() && i < ports.size(); ++i) net_->map_dir(p_.ports[i].dir, i);
  const uint64_t boot_id = opt_.boot_id ? opt_.boot_id : mix64(p_.seed ^ mix64(rank_of(p_.coord, p_.dims)));
  trainer_ = std::make_unique<LinkTrainer>(*net_, loop_, log_, p_, boot_id, opt_.train_timeout_ns, opt_.describe_end);
  trainer_->set_reset_handler([this](uint32_t gen, const Status& why) { reset_comm(gen, why); });
  trainer_->set_untrained_handler([this](uint16_t port, const Status& why) {
    for (LinkDownListener* l : untrained_) l->on_link_down(port, why);
  });
  net_->set_hello_handler(trainer_.get());
  net_->add_link_down_listener(&watch_);
  // Registered before boot: a faster neighbour's messages may arrive while
  // this node still trains its other links.
  msgr_ = std::make_unique<Messenger>(*net_);
  net_->set_handler(wire::PacketType::kP2P, msgr_.get());
  net_->add_link_down_listener(msgr_.get());
  comm_ = std::make_unique<Comm>(*net_, *msgr_, loop_, log_, /*context=*/1, opt_.coll_timeout_ns);
  net_->set_handler(wire::PacketType::kCollective, comm_.get());
  net_->add_link_down_listener(comm_.get());
  // The combine and barrier networks on the world tree, rooted at rank 0.
  combine_ = std::make_unique<CombineEngine>(*net_, loop_, opt_.coll_timeout_ns);
  barrier_ = std::make_unique<BarrierNet>(*net_, loop_, opt_.coll_timeout_ns);
  net_->set_handler(wire::PacketType::kTree, combine_.get());
  net_->set_handler(wire::PacketType::kBarrier, barrier_.get());
  net_->add_link_down_listener(combine_.get());
  net_->add_link_down_listener(barrier_.get());
  net_->add_link_down_listener(&recovery_);  // last: the others fail their operations with the link's own status
  if (p_.ports.size() == net_->port_count()) {
    // Only this node's own entry, in O(1): the whole world tree is checked
    // once per partition by whoever lays it out (SimRig::build, or
    // verify_route in a tool), not by each of its nodes.
    const ClassEntry world = tree_entry(p_.dims, coord_of(0, p_.dims), p_.coord);
    setup_status_ = combine_->add_tree(tuning::kTreeClassWorld, world);
    if (setup_status_) setup_status_ = barrier_->set_tree(tuning::kTreeClassWorld, world);
    // Tree-based collectives (torus-tree allreduce) use the world tree.
    if (setup_status_) {
      comm_->set_tree(combine_.get(), tuning::kTreeClassWorld);
      comm_->set_barrier(barrier_.get(), tuning::kBarrierChannelWorld);
    }
  }
  loop_.add_poller(net_.get());
  loop_.add_poller(comm_.get());
  loop_.add_poller(msgr_.get());
  loop_.add_poller(combine_.get());
  loop_.add_poller(barrier_.get());
  loop_.add_poller(&seq_);
}

// The communicator's destructor abandons its operation on the combine and
// barrier engines and withdraws its receives from the Messenger: it goes
// first (after the job that uses it), before the members declared after it.
Node::~Node() {
  job_.reset();
  comm_.reset();
}

void Node::boot() {
  boot_ns_ = loop_.now();
  if (opt_.log_boot) log_.info("personality: %s", p_.describe().c_str());
  if (p_.ports.size() != net_->port_count()) {
    fail(error(Code::kInvalid, "node %s: personality names %zu ports but the rig gave %u", p_.node_name().c_str(),
               p_.ports.size(), net_->port_count()),
         true);
    return;
  }
  if (!setup_status_) {
    fail(error(setup_status_.code(), "node %s: %s", p_.node_name().c_str(), setup_status_.message().c_str()), true);
    return;
  }
  state_ = NodeState::kTraining;
  trainer_->start();
}

// Everything above the links starts over for generation gen, failing what
// was in flight with `why`; the links themselves start over too (the
// trainer brings them up again).
void Node::reset_comm(uint32_t gen, const Status& why) {
  (void)gen;
  if (resets_++ == 0) first_reset_ns_ = loop_.now();
  last_reset_ = why;
  net_->reset(why);
  msgr_->reset(why);
  comm_->reset(why);
  combine_->reset(why);
  barrier_->reset(why);
}

void Node::fail(Status st, bool during_boot) {
  state_ = NodeState::kFailed;
  boot_failed_ = during_boot;
  status_ = std::move(st);
  done_ns_ = loop_.now();
  if (!during_boot || trainer_->status()) log_.error("FAIL: %s", status_.message().c_str());
}

bool Node::advance() {
  switch (state_) {
    case NodeState::kTraining: {
      if (!trainer_->finished()) return false;
      if (!trainer_->status()) {
        // The trainer already logged each bad port by name.
        fail(trainer_->status(), true);
        log_.error("boot failed: %u of %zu links trained", trainer_->trained_ports(), p_.ports.size());
        return true;
      }
      trained_ns_ = loop_.now();
      if (opt_.log_boot) {
        char dur[32];
        log_.info("trained %u links in %s: %s", trainer_->trained_ports(),
                  format_duration(trained_ns_ - boot_ns_, dur, sizeof dur), trainer_->summary().c_str());
      }
      auto job = make_job(JobContext{p_, *net_, *comm_, *msgr_, loop_, log_, opt_.job_timeout_ns, &recovery_});
      if (!job) {
        fail(job.status(), true);
        return true;
      }
      job_ = std::move(job.value());
      state_ = NodeState::kRunning;
      job_->start();
      return true;
    }
    case NodeState::kRunning: {
      const bool moved = job_->poll();
      if (!job_->done()) return moved;
      done_ns_ = loop_.now();
      if (!job_->status()) {
        fail(job_->status(), false);
        return true;
      }
      state_ = NodeState::kPassed;
      if (opt_.log_verdict) log_.info("PASS: job %s, %zu cases", p_.job.c_str(), job_->cases().size());
      return true;
    }
    default:
      return false;
  }
}

}  // namespace toroid
