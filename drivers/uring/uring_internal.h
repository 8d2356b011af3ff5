// Shared by the files of drivers/uring only: how CQEs are told apart.
#pragma once
#include <sys/un.h>

#include <cstdint>
#include <string>

#include "base/status.h"
#include "drivers/uring/uring_port.h"

namespace toroid::uring {

// user_data of a CQE: a send carries its Packet* (8-aligned, so never one
// of these small tags); the receive and a close()-time cancel carry a tag.
constexpr uint64_t kRecvTag = 1;
constexpr uint64_t kCancelTag = 3;
constexpr uint16_t kBufGroup = 0;  // one provided-buffer group per ring (ring per port)
// rx_burst: after this many empty calls in a row, drain the eventfd even if
// no CQE was seen (a signal that raced with the last drain).
constexpr uint32_t kIdleDrainPolls = 1024;

// What a "uring:..." spec names (uring_socket.cc).
struct ParsedSpec {
  UringPortKind kind = UringPortKind::kFd;
  int fd = -1;
  std::string path;
  std::string iface;
};
Result<ParsedSpec> parse_spec(const std::string& spec);
// False if the path is empty or does not fit sockaddr_un.
bool fill_unix_addr(const std::string& path, sockaddr_un* un);
// A socket file nobody listens on any more (connect refused) is removed;
// a live listener is kBusy.
Status remove_stale_socket(const std::string& path);

}  // namespace toroid::uring
