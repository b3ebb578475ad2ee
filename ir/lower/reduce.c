/* Lowerings of group 'reduce': the Reduce* family, ArgMax/ArgMin, CumSum and TopK.
 *
 * Reductions and ArgMax/ArgMin share one loop nest (red_nest): loops over the kept
 * dims of the input outside, one accumulator per output element, loops over the
 * reduced dims inside. The output's flat index is the same with and without
 * keepdims, so only the set of reduced dims matters. As in the interpreter
 * (ir/ops/reduce.c): floats accumulate in the compute dtype (f32 for f16/bf16/f32),
 * integer sums and products in uint64_t (wrapping, so exact modulo the output
 * width), integer max/min in the element type; an empty reduction gives the
 * operation's identity; float max/min propagate NaN; ArgMax/ArgMin and TopK order
 * NaN above every number and break ties by the lower index (ArgMax/ArgMin: the
 * higher with select_last_index). Axes and TopK's k must be constants at lowering
 * time; CumSum's axis may be a run-time value (one loop nest per possible axis).
 * TopK selects k times over the axis (O(len * k)), marking taken elements in a
 * kernel-private byte mask. */
#include "ir/kir.h"

#include <math.h>

static int is_float(kn_dtype t) {
    return kn_dtype_get(t)->is_float;
}

/* ---- the shared reduction loop nest ---- */

typedef struct red_nest {
    const kn_kbuf *x;
    unsigned mask;             /* bit d set: dim d of x is reduced */
    int var[KN_MAX_RANK];      /* loop variable of each dim of x (when its loop is open) */
    int64_t xstr[KN_MAX_RANK]; /* x's element strides */
    int64_t count;             /* elements reduced into each output element */
} red_nest;

static int red_nreduced(const red_nest *r) {
    int k = 0;
    for (int d = 0; d < r->x->rank; d++) k += (r->mask >> d) & 1;
    return k;
}

/* Opens loops over x's kept dims; returns the flat output index. */
static kn_kx *red_open_outer(kn_lower *L, const kn_kbuf *x, unsigned mask, red_nest *r) {
    int64_t kdims[KN_MAX_RANK], ostr[KN_MAX_RANK];
    r->x = x;
    r->mask = mask;
    r->count = 1;
    for (int d = 0; d < x->rank; d++) {
        int red = (mask >> d) & 1;
        kdims[d] = red ? 1 : x->dims[d];
        if (red) r->count *= x->dims[d];
        r->var[d] = -1;
    }
    kn_strides(x->rank, kdims, ostr);
    kn_strides(x->rank, x->dims, r->xstr);
    for (int d = 0; d < x->rank; d++) {
        if ((mask >> d) & 1)
            ostr[d] = 0;
        else
            r->var[d] = kl_for(L, x->dims[d]);
    }
    return kx_offset(L, x->rank, r->var, ostr);
}

/* Opens loops over the reduced dims; returns the flat input index. May be opened and
 * closed several times inside one outer nest (one pass each). */
static kn_kx *red_open_inner(kn_lower *L, red_nest *r) {
    for (int d = 0; d < r->x->rank; d++)
        if ((r->mask >> d) & 1) r->var[d] = kl_for(L, r->x->dims[d]);
    return kx_offset(L, r->x->rank, r->var, r->xstr);
}

static void red_close_inner(kn_lower *L, red_nest *r) {
    kl_end_n(L, red_nreduced(r));
}

static void red_close_outer(kn_lower *L, red_nest *r) {
    kl_end_n(L, r->x->rank - red_nreduced(r));
}

/* The input index of the first reduced element (reduced indices all 0). */
static kn_kx *red_first(kn_lower *L, const red_nest *r) {
    int64_t st[KN_MAX_RANK];
    for (int d = 0; d < r->x->rank; d++) st[d] = (r->mask >> d) & 1 ? 0 : r->xstr[d];
    return kx_offset(L, r->x->rank, r->var, st);
}

/* ---- comparisons with NaN ordered above every number ---- */

