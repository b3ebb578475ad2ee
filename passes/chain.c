/* Elementwise chains: runs of unary and binary elementwise ops folded into the epilogue
 * of the node that starts them, so the run makes one pass over memory.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * The fuse pass folds activations and residual Adds into Conv/Gemm/MatMul and the
 * binary arithmetic ops. This pass (after it) takes the rest of an elementwise run.
 * A node m is absorbed by the producer h of its input x when
 *  - h is a head: a node whose lowering applies epilogues (OPF_FUSE_HEAD: Conv,
 *    ConvTranspose, Gemm, MatMul, Add, Sub, Mul, Div) or a float unary math op (Exp,
 *    Abs, Tanh, ... : ir/lower/elementwise.c applies the epilogue after the op);
 *  - x is h's only output, m its only reader, not a graph output; x and m's output are
 *    floats of the same type (m does not broadcast x to a larger shape); h has room
 *    for another step (KN_EPI_MAX);
 *  - m is one of (ir/epilogue.h)
 *      an activation fuse knows (Relu, Clip, Sigmoid, Tanh, Gelu, ...),
 *      Neg, Abs, Exp, Log, Sqrt, Erf, Reciprocal       -> the step of that name
 *      Pow(x, c), c a constant scalar                  -> "Pow c"
 *      Add/Mul(x, r) either order                      -> "Add @K" / "Mul @K"
 *      Sub(x, r), Div(x, r)                            -> "Sub @K" / "Div @K"
 *      Sub(r, x), Div(r, x)                            -> "RSub @K" / "RDiv @K"
 *    where r (not x) is a float of m's dtype that broadcasts to m's output without
 *    growing it and is available before h runs (a constant, a graph input, or the
 *    output of a node before h): it becomes h's input K.
 * When m has an epilogue of its own (fuse put an activation into a binary m), its steps
 * follow m's step in h, their operands becoming h's inputs too (each must also exist
 * before h). m is removed and h writes m's output. Nodes are visited in order, so a run folds
 * step by step into its first node: Conv, Mul, Add, Sigmoid, Mul becomes one Conv with
 * four epilogue steps; tanh(exp(-|x|) * 0.5 - r) one Abs with five. Graphs with
 * subgraphs are left alone (rewrite.h). */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "ir/ops/unary_attrs.h"
#include "passes/pass.h"
#include "passes/rewrite.h"

#include <string.h>

static bool is_float(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && kn_dtype_get(v->type.dtype)->is_float;
}

#define OP_ID(id) KN_OP_##id
static const kn_op unary_ops[] = {KN_UNARY_MATH_OPS(OP_ID)};
#undef OP_ID

/* Whether h is a float unary math op, lowered by ir/lower/elementwise.c's lower_unary. */
static bool unary_head(const kn_node *h) {
    for (size_t i = 0; i < sizeof unary_ops / sizeof *unary_ops; i++)
        if (unary_ops[i] == h->op)
            return kn_node_op_inputs(h) == 1 && is_float(h->in[0]) &&
                   h->in[0]->type.dtype == h->out[0]->type.dtype;
    return false;
}

/* The head that may absorb a reader of x, or NULL. */
static kn_node *head_of(const kn_rw *rw, const kn_value *x) {
    kn_node *h = x ? x->producer : NULL;
    if (!h || h->graph != rw->g || kn_rw_dead(rw, h) || h->nout != 1 || h->out[0] != x ||
        !is_float(x) || !kn_type_static(&x->type) || !kn_epilogue_room(h) || kn_rw_uses(rw, x) != 1)
        return NULL;
    if (!(kn_op_desc(h->op)->flags & OPF_FUSE_HEAD) && !unary_head(h)) return NULL;
    return h;
}

/* Whether v exists before h runs: a constant, a graph input, or an earlier node's output. */
static bool before(const kn_rw *rw, const kn_value *v, const kn_node *h) {
    const kn_node *p = v->producer;
    return v->constant || !p || (p->graph == rw->g && !kn_rw_dead(rw, p) && p->id < h->id);
}

