/* Static type and shape inference of nodes and graphs.
 *
 * Runs each op's infer on tensors that carry the values' types and, for constants,
 * their data. A node whose inputs have unknown rank gets outputs of unknown rank
 * without calling infer (ops with subgraphs excepted: they handle it), keeping the
 * dtype where the op alone decides it. Subgraph ops (If,
 * Loop, Scan) infer their bodies from their own infer through kn_infer_graph, which
 * is why this lives in ir/ and not in passes/: the shape pass (passes/shape.c) is
 * kn_infer_graph on the root. */
#include "ir/ops.h"

#include <stdio.h>
#include <string.h>

/* The output type of n when an input's rank is unknown (its infer is not called then):
 * rank unknown, and the dtype where the op alone says it, so dtypes survive a value of
 * unknown rank (Shape and Size keep their rank too). */
static kn_type unknown_rank_out(const kn_node *n, kn_tensor *const *in) {
    kn_dtype in0 = n->nin > 0 && in[0] ? in[0]->type.dtype : KN_UNDEF, t = KN_UNDEF;
    switch (n->op) {
    case KN_OP_SHAPE: {
        int64_t one = -1;
        return kn_type_make(KN_I64, 1, &one);
    }
    case KN_OP_SIZE: return kn_type_scalar(KN_I64);
    case KN_OP_NONZERO:
    case KN_OP_ARGMAX:
    case KN_OP_ARGMIN: t = KN_I64; break;
    case KN_OP_EQUAL:
    case KN_OP_LESS:
    case KN_OP_LESSOREQUAL:
    case KN_OP_GREATER:
    case KN_OP_GREATEROREQUAL:
    case KN_OP_ISNAN:
    case KN_OP_ISINF:
    case KN_OP_NOT:
    case KN_OP_AND:
    case KN_OP_OR:
    case KN_OP_XOR: t = KN_BOOL; break;
    case KN_OP_CAST: {
        const kn_attr *to = kn_node_attr(n, "to");
        if (to && to->kind == KN_ATTR_INT && kn_dtype_valid((int)to->i)) t = (kn_dtype)to->i;
        break;
    }
    case KN_OP_CASTLIKE: t = n->nin > 1 && in[1] ? in[1]->type.dtype : KN_UNDEF; break;
    case KN_OP_WHERE: t = n->nin > 1 && in[1] ? in[1]->type.dtype : KN_UNDEF; break;
    /* data movement and math that keep input 0's dtype */
    case KN_OP_UNSQUEEZE:
    case KN_OP_SQUEEZE:
    case KN_OP_RESHAPE:
    case KN_OP_TRANSPOSE:
    case KN_OP_FLATTEN:
    case KN_OP_CONCAT:
    case KN_OP_SLICE:
    case KN_OP_GATHER:
    case KN_OP_GATHERELEMENTS:
    case KN_OP_GATHERND:
    case KN_OP_EXPAND:
    case KN_OP_TILE:
    case KN_OP_PAD:
    case KN_OP_SPLIT:
    case KN_OP_DEPTHTOSPACE:
    case KN_OP_SPACETODEPTH:
    case KN_OP_TRILU:
    case KN_OP_COMPRESS:
    case KN_OP_REDUCEMAX:
    case KN_OP_REDUCEMIN:
    case KN_OP_REDUCEMEAN:
    case KN_OP_REDUCESUM:
    case KN_OP_REDUCEPROD:
    case KN_OP_SOFTMAX:
    case KN_OP_LOGSOFTMAX:
    case KN_OP_MATMUL:
    case KN_OP_GEMM:
    case KN_OP_CONV:
    case KN_OP_MAXPOOL:
    case KN_OP_AVERAGEPOOL:
    case KN_OP_RESIZE: t = in0; break;
    default:
        if (kn_op_desc(n->op)->flags & OPF_ELEMWISE) t = in0; /* the rest of them */
        break;
    }
    return kn_type_unknown(t);
}

kn_status kn_infer_node(kn_ctx *cx, kn_node *n, kn_arena *a) {
    const kn_opdesc *d = kn_op_desc(n->op);
    /* zeroed up to max_in: omitted trailing optional inputs read as NULL */
    int cap = n->nin > d->max_in ? n->nin : d->max_in;
    kn_tensor **in = kn_arena_array(a, (size_t)cap + 1, sizeof *in);
    kn_type *out = kn_arena_array(a, (size_t)n->nout + 1, sizeof *out);
    bool unknown = false;
    for (int k = 0; k < n->nin; k++) {
        kn_value *v = n->in[k];
        if (!v) continue;
        if (v->constant) {
            in[k] = v->constant;
        } else {
            in[k] = kn_tensor_typed(a, &v->type);
            if (v->type.kind == KN_KIND_TENSOR && v->type.rank < 0) unknown = true;
        }
    }
    for (int j = 0; j < n->nout; j++) out[j] = kn_type_unknown(KN_UNDEF), out[j].rank = 0;
    if (unknown && !(d->flags & OPF_SUBGRAPH)) {
        kn_type t = unknown_rank_out(n, in);
        for (int j = 0; j < n->nout; j++)
            if (n->out[j])
                n->out[j]->type = n->op == KN_OP_SPLIT || j == 0 ? t : kn_type_unknown(KN_UNDEF);
        return KN_OK;
    }
    if (kn_op_infer(cx, n, in, out) || kn_failed(cx)) return cx->status ? cx->status : KN_EINVAL;
    /* dims each valid whose product is not (fuzz_codegen: a Conv padded by 2^62 rows) */
    for (int j = 0; j < n->nout; j++) {
        bool known = out[j].kind == KN_KIND_TENSOR && out[j].rank > 0;
        for (int i = 0; known && i < out[j].rank; i++) known = out[j].dims[i] >= 0;
        if (known && kn_type_numel(&out[j]) < 0) {
            char buf[256];
            return kn_diag(cx, n, KN_EINVAL,
                           "output %d of shape %s: product of dimensions overflows", j,
                           kn_type_str(&out[j], buf, sizeof buf));
        }
    }
    for (int j = 0; j < n->nout; j++)
        if (n->out[j]) n->out[j]->type = out[j];
    return KN_OK;
}

