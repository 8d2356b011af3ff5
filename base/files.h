// Small filesystem helpers for the programs (rigs, captures).
#pragma once
#include <string>

#include "base/status.h"

namespace toroid {

// mkdir -p: creates path and every missing parent (mode 0755); the error
// names the directory that could not be made.
Status mkdir_p(const std::string& path);

}  // namespace toroid
