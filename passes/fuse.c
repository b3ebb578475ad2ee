/* Operator fusion: elementwise consumers folded into the epilogue of the node that
 * produces their input (ir/epilogue.h).
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * A node m is absorbed by the producer h of its input when h's lowering applies
 * epilogues (OPF_FUSE_HEAD: Conv, ConvTranspose, Gemm, MatMul and the binary
 * arithmetic ops), m is the only reader of h's output (which is not a graph output),
 * and the dtypes are floats and agree:
 *  - an activation (Relu, Clip with constant bounds, LeakyRelu, Sigmoid, HardSigmoid,
 *    HardSwish, Tanh) becomes a step of h's epilogue;
 *  - an Add of h's output and a tensor r of the output's shape (or broadcasting to it),
 *    where h is a Conv, Gemm or MatMul and r is available before h runs (an input, a
 *    constant, or produced by an earlier node): ResNet's residual sum becomes the
 *    step "Add @K" reading r as h's input K.
 * m is removed and h writes m's output; epilogue steps m had itself (an Add given a
 * "Silu" by passes/act.c) follow on h, and m stays when h cannot take them. Nodes are visited in
 * order, so a chain (Conv, Add, Relu) folds step by step into the Conv. Graphs with subgraphs
 * (whose bodies may read any outer value) are left alone. */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

static bool has_subgraphs(const kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        if (kn_op_desc(g->nodes[i]->op)->flags & OPF_SUBGRAPH) return true;
    return false;
}

static bool is_float(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && kn_dtype_get(v->type.dtype)->is_float;
}

/* The head that may absorb a consumer of x: x's producer, if x is its only output and
 * x has no other reader than that consumer. */
static kn_node *head_of(const kn_graph *g, const kn_value *x) {
    kn_node *h = x ? x->producer : NULL;
    if (!h || h->nout != 1 || !(kn_op_desc(h->op)->flags & OPF_FUSE_HEAD) || !kn_epilogue_room(h) ||
        kn_graph_reads(g, x) != 1 || !is_float(x))
        return NULL;
    return h;
}

/* m's output now comes from h. */
static void take_output(kn_node *h, kn_node *m) {
    kn_value *y = m->out[0];
    h->out[0]->producer = NULL; /* the head's old output is dead */
    h->out[0] = y;
    y->producer = h;
}

static bool contraction(const kn_node *h) {
    return h->op == KN_OP_CONV || h->op == KN_OP_CONVTRANSPOSE || h->op == KN_OP_GEMM ||
           h->op == KN_OP_MATMUL;
}

/* m's own epilogue (an Add the act pass gave a "Silu" step), which h takes after m's
 * step: false when h cannot take it all (steps with operands, or no room). */
static bool own_steps(kn_ctx *cx, const kn_node *h, const kn_node *m, kn_epilogue *me) {
    kn_epilogue he;
    if (kn_epilogue_of(cx, m, me) || kn_epilogue_of(cx, h, &he) || he.n + 1 + me->n > KN_EPI_MAX)
        return false;
    for (int i = 0; i < me->n; i++)
        if (me->s[i].operand >= 0) return false;
    return true;
}

static void append_own(kn_graph *g, kn_node *h, const kn_epilogue *me) {
    for (int i = 0; i < me->n; i++) kn_epilogue_append(g, h, me->s[i], NULL);
}

/* Tries to fold node m (at position pos) into a head; true if it did. */
static bool fold(kn_ctx *cx, kn_graph *g, kn_node *m, const int *position) {
    kn_epi_step s;
    kn_epilogue me;
    if (m->nout != 1 || !m->out[0] || !is_float(m->out[0])) return false;
    if (kn_epilogue_step_of(cx, m, &s)) {
        kn_node *h = head_of(g, m->in[0]);
        if (!h || h->out[0]->type.dtype != m->out[0]->type.dtype || !own_steps(cx, h, m, &me))
            return false;
        kn_epilogue_append(g, h, s, NULL);
        append_own(g, h, &me);
        take_output(h, m);
        return true;
    }
    if (m->op != KN_OP_ADD || m->nin != 2) return false;
    for (int side = 0; side < 2; side++) {
        kn_node *h = head_of(g, m->in[side]);
        kn_value *r = m->in[1 - side];
        if (!h || !contraction(h) || !r || !is_float(r) || r->type.dtype != m->out[0]->type.dtype ||
            !kn_type_equal(&h->out[0]->type, &m->out[0]->type) ||
            !kn_bcast_into(&r->type, &m->out[0]->type))
            continue;
        if (r->producer && position[r->producer->id] >= position[h->id]) continue;
        if (!own_steps(cx, h, m, &me)) continue;
        kn_epilogue_append(g, h, (kn_epi_step){.op = KN_EPI_ADD}, r);
        append_own(g, h, &me);
        take_output(h, m);
        return true;
    }
    return false;
}

kn_status kn_pass_fuse(kn_ctx *cx, kn_graph *g) {
    if (has_subgraphs(g)) return KN_OK;
    int maxid = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i]->id > maxid) maxid = g->nodes[i]->id;
    int *position = malloc(((size_t)maxid + 1) * sizeof *position);
    KN_ASSERT(position);
    for (int i = 0; i < g->nnodes; i++) position[g->nodes[i]->id] = i;
    int kept = 0;
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        if (fold(cx, g, n, position)) continue; /* drop the absorbed node */
        g->nodes[kept++] = n;
    }
    g->nnodes = kept;
    free(position);
    return KN_OK;
}
