/* Operators of group 'quant': linear (de)quantization and the integer and
 * quantized-linear MatMul and Conv. See ir/ops.h for the infer/eval contract.
 *
 * Everything here must be bit-exact. Integer parts (zero-point subtraction, dot
 * products) run in int64_t; requantization `saturate(round(acc * sa * sb / sy) + zy)`
 * runs in double and rounds with nearbyint(), half to even under the default rounding
 * mode, except in nodes marked for fixed-point requantization (ir/requant.h: the
 * QLinear nodes the qdq pass makes), which multiply by an integer and shift. QuantizeLinear and
 * DynamicQuantizeLinear on float32 divide in float, as the ONNX reference (numpy float32) and
 * onnxruntime do, so that exact .5 quotients round the same way. Zero points and scales are per
 * tensor (one element) or per axis: per `axis` channel for (De)QuantizeLinear, per output channel
 * for the Conv weights, per row of A and per column of B for the MatMuls. Every operand is first
 * expanded into an int64 array with its zero point subtracted, so the kernels below see plain
 * integer tensors. Padding in the convolutions contributes 0 after zero-point
 * subtraction (the padded value is the zero point). */
#include "ir/epilogue.h"
#include "ir/ops/nn_attrs.h"
#include "ir/ops/quant_attrs.h"
#include "ir/requant.h"

#include <math.h>
#include <string.h>

#define KN_DT_Q8 (KN_DT(U8) | KN_DT(I8))
/* QuantizeLinear's outputs and DequantizeLinear's inputs besides int32 (opsets 19, 21) */
#define KN_DT_QOUT (KN_DT_Q8 | KN_DT_F8 | KN_DT_4BIT)

/* Lowest and highest values of a (<= 32-bit) integer type, as doubles. */
static void int_range(kn_dtype t, double *lo, double *hi) {
    const kn_dtype_info *di = kn_dtype_get(t);
    double span = ldexp(1.0, kn_dtype_is_4bit(t) ? 4 : (int)di->size * 8);
    *lo = di->is_signed ? -span / 2 : 0;
    *hi = di->is_signed ? span / 2 - 1 : span - 1;
}

/* Rounds v half to even, adds zp and saturates to type t. */
static double requant(double v, double zp, kn_dtype t) {
    double lo, hi;
    int_range(t, &lo, &hi);
    double r = nearbyint(v) + zp;
    if (isnan(r)) return 0;
    return r < lo ? lo : r > hi ? hi : r;
}

/* The range a fixed-point node's outputs of type t are clamped to (kn_fixed_clamp). */
static void fixed_range(const kn_node *n, kn_dtype t, double *lo, double *hi) {
    int64_t l, h;
    int_range(t, lo, hi);
    kn_fixed_clamp(n, (int64_t)*lo, (int64_t)*hi, &l, &h);
    *lo = (double)l, *hi = (double)h;
}

static double clamp(double v, double lo, double hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

static kn_status need_numel(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i, int64_t want,
                            const char *what) {
    int64_t got = kn_type_numel(&t->type);
    if (got >= 0 && want >= 0 && got != want)
        return kn_diag(cx, n, KN_EINVAL, "input %d (%s) has %lld elements, expected %lld", i, what,
                       (long long)got, (long long)want);
    return KN_OK;
}

/* ---- QuantizeLinear, DequantizeLinear ---- */

/* The checks of blocked parameters (opset 21, block_size b > 0): scale s has x's rank
 * and dims but along axis, where it has ceil(D / b) (ONNX's accepted range of b for
 * that extent); the zero point, if any, has s's shape. */
static kn_status qblock_check(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int axis,
                              int64_t b) {
    const kn_type *x = &in[0]->type, *s = &in[1]->type;
    if (b < 0) return kn_diag(cx, n, KN_EINVAL, "block_size is %lld", (long long)b);
    if (x->rank < 0 || s->rank < 0) return KN_OK;
    if (s->rank != x->rank)
        return kn_diag(cx, n, KN_EINVAL, "blocked scale has rank %d, input %d", s->rank, x->rank);
    for (int d = 0; d < x->rank; d++) {
        if (x->dims[d] < 0 || s->dims[d] < 0) continue;
        int64_t want = d == axis ? (x->dims[d] + b - 1) / b : x->dims[d];
        if (s->dims[d] != want)
            return kn_diag(cx, n, KN_EINVAL,
                           "blocked scale has %lld elements along axis %d, expected %lld",
                           (long long)s->dims[d], d, (long long)want);
    }
    const kn_type *z = n->nin > 2 && in[2] ? &in[2]->type : NULL;
    bool same = !z || z->rank < 0 || z->rank == s->rank;
    for (int d = 0; same && z && d < z->rank; d++) same = z->dims[d] == s->dims[d];
    if (!same) return kn_diag(cx, n, KN_EINVAL, "zero point and blocked scale differ in shape");
    return KN_OK;
}

/* Checks that scale in[1] and zero point in[2] fit x in[0]; sets *axis to the
 * per-axis channel dim or -1 for per-tensor, and *block to block_size (0: not blocked). */
static kn_status qparams_check(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int *axis,
                               int64_t *block) {
    const kn_type *x = &in[0]->type, *s = &in[1]->type;
    int64_t a = kn_attr_int(cx, n, "axis", 1);
    *block = kn_attr_int(cx, n, "block_size", 0); /* opset 21 */
    if (kn_failed(cx)) return cx->status;
    *axis = -1;
    if (*block) {
        if (x->rank < 0) return KN_OK;
        kn_status st = kn_axis(cx, n, a, x->rank, 0, axis);
        return st ? st : qblock_check(cx, n, in, *axis, *block);
    }
    if (n->nin > 2 && in[2] && kn_type_numel(&in[2]->type) >= 0 && kn_type_numel(s) >= 0 &&
        kn_type_numel(&in[2]->type) != kn_type_numel(s))
        return kn_diag(cx, n, KN_EINVAL, "scale and zero point sizes differ");
    if (s->rank < 0 || (s->rank <= 1 && kn_type_numel(s) == 1)) return KN_OK;
    if (s->rank != 1)
        return kn_diag(cx, n, KN_EINVAL, "scale must be a scalar or 1-D, has rank %d", s->rank);
    if (x->rank < 0) return KN_OK;
    kn_status st = kn_axis(cx, n, a, x->rank, 0, axis);
    if (st) return st;
    if (x->dims[*axis] >= 0 && s->dims[0] >= 0 && s->dims[0] != x->dims[*axis])
        return kn_diag(cx, n, KN_EINVAL, "scale has %lld elements, axis %d has %lld",
                       (long long)s->dims[0], *axis, (long long)x->dims[*axis]);
    return KN_OK;
}

/* Index into the scale/zero point s for element i of x (per-axis, per-tensor, or per
 * block of `block` elements along axis). */
static size_t qparam_index(const kn_tensor *x, const kn_tensor *s, int axis, int64_t block,
                           int64_t i) {
    if (axis < 0) return 0;
    if (block) { /* x's coordinates, the axis one divided by block, flattened over s */
        int64_t at = 0, rem = i, stride = 1;
        for (int d = x->type.rank - 1; d >= 0; d--) {
            int64_t c = rem % x->type.dims[d];
            rem /= x->type.dims[d];
            at += (d == axis ? c / block : c) * stride;
            stride *= s->type.dims[d];
        }
        return (size_t)at;
    }
    int64_t inner = 1;
    for (int d = axis + 1; d < x->type.rank; d++) inner *= x->type.dims[d];
    return (size_t)((i / inner) % x->type.dims[axis]);
}

static kn_status infer_quantize(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT | KN_DT(I32));
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT))) return st;
    kn_dtype yt = KN_U8;
    int64_t odt = kn_attr_int(cx, n, "output_dtype", 0); /* opset 21 */
    if (kn_failed(cx)) return cx->status;
    if (odt && (odt <= 0 || odt >= 32 || !(KN_DT_QOUT & (1u << odt)))) {
        const char *name = kn_onnx_type_name((int)odt);
        if (name)
            return kn_diag(cx, n, KN_EUNSUPPORTED,
                           "output_dtype %s is not supported (8-bit, 4-bit and float8 types are)",
                           name);
        return kn_diag(cx, n, KN_EUNSUPPORTED, "output_dtype %lld is not supported",
                       (long long)odt);
    }
    if (odt) yt = (kn_dtype)odt;
    kn_attr_int(cx, n, "saturate", 1); /* opset 19: float8 outputs */
    if (kn_failed(cx)) return cx->status;
    if (n->nin > 2 && in[2]) {
        if ((st = kn_check_dtype(cx, n, in[2], 2, KN_DT_QOUT))) return st;
        if (odt && in[2]->type.dtype != yt)
            return kn_diag(cx, n, KN_EINVAL, "output_dtype differs from the zero point's type");
        yt = in[2]->type.dtype;
    }
    int axis;
    int64_t block;
    if ((st = qparams_check(cx, n, in, &axis, &block))) return st;
    out[0] = in[0]->type;
    out[0].dtype = yt;
    return KN_OK;
}

