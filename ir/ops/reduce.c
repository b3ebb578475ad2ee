/* Operators of group 'reduce': the Reduce* family, ArgMax/ArgMin, CumSum and TopK.
 * See ir/ops.h for the infer/eval contract.
 *
 * Reductions map each input element to its output element through the strides of
 * the keepdims-shaped output with reduced dims given stride 0; the flat layout is the
 * same with or without keepdims. Floats accumulate in double. Integer sums and
 * products accumulate in uint64_t (wrapping as two's complement, so they are exact
 * modulo the output width); max/min compare in int64_t or uint64_t. A reduction over
 * an empty set gives the operation's identity: 0 for sums, 1 for products, -inf (or
 * the lowest integer) for max, +inf (or the highest) for min, log(0) = -inf for the
 * log-sums, NaN for a float mean. Axes come from the `axes` attribute, or from input 1
 * for ReduceSum since opset 13 and for every reduction since opset 18. */
#include "ir/ops.h"

#include <math.h>
#include <string.h>

/* Compares elements i and j of buffer p of type t: <0, 0 or >0. NaN compares
 * greater than every number and equal to NaN (numpy's sort order). */
static int elem_cmp(const void *p, kn_dtype t, size_t i, size_t j) {
    const kn_dtype_info *di = kn_dtype_get(t);
    if (di->is_float) {
        double a = kn_load_f64(p, t, i), b = kn_load_f64(p, t, j);
        if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
        return (a > b) - (a < b);
    }
    if (di->is_int && !di->is_signed) {
        uint64_t a = kn_load_u64(p, t, i), b = kn_load_u64(p, t, j);
        return (a > b) - (a < b);
    }
    int64_t a = kn_load_i64(p, t, i), b = kn_load_i64(p, t, j);
    return (a > b) - (a < b);
}

/* Lowest and highest values of integer type t. */
static void int_limits(kn_dtype t, int64_t *lo, uint64_t *hi) {
    const kn_dtype_info *di = kn_dtype_get(t);
    int bits = (int)di->size * 8;
    if (di->is_signed) {
        *lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        *hi = bits == 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    }
}

/* ---- Reduce* ---- */

typedef struct reduce_plan {
    int rank;      /* input rank */
    unsigned mask; /* bit d set: dim d is reduced */
    int keepdims;
} reduce_plan;

static int axes_from_input(const kn_node *n) {
    return n->opset >= 18 || (n->op == KN_OP_REDUCESUM && n->opset >= 13);
}

/* Reads keepdims and the axes into p. Sets *known to 0 (and returns KN_OK) when the
 * input rank or the axes input is not known yet. */
static kn_status reduce_plan_make(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  reduce_plan *p, int *known) {
    /* ReduceMax and ReduceMin take bool from opset 20 (any / all) */
    bool minmax = n->op == KN_OP_REDUCEMAX || n->op == KN_OP_REDUCEMIN;
    unsigned types = KN_DT_NUM | (minmax && n->opset >= 20 ? KN_DT(BOOL) : 0);
    kn_status st = kn_check_dtype(cx, n, in[0], 0, types);
    if (st) return st;
    int64_t keep = kn_attr_int(cx, n, "keepdims", 1);
    int64_t noop = kn_attr_int(cx, n, "noop_with_empty_axes", 0);
    const int64_t *axes = NULL;
    int naxes = -1;
    *known = 1;
    if (axes_from_input(n)) {
        if (kn_node_attr(n, "axes"))
            return kn_diag(cx, n, KN_EINVAL,
                           "the axes attribute was replaced by an input in this opset (%d)",
                           n->opset);
        if (n->nin > 1 && in[1]) {
            if ((st = kn_check_dtype(cx, n, in[1], 1, KN_DT(I64)))) return st;
            if (in[1]->type.rank > 1)
                return kn_diag(cx, n, KN_EINVAL, "axes input must be 1-D, has rank %d",
                               in[1]->type.rank);
            if (!in[1]->data) {
                *known = 0;
            } else {
                naxes = (int)kn_tensor_numel(in[1]);
                axes = in[1]->data;
            }
        }
    } else {
        if (n->nin > 1 && in[1])
            return kn_diag(cx, n, KN_EINVAL,
                           "axes input needs opset 18 (13 for ReduceSum), model has %d", n->opset);
        naxes = kn_attr_ints(cx, n, "axes", &axes);
    }
    if (kn_failed(cx)) return cx->status;
    if (in[0]->type.rank < 0) *known = 0;
    if (!*known) return KN_OK;
    p->rank = in[0]->type.rank;
    p->keepdims = keep != 0;
    p->mask = 0;
    if (naxes <= 0) {
        if (!noop) p->mask = (1u << p->rank) - 1;
        return KN_OK;
    }
    for (int i = 0; i < naxes; i++) {
        int a;
        if ((st = kn_axis(cx, n, axes[i], p->rank, 0, &a))) return st;
        if (p->mask & (1u << a))
            return kn_diag(cx, n, KN_EINVAL, "axis %lld appears twice in axes", (long long)axes[i]);
        p->mask |= 1u << a;
    }
    return KN_OK;
}

