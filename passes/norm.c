/* LayerNormalization and Softmax written out as reductions and arithmetic recognized as
 * the single op.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * Exporters before opset 17 (and hand-written models) spell the two normalizations of
 * transformers as small graphs. This pass finds them over the last axis of a float
 * value x of static shape [..., C] (every reduction over that axis alone, keepdims 1;
 * axes as an attribute or a constant input; constants compared to 1e-6 relative):
 *
 *   LayerNorm  m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2) | Mul(d, d));
 *              y = Div(d, Sqrt(Add(v, eps)))  [then Mul(y, w)] [then Add(., b)]
 *              with w, b constants of C elements broadcasting along the last axis
 *   Softmax    y = Div(e, ReduceSum(e)) with e = Exp(x) or e = Exp(Sub(x, ReduceMax(x)))
 *
 * Every intermediate must be read only by the pattern (d by the variance and the Div,
 * e by the ReduceSum and the Div). LayerNorm becomes LayerNormalization(x, w, b)
 * {axis=-1, epsilon=eps} (w of ones when there is no Mul; w and b reshaped to [C]);
 * Softmax becomes Softmax(x) {axis=-1}, which over the last axis means the same at every
 * opset. The Exp-only form gains the maximum subtraction, which changes no result but
 * overflow. The lowerings (ir/lower/nn.c) give both ops one vectorized pass per row. */
#include "ir/ops.h"
#include "passes/pass.h"
#include "passes/rewrite.h"

#include <math.h>
#include <string.h>

enum { MATCH_MAX = 12 };

typedef struct match {
    kn_node *nodes[MATCH_MAX];
    int n;
} match;

static void add(match *m, kn_node *n) {
    KN_ASSERT(m->n >= 0 && m->n < MATCH_MAX);
    if (m->n < MATCH_MAX) m->nodes[m->n++] = n;
}

static bool is(const kn_node *n, kn_op op) {
    return n && n->op == op && n->nout == 1 && n->out[0] && kn_float_static(n->out[0]) &&
           !kn_node_attr(n, "kn.epilogue");
}

/* v's producer when it is alive and v's only reader is `reader`. */
static kn_node *prod(const kn_rw *rw, const kn_value *v, const kn_node *reader) {
    kn_node *p = v ? v->producer : NULL;
    if (!p || p->graph != rw->g || kn_rw_dead(rw, p) || kn_rw_only_reader(rw, v) != reader)
        return NULL;
    return p;
}

/* Whether reduction n (op) reads x over its last axis alone with keepdims 1. */
static bool reduces_last(kn_ctx *cx, const kn_node *n, kn_op op, const kn_value *x) {
    if (!is(n, op) || n->in[0] != x || !kn_float_static(x) || x->type.rank < 1) return false;
    kn_ctx scratch;
    kn_ctx_init(&scratch, cx->file);
    if (kn_attr_int(&scratch, n, "keepdims", 1) != 1 || kn_failed(&scratch)) return false;
    int64_t axis;
    const int64_t *ax = NULL;
    int nax = kn_attr_ints(&scratch, n, "axes", &ax);
    if (kn_failed(&scratch)) return false;
    if (nax == 1 && n->nin < 2) {
        axis = ax[0];
    } else if (nax <= 0 && n->nin >= 2 && n->in[1] && n->in[1]->constant &&
               kn_tensor_numel(n->in[1]->constant) == 1) {
        axis = (int64_t)kn_tensor_get_f64(n->in[1]->constant, 0);
    } else {
        return false;
    }
    int r = x->type.rank;
    return axis == r - 1 || axis == -1;
}

/* The binary node reading `a` and `b` in this order (or either order when commutative). */
static bool reads(const kn_node *n, const kn_value *a, const kn_value *b) {
    if (n->nin != 2) return false;
    if (n->in[0] == a && n->in[1] == b) return true;
    return (kn_op_desc(n->op)->flags & OPF_COMMUTATIVE) && n->in[0] == b && n->in[1] == a;
}

/* The other input of binary n beside v (either side), or NULL. */
static kn_value *other(const kn_node *n, const kn_value *v) {
    if (n->nin != 2) return NULL;
    return n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : NULL;
}

