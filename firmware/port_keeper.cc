#include "firmware/port_keeper.h"

#include <unistd.h>

namespace toroid {

PortKeeper::PortKeeper(EventLoop& loop, std::vector<Port*> ports, std::vector<CutPort*> cuts,
                       std::vector<std::string> cut_files)
    : loop_(loop),
      ports_(std::move(ports)),
      cut_ports_(std::move(cuts)),
      cut_files_(std::move(cut_files)),
      was_down_(ports_.size(), false) {
  cut_ports_.resize(ports_.size(), nullptr);
  cut_files_.resize(ports_.size());
  timer_.set_callback(&PortKeeper::on_tick, this);
  timer_.set_background(true);  // a look now and then: not work that keeps an idle node awake
  loop_.timers().arm(timer_, loop_.now() + kPeriodNs);
}

PortKeeper::~PortKeeper() { loop_.timers().cancel(timer_); }

void PortKeeper::on_tick(void* self) { static_cast<PortKeeper*>(self)->tick(); }

void PortKeeper::tick() {
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (CutPort* c = cut_ports_[i]; c && !cut_files_[i].empty()) {
      const bool cut = access(cut_files_[i].c_str(), F_OK) == 0;
      if (cut && !c->cut()) ++cuts_made_;
      c->set_cut(cut);
    }
    const bool down = ports_[i]->link_state() == LinkState::kDown;
    if (down && was_down_[i] && ports_[i]->reconnect()) ++reconnects_;
    was_down_[i] = down;
  }
  loop_.timers().arm(timer_, loop_.now() + kPeriodNs);
}

std::string cable_of_address(const std::string& address) {
  for (const char* key : {"socket=", "path="}) {
    const auto at = address.find(key);
    if (at == std::string::npos) continue;
    std::string path = address.substr(at + std::string(key).size());
    path = path.substr(0, path.find(','));
    const auto slash = path.rfind('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".sock") == 0) name.resize(name.size() - 5);
    return name;
  }
  return "";
}

}  // namespace toroid
