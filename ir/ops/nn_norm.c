/* Operators of group 'nn_norm': normalizations and the softmax family.
 *
 * See ir/ops.h for the infer/eval contract. BatchNormalization (inference, and
 * training mode with its running statistics), InstanceNormalization,
 * LayerNormalization, LRN, MeanVarianceNormalization, and Softmax, LogSoftmax and
 * Hardmax. Every statistic is accumulated in double over plain loops: the data is
 * viewed as (outer, len, inner) around the normalized axes so a "row" is len elements
 * inner apart. Variances are population variances (divide by the count). */
#include "ir/ops/nn_norm_attrs.h"

#include <math.h>
#include <string.h>

/* ---- BatchNormalization ---- */

int kn_bn_training(kn_ctx *cx, const kn_node *n) {
    if (n->opset >= 14) return (int)kn_attr_int(cx, n, "training_mode", 0);
    int requested = 0;
    for (int j = 1; j < n->nout; j++) requested |= n->out[j] != NULL;
    if (n->opset < 7 && kn_attr_int(cx, n, "is_test", 0)) return 0;
    return requested;
}

/* Elements of the per-channel parameters: C, or C x D1 x ... with spatial=0 (opset < 9). */
static int64_t bn_param_count(const kn_node *n, kn_ctx *cx, const kn_type *x) {
    int64_t spatial = n->opset < 9 ? kn_attr_int(cx, n, "spatial", 1) : 1;
    return spatial ? x->dims[1] : kn_prod(x->dims, 1, x->rank);
}

static kn_status infer_batchnorm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    for (int i = 0; i < 5; i++)
        if (kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    int train = kn_bn_training(cx, n);
    if (kn_failed(cx)) return cx->status;
    out[0] = x->rank < 0 ? kn_type_unknown(x->dtype) : *x;
    for (int j = 1; j < n->nout; j++) out[j] = in[j < 3 ? j + 2 : j]->type;
    if (x->rank < 0) return KN_OK;
    if (x->rank < 2) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 2", x->rank);
    if (train && n->opset >= 14 && n->nout > 3)
        return kn_diag(cx, n, KN_EINVAL, "training mode has 3 outputs from opset 14");
    int64_t want = bn_param_count(n, cx, x);
    for (int i = 1; i < 5; i++) {
        int64_t c = kn_type_numel(&in[i]->type);
        if (c >= 0 && want >= 0 && c != want)
            return kn_diag(cx, n, KN_EINVAL, "input %d has %lld elements, expected %lld", i,
                           (long long)c, (long long)want);
    }
    return KN_OK;
}

static kn_status eval_batchnorm(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_batchnorm)) return cx->status;
    const kn_tensor *x = in[0], *scale = in[1], *bias = in[2], *mean = in[3], *var = in[4];
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    double momentum = kn_attr_float(cx, n, "momentum", 0.9f);
    int train = kn_bn_training(cx, n);
    int64_t np = bn_param_count(n, cx, &x->type);
    if (kn_failed(cx)) return cx->status;
    /* x as (N, np, inner): np parameters, each applied to inner consecutive elements. */
    int64_t nb = x->type.dims[0], inner = kn_tensor_numel(x) / (nb * np > 0 ? nb * np : 1);
    kn_arena *a = kn_exec_arena(ex);
    double *bm = kn_arena_array(a, (size_t)np + 1, sizeof *bm);
    double *bv = kn_arena_array(a, (size_t)np + 1, sizeof *bv);
    KN_ASSERT(bm && bv);
    for (int64_t p = 0; p < np; p++) {
        if (!train) {
            bm[p] = kn_tensor_get_f64(mean, p);
            bv[p] = kn_tensor_get_f64(var, p);
            continue;
        }
        double s = 0, q = 0, cnt = (double)(nb * inner);
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = 0; i < inner; i++) s += kn_tensor_get_f64(x, (b * np + p) * inner + i);
        bm[p] = cnt ? s / cnt : 0;
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = 0; i < inner; i++) {
                double d = kn_tensor_get_f64(x, (b * np + p) * inner + i) - bm[p];
                q += d * d;
            }
        bv[p] = cnt ? q / cnt : 0;
    }
    for (int64_t b = 0; b < nb; b++)
        for (int64_t p = 0; p < np; p++) {
            double k = kn_tensor_get_f64(scale, p) / sqrt(bv[p] + eps),
                   c = kn_tensor_get_f64(bias, p);
            for (int64_t i = 0; i < inner; i++) {
                int64_t at = (b * np + p) * inner + i;
                kn_tensor_set_f64(out[0], at, (kn_tensor_get_f64(x, at) - bm[p]) * k + c);
            }
        }
    if (!train) return KN_OK;
    for (int64_t p = 0; p < np; p++) {
        double rm = kn_tensor_get_f64(mean, p) * momentum + bm[p] * (1 - momentum);
        double rv = kn_tensor_get_f64(var, p) * momentum + bv[p] * (1 - momentum);
        if (n->nout > 1 && n->out[1]) kn_tensor_set_f64(out[1], p, rm);
        if (n->nout > 2 && n->out[2]) kn_tensor_set_f64(out[2], p, rv);
        if (n->nout > 3 && n->out[3]) kn_tensor_set_f64(out[3], p, bm[p]);
        if (n->nout > 4 && n->out[4]) kn_tensor_set_f64(out[4], p, bv[p]);
    }
    return KN_OK;
}

