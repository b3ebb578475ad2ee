/* Generated C with a caller's parallel-for (kiln compile --threads 2): the Winograd test
 * model (tests/winograd) with its loops split into 3 tasks and its Winograd kernels
 * over per-thread scratch (tests/winograd/chunks.sched), run
 * - by wgpar_run (no par_for): its outputs must match the ONNX test's references
 *   (test_data_set_0, computed by torch) within check-onnx's rtol 1e-3, atol 1e-5;
 * - by wgpar_run_array_parallel through a pool of two POSIX threads that claim the tasks
 *   from a shared counter, and through one thread running each loop's tasks backwards
 *   as thread 1: both must give wgpar_run's outputs bit for bit, and the loops must
 *   have been split (more tasks than par_for calls). How many tasks the second thread
 *   took is printed, not checked (a loaded machine may leave it none). */
#include "wgpar.h"
#include "frontend/tensorfile.h"
#include "../unit/test.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct pool {
    int calls;
    atomic_int tasks, second; /* tasks run, of them by thread 1 */
} pool;

typedef struct loop {
    pool *pl;
    int ntasks;
    wgpar_task task;
    void *ctx;
    atomic_int next;
} loop;

static void claim(loop *l, int thread) {
    for (int t; (t = atomic_fetch_add(&l->next, 1)) < l->ntasks;) {
        l->task(l->ctx, t, thread);
        atomic_fetch_add(&l->pl->tasks, 1);
        if (thread == 1) atomic_fetch_add(&l->pl->second, 1);
    }
}

static void *worker(void *arg) {
    claim(arg, 1);
    return NULL;
}

/* Two threads: the caller (thread 0) and one started for the loop (thread 1). */
static void two_threads(void *user, int ntasks, wgpar_task task, void *ctx) {
    loop l = {.pl = user, .ntasks = ntasks, .task = task, .ctx = ctx};
    atomic_init(&l.next, 0);
    l.pl->calls++;
    pthread_t th;
    bool started = pthread_create(&th, NULL, worker, &l) == 0;
    claim(&l, 0);
    if (started) pthread_join(th, NULL);
}

/* One thread, the tasks last to first, as thread 1 (the second copy of the scratch). */
static void backwards(void *user, int ntasks, wgpar_task task, void *ctx) {
    pool *pl = user;
    pl->calls++;
    for (int t = ntasks - 1; t >= 0; t--) {
        task(ctx, t, wgpar_MAX_THREADS - 1);
        atomic_fetch_add(&pl->tasks, 1);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    char path[4096];
    const void *in[wgpar_NUM_INPUTS];
    kn_tensor *want[wgpar_NUM_OUTPUTS];
    void *ref[wgpar_NUM_OUTPUTS], *got[wgpar_NUM_OUTPUTS];
    size_t bytes[wgpar_NUM_OUTPUTS];
    for (int i = 0; i < wgpar_NUM_INPUTS; i++) {
        kn_tensor *t = NULL;
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", argv[1], i);
        CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &t) == KN_OK && t);
        if (!t) return TEST_DONE();
        in[i] = t->data;
    }
    for (int i = 0; i < wgpar_NUM_OUTPUTS; i++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", argv[1], i);
        want[i] = NULL;
        CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &want[i]) == KN_OK && want[i]);
        if (!want[i]) return TEST_DONE();
        bytes[i] = (size_t)kn_tensor_numel(want[i]) * sizeof(float);
        ref[i] = calloc(1, bytes[i]);
        got[i] = calloc(1, bytes[i]);
    }
    void *arena = aligned_alloc(wgpar_ARENA_ALIGN, wgpar_ARENA_SIZE);
    CHECK(wgpar_run_array(in, ref, NULL, arena) == 0);
    for (int i = 0; i < wgpar_NUM_OUTPUTS; i++) {
        const float *r = ref[i], *w = want[i]->data;
        int bad = 0;
        for (int64_t k = 0; k < kn_tensor_numel(want[i]); k++)
            bad += !(fabsf(r[k] - w[k]) <= 1e-5f + 1e-3f * fabsf(w[k]));
        CHECK(bad == 0);
    }
    wgpar_par_for pf[2] = {two_threads, backwards};
    for (int f = 0; f < 2; f++) {
        for (int rep = 0; rep < (f ? 1 : 20); rep++) {
            pool pl = {0};
            for (int i = 0; i < wgpar_NUM_OUTPUTS; i++) memset(got[i], 0, bytes[i]);
            memset(arena, 0xff, wgpar_ARENA_SIZE); /* no value carried over */
            CHECK(wgpar_run_array_parallel(in, got, NULL, arena, pf[f], &pl) == 0);
            for (int i = 0; i < wgpar_NUM_OUTPUTS; i++)
                CHECK(memcmp(got[i], ref[i], bytes[i]) == 0);
            CHECK(pl.calls > 0 && atomic_load(&pl.tasks) > pl.calls);
            if (f == 0 && rep == 19)
                printf("last run: %d loops, %d tasks, %d on thread 1\n", pl.calls,
                       atomic_load(&pl.tasks), atomic_load(&pl.second));
        }
    }
    for (int i = 0; i < wgpar_NUM_OUTPUTS; i++) {
        free(ref[i]);
        free(got[i]);
    }
    free(arena);
    kn_arena_destroy(a);
    return TEST_DONE();
}
