#include "base/files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace toroid {

Status mkdir_p(const std::string& path) {
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    const std::string cur = path.substr(0, next);
    pos = next + 1;
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return error(Code::kIo, "mkdir %s: %s", cur.c_str(), std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace toroid