/* ---- InstanceNormalization ---- */

static kn_status infer_instancenorm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                    kn_type *out) {
    for (int i = 0; i < 3; i++)
        if (kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    out[0] = *x;
    if (x->rank < 0) return KN_OK;
    if (x->rank < 3) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 3", x->rank);
    for (int i = 1; i < 3; i++) {
        int64_t c = kn_type_numel(&in[i]->type);
        if (c >= 0 && x->dims[1] >= 0 && c != x->dims[1])
            return kn_diag(cx, n, KN_EINVAL, "input %d has %lld elements, expected %lld", i,
                           (long long)c, (long long)x->dims[1]);
    }
    return KN_OK;
}

static kn_status eval_instancenorm(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                   kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_instancenorm)) return cx->status;
    const kn_tensor *x = in[0];
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    if (kn_failed(cx)) return cx->status;
    int64_t c = x->type.dims[1], nc = x->type.dims[0] * c;
    int64_t inner = kn_prod(x->type.dims, 2, x->type.rank);
    for (int64_t r = 0; r < nc; r++) {
        double s = 0, q = 0;
        for (int64_t i = 0; i < inner; i++) s += kn_tensor_get_f64(x, r * inner + i);
        double m = inner ? s / (double)inner : 0;
        for (int64_t i = 0; i < inner; i++) {
            double d = kn_tensor_get_f64(x, r * inner + i) - m;
            q += d * d;
        }
        double k = kn_tensor_get_f64(in[1], r % c) / sqrt((inner ? q / (double)inner : 0) + eps);
        double b = kn_tensor_get_f64(in[2], r % c);
        for (int64_t i = 0; i < inner; i++)
            kn_tensor_set_f64(out[0], r * inner + i,
                              (kn_tensor_get_f64(x, r * inner + i) - m) * k + b);
    }
    return KN_OK;
}

/* ---- GroupNormalization (opset 18; opset 21: scale and bias per channel) ---- */

static kn_status groupnorm_groups(kn_ctx *cx, const kn_node *n, const kn_type *x, int64_t *g) {
    *g = kn_attr_int(cx, n, "num_groups", -1);
    if (kn_failed(cx)) return cx->status;
    if (*g < 1) return kn_diag(cx, n, KN_EINVAL, "num_groups is required and must be >= 1");
    if (x->rank >= 0 && x->dims[1] >= 0 && x->dims[1] % *g)
        return kn_diag(cx, n, KN_EINVAL, "%lld channels do not divide into %lld groups",
                       (long long)x->dims[1], (long long)*g);
    return KN_OK;
}

static kn_status infer_groupnorm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    for (int i = 0; i < 3; i++)
        if (kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    out[0] = *x;
    if (x->rank < 0) return KN_OK;
    if (x->rank < 2) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 2", x->rank);
    int64_t g;
    if (groupnorm_groups(cx, n, x, &g)) return cx->status;
    int64_t want = n->opset >= 21 ? x->dims[1] : g;
    for (int i = 1; i < 3; i++) {
        int64_t c = kn_type_numel(&in[i]->type);
        if (c >= 0 && want >= 0 && c != want)
            return kn_diag(cx, n, KN_EINVAL, "input %d has %lld elements, expected %lld (%s)", i,
                           (long long)c, (long long)want,
                           n->opset >= 21 ? "one per channel" : "one per group before opset 21");
    }
    return KN_OK;
}