/* The unary step of m (reading its input 0), if it has one. */
static bool unary_step(kn_ctx *cx, const kn_node *m, kn_epi_step *s) {
    *s = (kn_epi_step){.operand = -1};
    switch (m->op) {
    case KN_OP_NEG: s->op = KN_EPI_NEG; return m->nin == 1;
    case KN_OP_ABS: s->op = KN_EPI_ABS; return m->nin == 1;
    case KN_OP_EXP: s->op = KN_EPI_EXP; return m->nin == 1;
    case KN_OP_LOG: s->op = KN_EPI_LOG; return m->nin == 1;
    case KN_OP_SQRT: s->op = KN_EPI_SQRT; return m->nin == 1;
    case KN_OP_ERF: s->op = KN_EPI_ERF; return m->nin == 1;
    case KN_OP_RECIPROCAL: s->op = KN_EPI_RECIP; return m->nin == 1;
    case KN_OP_POW: s->op = KN_EPI_POW; return m->nin == 2 && kn_const_scalar(m->in[1], &s->a);
    default: return kn_epilogue_step_of(cx, m, s);
    }
}

/* Tries to fold m into the producer of one of its inputs; true if it did. */
static bool fold(kn_rw *rw, kn_node *m) {
    if (m->nout != 1 || !m->out[0] || !is_float(m->out[0])) return false;
    kn_value *y = m->out[0];
    kn_epi_step s;
    kn_epilogue me; /* m's own epilogue (fuse gave it one): moves along after m's step */
    if (kn_epilogue_of(rw->cx, m, &me)) return false;
    int nin = kn_node_op_inputs(m);
    for (int side = 0; side < 2 && side < nin; side++) {
        kn_value *x = m->in[side], *r = NULL;
        kn_node *h = head_of(rw, x);
        if (!h || !kn_type_equal(&x->type, &y->type)) continue;
        const kn_attr *ha = kn_node_attr(h, KN_ATTR_EPILOGUE);
        if ((ha ? ha->n : 0) + 1 + me.n > KN_EPI_MAX) continue;
        if (side == 0 && unary_step(rw->cx, m, &s)) {
            /* Pow's exponent is a constant, not an operand */
        } else if (nin == 2) {
            r = m->in[1 - side];
            switch (m->op) {
            case KN_OP_ADD: s.op = KN_EPI_ADD; break;
            case KN_OP_MUL: s.op = KN_EPI_MUL; break;
            case KN_OP_SUB: s.op = side ? KN_EPI_RSUB : KN_EPI_SUB; break;
            case KN_OP_DIV: s.op = side ? KN_EPI_RDIV : KN_EPI_DIV; break;
            default: return false;
            }
            if (!r || r == x || !is_float(r) || r->type.dtype != y->type.dtype ||
                !kn_bcast_into(&r->type, &y->type))
                continue;
            if (!before(rw, r, h)) continue; /* h now reads r */
        } else {
            return false;
        }
        /* m's operands must exist before h runs too */
        bool early = true;
        for (int k = 0; k < me.n; k++) {
            kn_value *o = me.s[k].operand >= 0 ? m->in[me.s[k].operand] : NULL;
            if (o && (o == x || !before(rw, o, h))) early = false;
        }
        if (!early) continue;
        kn_epilogue_append(rw->g, h, r ? (kn_epi_step){.op = s.op} : s, r);
        for (int k = 0; k < me.n; k++) {
            kn_epi_step t = me.s[k];
            kn_value *o = t.operand >= 0 ? m->in[t.operand] : NULL;
            if (o) t.operand = -1;
            kn_epilogue_append(rw->g, h, t, o);
        }
        kn_rw_kill(rw, m);
        h->out[0]->producer = NULL; /* the head's old output is dead */
        h->out[0] = y;
        y->producer = h;
        return true;
    }
    return false;
}

kn_status kn_pass_chain(kn_ctx *cx, kn_graph *g) {
    kn_rw rw;
    if (kn_rw_begin(&rw, cx, g))
        for (int i = 0; i < rw.n0; i++)
            if (!kn_rw_dead(&rw, g->nodes[i])) fold(&rw, g->nodes[i]);
    kn_rw_end(&rw);
    return KN_OK;
}