/* a comes strictly before b: greater (largest) or smaller (!largest). */
static kn_kx *cmp_better(kn_lower *L, kn_kx *a, kn_kx *b, int largest) {
    kn_kx *c = kx_bin(L, largest ? KX_GT : KX_LT, a, b);
    if (!is_float(a->dtype)) return c;
    kn_kx *nan_a = kx_un(L, KX_ISNAN, a), *nan_b = kx_un(L, KX_ISNAN, b);
    kn_kx *nan = largest ? kx_bin(L, KX_LAND, nan_a, kx_un(L, KX_NOT, nan_b))
                         : kx_bin(L, KX_LAND, nan_b, kx_un(L, KX_NOT, nan_a));
    return kx_bin(L, KX_LOR, c, nan);
}

static kn_kx *cmp_equal(kn_lower *L, kn_kx *a, kn_kx *b) {
    kn_kx *c = kx_bin(L, KX_EQ, a, b);
    if (!is_float(a->dtype)) return c;
    return kx_bin(L, KX_LOR, c, kx_bin(L, KX_LAND, kx_un(L, KX_ISNAN, a), kx_un(L, KX_ISNAN, b)));
}

/* ---- Reduce* ---- */

/* The reduced dims of in[0] as a bit mask, from the axes attribute or input. */
static kn_status reduce_mask(kn_lower *L, const kn_node *n, kn_kbuf *const *in, unsigned *mask) {
    kn_ctx *cx = kl_ctx(L);
    int rank = in[0]->rank;
    int64_t noop = kn_attr_int(cx, n, "noop_with_empty_axes", 0);
    const int64_t *axes = NULL;
    int naxes = -1;
    if (n->opset >= 18 || (n->op == KN_OP_REDUCESUM && n->opset >= 13)) {
        if (n->nin > 1 && in[1]) {
            const kn_tensor *t = kl_const(L, n, 1);
            if (!t)
                return kn_diag(cx, n, KN_EUNSUPPORTED, "code generation needs constant axes (%s)",
                               kn_hint_text(cx, KN_HINT_BIND));
            naxes = (int)kn_tensor_numel(t);
            axes = t->data;
        }
    } else {
        naxes = kn_attr_ints(cx, n, "axes", &axes);
    }
    if (kn_failed(cx)) return cx->status;
    *mask = 0;
    if (naxes <= 0) {
        if (!noop) *mask = (1u << rank) - 1;
        return KN_OK;
    }
    for (int i = 0; i < naxes; i++) {
        int a;
        kn_status st = kn_axis(cx, n, axes[i], rank, 0, &a);
        if (st) return st;
        *mask |= 1u << a;
    }
    return KN_OK;
}

/* Integer value of f64 v for a store to an integer type, defined for NaN and
 * out-of-range values as the interpreter's conversion. */
static kn_kx *f64_to_int(kn_lower *L, int v) {
    kn_kx *x = kx_var(L, v);
    kn_kx *c = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, x, kx_const(L, KN_F64, -9.2233720368547758e18)),
                      kx_const(L, KN_F64, 9.2233720368547748e18));
    return kx_cast(L, KN_I64, kx_select(L, kx_un(L, KX_ISNAN, x), kx_const(L, KN_F64, 0), c));
}

/* Lowest (hi = 0) or highest (hi = 1) value of integer type t, as a constant. */
static kn_kx *int_limit(kn_lower *L, kn_dtype t, int hi) {
    const kn_dtype_info *di = kn_dtype_get(t);
    int bits = (int)di->size * 8;
    int64_t v;
    if (di->is_signed)
        v = hi ? (int64_t)(UINT64_MAX >> (65 - bits)) : -(int64_t)(UINT64_MAX >> (65 - bits)) - 1;
    else
        v = hi ? (int64_t)(UINT64_MAX >> (64 - bits)) : 0; /* u64: -1, the cast wraps */
    return kx_cast(L, t, kx_int(L, v));
}

