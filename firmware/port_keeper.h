// PortKeeper: what keeps a node process's ports connected while it runs
// (toroid-node). Every period it reads each port's carrier; a port that was
// down at the last check too is asked to reconnect() (a memif client whose
// server was restarted dials it again). With the host rig's --chaos cut,
// each port sits behind a CutPort that follows a file: while
// <cut dir>/<cable>.cut exists the cable is pulled. A timer, never the data
// path: one check per period.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "drivers/fault/cut_port.h"
#include "drivers/port.h"

namespace toroid {

class PortKeeper {
 public:
  static constexpr uint64_t kPeriodNs = 100 * kMs;

  // cuts[i] / cut_files[i]: the CutPort of port i and its file ("" / nullptr: none).
  PortKeeper(EventLoop& loop, std::vector<Port*> ports, std::vector<CutPort*> cuts,
             std::vector<std::string> cut_files);
  ~PortKeeper();
  PortKeeper(const PortKeeper&) = delete;
  PortKeeper& operator=(const PortKeeper&) = delete;

  uint64_t reconnects() const { return reconnects_; }
  uint64_t cuts() const { return cuts_made_; }

 private:
  static void on_tick(void* self);
  void tick();

  EventLoop& loop_;
  std::vector<Port*> ports_;
  std::vector<CutPort*> cut_ports_;
  std::vector<std::string> cut_files_;
  std::vector<bool> was_down_;
  Timer timer_;
  uint64_t reconnects_ = 0;
  uint64_t cuts_made_ = 0;
};

// The cable a host-rig port address names: the socket's file name without
// ".sock" ("1-0-1x" for socket=/run/.../sock/1-0-1x.sock or path=...); "" if
// the address names no socket.
std::string cable_of_address(const std::string& address);

}  // namespace toroid