static kn_type reduce_type(const kn_type *in, const reduce_plan *p) {
    kn_type t = kn_type_make(in->dtype, 0, NULL);
    for (int d = 0; d < p->rank; d++) {
        if (p->mask & (1u << d)) {
            if (!p->keepdims) continue;
            t.dims[t.rank] = 1;
            t.sym[t.rank++] = NULL;
        } else {
            t.dims[t.rank] = in->dims[d];
            t.sym[t.rank++] = in->sym[d];
        }
    }
    return t;
}

static kn_status infer_reduce(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    reduce_plan p;
    int known;
    kn_status st = reduce_plan_make(cx, n, in, &p, &known);
    if (st) return st;
    out[0] = known ? reduce_type(&in[0]->type, &p) : kn_type_unknown(in[0]->type.dtype);
    return KN_OK;
}

/* Float reductions, and the integer ones whose result is not an integer formula. */
static void reduce_float(kn_op op, const kn_tensor *x, kn_tensor *y, const int64_t *ostr,
                         int64_t count, double *acc, double *mx) {
    const kn_type *t = &x->type;
    int64_t nx = kn_tensor_numel(x), ny = kn_tensor_numel(y);
    double init = 0;
    if (op == KN_OP_REDUCEPROD) init = 1;
    if (op == KN_OP_REDUCEMAX) init = -INFINITY;
    if (op == KN_OP_REDUCEMIN) init = INFINITY;
    for (int64_t o = 0; o < ny; o++) acc[o] = init, mx[o] = -INFINITY;
    if (op == KN_OP_REDUCELOGSUMEXP) {
        /* Shift by the maximum so exp() cannot overflow. */
        for (int64_t i = 0; i < nx; i++) {
            int64_t o = kn_bcast_offset(i, t->rank, t->dims, ostr);
            double v = kn_load_f64(x->data, t->dtype, (size_t)i);
            if (isnan(v) || v > mx[o]) mx[o] = isnan(mx[o]) ? mx[o] : v;
        }
    }
    for (int64_t i = 0; i < nx; i++) {
        int64_t o = kn_bcast_offset(i, t->rank, t->dims, ostr);
        double v = kn_load_f64(x->data, t->dtype, (size_t)i);
        switch (op) {
        case KN_OP_REDUCEL1: acc[o] += fabs(v); break;
        case KN_OP_REDUCEL2:
        case KN_OP_REDUCESUMSQUARE: acc[o] += v * v; break;
        case KN_OP_REDUCEPROD: acc[o] *= v; break;
        case KN_OP_REDUCEMAX:
            if (isnan(v) || v > acc[o]) acc[o] = isnan(acc[o]) ? acc[o] : v;
            break;
        case KN_OP_REDUCEMIN:
            if (isnan(v) || v < acc[o]) acc[o] = isnan(acc[o]) ? acc[o] : v;
            break;
        case KN_OP_REDUCELOGSUMEXP:
            if (isfinite(mx[o])) acc[o] += exp(v - mx[o]);
            break;
        default: acc[o] += v; break; /* Sum, Mean, LogSum */
        }
    }
    for (int64_t o = 0; o < ny; o++) {
        double r = acc[o];
        switch (op) {
        case KN_OP_REDUCEL2: r = sqrt(r); break;
        case KN_OP_REDUCELOGSUM: r = log(r); break;
        case KN_OP_REDUCELOGSUMEXP: r = isfinite(mx[o]) ? mx[o] + log(r) : mx[o]; break;
        case KN_OP_REDUCEMEAN: r = r / (double)count; break;
        default: break;
        }
        kn_store_f64(y->data, y->type.dtype, (size_t)o, r);
    }
}

