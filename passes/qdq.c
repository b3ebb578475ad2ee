/* QDQ import: quantized ONNX models in QuantizeLinear/DequantizeLinear form rewritten
 * into the integer contractions (QLinearConv, QLinearMatMul), which the tile pass
 * builds with integer dot products, and their residual adds into QLinearAdd.
 * requires: shape; breaks: nothing (the graph stays valid and runnable). Runs before
 * fold, which would otherwise turn the weights' DequantizeLinear into float constants.
 *
 * The pattern, each intermediate value read by the next node alone:
 *
 *   DequantizeLinear(xq, xs, xz) ─┐
 *   DequantizeLinear(W, ws, wz) ──┼─ Conv | MatMul | Gemm ─ [Relu | Clip] ─
 *   [DequantizeLinear(B, bs, 0)] ─┘        ─ QuantizeLinear(ys, yz) ─ yq
 *
 * with xq an 8-bit activation, xs/xz and ys/yz per tensor, W constant 8-bit weights
 * with per-tensor or per-output-channel (Conv: axis 0; MatMul: axis 1, the columns;
 * Gemm transB: axis 0, transposed here) scales and zero points, and a bias that is an
 * int32 constant dequantized with scale exactly xs * ws[c] (float32) and zero point 0
 * (a float bias, which would need rounding, leaves the pattern alone; a Gemm's bias
 * becomes kiln's ninth input of QLinearMatMul, as QLinearConv's). It becomes
 *
 *   QLinearConv / QLinearMatMul(xq, xs, xz, W, ws, wz, ys, yz[, B]) ─ yq
 *
 * The new node carries KN_FIXED_POINT_ATTR: it requantizes in fixed point
 * (ir/requant.h), with no floating point at run time. A Relu before QuantizeLinear
 * becomes KN_CLAMP_ATTR [yz, type max] on it: sat(round(max(v, 0)) + yz) =
 * max(sat(round(v) + yz), sat(yz)), saturation and rounding being monotonic; a Clip with
 * constant bounds (Relu6) likewise the clamp to the quantized bounds [q(lo), q(hi)]. The
 * requantization saturates to that range, so the activation costs nothing.
 *
 * Exactness: the integer form computes sum (xq - xz)(W - wz) exactly and rounds
 * acc * M once, half to even, M being xs * ws / ys with its mantissa rounded to 31
 * bits (ir/requant.h): the real-number value of the QDQ graph rounded half to even
 * wherever M has at most 31 significant bits (power-of-two scales), and otherwise
 * within a relative 2^-31 of it. The float graph itself rounds the dequantized values
 * to float32 and sums in float32, so a runtime executing it literally can differ by
 * one step where its value lies within that rounding of a tie; with power-of-two
 * input and weight scales its products are exact and only the summation order is
 * left. Gemm with alpha other than 1, transA, or a bias with beta other than 1 is
 * left in float.
 *
 * Residual adds, DequantizeLinear(a) + DequantizeLinear(b) [-> Relu | Clip] ->
 * QuantizeLinear (8-bit a and b, per-tensor float32 scales), become kiln's QLinearAdd
 * (ir/ops/quant.c), which computes the same float32 operations in one pass: the QDQ
 * graph's result bit for bit; the Relu or Clip its clamp, as above.
 *
 * DequantizeLinear(xq, s, z) -> MaxPool -> QuantizeLinear(s, z), the same scale and zero
 * point on both sides (ResNet's pool after the stem), becomes MaxPool(xq) on the 8-bit
 * values (rewrite_maxpool): the same result, a quarter of the bytes and no conversions. */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "ir/requant.h"
#include "passes/pass.h"
#include "passes/rewrite.h"

#include <math.h>
#include <string.h>

/* The only live reader of v is n (v no graph output). */
static bool only(const kn_rw *rw, const kn_value *v, const kn_node *n) {
    return v && kn_rw_only_reader(rw, v) == n;
}

static const kn_node *producer(const kn_value *v, kn_op op) {
    return v && v->producer && v->producer->op == op ? v->producer : NULL;
}

