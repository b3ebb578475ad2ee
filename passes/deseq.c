/* Sequences and optionals to compile-time lists of tensors, for code generation.
 * requires: shape, fold (input structures expanded); breaks: nothing (re-runs them).
 *
 * A partial evaluator over the graph: each sequence or optional value is given a
 * compile-time structure (ds_val: a list of tensor values, or an optional holding
 * nothing or one value), and each node is re-emitted into its graph:
 *  - sequence and optional ops only move structure (SequenceAt's output is the
 *    element's tensor value, SequenceLength a constant); ConcatFromSequence becomes
 *    Concat (after Reshapes for new_axis), SplitToSequence one Slice per piece;
 *  - SequenceMap and Loops that carry sequences are unrolled: their bodies are
 *    emitted once per iteration with fresh values (the iteration number a constant);
 *    an If whose condition is a constant is inlined;
 *  - every other node is kept (its inputs remapped; bodies of kept If/Loop/Scan
 *    nodes are processed in place).
 * Each emitted node is inferred and folded at once, so that positions, trip counts
 * and conditions computed inside unrolled bodies are constants when read. Where one
 * is not, the length depends on run-time data and the node is refused. Values keep
 * their ids: env[] maps the ids the graph had on entry to structures. */
#include "passes/deseq.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DS_MAX_STEPS 100000 /* unrolled iterations per model */

typedef struct ds_val ds_val;
struct ds_val {
    kn_kind kind;
    kn_value *t;    /* tensor */
    int n;          /* sequence: length; optional: 0 empty, 1 holds items[0] */
    ds_val **items; /* sequence: tensors; optional: a tensor or a sequence */
};

typedef struct ds {
    kn_ctx *cx;
    kn_graph *root;
    kn_arena *a;       /* ds_vals, freed at the end */
    kn_arena *scratch; /* inference and folding */
    ds_val **env;      /* by value id, ids < nenv */
    int nenv;
    long steps;
} ds;

static kn_status emit_node(ds *D, kn_node *n, kn_graph *dst, bool clone);

/* ---- structures ---- */

static ds_val *new_val(ds *D, kn_kind kind, int n) {
    ds_val *x = kn_arena_alloc(D->a, sizeof *x);
    x->kind = kind;
    x->n = n;
    x->items = kn_arena_array(D->a, (size_t)n + 1, sizeof *x->items);
    KN_ASSERT(x && x->items);
    return x;
}

static ds_val *tval(ds *D, kn_value *v) {
    ds_val *x = new_val(D, KN_KIND_TENSOR, 0);
    x->t = v;
    return x;
}

/* A new constant value of the root graph. */
static kn_value *cval(ds *D, kn_tensor *t) {
    kn_value *v = kn_graph_add_value(D->root, "", &t->type);
    v->constant = t;
    return v;
}

static kn_value *cval_i64s(ds *D, kn_dtype dt, int n, const int64_t *v) {
    int64_t dims[1] = {n};
    kn_tensor *t = kn_tensor_make(D->root->arena, dt, n < 0 ? 0 : 1, dims);
    KN_ASSERT(t);
    for (int i = 0; i < (n < 0 ? 1 : n); i++) kn_store_i64(t->data, dt, (size_t)i, v[i]);
    return cval(D, t);
}

static kn_value *cval_scalar(ds *D, kn_dtype dt, int64_t v) {
    return cval_i64s(D, dt, -1, &v);
}

static ds_val *from_constant(ds *D, kn_tensor *t) {
    if (t->type.kind == KN_KIND_TENSOR) return tval(D, cval(D, t));
    bool opt = t->type.kind == KN_KIND_OPTIONAL;
    int n = opt ? (t->nitems > 0 && t->items[0]) : t->nitems;
    ds_val *x = new_val(D, t->type.kind, n);
    for (int i = 0; i < n; i++) x->items[i] = from_constant(D, t->items[i]);
    return x;
}

static void set(ds *D, const kn_value *v, ds_val *x) {
    if (v && v->id < D->nenv) D->env[v->id] = x;
}

/* The structure of v as seen by node n (NULL after reporting). */
static ds_val *get(ds *D, const kn_node *n, kn_value *v) {
    if (!v) {
        kn_diag(D->cx, n, KN_EINVAL, "a required input is missing");
        return NULL;
    }
    if (v->id < D->nenv && D->env[v->id]) return D->env[v->id];
    ds_val *x;
    if (v->type.kind == KN_KIND_TENSOR) {
        x = tval(D, v);
    } else if (v->constant) {
        x = from_constant(D, v->constant);
    } else if (v->flags & KN_VALUE_INPUT) {
        const char *opt = kn_hint_text(D->cx, KN_HINT_LENGTH_OPT);
        const char *kind = v->type.kind == KN_KIND_SEQUENCE ? "sequence" : "optional";
        if (opt[0])
            kn_diag(D->cx, NULL, KN_EUNSUPPORTED,
                    "input '%s' is a %s: compiled code needs its length (%s %s=N)", v->name, kind,
                    opt, v->name);
        else
            kn_diag(D->cx, NULL, KN_EUNSUPPORTED,
                    "input '%s' is a %s: compiled code needs its length (%s)", v->name, kind,
                    kn_hint_text(D->cx, KN_HINT_LENGTH));
        return NULL;
    } else {
        kn_diag(D->cx, n, KN_EUNSUPPORTED,
                "the structure of '%s' is not known at compile time (it depends on run-time "
                "data)",
                v->name);
        return NULL;
    }
    set(D, v, x);
    return x;
}

/* Value v, read by n, as a tensor value (NULL after reporting). */
static kn_value *tensor_of(ds *D, const kn_node *n, kn_value *v) {
    ds_val *x = get(D, n, v);
    if (!x) return NULL;
    if (x->kind != KN_KIND_TENSOR) {
        kn_diag(D->cx, n, KN_EUNSUPPORTED, "'%s' is a sequence or optional, a tensor is needed",
                v->name);
        return NULL;
    }
    return x->t;
}

