/* kiln's thread pool (see kn_pool.h for the contract and why workers spin).
 *
 * One loop slot per pool. Posting a loop: the caller takes the slot (`busy`), writes
 * the loop's fields, opens it (`open`, release) and bumps `posted`; workers that see
 * `posted` change enter (`joined`++), and if the slot is open claim tasks from the
 * unclaimed `range` (its back; the caller takes from its front) until none are left.
 * A worker counts loops from 0, not from when it started, so a loop posted before it
 * first runs is not missed. The caller claims tasks too, waits until `done` reaches the
 * task count, closes the slot and waits until no worker is inside (`joined` == 0)
 * before it gives the slot up, so a late worker never reads the fields of a loop that
 * is being rewritten: it enters first and then sees the slot closed, or open with the
 * next loop's fields already written. The counters are sequentially consistent
 * atomics, which also makes the sleep protocol safe: a worker counts itself in
 * `sleepers` before it rechecks `posted` under the mutex, and a poster bumps `posted`
 * before it reads `sleepers`, so one of them sees the other. */
#define _POSIX_C_SOURCE 200809L
#include "runtime/kn_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct kn_pool {
    int nworkers;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int stop;
    atomic_int runs;     /* runs in progress: workers spin while > 0 */
    atomic_int sleepers; /* workers waiting on cv (or about to) */
    atomic_uint posted;  /* loops posted so far */
    atomic_int busy;     /* a caller owns the loop slot */
    atomic_int open;     /* the slot holds a loop whose tasks may be claimed */
    atomic_int joined;   /* workers inside the slot */
    /* the loop in the slot: written while busy && !open */
    kn_pool_task task;
    void *uc;
    unsigned char *closure;
    int min, size;
    _Atomic unsigned long long range; /* tasks not yet claimed: lo | hi << 32 */
    atomic_int done, rc;
    atomic_long loops, serial_loops, tasks, worker_tasks;
};

static _Thread_local kn_pool *run_pool;

static void relax(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Claims a task of the open loop: the caller from the front of the unclaimed range,
 * workers from the back, so that on two threads each runs a contiguous half of the
 * iterations, the same half in every run (data stays in that core's caches), and
 * still takes over the other's tasks when that one is late. -1: none left. */
static int claim(kn_pool *P, bool front) {
    unsigned long long r = atomic_load(&P->range), n;
    int i;
    do {
        unsigned lo = (unsigned)r, hi = (unsigned)(r >> 32);
        if (lo >= hi) return -1;
        i = front ? (int)lo : (int)hi - 1;
        n = front ? r + 1 : r - (1ull << 32);
    } while (!atomic_compare_exchange_weak(&P->range, &r, n));
    return i;
}

/* Claims and runs tasks of the open loop until none are left; returns how many. */
static long run_tasks(kn_pool *P, bool front) {
    long n = 0;
    for (;;) {
        int i = claim(P, front);
        if (i < 0) return n;
        int rc = P->task(P->uc, P->min + i, P->closure);
        if (rc) {
            int zero = 0;
            atomic_compare_exchange_strong(&P->rc, &zero, rc);
        }
        atomic_fetch_add(&P->done, 1);
        n++;
    }
}

static void wake_sleepers(kn_pool *P) {
    if (!atomic_load(&P->sleepers)) return;
    pthread_mutex_lock(&P->mu);
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
}

static void *worker(void *arg) {
    kn_pool *P = arg;
    unsigned seen = 0; /* not the count when this thread starts: a loop may be posted first */
    double idle_since = now_us();
    unsigned spins = 0;
    while (!atomic_load_explicit(&P->stop, memory_order_relaxed)) {
        unsigned cur = atomic_load(&P->posted);
        if (cur != seen) {
            seen = cur;
            atomic_fetch_add(&P->joined, 1);
            if (atomic_load(&P->open)) {
                long n = run_tasks(P, false);
                atomic_fetch_add_explicit(&P->worker_tasks, n, memory_order_relaxed);
            }
            atomic_fetch_sub(&P->joined, 1);
            idle_since = now_us();
            spins = 0;
            continue;
        }
        relax();
        if (++spins % 1024) continue; /* look at the clock now and then */
        if (atomic_load(&P->runs) > 0) {
            idle_since = now_us();
            continue;
        }
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
    kn_pool *P = calloc(1, sizeof *P);
    if (!P) return NULL;
    P->th = calloc((size_t)threads - 1, sizeof *P->th);
    if (!P->th || pthread_mutex_init(&P->mu, NULL)) {
        free(P->th);
        free(P);
        return NULL;
    }
    if (pthread_cond_init(&P->cv, NULL)) {
        pthread_mutex_destroy(&P->mu);
        free(P->th);
        free(P);
        return NULL;
    }
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&P->th[i], NULL, worker, P)) break;
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
    P->task = task;
    P->uc = uc;
    P->closure = closure;
    P->min = min;
    P->size = size;
    atomic_store(&P->range, (unsigned long long)(unsigned)size << 32);
    atomic_store(&P->done, 0);
    atomic_store(&P->rc, 0);
    atomic_store(&P->open, 1);
    atomic_fetch_add(&P->posted, 1);
    wake_sleepers(P);
    run_tasks(P, true);
    /* the tasks workers still run; then no worker may be left inside the slot */
    for (unsigned spins = 0; atomic_load(&P->done) < size; spins++)
        if (spins < 4096)
            relax();
        else
            sched_yield(); /* the worker may be waiting for this core */
    atomic_store(&P->open, 0);
    for (unsigned spins = 0; atomic_load(&P->joined); spins++)
        if (spins < 4096)
            relax();
        else
            sched_yield();
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
