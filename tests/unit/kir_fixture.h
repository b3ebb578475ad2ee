/* Hand-built kernel-IR programs for the unit tests: a program of one arena and a target,
 * kernels added one at a time with a builder on each (ir/lower_impl.h), the last store
 * of a kernel, and what a C printer writes for one statement. */
#ifndef KN_KIR_FIXTURE_H
#define KN_KIR_FIXTURE_H

#include "codegen/c/cprint.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "targets/target.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A program named "m" for target (NULL: none) in *p, with a fresh arena. */
static inline void fx_prog(kn_kprog *p, const char *target) {
    memset(p, 0, sizeof *p);
    p->arena = kn_arena_create();
    p->name = "m";
    if (target) {
        p->target = kn_target_find(target);
        KN_ASSERT(p->target);
    }
}

/* A new kernel "test" at the end of p, and a builder on its body (kl_builder_destroy
 * ends it). */
static inline kn_lower *fx_kernel(kn_ctx *cx, kn_kprog *p) {
    kn_kernel *k = kn_arena_alloc(p->arena, sizeof *k);
    kn_kernel **v = kn_arena_array(p->arena, (size_t)p->nkernels + 1, sizeof *v);
    KN_ASSERT(k && v);
    memset(k, 0, sizeof *k);
    if (p->nkernels) memcpy(v, p->kernels, (size_t)p->nkernels * sizeof *v);
    k->name = "test";
    v[p->nkernels] = k;
    p->kernels = v;
    p->cap_kernels = ++p->nkernels;
    return kl_builder_rewrite(cx, p, p->nkernels - 1);
}

/* The last statement of k's body, going down the last statement of each nest, which
 * must be a store. */
static inline kn_ks *fx_last_store(const kn_kernel *k) {
    kn_ks *b = k->body;
    while (b->kind != KS_STORE) b = b->body[b->n - 1];
    return b;
}

/* The text the printer of dialect d writes for statement s of p (and the helpers it
 * used, if helpers) into out. */
static inline void fx_print(const kn_kprog *p, const kn_ks *s, kn_dialect d, bool helpers,
                            char *out, size_t cap) {
    FILE *f = fmemopen(out, cap, "w");
    KN_ASSERT(f);
    kn_cprint E;
    kn_cprint_init(&E, p, f, d);
    kn_cprint_stmt(&E, s, 0);
    if (helpers) kn_cprint_helpers(&E, f);
    fclose(f);
}

#endif