/* Exact integer reductions: Sum, SumSquare, L1, Prod, Mean, Max, Min. */
static void reduce_int(kn_op op, const kn_tensor *x, kn_tensor *y, const int64_t *ostr,
                       int64_t count, uint64_t *acc) {
    const kn_type *t = &x->type;
    kn_dtype dt = t->dtype;
    int sgn = kn_dtype_get(dt)->is_signed;
    int64_t nx = kn_tensor_numel(x), ny = kn_tensor_numel(y);
    int64_t lo;
    uint64_t hi;
    int_limits(dt, &lo, &hi);
    uint64_t init = 0;
    if (op == KN_OP_REDUCEPROD) init = 1;
    if (op == KN_OP_REDUCEMAX) init = (uint64_t)lo;
    if (op == KN_OP_REDUCEMIN) init = hi;
    for (int64_t o = 0; o < ny; o++) acc[o] = init;
    for (int64_t i = 0; i < nx; i++) {
        int64_t o = kn_bcast_offset(i, t->rank, t->dims, ostr);
        uint64_t v = kn_load_u64(x->data, dt, (size_t)i);
        int64_t s = kn_load_i64(x->data, dt, (size_t)i);
        if (sgn) v = (uint64_t)s;
        switch (op) {
        case KN_OP_REDUCEL1: acc[o] += sgn && s < 0 ? 0 - v : v; break;
        case KN_OP_REDUCESUMSQUARE: acc[o] += v * v; break;
        case KN_OP_REDUCEPROD: acc[o] *= v; break;
        case KN_OP_REDUCEMAX:
            if (sgn ? s > (int64_t)acc[o] : v > acc[o]) acc[o] = v;
            break;
        case KN_OP_REDUCEMIN:
            if (sgn ? s < (int64_t)acc[o] : v < acc[o]) acc[o] = v;
            break;
        default: acc[o] += v; break; /* Sum, Mean */
        }
    }
    for (int64_t o = 0; o < ny; o++) {
        uint64_t r = acc[o];
        if (op == KN_OP_REDUCEMEAN && count > 0)
            r = sgn ? (uint64_t)((int64_t)r / count) : r / (uint64_t)count;
        kn_store_u64(y->data, y->type.dtype, (size_t)o, r);
    }
}

static kn_status eval_reduce(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    reduce_plan p;
    int known;
    kn_status st = reduce_plan_make(cx, n, in, &p, &known);
    if (st) return st;
    if (!known) return kn_diag(cx, n, KN_EINTERNAL, "axes or input shape unknown at run time");
    const kn_tensor *x = in[0];
    kn_type yt = reduce_type(&x->type, &p);
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;

    /* Output strides at the keepdims shape, 0 on reduced dims. */
    int64_t kdims[KN_MAX_RANK], ostr[KN_MAX_RANK], count = 1;
    for (int d = 0; d < p.rank; d++) {
        int red = (p.mask >> d) & 1;
        kdims[d] = red ? 1 : x->type.dims[d];
        if (red) count *= x->type.dims[d];
    }
    kn_strides(p.rank, kdims, ostr);
    for (int d = 0; d < p.rank; d++)
        if ((p.mask >> d) & 1) ostr[d] = 0;

    kn_arena *a = kn_exec_arena(ex);
    size_t ny = (size_t)kn_tensor_numel(y) + 1;
    int exact =
        n->op != KN_OP_REDUCEL2 && n->op != KN_OP_REDUCELOGSUM && n->op != KN_OP_REDUCELOGSUMEXP;
    if (kn_dtype_get(x->type.dtype)->is_int && exact) {
        uint64_t *acc = kn_arena_array(a, ny, sizeof *acc);
        if (!acc) return kn_diag(cx, n, KN_ELIMIT, "output too large");
        reduce_int(n->op, x, y, ostr, count, acc);
    } else {
        double *acc = kn_arena_array(a, ny, sizeof *acc);
        double *mx = kn_arena_array(a, ny, sizeof *mx);
        if (!acc || !mx) return kn_diag(cx, n, KN_ELIMIT, "output too large");
        reduce_float(n->op, x, y, ostr, count, acc, mx);
        if (x->type.dtype == KN_BOOL && !count) /* empty: any() is false, all() true */
            for (size_t o = 0; o + 1 < ny; o++) ((uint8_t *)y->data)[o] = n->op == KN_OP_REDUCEMIN;
    }
    return KN_OK;
}