/* Input k of n as a tensor value (NULL if omitted or after reporting). */
static kn_value *tensor_in(ds *D, const kn_node *n, int k) {
    return k < n->nin && n->in[k] ? tensor_of(D, n, n->in[k]) : NULL;
}

/* Input k of n as a sequence. */
static ds_val *seq_in(ds *D, const kn_node *n, int k) {
    ds_val *x = n->in[k] ? get(D, n, n->in[k]) : NULL;
    if (x && x->kind != KN_KIND_SEQUENCE) {
        kn_diag(D->cx, n, KN_EINVAL, "input %d must be a sequence", k);
        return NULL;
    }
    if (!x && !kn_failed(D->cx)) kn_diag(D->cx, n, KN_EINVAL, "input %d is required", k);
    return x;
}

/* The compile-time value of tensor input k, which decides a sequence's `what`
 * (NULL after reporting it as run-time data). */
static kn_tensor *const_in(ds *D, const kn_node *n, int k, const char *what) {
    kn_value *v = tensor_in(D, n, k);
    if (!v) return NULL;
    if (!v->constant) {
        kn_diag(D->cx, n, KN_EUNSUPPORTED,
                "the %s of a sequence depends on run-time data: input %d ('%s') is not "
                "known at compile time (%s)",
                what, k, n->in[k]->name, kn_hint_text(D->cx, KN_HINT_BIND));
        return NULL;
    }
    return v->constant;
}

/* ---- emitting nodes ---- */

/* Infers the types of m, just appended to dst, and folds it if it can. */
static kn_status settle(ds *D, kn_node *m, kn_graph *dst) {
    bool folded;
    if (kn_infer_node(D->cx, m, D->scratch) || kn_fold_node(D->cx, m, D->scratch, &folded))
        return D->cx->status;
    if (folded) dst->nnodes--;
    return KN_OK;
}

/* A new node `op` at n's place in dst with one fresh output; returns the output. */
static kn_value *emit_op(ds *D, kn_graph *dst, const kn_node *n, kn_op op, int nin, kn_value **in,
                         int nattr, kn_attr *attrs) {
    kn_value *out = kn_graph_add_value(dst, n->out[0] ? n->out[0]->name : "", NULL);
    kn_node *m = kn_graph_add_node(dst, op, n->name, nin, in, 1, &out);
    m->nattr = nattr;
    m->attrs = attrs;
    return settle(D, m, dst) ? NULL : out;
}

/* v reshaped to dims (rank r). */
static kn_value *reshape(ds *D, kn_graph *dst, const kn_node *n, kn_value *v, int r,
                         const int64_t *dims) {
    kn_value *in[2] = {v, cval_i64s(D, KN_I64, r, dims)};
    return emit_op(D, dst, n, KN_OP_RESHAPE, 2, in, 0, NULL);
}

static kn_status need_static(ds *D, const kn_node *n, const kn_value *v) {
    char buf[128];
    if (kn_type_static(&v->type)) return KN_OK;
    return kn_diag(D->cx, n, KN_EUNSUPPORTED,
                   "element '%s' has shape %s, not known at compile time (%s)", v->name,
                   kn_type_str(&v->type, buf, sizeof buf), kn_hint_text(D->cx, KN_HINT_FIX_SHAPES));
}

/* Concat of the values v[0..cnt) along axis, with a new axis there if new_axis. */
static kn_value *concat(ds *D, kn_graph *dst, const kn_node *n, kn_value **v, int cnt, int64_t axis,
                        bool new_axis) {
    if (cnt == 0) {
        kn_diag(D->cx, n, KN_EUNSUPPORTED, "cannot concatenate an empty sequence");
        return NULL;
    }
    if (need_static(D, n, v[0])) return NULL;
    int ax;
    if (kn_axis(D->cx, n, axis, v[0]->type.rank, new_axis, &ax)) return NULL;
    kn_value **in = kn_arena_array(D->a, (size_t)cnt, sizeof *in);
    KN_ASSERT(in);
    for (int i = 0; i < cnt; i++) {
        in[i] = v[i];
        if (!new_axis) continue;
        int64_t dims[KN_MAX_RANK + 1];
        const kn_type *t = &v[i]->type;
        if (need_static(D, n, v[i]) || t->rank >= KN_MAX_RANK) return NULL;
        for (int d = 0, s = 0; d <= t->rank; d++) dims[d] = d == ax ? 1 : t->dims[s++];
        if (!(in[i] = reshape(D, dst, n, v[i], t->rank + 1, dims))) return NULL;
    }
    kn_attr *at = kn_arena_alloc(D->root->arena, sizeof *at);
    *at = (kn_attr){.name = "axis", .kind = KN_ATTR_INT, .i = ax};
    return emit_op(D, dst, n, KN_OP_CONCAT, cnt, in, 1, at);
}

/* Emits the nodes of src into dst (clones with fresh values when clone). */
static kn_status emit_nodes(ds *D, const kn_graph *src, kn_graph *dst, bool clone) {
    for (int i = 0; i < src->nnodes; i++)
        if (emit_node(D, src->nodes[i], dst, clone)) return D->cx->status;
    return KN_OK;
}

/* Re-emits g's nodes into g itself, then remaps its outputs (a subgraph's). */
static kn_status process_graph(ds *D, kn_graph *g) {
    kn_node **old = g->nodes;
    int nold = g->nnodes;
    g->nodes = NULL;
    g->nnodes = g->cap_nodes = 0;
    for (int i = 0; i < nold; i++)
        if (emit_node(D, old[i], g, false)) return D->cx->status;
    if (!g->parent) return KN_OK;
    for (int j = 0; j < g->nout; j++) {
        ds_val *x = get(D, NULL, g->outputs[j]);
        if (!x) return D->cx->status;
        if (x->kind == KN_KIND_TENSOR) g->outputs[j] = x->t;
    }
    return KN_OK;
}

static bool has_subgraph(const kn_node *n) {
    return kn_op_desc(n->op)->flags & OPF_SUBGRAPH;
}

