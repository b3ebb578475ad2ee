/* Dynamic quantization: the float tail of a dynamically quantized layer folded into its
 * integer contraction.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * ONNX Runtime's dynamic quantizer writes a quantized MatMul or Conv as
 *
 *   DynamicQuantizeLinear(x) -> (xq, xs, xz)
 *   MatMulInteger(xq, W, xz, wz) | ConvInteger(...)  -> acc (int32)
 *   Cast(acc, to=FLOAT) -> Mul(., xs * ws) [-> Add(., bias)] [-> Relu]
 *
 * (the scale product a Mul of its own, xs a run-time scalar, ws per tensor or per
 * column / output channel; some exporters multiply by xs and ws one after the other).
 * This pass makes the contraction write the float result itself: the node h keeps its op,
 * its output becomes float32 (ir/ops/quant.c) and the tail becomes h's epilogue
 * (ir/epilogue.h): "Mul @K", "Add @K", "Relu", "Clip LO HI", "LeakyRelu A", the operands
 * extra inputs of h. The int32 accumulator is converted to float32 and each step is
 * applied in the graph's order, rounded to float32 as the unfused ops round, so the
 * fused node gives the unfused graph's bits: float(acc) * (xs * ws) stays that (the
 * product of the scales is still its own node, computed once a run), and
 * (float(acc) * xs) * ws stays two multiplications. No FMA: the emitters keep a
 * multiplication and a following addition apart (ir/kir.h, KX_MUL and KX_ADD).
 *
 * The chain folds only while each value has one reader and is no graph output: the
 * int32 result (read by the Cast alone), the Cast's output and each step's. A Mul or Add
 * takes its other operand in either position when that operand is float32, broadcasts
 * into the result's shape (the result keeps its shape) and is one value or one per
 * column / output channel (a scale, a bias: what the integer tiles read per column; a
 * residual Add of the result's shape stays its own node); an activation must have an exact
 * float32 form (Relu, Clip with constant bounds, LeakyRelu). The fused node takes the
 * place of the tail's last node, so every operand (the scale product, computed after the
 * contraction in ORT's node order) is produced before it runs. A grouped ConvInteger
 * (depthwise) keeps its tail, and graphs with subgraphs are left alone. */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

/* The one node reading v, if v has exactly one reader and is no graph output. */
static kn_node *only_reader(const kn_graph *g, const kn_value *v) {
    if (!v || kn_graph_reads(g, v) != 1) return NULL;
    for (int i = 0; i < g->nout; i++)
        if (g->outputs[i] == v) return NULL;
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++)
            if (g->nodes[i]->in[j] == v) return g->nodes[i];
    return NULL;
}

static bool is_f32(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && v->type.dtype == KN_F32;
}

/* Whether operand o of a step after contraction h is one value or varies along h's
 * columns alone (MatMulInteger: y's last axis; ConvInteger: NCHW y's channel axis): a scale
 * or a bias, what the integer tiles' epilogue reads per column (passes/tile_int.c
 * kt_int_epi). A residual (y's shape) stays its own Add. */
static bool per_column(const kn_node *h, const kn_value *o, const kn_type *y) {
    int ca = h->op == KN_OP_CONVINTEGER ? o->type.rank - (y->rank - 1) : o->type.rank - 1;
    if (y->rank < 1 || (h->op == KN_OP_CONVINTEGER && y->rank < 3)) return false;
    for (int i = 0; i < o->type.rank; i++)
        if (i != ca && o->type.dims[i] != 1) return false;
    return true;
}

/* The step a tail node m applies to value v (m's input), its operand in *x (NULL for an
 * activation): false when m is no step this pass folds. */