static kn_status eval_quantize(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    int axis;
    int64_t block;
    kn_status st = infer_quantize(cx, n, in, &yt);
    if (st || (st = qparams_check(cx, n, in, &axis, &block))) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_tensor *x = in[0], *s = in[1], *z = n->nin > 2 ? in[2] : NULL;
    int in_float = x->type.dtype != KN_F64 && x->type.dtype != KN_I32 && s->type.dtype != KN_F64;
    bool f8 = kn_dtype_is_f8(yt.dtype), saturate = kn_attr_int(cx, n, "saturate", 1) != 0;
    for (int64_t i = 0; i < kn_tensor_numel(x); i++) {
        size_t p = qparam_index(x, s, axis, block, i);
        double xv = kn_load_f64(x->data, x->type.dtype, (size_t)i);
        double sv = kn_load_f64(s->data, s->type.dtype, p);
        double q = in_float ? (double)((float)xv / (float)sv) : xv / sv;
        if (f8) { /* the cast rounds: x / scale + zp (a float8 zero point is 0 by the spec) */
            double zp = z ? kn_load_f64(z->data, z->type.dtype, p) : 0;
            ((uint8_t *)y->data)[i] = kn_f8_encode(q + zp, kn_f8_kind_of(yt.dtype), saturate);
            continue;
        }
        double zp = z ? (double)kn_load_i64(z->data, z->type.dtype, p) : 0;
        kn_store_f64(y->data, yt.dtype, (size_t)i, requant(q, zp, yt.dtype));
    }
    return KN_OK;
}

static kn_status infer_dequantize(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_QOUT | KN_DT(I32));
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT))) return st;
    if (n->nin > 2 && in[2]) {
        if ((st = kn_check_dtype(cx, n, in[2], 2, KN_DT_QOUT | KN_DT(I32)))) return st;
        if (in[2]->type.dtype != in[0]->type.dtype)
            return kn_diag(cx, n, KN_EINVAL, "zero point type %s differs from input type %s",
                           kn_dtype_name(in[2]->type.dtype), kn_dtype_name(in[0]->type.dtype));
    }
    int axis;
    int64_t block;
    if ((st = qparams_check(cx, n, in, &axis, &block))) return st;
    out[0] = in[0]->type;
    out[0].dtype = in[1]->type.dtype;
    return KN_OK;
}

static kn_status eval_dequantize(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                 kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    int axis;
    int64_t block;
    kn_status st = infer_dequantize(cx, n, in, &yt);
    if (st || (st = qparams_check(cx, n, in, &axis, &block))) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_tensor *x = in[0], *s = in[1], *z = n->nin > 2 ? in[2] : NULL;
    for (int64_t i = 0; i < kn_tensor_numel(x); i++) {
        size_t p = qparam_index(x, s, axis, block, i);
        if (kn_dtype_is_f8(x->type.dtype)) { /* (value - zero point value) * scale */
            double d = kn_load_f64(x->data, x->type.dtype, (size_t)i) -
                       (z ? kn_load_f64(z->data, z->type.dtype, p) : 0);
            kn_store_f64(y->data, yt.dtype, (size_t)i, d * kn_load_f64(s->data, s->type.dtype, p));
            continue;
        }
        int64_t zp = z ? kn_load_i64(z->data, z->type.dtype, p) : 0;
        int64_t d = kn_load_i64(x->data, x->type.dtype, (size_t)i) - zp;
        kn_store_f64(y->data, yt.dtype, (size_t)i,
                     (double)d * kn_load_f64(s->data, s->type.dtype, p));
    }
    return KN_OK;
}

