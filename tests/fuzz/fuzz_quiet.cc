// LLVMFuzzerInitialize of the targets that run nodes: failed operations log
// lines that would flood the fuzzer's output and slow it down.
#include "fuzz_node.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  toroid::fuzz::quiet_logs();
  return 0;
}
