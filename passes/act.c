/* Activations written out as elementwise ops recognized as one activation.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * Exporters write several activations as small graphs of arithmetic. This pass finds
 * them (x a float value; constants are scalars, compared to 1e-6 relative):
 *
 *   SiLU       Mul(x, Sigmoid(x))
 *   GELU       0.5 * x * (1 + Erf(x / sqrt 2))          (x / sqrt 2 also x * (1/sqrt 2))
 *   GELU tanh  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *              (x^3 as x * (x * x), (x * x) * x or Pow(x, 3))
 *   HardSwish  x * Clip(x + 3, 0, 6) / 6                 (or * (1/6))
 *
 * with 0.5 * x * a matched as Mul(Mul(x, a), 0.5), Mul(Mul(x, 0.5), a) or
 * Div(Mul(x, a), 2) in any operand order. Every intermediate must have the pattern's
 * next node as its only reader. GELU becomes a Gelu node (approximate "tanh" for the
 * tanh form) and HardSwish a HardSwish node, which the fuse pass folds into a
 * producing Conv/Gemm/MatMul's epilogue; SiLU has no ONNX op, so when x comes from a
 * node that takes epilogues (and the pattern alone reads x) it becomes the step
 * "Silu" of that node directly, else it is left to the chain pass. */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "passes/rewrite.h"

#include <math.h>
#include <string.h>

enum { MATCH_MAX = 16 };

typedef struct match {
    kn_node *nodes[MATCH_MAX]; /* the pattern's nodes, to remove */
    int n;
} match;

static void add(match *m, kn_node *n) {
    KN_ASSERT(m->n >= 0 && m->n < MATCH_MAX);
    if (m->n < MATCH_MAX) m->nodes[m->n++] = n;
}

static bool near(double v, double want) {
    return fabs(v - want) <= 1e-6 * fabs(want) + 1e-12;
}

static bool is(const kn_node *n, kn_op op) {
    return n && n->op == op && n->nout == 1 && n->out[0] && !kn_node_attr(n, KN_ATTR_EPILOGUE);
}

/* For binary n with input v: the other input, or NULL. */
static kn_value *other(const kn_node *n, const kn_value *v) {
    if (n->nin != 2) return NULL;
    if (n->in[0] == v) return n->in[1];
    if (n->in[1] == v && kn_op_desc(n->op)->flags & OPF_COMMUTATIVE) return n->in[0];
    return NULL;
}

/* Whether binary n is v op c (either order when commutative) with scalar c near `want`. */
static bool with_const(const kn_node *n, kn_op op, const kn_value *v, double want) {
    double c;
    return is(n, op) && kn_const_scalar(other(n, v), &c) && near(c, want);
}

/* The only reader of n's output when it is live, else NULL. */
static kn_node *next(const kn_rw *rw, const kn_node *n) {
    return kn_rw_only_reader(rw, n->out[0]);
}

/* Whether v's producer is n and v is read only by n's pattern successor (v single use). */
static kn_node *prod(const kn_rw *rw, const kn_value *v, const kn_node *reader) {
    kn_node *p = v ? v->producer : NULL;
    if (!p || p->graph != rw->g || kn_rw_dead(rw, p) || kn_rw_only_reader(rw, v) != reader)
        return NULL;
    return p;
}

/* From a = (1 + inner) made by node `plus`: the final node of 0.5 * x * a; adds the
 * nodes after plus to m. */
static kn_node *half_x_times(const kn_rw *rw, kn_node *plus, const kn_value *x, match *m) {
    kn_node *u = next(rw, plus);
    if (!is(u, KN_OP_MUL)) return NULL;
    kn_value *o = other(u, plus->out[0]);
    if (o == x) { /* Mul(x, a), then * 0.5 or / 2 */
        add(m, u);
        kn_node *w = next(rw, u);
        if (with_const(w, KN_OP_MUL, u->out[0], 0.5) ||
            (is(w, KN_OP_DIV) && w->in[0] == u->out[0] && with_const(w, KN_OP_DIV, u->out[0], 2))) {
            add(m, w);
            return w;
        }
        return NULL;
    }
    kn_node *h = prod(rw, o, u); /* Mul(Mul(x, 0.5), a) */
    if (h && with_const(h, KN_OP_MUL, x, 0.5)) {
        add(m, h);
        add(m, u);
        return u;
    }
    return NULL;
}