/* ---- DynamicQuantizeLinear ---- */

static kn_status infer_dynquant(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT(F32));
    if (st) return st;
    out[0] = in[0]->type;
    out[0].dtype = KN_U8;
    out[1] = kn_type_scalar(KN_F32);
    out[2] = kn_type_scalar(KN_U8);
    return KN_OK;
}

/* The ONNX formula, in float32 as the spec's numpy reference computes it:
 * scale = (max(0, max x) - min(0, min x)) / 255, zp = saturate(round(-min / scale)),
 * y = saturate(round(x / scale) + zp). An all-zero input gives scale 0, zp 0, y 0. */
static kn_status eval_dynquant(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt[3];
    kn_status st = infer_dynquant(cx, n, in, yt);
    if (st) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt[0]);
    kn_tensor *ys = y ? kn_ensure_output(ex, n, out, 1, &yt[1]) : NULL;
    kn_tensor *yz = ys ? kn_ensure_output(ex, n, out, 2, &yt[2]) : NULL;
    if (!yz) return cx->status;
    const float *x = in[0]->data;
    int64_t nx = kn_tensor_numel(in[0]);
    float mn = 0, mx = 0;
    for (int64_t i = 0; i < nx; i++) {
        if (x[i] < mn) mn = x[i];
        if (x[i] > mx) mx = x[i];
    }
    float scale = (mx - mn) / 255.0f;
    double zp = 0;
    if (scale != 0) zp = requant((double)((0.0f - mn) / scale), 0, KN_U8);
    ((float *)ys->data)[0] = scale;
    ((uint8_t *)yz->data)[0] = (uint8_t)zp;
    for (int64_t i = 0; i < nx; i++) {
        double q = scale != 0 ? requant((double)(x[i] / scale), zp, KN_U8) : 0;
        ((uint8_t *)y->data)[i] = (uint8_t)q;
    }
    return KN_OK;
}

/* ---- Operand expansion ---- */

/* For each element of operand x, the index of its parameter (zero point or scale) in
 * p: p has one element (per tensor), or is 1-D and indexed by the operand's dim `dim`
 * (a row of A, a column of B, an output channel of W), or broadcasts to x's shape
 * (e.g. [D1, D2, M, 1] for A). idx has numel(x) entries. */
static kn_status param_index(kn_ctx *cx, const kn_node *n, const kn_type *x, const kn_tensor *p,
                             int pi, int dim, int64_t *idx) {
    int64_t nx = kn_type_numel(x), np = kn_tensor_numel(p);
    if (np == 1 || nx == 0) {
        for (int64_t i = 0; i < nx; i++) idx[i] = 0;
        return KN_OK;
    }
    if (p->type.rank == 1 && dim >= 0 && dim < x->rank && np == x->dims[dim]) {
        int64_t inner = 1;
        for (int d = dim + 1; d < x->rank; d++) inner *= x->dims[d];
        for (int64_t i = 0; i < nx; i++) idx[i] = (i / inner) % x->dims[dim];
        return KN_OK;
    }
    int ok = p->type.rank <= x->rank;
    for (int d = 0; ok && d < p->type.rank; d++) {
        int64_t e = p->type.dims[d], f = x->dims[x->rank - p->type.rank + d];
        ok = e == 1 || e == f;
    }
    if (!ok) {
        char b1[128], b2[128];
        return kn_diag(cx, n, KN_EINVAL, "input %d of shape %s does not fit operand of shape %s",
                       pi, kn_type_str(&p->type, b1, sizeof b1), kn_type_str(x, b2, sizeof b2));
    }
    int64_t str[KN_MAX_RANK];
    kn_bcast_strides(&p->type, x->rank, x->dims, str);
    for (int64_t i = 0; i < nx; i++) idx[i] = kn_bcast_offset(i, x->rank, x->dims, str);
    return KN_OK;
}

/* x's elements minus their zero points (zp may be NULL). zi is zp's input number and
 * dim as for param_index. Returns NULL after reporting on failure. */
static int64_t *operand_i64(kn_exec *ex, const kn_node *n, const kn_tensor *x, const kn_tensor *zp,
                            int zi, int dim) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    int64_t nx = kn_tensor_numel(x);
    int64_t *v = kn_arena_array(a, (size_t)nx + 1, sizeof *v);
    int64_t *idx = kn_arena_array(a, (size_t)nx + 1, sizeof *idx);
    if (!v || !idx) {
        kn_diag(cx, n, KN_ELIMIT, "input too large");
        return NULL;
    }
    if (zp && param_index(cx, n, &x->type, zp, zi, dim, idx)) return NULL;
    for (int64_t i = 0; i < nx; i++) {
        v[i] = kn_load_i64(x->data, x->type.dtype, (size_t)i);
        if (zp) v[i] -= kn_load_i64(zp->data, zp->type.dtype, (size_t)idx[i]);
    }
    return v;
}

/* ---- MatMul shapes and kernel (numpy matmul semantics) ---- */

static kn_type batch_type(const kn_type *t) {
    kn_type b = *t;
    b.rank = t->rank > 2 ? t->rank - 2 : 0;
    return b;
}