/* Any node, its inputs remapped: a clone with fresh outputs, or n itself re-added. */
static kn_status emit_generic(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    if (clone && has_subgraph(n))
        return kn_diag(D->cx, n, KN_EUNSUPPORTED,
                       "this operator inside an unrolled Loop or SequenceMap body is not "
                       "supported by code generation");
    kn_value **in = kn_arena_array(D->a, (size_t)n->nin + 1, sizeof *in);
    kn_value **out = kn_arena_array(D->a, (size_t)n->nout + 1, sizeof *out);
    KN_ASSERT(in && out);
    for (int k = 0; k < n->nin; k++)
        if (n->in[k] && !(in[k] = tensor_in(D, n, k))) return D->cx->status;
    for (int j = 0; j < n->nout; j++) {
        kn_value *v = n->out[j];
        out[j] = !v || !clone ? v : kn_graph_add_value(dst, v->name, &v->type);
        if (clone && v) set(D, v, tval(D, out[j]));
    }
    kn_node *m = kn_graph_add_node(dst, n->op, n->name, n->nin, in, n->nout, out);
    m->op_type = n->op_type;
    m->domain = n->domain;
    m->opset = n->opset;
    m->nattr = n->nattr;
    m->attrs = n->attrs;
    for (int k = 0; k < n->nattr; k++) {
        kn_attr *a = &n->attrs[k];
        if (a->kind == KN_ATTR_GRAPH && process_graph(D, a->g)) return D->cx->status;
        for (int j = 0; a->kind == KN_ATTR_GRAPHS && j < a->n; j++)
            if (process_graph(D, a->graphs[j])) return D->cx->status;
    }
    return settle(D, m, dst);
}

/* ---- the sequence and optional ops ---- */

typedef kn_status (*ds_fn)(ds *D, kn_node *n, kn_graph *dst, bool clone);

static kn_status op_seq_empty(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    set(D, n->out[0], new_val(D, KN_KIND_SEQUENCE, 0));
    return KN_OK;
}

static kn_status op_seq_construct(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *s = new_val(D, KN_KIND_SEQUENCE, n->nin);
    for (int k = 0; k < n->nin; k++) {
        kn_value *v = tensor_in(D, n, k);
        if (!v) return kn_failed(D->cx) ? D->cx->status : kn_diag(D->cx, n, KN_EINVAL, "no input");
        s->items[k] = tval(D, v);
    }
    set(D, n->out[0], s);
    return KN_OK;
}

/* Position input k of n for a sequence of len (extra=1: an insert position); the
 * default def when omitted. */
static kn_status position(ds *D, const kn_node *n, int k, int len, int extra, int def, int *pos) {
    *pos = def;
    if (k >= n->nin || !n->in[k]) return KN_OK;
    kn_tensor *t = const_in(D, n, k, "position");
    return t ? kn_seq_pos(D->cx, n, t, k, len, extra, pos) : D->cx->status;
}

static kn_status op_seq_insert(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *s = seq_in(D, n, 0);
    kn_value *t = s ? tensor_in(D, n, 1) : NULL;
    int pos;
    if (!t || position(D, n, 2, s->n, 1, s->n, &pos)) return D->cx->status;
    ds_val *r = new_val(D, KN_KIND_SEQUENCE, s->n + 1);
    for (int i = 0, k = 0; i <= s->n; i++) r->items[i] = i == pos ? tval(D, t) : s->items[k++];
    set(D, n->out[0], r);
    return KN_OK;
}

static kn_status op_seq_erase(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *s = seq_in(D, n, 0);
    int pos;
    if (!s) return D->cx->status;
    if (!s->n) return kn_diag(D->cx, n, KN_EINVAL, "cannot erase from an empty sequence");
    if (position(D, n, 1, s->n, 0, s->n - 1, &pos)) return D->cx->status;
    ds_val *r = new_val(D, KN_KIND_SEQUENCE, s->n - 1);
    for (int i = 0, k = 0; i < s->n; i++)
        if (i != pos) r->items[k++] = s->items[i];
    set(D, n->out[0], r);
    return KN_OK;
}

static kn_status op_seq_at(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *s = seq_in(D, n, 0);
    int pos;
    if (!s) return D->cx->status;
    if (n->nin < 2 || !n->in[1]) return kn_diag(D->cx, n, KN_EINVAL, "input 1 is required");
    if (position(D, n, 1, s->n, 0, 0, &pos)) return D->cx->status;
    set(D, n->out[0], s->items[pos]);
    return KN_OK;
}

static kn_status op_seq_length(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *s = seq_in(D, n, 0);
    if (!s) return D->cx->status;
    set(D, n->out[0], tval(D, cval_scalar(D, KN_I64, s->n)));
    return KN_OK;
}

static kn_status op_concat_from_seq(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)clone;
    ds_val *s = seq_in(D, n, 0);
    int64_t axis = kn_attr_int(D->cx, n, "axis", 0),
            new_axis = kn_attr_int(D->cx, n, "new_axis", 0);
    if (!s || kn_failed(D->cx)) return D->cx->status;
    kn_value **v = kn_arena_array(D->a, (size_t)s->n + 1, sizeof *v);
    KN_ASSERT(v);
    for (int i = 0; i < s->n; i++) v[i] = s->items[i]->t;
    kn_value *r = concat(D, dst, n, v, s->n, axis, new_axis != 0);
    if (!r) return D->cx->status;
    set(D, n->out[0], tval(D, r));
    return KN_OK;
}

/* One piece of SplitToSequence: x[.., start:start+size, ..] along axis, the axis
 * dropped when squeeze. */
static kn_value *split_piece(ds *D, kn_graph *dst, const kn_node *n, kn_value *x, int axis,
                             int64_t start, int64_t size, bool squeeze) {
    int64_t s = start, e = start + size, a = axis;
    kn_value *in[4] = {x, cval_i64s(D, KN_I64, 1, &s), cval_i64s(D, KN_I64, 1, &e),
                       cval_i64s(D, KN_I64, 1, &a)};
    kn_value *y = emit_op(D, dst, n, KN_OP_SLICE, 4, in, 0, NULL);
    if (!y || !squeeze) return y;
    int64_t dims[KN_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->type.rank; d++)
        if (d != axis) dims[r++] = x->type.dims[d];
    return reshape(D, dst, n, y, r, dims);
}

