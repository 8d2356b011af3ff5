#include "firmware/launch_rank.h"

#include <cstdlib>
#include <cstring>

#include "base/text.h"

#ifdef TOROID_HAVE_PMIX
#include <pmix.h>
#endif

namespace toroid {

namespace {

// An environment variable holding a non-negative integer: 1 found, 0 absent,
// -1 malformed.
int env_u64(const char* name, uint64_t* out) {
  const char* v = std::getenv(name);
  if (!v) return 0;
  return parse_u64(v, out) ? 1 : -1;
}

#ifdef TOROID_HAVE_PMIX
// Asks the PMIx server (the launcher's step daemon) for this process's rank
// and the job's size, then lets go of it: the node needs nothing else.
Result<LaunchRank> pmix_rank() {
  pmix_proc_t me;
  std::memset(&me, 0, sizeof me);
  pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS)
    return error(Code::kIo, "PMIx_Init failed: %s (PMIX_NAMESPACE is set, but no PMIx server answered)",
                 PMIx_Error_string(rc));
  LaunchRank lr;
  lr.rank = me.rank;
  lr.source = std::string("PMIx (namespace ") + me.nspace + ")";
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* val = nullptr;
  if (PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &val) == PMIX_SUCCESS && val) {
    if (val->type == PMIX_UINT32) lr.size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
  }
  PMIx_Finalize(nullptr, 0);
  return lr;
}
#endif

}  // namespace

bool have_pmix() {
#ifdef TOROID_HAVE_PMIX
  return true;
#else
  return false;
#endif
}

Result<LaunchRank> launch_rank(int64_t explicit_rank) {
  if (explicit_rank >= 0) {
    LaunchRank lr;
    lr.rank = static_cast<uint32_t>(explicit_rank);
    lr.source = "--rank";
    return lr;
  }
  uint64_t v = 0, n = 0;
  if (std::getenv("PMIX_NAMESPACE")) {
#ifdef TOROID_HAVE_PMIX
    return pmix_rank();
#else
    // Built without libpmix: the launcher's variable says the same.
    if (int r = env_u64("PMIX_RANK", &v); r == 1) {
      LaunchRank lr;
      lr.rank = static_cast<uint32_t>(v);
      lr.source = "PMIX_RANK (this build has no PMIx client)";
      return lr;
    }
#endif
  }
  const int r = env_u64("SLURM_PROCID", &v);
  if (r < 0) return error(Code::kInvalid, "SLURM_PROCID='%s' is not a rank", std::getenv("SLURM_PROCID"));
  if (r == 1) {
    LaunchRank lr;
    lr.rank = static_cast<uint32_t>(v);
    lr.source = "SLURM_PROCID";
    const int s = env_u64("SLURM_NTASKS", &n);
    if (s < 0) return error(Code::kInvalid, "SLURM_NTASKS='%s' is not a task count", std::getenv("SLURM_NTASKS"));
    if (s == 1) lr.size = static_cast<int64_t>(n);
    return lr;
  }
  return error(Code::kNotFound,
               "no rank: give --rank R, or start the node under Slurm (srun sets SLURM_PROCID) or a PMIx launcher "
               "(srun --mpi=pmix sets PMIX_NAMESPACE)");
}

}  // namespace toroid