static kn_status matmul_type(kn_ctx *cx, const kn_node *n, const kn_type *a, const kn_type *b,
                             kn_dtype dt, kn_type *out) {
    if (a->rank < 0 || b->rank < 0) {
        *out = kn_type_unknown(dt);
        return KN_OK;
    }
    if (a->rank == 0 || b->rank == 0)
        return kn_diag(cx, n, KN_EINVAL, "matmul operands must have rank >= 1");
    int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return kn_diag(cx, n, KN_EINVAL, "matmul inner dims differ: %lld and %lld", (long long)ka,
                       (long long)kb);
    kn_type ba = batch_type(a), bb = batch_type(b);
    const kn_type *bt[2] = {&ba, &bb};
    *out = kn_type_make(dt, 0, NULL);
    kn_status st = kn_broadcast(cx, n, 2, bt, out);
    if (st) return st;
    out->dtype = dt;
    if (a->rank >= 2) {
        out->dims[out->rank] = a->dims[a->rank - 2];
        out->sym[out->rank++] = a->sym[a->rank - 2];
    }
    if (b->rank >= 2) {
        out->dims[out->rank] = b->dims[b->rank - 1];
        out->sym[out->rank++] = b->sym[b->rank - 1];
    }
    return KN_OK;
}

typedef struct mm_geom {
    int64_t M, K, N, nbatch;
    kn_type bt;                                   /* broadcast batch shape */
    int64_t astr[KN_MAX_RANK], bstr[KN_MAX_RANK]; /* batch strides, in matrices */
} mm_geom;

static void mm_geom_make(const kn_type *a, const kn_type *b, const kn_type *y, mm_geom *g) {
    g->M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    g->K = a->dims[a->rank - 1];
    g->N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    g->bt = *y;
    g->bt.rank = y->rank - (a->rank >= 2) - (b->rank >= 2);
    g->nbatch = kn_type_numel(&g->bt);
    kn_type ba = batch_type(a), bb = batch_type(b);
    kn_bcast_strides(&ba, g->bt.rank, g->bt.dims, g->astr);
    kn_bcast_strides(&bb, g->bt.rank, g->bt.dims, g->bstr);
}

/* acc[batch, m, n] = sum_k a[batch, m, k] * b[batch, k, n]. Also returns in arow[o]
 * the element index of a[batch, m, 0] and in bcol[o] that of b[batch, 0, n], for
 * per-row/column scales (both may be NULL). */
static void matmul_i64(const mm_geom *g, const int64_t *a, const int64_t *b, int64_t *acc,
                       int64_t *arow, int64_t *bcol) {
    for (int64_t bi = 0; bi < g->nbatch; bi++) {
        int64_t ab = kn_bcast_offset(bi, g->bt.rank, g->bt.dims, g->astr) * g->M * g->K;
        int64_t bb = kn_bcast_offset(bi, g->bt.rank, g->bt.dims, g->bstr) * g->K * g->N;
        for (int64_t m = 0; m < g->M; m++) {
            for (int64_t j = 0; j < g->N; j++) {
                int64_t s = 0;
                for (int64_t k = 0; k < g->K; k++) s += a[ab + m * g->K + k] * b[bb + k * g->N + j];
                int64_t o = (bi * g->M + m) * g->N + j;
                acc[o] = s;
                if (arow) arow[o] = ab + m * g->K;
                if (bcol) bcol[o] = bb + j;
            }
        }
    }
}

/* ---- MatMulInteger ---- */

/* The output dtype of MatMulInteger and ConvInteger: int32, or float32 where the dynq
 * pass (passes/dynq.c) fused the float tail of a dynamically quantized layer into the
 * node's epilogue (kn.epilogue): y = the steps on float32(int32 accumulator), each step
 * rounded to float32 as the unfused Cast, Mul, Add and Relu are (ir/epilogue.c). */
static kn_dtype int_out(const kn_node *n) {
    return kn_node_attr(n, KN_ATTR_EPILOGUE) ? KN_F32 : KN_I32;
}

/* acc (int64, exact) into y: wrapped to int32 as the operator's output, then converted to
 * y's dtype (float32 for a fused tail: the Cast's rounding to nearest even). */
static void store_acc(kn_tensor *y, const int64_t *acc) {
    int64_t n = kn_tensor_numel(y);
    for (int64_t i = 0; i < n; i++) {
        int32_t v = (int32_t)(uint32_t)(uint64_t)acc[i];
        if (y->type.dtype == KN_F32)
            ((float *)y->data)[i] = (float)v;
        else
            kn_store_i64(y->data, y->type.dtype, (size_t)i, v);
    }
}

static kn_status infer_matmulint(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_Q8);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT_Q8))) return st;
    for (int i = 2; i < kn_node_op_inputs(n) && i < 4; i++) {
        if (!in[i]) continue;
        /* a_zero_point has A's type, b_zero_point B's */
        if ((st = kn_check_dtype(cx, n, in[i], i, 1u << in[i - 2]->type.dtype))) return st;
    }
    return matmul_type(cx, n, &in[0]->type, &in[1]->type, int_out(n), out);
}

static kn_status eval_matmulint(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_matmulint(cx, n, in, &yt);
    if (st) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_type *ta = &in[0]->type, *tb = &in[1]->type;
    int64_t *a = operand_i64(ex, n, in[0], n->nin > 2 ? in[2] : NULL, 2, ta->rank - 2);
    int64_t *b = a ? operand_i64(ex, n, in[1], n->nin > 3 ? in[3] : NULL, 3, tb->rank - 1) : NULL;
    if (!b) return cx->status;
    if (tb->rank == 1 && n->nin > 3 && in[3] && kn_tensor_numel(in[3]) != 1)
        return kn_diag(cx, n, KN_EINVAL, "b_zero_point must be a scalar for 1-D B");
    mm_geom g;
    mm_geom_make(ta, tb, &yt, &g);
    int64_t *acc = kn_arena_array(kn_exec_arena(ex), (size_t)kn_tensor_numel(y) + 1, sizeof *acc);
    if (!acc) return kn_diag(cx, n, KN_ELIMIT, "output too large");
    matmul_i64(&g, a, b, acc, NULL, NULL);
    store_acc(y, acc);
    return KN_OK;
}

/* ---- QLinearMatMul ---- */