/* The value the unknown shape of v comes from: walking producers through their first
 * input of unknown shape; chain[0..*n) gets the nodes on the way (v's producer last). */
static const kn_value *unknown_origin(const kn_value *v, const kn_node **chain, int *n, int cap) {
    for (int steps = 0; steps < 100000; steps++) {
        const kn_node *p = v->producer;
        if (!p) return v;
        const kn_value *next = NULL;
        for (int k = 0; k < p->nin && !next; k++) {
            const kn_value *u = p->in[k];
            if (u && u->type.kind == KN_KIND_TENSOR && !kn_type_static(&u->type)) next = u;
        }
        if (*n < cap) {
            memmove(chain + 1, chain, (size_t)*n * sizeof *chain);
            chain[0] = p;
            (*n)++;
        } else {
            memmove(chain + 1, chain, (size_t)(cap - 1) * sizeof *chain);
            chain[0] = p;
        }
        if (!next) return v; /* p's inputs are all known: p is where it became unknown */
        v = next;
    }
    return v;
}

void kn_shape_why(const kn_value *v, char *buf, size_t cap) {
    const kn_node *chain[6];
    int n = 0;
    const kn_value *o = unknown_origin(v, chain, &n, 6);
    char ty[128];
    size_t len = 0;
    buf[0] = 0;
    if (!o->producer) {
        snprintf(buf, cap, "it comes from %s '%s' (%s)",
                 o->flags & KN_VALUE_INPUT ? "graph input" : "the outer value", o->name,
                 kn_type_str(&o->type, ty, sizeof ty));
    } else {
        const kn_node *p = o->producer;
        bool data = kn_op_desc(p->op)->flags & (OPF_SHAPE_FROM_DATA | OPF_SUBGRAPH);
        len = (size_t)snprintf(buf, cap, "it first becomes unknown at node '%s' (%s), %s",
                               p->name[0] ? p->name : "<unnamed>", p->op_type,
                               data ? "whose output shape depends on the values of its inputs"
                                    : "although its inputs' shapes are known");
    }
    if (n > 1 && len < cap) {
        len += (size_t)snprintf(buf + len, cap - len, "; then");
        for (int i = 1; i < n && len < cap; i++)
            len += (size_t)snprintf(buf + len, cap - len, " %s'%s' (%s)", i > 1 ? "-> " : "",
                                    chain[i]->name[0] ? chain[i]->name : "<unnamed>",
                                    chain[i]->op_type);
    }
}

/* Whether the declared type h contradicts the inferred type t: both know the dtype, the
 * rank or a dim, and they differ. */
static bool hint_disagrees(const kn_type *h, const kn_type *t) {
    bool t_unknown = t->kind == KN_KIND_TENSOR && t->dtype == KN_UNDEF && t->rank < 0;
    bool h_unknown = h->kind == KN_KIND_TENSOR && h->dtype == KN_UNDEF && h->rank < 0;
    if (t_unknown || h_unknown) return false; /* nothing known to disagree with */
    if (h->kind != t->kind) return true;
    if (h->dtype != KN_UNDEF && t->dtype != KN_UNDEF && h->dtype != t->dtype) return true;
    if (h->rank < 0 || t->rank < 0) return false;
    if (h->rank != t->rank) return true;
    for (int i = 0; i < h->rank; i++)
        if (h->dims[i] >= 0 && t->dims[i] >= 0 && h->dims[i] != t->dims[i]) return true;
    return false;
}

/* Warns, once per model, about each declared type (value_info, graph outputs) that the
 * inferred types contradict, as ONNX Runtime does; kiln uses the inferred ones. The
 * check waits for a context that reports warnings (scratch inference runs do not). */
static void check_hints(kn_ctx *cx, kn_graph *g) {
    if (!cx->on_warning) return;
    for (int i = 0; i < g->nhints; i++) {
        const kn_type_hint *h = &g->hints[i];
        if (!hint_disagrees(&h->type, &h->v->type)) continue;
        char a[256], b[256];
        kn_warn(cx, h->v->producer,
                "the model declares '%s' as %s (value_info or graph output), but shape "
                "inference gives %s; kiln uses the inferred type",
                h->v->name, kn_type_str(&h->type, a, sizeof a),
                kn_type_str(&h->v->type, b, sizeof b));
    }
    g->nhints = 0;
}

kn_status kn_infer_graph(kn_ctx *cx, kn_graph *g) {
    kn_arena *scratch = kn_arena_create();
    kn_status st = KN_OK;
    for (int i = 0; i < g->nnodes && !st; i++) st = kn_infer_node(cx, g->nodes[i], scratch);
    kn_arena_destroy(scratch);
    if (!st && !g->parent) check_hints(cx, g);
    return st;
}
