// A small application built outside the source tree against an installed
// Toroid (pkg-config --cflags --libs toroid): it checks the CRC32C of the
// installed netstack on its check value, then boots a 2x2x1 partition on the
// sim rig and runs one checked allreduce on it. Exit 0 only if both pass.
#include <cstdio>

#include "firmware/sim_rig.h"
#include "netstack/crc32c.h"

int main() {
  const uint32_t crc = toroid::crc32c("123456789", 9);
  if (crc != 0xE3069283u) {
    printf("app: crc32c(\"123456789\") = %08x, expected e3069283\n", crc);
    return 1;
  }
  auto dims = toroid::parse_dims("2x2x1");
  if (!dims) {
    printf("app: %s\n", dims.status().message().c_str());
    return 1;
  }
  toroid::SimOptions opt;
  opt.dims = *dims;
  opt.job = "coll";
  opt.job_args = {{"coll", "allreduce"}, {"count", "1000"}};
  opt.log_boot = false;
  opt.progress = false;
  toroid::SimRig rig(opt);
  if (toroid::Status st = rig.build(); !st) {
    printf("app: %s\n", st.message().c_str());
    return 1;
  }
  const toroid::SimSummary s = rig.run();
  printf("app: crc32c ok; allreduce on %u nodes: %u passed\n", s.nodes, s.passed);
  return rig.report(s);
}