static kn_status op_split_to_seq(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)clone;
    kn_value *x = tensor_in(D, n, 0);
    if (!x || need_static(D, n, x)) return D->cx->status;
    kn_tensor *in[2] = {kn_tensor_typed(D->scratch, &x->type), NULL};
    if (n->nin > 1 && n->in[1] && !(in[1] = const_in(D, n, 1, "split"))) return D->cx->status;
    int axis;
    int64_t *sizes, cnt;
    bool squeeze;
    if (kn_split_plan(D->cx, n, in, D->scratch, &axis, &sizes, &cnt, &squeeze))
        return D->cx->status;
    if (cnt > DS_MAX_STEPS) return kn_diag(D->cx, n, KN_ELIMIT, "too many pieces");
    ds_val *s = new_val(D, KN_KIND_SEQUENCE, (int)cnt);
    for (int64_t i = 0, start = 0; i < cnt; start += sizes[i++]) {
        kn_value *y = split_piece(D, dst, n, x, axis, start, sizes[i], squeeze);
        if (!y) return D->cx->status;
        s->items[i] = tval(D, y);
    }
    set(D, n->out[0], s);
    return KN_OK;
}

static kn_status op_optional(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *x = n->nin > 0 && n->in[0] ? get(D, n, n->in[0]) : NULL;
    if (kn_failed(D->cx)) return D->cx->status;
    ds_val *o = new_val(D, KN_KIND_OPTIONAL, x ? 1 : 0);
    o->items[0] = x;
    set(D, n->out[0], o);
    return KN_OK;
}

static kn_status op_opt_has(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *x = n->nin > 0 && n->in[0] ? get(D, n, n->in[0]) : NULL;
    if (kn_failed(D->cx)) return D->cx->status;
    bool has = x && (x->kind != KN_KIND_OPTIONAL || x->n);
    set(D, n->out[0], tval(D, cval_scalar(D, KN_BOOL, has)));
    return KN_OK;
}

static kn_status op_opt_get(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)dst, (void)clone;
    ds_val *x = n->in[0] ? get(D, n, n->in[0]) : NULL;
    if (!x) return kn_failed(D->cx) ? D->cx->status : kn_diag(D->cx, n, KN_EINVAL, "no input");
    if (x->kind == KN_KIND_OPTIONAL && !x->n)
        return kn_diag(D->cx, n, KN_EINVAL, "the optional input is empty");
    set(D, n->out[0], x->kind == KN_KIND_OPTIONAL ? x->items[0] : x);
    return KN_OK;
}

static kn_status op_identity(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    ds_val *x = get(D, n, n->in[0]);
    if (!x) return D->cx->status;
    if (x->kind == KN_KIND_TENSOR) return emit_generic(D, n, dst, clone);
    set(D, n->out[0], x);
    return KN_OK;
}

static kn_status step(ds *D, const kn_node *n) {
    if (++D->steps <= DS_MAX_STEPS) return KN_OK;
    return kn_diag(D->cx, n, KN_ELIMIT, "more than %d unrolled iterations", DS_MAX_STEPS);
}

static kn_status op_seq_map(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    (void)clone;
    kn_graph *body = kn_attr_graph(D->cx, n, "body");
    ds_val *s0 = seq_in(D, n, 0);
    if (!s0 || !body)
        return kn_failed(D->cx) ? D->cx->status : kn_diag(D->cx, n, KN_EINVAL, "needs a body");
    if (body->nin != n->nin || body->nout != n->nout)
        return kn_diag(D->cx, n, KN_EINVAL, "body inputs/outputs do not match the node's");
    ds_val **in = kn_arena_array(D->a, (size_t)n->nin + 1, sizeof *in);
    ds_val **out = kn_arena_array(D->a, (size_t)n->nout + 1, sizeof *out);
    KN_ASSERT(in && out);
    for (int i = 0; i < n->nin; i++) {
        if (!n->in[i] || !(in[i] = get(D, n, n->in[i])))
            return kn_failed(D->cx) ? D->cx->status
                                    : kn_diag(D->cx, n, KN_EINVAL, "input %d is required", i);
        if (in[i]->kind == KN_KIND_SEQUENCE && in[i]->n != s0->n)
            return kn_diag(D->cx, n, KN_EINVAL, "input %d has %d items, input 0 has %d", i,
                           in[i]->n, s0->n);
    }
    for (int j = 0; j < n->nout; j++) out[j] = new_val(D, KN_KIND_SEQUENCE, s0->n);
    for (int t = 0; t < s0->n; t++) {
        if (step(D, n)) return D->cx->status;
        for (int i = 0; i < n->nin; i++)
            set(D, body->inputs[i], in[i]->kind == KN_KIND_SEQUENCE ? in[i]->items[t] : in[i]);
        if (emit_nodes(D, body, dst, true)) return D->cx->status;
        for (int j = 0; j < n->nout; j++) {
            ds_val *y = get(D, n, body->outputs[j]);
            if (!y) return D->cx->status;
            if (y->kind != KN_KIND_TENSOR)
                return kn_diag(D->cx, n, KN_EINVAL, "body output %d must be a tensor", j);
            out[j]->items[t] = y;
        }
    }
    for (int j = 0; j < n->nout; j++) set(D, n->out[j], out[j]);
    return KN_OK;
}

/* Whether n reads or writes a sequence or optional. */
static bool touches_seq(const kn_node *n, int from) {
    for (int k = from; k < n->nin; k++)
        if (n->in[k] && n->in[k]->type.kind != KN_KIND_TENSOR) return true;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j] && n->out[j]->type.kind != KN_KIND_TENSOR) return true;
    return false;
}

/* The compile-time truth of condition input k (absent: true). */
static kn_status cond_in(ds *D, const kn_node *n, int k, bool *c) {
    *c = true;
    if (k >= n->nin || !n->in[k]) return KN_OK;
    kn_tensor *t = const_in(D, n, k, "length");
    if (!t) return D->cx->status;
    *c = kn_load_i64(t->data, t->type.dtype, 0) != 0;
    return KN_OK;
}

