/* kiln's thread pool for the JIT's parallel loops (C11 atomics and POSIX threads, no
 * other dependency).
 *
 * The compiled kernels call a par_for (codegen/llvm/llvm.h, kn_par_for) once per
 * parallel loop: 20-150 times per inference, each loop running for 10 us to a few ms.
 * A pool whose workers sleep between loops pays a wake-up on each (futex, and on a
 * VM an inter-processor interrupt to a halted vCPU) and often finishes the loop on the
 * calling thread before the worker is up; the Halide runtime's pool, used before, did
 * so (docs/benchmarks.md, "Why two threads gained little"). Here the workers spin
 * while a run is in progress (between kn_pool_run_begin and kn_pool_run_end on the
 * calling thread) and for KN_POOL_IDLE_SPIN_US after their last loop, then sleep on a
 * condition variable until the next run begins or a loop is posted.
 *
 * A loop's tasks are claimed one at a time from a shared counter by the caller and
 * the workers, so a worker that starts late or is preempted only leaves its tasks to
 * the others. One loop at a time per pool: a par_for that finds the pool busy (another
 * thread's run, or a nested loop) runs its tasks on its own thread. */
#ifndef KN_POOL_H
#define KN_POOL_H

#include <stdbool.h>

/* How long an idle worker spins for the next loop outside a run before it sleeps. */
#define KN_POOL_IDLE_SPIN_US 200

typedef struct kn_pool kn_pool;

/* A task of a parallel loop: runs iteration i; nonzero fails the loop. The signature
 * of the Halide runtime's halide_task_t and of the kernels' task functions. */
typedef int (*kn_pool_task)(void *user_context, int i, unsigned char *closure);

/* A pool of `threads` threads in all: the caller of each loop and threads - 1 workers.
 * Returns NULL when threads < 2 or the workers cannot be started. Owned by the caller;
 * kn_pool_destroy joins the workers (no run may be in progress). */
kn_pool *kn_pool_create(int threads);
void kn_pool_destroy(kn_pool *pool);

/* The pool's threads, the calling one included. */
int kn_pool_threads(const kn_pool *pool);

/* Brackets one run of a compiled model on the calling thread: kn_pool_par_for calls
 * from this thread go to `pool` (NULL: run on the calling thread), and its workers
 * spin instead of sleeping until kn_pool_run_end (each begin needs its end, on the same
 * thread). Runs on several threads may share a pool. */
void kn_pool_run_begin(kn_pool *pool);
void kn_pool_run_end(void);

/* A par_for (kn_par_for's signature): runs task(user_context, i, closure) for i in
 * [min, min + size) on the pool of the calling thread's run, the calling thread
 * taking part; returns the first nonzero task result, else 0. */
int kn_pool_par_for(void *user_context, kn_pool_task task, int min, int size,
                    unsigned char *closure);

/* The calling thread's index among the threads of the pool whose tasks it runs: 1 ..
 * threads - 1 on a pool's workers, 0 on any other thread (the caller of a loop, which
 * runs tasks too, and every thread outside a pool). Two tasks running at once are on
 * different threads and so have different indices: compiled tasks address their
 * per-thread scratch by it (kn_kbuf.per_thread, ir/kir.h). A program compiled for T
 * threads (kn_compile_opts.threads) holds T copies, so its pool must have at most T. */
int kn_pool_thread_index(void);

/* Counters of the loops a pool ran since it was created (diagnostics and tests). */
typedef struct kn_pool_stats {
    long loops;        /* par_for calls that used the pool */
    long serial_loops; /* par_for calls that found the pool busy and ran on the caller */
    long tasks;        /* tasks of the pooled loops */
    long worker_tasks; /* of those, tasks run by a worker */
} kn_pool_stats;
kn_pool_stats kn_pool_get_stats(const kn_pool *pool);

#endif