/* GELU (erf form) around Erf node e. */
static kn_node *gelu_erf(const kn_rw *rw, kn_node *e, kn_value **x, match *m) {
    kn_node *d = prod(rw, e->in[0], e);
    if (!d || d->nin != 2) return NULL;
    *x = d->in[0];
    if (!(is(d, KN_OP_DIV) && with_const(d, KN_OP_DIV, *x, M_SQRT2)) &&
        !with_const(d, KN_OP_MUL, *x, M_SQRT1_2) &&
        !((*x = d->in[1]) && with_const(d, KN_OP_MUL, *x, M_SQRT1_2)))
        return NULL;
    kn_node *p = next(rw, e);
    if (!with_const(p, KN_OP_ADD, e->out[0], 1)) return NULL;
    add(m, d);
    add(m, e);
    add(m, p);
    return half_x_times(rw, p, *x, m);
}

/* Whether c is x^3 (Pow(x, 3), x * (x * x) or (x * x) * x); adds its nodes. */
static bool cube_of(const kn_rw *rw, const kn_value *c, const kn_node *reader, kn_value **x,
                    match *m) {
    kn_node *p = prod(rw, c, reader);
    if (!p || p->nin != 2) return false;
    double e;
    if (is(p, KN_OP_POW) && kn_const_scalar(p->in[1], &e) && e == 3) {
        *x = p->in[0];
        add(m, p);
        return true;
    }
    if (!is(p, KN_OP_MUL)) return false;
    for (int side = 0; side < 2; side++) {
        kn_node *sq = prod(rw, p->in[side], p);
        kn_value *o = p->in[1 - side];
        if (is(sq, KN_OP_MUL) && sq->in[0] == o && sq->in[1] == o) {
            *x = o;
            add(m, sq);
            add(m, p);
            return true;
        }
    }
    return false;
}

/* GELU (tanh form) around Tanh node t. */
static kn_node *gelu_tanh(const kn_rw *rw, kn_node *t, kn_value **x, match *m) {
    kn_node *s = prod(rw, t->in[0], t); /* sqrt(2/pi) * inner */
    if (!is(s, KN_OP_MUL) || s->nin != 2) return NULL;
    double c;
    int side = kn_const_scalar(s->in[0], &c) ? 0 : 1;
    if (!kn_const_scalar(s->in[side], &c) || !near(c, sqrt(2 / M_PI))) return NULL;
    kn_node *a = prod(rw, s->in[1 - side], s); /* x + 0.044715 * x^3 */
    if (!is(a, KN_OP_ADD) || a->nin != 2) return NULL;
    for (int k = 0; k < 2; k++) {
        kn_node *q = prod(rw, a->in[k], a); /* 0.044715 * x^3 */
        if (!is(q, KN_OP_MUL) || q->nin != 2) continue;
        int qs = kn_const_scalar(q->in[0], &c) ? 0 : 1;
        if (!kn_const_scalar(q->in[qs], &c) || !near(c, 0.044715)) continue;
        match mm = *m;
        if (!cube_of(rw, q->in[1 - qs], q, x, &mm) || a->in[1 - k] != *x) continue;
        *m = mm;
        add(m, q);
        add(m, a);
        add(m, s);
        add(m, t);
        kn_node *p = next(rw, t);
        if (!with_const(p, KN_OP_ADD, t->out[0], 1)) return NULL;
        add(m, p);
        return half_x_times(rw, p, *x, m);
    }
    return NULL;
}