/* ---- ArgMax, ArgMin ---- */

typedef struct arg_attrs {
    int axis, keepdims, last;
} arg_attrs;

static kn_status arg_attrs_read(kn_ctx *cx, const kn_node *n, const kn_tensor *x, arg_attrs *a) {
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    a->keepdims = kn_attr_int(cx, n, "keepdims", 1) != 0;
    a->last = kn_attr_int(cx, n, "select_last_index", 0) != 0;
    if (kn_failed(cx)) return cx->status;
    a->axis = -1;
    if (x->type.rank < 0) return KN_OK;
    return kn_axis(cx, n, axis, x->type.rank, 0, &a->axis);
}

static kn_status infer_arg(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    arg_attrs a;
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_NUM);
    if (st || (st = arg_attrs_read(cx, n, in[0], &a))) return st;
    const kn_type *t = &in[0]->type;
    if (t->rank < 0) {
        out[0] = kn_type_unknown(KN_I64);
        return KN_OK;
    }
    out[0] = kn_type_make(KN_I64, 0, NULL);
    for (int d = 0; d < t->rank; d++) {
        if (d == a.axis && !a.keepdims) continue;
        out[0].dims[out[0].rank] = d == a.axis ? 1 : t->dims[d];
        out[0].sym[out[0].rank++] = d == a.axis ? NULL : t->sym[d];
    }
    return KN_OK;
}

static kn_status eval_arg(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_arg(cx, n, in, &yt);
    if (st) return st;
    arg_attrs a;
    arg_attrs_read(cx, n, in[0], &a);
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    const kn_tensor *x = in[0];
    int64_t outer = 1, len = x->type.dims[a.axis], inner = 1;
    for (int d = 0; d < a.axis; d++) outer *= x->type.dims[d];
    for (int d = a.axis + 1; d < x->type.rank; d++) inner *= x->type.dims[d];
    if (len == 0 && outer * inner > 0)
        return kn_diag(cx, n, KN_EINVAL, "cannot take %s over an empty axis", n->op_type);
    int sign = n->op == KN_OP_ARGMAX ? 1 : -1;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            size_t base = (size_t)(o * len * inner + j);
            int64_t best = 0;
            for (int64_t k = 1; k < len; k++) {
                int c = sign * elem_cmp(x->data, x->type.dtype, base + (size_t)(k * inner),
                                        base + (size_t)(best * inner));
                if (c > 0 || (c == 0 && a.last)) best = k;
            }
            ((int64_t *)y->data)[o * inner + j] = best;
        }
    }
    return KN_OK;
}

/* ---- CumSum ---- */