/* The operand types QLinearMatMul and QLinearConv share: (x, x_scale, x_zero_point,
 * w, w_scale, w_zero_point, y_scale, y_zero_point), scales float, the others 8-bit, each
 * zero point of its operand's type. */
static kn_status check_qlinear_types(kn_ctx *cx, const kn_node *n, kn_tensor *const *in) {
    kn_status st;
    for (int i = 0; i < 8; i++) {
        unsigned mask = (i == 1 || i == 4 || i == 6) ? KN_DT_FLOAT : KN_DT_Q8;
        if ((st = kn_check_dtype(cx, n, in[i], i, mask))) return st;
    }
    if (in[2]->type.dtype != in[0]->type.dtype || in[5]->type.dtype != in[3]->type.dtype)
        return kn_diag(cx, n, KN_EINVAL, "zero point types must match their operands");
    return KN_OK;
}

static kn_status infer_qlinearmatmul(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                     kn_type *out) {
    kn_status st = check_qlinear_types(cx, n, in);
    if (st) return st;
    if ((st = need_numel(cx, n, in[6], 6, 1, "y_scale")) ||
        (st = need_numel(cx, n, in[7], 7, 1, "y_zero_point")))
        return st;
    /* kiln's 9th input (not ONNX's): an int32 bias per column of 2-D B, as QLinearConv's
     * B, which the qdq pass gives a Gemm with a bias */
    const kn_tensor *b = n->nin > 8 ? in[8] : NULL;
    if (b && (b->type.dtype != KN_I32 || b->type.rank != 1 || in[3]->type.rank != 2 ||
              (b->type.dims[0] >= 0 && in[3]->type.dims[1] >= 0 &&
               b->type.dims[0] != in[3]->type.dims[1])))
        return kn_diag(cx, n, KN_EINVAL,
                       "input 8 (bias) must be int32 with one element per column of a 2-D B");
    return matmul_type(cx, n, &in[0]->type, &in[3]->type, in[7]->type.dtype, out);
}

static kn_status eval_qlinearmatmul(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                    kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_qlinearmatmul(cx, n, in, &yt);
    if (st) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_type *ta = &in[0]->type, *tb = &in[3]->type;
    kn_arena *ar = kn_exec_arena(ex);
    int64_t na = kn_tensor_numel(in[0]), nb = kn_tensor_numel(in[3]), ny = kn_tensor_numel(y);
    int64_t *a = operand_i64(ex, n, in[0], in[2], 2, ta->rank - 2);
    int64_t *b = a ? operand_i64(ex, n, in[3], in[5], 5, tb->rank - 1) : NULL;
    int64_t *sa = kn_arena_array(ar, (size_t)na + 1, sizeof *sa);
    int64_t *sb = kn_arena_array(ar, (size_t)nb + 1, sizeof *sb);
    int64_t *acc = kn_arena_array(ar, (size_t)ny + 1, sizeof *acc);
    int64_t *arow = kn_arena_array(ar, (size_t)ny + 1, sizeof *arow);
    int64_t *bcol = kn_arena_array(ar, (size_t)ny + 1, sizeof *bcol);
    if (!b) return cx->status;
    if (!sa || !sb || !acc || !arow || !bcol) return kn_diag(cx, n, KN_ELIMIT, "output too large");
    if ((st = param_index(cx, n, ta, in[1], 1, ta->rank - 2, sa)) ||
        (st = param_index(cx, n, tb, in[4], 4, tb->rank - 1, sb)))
        return st;
    mm_geom g;
    mm_geom_make(ta, tb, &yt, &g);
    matmul_i64(&g, a, b, acc, arow, bcol);
    double ys = kn_load_f64(in[6]->data, in[6]->type.dtype, 0);
    double yz = (double)kn_load_i64(in[7]->data, in[7]->type.dtype, 0);
    bool fixed = kn_fixed_point(n);
    double clo, chi;
    fixed_range(n, yt.dtype, &clo, &chi);
    for (int64_t o = 0; o < ny; o++) {
        /* With K = 0 there is no a[.., m, 0]: acc is 0, any scale gives y = yz. */
        double as = g.K ? kn_load_f64(in[1]->data, in[1]->type.dtype, (size_t)sa[arow[o]]) : 1;
        double bs = g.K ? kn_load_f64(in[4]->data, in[4]->type.dtype, (size_t)sb[bcol[o]]) : 1;
        int64_t t = acc[o];
        if (n->nin > 8 && in[8])
            t += kn_load_i64(in[8]->data, KN_I32, (size_t)(o % yt.dims[yt.rank - 1]));
        kn_store_f64(y->data, yt.dtype, (size_t)o,
                     fixed ? clamp(requant((double)kn_qmul_apply(t, kn_qmul_scales(as, bs, ys)), yz,
                                           yt.dtype),
                                   clo, chi)
                           : requant((double)t * (as * bs / ys), yz, yt.dtype));
    }
    return KN_OK;
}

/* ---- Convolution geometry and kernel ---- */

