/* A program in a unit test run through the JIT on a number of threads (kiln's pool when
 * more than one), many times, each run's outputs checked by the test. */
#ifndef KN_JIT_HARNESS_H
#define KN_JIT_HARNESS_H

#include "codegen/llvm/llvm.h"
#include "ir/kir.h"
#include "runtime/kn_pool.h"
#include "targets/target.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Compiles p for the host and runs it `runs` times on `threads` threads with inputs in and
 * outputs out (nout of them, out_bytes[i] bytes each, zeroed before every run); returns how
 * many runs failed or were called wrong by wrong() (-1: not compiled). */
static inline int jh_runs(kn_ctx *cx, const kn_kprog *p, int threads, const void *const *in,
                          void *const *out, const size_t *out_bytes, int nout, int runs,
                          int (*wrong)(void)) {
    kn_jit *j = NULL;
    kn_pool *pool = threads > 1 ? kn_pool_create(threads) : NULL;
    if (kn_llvm_jit(cx, p, kn_target_find("native"), 2, pool ? kn_pool_par_for : NULL, &j) !=
        KN_OK) {
        kn_pool_destroy(pool);
        return -1;
    }
    void *arena = aligned_alloc(KN_ARENA_ALIGN, (p->arena_size + 63) / 64 * 64 + 64);
    KN_ASSERT(arena);
    kn_entry_fn fn = kn_jit_entry(j);
    int bad = 0;
    kn_pool_run_begin(pool);
    for (int r = 0; r < runs; r++) {
        for (int i = 0; i < nout; i++) memset(out[i], 0, out_bytes[i]);
        bad += fn(in, out, NULL, arena) != 0 || wrong();
    }
    kn_pool_run_end();
    free(arena);
    kn_jit_destroy(j);
    kn_pool_destroy(pool);
    return bad;
}

#endif
