/* Constant folding.
 * requires: nothing; breaks: nothing (removes nodes whose outputs became constants).
 *
 * A node whose inputs are all constants (or omitted) and that is neither random nor
 * has subgraphs is evaluated with the reference interpreter; its outputs become
 * constants and the node is dropped; an If whose condition is a constant is replaced
 * by the nodes of the branch it takes. Types are inferred node by node during the
 * sweep, so a chain of shape arithmetic (Shape -> Gather -> Concat -> Reshape ->
 * Shape ...) folds in one pass. Folding must not blow up the model: a node
 * whose inferred outputs would take more than KN_FOLD_MAX_BYTES and more than its
 * (distinct) inputs is left to run time, so a tiny ConstantOfShape or Expand cannot
 * make compilation allocate gigabytes; nor may it take long: a node of more than
 * KN_FOLD_MAX_FLOPS (a convolution of constants, say) is left to the compiled code, which
 * runs it faster than the reference interpreter would at every compile. */
#include "ir/interp.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdint.h>
#include <string.h>

#define KN_FOLD_MAX_BYTES ((size_t)64 << 20)
#define KN_FOLD_MAX_FLOPS ((int64_t)64 << 20)

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

/* Whether folding n would create outputs over the limit or cost more than
 * KN_FOLD_MAX_FLOPS; infers their types in scratch. Fails (cx set) where the op's infer
 * does. */
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
    *large = outbytes > limit || kn_node_flops(n) > KN_FOLD_MAX_FLOPS;
    return KN_OK;
}

static kn_status fold_graph(kn_ctx *cx, kn_graph *g);

/* Folds inside the subgraphs of n (their nodes may use constants of any scope). An If
 * branch that fails once its constants are known (the condition being unknown) cannot
 * run for these shapes: it is marked invalid (kn_graph.invalid) instead. */
static kn_status fold_subgraphs(kn_ctx *cx, kn_node *n) {
    bool branches = n->op == KN_OP_IF;
    for (int k = 0; k < n->nattr; k++) {
        kn_attr *a = &n->attrs[k];
        if (a->kind == KN_ATTR_GRAPH && branches) {
            if (a->g->invalid) continue;
            kn_ctx sub;
            kn_ctx_init(&sub, NULL);
            if (fold_graph(&sub, a->g)) a->g->invalid = kn_arena_strdup(a->g->arena, sub.msg);
            continue;
        }
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

/* Growable node list in the graph's arena. */
static void push_node(kn_graph *g, kn_node ***v, int *n, int *cap, kn_node *x) {
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        kn_node **w = kn_arena_array(g->arena, (size_t)nc, sizeof *w);
        KN_ASSERT(w);
        if (*n) memcpy(w, *v, (size_t)*n * sizeof *w);
        *v = w;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
}

/* If n is an If whose condition is a constant, moves the nodes and values of the
 * branch it takes into g and makes n's outputs the branch's (through an Identity
 * where an output is a graph output, which keeps its name). Returns the branch, whose
 * nodes take n's place, or NULL to leave n alone. */
static kn_graph *take_branch(kn_ctx *cx, kn_graph *g, kn_node *n) {
    if (n->op != KN_OP_IF || !n->in[0] || !n->in[0]->constant) return NULL;
    const kn_tensor *c = n->in[0]->constant;
    if (c->type.kind != KN_KIND_TENSOR || kn_tensor_numel(c) != 1) return NULL;
    bool cond = kn_load_f64(c->data, c->type.dtype, 0) != 0;
    kn_graph *br = kn_attr_graph(cx, n, cond ? "then_branch" : "else_branch");
    if (!br || br->nout != n->nout || br->nin) return NULL;
    for (int j = 0; j < n->nout; j++) {
        kn_value *o = n->out[j], *bo = br->outputs[j];
        if (!o) continue;
        if (kn_graph_is_output(g, o) || o->type.kind != bo->type.kind) {
            kn_node *id = kn_graph_add_node(br, KN_OP_IDENTITY, n->name, 1, &bo, 1, &o);
            id->opset = n->opset;
        } else {
            kn_graph_replace_uses(g, o, bo);
        }
    }
    for (int i = 0; i < br->nnodes; i++) br->nodes[i]->graph = g;
    for (int i = 0; i < br->nvalues; i++) {
        kn_value *v = br->values[i];
        v->graph = g;
        if (g->nvalues == g->cap_values) {
            int nc = g->cap_values ? 2 * g->cap_values : 16;
            kn_value **w = kn_arena_array(g->arena, (size_t)nc, sizeof *w);
            KN_ASSERT(w);
            if (g->nvalues) memcpy(w, g->values, (size_t)g->nvalues * sizeof *w);
            g->values = w;
            g->cap_values = nc;
        }
        g->values[g->nvalues++] = v;
    }
    return br;
}

/* One sweep in order: each node's types are inferred from its inputs as they are now
 * (so constants folded upstream propagate in the same sweep), then the node is folded
 * if it can be, or, for an If on a constant, replaced by the branch it takes. */
static kn_status fold_graph(kn_ctx *cx, kn_graph *g) {
    kn_arena *scratch = kn_arena_create();
    kn_node **src = g->nodes, **dst = NULL;
    int nsrc = g->nnodes, nd = 0, cap = 0, i = 0;
    kn_status st = KN_OK;
    for (; i < nsrc; i++) {
        kn_node *n = src[i];
        bool folded;
        /* g's node list is the one being swept, so that kn_graph_replace_uses and
         * kn_graph_is_output (which walk from the root) see the nodes of a branch
         * taken earlier in this sweep (or in an enclosing one): a nested If on a
         * constant inside a taken branch is read by nodes that exist only here */
        g->nodes = src;
        g->nnodes = g->cap_nodes = nsrc;
        if ((st = kn_infer_node(cx, n, scratch))) break;
        kn_graph *br = take_branch(cx, g, n);
        if ((st = cx->status)) break;
        if (br) { /* continue with the branch's nodes, then the rest */
            kn_node **rest =
                kn_arena_array(g->arena, (size_t)(br->nnodes + nsrc - i), sizeof *rest);
            KN_ASSERT(rest);
            if (br->nnodes) memcpy(rest, br->nodes, (size_t)br->nnodes * sizeof *rest);
            memcpy(rest + br->nnodes, src + i + 1, (size_t)(nsrc - i - 1) * sizeof *rest);
            nsrc = br->nnodes + nsrc - i - 1;
            src = rest;
            br->nnodes = br->nvalues = br->nout = 0;
            i = -1;
            continue;
        }
        if ((st = kn_fold_node(cx, n, scratch, &folded))) break;
        if (folded) continue;
        push_node(g, &dst, &nd, &cap, n);
        if (kn_op_desc(n->op)->flags & OPF_SUBGRAPH) { /* then its types again */
            if ((st = fold_subgraphs(cx, n)) || (st = kn_infer_node(cx, n, scratch))) {
                i++; /* n is kept already */
                break;
            }
        }
    }
    kn_arena_destroy(scratch);
    for (; i < nsrc; i++) push_node(g, &dst, &nd, &cap, src[i]); /* on failure: the rest */
    g->nodes = dst;
    g->nnodes = nd;
    g->cap_nodes = cap;
    for (int k = 0; k < nd; k++) g->nodes[k]->id = k;
    return st;
}
