/* kiln's thread pool (see kn_pool.h for the contract and why workers spin).
 *
 * One loop slot per pool. Posting a loop: the caller takes the slot (`busy`), writes
 * the loop's fields, deals its tasks out (below), opens it (`open`, release) and bumps
 * `posted`; workers that see `posted` change enter (`joined`++), and if the slot is
 * open run tasks until none are left. A worker counts loops from 0, not from when it
 * started, so a loop posted before it first runs is not missed. The caller runs tasks
 * too, waits until `done` reaches the task count, closes the slot and waits until no
 * worker is inside (`joined` == 0) before it gives the slot up, so a late worker never
 * reads the fields of a loop that is being rewritten: it enters first and then sees the
 * slot closed, or open with the next loop's fields already written. The counters are
 * sequentially consistent atomics, which also makes the sleep protocol safe: a worker
 * counts itself in `sleepers` before it rechecks `posted` under the mutex, and a poster
 * bumps `posted` before it reads `sleepers`, so one of them sees the other.
 *
 * Tasks are dealt out as one contiguous range per thread (the caller the first, worker
 * w the (w+1)-th), each range in a cache line of its own: a thread claims from the
 * front of its own range, which no other thread touches until it runs dry, and then
 * takes tasks from the back of the others' ranges. So each thread runs the same part
 * of a loop from run to run (its data stays in that core's caches), a late or slowed
 * thread's tasks are still taken over, and a task costs no cache-line transfer between
 * the cores: with one shared counter every claim moved its line from the other core
 * (on the Zen 4 VM 50-350 ns a round trip, as long as a whole task of a small
 * depthwise convolution, docs/benchmarks.md). `done` is added to once per thread per
 * loop, not per task.
 *
 * A worker and the caller on the same core (a loaded VM: the scheduler put both on one
 * vCPU, another process holds the other) must not spin against each other: a spinning
 * worker then holds the core for its whole time slice while the caller, which posts the
 * loops, waits for it, and a caller waiting in a join holds it while the worker that
 * has the last task waits. SqueezeNet took 3x its 1-thread time so (a microbenchmark of
 * 16 tasks of 2.5 us: the worker ran 0.2% of them, entering 54 of 10,000 loops, each
 * time on the caller's core). So each thread notes the core it runs on (`cpu`, the
 * caller's when it posts, a worker's each time it looks at the clock), and a thread that
 * finds the thread it waits for on its own core yields it (sched_yield) instead of
 * spinning: the pool then runs about as fast as one thread, the caller taking over the
 * tasks. Threads on different cores never yield for this, so the usual case costs a
 * getcpu (vDSO, tens of ns) every 128 spins. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu */
#endif
#include "runtime/kn_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A thread's tasks of the open loop not yet claimed, lo | hi << 32, alone in its cache
 * line. */
typedef struct kn_pool_range {
    _Alignas(64) _Atomic unsigned long long r;
} kn_pool_range;

/* The core a thread last ran on, alone in its cache line (-1: unknown). */
typedef struct kn_pool_cpu {
    _Alignas(64) atomic_int cpu;
} kn_pool_cpu;

/* A worker's thread argument. */
typedef struct worker_arg {
    kn_pool *P;
    int self;
} worker_arg;

/* The fields are grouped in cache lines by who writes them and who polls them: a
 * thread spinning on a line that another thread writes several times in a row pulls it
 * back between the writes, each write then costing a transfer between the cores
 * (350-410 ns in the VM's slow state, docs/benchmarks.md). Workers poll `posted`, which
 * the caller writes once per loop (open, then posted); the loop's fields are written
 * before it; what workers write (done, joined, their task count) and what only callers
 * write (busy, the counters) are on lines of their own. */
struct kn_pool {
    /* set by kn_pool_create */
    int nworkers;
    pthread_t *th;
    worker_arg *args;
    kn_pool_range *range; /* per thread (0: the caller; w + 1: worker w) */
    kn_pool_cpu *cpu;     /* per thread, as range */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the loop in the slot: written while busy && !open */
    _Alignas(64) kn_pool_task task;
    void *uc;
    unsigned char *closure;
    int min, size;
    /* what waiting workers poll */
    _Alignas(64) atomic_uint posted; /* loops posted so far */
    atomic_int open;                 /* the slot holds a loop whose tasks may be claimed */
    atomic_int runs;                 /* runs in progress: workers spin while > 0 */
    atomic_int stop;
    /* written by the threads running a loop's tasks */
    _Alignas(64) atomic_int done, rc;
    atomic_int joined;   /* workers inside the slot */
    atomic_int sleepers; /* workers waiting on cv (or about to) */
    atomic_long worker_tasks;
    /* written by callers */
    _Alignas(64) atomic_int busy; /* a caller owns the loop slot */
    atomic_long loops, serial_loops, tasks;
};

static _Thread_local kn_pool *run_pool;