static bool is8(kn_dtype t) {
    return t == KN_U8 || t == KN_I8;
}

/* Whether v is a constant of numel 1 or n. */
static bool const_n(const kn_value *v, int64_t n) {
    if (!v || !v->constant || !v->constant->data) return false;
    int64_t k = kn_tensor_numel(v->constant);
    return k == 1 || k == n;
}

/* A DequantizeLinear of an 8-bit activation with per-tensor scale and zero point. */
static bool dq_act(const kn_node *d) {
    return d && is8(d->in[0]->type.dtype) && const_n(d->in[1], 1) &&
           !kn_node_attr(d, "block_size") && (d->nin < 3 || !d->in[2] || const_n(d->in[2], 1));
}

/* The axis of per-axis parameters of DequantizeLinear d on a tensor of rank r. */
static int64_t dq_axis(kn_ctx *cx, const kn_node *d, int r) {
    int64_t a = kn_attr_int(cx, d, "axis", 1);
    return a < 0 ? a + r : a;
}

/* A DequantizeLinear of constant 8-bit weights whose scale and zero point are per
 * tensor or per `axis` (n entries). */
static bool dq_weights(kn_ctx *cx, const kn_node *d, int axis, int64_t n) {
    if (!d || !d->in[0]->constant || !is8(d->in[0]->type.dtype) ||
        kn_attr_int(cx, d, "block_size", 0)) /* blocked (opset 21): kept as is */
        return false;
    const kn_value *s = d->in[1], *z = d->nin > 2 ? d->in[2] : NULL;
    if (!const_n(s, n) || (z && !const_n(z, n))) return false;
    bool per = kn_tensor_numel(s->constant) > 1 || (z && kn_tensor_numel(z->constant) > 1);
    return !per || dq_axis(cx, d, d->in[0]->type.rank) == axis;
}

/* The zero point input of DequantizeLinear/QuantizeLinear d, or a new zero constant of
 * dtype t (the operator's default). */
static kn_value *zero_point(kn_rw *rw, const kn_node *d, kn_dtype t) {
    if (d->nin > 2 && d->in[2]) return d->in[2];
    kn_tensor *z = kn_tensor_make(rw->g->arena, t, 0, NULL);
    KN_ASSERT(z);
    return kn_rw_const(rw, d->out[0]->name, "zp", z);
}

/* Whether value b (a bias of m channels) is DequantizeLinear(int32 constant, scale,
 * zero point 0) with scale[c] == (float)(xs * ws[c]); its int32 constant in *out. */
static bool int_bias(const kn_value *b, const kn_value *xs, const kn_value *ws, int64_t m,
                     kn_value **out) {
    const kn_node *d = producer(b, KN_OP_DEQUANTIZELINEAR);
    if (!d || !d->in[0]->constant || d->in[0]->type.dtype != KN_I32 ||
        kn_tensor_numel(d->in[0]->constant) != m || !const_n(d->in[1], m))
        return false;
    const kn_value *z = d->nin > 2 ? d->in[2] : NULL;
    if (z && !const_n(z, m)) return false;
    double x = kn_tensor_get_f64(xs->constant, 0);
    int64_t nw = kn_tensor_numel(ws->constant), nb = kn_tensor_numel(d->in[1]->constant);
    for (int64_t c = 0; c < m; c++) {
        float want = (float)x * (float)kn_tensor_get_f64(ws->constant, nw == 1 ? 0 : c);
        if ((float)kn_tensor_get_f64(d->in[1]->constant, nb == 1 ? 0 : c) != want) return false;
        if (z && kn_tensor_get_f64(z->constant, kn_tensor_numel(z->constant) == 1 ? 0 : c) != 0)
            return false;
    }
    *out = d->in[0];
    return true;
}

/* The bounds of Clip c (constant min and max inputs, or the attributes of opset < 11;
 * an absent one is infinite); false if a bound is not a constant. */
