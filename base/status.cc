#include "base/status.h"

#include <cstdarg>

namespace toroid {

const char* code_name(Code c) {
  switch (c) {
    case Code::kOk: return "ok";
    case Code::kInvalid: return "invalid";
    case Code::kTimeout: return "timeout";
    case Code::kLinkDown: return "link down";
    case Code::kMiswired: return "miswired";
    case Code::kNotFound: return "not found";
    case Code::kUnsupported: return "unsupported";
    case Code::kOutOfRange: return "out of range";
    case Code::kIo: return "io error";
    case Code::kBusy: return "busy";
    case Code::kAborted: return "aborted";
    case Code::kInternal: return "internal error";
    case Code::kReset: return "reset";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(code_name(code_)) + ": " + msg_;
}

Status error(Code code, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Status(code, buf);
}

}  // namespace toroid
