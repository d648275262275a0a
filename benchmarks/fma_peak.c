/* fma_peak.c - the machine's fp32 FMA peak, for docs/performance.md.
 *
 *   cc -O2 -march=native -fopenmp fma_peak.c -o fma_peak && ./fma_peak N
 *
 * N threads each run 24 independent chains of vector FMAs (enough to cover
 * the FMA latency on two pipes) for ~0.5 s; prints GFLOP/s over all threads.
 * Uses the widest vectors the compiler targets (GCC vector extensions).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
typedef float vec __attribute__((vector_size(LANES * 4)));
#define CHAINS 24

static double seconds(void) { return omp_get_wtime(); }

#define DECL(i) vec acc##i = b * (float)i;
#define STEP(i) acc##i = acc##i * a + b; /* one FMA with -march */
#define SUM(i) total += acc##i;
#define EACH(X)                                                                \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)   \
      X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  const long iterations = 20000000;
  double start = 0, elapsed = 0;
  float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    vec a, b, total;
    for (int l = 0; l < LANES; ++l) {
      a[l] = 1.0000001f;
      b[l] = 1e-7f;
    }
    total = b - b;
    EACH(DECL)
#pragma omp barrier
#pragma omp master
    start = seconds();
    for (long i = 0; i < iterations; ++i) {
      EACH(STEP)
    }
#pragma omp barrier
#pragma omp master
    elapsed = seconds() - start;
    EACH(SUM)
    for (int l = 0; l < LANES; ++l)
      sink += total[l];
  }
  double flops = 2.0 * LANES * CHAINS * (double)iterations * threads;
  printf("%.1f GFLOP/s (%d threads, %d-lane FMA, checksum %g)\n",
         flops / elapsed * 1e-9, threads, LANES, sink);
  return 0;
}
