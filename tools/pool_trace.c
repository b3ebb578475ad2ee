/* KILN_POOL_TRACE (see pool_trace.h). The figures per loop: wall time from posting to
 * return; time the caller and the workers spent in tasks; the thread CPU time of the
 * tasks (above the 1-thread figure when the threads slow each other down, or when
 * they share a core); the delay from posting to a worker's first task; the join (from
 * the caller's last task to the return). Counters are updated by the caller only,
 * except the per-loop worker figures, which are atomics. */
#include "tools/pool_trace.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_POS = 1024 };

typedef struct tr_loop {
    kn_par_task task;
    unsigned char *closure;
    double t0, caller_end, caller_busy; /* us */
    int caller_cpu;
    atomic_llong worker_first, worker_busy, cpu; /* ns */
    atomic_int worker_tasks, same_cpu;
} tr_loop;

static struct {
    kn_par_for inner;
    long runs, loops, worker_loops, tasks, worker_tasks, same_cpu;
    double wall, wake, join, caller_busy, worker_busy, cpu;
    int pos, npos; /* the loop's position in the current run; positions seen */
    int size[MAX_POS];
    double pwall[MAX_POS], pcaller[MAX_POS], pworker[MAX_POS], pcpu[MAX_POS];
} TR;

static _Thread_local int is_caller;

static double us(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int traced_task(void *uc, int i, unsigned char *closure) {
    tr_loop *T = (tr_loop *)closure;
    double a = us(CLOCK_MONOTONIC), ca = us(CLOCK_THREAD_CPUTIME_ID);
    int cpu = sched_getcpu();
    int rc = T->task(uc, i, T->closure);
    double b = us(CLOCK_MONOTONIC);
    atomic_fetch_add(&T->cpu, (long long)((us(CLOCK_THREAD_CPUTIME_ID) - ca) * 1e3));
    if (is_caller) {
        T->caller_busy += b - a;
        T->caller_end = b;
    } else {
        long long zero = 0;
        atomic_compare_exchange_strong(&T->worker_first, &zero, (long long)(a * 1e3));
        atomic_fetch_add(&T->worker_busy, (long long)((b - a) * 1e3));
        atomic_fetch_add(&T->worker_tasks, 1);
        atomic_fetch_add(&T->same_cpu, cpu == T->caller_cpu);
    }
    return rc;
}

static int traced_par_for(void *uc, kn_par_task task, int min, int size, unsigned char *closure) {
    is_caller = 1;
    tr_loop T = {
        .task = task, .closure = closure, .t0 = us(CLOCK_MONOTONIC), .caller_cpu = sched_getcpu()};
    int rc = TR.inner(uc, traced_task, min, size, (unsigned char *)&T);
    double t1 = us(CLOCK_MONOTONIC), wbusy = (double)T.worker_busy * 1e-3;
    double cpu = (double)T.cpu * 1e-3;
    TR.loops++;
    TR.tasks += size;
    TR.wall += t1 - T.t0;
    TR.caller_busy += T.caller_busy;
    TR.worker_busy += wbusy;
    TR.cpu += cpu;
    TR.same_cpu += T.same_cpu;
    if (T.worker_tasks) {
        TR.worker_loops++;
        TR.worker_tasks += T.worker_tasks;
        TR.wake += (double)T.worker_first * 1e-3 - T.t0;
    }
    TR.join += t1 - (T.caller_end > 0 ? T.caller_end : T.t0);
    if (TR.pos < MAX_POS) {
        TR.size[TR.pos] = size;
        TR.pwall[TR.pos] += t1 - T.t0;
        TR.pcaller[TR.pos] += T.caller_busy;
        TR.pworker[TR.pos] += wbusy;
        TR.pcpu[TR.pos] += cpu;
        if (TR.pos >= TR.npos) TR.npos = TR.pos + 1;
    }
    TR.pos++;
    return rc;
}

static void report(void) {
    double n = TR.loops ? (double)TR.loops : 1;
    fprintf(stderr,
            "pool trace: %ld loops, %ld tasks (%ld on workers, %ld of them on the caller's "
            "CPU); workers took part in %ld loops\n"
            "  per loop (us): wall %.2f, caller in tasks %.2f, workers in tasks %.2f, task CPU "
            "time %.2f, join %.2f; first worker task %.2f after posting\n",
            TR.loops, TR.tasks, TR.worker_tasks, TR.same_cpu, TR.worker_loops, TR.wall / n,
            TR.caller_busy / n, TR.worker_busy / n, TR.cpu / n, TR.join / n,
            TR.worker_loops ? TR.wake / (double)TR.worker_loops : 0);
    const char *file = getenv("KILN_POOL_TRACE");
    if (!file || !strcmp(file, "1") || !*file || !TR.runs) return;
    FILE *f = fopen(file, "w");
    if (!f) return;
    double r = (double)TR.runs;
    fprintf(f, "pos tasks wall_us caller_us worker_us cpu_us\n"); /* per run */
    for (int i = 0; i < TR.npos; i++)
        fprintf(f, "%d %d %.2f %.2f %.2f %.2f\n", i, TR.size[i], TR.pwall[i] / r, TR.pcaller[i] / r,
                TR.pworker[i] / r, TR.pcpu[i] / r);
    fclose(f);
}

kn_par_for pool_trace_wrap(kn_par_for inner) {
    if (!TR.inner) atexit(report);
    TR.inner = inner;
    return traced_par_for;
}

void pool_trace_run_begin(void) {
    if (!TR.inner) return;
    TR.pos = 0;
    TR.runs++;
}