static kn_status lower_reduce(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    unsigned mask = 0;
    kn_status st = reduce_mask(L, n, in, &mask);
    if (st) return st;
    kn_kbuf *x = in[0], *y = out[0];
    kn_op op = n->op;
    int isint = !is_float(x->dtype);
    int sgn = kn_dtype_get(x->dtype)->is_signed;
    int exact = op != KN_OP_REDUCEL2 && op != KN_OP_REDUCELOGSUM && op != KN_OP_REDUCELOGSUMEXP;
    int minmax = op == KN_OP_REDUCEMAX || op == KN_OP_REDUCEMIN;
    kn_dtype at = kx_compute_dtype(x->dtype); /* accumulator */
    if (isint && !exact) at = KN_F64;
    if (isint && exact && !minmax) at = KN_U64;

    red_nest r;
    kn_kx *oi = red_open_outer(L, x, mask, &r);
    int shift = -1; /* LogSumExp: the maximum, 0 if infinite */
    if (op == KN_OP_REDUCELOGSUMEXP) {
        int m = kl_decl(L, at, kx_const(L, at, -INFINITY));
        kn_kx *xi = red_open_inner(L, &r);
        kl_set(L, m, kx_bin(L, KX_MAX, kx_var(L, m), kx_load(L, x, xi)));
        red_close_inner(L, &r);
        shift = kl_decl(
            L, at,
            kx_select(L, kx_un(L, KX_ISINF, kx_var(L, m)), kx_const(L, at, 0), kx_var(L, m)));
    }
    double init = 0;
    if (op == KN_OP_REDUCEPROD) init = 1;
    kn_kx *initx = kx_const(L, at, init);
    if (minmax)
        initx = isint ? int_limit(L, at, op == KN_OP_REDUCEMIN)
                      : kx_const(L, at, op == KN_OP_REDUCEMAX ? -INFINITY : INFINITY);
    int acc = kl_decl(L, at, initx);
    kn_kx *a = kx_var(L, acc);
    kn_kx *v = kx_load(L, x, red_open_inner(L, &r));
    if (at == KN_U64 && sgn && op == KN_OP_REDUCEL1) { /* |v| without overflow */
        kn_kx *u = kx_cast(L, KN_U64, v);
        v = kx_select(L, kx_bin(L, KX_LT, v, kx_const(L, v->dtype, 0)),
                      kx_bin(L, KX_SUB, kx_const(L, KN_U64, 0), u), u);
    } else {
        v = kx_cast(L, at, v);
    }
    kn_kx *nv;
    switch (op) {
    case KN_OP_REDUCEL1: nv = kx_bin(L, KX_ADD, a, at == KN_U64 ? v : kx_un(L, KX_ABS, v)); break;
    case KN_OP_REDUCEL2:
    case KN_OP_REDUCESUMSQUARE: nv = kx_fma(L, v, v, a); break;
    case KN_OP_REDUCEPROD: nv = kx_bin(L, KX_MUL, a, v); break;
    case KN_OP_REDUCEMAX: nv = kx_bin(L, KX_MAX, a, v); break;
    case KN_OP_REDUCEMIN: nv = kx_bin(L, KX_MIN, a, v); break;
    case KN_OP_REDUCELOGSUMEXP:
        nv = kx_bin(L, KX_ADD, a, kx_un(L, KX_EXP, kx_bin(L, KX_SUB, v, kx_var(L, shift))));
        break;
    default: nv = kx_bin(L, KX_ADD, a, v); break; /* Sum, Mean, LogSum */
    }
    kl_set(L, acc, nv);
    red_close_inner(L, &r);

    kn_kx *res = a;
    switch (op) {
    case KN_OP_REDUCEL2: res = kx_un(L, KX_SQRT, a); break;
    case KN_OP_REDUCELOGSUM: res = kx_un(L, KX_LOG, a); break;
    case KN_OP_REDUCELOGSUMEXP:
        res = kx_bin(L, KX_ADD, kx_var(L, shift), kx_un(L, KX_LOG, a));
        break;
    case KN_OP_REDUCEMEAN:
        if (!isint)
            res = r.count ? kx_bin(L, KX_DIV, a, kx_const(L, at, (double)r.count))
                          : kx_const(L, at, NAN);
        else if (r.count && sgn)
            res = kx_bin(L, KX_DIV, kx_cast(L, KN_I64, a), kx_int(L, r.count));
        else if (r.count)
            res = kx_bin(L, KX_DIV, a, kx_const(L, KN_U64, (double)r.count));
        break;
    default: break;
    }
    if (isint && !exact) res = f64_to_int(L, kl_decl(L, KN_F64, res));
    kl_store(L, y, oi, res);
    red_close_outer(L, &r);
    return KN_OK;
}

/* ---- ArgMax, ArgMin ---- */

