// Status and Result<T>: the error currency of every layer.
// The data path returns counts and bumps counters; Status is for setup,
// control calls and collective completion, where a message is worth its string.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <variant>

namespace toroid {

enum class Code : unsigned char {
  kOk = 0,
  kInvalid,      // bad argument or bad input (personality, spec, frame)
  kTimeout,      // a wait ran out of time
  kLinkDown,     // a port or link went down
  kMiswired,     // link training found an unexpected neighbour
  kNotFound,
  kUnsupported,
  kOutOfRange,
  kIo,           // an operating-system call failed
  kBusy,         // try again later (queue full)
  kAborted,      // stopped from outside (rig abort, signal)
  kInternal,     // a broken invariant: a bug
  kReset,        // the partition reset its communication after a failure elsewhere
};

const char* code_name(Code c);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }
  // "timeout: barrier channel 2 ..." (or "ok").
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string msg_;
};

// printf-style constructor: error(Code::kInvalid, "dims %s: %s", a, b).
Status error(Code code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) {}   // NOLINT: must not be ok

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() { return std::get<0>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<1>(v_);
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace toroid
