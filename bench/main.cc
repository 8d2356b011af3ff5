// toroid-microbench: Google Benchmark main. Node logging is turned down to
// warnings so the sim rig's boot lines do not interleave with the table.
#include <benchmark/benchmark.h>

#include "base/log.h"

int main(int argc, char** argv) {
  toroid::set_log_level(toroid::LogLevel::kWarn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("toroid.note",
                              "link and transit figures include the sim medium; see docs/bench.md");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