static kn_status op_if(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    kn_value *c = tensor_in(D, n, 0);
    if (!c) return kn_failed(D->cx) ? D->cx->status : kn_diag(D->cx, n, KN_EINVAL, "no condition");
    if (!c->constant && !touches_seq(n, 0)) return emit_generic(D, n, dst, clone);
    bool cond;
    if (cond_in(D, n, 0, &cond)) return D->cx->status;
    kn_graph *br = kn_attr_graph(D->cx, n, cond ? "then_branch" : "else_branch");
    if (!br || br->nout != n->nout)
        return kn_diag(D->cx, n, KN_EINVAL, "needs then_branch and else_branch");
    if (emit_nodes(D, br, dst, true)) return D->cx->status;
    for (int j = 0; j < n->nout; j++) {
        ds_val *y = get(D, n, br->outputs[j]);
        if (!y) return D->cx->status;
        set(D, n->out[j], y);
    }
    return KN_OK;
}

/* Binds the body inputs of iteration i of an unrolled Loop. */
static void loop_inputs(ds *D, const kn_graph *body, int64_t i, bool cond, ds_val *const *carried,
                        int nc) {
    set(D, body->inputs[0], tval(D, cval_scalar(D, KN_I64, i)));
    set(D, body->inputs[1], tval(D, cval_scalar(D, KN_BOOL, cond)));
    for (int j = 0; j < nc; j++) set(D, body->inputs[2 + j], carried[j]);
}

/* Stacks the per-iteration values of scan output k along a new axis 0. */
static kn_status loop_scans(ds *D, kn_node *n, kn_graph *dst, int nc, kn_value ***scans,
                            int64_t iters) {
    for (int k = 0; nc + k < n->nout; k++) {
        if (!n->out[nc + k]) continue;
        kn_value *r = concat(D, dst, n, scans[k], (int)iters, 0, true);
        if (!r) return D->cx->status;
        set(D, n->out[nc + k], tval(D, r));
    }
    return KN_OK;
}

/* for (i = 0; i < M && cond; i++) body, unrolled. */
static kn_status op_loop(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    if (!touches_seq(n, 2)) return emit_generic(D, n, dst, clone);
    kn_graph *body = kn_attr_graph(D->cx, n, "body");
    int nc = n->nin - 2, ns = n->nout - nc;
    if (!body || nc < 0 || ns < 0 || body->nin != 2 + nc || body->nout != 1 + nc + ns)
        return kn_diag(D->cx, n, KN_EINVAL, "malformed Loop");
    int64_t m = INT64_MAX;
    bool cond;
    if (n->in[0]) {
        kn_tensor *t = const_in(D, n, 0, "length");
        if (!t) return D->cx->status;
        m = kn_load_i64(t->data, t->type.dtype, 0);
    }
    if (cond_in(D, n, 1, &cond)) return D->cx->status;
    ds_val **carried = kn_arena_array(D->a, (size_t)nc + 1, sizeof *carried);
    kn_value ***scans = kn_arena_array(D->a, (size_t)ns + 1, sizeof *scans);
    KN_ASSERT(carried && scans);
    for (int j = 0; j < nc; j++)
        if (!(carried[j] = get(D, n, n->in[2 + j]))) return D->cx->status;
    int64_t i = 0;
    for (; i < m && cond; i++) {
        if (step(D, n)) return D->cx->status;
        loop_inputs(D, body, i, cond, carried, nc);
        if (emit_nodes(D, body, dst, true)) return D->cx->status;
        kn_value *c = tensor_of(D, n, body->outputs[0]);
        if (!c) return D->cx->status;
        if (!c->constant)
            return kn_diag(D->cx, n, KN_EUNSUPPORTED,
                           "the length of a sequence depends on run-time data: the loop "
                           "condition is computed from run-time values");
        cond = kn_load_i64(c->constant->data, c->constant->type.dtype, 0) != 0;
        for (int j = 0; j < nc; j++)
            if (!(carried[j] = get(D, n, body->outputs[1 + j]))) return D->cx->status;
        for (int k = 0; k < ns; k++) {
            kn_value **v = kn_arena_array(D->a, (size_t)i + 1, sizeof *v);
            KN_ASSERT(v);
            if (i) memcpy(v, scans[k], (size_t)i * sizeof *v);
            if (!(v[i] = tensor_of(D, n, body->outputs[1 + nc + k]))) return D->cx->status;
            scans[k] = v;
        }
    }
    for (int j = 0; j < nc; j++) set(D, n->out[j], carried[j]);
    return loop_scans(D, n, dst, nc, scans, i);
}

static const struct {
    kn_op op;
    ds_fn fn;
} ds_ops[] = {
    {KN_OP_SEQUENCEEMPTY, op_seq_empty},
    {KN_OP_SEQUENCECONSTRUCT, op_seq_construct},
    {KN_OP_SEQUENCEINSERT, op_seq_insert},
    {KN_OP_SEQUENCEERASE, op_seq_erase},
    {KN_OP_SEQUENCEAT, op_seq_at},
    {KN_OP_SEQUENCELENGTH, op_seq_length},
    {KN_OP_CONCATFROMSEQUENCE, op_concat_from_seq},
    {KN_OP_SPLITTOSEQUENCE, op_split_to_seq},
    {KN_OP_SEQUENCEMAP, op_seq_map},
    {KN_OP_OPTIONAL, op_optional},
    {KN_OP_OPTIONALHASELEMENT, op_opt_has},
    {KN_OP_OPTIONALGETELEMENT, op_opt_get},
    {KN_OP_IDENTITY, op_identity},
    {KN_OP_IF, op_if},
    {KN_OP_LOOP, op_loop},
};

static kn_status emit_node(ds *D, kn_node *n, kn_graph *dst, bool clone) {
    for (size_t i = 0; i < sizeof ds_ops / sizeof *ds_ops; i++)
        if (ds_ops[i].op == n->op) return ds_ops[i].fn(D, n, dst, clone);
    return emit_generic(D, n, dst, clone);
}

/* ---- graph inputs and outputs ---- */