/* Whether constant c holds C values varying along the last axis of a rank-r value
 * only (every other dim 1). */
static bool per_last(const kn_value *c, int64_t C, int r) {
    if (!c || !c->constant || !kn_float_static(c) || c->type.rank > r ||
        kn_tensor_numel(c->constant) != C || c->type.rank < 1 ||
        c->type.dims[c->type.rank - 1] != C)
        return false;
    return true;
}

/* c as a new constant of shape [C] in dtype t (or ones when c is NULL). */
static kn_value *as_row(kn_rw *rw, const kn_value *c, int64_t C, kn_dtype t, const char *like,
                        const char *suffix) {
    kn_tensor *o = kn_tensor_make(rw->g->arena, t, 1, &C);
    KN_ASSERT(o);
    for (int64_t i = 0; i < C; i++)
        kn_tensor_set_f64(o, i, c ? kn_tensor_get_f64(c->constant, i) : 1);
    return kn_rw_const(rw, like, suffix, o);
}

static kn_attr *attrs(kn_graph *g, int n) {
    kn_attr *a = kn_arena_array(g->arena, (size_t)n, sizeof *a);
    KN_ASSERT(a);
    return a;
}

/* LayerNorm from its first ReduceMean r1. */
static bool layernorm(kn_rw *rw, kn_node *r1) {
    kn_value *x = r1->in[0];
    if (!reduces_last(rw->cx, r1, KN_OP_REDUCEMEAN, x)) return false;
    match m = {0};
    add(&m, r1);
    kn_node *sub = kn_rw_only_reader(rw, r1->out[0]);
    if (!is(sub, KN_OP_SUB) || sub->in[0] != x || sub->in[1] != r1->out[0]) return false;
    add(&m, sub);
    kn_value *d = sub->out[0];
    if (!kn_type_equal(&d->type, &x->type) || kn_graph_is_output(rw->g->root, d)) return false;
    /* d's two readers: the square and the Div */
    kn_node *sq = NULL, *div = NULL;
    for (int i = 0; i < rw->g->nnodes; i++) {
        kn_node *n = rw->g->nodes[i];
        if (kn_rw_dead(rw, n)) continue;
        double e;
        if ((is(n, KN_OP_POW) && n->in[0] == d && kn_const_scalar(n->in[1], &e) && e == 2) ||
            (is(n, KN_OP_MUL) && n->nin == 2 && n->in[0] == d && n->in[1] == d))
            sq = n;
        else if (is(n, KN_OP_DIV) && n->nin == 2 && n->in[0] == d)
            div = n;
    }
    if (!sq || !div || kn_rw_uses(rw, d) != (sq->op == KN_OP_MUL ? 3 : 2)) return false;
    add(&m, sq);
    kn_node *r2 = kn_rw_only_reader(rw, sq->out[0]);
    if (!reduces_last(rw->cx, r2, KN_OP_REDUCEMEAN, sq->out[0])) return false;
    add(&m, r2);
    kn_node *ad = kn_rw_only_reader(rw, r2->out[0]);
    double eps;
    if (!is(ad, KN_OP_ADD) || !kn_const_scalar(other(ad, r2->out[0]), &eps) || eps < 0)
        return false;
    add(&m, ad);
    kn_node *sr = kn_rw_only_reader(rw, ad->out[0]);
    if (!is(sr, KN_OP_SQRT) || kn_rw_only_reader(rw, sr->out[0]) != div || div->in[1] != sr->out[0])
        return false;
    add(&m, sr);
    add(&m, div);
    if (!kn_type_equal(&div->out[0]->type, &x->type)) return false;
    int r = x->type.rank;
    int64_t C = x->type.dims[r - 1];
    kn_node *last = div, *mul = kn_rw_only_reader(rw, div->out[0]), *bias = NULL;
    kn_value *w = NULL, *b = NULL;
    if (is(mul, KN_OP_MUL) && per_last(other(mul, div->out[0]), C, r) &&
        kn_type_equal(&mul->out[0]->type, &x->type)) {
        w = other(mul, div->out[0]);
        add(&m, mul);
        last = mul;
    }
    bias = kn_rw_only_reader(rw, last->out[0]);
    if (is(bias, KN_OP_ADD) && per_last(other(bias, last->out[0]), C, r) &&
        kn_type_equal(&bias->out[0]->type, &x->type)) {
        b = other(bias, last->out[0]);
        add(&m, bias);
        last = bias;
    }
    kn_dtype t = x->type.dtype;
    kn_value *y = last->out[0];
    int at = last->id;
    const char *name = last->name;
    for (int i = 0; i < m.n; i++) kn_rw_kill(rw, m.nodes[i]);
    kn_value *in[3] = {x, as_row(rw, w, C, t, y->name, "ln_scale"),
                       b ? as_row(rw, b, C, t, y->name, "ln_bias") : NULL};
    kn_node *ln = kn_rw_node(rw, at, KN_OP_LAYERNORMALIZATION, name, b ? 3 : 2, in, 1, &y);
    kn_attr *a = attrs(rw->g, 2);
    a[0] = (kn_attr){.name = "axis", .kind = KN_ATTR_INT, .i = -1};
    a[1] = (kn_attr){.name = "epsilon", .kind = KN_ATTR_FLOAT, .f = (float)eps};
    ln->attrs = a;
    ln->nattr = 2;
    return true;
}