static bool clip_bounds(const kn_node *c, double *lo, double *hi) {
    kn_ctx s;
    kn_ctx_init(&s, NULL);
    if (c->opset < 11) {
        *lo = kn_attr_float(&s, c, "min", -INFINITY);
        *hi = kn_attr_float(&s, c, "max", INFINITY);
        return !kn_failed(&s) && *lo <= *hi;
    }
    if ((c->nin > 1 && c->in[1] && !kn_const_scalar(c->in[1], lo)) ||
        (c->nin > 2 && c->in[2] && !kn_const_scalar(c->in[2], hi)))
        return false;
    return *lo <= *hi;
}

/* QuantizeLinear(b) for output q with zero point z: sat(round_half_even(b / s) + z).
 * Clip before quantization is clamping to these after it (rounding and saturation are
 * monotonic). */
static int64_t quantized_bound(const kn_node *q, const kn_value *z, double b) {
    double s = kn_tensor_get_f64(q->in[1]->constant, 0), zp = kn_tensor_get_f64(z->constant, 0);
    float r = (float)b / (float)s; /* the float32 division QuantizeLinear does */
    double v = nearbyint((double)r) + zp, lo = z->type.dtype == KN_U8 ? 0 : -128;
    v = v < lo ? lo : v > lo + 255 ? lo + 255 : v;
    return (int64_t)v;
}

/* Copies of the attributes of n except those named in `drop` (NULL-terminated), with
 * room for two more (the fixed-point and clamp attributes). */
static void copy_attrs(kn_rw *rw, kn_node *to, const kn_node *from, const char *const *drop) {
    kn_attr *a = kn_arena_array(rw->g->arena, (size_t)from->nattr + 2, sizeof *a);
    KN_ASSERT(a);
    int n = 0;
    for (int i = 0; i < from->nattr; i++) {
        bool skip = false;
        for (int k = 0; drop && drop[k]; k++) skip |= !strcmp(from->attrs[i].name, drop[k]);
        if (!skip) a[n++] = from->attrs[i];
    }
    to->attrs = a;
    to->nattr = n;
}

/* W [n][k] transposed into a new constant [k][n] (Gemm transB). */
static kn_value *transposed(kn_rw *rw, const kn_value *w) {
    const kn_tensor *t = w->constant;
    int64_t n = t->type.dims[0], k = t->type.dims[1], dims[2] = {k, n};
    kn_tensor *o = kn_tensor_make(rw->g->arena, t->type.dtype, 2, dims);
    KN_ASSERT(o);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++)
            kn_tensor_set_f64(o, j * n + i, kn_tensor_get_f64(t, i * k + j));
    return kn_rw_const(rw, w->name, "t", o);
}

/* The [Relu | Clip] between QuantizeLinear q and what it quantizes: *relu is it (read by
 * q alone) or NULL, *clo and *chi a Clip's bounds (infinite where absent). False if q's
 * input is a Clip whose bounds are not constants, or an activation read by others. */
static bool activation(const kn_rw *rw, const kn_node *q, kn_node **relu, double *clo,
                       double *chi) {
    *clo = -INFINITY, *chi = INFINITY;
    *relu = (kn_node *)producer(q->in[0], KN_OP_RELU);
    if (!*relu && (*relu = (kn_node *)producer(q->in[0], KN_OP_CLIP)) &&
        !clip_bounds(*relu, clo, chi))
        return false;
    return !*relu || only(rw, q->in[0], q);
}

/* Node n's output clamp (KN_CLAMP_ATTR) for the Relu or Clip(clo, chi) `relu` folded into
 * it: Relu clamps below at yz (the quantized 0), Clip to [q(clo), q(chi)]. n has room for
 * the attribute (copy_attrs). */
static void add_clamp(kn_rw *rw, kn_node *n, const kn_node *relu, const kn_node *q,
                      const kn_value *yz, double clo, double chi) {
    bool u8 = yz->type.dtype == KN_U8;
    int64_t *b = kn_arena_array(rw->g->arena, 2, sizeof *b);
    KN_ASSERT(b);
    b[0] = u8 ? 0 : -128, b[1] = u8 ? 255 : 127;
    if (relu->op == KN_OP_RELU) clo = 0;
    if (isfinite(clo)) b[0] = quantized_bound(q, yz, clo);
    if (isfinite(chi)) b[1] = quantized_bound(q, yz, chi);
    n->attrs[n->nattr++] =
        (kn_attr){.name = KN_CLAMP_ATTR, .kind = KN_ATTR_INTS, .n = 2, .ints = b};
}