static void add_group(kn_graph *g, const kn_iogroup *grp) {
    kn_iogroup *v = kn_arena_array(g->arena, (size_t)g->ngroups + 1, sizeof *v);
    KN_ASSERT(v);
    if (g->ngroups) memcpy(v, g->groups, (size_t)g->ngroups * sizeof *v);
    v[g->ngroups++] = *grp;
    g->groups = v;
}

/* A graph output named name (NULL: o itself) computing tensor t. */
static kn_value *output_value(kn_graph *g, kn_value *o, const char *name, kn_value *t) {
    if (!name && t == o) return o;
    kn_value *v = o;
    if (name) {
        v = kn_graph_add_value(g, name, &t->type);
    } else {
        o->type = t->type;
        o->constant = NULL;
    }
    v->flags |= KN_VALUE_OUTPUT;
    kn_graph_add_node(g, KN_OP_IDENTITY, "", 1, &t, 1, &v);
    return v;
}

/* Appends the tensor outputs for original output o of structure x to outs. */
static kn_status flatten_output(ds *D, kn_value *o, ds_val *x, kn_value **outs, int *n) {
    if (x->kind == KN_KIND_OPTIONAL) {
        if (!x->n) return KN_OK;
        x = x->items[0];
    }
    if (x->kind == KN_KIND_TENSOR) {
        outs[(*n)++] = output_value(D->root, o, NULL, x->t);
        return KN_OK;
    }
    for (int k = 0; k < x->n; k++) {
        char name[512];
        snprintf(name, sizeof name, "%s_%d", o->name, k);
        if (kn_graph_find_value(D->root, name))
            return kn_diag(D->cx, NULL, KN_EUNSUPPORTED,
                           "cannot name element %d of output '%s': '%s' is taken", k, o->name,
                           name);
        outs[(*n)++] = output_value(D->root, o, name, x->items[k]->t);
    }
    return KN_OK;
}

static int leaves(const ds_val *x) {
    if (x->kind == KN_KIND_TENSOR) return 1;
    int n = 0;
    for (int i = 0; i < x->n; i++) n += leaves(x->items[i]);
    return n;
}

static kn_status finish_outputs(ds *D) {
    kn_graph *g = D->root;
    ds_val **x = kn_arena_array(D->a, (size_t)g->nout + 1, sizeof *x);
    KN_ASSERT(x);
    int total = 0;
    bool any = false;
    for (int i = 0; i < g->nout; i++) {
        if (!(x[i] = get(D, NULL, g->outputs[i]))) return D->cx->status;
        total += leaves(x[i]);
        any |= x[i]->kind != KN_KIND_TENSOR;
    }
    kn_value **outs = kn_arena_array(g->arena, (size_t)total + 1, sizeof *outs);
    KN_ASSERT(outs);
    int n = 0;
    for (int i = 0; i < g->nout; i++) {
        kn_value *o = g->outputs[i];
        kn_iogroup grp = {.name = o->name, .type = o->type, .output = true, .first = n};
        grp.type.kind = x[i]->kind;
        grp.present = x[i]->kind != KN_KIND_OPTIONAL || x[i]->n;
        if (x[i]->kind == KN_KIND_OPTIONAL && x[i]->n) grp.type.elem_kind = x[i]->items[0]->kind;
        o->flags &= ~(unsigned)KN_VALUE_OUTPUT;
        if (flatten_output(D, o, x[i], outs, &n)) return D->cx->status;
        grp.count = n - grp.first;
        if (any) add_group(g, &grp);
    }
    g->outputs = outs;
    g->nout = n;
    return KN_OK;
}

/* Marks the values the nodes of g (and their subgraphs) read. */
static void mark_reads(const kn_graph *g, unsigned char *used) {
    for (int j = 0; j < g->nout; j++) used[g->outputs[j]->id] = 1;
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) used[n->in[k]->id] = 1;
        for (int k = 0; k < n->nattr; k++) {
            const kn_attr *a = &n->attrs[k];
            if (a->kind == KN_ATTR_GRAPH) mark_reads(a->g, used);
            for (int j = 0; a->kind == KN_ATTR_GRAPHS && j < a->n; j++)
                mark_reads(a->graphs[j], used);
        }
    }
}

/* Drops the root nodes whose outputs nothing reads (pieces of a split no one uses):
 * the pass leaves them behind when it turns structure into constants. */
static void drop_dead(kn_graph *g) {
    unsigned char *used = calloc((size_t)kn_graph_value_count(g) + 1, 1);
    KN_ASSERT(used);
    for (int j = 0; j < g->nout; j++) used[g->outputs[j]->id] = 1;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        kn_node *n = g->nodes[i];
        bool live = has_subgraph(n) || (kn_op_desc(n->op)->flags & OPF_RANDOM);
        for (int k = 0; k < n->nout && !live; k++) live = n->out[k] && used[n->out[k]->id];
        if (!live) {
            g->nodes[i] = NULL;
            continue;
        }
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) used[n->in[k]->id] = 1;
        for (int k = 0; k < n->nattr; k++) {
            const kn_attr *a = &n->attrs[k];
            if (a->kind == KN_ATTR_GRAPH) mark_reads(a->g, used);
            for (int j = 0; a->kind == KN_ATTR_GRAPHS && j < a->n; j++)
                mark_reads(a->graphs[j], used);
        }
    }
    int kept = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i]) g->nodes[kept++] = g->nodes[i];
    g->nnodes = kept;
    free(used);
}

/* True if g or a subgraph has a sequence or optional value. */
/* Whether g (or a subgraph) has a sequence or optional value, or an optional op: since
 * opset 18 OptionalHasElement and OptionalGetElement also take a plain tensor (true, and
 * the tensor itself), which only this pass resolves. */
