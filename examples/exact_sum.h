/* exact_sum.h: sums of doubles without rounding, across ranks, rounded
 * once at the end; for the examples (heat3d.c, cg.c), portable MPI.
 *
 * Why: a plain sum of each rank's cells rounds differently for every
 * decomposition, and no reduction of those rounded partial sums can give
 * the serial run's bits back (TOROID_REPRO=exact rounds the cross-rank sum
 * once, but each rank's partial sum was already rounded). Here every value
 * is added exactly into a fixed-point accumulator: 68 limbs of 32 bits
 * covering every double's bits (2^-1088 .. 2^1088). The ranks' accumulators
 * are combined with one MPI_Allreduce of 68 integer-valued doubles, whose
 * sums stay integers below 2^53 (fewer than 2^20 ranks): exact in any order
 * and with any algorithm. The final value is the exact total rounded to
 * nearest once, so it is the same bits as the serial run's. */
#ifndef TOROID_EXAMPLES_EXACT_SUM_H
#define TOROID_EXAMPLES_EXACT_SUM_H
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#define EXACT_LIMBS 68
#define EXACT_BIAS 1088 /* limb 0's lowest bit is 2^-1088 */

typedef struct {
  int64_t limb[EXACT_LIMBS];
  long pending; /* adds since the last carry pass */
  int special;  /* a NaN or an infinity was added */
} ExactSum;

static void exact_sum_init(ExactSum* s) { memset(s, 0, sizeof *s); }

/* Carries: every limb but the top one into [0, 2^32). */
static void exact_sum_normalize(ExactSum* s) {
  for (int k = 0; k + 1 < EXACT_LIMBS; ++k) {
    const int64_t carry = s->limb[k] >> 32; /* floor, negative limbs too */
    s->limb[k] -= carry * ((int64_t)1 << 32);
    s->limb[k + 1] += carry;
  }
  s->pending = 0;
}

static void exact_sum_add(ExactSum* s, double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const int e = (int)((bits >> 52) & 0x7ff);
  if (e == 0x7ff) {
    s->special = 1;
    return;
  }
  uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
  if (e) m |= UINT64_C(1) << 52;
  const int p = (e ? e : 1) - 1075 + EXACT_BIAS; /* where m's lowest bit goes */
  const unsigned __int128 v = (unsigned __int128)m << (p % 32);
  const int k = p / 32;
  const int64_t sign = bits >> 63 ? -1 : 1;
  s->limb[k] += sign * (int64_t)(uint32_t)v;
  s->limb[k + 1] += sign * (int64_t)(uint32_t)(v >> 32);
  s->limb[k + 2] += sign * (int64_t)(uint32_t)(v >> 64);
  if (++s->pending == (1L << 28)) exact_sum_normalize(s); /* long before a limb could overflow */
}

/* The total, rounded to nearest (ties to even) once. */
static double exact_sum_value(ExactSum* s) {
  if (s->special) return NAN;
  exact_sum_normalize(s);
  int64_t mag[EXACT_LIMBS];
  memcpy(mag, s->limb, sizeof mag);
  const int negative = mag[EXACT_LIMBS - 1] < 0;
  if (negative) { /* two's complement over the limbs: the magnitude */
    int64_t borrow = 0;
    for (int k = 0; k < EXACT_LIMBS; ++k) {
      int64_t t = -mag[k] - borrow;
      borrow = 0;
      if (k + 1 < EXACT_LIMBS && t < 0) {
        t += (int64_t)1 << 32;
        borrow = 1;
      }
      mag[k] = t;
    }
  }
  int h = EXACT_LIMBS - 1;
  while (h >= 0 && mag[h] == 0) --h;
  if (h < 0) return 0.0;
  const int lo = h >= 2 ? h - 2 : 0; /* the top three limbs: at least 65 significant bits */
  unsigned __int128 acc = 0;
  for (int k = h; k >= lo; --k) acc = (acc << 32) | (uint64_t)mag[k];
  int sticky = 0;
  for (int k = 0; k < lo; ++k) sticky |= mag[k] != 0;
  int top = 127;
  while (!((acc >> top) & 1)) --top;
  int drop = top > 52 ? top - 52 : 0;
  uint64_t mant = (uint64_t)(acc >> drop);
  if (drop) {
    const unsigned __int128 rem = acc & (((unsigned __int128)1 << drop) - 1), half = (unsigned __int128)1 << (drop - 1);
    if (rem > half || (rem == half && (sticky || (mant & 1)))) ++mant; /* may carry to 2^53: still exact */
  }
  const double v = ldexp((double)mant, drop + 32 * lo - EXACT_BIAS);
  return negative ? -v : v;
}

/* Every rank's accumulator added up; *out is the total on every rank. */
static void exact_sum_allreduce(ExactSum* s, double* out, MPI_Comm comm) {
  exact_sum_normalize(s);
  double mine[EXACT_LIMBS + 1], all[EXACT_LIMBS + 1];
  for (int k = 0; k < EXACT_LIMBS; ++k) mine[k] = (double)s->limb[k];
  mine[EXACT_LIMBS] = s->special;
  MPI_Allreduce(mine, all, EXACT_LIMBS + 1, MPI_DOUBLE, MPI_SUM, comm);
  ExactSum t;
  exact_sum_init(&t);
  for (int k = 0; k < EXACT_LIMBS; ++k) t.limb[k] = (int64_t)all[k];
  t.special = all[EXACT_LIMBS] != 0;
  *out = exact_sum_value(&t);
}

#endif