/* A per-tensor float32 scale, finite and positive. */
static bool scale_ok(const kn_value *s) {
    if (!const_n(s, 1) || s->type.dtype != KN_F32) return false;
    double v = kn_tensor_get_f64(s->constant, 0);
    return isfinite(v) && v > 0;
}

/* Rewrites DequantizeLinear(a) + DequantizeLinear(b) [-> Relu | Clip] -> QuantizeLinear
 * ending at q (the residual adds of QDQ ResNets and MobileNets) into kiln's QLinearAdd,
 * which computes the same float32 operations in one pass over the 8-bit inputs
 * (ir/ops/quant.c): the result is the QDQ graph's, bit for bit. */
static bool rewrite_add(kn_rw *rw, kn_node *q) {
    kn_node *relu;
    double clo, chi;
    if (!q->out[0] || !is8(q->out[0]->type.dtype) || !scale_ok(q->in[1]) ||
        (q->nin > 2 && q->in[2] && !const_n(q->in[2], 1)) || !activation(rw, q, &relu, &clo, &chi))
        return false;
    kn_value *y = relu ? relu->in[0] : q->in[0];
    kn_node *op = y ? (kn_node *)y->producer : NULL;
    if (!op || op->op != KN_OP_ADD || op->nout != 1 || !only(rw, y, relu ? relu : q) ||
        y->type.dtype != KN_F32 || kn_node_attr(op, KN_ATTR_EPILOGUE) || op->in[0] == op->in[1])
        return false;
    const kn_node *da = producer(op->in[0], KN_OP_DEQUANTIZELINEAR);
    const kn_node *db = producer(op->in[1], KN_OP_DEQUANTIZELINEAR);
    if (!dq_act(da) || !dq_act(db) || !scale_ok(da->in[1]) || !scale_ok(db->in[1]) ||
        da->out[0]->type.dtype != KN_F32 || db->out[0]->type.dtype != KN_F32)
        return false;
    kn_value *in[8] = {da->in[0],
                       da->in[1],
                       zero_point(rw, da, da->in[0]->type.dtype),
                       db->in[0],
                       db->in[1],
                       zero_point(rw, db, db->in[0]->type.dtype),
                       q->in[1],
                       zero_point(rw, q, KN_U8)};
    if (in[2]->type.dtype != in[0]->type.dtype || in[5]->type.dtype != in[3]->type.dtype ||
        in[7]->type.dtype != q->out[0]->type.dtype)
        return false; /* a bad model: left to the operators' checks */
    kn_value *out = q->out[0];
    kn_node *n = kn_rw_node(rw, q->id, KN_OP_QLINEARADD, op->name, 8, in, 1, &out);
    copy_attrs(rw, n, op, NULL);
    /* --quantize's own add (its QuantizeLinear carries KN_PTQ_ATTR): fixed point */
    if (kn_node_attr(q, KN_PTQ_ATTR))
        n->attrs[n->nattr++] = (kn_attr){.name = KN_FIXED_POINT_ATTR, .kind = KN_ATTR_INT, .i = 1};
    kn_rw_kill(rw, q);
    kn_rw_kill(rw, op);
    if (relu) {
        kn_rw_kill(rw, relu);
        add_clamp(rw, n, relu, q, in[7], clo, chi);
    }
    const kn_node *dqs[2] = {da, db};
    for (int i = 0; i < 2; i++)
        if (!kn_rw_dead(rw, dqs[i]) && !kn_rw_uses(rw, dqs[i]->out[0]))
            kn_rw_kill(rw, (kn_node *)dqs[i]);
    return true;
}

/* Whether per-tensor constants a and b (scales or zero points) hold the same value in
 * the same type (b NULL: the operator's default zero point 0 of type t). */