static kn_status infer_cumsum(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_NUM);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT(I32) | KN_DT(I64)))) return st;
    if (in[1]->type.rank > 1 || kn_type_numel(&in[1]->type) > 1)
        return kn_diag(cx, n, KN_EINVAL, "axis input must be a scalar");
    kn_attr_int(cx, n, "exclusive", 0);
    kn_attr_int(cx, n, "reverse", 0);
    if (kn_failed(cx)) return cx->status;
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status eval_cumsum(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt;
    kn_status st = infer_cumsum(cx, n, in, &yt);
    if (st) return st;
    const kn_tensor *x = in[0];
    if (kn_tensor_numel(in[1]) != 1)
        return kn_diag(cx, n, KN_EINVAL, "axis input must hold one value");
    int axis;
    if ((st = kn_axis(cx, n, kn_load_i64(in[1]->data, in[1]->type.dtype, 0), x->type.rank, 0,
                      &axis)))
        return st;
    int excl = kn_attr_int(cx, n, "exclusive", 0) != 0;
    int rev = kn_attr_int(cx, n, "reverse", 0) != 0;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &yt);
    if (!y) return cx->status;
    kn_dtype dt = x->type.dtype;
    int isf = kn_dtype_get(dt)->is_float;
    int64_t outer = 1, len = x->type.dims[axis], inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->type.dims[d];
    for (int d = axis + 1; d < x->type.rank; d++) inner *= x->type.dims[d];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            double fs = 0;
            uint64_t is = 0; /* wraps as two's complement for signed types */
            for (int64_t s = 0; s < len; s++) {
                int64_t k = rev ? len - 1 - s : s;
                size_t i = (size_t)((o * len + k) * inner + j);
                if (isf) {
                    double v = kn_load_f64(x->data, dt, i);
                    if (!excl) fs += v;
                    kn_store_f64(y->data, dt, i, fs);
                    if (excl) fs += v;
                } else {
                    uint64_t v = kn_dtype_get(dt)->is_signed ? (uint64_t)kn_load_i64(x->data, dt, i)
                                                             : kn_load_u64(x->data, dt, i);
                    if (!excl) is += v;
                    kn_store_u64(y->data, dt, i, is);
                    if (excl) is += v;
                }
            }
        }
    }
    return KN_OK;
}

/* ---- TopK ---- */

typedef struct topk_attrs {
    int axis, largest, have_k;
    int64_t k;
} topk_attrs;

static kn_status topk_attrs_read(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                 topk_attrs *a) {
    int64_t axis = kn_attr_int(cx, n, "axis", -1);
    a->largest = kn_attr_int(cx, n, "largest", 1) != 0;
    kn_attr_int(cx, n, "sorted", 1); /* results are always sorted, which satisfies both */
    a->have_k = 1;
    if (n->opset < 10) {
        const kn_attr *ka = kn_node_attr(n, "k");
        if (!ka) return kn_diag(cx, n, KN_EINVAL, "attribute k is required in opset %d", n->opset);
        a->k = kn_attr_int(cx, n, "k", 0);
    } else {
        if (n->nin < 2 || !in[1])
            return kn_diag(cx, n, KN_EINVAL, "input k is required in opset %d", n->opset);
        kn_status st = kn_check_dtype(cx, n, in[1], 1, KN_DT(I64));
        if (st) return st;
        if (in[1]->type.rank > 1 || kn_type_numel(&in[1]->type) > 1)
            return kn_diag(cx, n, KN_EINVAL, "input k must hold a single value");
        if (!in[1]->data || kn_type_numel(&in[1]->type) != 1)
            a->have_k = 0;
        else
            a->k = ((const int64_t *)in[1]->data)[0];
    }
    if (kn_failed(cx)) return cx->status;
    if (a->have_k && a->k < 0)
        return kn_diag(cx, n, KN_EINVAL, "k must be non-negative, is %lld", (long long)a->k);
    a->axis = -1;
    if (in[0]->type.rank < 0) return KN_OK;
    return kn_axis(cx, n, axis, in[0]->type.rank, 0, &a->axis);
}

static kn_status infer_topk(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    topk_attrs a;
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_NUM);
    if (st || (st = topk_attrs_read(cx, n, in, &a))) return st;
    const kn_type *t = &in[0]->type;
    if (t->rank < 0) {
        out[0] = kn_type_unknown(t->dtype);
        out[1] = kn_type_unknown(KN_I64);
        return KN_OK;
    }
    int64_t len = t->dims[a.axis];
    if (a.have_k && len >= 0 && a.k > len)
        return kn_diag(cx, n, KN_EINVAL, "k = %lld exceeds axis length %lld", (long long)a.k,
                       (long long)len);
    out[0] = *t;
    out[0].dims[a.axis] = a.have_k ? a.k : -1;
    out[0].sym[a.axis] = NULL;
    out[1] = out[0];
    out[1].dtype = KN_I64;
    return KN_OK;
}

