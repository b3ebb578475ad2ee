/* Internals shared by the kernel IR builder (ir/kir.c) and the lowering driver
 * (ir/lower.c). Op lowerings use ir/kir.h only. */
#ifndef KN_LOWER_IMPL_H
#define KN_LOWER_IMPL_H

#include "ir/kir.h"

#define KL_MAX_DEPTH 64

struct kn_lower {
    kn_ctx *cx;
    kn_kprog *p;
    int kidx;                       /* index of the kernel being built */
    int depth;                      /* open blocks */
    kn_ks *stack[KL_MAX_DEPTH];     /* the blocks */
    kn_ks *owner[KL_MAX_DEPTH];     /* the statement owning each block (NULL: kernel body) */
    kn_kbuf **vbuf;                 /* buffer of each graph value, by value id */
    const struct kn_target *target; /* what vector widths to use; NULL: scalar code */
    int64_t max_string_bytes;       /* kl_max_string_bytes */
    int subgraph;                   /* > 0 while lowering a subgraph's nodes inline */
    const kn_sched *want;           /* kl_want_sched: what a rebuilding pass asks, or NULL */
};

/* A new buffer of the program, named PREFIX<id>. */
kn_kbuf *kl_buffer(kn_kprog *p, kn_kbuf_kind kind, kn_dtype t, int rank, const int64_t *dims,
                   const char *prefix);
int kl_new_var(kn_lower *L, kn_dtype t);
kn_ks *kl_block_new(kn_lower *L);
void kl_block_append(kn_lower *L, kn_ks *block, kn_ks *s);

#endif