kn_status kn_conv_geom_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const kn_type *w,
                            kn_conv_geom *g, int *known) {
    const char *pad = kn_attr_str(cx, n, "auto_pad", "NOTSET");
    int64_t group = kn_attr_int(cx, n, "group", 1);
    const int64_t *ks, *strides, *dils, *pads;
    int nk = kn_attr_ints(cx, n, "kernel_shape", &ks);
    int ns = kn_attr_ints(cx, n, "strides", &strides);
    int nd = kn_attr_ints(cx, n, "dilations", &dils);
    int np = kn_attr_ints(cx, n, "pads", &pads);
    if (kn_failed(cx)) return cx->status;
    *known = x->rank >= 0 && w->rank >= 0;
    if (!*known) return KN_OK;
    if (x->rank < 3 || w->rank != x->rank)
        return kn_diag(cx, n, KN_EINVAL, "x (rank %d) and w (rank %d) must have the same rank >= 3",
                       x->rank, w->rank);
    int s = g->s = x->rank - 2;
    if ((nk >= 0 && nk != s) || (ns >= 0 && ns != s) || (nd >= 0 && nd != s) ||
        (np >= 0 && np != 2 * s))
        return kn_diag(cx, n, KN_EINVAL,
                       "kernel_shape/strides/dilations/pads do not match %d "
                       "spatial dims",
                       s);
    if (group < 1)
        return kn_diag(cx, n, KN_EINVAL, "group must be >= 1, is %lld", (long long)group);
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->M = w->dims[0];
    g->group = group;
    if (g->C >= 0 && w->dims[1] >= 0 && g->C != w->dims[1] * group)
        return kn_diag(cx, n, KN_EINVAL, "x has %lld channels, w expects %lld x group %lld",
                       (long long)g->C, (long long)w->dims[1], (long long)group);
    if (g->M >= 0 && g->M % group)
        return kn_diag(cx, n, KN_EINVAL, "%lld output channels are not divisible by group %lld",
                       (long long)g->M, (long long)group);
    int same = !strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER");
    int valid = !strcmp(pad, "VALID");
    if (!same && !valid && strcmp(pad, "NOTSET"))
        return kn_diag(cx, n, KN_EINVAL, "unknown auto_pad '%s'", pad);
    for (int d = 0; d < s; d++) {
        g->in[d] = x->dims[2 + d];
        g->k[d] = nk >= 0 ? ks[d] : w->dims[2 + d];
        g->str[d] = ns >= 0 ? strides[d] : 1;
        g->dil[d] = nd >= 0 ? dils[d] : 1;
        if (g->str[d] < 1 || g->dil[d] < 1)
            return kn_diag(cx, n, KN_EINVAL, "strides and dilations must be >= 1");
        if (nk >= 0 && w->dims[2 + d] >= 0 && ks[d] != w->dims[2 + d])
            return kn_diag(cx, n, KN_EINVAL, "kernel_shape does not match w's shape");
        int64_t pb = np >= 0 && !same && !valid ? pads[d] : 0;
        int64_t pe = np >= 0 && !same && !valid ? pads[s + d] : 0;
        if (pb < 0 || pe < 0) return kn_diag(cx, n, KN_EINVAL, "pads must be >= 0");
        g->pb[d] = pb;
        if (g->in[d] < 0 || g->k[d] < 0) {
            g->out[d] = -1;
            continue;
        }
        int64_t span, full; /* the dilated kernel's extent; the padded input's */
        if (kn_window_extent(cx, n, d + 2, g->k[d], g->dil[d], &span)) return cx->status;
        if (same) {
            g->out[d] = kn_window_same_out(g->in[d], g->str[d]);
            int64_t total = span - (g->in[d] - (g->out[d] - 1) * g->str[d]);
            if (total < 0) total = 0;
            g->pb[d] = !strcmp(pad, "SAME_UPPER") ? total / 2 : total - total / 2;
            continue;
        }
        if (kn_window_padded(cx, n, d + 2, g->in[d], pb, pe, &full)) return cx->status;
        full -= span;
        if (full < 0)
            return kn_diag(cx, n, KN_EINVAL, "kernel extent %lld exceeds padded input %lld",
                           (long long)span, (long long)(g->in[d] + pb + pe));
        g->out[d] = full / g->str[d] + 1;
    }
    return KN_OK;
}

static kn_type conv_type(const kn_conv_geom *g, kn_dtype dt) {
    kn_type t = kn_type_make(dt, 0, NULL);
    t.rank = g->s + 2;
    t.dims[0] = g->N;
    t.dims[1] = g->M;
    for (int d = 0; d < g->s; d++) t.dims[2 + d] = g->out[d];
    return t;
}

/* y[b, m, o...] = sum over c in m's group and kernel offsets of x * w, skipping
 * padded positions. x, w, y are row-major int64 arrays. */
static void conv_i64(const kn_conv_geom *g, const int64_t *x, const int64_t *w, int64_t *y) {
    int s = g->s;
    int64_t ospat = 1, ispat = 1, kspat = 1;
    for (int d = 0; d < s; d++) ospat *= g->out[d], ispat *= g->in[d], kspat *= g->k[d];
    int64_t cg = g->C / g->group, mg = g->M / g->group;
    for (int64_t b = 0; b < g->N; b++) {
        for (int64_t m = 0; m < g->M; m++) {
            int64_t gi = m / mg;
            for (int64_t op = 0; op < ospat; op++) {
                int64_t o[KN_MAX_RANK], r = op;
                for (int d = s - 1; d >= 0; d--) o[d] = r % g->out[d], r /= g->out[d];
                int64_t acc = 0;
                for (int64_t c = 0; c < cg; c++) {
                    const int64_t *xc = x + (b * g->C + gi * cg + c) * ispat;
                    const int64_t *wc = w + (m * cg + c) * kspat;
                    for (int64_t kp = 0; kp < kspat; kp++) {
                        int64_t xi = 0, rk = kp, inside = 1, kk[KN_MAX_RANK];
                        for (int d = s - 1; d >= 0; d--) kk[d] = rk % g->k[d], rk /= g->k[d];
                        for (int d = 0; d < s && inside; d++) {
                            int64_t pos = o[d] * g->str[d] - g->pb[d] + kk[d] * g->dil[d];
                            inside = pos >= 0 && pos < g->in[d];
                            xi = xi * g->in[d] + pos;
                        }
                        if (inside) acc += xc[xi] * wc[kp];
                    }
                }
                y[(b * g->M + m) * ospat + op] = acc;
            }
        }
    }
}

/* ---- ConvInteger ---- */

static kn_status infer_convint(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_Q8);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT_Q8))) return st;
    if (n->nin > 2 && in[2]) {
        if ((st = kn_check_dtype(cx, n, in[2], 2, 1u << in[0]->type.dtype))) return st;
        if ((st = need_numel(cx, n, in[2], 2, 1, "x_zero_point"))) return st;
    }
    if (n->nin > 3 && in[3] && (st = kn_check_dtype(cx, n, in[3], 3, 1u << in[1]->type.dtype)))
        return st;
    kn_conv_geom g;
    int known;
    if ((st = kn_conv_geom_make(cx, n, &in[0]->type, &in[1]->type, &g, &known))) return st;
    out[0] = known ? conv_type(&g, int_out(n)) : kn_type_unknown(int_out(n));
    return KN_OK;
}

