/* The abstract run of a kernel-IR program (passes/xcore.c): every loop iterated and
 * every integer local and index evaluated, no float computed, each split parallel loop's
 * iterations dealt to threads as runtime/kn_pool.c deals them when no thread is late.
 * Its clients: the cross-core bytes of --dump-schedule (kn_xcore_bytes, schedule.h) and
 * the thread-aware memory plan (passes/plan.c). */
#ifndef KN_PASSES_XCORE_H
#define KN_PASSES_XCORE_H

#include <stdbool.h>
#include <stdint.h>

struct kn_kprog;
struct kn_kbuf;

enum { KN_XRUN_MAX_THREADS = 8 };

/* Where an access happens: the run (0 the first), the kernel, the thread running it
 * (0: the caller) and whether inside a task of a split parallel loop. */
typedef struct kn_xrun_at {
    int pass, kernel, thread;
    bool in_task;
} kn_xrun_at;

/* Elements [index, index + n) of b (clipped to the buffer, n >= 1; never a constant)
 * loaded, or stored when write. */
typedef void (*kn_xrun_touch)(void *user, const kn_xrun_at *at, const struct kn_kbuf *b,
                              int64_t index, int64_t n, bool write);

/* Runs p abstractly `passes` times at `threads` threads (1..KN_XRUN_MAX_THREADS), telling
 * fn of every access. An access whose index the run cannot know (loaded from data) is
 * left out, a while loop on data is not run, a branch on data runs both arms. budget:
 * the statements it may run (below 0: no limit); false if it ran out and stopped. */
bool kn_xrun(const struct kn_kprog *p, int threads, int passes, int64_t budget, kn_xrun_touch fn,
             void *user);

#endif