static kn_status eval_groupnorm(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_groupnorm)) return cx->status;
    const kn_tensor *x = in[0];
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    int64_t g;
    if (kn_failed(cx) || groupnorm_groups(cx, n, &x->type, &g)) return cx->status;
    int64_t c = x->type.dims[1], cg = c / g, rows = x->type.dims[0] * g;
    int64_t inner = kn_prod(x->type.dims, 2, x->type.rank), len = cg * inner;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0, q = 0;
        for (int64_t i = 0; i < len; i++) s += kn_tensor_get_f64(x, r * len + i);
        double m = len ? s / (double)len : 0;
        for (int64_t i = 0; i < len; i++) {
            double d = kn_tensor_get_f64(x, r * len + i) - m;
            q += d * d;
        }
        double k = 1 / sqrt((len ? q / (double)len : 0) + eps);
        for (int64_t i = 0; i < len; i++) {
            int64_t p = n->opset >= 21 ? (r % g) * cg + i / inner : r % g;
            double v = (kn_tensor_get_f64(x, r * len + i) - m) * k;
            kn_tensor_set_f64(out[0], r * len + i,
                              v * kn_tensor_get_f64(in[1], p) + kn_tensor_get_f64(in[2], p));
        }
    }
    return KN_OK;
}

/* ---- LayerNormalization ---- */

static kn_status infer_layernorm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    for (int i = 0; i < 3; i++)
        if ((i < 2 || kn_opt_in(n, in, i)) && kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT))
            return cx->status;
    const kn_type *x = &in[0]->type;
    int64_t axis = kn_attr_int(cx, n, "axis", -1), stash = kn_attr_int(cx, n, "stash_type", 1);
    if (kn_failed(cx)) return cx->status;
    if (!kn_dtype_valid((int)stash) || !kn_dtype_get((int)stash)->is_float)
        return kn_diag(cx, n, KN_EINVAL, "stash_type %lld is not a float type", (long long)stash);
    out[0] = *x;
    if (x->rank < 0) {
        for (int j = 1; j < n->nout; j++) out[j] = kn_type_unknown((kn_dtype)stash);
        return KN_OK;
    }
    int ax;
    if (kn_axis(cx, n, axis, x->rank, 0, &ax)) return cx->status;
    for (int i = 1; i < 3; i++) {
        if (!kn_opt_in(n, in, i)) continue;
        const kn_type *t = &in[i]->type, *ts[2] = {x, t};
        kn_type bc;
        memset(&bc, 0, sizeof bc);
        if (kn_broadcast(cx, n, 2, ts, &bc)) return cx->status;
        if (t->rank > x->rank)
            return kn_diag(cx, n, KN_EINVAL, "input %d has rank %d, above the input's %d", i,
                           t->rank, x->rank);
    }
    for (int j = 1; j < n->nout; j++) {
        out[j] = *x;
        out[j].dtype = (kn_dtype)stash;
        for (int d = ax; d < x->rank; d++) {
            out[j].dims[d] = 1;
            out[j].sym[d] = NULL;
        }
    }
    return KN_OK;
}

static kn_status eval_layernorm(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_layernorm)) return cx->status;
    const kn_tensor *x = in[0], *scale = in[1], *bias = kn_opt_in(n, in, 2);
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    int ax;
    if (kn_failed(cx) || kn_axis(cx, n, kn_attr_int(cx, n, "axis", -1), x->type.rank, 0, &ax))
        return cx->status;
    const kn_type *xt = &x->type;
    int64_t len = kn_prod(xt->dims, ax, xt->rank), outer = kn_prod(xt->dims, 0, ax);
    int64_t ss[KN_MAX_RANK], bs[KN_MAX_RANK];
    kn_bcast_strides(&scale->type, xt->rank, xt->dims, ss);
    if (bias) kn_bcast_strides(&bias->type, xt->rank, xt->dims, bs);
    for (int64_t r = 0; r < outer; r++) {
        double s = 0, q = 0;
        for (int64_t i = 0; i < len; i++) s += kn_tensor_get_f64(x, r * len + i);
        double m = len ? s / (double)len : 0;
        for (int64_t i = 0; i < len; i++) {
            double d = kn_tensor_get_f64(x, r * len + i) - m;
            q += d * d;
        }
        double inv = 1 / sqrt((len ? q / (double)len : 0) + eps);
        for (int64_t i = 0; i < len; i++) {
            int64_t at = r * len + i;
            double y = (kn_tensor_get_f64(x, at) - m) * inv *
                       kn_tensor_get_f64(scale, kn_bcast_offset(at, xt->rank, xt->dims, ss));
            if (bias) y += kn_tensor_get_f64(bias, kn_bcast_offset(at, xt->rank, xt->dims, bs));
            kn_tensor_set_f64(out[0], at, y);
        }
        if (n->nout > 1 && n->out[1]) kn_tensor_set_f64(out[1], r, m);
        if (n->nout > 2 && n->out[2]) kn_tensor_set_f64(out[2], r, inv);
    }
    return KN_OK;
}

