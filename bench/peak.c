/* Peak fp32 FMA throughput of this machine, on 1 and on N threads: the yardstick
 * bench/run.sh divides a kernel's GFLOP/s by ("85% of the one-core FMA peak").
 *
 * Each thread runs ACC independent vector accumulators through acc = acc * m + c
 * (one fused multiply-add per lane, 2 FLOPs) so that the FMA units, not the
 * latency of one chain, bound the rate. The vector width is the widest the
 * compiler was told the machine has (-march=native: 64 bytes with AVX-512).
 * Build: gcc -O2 -march=native -pthread bench/peak.c -o peak (bench/run.sh does).
 * usage: peak [THREADS...]   (default 1 2); prints one line per thread count:
 *   peak THREADS threads: G GFLOP/s (best of 5 runs of ~0.2 s)
 * GNU C (vector extensions); the FMAs come from -ffp-contract=fast, gcc's default
 * for GNU C. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif
#define LANES (VBYTES / 4)
#define ACC 16 /* independent chains: FMA latency (4) x FMA units (2), with room */

typedef float vf __attribute__((vector_size(VBYTES)));

typedef struct job {
    long iters;
    float sink; /* the result, so the loop is not removed */
} job;

static void *fma_loop(void *p) {
    job *j = p;
    vf m, c, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15;
    for (int l = 0; l < LANES; l++) {
        m[l] = 0.999999f;
        c[l] = 1e-6f;
    }
    a0 = c + 1, a1 = c + 2, a2 = c + 3, a3 = c + 4, a4 = c + 5, a5 = c + 6, a6 = c + 7;
    a7 = c + 8, a8 = c + 9, a9 = c + 10, a10 = c + 11, a11 = c + 12, a12 = c + 13;
    a13 = c + 14, a14 = c + 15, a15 = c + 16;
    /* the accumulators are named, not an array, so that gcc -O2 keeps them in
     * registers; the empty asm hides m and c so no iteration is folded */
    for (long i = 0; i < j->iters; i++) {
        __asm__ volatile("" : "+x"(m), "+x"(c));
        a0 = a0 * m + c, a1 = a1 * m + c, a2 = a2 * m + c, a3 = a3 * m + c;
        a4 = a4 * m + c, a5 = a5 * m + c, a6 = a6 * m + c, a7 = a7 * m + c;
        a8 = a8 * m + c, a9 = a9 * m + c, a10 = a10 * m + c, a11 = a11 * m + c;
        a12 = a12 * m + c, a13 = a13 * m + c, a14 = a14 * m + c, a15 = a15 * m + c;
    }
    vf sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14 + a15;
    float s = 0;
    for (int l = 0; l < LANES; l++) s += sum[l];
    j->sink = s;
    return NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* GFLOP/s of nt threads each running iters iterations. */
static double run(int nt, long iters) {
    pthread_t th[64];
    job jobs[64];
    double t0 = now_s();
    for (int t = 0; t < nt; t++) {
        jobs[t].iters = iters;
        if (pthread_create(&th[t], NULL, fma_loop, &jobs[t])) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
    double dt = now_s() - t0;
    double flops = 2.0 * LANES * ACC * (double)iters * nt;
    if (jobs[0].sink == 12345.0f) printf(" "); /* never true; uses the result */
    return flops / dt * 1e-9;
}

int main(int argc, char **argv) {
    int counts[16] = {1, 2}, nc = 2;
    if (argc > 1) {
        nc = 0;
        for (int i = 1; i < argc && nc < 16; i++) {
            counts[nc] = atoi(argv[i]);
            if (counts[nc] < 1 || counts[nc] > 64) {
                fprintf(stderr, "usage: peak [THREADS...] (1 to 64 each)\n");
                return 2;
            }
            nc++;
        }
    }
    /* calibrate: about 0.2 s a run on one thread */
    long iters = 1 << 20;
    while (iters < (1L << 36)) {
        double t0 = now_s();
        run(1, iters);
        if (now_s() - t0 > 0.05) break;
        iters *= 2;
    }
    iters *= 4;
    for (int c = 0; c < nc; c++) {
        double best = 0;
        for (int r = 0; r < 5; r++) {
            double g = run(counts[c], iters);
            if (g > best) best = g;
        }
        printf("peak %d thread%s: %.1f GFLOP/s (fp32 FMA, %d-bit vectors, best of 5)\n", counts[c],
               counts[c] == 1 ? "" : "s", best, VBYTES * 8);
    }
    return 0;
}