/* HardSwish around Clip node c: x * Clip(x + 3, 0, 6) / 6. */
static kn_node *hardswish(const kn_rw *rw, kn_node *c, kn_value **x, match *m) {
    kn_epi_step s;
    if (!kn_epilogue_step_of(rw->cx, c, &s) || s.a != 0 || s.b != 6) return NULL;
    kn_node *a = prod(rw, c->in[0], c);
    if (!is(a, KN_OP_ADD) || a->nin != 2) return NULL;
    int side = kn_const_scalar(a->in[0], &(double){0}) ? 1 : 0;
    *x = a->in[side];
    if (!with_const(a, KN_OP_ADD, *x, 3)) return NULL;
    kn_node *u = next(rw, c);
    if (!is(u, KN_OP_MUL) || other(u, c->out[0]) != *x) return NULL;
    kn_node *w = next(rw, u);
    if (!(is(w, KN_OP_DIV) && w->in[0] == u->out[0] && with_const(w, KN_OP_DIV, u->out[0], 6)) &&
        !with_const(w, KN_OP_MUL, u->out[0], 1.0 / 6))
        return NULL;
    add(m, a);
    add(m, c);
    add(m, u);
    add(m, w);
    return w;
}

/* Replaces the matched nodes by one node `op` reading x and writing last's output. */
static void replace(kn_rw *rw, match *m, kn_node *last, kn_op op, kn_value *x, bool tanh_form) {
    kn_value *y = last->out[0];
    int at = last->id;
    const char *name = last->name;
    for (int i = 0; i < m->n; i++) kn_rw_kill(rw, m->nodes[i]);
    kn_node *n = kn_rw_node(rw, at, op, name, 1, &x, 1, &y);
    if (tanh_form) {
        kn_attr *a = kn_arena_array(rw->g->arena, 1, sizeof *a);
        KN_ASSERT(a);
        *a = (kn_attr){.name = "approximate", .kind = KN_ATTR_STRING, .s = "tanh", .slen = 4};
        n->attrs = a;
        n->nattr = 1;
    }
}

/* SiLU at Mul node u: the step Silu of x's producer. */
static void silu(kn_rw *rw, kn_node *u) {
    for (int side = 0; side < 2 && is(u, KN_OP_MUL) && u->nin == 2; side++) {
        kn_node *s = prod(rw, u->in[side], u);
        kn_value *x = u->in[1 - side];
        if (!is(s, KN_OP_SIGMOID) || s->in[0] != x || !kn_float_static(x)) continue;
        kn_node *h = x->producer;
        if (!h || h->graph != rw->g || kn_rw_dead(rw, h) || h->nout != 1 ||
            !(kn_op_desc(h->op)->flags & OPF_FUSE_HEAD) || !kn_epilogue_room(h) ||
            kn_rw_uses(rw, x) != 2 || kn_graph_is_output(rw->g->root, x))
            continue;
        kn_value *y = u->out[0];
        kn_rw_kill(rw, s);
        kn_rw_kill(rw, u);
        kn_epilogue_append(rw->g, h, (kn_epi_step){.op = KN_EPI_SILU, .operand = -1}, NULL);
        h->out[0] = y;
        y->producer = h;
        return;
    }
}

kn_status kn_pass_act(kn_ctx *cx, kn_graph *g) {
    kn_rw rw;
    if (kn_rw_begin(&rw, cx, g)) {
        for (int i = 0; i < rw.n0; i++) {
            kn_node *n = g->nodes[i];
            if (kn_rw_dead(&rw, n) || n->nout != 1 || !kn_float_static(n->out[0])) continue;
            match m = {0};
            kn_value *x = NULL;
            kn_node *last = NULL;
            if (is(n, KN_OP_ERF) && (last = gelu_erf(&rw, n, &x, &m)))
                replace(&rw, &m, last, KN_OP_GELU, x, false);
            else if (is(n, KN_OP_TANH) && (m.n = 0, last = gelu_tanh(&rw, n, &x, &m)))
                replace(&rw, &m, last, KN_OP_GELU, x, true);
            else if (n->op == KN_OP_CLIP && (m.n = 0, last = hardswish(&rw, n, &x, &m)))
                replace(&rw, &m, last, KN_OP_HARDSWISH, x, false);
        }
        for (int i = 0; i < rw.n0; i++)
            if (!kn_rw_dead(&rw, g->nodes[i])) silu(&rw, g->nodes[i]);
    }
    kn_rw_end(&rw);
    return KN_OK;
}