/* ---- LRN ---- */

static kn_status infer_lrn(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    int64_t size = kn_attr_int(cx, n, "size", 0);
    if (kn_failed(cx)) return cx->status;
    if (!kn_node_attr(n, "size") || size < 1)
        return kn_diag(cx, n, KN_EINVAL, "size is required and must be >= 1");
    const kn_type *x = &in[0]->type;
    if (x->rank >= 0 && x->rank < 2)
        return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 2", x->rank);
    out[0] = *x;
    return KN_OK;
}

kn_status kn_lrn_attrs_get(kn_ctx *cx, const kn_node *n, kn_lrn_attrs *a) {
    a->size = kn_attr_int(cx, n, "size", 1);
    a->alpha = kn_attr_float(cx, n, "alpha", 1e-4f);
    a->beta = kn_attr_float(cx, n, "beta", 0.75f);
    a->bias = kn_attr_float(cx, n, "bias", 1.0f);
    return cx->status;
}

static kn_status eval_lrn(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_lrn)) return cx->status;
    const kn_tensor *x = in[0];
    kn_lrn_attrs a;
    if (kn_lrn_attrs_get(cx, n, &a)) return cx->status;
    int64_t nb = x->type.dims[0], c = x->type.dims[1],
            inner = kn_prod(x->type.dims, 2, x->type.rank);
    int64_t lo = (a.size - 1) / 2, hi = a.size / 2; /* floor and ceil of (a.size-1)/2 */
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t i = 0; i < inner; i++) {
                double sq = 0;
                for (int64_t k = ch - lo; k <= ch + hi; k++) {
                    if (k < 0 || k >= c) continue;
                    double v = kn_tensor_get_f64(x, (b * c + k) * inner + i);
                    sq += v * v;
                }
                int64_t at = (b * c + ch) * inner + i;
                kn_tensor_set_f64(out[0], at,
                                  kn_tensor_get_f64(x, at) /
                                      pow(a.bias + a.alpha / (double)a.size * sq, a.beta));
            }
    return KN_OK;
}

/* ---- MeanVarianceNormalization ---- */

static kn_status infer_mvn(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    out[0] = in[0]->type;
    return KN_OK;
}

kn_status kn_mvn_axes(kn_ctx *cx, const kn_node *n, int rank, int *red) {
    const int64_t *axes, def[3] = {0, 2, 3};
    int na = kn_attr_ints(cx, n, "axes", &axes);
    if (kn_failed(cx)) return cx->status;
    if (na < 0) {
        axes = def;
        na = 3;
    }
    for (int i = 0; i < na; i++) {
        int a;
        if (kn_axis(cx, n, axes[i], rank, 0, &a)) return cx->status;
        red[a] = 1;
    }
    return KN_OK;
}

