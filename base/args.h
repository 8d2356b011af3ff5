// Command-line walking shared by the programs (toroid-sim, toroid-node,
// toroid-rig, toroid-linkbench): options come as "--opt value" or
// "--opt=value"; arg() is the option without "=value", value() takes the
// inline value or consumes the next argument.
#pragma once
#include <cstddef>
#include <string>

namespace toroid {

class ArgWalker {
 public:
  ArgWalker(int argc, char** argv) : argc_(argc), argv_(argv) {}
  // Move to the next argument; false after the last.
  bool next() {
    if (++i_ >= argc_) return false;
    arg_ = argv_[i_];
    val_.clear();
    inline_ = false;
    const auto eq = arg_.find('=');
    if (arg_.rfind("--", 0) == 0 && eq != std::string::npos) {
      val_ = arg_.substr(eq + 1);
      arg_.resize(eq);
      inline_ = true;
    }
    return true;
  }
  const std::string& arg() const { return arg_; }
  bool has_inline() const { return inline_; }
  // The option's value: the inline one, else the next argument (consumed);
  // false when there is none.
  bool value(std::string* out) {
    if (inline_) {
      *out = val_;
      return true;
    }
    if (i_ + 1 >= argc_) return false;
    *out = argv_[++i_];
    return true;
  }
  // For an option whose value may be left out ("--in-place" or
  // "--in-place no"): the next argument, consumed only when it is one of
  // `allowed`; false (nothing consumed) otherwise.
  template <size_t N>
  bool optional_value(std::string* out, const char* const (&allowed)[N]) {
    if (inline_ || i_ + 1 >= argc_) return false;
    for (const char* a : allowed) {
      if (a == std::string(argv_[i_ + 1])) {
        *out = argv_[++i_];
        return true;
      }
    }
    return false;
  }

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string arg_, val_;
  bool inline_ = false;
};

}  // namespace toroid
