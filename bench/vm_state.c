/* Which of the VM's two 2-thread states this process runs in, and what each costs
 * (docs/benchmarks.md, "The VM's slow state: what crosses").
 *
 * 1. A cache-line ping-pong between two threads (200,000 round trips): about 50-150 ns
 *    when the two vCPUs share an L3 ("fast"), 300-420 ns when they do not ("slow").
 * 2. Three kinds of private work, each on one thread alone and then on both threads at
 *    once (each thread on its own buffer), as CPU time both / alone: FMA chains (the
 *    peak), read+write of a 256 KB buffer (L2) and of an 8 MB one (L3). In the slow
 *    state none of them slows down (two L3s), so a slower 2-thread run there is data
 *    moving between the cores.
 * Build: gcc -O2 -march=native -pthread bench/vm_state.c -o vm_state (x86-64 with
 * AVX-512F). Run it as the benchmark runs (`chrt -f 10` where that is how kiln is
 * timed): the state can change from one process to the next. Spinning waits yield now
 * and then, so two real-time threads on one vCPU do not lock each other out. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROUNDS = 200000, L2_BYTES = 256 * 1024, L3_BYTES = 8 * 1024 * 1024 };

static _Alignas(64) atomic_int flag;
static atomic_int start;
static float *buf[2];
static volatile float sink;
static int kind_g;
static double other_us;

static double cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Spins until *a == v, yielding every 4096 tries. */
static void wait_for(atomic_int *a, int v) {
    for (unsigned n = 1; atomic_load(a) != v; n++)
        if (n % 4096 == 0) sched_yield();
}

/* CPU time of one piece of work of `kind` on thread t's buffer: 0 FMA chains, 1 the L2
 * buffer, 2 the L3 buffer, each element read, incremented and written back. */
static double work(int kind, int t) {
    double c0 = cpu_us();
    if (kind == 0) {
        __m512 a[12], m = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
        for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps(1.0f + (float)i * 1e-7f);
        for (long k = 0; k < 2000000; k++)
            for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], m, b);
        __m512 s = a[0];
        for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
        sink = _mm512_reduce_add_ps(s);
    } else {
        size_t n = (kind == 1 ? L2_BYTES : L3_BYTES) / sizeof(float);
        long reps = kind == 1 ? 3000 : 60;
        float *p = buf[t];
        __m512 s = _mm512_setzero_ps(), one = _mm512_set1_ps(1e-9f);
        for (long r = 0; r < reps; r++)
            for (size_t i = 0; i < n; i += 16) {
                __m512 v = _mm512_load_ps(p + i);
                s = _mm512_add_ps(s, v);
                _mm512_store_ps(p + i, _mm512_add_ps(v, one));
            }
        sink = _mm512_reduce_add_ps(s);
    }
    return cpu_us() - c0;
}

static void *other_work(void *arg) {
    (void)arg;
    wait_for(&start, 1);
    other_us = work(kind_g, 1);
    return NULL;
}

static void *pong(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        wait_for(&flag, 1);
        atomic_store(&flag, 0);
    }
    return NULL;
}

/* Mean round trip of a cache line between two threads, ns. */
static double ping_pong(void) {
    pthread_t t;
    atomic_store(&flag, 0);
    if (pthread_create(&t, NULL, pong, NULL)) return -1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < ROUNDS; i++) {
        atomic_store(&flag, 1);
        wait_for(&flag, 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / ROUNDS;
}

int main(void) {
    for (int t = 0; t < 2; t++) {
        buf[t] = aligned_alloc(64, L3_BYTES);
        if (!buf[t]) return 1;
        for (size_t i = 0; i < L3_BYTES / sizeof(float); i++) buf[t][i] = 1;
    }
    double pp = ping_pong();
    printf("ping-pong %.0f ns (%s)", pp, pp < 200 ? "fast" : "slow");
    static const char *name[3] = {"fma", "l2", "l3"};
    for (int k = 0; k < 3; k++) {
        work(k, 0); /* warm */
        double alone = work(k, 0);
        pthread_t t;
        kind_g = k;
        atomic_store(&start, 0);
        if (pthread_create(&t, NULL, other_work, NULL)) return 1;
        atomic_store(&start, 1);
        double both = work(k, 0);
        pthread_join(t, NULL);
        printf(" | %s both/alone x%.2f", name[k], (both + other_us) / 2 / alone);
    }
    printf(" | ping-pong %.0f ns\n", ping_pong());
    return 0;
}
