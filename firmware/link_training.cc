#include "firmware/link_training.h"

#include <algorithm>

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
      describe_end_(std::move(describe_end)) {
  ports_.resize(p.ports.size());
  resend_.set_callback(&LinkTrainer::on_resend, this);
  deadline_.set_callback(&LinkTrainer::on_deadline, this);
}

std::string LinkTrainer::port_label(uint16_t port) const {
  return p_.ports[port].name + " (" + dir_name(p_.ports[port].dir) + ")";
}

void LinkTrainer::start() {
  started_ = true;
  for (uint16_t i = 0; i < ports_.size(); ++i) send(i);
  loop_.timers().arm(resend_, loop_.now() + tuning::kHelloIntervalNs);
  loop_.timers().arm(deadline_, loop_.now() + timeout_ns_);
  check_finished();  // a 1x1x1 partition has no links
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
  if (net_.send_hello(port, h)) ++ports_[port].hellos_sent;
}

void LinkTrainer::fail_port(uint16_t port, Status st) {
  ports_[port].state = PortState::kFailed;
  if (status_.is_ok()) status_ = st;
  log_.error("%s", st.message().c_str());
  check_finished();
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
  const PortSpec& spec = p_.ports[port];
  const Coord want = neighbour(p_.coord, spec.dir, p_.dims);
  const Dir want_dir = opposite(spec.dir);
  Coord got;
  for (int i = 0; i < kDims; ++i) got.c[i] = h.coord[i];
  const bool dir_ok = h.dir < kNumDirs;
  const Dir got_dir = dir_ok ? static_cast<Dir>(h.dir) : Dir::kXp;
  bool dims_ok = true;
  for (int i = 0; i < kDims; ++i) {
    const uint32_t d = h.dims[i] == 0 ? kMaxDimSize : h.dims[i];
    dims_ok &= d == p_.dims.n[i];
  }
  if (!dims_ok || !dir_ok || !(got == want) || got_dir != want_dir) {
    const std::string got_s = got.to_string() + " " + (dir_ok ? dir_name(got_dir) : "(bad direction)");
    // With a topology: the physical ends too, this port's, the one it should
    // meet, and the one whose hello arrived (both ends of the wrong cable).
    std::string where;
    if (describe_end_ && dims_ok && dir_ok) {
      where = "; this port is " + describe_end_(p_.coord, spec.dir) + "; the topology cables it to " +
              want.to_string() + " " + dir_name(want_dir) + " (" + describe_end_(want, want_dir) +
              "), but the hello came from " + got_s + " (" + describe_end_(got, got_dir) + ")";
    }
    const Status base = error(Code::kMiswired,
                              "link training: node %s port %s is miswired: expected neighbour %s on its %s port, "
                              "got a hello from %s%s",
                              p_.node_name().c_str(), port_label(port).c_str(), want.to_string().c_str(),
                              dir_name(want_dir), got_s.c_str(), dims_ok ? "" : " with different partition dims");
    pt.miswired = true;
    fail_port(port, Status(Code::kMiswired, base.message() + where));
    return;
  }
  pt.peer = got;
  pt.peer_dir = got_dir;
  const bool was_heard = pt.heard;
  pt.heard = true;
  if (pt.state == PortState::kWaiting) pt.state = PortState::kHeard;
  if ((h.flags & wire::kHelloHeard) && pt.state != PortState::kDone) {
    pt.state = PortState::kDone;
    check_finished();
  }
  // Answer unless the peer is done; also answer when we just learnt something new.
  if (!(h.flags & wire::kHelloDone) || !was_heard) send(port);
}

void LinkTrainer::check_finished() {
  if (finished_ || !started_) return;
  for (const auto& pt : ports_) {
    if (pt.state != PortState::kDone && pt.state != PortState::kFailed) return;
  }
  finished_ = true;
  loop_.timers().cancel(deadline_);
  loop_.timers().cancel(resend_);
}

void LinkTrainer::on_resend(void* self) {
  auto* t = static_cast<LinkTrainer*>(self);
  if (t->finished_) return;
  for (uint16_t i = 0; i < t->ports_.size(); ++i) {
    if (t->ports_[i].state == PortState::kWaiting || t->ports_[i].state == PortState::kHeard) t->send(i);
  }
  // Double up to a cap that still leaves several tries before the deadline.
  t->interval_ = std::min(t->interval_ * 2, std::min(tuning::kHelloIntervalMaxNs, t->timeout_ns_ / 8));
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