static bool has_seq(const kn_graph *g) {
    for (int i = 0; i < g->nvalues; i++)
        if (g->values[i]->type.kind != KN_KIND_TENSOR) return true;
    for (int i = 0; i < g->nnodes; i++) {
        kn_op op = g->nodes[i]->op;
        if (op == KN_OP_OPTIONALHASELEMENT || op == KN_OP_OPTIONALGETELEMENT) return true;
    }
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nattr; k++) {
            const kn_attr *a = &g->nodes[i]->attrs[k];
            if (a->kind == KN_ATTR_GRAPH && has_seq(a->g)) return true;
            for (int j = 0; a->kind == KN_ATTR_GRAPHS && j < a->n; j++)
                if (has_seq(a->graphs[j])) return true;
        }
    return false;
}

kn_status kn_pass_deseq(kn_ctx *cx, kn_graph *g) {
    if (!has_seq(g)) return KN_OK;
    ds D = {.cx = cx, .root = g, .a = kn_arena_create(), .scratch = kn_arena_create()};
    D.nenv = kn_graph_value_count(g);
    D.env = kn_arena_array(D.a, (size_t)D.nenv + 1, sizeof *D.env);
    KN_ASSERT(D.env);
    kn_status st = process_graph(&D, g);
    if (!st) st = finish_outputs(&D);
    kn_arena_destroy(D.scratch);
    kn_arena_destroy(D.a);
    if (st) return st;
    drop_dead(g);
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->id = i;
    /* the new nodes' types; constant lists fold */
    if (kn_pass_shape(cx, g) || kn_pass_fold(cx, g)) return cx->status;
    return kn_pass_shape(cx, g);
}

bool kn_deseq_structural(const kn_node *n, int k) {
    static const struct {
        kn_op op;
        int input;
    } pos[] = {{KN_OP_SEQUENCEAT, 1},
               {KN_OP_SEQUENCEINSERT, 2},
               {KN_OP_SEQUENCEERASE, 1},
               {KN_OP_SPLITTOSEQUENCE, 1}};
    for (size_t i = 0; i < sizeof pos / sizeof *pos; i++)
        if (pos[i].op == n->op) return pos[i].input == k;
    if (n->op == KN_OP_IF) return k == 0 && touches_seq(n, 1);
    if (n->op == KN_OP_LOOP) return k < 2 && touches_seq(n, 2);
    return false;
}

/* ---- expanding graph inputs ---- */

/* Moves the last cnt nodes of g to its front. */
static void to_front(kn_graph *g, int cnt) {
    kn_node *tmp[4];
    KN_ASSERT(cnt <= 4 && cnt <= g->nnodes);
    memcpy(tmp, g->nodes + g->nnodes - cnt, (size_t)cnt * sizeof *tmp);
    memmove(g->nodes + cnt, g->nodes, (size_t)(g->nnodes - cnt) * sizeof *g->nodes);
    memcpy(g->nodes, tmp, (size_t)cnt * sizeof *tmp);
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->id = i;
}

/* Type of leaf item t of input v: t's own if known, else v's element type. */
static kn_type leaf_type(const kn_value *v, const kn_tensor *t) {
    kn_type ty = t && t->type.rank >= 0 ? t->type : v->type;
    ty.kind = KN_KIND_TENSOR;
    ty.elem_kind = KN_KIND_TENSOR;
    if (!ty.dtype) ty.dtype = v->type.dtype;
    return ty;
}

/* Builds the value of a sequence from tensor inputs made for s's items (names
 * base_0..), appended at *k of ins; returns the sequence value (a constant if empty). */
static kn_value *seq_from_inputs(kn_graph *g, const kn_value *v, const kn_tensor *s, kn_value **ins,
                                 int *k, kn_value *out) {
    kn_type st = v->type;
    st.kind = KN_KIND_SEQUENCE;
    if (!out) out = kn_graph_add_value(g, v->name, &st);
    if (s->nitems <= 0) {
        kn_tensor *c = kn_tensor_typed(g->arena, &st);
        c->nitems = 0;
        out->constant = c;
        return out;
    }
    kn_value **leaf = kn_arena_array(g->arena, (size_t)s->nitems, sizeof *leaf);
    KN_ASSERT(leaf);
    for (int i = 0; i < s->nitems; i++) {
        char name[512];
        snprintf(name, sizeof name, "%s_%d", v->name, i);
        kn_type ty = leaf_type(v, s->items[i]);
        leaf[i] = ins[(*k)++] = kn_graph_add_value(g, name, &ty);
        leaf[i]->flags |= KN_VALUE_INPUT;
    }
    kn_graph_add_node(g, KN_OP_SEQUENCECONSTRUCT, "", s->nitems, leaf, 1, &out);
    return out;
}

/* The tensor inputs (into ins, *k of them) and nodes that make input v per s. */
static kn_status build_input(kn_ctx *cx, kn_graph *g, kn_value *v, const kn_tensor *s,
                             kn_value **ins, int *k) {
    int before = g->nnodes;
    if (v->type.kind == KN_KIND_SEQUENCE) {
        seq_from_inputs(g, v, s, ins, k, v);
    } else if (s->nitems <= 0 || !s->items[0]) {
        kn_tensor *c = kn_tensor_typed(g->arena, &v->type);
        c->nitems = 0;
        v->constant = c;
    } else {
        kn_value *x;
        if (v->type.elem_kind == KN_KIND_SEQUENCE) {
            x = seq_from_inputs(g, v, s->items[0], ins, k, NULL);
        } else {
            kn_type ty = leaf_type(v, s->items[0]);
            x = ins[(*k)++] = kn_graph_add_value(g, v->name, &ty);
            x->flags |= KN_VALUE_INPUT;
        }
        kn_graph_add_node(g, KN_OP_OPTIONAL, "", 1, &x, 1, &v);
    }
    if (kn_failed(cx)) return cx->status;
    to_front(g, g->nnodes - before);
    return KN_OK;
}

static int count_leaves(const kn_tensor *s) {
    if (s->type.kind == KN_KIND_TENSOR) return 1;
    int n = 0;
    for (int i = 0; i < s->nitems; i++)
        if (s->items[i]) n += count_leaves(s->items[i]);
    return n;
}