static kn_status lower_arg(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *y = out[0];
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    int last = kn_attr_int(cx, n, "select_last_index", 0) != 0;
    if (kn_failed(cx)) return cx->status;
    int a;
    kn_status st = kn_axis(cx, n, axis, x->rank, 0, &a);
    if (st) return st;
    if (x->dims[a] == 0 && y->numel > 0)
        return kn_diag(cx, n, KN_EINVAL, "cannot take %s over an empty axis", n->op_type);
    int largest = n->op == KN_OP_ARGMAX;
    kn_dtype ct = kx_compute_dtype(x->dtype);
    red_nest r;
    kn_kx *oi = red_open_outer(L, x, 1u << a, &r);
    int best = kl_decl(L, KN_I64, kx_int(L, 0));
    int bv = kl_decl(L, ct, kx_load(L, x, red_first(L, &r)));
    kn_kx *xi = red_open_inner(L, &r);
    int v = kl_decl(L, ct, kx_load(L, x, xi));
    kn_kx *c = cmp_better(L, kx_var(L, v), kx_var(L, bv), largest);
    if (last) c = kx_bin(L, KX_LOR, c, cmp_equal(L, kx_var(L, v), kx_var(L, bv)));
    kl_if(L, c);
    kl_set(L, best, kx_var(L, r.var[a]));
    kl_set(L, bv, kx_var(L, v));
    kl_end(L);
    red_close_inner(L, &r);
    kl_store(L, y, oi, kx_var(L, best));
    red_close_outer(L, &r);
    return KN_OK;
}

/* ---- CumSum, TopK: loops over every dim but one ---- */

/* Opens loops over every dim of `dims` except `axis`, setting vars (vars[axis] = -1). */
static void open_except(kn_lower *L, int rank, const int64_t *dims, int axis, int *vars) {
    for (int d = 0; d < rank; d++) vars[d] = d == axis ? -1 : kl_for(L, dims[d]);
}

/* sum over d != axis of vars[d] * strides[d], plus k * strides[axis]. */
static kn_kx *offset_along(kn_lower *L, int rank, const int *vars, const int64_t *strides, int axis,
                           kn_kx *k) {
    int64_t st[KN_MAX_RANK];
    for (int d = 0; d < rank; d++) st[d] = d == axis ? 0 : strides[d];
    kn_kx *off = kx_offset(L, rank, vars, st);
    return kx_bin(L, KX_ADD, off, kx_bin(L, KX_MUL, k, kx_int(L, strides[axis])));
}

/* y = the running sums of x along axis. */
static void cumsum_nest(kn_lower *L, kn_kbuf *x, kn_kbuf *y, int axis, int excl, int rev) {
    kn_dtype sdt = is_float(x->dtype) ? kx_compute_dtype(x->dtype) : KN_U64;
    int64_t len = x->dims[axis], str[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, str);
    int vars[KN_MAX_RANK];
    open_except(L, x->rank, x->dims, axis, vars);
    int sum = kl_decl(L, sdt, kx_const(L, sdt, 0));
    int s = kl_for(L, len);
    kn_kx *k = rev ? kx_bin(L, KX_SUB, kx_int(L, len - 1), kx_var(L, s)) : kx_var(L, s);
    kn_kx *i = offset_along(L, x->rank, vars, str, axis, k);
    int v = kl_decl(L, sdt, kx_load(L, x, i));
    if (!excl) kl_set(L, sum, kx_bin(L, KX_ADD, kx_var(L, sum), kx_var(L, v)));
    kl_store(L, y, i, kx_var(L, sum));
    if (excl) kl_set(L, sum, kx_bin(L, KX_ADD, kx_var(L, sum), kx_var(L, v)));
    kl_end(L);
    kl_end_n(L, x->rank - 1);
}

/* A constant axis gives one loop nest; an axis known only at run time one nest per
 * possible axis, chosen by an if (an out-of-range axis writes nothing). */