typedef struct topk_ctx {
    const void *data;
    kn_dtype dtype;
    int64_t base, stride; /* element k of the slice is at base + k * stride */
    int largest;
} topk_ctx;

/* True if slice element a comes before b in the result: better value, or equal value
 * and lower index. */
static int topk_before(const topk_ctx *c, int64_t a, int64_t b) {
    int r = elem_cmp(c->data, c->dtype, (size_t)(c->base + a * c->stride),
                     (size_t)(c->base + b * c->stride));
    if (!c->largest) r = -r;
    return r > 0 || (r == 0 && a < b);
}

/* Sorts idx[0..len) by topk_before with a merge sort (tmp has len entries). */
static void topk_sort(const topk_ctx *c, int64_t *idx, int64_t *tmp, int64_t len) {
    if (len < 2) return;
    int64_t h = len / 2;
    topk_sort(c, idx, tmp, h);
    topk_sort(c, idx + h, tmp, len - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < len) tmp[k++] = topk_before(c, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < len) tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)len * sizeof *idx);
}

static kn_status eval_topk(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type yt[2];
    kn_status st = infer_topk(cx, n, in, yt);
    if (st) return st;
    topk_attrs a;
    topk_attrs_read(cx, n, in, &a);
    kn_tensor *v = kn_ensure_output(ex, n, out, 0, &yt[0]);
    kn_tensor *ix = v ? kn_ensure_output(ex, n, out, 1, &yt[1]) : NULL;
    if (!ix) return cx->status;
    const kn_tensor *x = in[0];
    int64_t outer = 1, len = x->type.dims[a.axis], inner = 1;
    for (int d = 0; d < a.axis; d++) outer *= x->type.dims[d];
    for (int d = a.axis + 1; d < x->type.rank; d++) inner *= x->type.dims[d];
    kn_arena *ar = kn_exec_arena(ex);
    int64_t *idx = kn_arena_array(ar, (size_t)len + 1, sizeof *idx);
    int64_t *tmp = kn_arena_array(ar, (size_t)len + 1, sizeof *tmp);
    if (!idx || !tmp) return kn_diag(cx, n, KN_ELIMIT, "axis too long");
    size_t esz = kn_dtype_get(x->type.dtype)->size;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            topk_ctx c = {x->data, x->type.dtype, o * len * inner + j, inner, a.largest};
            for (int64_t k = 0; k < len; k++) idx[k] = k;
            topk_sort(&c, idx, tmp, len);
            for (int64_t k = 0; k < a.k; k++) {
                int64_t oi = (o * a.k + k) * inner + j;
                memcpy((char *)v->data + (size_t)oi * esz,
                       (const char *)x->data + (size_t)(c.base + idx[k] * inner) * esz, esz);
                ((int64_t *)ix->data)[oi] = idx[k];
            }
        }
    }
    return KN_OK;
}

const kn_opimpl kn_ops_reduce[] = {
    {KN_OP_REDUCEL1, infer_reduce, eval_reduce},
    {KN_OP_REDUCEL2, infer_reduce, eval_reduce},
    {KN_OP_REDUCELOGSUM, infer_reduce, eval_reduce},
    {KN_OP_REDUCELOGSUMEXP, infer_reduce, eval_reduce},
    {KN_OP_REDUCEMAX, infer_reduce, eval_reduce},
    {KN_OP_REDUCEMEAN, infer_reduce, eval_reduce},
    {KN_OP_REDUCEMIN, infer_reduce, eval_reduce},
    {KN_OP_REDUCEPROD, infer_reduce, eval_reduce},
    {KN_OP_REDUCESUM, infer_reduce, eval_reduce},
    {KN_OP_REDUCESUMSQUARE, infer_reduce, eval_reduce},
    {KN_OP_ARGMAX, infer_arg, eval_arg},
    {KN_OP_ARGMIN, infer_arg, eval_arg},
    {KN_OP_CUMSUM, infer_cumsum, eval_cumsum},
    {KN_OP_TOPK, infer_topk, eval_topk},
    {KN_OP_COUNT, 0, 0},
};