static kn_status eval_convint(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_convint(cx, n, in, &yt);
    if (st) return st;
    kn_conv_geom g;
    int known;
    kn_conv_geom_make(cx, n, &in[0]->type, &in[1]->type, &g, &known);
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_tensor *wz = n->nin > 3 ? in[3] : NULL;
    if (wz && kn_tensor_numel(wz) != 1 && kn_tensor_numel(wz) != g.M)
        return kn_diag(cx, n, KN_EINVAL, "w_zero_point must have 1 or %lld elements",
                       (long long)g.M);
    int64_t *x = operand_i64(ex, n, in[0], n->nin > 2 ? in[2] : NULL, 2, 1);
    int64_t *w = x ? operand_i64(ex, n, in[1], wz, 3, 0) : NULL;
    int64_t *acc = kn_arena_array(kn_exec_arena(ex), (size_t)kn_tensor_numel(y) + 1, sizeof *acc);
    if (!w) return cx->status;
    if (!acc) return kn_diag(cx, n, KN_ELIMIT, "output too large");
    conv_i64(&g, x, w, acc);
    store_acc(y, acc);
    return KN_OK;
}

/* ---- QLinearConv ---- */

static kn_status infer_qlinearconv(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                   kn_type *out) {
    kn_status st = check_qlinear_types(cx, n, in);
    if (st) return st;
    if ((st = need_numel(cx, n, in[1], 1, 1, "x_scale")) ||
        (st = need_numel(cx, n, in[2], 2, 1, "x_zero_point")) ||
        (st = need_numel(cx, n, in[6], 6, 1, "y_scale")) ||
        (st = need_numel(cx, n, in[7], 7, 1, "y_zero_point")))
        return st;
    if (n->nin > 8 && in[8] && (st = kn_check_dtype(cx, n, in[8], 8, KN_DT(I32)))) return st;
    kn_conv_geom g;
    int known;
    /* channels-last x or y (kn.layout, passes/layout.c: an inverted residual block) */
    bool xcl, ycl;
    kn_conv_layout(n, &xcl, &ycl);
    kn_type xt = xcl ? kn_type_channels(&in[0]->type, false) : in[0]->type;
    if ((st = kn_conv_geom_make(cx, n, &xt, &in[3]->type, &g, &known))) return st;
    out[0] = known ? conv_type(&g, in[7]->type.dtype) : kn_type_unknown(in[7]->type.dtype);
    if (known && ycl) out[0] = kn_type_channels(&out[0], true);
    return KN_OK;
}

static kn_status qlinearconv_compute(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                     kn_tensor *y);

/* A channels-last x or y (kn.layout) is moved to channels-first around the computation,
 * as eval_conv (ir/ops/nn.c) does. */
static kn_status eval_qlinearconv(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                  kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_qlinearconv(cx, n, in, &yt);
    if (st) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    bool xcl, ycl;
    if (!kn_conv_layout(n, &xcl, &ycl)) return qlinearconv_compute(ex, n, in, y);
    kn_arena *a = kn_exec_arena(ex);
    kn_tensor *ins[16], *yc = y;
    KN_ASSERT(n->nin <= 16);
    for (int k = 0; k < n->nin; k++) ins[k] = in[k];
    if (xcl) {
        kn_type t = kn_type_channels(&in[0]->type, false);
        if (!(ins[0] = kn_tensor_new(a, &t))) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
        kn_tensor_move_channels(in[0], ins[0], false);
    }
    if (ycl) {
        kn_type t = kn_type_channels(&yt, false);
        if (!(yc = kn_tensor_new(a, &t))) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
    }
    if (qlinearconv_compute(ex, n, ins, yc)) return cx->status;
    if (ycl) kn_tensor_move_channels(yc, y, true);
    return KN_OK;
}

/* The channels-first QLinearConv of in[] into y. */
static kn_status qlinearconv_compute(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                     kn_tensor *y) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt = y->type;
    kn_conv_geom g;
    int known;
    kn_conv_geom_make(cx, n, &in[0]->type, &in[3]->type, &g, &known);
    const kn_tensor *ws = in[4], *wz = in[5], *bias = n->nin > 8 ? in[8] : NULL;
    int64_t nws = kn_tensor_numel(ws);
    if ((nws != 1 && nws != g.M) || (kn_tensor_numel(wz) != 1 && kn_tensor_numel(wz) != g.M))
        return kn_diag(cx, n, KN_EINVAL, "w_scale and w_zero_point must have 1 or %lld elements",
                       (long long)g.M);
    if (bias && kn_tensor_numel(bias) != g.M)
        return kn_diag(cx, n, KN_EINVAL, "B must have %lld elements", (long long)g.M);
    int64_t *x = operand_i64(ex, n, in[0], in[2], 2, 1);
    int64_t *w = x ? operand_i64(ex, n, in[3], wz, 5, 0) : NULL;
    int64_t ny = kn_tensor_numel(y);
    int64_t *acc = kn_arena_array(kn_exec_arena(ex), (size_t)ny + 1, sizeof *acc);
    if (!w) return cx->status;
    if (!acc) return kn_diag(cx, n, KN_ELIMIT, "output too large");
    conv_i64(&g, x, w, acc);
    double xs = kn_load_f64(in[1]->data, in[1]->type.dtype, 0);
    double ys = kn_load_f64(in[6]->data, in[6]->type.dtype, 0);
    double yz = (double)kn_load_i64(in[7]->data, in[7]->type.dtype, 0);
    int64_t ospat = 1;
    for (int d = 0; d < g.s; d++) ospat *= g.out[d];
    bool fixed = kn_fixed_point(n);
    double clo, chi;
    fixed_range(n, yt.dtype, &clo, &chi);
    for (int64_t o = 0; o < ny; o++) {
        int64_t m = (o / ospat) % g.M;
        int64_t a = acc[o] + (bias ? kn_load_i64(bias->data, KN_I32, (size_t)m) : 0);
        double s = kn_load_f64(ws->data, ws->type.dtype, (size_t)(nws == 1 ? 0 : m));
        kn_store_f64(y->data, yt.dtype, (size_t)o,
                     fixed ? clamp(requant((double)kn_qmul_apply(a, kn_qmul_scales(xs, s, ys)), yz,
                                           yt.dtype),
                                   clo, chi)
                           : requant((double)a * (xs * s / ys), yz, yt.dtype));
    }
    return KN_OK;
}