/* Softmax from its Exp node. */
static bool softmax(kn_rw *rw, kn_node *e) {
    match m = {0};
    kn_value *x = e->in[0];
    kn_node *sub = prod(rw, x, e);
    if (is(sub, KN_OP_SUB) && sub->nin == 2) {
        kn_node *mx = prod(rw, sub->in[1], sub);
        if (mx && reduces_last(rw->cx, mx, KN_OP_REDUCEMAX, sub->in[0])) {
            x = sub->in[0];
            add(&m, mx);
            add(&m, sub);
        }
    }
    if (!kn_float_static(x) || !kn_type_equal(&x->type, &e->out[0]->type)) return false;
    add(&m, e);
    kn_value *ev = e->out[0];
    if (kn_rw_uses(rw, ev) != 2 || kn_graph_is_output(rw->g->root, ev)) return false;
    kn_node *sum = NULL, *div = NULL;
    for (int i = 0; i < rw->g->nnodes; i++) {
        kn_node *n = rw->g->nodes[i];
        if (kn_rw_dead(rw, n)) continue;
        if (reduces_last(rw->cx, n, KN_OP_REDUCESUM, ev))
            sum = n;
        else if (is(n, KN_OP_DIV) && n->nin == 2 && n->in[0] == ev)
            div = n;
    }
    if (!sum || !div || !reads(div, ev, sum->out[0]) || kn_rw_only_reader(rw, sum->out[0]) != div ||
        !kn_type_equal(&div->out[0]->type, &x->type))
        return false;
    add(&m, sum);
    add(&m, div);
    kn_value *y = div->out[0];
    int at = div->id;
    const char *name = div->name;
    for (int i = 0; i < m.n; i++) kn_rw_kill(rw, m.nodes[i]);
    kn_node *sm = kn_rw_node(rw, at, KN_OP_SOFTMAX, name, 1, &x, 1, &y);
    kn_attr *a = attrs(rw->g, 1);
    a[0] = (kn_attr){.name = "axis", .kind = KN_ATTR_INT, .i = -1};
    sm->attrs = a;
    sm->nattr = 1;
    return true;
}

kn_status kn_pass_norm(kn_ctx *cx, kn_graph *g) {
    kn_rw rw;
    if (kn_rw_begin(&rw, cx, g)) {
        for (int i = 0; i < rw.n0; i++) {
            kn_node *n = g->nodes[i];
            if (kn_rw_dead(&rw, n)) continue;
            if (n->op == KN_OP_REDUCEMEAN)
                layernorm(&rw, n);
            else if (is(n, KN_OP_EXP))
                softmax(&rw, n);
        }
    }
    kn_rw_end(&rw);
    return KN_OK;
}
