/* Constant folding.
 * requires: nothing; breaks: nothing (removes nodes whose outputs became constants).
 *
 * A node whose inputs are all constants (or omitted) and that is neither random nor
 * has subgraphs is evaluated with the reference interpreter; its outputs become
 * constants and the node is dropped. Folding must not blow up the model: a node
 * whose inferred outputs would take more than KN_FOLD_MAX_BYTES and more than its
 * (distinct) inputs is left to run time, so a tiny ConstantOfShape or Expand cannot
 * make compilation allocate gigabytes. */
#include "ir/interp.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdint.h>

#define KN_FOLD_MAX_BYTES ((size_t)64 << 20)

static bool foldable(const kn_node *n) {
    const kn_opdesc *d = kn_op_desc(n->op);
    if (d->flags & OPF_RANDOM) return false;
    for (int k = 0; k < n->nin; k++) {
        const kn_value *v = n->in[k];
        if (v && !v->constant && !((d->flags & OPF_SHAPE_ONLY) && kn_type_static(&v->type)))
            return false;
    }
    return true;
}

/* The constant, or for OPF_SHAPE_ONLY ops a tensor with the value's type only. */
static kn_tensor *fold_input(kn_arena *a, const kn_value *v) {
    return v->constant ? v->constant : kn_tensor_typed(a, &v->type);
}

/* Bytes of the data of a tensor type: 0 for sequences/optionals and unknown shapes
 * (their size is not known before evaluation), SIZE_MAX on overflow. */
static size_t type_bytes(const kn_type *t) {
    if (t->kind != KN_KIND_TENSOR || !kn_type_static(t)) return 0;
    int64_t n = kn_type_numel(t);
    size_t es = kn_dtype_get(t->dtype)->size;
    if (n < 0 || (es && (size_t)n > SIZE_MAX / es)) return SIZE_MAX;
    return (size_t)n * es;
}

/* Whether folding n would create outputs over the limit; infers their types in
 * scratch. Fails (cx set) where the op's infer does. */
static kn_status too_large(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_arena *scratch,
                           bool *large) {
    *large = false;
    size_t limit = KN_FOLD_MAX_BYTES, inbytes = 0, outbytes = 0;
    for (int k = 0; k < n->nin; k++) {
        bool seen = false;
        for (int j = 0; j < k; j++) seen |= n->in[j] == n->in[k];
        if (in[k] && !seen) inbytes += type_bytes(&in[k]->type);
    }
    if (inbytes > limit) limit = inbytes;
    kn_type *types = kn_arena_array(scratch, (size_t)n->nout + 1, sizeof *types);
    for (int j = 0; j < n->nout; j++) types[j] = kn_type_unknown(KN_UNDEF), types[j].rank = 0;
    if (kn_op_desc(n->op)->infer(cx, n, in, types) || kn_failed(cx))
        return cx->status ? cx->status : KN_EINVAL;
    for (int j = 0; j < n->nout; j++) {
        size_t b = type_bytes(&types[j]);
        outbytes = b > SIZE_MAX - outbytes ? SIZE_MAX : outbytes + b;
    }
    *large = outbytes > limit;
    return KN_OK;
}

static kn_status fold_graph(kn_ctx *cx, kn_graph *g);

/* Folds inside the subgraphs of n (their nodes may use constants of any scope). */
static kn_status fold_subgraphs(kn_ctx *cx, kn_node *n) {
    for (int k = 0; k < n->nattr; k++) {
        kn_attr *a = &n->attrs[k];
        if (a->kind == KN_ATTR_GRAPH && fold_graph(cx, a->g)) return cx->status;
        for (int j = 0; a->kind == KN_ATTR_GRAPHS && j < a->n; j++)
            if (fold_graph(cx, a->graphs[j])) return cx->status;
    }
    return KN_OK;
}

kn_status kn_pass_fold(kn_ctx *cx, kn_graph *g) {
    return fold_graph(cx, g);
}

kn_status kn_fold_node(kn_ctx *cx, kn_node *n, kn_arena *scratch, bool *folded) {
    kn_tensor *in[256], *out[256];
    bool large = false;
    *folded = false;
    if (!foldable(n) || n->nin > 256 || n->nout > 256) return KN_OK;
    for (int k = 0; k < 256; k++)
        in[k] = k < n->nin && n->in[k] ? fold_input(scratch, n->in[k]) : NULL;
    if (too_large(cx, n, in, scratch, &large)) return cx->status;
    if (large) return KN_OK;
    if (kn_op_desc(n->op)->flags & OPF_SUBGRAPH) {
        /* a body may read outer values that are not constants: then leave the node */
        kn_ctx sub;
        kn_ctx_init(&sub, cx->file);
        if (kn_interp_node(&sub, n, n->graph->arena, in, out)) return KN_OK;
    } else if (kn_interp_node(cx, n, n->graph->arena, in, out)) {
        return cx->status;
    }
    for (int j = 0; j < n->nout; j++) {
        if (!n->out[j]) continue;
        n->out[j]->constant = out[j];
        n->out[j]->type = out[j]->type;
        n->out[j]->producer = NULL;
    }
    *folded = true;
    return KN_OK;
}

static kn_status fold_graph(kn_ctx *cx, kn_graph *g) {
    kn_arena *scratch = kn_arena_create();
    int kept = 0;
    kn_status st = KN_OK;
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        bool folded;
        if ((st = kn_fold_node(cx, n, scratch, &folded))) break;
        if (folded) continue;
        if ((st = fold_subgraphs(cx, n))) break;
        g->nodes[kept++] = n;
    }
    kn_arena_destroy(scratch);
    if (st) return st;
    g->nnodes = kept;
    for (int i = 0; i < kept; i++) g->nodes[i]->id = i;
    return KN_OK;
}
