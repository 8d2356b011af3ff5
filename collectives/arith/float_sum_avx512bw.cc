// The exact double SUM's vector kernels for CPUs with AVX-512 F, BW and CD
// but without VBMI/VBMI2 (Skylake-SP, Cascade Lake): float_sum_avx512.cc
// again, its byte permutes and funnel shifts built from AVX-512 BW
// instructions (float_sum_kernels_bw()).
#define TOROID_FSUM_VBMI 0
#include "collectives/arith/float_sum_avx512.cc"  // NOLINT(bugprone-suspicious-include)