static bool same_const(const kn_value *a, const kn_value *b, kn_dtype t) {
    kn_dtype ta = a ? a->type.dtype : t, tb = b ? b->type.dtype : t;
    double va = a ? kn_tensor_get_f64(a->constant, 0) : 0,
           vb = b ? kn_tensor_get_f64(b->constant, 0) : 0;
    return ta == tb && va == vb;
}

/* Rewrites DequantizeLinear(xq, s, z) -> MaxPool -> QuantizeLinear(s, z) ending at q (a
 * ResNet's pool after its stem, same scale and zero point on both sides, as `kiln
 * quantize` and ONNX Runtime's quantizer write it) into MaxPool(xq) on the 8-bit values.
 * Exact: the maximum commutes with the nondecreasing map v -> Q(DQ(v)), which is the
 * identity on the type's range when both sides share s and z (|(v - z) * s / s - (v - z)|
 * stays far below one half in float32 for |v - z| <= 255). */
static bool rewrite_maxpool(kn_rw *rw, kn_node *q) {
    if (!q->out[0] || !is8(q->out[0]->type.dtype) || !scale_ok(q->in[1]) ||
        (q->nin > 2 && q->in[2] && !const_n(q->in[2], 1)))
        return false;
    kn_value *y = q->in[0];
    kn_node *op = y ? (kn_node *)y->producer : NULL;
    if (!op || op->op != KN_OP_MAXPOOL || op->nout != 1 || !only(rw, y, q) ||
        y->type.dtype != KN_F32 || kn_node_attr(op, KN_ATTR_EPILOGUE))
        return false;
    const kn_node *d = producer(op->in[0], KN_OP_DEQUANTIZELINEAR);
    kn_dtype t = q->out[0]->type.dtype;
    if (!dq_act(d) || d->in[0]->type.dtype != t || d->out[0]->type.dtype != KN_F32 ||
        !scale_ok(d->in[1]) || !same_const(d->in[1], q->in[1], KN_F32) ||
        !same_const(d->nin > 2 ? d->in[2] : NULL, q->nin > 2 ? q->in[2] : NULL, t))
        return false;
    kn_value *in[1] = {d->in[0]}, *out = q->out[0];
    kn_node *n = kn_rw_node(rw, q->id, KN_OP_MAXPOOL, op->name, 1, in, 1, &out);
    copy_attrs(rw, n, op, NULL);
    kn_rw_kill(rw, q);
    kn_rw_kill(rw, op);
    if (!kn_rw_dead(rw, d) && !kn_rw_uses(rw, d->out[0])) kn_rw_kill(rw, (kn_node *)d);
    return true;
}

/* Rewrites the pattern ending at QuantizeLinear q, if it is one. A quantized
 * contraction it cannot take (its DequantizeLinear inputs and QuantizeLinear output
 * are there) sets *kept to it and *why to the reason: it stays in float. */
