#include "firmware/link_training.h"

#include <algorithm>
#include <cstring>

namespace toroid {

using wire::HelloBody;

LinkTrainer::LinkTrainer(NetStack& net, EventLoop& loop, const Logger& log, const Personality& p, uint64_t boot_id,
                         uint64_t timeout_ns, EndDescriber describe_end)
    : net_(net),
      loop_(loop),
      log_(log),
      p_(p),
      boot_id_(boot_id),
      timeout_ns_(timeout_ns),
      describe_end_(std::move(describe_end)),
      rng_(Rng::derive(boot_id, 0x15)) {
  ports_.resize(p.ports.size());
  for (PortTrain& pt : ports_) pt.isn = static_cast<uint32_t>(rng_.next());
  resend_.set_callback(&LinkTrainer::on_resend, this);
  deadline_.set_callback(&LinkTrainer::on_deadline, this);
  retrain_deadline_.set_callback(&LinkTrainer::on_retrain_deadline, this);
}

LinkTrainer::~LinkTrainer() {
  loop_.timers().cancel(resend_);
  loop_.timers().cancel(deadline_);
  loop_.timers().cancel(retrain_deadline_);
}

std::string LinkTrainer::port_label(uint16_t port) const {
  return p_.ports[port].name + " (" + dir_name(p_.ports[port].dir) + ")";
}

void LinkTrainer::start() {
  started_ = true;
  for (uint16_t i = 0; i < ports_.size(); ++i) send(i);
  arm_resend();
  loop_.timers().arm(deadline_, loop_.now() + timeout_ns_);
  check_finished();  // a 1x1x1 partition has no links
}

void LinkTrainer::arm_resend() {
  loop_.timers().cancel(resend_);
  loop_.timers().arm(resend_, loop_.now() + interval_);
}

void LinkTrainer::send(uint16_t port) {
  const PortTrain& pt = ports_[port];
  HelloBody h{};
  for (int i = 0; i < kDims; ++i) {
    h.coord[i] = static_cast<uint8_t>(p_.coord.c[i]);
    h.dims[i] = static_cast<uint8_t>(p_.dims.n[i] == kMaxDimSize ? 0 : p_.dims.n[i]);
  }
  h.dir = static_cast<uint8_t>(p_.ports[port].dir);
  h.flags = static_cast<uint8_t>((pt.heard ? wire::kHelloHeard : 0) |
                                 (pt.state == PortState::kDone ? wire::kHelloDone : 0));
  h.boot_id.set(boot_id_);
  h.peer_boot.set(pt.heard ? pt.peer_boot : 0);
  h.generation.set(gen_);
  h.isn.set(pt.isn);
  for (int i = 0; i < kDims; ++i) h.origin[i] = static_cast<uint8_t>(origin_.c[i]);
  h.origin_dir = origin_dir_;
  h.cause = static_cast<uint8_t>(cause_);
  h.rx_credits = net_.link(port).advertised_credits();
  std::memcpy(h.partition, p_.partition.data(), std::min(p_.partition.size(), sizeof h.partition));
  if (net_.send_hello(port, h)) ++ports_[port].hellos_sent;
}

void LinkTrainer::fail_port(uint16_t port, Status st) {
  ports_[port].state = PortState::kFailed;
  if (status_.is_ok() && !finished_) status_ = st;
  log_.error("%s", st.message().c_str());
  check_finished();
}

// "" when the hello comes from the neighbour the personality names (same
// partition, coordinates, direction and dims); else the miswiring message.
std::string LinkTrainer::identity_mismatch(uint16_t port, const HelloBody& h, Coord* got, Dir* got_dir) {
  const PortSpec& spec = p_.ports[port];
  const Coord want = neighbour(p_.coord, spec.dir, p_.dims);
  const Dir want_dir = opposite(spec.dir);
  for (int i = 0; i < kDims; ++i) got->c[i] = h.coord[i];
  const bool dir_ok = h.dir < kNumDirs;
  *got_dir = dir_ok ? static_cast<Dir>(h.dir) : Dir::kXp;
  bool dims_ok = true;
  for (int i = 0; i < kDims; ++i) {
    const uint32_t d = h.dims[i] == 0 ? kMaxDimSize : h.dims[i];
    dims_ok &= d == p_.dims.n[i];
  }
  // The id as sent: up to 32 bytes, NUL-padded; anything unprintable is shown as '?'.
  std::string part(h.partition, strnlen(h.partition, sizeof h.partition));
  for (char& ch : part)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  const bool part_ok = part == p_.partition;
  if (part_ok && dims_ok && dir_ok && *got == want && *got_dir == want_dir) return "";
  if (!part_ok) ++ctr_.foreign_partition_hellos;
  const std::string got_s = got->to_string() + " " + (dir_ok ? dir_name(*got_dir) : "(bad direction)");
  std::string what = "got a hello from " + got_s;
  if (!part_ok) {
    what += part.empty() ? " of a rig that names no partition" : " of partition '" + part + "'";
    what += p_.partition.empty() ? " (this node names none)" : " (this node is in '" + p_.partition + "')";
  } else if (!dims_ok) {
    what += " with different partition dims";
  }
  // With a topology: the physical ends too, this port's, the one it should
  // meet, and the one whose hello arrived (both ends of the wrong cable).
  std::string where;
  if (describe_end_ && part_ok && dims_ok && dir_ok) {
    where = "; this port is " + describe_end_(p_.coord, spec.dir) + "; the topology cables it to " +
            want.to_string() + " " + dir_name(want_dir) + " (" + describe_end_(want, want_dir) +
            "), but the hello came from " + got_s + " (" + describe_end_(*got, *got_dir) + ")";
  }
  return "link training: node " + p_.node_name() + " port " + port_label(port) + " is miswired: expected neighbour " +
         want.to_string() + " on its " + dir_name(want_dir) + " port, " + what + where;
}

void LinkTrainer::on_hello(uint16_t port, const HelloBody& h) {
  if (port >= ports_.size()) return;
  PortTrain& pt = ports_[port];
  if (pt.state == PortState::kFailed) {
    // Answer on a miswired port, so the node at its far end (which expects
    // someone else there) hears who it is cabled to and names it too.
    if (pt.miswired) send(port);
    return;
  }
  Coord got;
  Dir got_dir;
  if (std::string bad = identity_mismatch(port, h, &got, &got_dir); !bad.empty()) {
    const bool was_up = pt.state == PortState::kDone;
    pt.miswired = true;
    const Status st(Code::kMiswired, bad);
    net_.link(port).disable(st);
    fail_port(port, st);
    send(port);
    // A cable that changed under a running node: what crossed it is lost.
    if (was_up && finished_) start_generation(st, wire::ResetCause::kMiswired, static_cast<uint8_t>(p_.ports[port].dir));
    return;
  }
  const uint64_t boot = h.boot_id.get();
  const uint32_t gen = h.generation.get();
  if (pt.state == PortState::kDone && boot != pt.peer_boot) {
    // The neighbour started again: everything it held is gone.
    ++ctr_.reboots_seen;
    start_generation(error(Code::kLinkDown, "node %s port %s: neighbour %s rebooted", p_.node_name().c_str(),
                           port_label(port).c_str(), got.to_string().c_str()),
                     wire::ResetCause::kRebooted, static_cast<uint8_t>(p_.ports[port].dir));
  }
  if (gen != gen_) {
    if (static_cast<int32_t>(gen - gen_) < 0) {
      send(port);  // behind: our hello brings it to our generation
      return;
    }
    ++ctr_.adopted;
    // Name the failure where it happened, as the hello reports it.
    static const char* const kCauses[] = {"a reset", "link down", "neighbour rebooted", "an operation failed",
                                          "a cable changed"};
    const char* cause = h.cause <= wire::kMaxResetCause ? kCauses[h.cause] : "an unknown cause";
    Coord origin;
    for (int i = 0; i < kDims; ++i) origin.c[i] = std::min<uint32_t>(h.origin[i], p_.dims.n[i] - 1);
    const std::string at = "node " + origin.to_string() + (h.origin_dir < kNumDirs ? std::string(" port ") +
                                                             dir_name(static_cast<Dir>(h.origin_dir)) : "");
    cause_ = h.cause <= wire::kMaxResetCause ? static_cast<wire::ResetCause>(h.cause) : wire::ResetCause::kRequested;
    origin_ = origin;
    origin_dir_ = h.origin_dir < kNumDirs ? h.origin_dir : 0xff;
    enter_generation(gen, error(Code::kReset, "node %s: communication reset (generation %u): %s at %s (learnt from "
                                "neighbour %s on port %s)", p_.node_name().c_str(), gen, cause, at.c_str(),
                                got.to_string().c_str(), port_label(port).c_str()));
  }
  if (pt.state == PortState::kDone) {
    if (!(h.flags & wire::kHelloDone)) send(port);
    else net_.link(port).set_peer_heard();  // both ends up: no more hellos (on_resend)
    return;
  }
  const uint32_t isn = h.isn.get();
  const bool news = !pt.heard || pt.peer_boot != boot || pt.peer_isn != isn;
  pt.heard = true;
  pt.peer_boot = boot;
  pt.peer_isn = isn;
  pt.peer = got;
  pt.peer_dir = got_dir;
  if (pt.state == PortState::kWaiting) pt.state = PortState::kHeard;
  // HEARD counts only for this boot of ours (not a hello that heard the
  // node that ran here before a reboot).
  if ((h.flags & wire::kHelloHeard) && h.peer_boot.get() == boot_id_) {
    net_.link(port).bring_up(pt.isn, pt.peer_isn, h.coord, Link::credits_of_hello(h.rx_credits));
    if (h.flags & wire::kHelloDone) net_.link(port).set_peer_heard();  // the peer was up first
    pt.state = PortState::kDone;
    if (finished_) {
      ++ctr_.retrained;
      log_.info("port %s trained again with %s (generation %u)", port_label(port).c_str(), got.to_string().c_str(),
                gen_);
    }
    check_finished();
  }
  // Answer unless the peer is done; also answer when we just learnt something new.
  if (!(h.flags & wire::kHelloDone) || news) send(port);
}

void LinkTrainer::on_link_down(uint16_t port, const Status& why) {
  if (!started_ || in_reset_) return;
  start_generation(why, wire::ResetCause::kLinkDown,
                   port < p_.ports.size() ? static_cast<uint8_t>(p_.ports[port].dir) : 0xff);
}

void LinkTrainer::start_generation(const Status& why, wire::ResetCause cause, uint8_t dir) {
  ++ctr_.generations;
  origin_ = p_.coord;
  origin_dir_ = dir;
  cause_ = cause;
  enter_generation(gen_ + 1, why);
}

void LinkTrainer::enter_generation(uint32_t gen, const Status& why) {
  gen_ = gen;
  log_.warn("%s: resetting communication, every link trains again (generation %u)", why.message().c_str(), gen);
  in_reset_ = true;
  if (reset_) reset_(gen, why);
  in_reset_ = false;
  restart_ports();
}

void LinkTrainer::restart_ports() {
  for (uint16_t i = 0; i < ports_.size(); ++i) {
    PortTrain& pt = ports_[i];
    if (pt.state == PortState::kFailed) continue;
    pt.state = PortState::kWaiting;
    pt.heard = false;
    pt.peer_boot = 0;
    pt.reported = false;
    pt.isn = static_cast<uint32_t>(rng_.next());
    send(i);
  }
  interval_ = tuning::kHelloIntervalNs;
  arm_resend();
  // Ports still untrained a link timeout from now are named (not reset
  // again: that waits for a neighbour to come back).
  gen_started_ = loop_.now();
  uint64_t down_ns = kNever;
  for (uint16_t i = 0; i < ports_.size(); ++i) down_ns = std::min(down_ns, net_.link(i).config().down_after_ns);
  loop_.timers().cancel(retrain_deadline_);
  if (down_ns != kNever) loop_.timers().arm(retrain_deadline_, gen_started_ + down_ns);
}

void LinkTrainer::report_untrained(uint16_t port, const Status& why) {
  ports_[port].reported = true;
  log_.error("%s", why.message().c_str());
  if (untrained_) untrained_(port, why);
}

void LinkTrainer::on_retrain_deadline(void* self) {
  auto* t = static_cast<LinkTrainer*>(self);
  char dur[32];
  format_duration(t->loop_.now() - t->gen_started_, dur, sizeof dur);
  for (uint16_t i = 0; i < t->ports_.size(); ++i) {
    const PortTrain& pt = t->ports_[i];
    if (pt.state == PortState::kDone || pt.state == PortState::kFailed || pt.reported) continue;
    const Coord want = neighbour(t->p_.coord, t->p_.ports[i].dir, t->p_.dims);
    t->report_untrained(i, error(Code::kLinkDown, "node %s port %s: link down: %s from neighbour %s within %s of the "
                                 "reset (generation %u)", t->p_.node_name().c_str(), t->port_label(i).c_str(),
                                 pt.heard ? "no HEARD" : "no hello", want.to_string().c_str(), dur, t->gen_));
  }
}

void LinkTrainer::check_finished() {
  if (finished_ || !started_) return;
  for (const auto& pt : ports_) {
    if (pt.state != PortState::kDone && pt.state != PortState::kFailed) return;
  }
  finished_ = true;
  loop_.timers().cancel(deadline_);
}

void LinkTrainer::on_resend(void* self) {
  auto* t = static_cast<LinkTrainer*>(self);
  bool waiting = false;
  uint64_t link_down_ns = kNever;
  for (uint16_t i = 0; i < t->ports_.size(); ++i) {
    const PortState st = t->ports_[i].state;
    const Link& link = t->net_.link(i);
    link_down_ns = std::min(link_down_ns, link.config().down_after_ns);
    // Done here but nothing from the peer's link yet: our HEARD may have
    // been lost, and the peer waits for it.
    if (st == PortState::kWaiting || st == PortState::kHeard || (st == PortState::kDone && !link.peer_heard())) {
      t->send(i);
      waiting = true;
    }
    // Retraining after boot on a port whose carrier is gone (the neighbour's
    // process died, the cable was pulled): named now, not at the retrain
    // deadline, as a link that is up would name it at its next carrier check.
    PortTrain& pt = t->ports_[i];
    if (t->finished_ && (st == PortState::kWaiting || st == PortState::kHeard) && !pt.reported &&
        link.port()->link_state() == LinkState::kDown) {
      const Coord want = neighbour(t->p_.coord, t->p_.ports[i].dir, t->p_.dims);
      t->report_untrained(i, error(Code::kLinkDown, "node %s port %s: link down: carrier lost while training again "
                                   "with neighbour %s (generation %u)", t->p_.node_name().c_str(),
                                   t->port_label(i).c_str(), want.to_string().c_str(), t->gen_));
    }
  }
  if (!waiting) return;  // armed again by the next generation
  // Double up to a cap that leaves several tries before the boot deadline,
  // and several before a link that is up on one side only gives up on the
  // other (it counts hellos as heard).
  uint64_t cap = std::min(tuning::kHelloIntervalMaxNs, std::max<uint64_t>(link_down_ns / 4, 1));
  if (!t->finished_) cap = std::min(cap, t->timeout_ns_ / 8);
  t->interval_ = std::min(t->interval_ * 2, cap);
  t->loop_.timers().arm(t->resend_, t->loop_.now() + t->interval_);
}

void LinkTrainer::on_deadline(void* self) {
  auto* t = static_cast<LinkTrainer*>(self);
  if (t->finished_) return;
  char dur[32];
  format_duration(t->timeout_ns_, dur, sizeof dur);
  for (uint16_t i = 0; i < t->ports_.size(); ++i) {
    PortTrain& pt = t->ports_[i];
    if (pt.state == PortState::kDone || pt.state == PortState::kFailed) continue;
    const PortSpec& spec = t->p_.ports[i];
    const Coord want = neighbour(t->p_.coord, spec.dir, t->p_.dims);
    if (pt.state == PortState::kWaiting) {
      t->fail_port(i, error(Code::kTimeout,
                            "link training: node %s port %s is a dead link: no hello from neighbour %s within %s "
                            "(%lu hellos sent)",
                            t->p_.node_name().c_str(), t->port_label(i).c_str(), want.to_string().c_str(), dur,
                            static_cast<unsigned long>(pt.hellos_sent)));
    } else {
      t->fail_port(i, error(Code::kTimeout,
                            "link training: node %s port %s is one-way: hellos arrive from %s but it never heard "
                            "ours within %s",
                            t->p_.node_name().c_str(), t->port_label(i).c_str(), want.to_string().c_str(), dur));
    }
  }
}

uint32_t LinkTrainer::trained_ports() const {
  uint32_t n = 0;
  for (const auto& pt : ports_) n += pt.state == PortState::kDone;
  return n;
}

std::string LinkTrainer::summary() const {
  std::string s;
  for (uint16_t i = 0; i < ports_.size(); ++i) {
    if (!s.empty()) s += ", ";
    s += p_.ports[i].name + " " + dir_name(p_.ports[i].dir);
    if (ports_[i].state == PortState::kDone)
      s += " -> " + ports_[i].peer.to_string() + " " + dir_name(ports_[i].peer_dir);
    else
      s += " FAILED";
  }
  return s.empty() ? "no links (1x1x1)" : s;
}

}  // namespace toroid