static kn_status eval_mvn(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_mvn)) return cx->status;
    const kn_tensor *x = in[0];
    const kn_type *xt = &x->type;
    int red[KN_MAX_RANK] = {0};
    if (kn_mvn_axes(cx, n, xt->rank, red)) return cx->status;
    /* Group key of each element: its index over the kept axes. */
    int64_t kept[KN_MAX_RANK], nkey = 1, numel = kn_tensor_numel(x), coord[KN_MAX_RANK];
    for (int d = 0; d < xt->rank; d++) {
        kept[d] = red[d] ? 1 : xt->dims[d];
        nkey *= kept[d];
    }
    kn_arena *ar = kn_exec_arena(ex);
    double *sum = kn_arena_array(ar, (size_t)nkey + 1, sizeof *sum);
    double *sq = kn_arena_array(ar, (size_t)nkey + 1, sizeof *sq);
    int64_t *key = kn_arena_array(ar, (size_t)numel + 1, sizeof *key);
    KN_ASSERT(sum && sq && key);
    int64_t cnt = nkey ? numel / nkey : 0;
    for (int64_t i = 0; i < numel; i++) {
        int64_t r = i, k = 0;
        for (int d = xt->rank - 1; d >= 0; d--) {
            coord[d] = r % xt->dims[d];
            r /= xt->dims[d];
        }
        for (int d = 0; d < xt->rank; d++) k = k * kept[d] + (red[d] ? 0 : coord[d]);
        key[i] = k;
        sum[k] += kn_tensor_get_f64(x, i);
    }
    for (int64_t i = 0; i < numel; i++) {
        double d = kn_tensor_get_f64(x, i) - sum[key[i]] / (double)cnt;
        sq[key[i]] += d * d;
    }
    for (int64_t i = 0; i < numel; i++) {
        double m = sum[key[i]] / (double)cnt, sd = sqrt(sq[key[i]] / (double)cnt);
        kn_tensor_set_f64(out[0], i, (kn_tensor_get_f64(x, i) - m) / (sd + 1e-9));
    }
    return KN_OK;
}

/* ---- Softmax, LogSoftmax, Hardmax ---- */

static kn_status infer_softmax(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    int64_t axis = kn_attr_int(cx, n, "axis", n->opset < 13 ? 1 : -1);
    if (kn_failed(cx)) return cx->status;
    int ax;
    if (x->rank >= 0 && kn_axis(cx, n, axis, x->rank, 0, &ax)) return cx->status;
    out[0] = *x;
    return KN_OK;
}

kn_status kn_softmax_view(kn_ctx *cx, const kn_node *n, int rank, const int64_t *dims,
                          int64_t *outer, int64_t *len, int64_t *inner) {
    int ax;
    int64_t axis = kn_attr_int(cx, n, "axis", n->opset < 13 ? 1 : -1);
    if (kn_failed(cx) || kn_axis(cx, n, axis, rank, 0, &ax)) return cx->status;
    /* Before opset 13 the input is coerced to 2-D at axis: rows of prod(dims[ax:]). */
    *outer = kn_prod(dims, 0, ax);
    if (n->opset < 13) {
        *len = kn_prod(dims, ax, rank);
        *inner = 1;
    } else {
        *len = dims[ax];
        *inner = kn_prod(dims, ax + 1, rank);
    }
    return KN_OK;
}

static kn_status eval_softmax(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_softmax)) return cx->status;
    const kn_tensor *x = in[0];
    const kn_type *xt = &x->type;
    int64_t outer, len, inner;
    if (kn_softmax_view(cx, n, xt->rank, xt->dims, &outer, &len, &inner)) return cx->status;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * len * inner + i, arg = 0;
            double mx = -INFINITY, s = 0;
            for (int64_t k = 0; k < len; k++) {
                double v = kn_tensor_get_f64(x, base + k * inner);
                if (v > mx || k == 0) {
                    mx = v;
                    arg = k;
                }
            }
            for (int64_t k = 0; k < len; k++) s += exp(kn_tensor_get_f64(x, base + k * inner) - mx);
            for (int64_t k = 0; k < len; k++) {
                int64_t at = base + k * inner;
                double y = n->op == KN_OP_HARDMAX   ? (k == arg)
                           : n->op == KN_OP_SOFTMAX ? exp(kn_tensor_get_f64(x, at) - mx) / s
                                                    : kn_tensor_get_f64(x, at) - mx - log(s);
                kn_tensor_set_f64(out[0], at, y);
            }
        }
    return KN_OK;
}

const kn_opimpl kn_ops_nn_norm[] = {
    {KN_OP_BATCHNORMALIZATION, infer_batchnorm, eval_batchnorm},
    {KN_OP_INSTANCENORMALIZATION, infer_instancenorm, eval_instancenorm},
    {KN_OP_GROUPNORMALIZATION, infer_groupnorm, eval_groupnorm},
    {KN_OP_LAYERNORMALIZATION, infer_layernorm, eval_layernorm},
    {KN_OP_LRN, infer_lrn, eval_lrn},
    {KN_OP_MEANVARIANCENORMALIZATION, infer_mvn, eval_mvn},
    {KN_OP_SOFTMAX, infer_softmax, eval_softmax},
    {KN_OP_LOGSOFTMAX, infer_softmax, eval_softmax},
    {KN_OP_HARDMAX, infer_softmax, eval_softmax},
    {KN_OP_COUNT, 0, 0},
};
