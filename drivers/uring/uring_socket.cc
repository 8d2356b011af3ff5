// UringPort's sockets: spec parsing and the unix-socket helpers.
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "drivers/uring/uring_internal.h"

namespace toroid::uring {

bool fill_unix_addr(const std::string& path, sockaddr_un* un) {
  if (path.empty() || path.size() >= sizeof un->sun_path) return false;
  std::memset(un, 0, sizeof *un);
  un->sun_family = AF_UNIX;
  std::memcpy(un->sun_path, path.c_str(), path.size());
  return true;
}

// A socket file nobody listens on any more (connect refused) is removed.
Status remove_stale_socket(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Status::ok();
  if (!S_ISSOCK(st.st_mode)) return error(Code::kInvalid, "%s exists and is not a socket", path.c_str());
  sockaddr_un un;
  fill_unix_addr(path, &un);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return error(Code::kIo, "socket: %s", std::strerror(errno));
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&un), sizeof un);
  const int err = errno;
  ::close(fd);
  if (rc == 0) return error(Code::kBusy, "%s is in use by a live server", path.c_str());
  if (err != ECONNREFUSED) return error(Code::kIo, "%s: connect: %s", path.c_str(), std::strerror(err));
  if (unlink(path.c_str()) != 0)
    return error(Code::kIo, "cannot remove stale %s: %s", path.c_str(), std::strerror(errno));
  return Status::ok();
}

Result<ParsedSpec> parse_spec(const std::string& spec) {
  static constexpr char kPrefix[] = "uring:";
  if (spec.compare(0, sizeof kPrefix - 1, kPrefix) != 0)
    return error(Code::kInvalid, "port spec '%s': expected uring:fd=N, uring:path=P,role=R or uring:iface=NAME",
                 spec.c_str());
  const std::string rest = spec.substr(sizeof kPrefix - 1);
  ParsedSpec p;
  std::string role;
  bool have_fd = false;
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t end = rest.find(',', pos);
    if (end == std::string::npos) end = rest.size();
    const std::string kv = rest.substr(pos, end - pos);
    pos = end + 1;
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos)
      return error(Code::kInvalid, "port spec '%s': '%s' is not key=value", spec.c_str(), kv.c_str());
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "fd") {
      char* endp = nullptr;
      const long n = std::strtol(v.c_str(), &endp, 10);
      if (v.empty() || *endp || n < 0 || n > 1 << 20)
        return error(Code::kInvalid, "port spec '%s': bad fd '%s'", spec.c_str(), v.c_str());
      p.fd = static_cast<int>(n);
      have_fd = true;
    } else if (k == "path") {
      p.path = v;
    } else if (k == "role") {
      role = v;
    } else if (k == "iface") {
      p.iface = v;
    } else {
      return error(Code::kInvalid, "port spec '%s': unknown key '%s'", spec.c_str(), k.c_str());
    }
  }
  const int forms = int{have_fd} + int{!p.path.empty()} + int{!p.iface.empty()};
  if (forms != 1)
    return error(Code::kInvalid, "port spec '%s': give exactly one of fd=, path= or iface=", spec.c_str());
  if (have_fd) {
    p.kind = UringPortKind::kFd;
  } else if (!p.iface.empty()) {
    if (p.iface.size() >= IFNAMSIZ)
      return error(Code::kInvalid, "port spec '%s': interface name too long", spec.c_str());
    p.kind = UringPortKind::kPacket;
  } else {
    sockaddr_un un;
    if (!fill_unix_addr(p.path, &un))
      return error(Code::kInvalid, "port spec '%s': socket path empty or longer than %zu bytes", spec.c_str(),
                   sizeof un.sun_path - 1);
    if (role == "server")
      p.kind = UringPortKind::kUnixServer;
    else if (role == "client")
      p.kind = UringPortKind::kUnixClient;
    else
      return error(Code::kInvalid, "port spec '%s': path= needs role=server|client", spec.c_str());
  }
  if (!role.empty() && p.path.empty())
    return error(Code::kInvalid, "port spec '%s': role= only goes with path=", spec.c_str());
  return p;
}

}  // namespace toroid::uring