static bool rewrite(kn_rw *rw, kn_node *q, const kn_node **kept, const char **why) {
    kn_ctx scratch;
    kn_ctx_init(&scratch, rw->cx->file);
    if (!q->out[0] || !is8(q->out[0]->type.dtype) || !const_n(q->in[1], 1) ||
        (q->nin > 2 && q->in[2] && !const_n(q->in[2], 1)))
        return false;
    kn_node *relu, *op;
    double clo, chi; /* a Clip's bounds (Relu6 and the like) */
    if (!activation(rw, q, &relu, &clo, &chi)) return false;
    kn_value *y = relu ? relu->in[0] : q->in[0];
    op = y ? (kn_node *)y->producer : NULL;
    if (!op || !only(rw, y, relu ? relu : q) || op->nout != 1) return false;
    bool conv = op->op == KN_OP_CONV, gemm = op->op == KN_OP_GEMM;
    if (!conv && !gemm && op->op != KN_OP_MATMUL) return false;
    if (kn_node_attr(op, KN_ATTR_EPILOGUE)) return false; /* a float activation fused into it */
    const kn_node *dx = producer(op->in[0], KN_OP_DEQUANTIZELINEAR);
    const kn_node *dw = producer(op->in[1], KN_OP_DEQUANTIZELINEAR);
    if (!dq_act(dx) || !dw || !dw->in[0]->constant || dw->in[0]->type.rank < 2) return false;
    const kn_value *w = dw->in[0];
    bool transb = false;
    *kept = op;
    if (gemm) {
        transb = kn_attr_int(&scratch, op, "transB", 0) != 0;
        *why = "a Gemm with transA, alpha other than 1 or a bias with beta other than 1 has "
               "no integer form here";
        if (kn_attr_int(&scratch, op, "transA", 0) ||
            kn_attr_float(&scratch, op, "alpha", 1) != 1 ||
            (op->nin > 2 && op->in[2] && kn_attr_float(&scratch, op, "beta", 1) != 1) ||
            kn_failed(&scratch))
            return false;
    }
    *why = "its weights are not a matrix";
    if (!conv && w->type.rank != 2) return false;
    /* output channels: Conv W[m][...] axis 0; MatMul B[k][n] axis 1; Gemm transB B[n][k] 0 */
    int64_t m = conv || transb ? w->type.dims[0] : w->type.dims[1];
    *why = "its weights' scales are not one per tensor or per output channel";
    if (!dq_weights(&scratch, dw, conv || transb ? 0 : 1, m) || kn_failed(&scratch)) return false;
    kn_value *bias = NULL;
    *why = "its bias is not int32 at scale x_scale * w_scale";
    if (op->nin > 2 && op->in[2] && !int_bias(op->in[2], dx->in[1], dw->in[1], m, &bias))
        return false;
    *why = NULL;
    kn_value *in[9] = {dx->in[0],
                       dx->in[1],
                       zero_point(rw, dx, KN_U8),
                       transb ? transposed(rw, w) : (kn_value *)w,
                       dw->in[1],
                       zero_point(rw, dw, w->type.dtype),
                       q->in[1],
                       zero_point(rw, q, KN_U8),
                       bias};
    if (in[2]->type.dtype != dx->in[0]->type.dtype || in[7]->type.dtype != q->out[0]->type.dtype)
        return false; /* a bad model: left to the operators' checks (no warning) */
    kn_value *out = q->out[0];
    kn_node *n = kn_rw_node(rw, q->id, conv ? KN_OP_QLINEARCONV : KN_OP_QLINEARMATMUL, op->name,
                            bias ? 9 : 8, in, 1, &out);
    copy_attrs(rw, n, op,
               conv ? NULL : (const char *const[]){"transA", "transB", "alpha", "beta", NULL});
    n->attrs[n->nattr++] = (kn_attr){.name = KN_FIXED_POINT_ATTR, .kind = KN_ATTR_INT, .i = 1};
    kn_rw_kill(rw, q);
    kn_rw_kill(rw, op);
    if (relu) kn_rw_kill(rw, relu);
    if (relu) add_clamp(rw, n, relu, q, in[7], clo, chi);
    /* the DequantizeLinear nodes left without readers go too */
    const kn_node *dqs[3] = {dx, dw, bias ? op->in[2]->producer : NULL};
    for (int i = 0; i < 3; i++)
        if (dqs[i] && !kn_rw_dead(rw, dqs[i]) && !kn_rw_uses(rw, dqs[i]->out[0]))
            kn_rw_kill(rw, (kn_node *)dqs[i]);
    return true;
}

kn_status kn_pass_qdq(kn_ctx *cx, kn_graph *g) {
    kn_rw rw;
    if (kn_rw_begin(&rw, cx, g))
        for (int i = 0; i < rw.n0; i++) {
            kn_node *n = g->nodes[i];
            const kn_node *kept = NULL;
            const char *why = NULL;
            if (!kn_rw_dead(&rw, n) && n->op == KN_OP_QUANTIZELINEAR && !rewrite_add(&rw, n) &&
                !rewrite_maxpool(&rw, n) && !rewrite(&rw, n, &kept, &why) && kept && why)
                kn_warn(cx, kept,
                        "kept in float between its DequantizeLinear and QuantizeLinear: %s", why);
        }
    kn_rw_end(&rw);
    return KN_OK;
}