/* kn_pool_thread_index: 0 on every thread but a pool's workers, which set theirs once. */
static _Thread_local int thread_index;

int kn_pool_thread_index(void) {
    return thread_index;
}

static void relax(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* The core the calling thread runs on, -1 where that is unknown. */
static int this_cpu(void) {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
}

/* Sets thread t's core to c, writing its line only when c changed: a store to a line
 * the other thread has read costs a transfer, and the caller notes its core at every
 * post. */
static void note_cpu(kn_pool *P, int t, int c) {
    if (atomic_load_explicit(&P->cpu[t].cpu, memory_order_relaxed) != c)
        atomic_store_explicit(&P->cpu[t].cpu, c, memory_order_relaxed);
}

/* Notes thread t's core; true when another thread (any of them but t, or only `other`
 * when it is >= 0) was last seen on the same core. */
static bool shares_cpu(kn_pool *P, int t, int other) {
    int c = this_cpu();
    note_cpu(P, t, c);
    if (c < 0) return false;
    for (int u = 0; u <= P->nworkers; u++)
        if (u != t && (other < 0 || u == other) &&
            atomic_load_explicit(&P->cpu[u].cpu, memory_order_relaxed) == c)
            return true;
    return false;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Claims a task from range R: from its front (its owner) or its back (another thread
 * taking over the rest). -1: none left. */
static int claim(kn_pool_range *R, bool front) {
    unsigned long long r = atomic_load(&R->r), n;
    int i;
    do {
        unsigned lo = (unsigned)r, hi = (unsigned)(r >> 32);
        if (lo >= hi) return -1;
        i = front ? (int)lo : (int)hi - 1;
        n = front ? r + 1 : r - (1ull << 32);
    } while (!atomic_compare_exchange_weak(&R->r, &r, n));
    return i;
}

/* Runs the tasks of thread `self`'s range, then those left in the others' ranges, until
 * none are left; returns how many it ran. */
static long run_tasks(kn_pool *P, int self) {
    int nt = P->nworkers + 1;
    long n = 0;
    for (int k = 0; k < nt; k++) {
        kn_pool_range *R = &P->range[(self + k) % nt];
        for (int i; (i = claim(R, k == 0)) >= 0; n++) {
            int rc = P->task(P->uc, P->min + i, P->closure);
            if (rc) {
                int zero = 0;
                atomic_compare_exchange_strong(&P->rc, &zero, rc);
            }
        }
    }
    if (n) atomic_fetch_add(&P->done, (int)n);
    return n;
}

static void wake_sleepers(kn_pool *P) {
    if (!atomic_load(&P->sleepers)) return;
    pthread_mutex_lock(&P->mu);
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
}

static void *worker(void *arg) {
    kn_pool *P = ((worker_arg *)arg)->P;
    int self = ((worker_arg *)arg)->self;
    thread_index = self;
    unsigned seen = 0; /* not the count when this thread starts: a loop may be posted first */
    double idle_since = now_us();
    unsigned spins = 0;
    while (!atomic_load_explicit(&P->stop, memory_order_relaxed)) {
        unsigned cur = atomic_load(&P->posted);
        if (cur != seen) {
            seen = cur;
            atomic_fetch_add(&P->joined, 1);
            if (atomic_load(&P->open)) {
                long n = run_tasks(P, self);
                atomic_fetch_add_explicit(&P->worker_tasks, n, memory_order_relaxed);
            }
            atomic_fetch_sub(&P->joined, 1);
            idle_since = now_us();
            spins = 0;
            continue;
        }
        relax();
        if (++spins % 128) continue;
        if (atomic_load(&P->runs) > 0) {
            if (shares_cpu(P, self, 0)) sched_yield(); /* the caller posts the loops */
            if (spins % 1024 == 0) idle_since = now_us();
            continue;
        }
        if (spins % 1024) continue; /* look at the clock now and then */
        if (now_us() - idle_since < KN_POOL_IDLE_SPIN_US) continue;
        pthread_mutex_lock(&P->mu);
        atomic_fetch_add(&P->sleepers, 1);
        while (!atomic_load(&P->stop) && atomic_load(&P->posted) == seen &&
               atomic_load(&P->runs) == 0)
            pthread_cond_wait(&P->cv, &P->mu);
        atomic_fetch_sub(&P->sleepers, 1);
        pthread_mutex_unlock(&P->mu);
        idle_since = now_us();
    }
    return NULL;
}

kn_pool *kn_pool_create(int threads) {
    if (threads < 2) return NULL;
    kn_pool *P = aligned_alloc(_Alignof(kn_pool), sizeof *P);
    if (!P) return NULL;
    memset(P, 0, sizeof *P);
    P->th = calloc((size_t)threads - 1, sizeof *P->th);
    P->args = calloc((size_t)threads - 1, sizeof *P->args);
    P->range = aligned_alloc(_Alignof(kn_pool_range), (size_t)threads * sizeof *P->range);
    P->cpu = aligned_alloc(_Alignof(kn_pool_cpu), (size_t)threads * sizeof *P->cpu);
    if (!P->th || !P->args || !P->range || !P->cpu || pthread_mutex_init(&P->mu, NULL)) {
        free(P->th);
        free(P->args);
        free(P->range);
        free(P->cpu);
        free(P);
        return NULL;
    }
    if (pthread_cond_init(&P->cv, NULL)) {
        pthread_mutex_destroy(&P->mu);
        free(P->th);
        free(P->args);
        free(P->range);
        free(P->cpu);
        free(P);
        return NULL;
    }
    for (int i = 0; i < threads; i++) {
        atomic_init(&P->range[i].r, 0);
        atomic_init(&P->cpu[i].cpu, -1);
    }
    for (int i = 0; i < threads - 1; i++) {
        P->args[i] = (worker_arg){P, i + 1};
        if (pthread_create(&P->th[i], NULL, worker, &P->args[i])) break;
        P->nworkers++;
    }
    if (!P->nworkers) {
        kn_pool_destroy(P);
        return NULL;
    }
    return P;
}

void kn_pool_destroy(kn_pool *P) {
    if (!P) return;
    pthread_mutex_lock(&P->mu);
    atomic_store(&P->stop, 1);
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
    for (int i = 0; i < P->nworkers; i++) pthread_join(P->th[i], NULL);
    pthread_cond_destroy(&P->cv);
    pthread_mutex_destroy(&P->mu);
    free(P->th);
    free(P->args);
    free(P->range);
    free(P->cpu);
    free(P);
}

int kn_pool_threads(const kn_pool *P) {
    return P ? P->nworkers + 1 : 1;
}

void kn_pool_run_begin(kn_pool *P) {
    run_pool = P;
    if (!P) return;
    atomic_fetch_add(&P->runs, 1);
    wake_sleepers(P); /* up and spinning by the first parallel loop */
}

void kn_pool_run_end(void) {
    if (run_pool) atomic_fetch_sub(&run_pool->runs, 1);
    run_pool = NULL;
}

/* One step of the caller's wait for the workers: spin, but yield the core when a worker
 * was last seen on it (it cannot finish before this thread lets it run), or after 4096
 * spins (it may have moved here since). */
static void wait_step(kn_pool *P, unsigned spins) {
    if (spins >= 4096 || (spins % 128 == 127 && shares_cpu(P, 0, -1)))
        sched_yield();
    else
        relax();
}

int kn_pool_par_for(void *uc, kn_pool_task task, int min, int size, unsigned char *closure) {
    kn_pool *P = run_pool;
    int zero = 0;
    if (!P || size <= 1 || !atomic_compare_exchange_strong(&P->busy, &zero, 1)) {
        if (P && size > 1) atomic_fetch_add_explicit(&P->serial_loops, 1, memory_order_relaxed);
        for (int i = min; i < min + size; i++) {
            int rc = task(uc, i, closure);
            if (rc) return rc;
        }
        return 0;
    }
    note_cpu(P, 0, this_cpu());
    P->task = task;
    P->uc = uc;
    P->closure = closure;
    P->min = min;
    P->size = size;
    /* thread t's range: [ceil(t*size/nt), ceil((t+1)*size/nt)); the caller's is never
     * empty and the ranges differ by at most one task */
    int nt = P->nworkers + 1;
    for (int t = 0; t < nt; t++) {
        unsigned lo = (unsigned)(((long long)t * size + nt - 1) / nt);
        unsigned hi = (unsigned)(((long long)(t + 1) * size + nt - 1) / nt);
        atomic_store(&P->range[t].r, (unsigned long long)lo | (unsigned long long)hi << 32);
    }
    atomic_store(&P->done, 0);
    atomic_store(&P->rc, 0);
    atomic_store(&P->open, 1);
    atomic_fetch_add(&P->posted, 1);
    wake_sleepers(P);
    run_tasks(P, 0);
    /* the tasks workers still run; then no worker may be left inside the slot */
    for (unsigned spins = 0; atomic_load(&P->done) < size; spins++) wait_step(P, spins);
    atomic_store(&P->open, 0);
    for (unsigned spins = 0; atomic_load(&P->joined); spins++) wait_step(P, spins);
    int rc = atomic_load(&P->rc);
    atomic_fetch_add_explicit(&P->loops, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&P->tasks, size, memory_order_relaxed);
    atomic_store(&P->busy, 0);
    return rc;
}

kn_pool_stats kn_pool_get_stats(const kn_pool *P) {
    kn_pool_stats s = {0};
    if (!P) return s;
    s.loops = atomic_load(&P->loops);
    s.serial_loops = atomic_load(&P->serial_loops);
    s.tasks = atomic_load(&P->tasks);
    s.worker_tasks = atomic_load(&P->worker_tasks);
    return s;
}