kn_status kn_deseq_expand_input(kn_ctx *cx, kn_graph *g, int i, const kn_tensor *s) {
    kn_value *v = g->inputs[i];
    if (v->type.kind == KN_KIND_TENSOR) return KN_OK;
    if (s->type.kind != v->type.kind ||
        (s->type.kind == KN_KIND_OPTIONAL && s->nitems > 0 && s->items[0] &&
         s->items[0]->type.kind != v->type.elem_kind))
        return kn_diag(cx, NULL, KN_EINVAL,
                       "input '%s': the value's structure does not match "
                       "its type",
                       v->name);
    int nl = count_leaves(s), k = 0;
    kn_value **ins = kn_arena_array(g->arena, (size_t)(g->nin + nl) + 1, sizeof *ins);
    KN_ASSERT(ins);
    memcpy(ins, g->inputs, (size_t)i * sizeof *ins);
    k = i;
    if (build_input(cx, g, v, s, ins, &k)) return cx->status;
    memcpy(ins + k, g->inputs + i + 1, (size_t)(g->nin - i - 1) * sizeof *ins);
    kn_iogroup grp = {.name = v->name, .type = v->type, .first = i, .count = k - i};
    grp.present = v->type.kind != KN_KIND_OPTIONAL || (s->nitems > 0 && s->items[0]);
    add_group(g, &grp);
    v->flags &= ~(unsigned)KN_VALUE_INPUT;
    g->nin += k - i - 1;
    g->inputs = ins;
    return KN_OK;
}

kn_status kn_deseq_expand_inputs(kn_ctx *cx, kn_graph *g, kn_tensor *const *in) {
    for (int i = g->nin - 1; i >= 0; i--)
        if (kn_deseq_expand_input(cx, g, i, in[i])) return cx->status;
    return KN_OK;
}

kn_status kn_deseq_expand_length(kn_ctx *cx, kn_graph *g, const char *spec) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return kn_diag(cx, NULL, KN_EINVAL, "expected --length NAME=N, got '%s'", spec);
    char *end;
    long long len = strtoll(eq + 1, &end, 10);
    bool none = !strcmp(eq + 1, "none");
    if (!none && (end == eq + 1 || *end || len < 0 || len > DS_MAX_STEPS))
        return kn_diag(cx, NULL, KN_EINVAL, "bad length in --length '%s'", spec);
    for (int i = 0; i < g->nin; i++) {
        kn_value *v = g->inputs[i];
        if (strlen(v->name) != (size_t)(eq - spec) || strncmp(v->name, spec, (size_t)(eq - spec)))
            continue;
        bool seq = v->type.kind == KN_KIND_SEQUENCE ||
                   (v->type.kind == KN_KIND_OPTIONAL && v->type.elem_kind == KN_KIND_SEQUENCE);
        if (v->type.kind == KN_KIND_TENSOR || (none && v->type.kind != KN_KIND_OPTIONAL) ||
            (!none && !seq && len != 1))
            return kn_diag(cx, NULL, KN_EINVAL, "--length %s does not fit input '%s' of type %s",
                           spec, v->name, v->type.kind == KN_KIND_TENSOR ? "tensor" : "optional");
        kn_type et = leaf_type(v, NULL), st = v->type;
        st.kind = KN_KIND_SEQUENCE;
        kn_tensor *s = kn_tensor_typed(g->arena, &st);
        s->nitems = none ? 0 : (int)len;
        s->items = kn_arena_array(g->arena, (size_t)s->nitems + 1, sizeof *s->items);
        for (int k = 0; k < s->nitems; k++) s->items[k] = kn_tensor_typed(g->arena, &et);
        if (v->type.kind == KN_KIND_OPTIONAL && !none) {
            kn_tensor *o = kn_tensor_typed(g->arena, &v->type);
            o->nitems = 1;
            o->items = kn_arena_array(g->arena, 1, sizeof *o->items);
            o->items[0] = seq ? s : s->items[0];
            s = o;
        } else if (none) {
            s->type = v->type;
        }
        return kn_deseq_expand_input(cx, g, i, s);
    }
    return kn_diag(cx, NULL, KN_EINVAL, "--length: the model has no input '%.*s'", (int)(eq - spec),
                   spec);
}

/* ---- the ABI at run time ---- */

int kn_deseq_flatten(const kn_tensor *t, const void **data) {
    if (t->type.kind == KN_KIND_TENSOR) {
        if (data) data[0] = t->data;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < t->nitems; i++)
        if (t->items[i]) n += kn_deseq_flatten(t->items[i], data ? data + n : NULL);
    return n;
}

static kn_tensor *group_seq(kn_arena *a, const kn_type *type, kn_tensor *const *flat, int cnt) {
    kn_type st = *type;
    st.kind = KN_KIND_SEQUENCE;
    kn_tensor *s = kn_tensor_typed(a, &st);
    s->nitems = cnt;
    s->items = kn_arena_array(a, (size_t)cnt + 1, sizeof *s->items);
    KN_ASSERT(s->items);
    for (int i = 0; i < cnt; i++) s->items[i] = flat[i];
    return s;
}

void kn_deseq_regroup(kn_arena *a, const kn_iogroup *groups, int ngroups, kn_tensor *const *flat,
                      int nflat, kn_tensor **out, int *nout) {
    int n = 0;
    for (int i = 0; i < ngroups; i++) {
        const kn_iogroup *gr = &groups[i];
        if (!gr->output) continue;
        kn_tensor *const *f = flat + gr->first;
        if (gr->type.kind == KN_KIND_TENSOR) {
            out[n++] = f[0];
        } else if (gr->type.kind == KN_KIND_SEQUENCE) {
            out[n++] = group_seq(a, &gr->type, f, gr->count);
        } else {
            kn_tensor *o = kn_tensor_typed(a, &gr->type);
            o->nitems = gr->present;
            o->items = kn_arena_array(a, 1, sizeof *o->items);
            KN_ASSERT(o->items);
            if (gr->present)
                o->items[0] = gr->type.elem_kind == KN_KIND_SEQUENCE
                                  ? group_seq(a, &gr->type, f, gr->count)
                                  : f[0];
            out[n++] = o;
        }
    }
    if (!n)
        for (; n < nflat; n++) out[n] = flat[n];
    *nout = n;
}
