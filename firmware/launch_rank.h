// Which rank of the topology this process is, when a resource manager
// started it: `srun toroid-node --topology FILE` gives every task its rank
// in the environment (SLURM_PROCID, SLURM_NTASKS), and under
// `srun --mpi=pmix` (or any PMIx launcher) the PMIx server tells it
// (PMIx_Init: the process's rank and the job's size). An explicit --rank
// wins over both; PMIx wins over Slurm's variables.
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"

namespace toroid {

struct LaunchRank {
  uint32_t rank = 0;
  int64_t size = -1;   // tasks in the job, -1 when the launcher does not say
  std::string source;  // "--rank", "PMIx (namespace slurm.pmix.12.0)", "SLURM_PROCID"
};

// explicit_rank < 0: from the environment. Fails naming what it looked for
// when nothing gives a rank, or a variable is malformed.
Result<LaunchRank> launch_rank(int64_t explicit_rank);
// Whether this build can ask a PMIx server (libpmix-dev was found).
bool have_pmix();

}  // namespace toroid