static kn_status lower_cumsum(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0];
    int excl = kn_attr_int(cx, n, "exclusive", 0) != 0;
    int rev = kn_attr_int(cx, n, "reverse", 0) != 0;
    if (kn_failed(cx)) return cx->status;
    const kn_tensor *at = kl_const(L, n, 1);
    if (at) {
        int axis;
        kn_status st = kn_axis(cx, n, kn_load_i64(at->data, at->type.dtype, 0), x->rank, 0, &axis);
        if (st) return st;
        cumsum_nest(L, x, out[0], axis, excl, rev);
        return KN_OK;
    }
    int ax = kl_decl(L, KN_I64, kx_load(L, in[1], kx_int(L, 0)));
    for (int a = 0; a < x->rank; a++) {
        kl_if(L, kx_bin(L, KX_LOR, kx_bin(L, KX_EQ, kx_var(L, ax), kx_int(L, a)),
                        kx_bin(L, KX_EQ, kx_var(L, ax), kx_int(L, a - x->rank))));
        cumsum_nest(L, x, out[0], a, excl, rev);
        kl_end(L);
    }
    return KN_OK;
}

static kn_status lower_topk(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0];
    int64_t axis_attr = kn_attr_int(cx, n, "axis", -1);
    int largest = kn_attr_int(cx, n, "largest", 1) != 0;
    int64_t k;
    if (n->opset < 10) {
        k = kn_attr_int(cx, n, "k", 0);
    } else {
        const kn_tensor *kt = kl_const(L, n, 1);
        if (!kt)
            return kn_diag(cx, n, KN_EUNSUPPORTED, "code generation needs a constant k (%s)",
                           kn_hint_text(cx, KN_HINT_BIND));
        k = kn_load_i64(kt->data, kt->type.dtype, 0);
    }
    if (kn_failed(cx)) return cx->status;
    int axis;
    kn_status st = kn_axis(cx, n, axis_attr, x->rank, 0, &axis);
    if (st) return st;
    int64_t len = x->dims[axis], xstr[KN_MAX_RANK], ystr[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xstr);
    kn_strides(out[0]->rank, out[0]->dims, ystr);
    kn_dtype ct = kx_compute_dtype(x->dtype);
    kn_kbuf *taken = kl_scratch(L, KN_U8, len > 0 ? len : 1);
    int vars[KN_MAX_RANK];
    open_except(L, x->rank, x->dims, axis, vars);
    int i = kl_for(L, len);
    kl_store(L, taken, kx_var(L, i), kx_int(L, 0));
    kl_end(L);
    int j = kl_for(L, k);
    int best = kl_decl(L, KN_I64, kx_int(L, -1));
    int bv = kl_decl(L, ct, kx_const(L, ct, 0));
    i = kl_for(L, len);
    int v = kl_decl(L, ct, kx_load(L, x, offset_along(L, x->rank, vars, xstr, axis, kx_var(L, i))));
    kn_kx *better = kx_bin(L, KX_LOR, kx_bin(L, KX_LT, kx_var(L, best), kx_int(L, 0)),
                           cmp_better(L, kx_var(L, v), kx_var(L, bv), largest));
    kl_if(L, kx_bin(L, KX_LAND, kx_un(L, KX_NOT, kx_load(L, taken, kx_var(L, i))), better));
    kl_set(L, best, kx_var(L, i));
    kl_set(L, bv, kx_var(L, v));
    kl_end(L);
    kl_end(L);
    kl_store(L, taken, kx_var(L, best), kx_int(L, 1));
    kn_kx *oi = offset_along(L, x->rank, vars, ystr, axis, kx_var(L, j));
    kl_store(L, out[0], oi, kx_var(L, bv));
    kl_store(L, out[1], oi, kx_var(L, best));
    kl_end(L);
    kl_end_n(L, x->rank - 1);
    return KN_OK;
}

const kn_oplower kn_lower_reduce[] = {
    {KN_OP_REDUCEL1, lower_reduce},
    {KN_OP_REDUCEL2, lower_reduce},
    {KN_OP_REDUCELOGSUM, lower_reduce},
    {KN_OP_REDUCELOGSUMEXP, lower_reduce},
    {KN_OP_REDUCEMAX, lower_reduce},
    {KN_OP_REDUCEMEAN, lower_reduce},
    {KN_OP_REDUCEMIN, lower_reduce},
    {KN_OP_REDUCEPROD, lower_reduce},
    {KN_OP_REDUCESUM, lower_reduce},
    {KN_OP_REDUCESUMSQUARE, lower_reduce},
    {KN_OP_ARGMAX, lower_arg},
    {KN_OP_ARGMIN, lower_arg},
    {KN_OP_CUMSUM, lower_cumsum},
    {KN_OP_TOPK, lower_topk},
    {KN_OP_COUNT, 0},
};