static bool tail_step(kn_ctx *cx, const kn_node *h, const kn_node *m, const kn_value *v,
                      kn_epi_step *s, kn_value **x) {
    *x = NULL;
    if (m->nout != 1 || !is_f32(m->out[0]) || !kn_type_equal(&m->out[0]->type, &v->type))
        return false;
    if ((m->op == KN_OP_MUL || m->op == KN_OP_ADD) && m->nin == 2) {
        int side = m->in[0] == v ? 0 : 1;
        kn_value *o = m->in[1 - side];
        if (m->in[side] != v || o == v || !is_f32(o) || !kn_bcast_into(&o->type, &v->type) ||
            !per_column(h, o, &v->type))
            return false;
        *s = (kn_epi_step){.op = m->op == KN_OP_MUL ? KN_EPI_MUL : KN_EPI_ADD, .operand = -1};
        *x = o;
        return true;
    }
    if (m->nin < 1 || m->in[0] != v || kn_node_attr(m, KN_ATTR_EPILOGUE) ||
        !kn_epilogue_step_of(cx, m, s))
        return false;
    /* activations whose float32 kernels give the reference's bits */
    return s->op == KN_EPI_RELU || s->op == KN_EPI_CLIP || s->op == KN_EPI_LEAKYRELU;
}

/* Folds the tail after integer contraction h; true if it did (the absorbed nodes are
 * marked in dead[], h moves to the last one's place: *at). */
static bool fold_tail(kn_ctx *cx, kn_graph *g, kn_node *h, bool *dead, int *at) {
    if (h->nout != 1 || !h->out[0] || h->out[0]->type.dtype != KN_I32 ||
        kn_node_attr(h, KN_ATTR_EPILOGUE) || !kn_type_static(&h->out[0]->type))
        return false;
    /* a grouped ConvInteger keeps its tail: the depthwise pass's integer tiles take no
     * epilogue (passes/tile_int.c kt_dw_int_exact), and with one it would run as the
     * plain nest */
    kn_ctx scratch;
    kn_ctx_init(&scratch, cx ? cx->file : NULL);
    if (h->op == KN_OP_CONVINTEGER && kn_attr_int(&scratch, h, "group", 1) != 1) return false;
    kn_node *c = only_reader(g, h->out[0]);
    if (!c || c->op != KN_OP_CAST || c->nout != 1 || !is_f32(c->out[0]) ||
        kn_node_attr(c, KN_ATTR_EPILOGUE))
        return false;
    kn_node *chain[KN_EPI_MAX];
    kn_epi_step steps[KN_EPI_MAX];
    kn_value *opnd[KN_EPI_MAX];
    int n = 0, muls = 0;
    kn_value *v = c->out[0];
    for (kn_node *m; n < KN_EPI_MAX && (m = only_reader(g, v)); v = m->out[0], n++) {
        if (!tail_step(cx, h, m, v, &steps[n], &opnd[n])) break;
        muls += steps[n].op == KN_EPI_MUL;
        chain[n] = m;
    }
    if (!muls) return false; /* no scale: not a dequantizing tail */
    for (int i = 0; i < n; i++) kn_epilogue_append(g, h, steps[i], opnd[i]);
    /* h now writes the last node's output, as float32 */
    kn_node *last = chain[n - 1];
    kn_value *y = last->out[0];
    y->producer = h;
    h->out[0] = y;
    dead[c->id] = true;
    for (int i = 0; i < n; i++) dead[chain[i]->id] = true;
    int pos = -1;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i] == last) pos = i;
    *at = pos;
    return true;
}

kn_status kn_pass_dynq(kn_ctx *cx, kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        if (kn_op_desc(g->nodes[i]->op)->flags & OPF_SUBGRAPH) return KN_OK;
    int maxid = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i]->id > maxid) maxid = g->nodes[i]->id;
    bool *dead = calloc((size_t)maxid + 1, sizeof *dead);
    kn_node **moved = calloc((size_t)g->nnodes + 1, sizeof *moved); /* h at the tail's place */
    KN_ASSERT(dead && moved);
    bool any = false;
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *h = g->nodes[i];
        int at = -1;
        if ((h->op != KN_OP_MATMULINTEGER && h->op != KN_OP_CONVINTEGER) || dead[h->id] ||
            !fold_tail(cx, g, h, dead, &at))
            continue;
        KN_ASSERT(at > i);
        dead[h->id] = true; /* leaves its place ... */
        moved[at] = h;      /* ... for the tail's last node's */
        any = true;
    }
    if (any) {
        int kept = 0;
        for (int i = 0; i < g->nnodes; i++) {
            kn_node *n = g->nodes[i];
            if (moved[i])
                g->nodes[kept++] = moved[i];
            else if (!dead[n->id])
                g->nodes[kept++] = n;
        }
        g->nnodes = kept;
    }
    free(dead);
    free(moved);
    return KN_OK;
}