/* ---- QLinearAdd (kiln's own; the qdq pass makes it) ---- */

/* QLinearAdd(a, as, az, b, bs, bz, cs[, cz]) is the QDQ residual add
 *   QuantizeLinear(DequantizeLinear(a, as, az) + DequantizeLinear(b, bs, bz), cs, cz)
 * [with a Relu or Clip before the QuantizeLinear, folded into KN_CLAMP_ATTR], computed
 * as those float32 operators compute it: each product (x - z) * s rounded to float32
 * (exact in double: 9 bits times 24), a float32 sum, a float32 division by cs, rounded
 * half to even, plus cz, saturated (and clamped). So it gives the bits of the graph it
 * replaces, run by the ONNX reference or by kiln's own kernels. Per-tensor parameters,
 * numpy broadcasting of a and b. With KN_FIXED_POINT_ATTR (the adds of `--quantize`'s
 * own graphs, passes/ptq.c) it is computed in 32-bit integers instead, as ir/requant.h's
 * kn_qadd defines. */
static kn_status infer_qlinearadd(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  kn_type *out) {
    kn_status st;
    for (int i = 0; i < 8; i++) {
        if (i == 7 && (n->nin < 8 || !in[7])) break;
        unsigned mask = (i == 1 || i == 4 || i == 6) ? KN_DT(F32) : KN_DT_Q8;
        if ((st = kn_check_dtype(cx, n, in[i], i, mask))) return st;
        if (i != 0 && i != 3 && (st = need_numel(cx, n, in[i], i, 1, "a scale or zero point")))
            return st;
    }
    if (in[2]->type.dtype != in[0]->type.dtype || in[5]->type.dtype != in[3]->type.dtype)
        return kn_diag(cx, n, KN_EINVAL, "zero point types must match their operands");
    const kn_type *ab[2] = {&in[0]->type, &in[3]->type};
    if ((st = kn_broadcast(cx, n, 2, ab, &out[0]))) return st;
    out[0].dtype = n->nin > 7 && in[7] ? in[7]->type.dtype : KN_U8;
    return KN_OK;
}

static kn_status eval_qlinearadd(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                 kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_qlinearadd(cx, n, in, &yt);
    if (st) return st;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_tensor *cz = n->nin > 7 ? in[7] : NULL;
    float as = (float)kn_load_f64(in[1]->data, in[1]->type.dtype, 0);
    float bs = (float)kn_load_f64(in[4]->data, in[4]->type.dtype, 0);
    float cs = (float)kn_load_f64(in[6]->data, in[6]->type.dtype, 0);
    int64_t az = kn_load_i64(in[2]->data, in[2]->type.dtype, 0);
    int64_t bz = kn_load_i64(in[5]->data, in[5]->type.dtype, 0);
    double zp = cz ? (double)kn_load_i64(cz->data, cz->type.dtype, 0) : 0, lo, hi;
    fixed_range(n, yt.dtype, &lo, &hi);
    int64_t sa[KN_MAX_RANK], sb[KN_MAX_RANK];
    kn_bcast_strides(&in[0]->type, yt.rank, yt.dims, sa);
    kn_bcast_strides(&in[3]->type, yt.rank, yt.dims, sb);
    bool fixed = kn_fixed_point(n); /* --quantize's own adds: ir/requant.h kn_qadd */
    bool f64 = kn_attr_flag(n, KN_QADD_F64_ATTR);
    kn_qadd qa = kn_qadd_make(as, bs, cs, az, bz);
    for (int64_t i = 0; i < kn_tensor_numel(y); i++) {
        int64_t a = kn_load_i64(in[0]->data, in[0]->type.dtype,
                                (size_t)kn_bcast_offset(i, yt.rank, yt.dims, sa));
        int64_t b = kn_load_i64(in[3]->data, in[3]->type.dtype,
                                (size_t)kn_bcast_offset(i, yt.rank, yt.dims, sb));
        if (fixed) {
            kn_store_f64(y->data, yt.dtype, (size_t)i,
                         clamp((double)kn_qadd_apply(qa, a, b, (int64_t)zp), lo, hi));
            continue;
        }
        if (f64) { /* ONNX Runtime's contrib QLinearAdd: the formula in double */
            double v = ((double)(a - az) * as + (double)(b - bz) * bs) / cs;
            kn_store_f64(y->data, yt.dtype, (size_t)i, clamp(requant(v, zp, yt.dtype), lo, hi));
            continue;
        }
        float v = (float)(a - az) * as + (float)(b - bz) * bs;
        kn_store_f64(y->data, yt.dtype, (size_t)i, clamp(requant(v / cs, zp, yt.dtype), lo, hi));
    }
    return KN_OK;
}

const kn_opimpl kn_ops_quant[] = {
    {KN_OP_QUANTIZELINEAR, infer_quantize, eval_quantize},
    {KN_OP_DEQUANTIZELINEAR, infer_dequantize, eval_dequantize},
    {KN_OP_DYNAMICQUANTIZELINEAR, infer_dynquant, eval_dynquant},
    {KN_OP_MATMULINTEGER, infer_matmulint, eval_matmulint},
    {KN_OP_QLINEARMATMUL, infer_qlinearmatmul, eval_qlinearmatmul},
    {KN_OP_CONVINTEGER, infer_convint, eval_convint},
    {KN_OP_QLINEARCONV, infer_qlinearconv, eval_qlinearconv},
    {KN_OP_QLINEARADD, infer_qlinearadd, eval_qlinearadd},
    {KN_OP_COUNT, 0, 0},
};
