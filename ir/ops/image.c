/* Operators of group 'image': resampling and region ops on NCHW-style tensors.
 *
 * Resize and Upsample share one plan (kn_resize_plan, ir/ops/image_attrs.h): per axis a scale, an
 * output length and a coordinate transform. The interpolation is separable: each output coordinate
 * on each axis maps to a few (input index, weight) taps, and an output element is the tensor
 * product of its axes' taps, as in the ONNX reference (onnx/backend/test/case/node/resize.py): a
 * window of 2 (nearest, linear) or 4 (cubic) neighbours of an edge-padded axis, weights from the
 * fractional position. Upsample and Resize-10 use asymmetric coordinates and onnxruntime's legacy
 * nearest rounding (floor when upsampling, ceil when downsampling). Resize-18's antialias
 * stretches the linear or cubic filter by 1/scale on downscaled axes (wider windows, the
 * weights normalized to sum 1), as the ONNX reference does; nearest ignores it.
 *
 * GridSample, RoiAlign and MaxRoiPool sample 4-D inputs; RoiAlign follows
 * onnxruntime's sampling grid. NonMaxSuppression's output length depends on the
 * data: infer runs the selection itself when every input is known.
 * See ir/ops.h for the infer/eval contract. */
#include "ir/ops/image_attrs.h"

#include <math.h>
#include <string.h>

/* 0: omitted or empty, 1: has elements, -1: unknown (shape not known). */
static int presence(const kn_tensor *t) {
    if (!t) return 0;
    int64_t numel = kn_tensor_numel(t);
    if (numel < 0) return -1;
    return numel > 0;
}

/* Index of s in names[0..count), or -1. */
static int pick(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* Stores v into element i of t, rounding to nearest for integer types. */
static void store_value(kn_tensor *t, size_t i, double v) {
    if (kn_dtype_get(t->type.dtype)->is_int) v = nearbyint(v);
    kn_store_f64(t->data, t->type.dtype, i, v);
}

/* out[0] when infer allocated it, else a new tensor of shape dims. */
static kn_tensor *output(kn_exec *ex, const kn_node *n, kn_tensor **out, kn_dtype t, int rank,
                         const int64_t *dims) {
    if (!out[0]) out[0] = kn_exec_tensor(ex, n, t, rank, dims);
    return out[0];
}

/* ---- Resize, Upsample ---- */

static const char *const resize_modes[] = {"nearest", "linear", "cubic"};
static const char *const coord_modes[] = {
    "half_pixel",           "pytorch_half_pixel", "align_corners",       "asymmetric",
    "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"};

kn_status kn_resize_setup(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_resize_plan *p) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_NUM);
    if (st) return st;
    memset(p, 0, sizeof *p);
    const kn_type *xt = &in[0]->type;
    p->rank = xt->rank;
    int legacy = n->op == KN_OP_UPSAMPLE || n->opset < 11;

    const char *mode = kn_attr_str(cx, n, "mode", "nearest");
    const char *coord = kn_attr_str(cx, n, "coordinate_transformation_mode", "half_pixel");
    const char *nearest = kn_attr_str(cx, n, "nearest_mode", "round_prefer_floor");
    p->cubic_a = kn_attr_float(cx, n, "cubic_coeff_a", -0.75f);
    p->exclude_outside = (int)kn_attr_int(cx, n, "exclude_outside", 0);
    p->extrapolation = kn_attr_float(cx, n, "extrapolation_value", 0.0f);
    if (kn_failed(cx)) return cx->status;

    p->mode = pick(mode, resize_modes, legacy ? 2 : 3);
    if (legacy && !strcmp(mode, "bilinear")) p->mode = RS_LINEAR;
    if (p->mode < 0) return kn_diag(cx, n, KN_EINVAL, "unsupported mode '%s'", mode);
    if (legacy) {
        p->coord = CT_ASYMMETRIC;
        p->nearest = NM_LEGACY;
    } else {
        p->coord = pick(coord, coord_modes, 7);
        if (p->coord == CT_TF_NN && n->opset >= 13) p->coord = -1;         /* removed in opset 13 */
        if (p->coord == CT_HALF_PIXEL_SYM && n->opset < 19) p->coord = -1; /* added in 19 */
        if (p->coord < 0)
            return kn_diag(cx, n, KN_EINVAL, "unsupported coordinate_transformation_mode '%s'",
                           coord);
        p->nearest = pick(nearest, nearest_modes, 4);
        if (p->nearest < 0)
            return kn_diag(cx, n, KN_EINVAL, "unsupported nearest_mode '%s'", nearest);
    }

    /* Where the scales come from. */
    const kn_tensor *roi = NULL, *scales = NULL, *sizes = NULL;
    const float *ascales = NULL;
    int nascales = -1;
    float hw[4] = {1, 1, 1, 1};
    if (n->op == KN_OP_UPSAMPLE && n->opset < 7) {
        hw[2] = kn_attr_float(cx, n, "height_scale", 1.0f);
        hw[3] = kn_attr_float(cx, n, "width_scale", 1.0f);
        ascales = hw;
        nascales = 4;
    } else if (n->op == KN_OP_UPSAMPLE && n->opset < 9) {
        nascales = kn_attr_floats(cx, n, "scales", &ascales);
        if (nascales < 0) return kn_diag(cx, n, KN_EINVAL, "attribute 'scales' is required");
    } else if (legacy) {
        scales = kn_opt_in(n, in, 1);
        if (!scales) return kn_diag(cx, n, KN_EINVAL, "input 'scales' is required");
    } else {
        roi = kn_opt_in(n, in, 1);
        scales = kn_opt_in(n, in, 2);
        sizes = kn_opt_in(n, in, 3);
    }
    if (kn_failed(cx)) return cx->status;
    if (p->rank < 0) return KN_OK;
    for (int a = 0; a < p->rank; a++) p->out[a] = -1;

    /* Opset 18: scales/sizes (and roi) may cover only `axes`; sizes may keep the
     * aspect ratio (one scale for all of them); antialias widens the filter when
     * downscaling. */
    int64_t axes[KN_MAX_RANK];
    int naxes = p->rank;
    for (int a = 0; a < p->rank; a++) axes[a] = a;
    int policy = 0; /* 0 stretch, 1 not_larger, 2 not_smaller */
    int64_t antialias = 0;
    if (n->opset >= 18 && n->op == KN_OP_RESIZE) {
        const int64_t *av;
        int k = kn_attr_ints(cx, n, "axes", &av);
        if (k > p->rank)
            return kn_diag(cx, n, KN_EINVAL, "axes has %d entries for rank %d", k, p->rank);
        for (int i = 0; i < k; i++) {
            int a;
            if (kn_axis(cx, n, av[i], p->rank, 0, &a)) return cx->status;
            axes[i] = a;
        }
        if (k >= 0) naxes = k;
        const char *pol = kn_attr_str(cx, n, "keep_aspect_ratio_policy", "stretch");
        antialias = kn_attr_int(cx, n, "antialias", 0);
        if (kn_failed(cx)) return cx->status;
        policy = !strcmp(pol, "not_larger") ? 1 : !strcmp(pol, "not_smaller") ? 2 : 0;
        if (!policy && strcmp(pol, "stretch"))
            return kn_diag(cx, n, KN_EINVAL, "unknown keep_aspect_ratio_policy '%s'", pol);
    }
    int has_scales = nascales >= 0 ? 1 : presence(scales);
    int has_sizes = presence(sizes);
    if (has_scales < 0 || has_sizes < 0) return KN_OK;
    if (has_scales && has_sizes)
        return kn_diag(cx, n, KN_EINVAL, "only one of 'scales' and 'sizes' may be given");
    if (!has_scales && !has_sizes)
        return kn_diag(cx, n, KN_EINVAL, "one of 'scales' and 'sizes' is required");
    const kn_tensor *src = has_sizes ? sizes : scales;
    int64_t count = src ? kn_tensor_numel(src) : nascales;
    if (count != naxes)
        return kn_diag(cx, n, KN_EINVAL, "'%s' has %lld elements, expected %d (%s)",
                       has_sizes ? "sizes" : "scales", (long long)count, naxes,
                       naxes == p->rank ? "the rank of X" : "one per axis in axes");
    if (src && !src->data) return KN_OK;
    for (int a = 0; a < p->rank; a++) p->scale[a] = 1, p->out[a] = xt->dims[a];
    if (has_sizes) {
        st = kn_check_dtype(cx, n, sizes, 3, KN_DT(I64));
        if (st) return st;
        p->from_sizes = 1;
        double common = policy == 1 ? INFINITY : 0;
        for (int i = 0; i < naxes; i++) {
            int a = (int)axes[i];
            p->out[a] = kn_load_i64(sizes->data, KN_I64, (size_t)i);
            if (p->out[a] < 0)
                return kn_diag(cx, n, KN_EINVAL, "sizes[%d] is negative (%lld)", i,
                               (long long)p->out[a]);
            int64_t d = xt->dims[a];
            p->scale[a] = d > 0 ? (double)p->out[a] / (double)d : 1.0;
            if (policy == 1 && p->scale[a] < common) common = p->scale[a];
            if (policy == 2 && p->scale[a] > common) common = p->scale[a];
        }
        for (int i = 0; policy && i < naxes; i++) { /* one scale, sizes rounded from it */
            int a = (int)axes[i];
            p->scale[a] = common;
            p->out[a] = xt->dims[a] < 0 ? -1 : (int64_t)nearbyint(common * (double)xt->dims[a]);
        }
    } else {
        if (src) {
            st = kn_check_dtype(cx, n, src, legacy ? 1 : 2, KN_DT_FLOAT);
            if (st) return st;
        }
        for (int i = 0; i < naxes; i++) {
            int a = (int)axes[i];
            double s = src ? kn_load_f64(src->data, src->type.dtype, (size_t)i) : ascales[i];
            if (!(s > 0)) return kn_diag(cx, n, KN_EINVAL, "scales[%d] must be positive", i);
            p->scale[a] = s;
            int64_t d = xt->dims[a];
            p->out[a] = d < 0 ? -1 : (int64_t)floor((double)d * s);
        }
    }
    p->antialias = antialias && p->mode != RS_NEAREST;
    for (int a = 0; a < p->rank; a++)
        if (kn_resize_window(p, a) > KN_RESIZE_MAX_TAPS)
            return kn_diag(cx, n, KN_EUNSUPPORTED,
                           "antialias with scale %g on axis %d needs %d taps per output "
                           "element; at most %d are supported",
                           p->scale[a], a, kn_resize_window(p, a), KN_RESIZE_MAX_TAPS);
    p->known = 1;

    for (int a = 0; a < p->rank; a++) {
        p->roi[a] = 0;
        p->roi[p->rank + a] = 1;
    }
    if (p->coord == CT_TF_CROP && naxes != p->rank && presence(roi) > 0)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "tf_crop_and_resize with axes is not supported");
    if (p->coord == CT_TF_CROP && presence(roi) != 0) {
        if (!roi->data) {
            p->known = 0; /* out[] is right, the roi comes at run time */
            return KN_OK;
        }
        if (kn_tensor_numel(roi) != 2 * p->rank)
            return kn_diag(cx, n, KN_EINVAL, "roi has %lld elements, expected %d",
                           (long long)kn_tensor_numel(roi), 2 * p->rank);
        for (int i = 0; i < 2 * p->rank; i++)
            p->roi[i] = kn_load_f64(roi->data, roi->type.dtype, (size_t)i);
    }
    return KN_OK;
}

static kn_status infer_resize(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_resize_plan p;
    kn_status st = kn_resize_setup(cx, n, in, &p);
    if (st) return st;
    kn_dtype t = in[0]->type.dtype;
    if (p.rank < 0) {
        out[0] = kn_type_unknown(t);
        return KN_OK;
    }
    out[0] = kn_type_make(t, p.rank, p.out);
    return KN_OK;
}

int kn_resize_window(const kn_resize_plan *p, int a) {
    int support = p->mode == RS_CUBIC ? 2 : 1;
    double s = p->scale[a];
    if (!p->antialias || !(s < 1)) return 2 * support;
    double half = ceil((double)support / s); /* -(floor(-support / s) + 1) + 1 */
    return half > KN_RESIZE_MAX_TAPS ? KN_RESIZE_MAX_TAPS + 1 : 2 * (int)half;
}

/* The taps of output coordinate o on axis a of input length len: input indexes (in
 * range) and weights (kn_resize_window(p, a) entries each), zero weights dropped.
 * Returns the tap count, or 0 when tf_crop_and_resize maps o outside the input (the
 * element is extrapolation_value). */
static int resize_taps(const kn_resize_plan *p, int a, int64_t len, int64_t o, int64_t *idx,
                       double *w) {
    double s = p->scale[a], x = (double)o, xo = 0;
    double olen = p->from_sizes ? (double)p->out[a] : s * (double)len;
    double last = (double)(len - 1);
    switch (p->coord) {
    case CT_HALF_PIXEL: xo = (x + 0.5) / s - 0.5; break;
    case CT_HALF_PIXEL_SYM: { /* opset 19: centred when the output length was rounded */
        double adj = (double)p->out[a] / (s * (double)len), c = (double)len / 2;
        xo = c * (1 - adj) + (x + 0.5) / s - 0.5;
        break;
    }
    case CT_PYTORCH: xo = olen > 1 ? (x + 0.5) / s - 0.5 : 0; break;
    case CT_ALIGN_CORNERS: xo = olen == 1 ? 0 : x * last / (olen - 1); break;
    case CT_ASYMMETRIC: xo = x / s; break;
    case CT_TF_NN: xo = (x + 0.5) / s; break;
    case CT_TF_CROP: {
        double x0 = p->roi[a], x1 = p->roi[p->rank + a];
        if (olen > 1)
            xo = x * (x1 - x0) * last / (olen - 1) + x0 * last;
        else
            xo = 0.5 * (x0 + x1) * last;
        if (xo < 0 || xo > last) return 0;
        break;
    }
    }

    /* The window: ntap neighbours of xo, preferring the left ones, on the axis padded
     * by ntap/2 edge values; ratio in (0, 1] is xo's distance from tap ntap/2 - 1. */
    int ntap = kn_resize_window(p, a), pad = ntap / 2;
    if (xo < -pad - 1.0) xo = -pad - 1.0;
    if (xo > (double)len + pad) xo = (double)len + pad;
    double base = floor(xo), ratio = xo - base;
    if (ratio == 0) {
        base -= 1;
        ratio = 1;
    }
    int64_t start = (int64_t)base - (pad - 1);
    if (start < -pad) start = -pad;
    if (start > len - 1 + pad - (ntap - 1)) start = len - 1 + pad - (ntap - 1);

    double *c = w; /* the weights are computed in place, then compacted */
    if (p->antialias && s < 1) {
        /* antialias: the filter at distances (k + 1 - pad - ratio) * s, normalized */
        double A = p->cubic_a, sum = 0;
        for (int k = 0; k < ntap; k++) {
            double d = fabs(((double)(k + 1 - pad) - ratio) * s), v;
            if (p->mode == RS_LINEAR)
                v = d < 1 ? 1 - d : 0;
            else
                v = d <= 1  ? ((A + 2) * d - (A + 3)) * d * d + 1
                    : d < 2 ? ((A * d - 5 * A) * d + 8 * A) * d - 4 * A
                            : 0;
            c[k] = v;
            sum += v;
        }
        for (int k = 0; k < ntap; k++) c[k] /= sum;
    } else if (p->mode == RS_NEAREST) {
        int right;
        if (ratio == 1)
            right = 1;
        else {
            switch (p->nearest) {
            case NM_ROUND_PREFER_FLOOR: right = ratio > 0.5; break;
            case NM_ROUND_PREFER_CEIL: right = ratio >= 0.5; break;
            case NM_FLOOR: right = 0; break;
            case NM_CEIL: right = 1; break;
            default: right = s < 1; break;
            }
        }
        c[0] = !right;
        c[1] = right;
    } else if (p->mode == RS_LINEAR) {
        c[0] = 1 - ratio;
        c[1] = ratio;
    } else {
        double A = p->cubic_a, r = ratio, q = 1 - ratio;
        c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
        c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
        c[3] = ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A;
    }
    if (p->exclude_outside) {
        double sum = 0;
        for (int k = 0; k < ntap; k++) {
            int64_t i = start + k;
            if (i < 0 || i >= len) c[k] = 0;
            sum += c[k];
        }
        for (int k = 0; k < ntap; k++) c[k] /= sum;
    }
    int m = 0;
    double c0 = c[0];
    for (int k = 0; k < ntap; k++) { /* m <= k: compacting c (= w) in place is safe */
        if (c[k] == 0) continue;
        int64_t i = start + k;
        idx[m] = i < 0 ? 0 : i >= len ? len - 1 : i;
        w[m++] = c[k];
    }
    if (m == 0) { /* every weight vanished (degenerate exclude_outside): keep one tap */
        idx[0] = start < 0 ? 0 : start >= len ? len - 1 : start;
        w[m++] = c0;
    }
    return m;
}

int kn_resize_bilinear_axes(const kn_resize_plan *p, kn_dtype t, int *a0, int *a1) {
    if (p->mode != RS_LINEAR || p->antialias || p->coord == CT_TF_CROP ||
        p->coord == CT_HALF_PIXEL_SYM || (t != KN_F32 && t != KN_F16 && t != KN_BF16))
        return 0;
    if (p->rank == 2) {
        *a0 = 0, *a1 = 1;
        return 1;
    }
    if (p->rank != 4 || p->scale[0] != 1) return 0;
    if (p->scale[1] == 1) { /* NCHW */
        *a0 = 2, *a1 = 3;
        return 1;
    }
    if (p->scale[3] == 1) { /* NHWC */
        *a0 = 1, *a1 = 2;
        return 1;
    }
    return 0;
}

void kn_resize_bilinear_taps(const kn_resize_plan *p, int a, int64_t len, int64_t olen, int64_t o,
                             int64_t idx[2], float w[2]) {
    /* the resized length is scale * len without sizes, as in the ONNX specification and
     * resize_taps (onnxruntime takes the rounded output length: align_corners differs
     * where scale * len is not an integer) */
    float s = (float)p->scale[a], x = (float)o, lo = (float)len, c;
    float lr = p->from_sizes ? (float)olen : s * lo;
    if (s == 1)
        c = x;
    else
        switch (p->coord) {
        case CT_ASYMMETRIC: c = x / s; break;
        case CT_PYTORCH: c = lr > 1 ? (x + 0.5f) / s - 0.5f : 0.0f; break;
        case CT_TF_NN: c = (x + 0.5f) / s; break;
        case CT_ALIGN_CORNERS: c = lr == 1 ? 0.0f : x * (lo - 1) / (lr - 1); break;
        default: c = (x + 0.5f) / s - 0.5f; break;
        }
    if (lo - 1 < c) c = lo - 1; /* std::max(0, std::min(c, len - 1)) */
    if (c < 0) c = 0;
    int64_t i0 = (int64_t)c;
    if (i0 > len - 1) i0 = len - 1;
    int64_t i1 = i0 + 1 < len - 1 ? i0 + 1 : len - 1;
    idx[0] = i0, idx[1] = i1;
    w[0] = fabsf(c - (float)i1);
    w[1] = fabsf(c - (float)i0);
    if (i0 == i1) w[0] = w[1] = 0.5f;
}

/* kn_resize_bilinear_taps' arithmetic over axes a0 and a1 of X (every other axis maps
 * identically). */
static kn_status eval_bilinear(kn_exec *ex, const kn_node *n, const kn_resize_plan *p, int a0,
                               int a1, const kn_tensor *x, kn_tensor *y) {
    kn_arena *ar = kn_exec_arena(ex);
    int ax[2] = {a0, a1};
    int64_t *idx[2];
    float *w[2];
    for (int j = 0; j < 2; j++) {
        int64_t len = x->type.dims[ax[j]], olen = p->out[ax[j]];
        idx[j] = kn_arena_array(ar, (size_t)olen * 2, sizeof(int64_t));
        w[j] = kn_arena_array(ar, (size_t)olen * 2, sizeof(float));
        if (!idx[j] || !w[j]) return kn_diag(kn_exec_ctx(ex), n, KN_ELIMIT, "output too large");
        for (int64_t o = 0; o < olen; o++)
            kn_resize_bilinear_taps(p, ax[j], len, olen, o, idx[j] + 2 * o, w[j] + 2 * o);
    }
    int r = p->rank;
    int64_t xstr[KN_MAX_RANK], oi[KN_MAX_RANK] = {0}, ynumel = kn_tensor_numel(y);
    kn_strides(r, x->type.dims, xstr);
    for (int64_t e = 0; e < ynumel; e++) {
        int64_t base = 0;
        for (int a = 0; a < r; a++)
            if (a != a0 && a != a1) base += oi[a] * xstr[a];
        float acc = 0;
        for (int k0 = 0; k0 < 2; k0++)
            for (int k1 = 0; k1 < 2; k1++) {
                float wk = w[0][2 * oi[a0] + k0] * w[1][2 * oi[a1] + k1];
                int64_t off =
                    base + idx[0][2 * oi[a0] + k0] * xstr[a0] + idx[1][2 * oi[a1] + k1] * xstr[a1];
                float xv = (float)kn_load_f64(x->data, x->type.dtype, (size_t)off);
                float t = wk * xv;
                acc = acc + t;
            }
        store_value(y, (size_t)e, acc);
        for (int a = r - 1; a >= 0 && ++oi[a] == p->out[a]; a--) oi[a] = 0;
    }
    return KN_OK;
}

static kn_status eval_resize(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *ar = kn_exec_arena(ex);
    kn_resize_plan p;
    kn_status st = kn_resize_setup(cx, n, in, &p);
    if (st) return st;
    if (!p.known) return kn_diag(cx, n, KN_EINTERNAL, "resize parameters unknown at run time");
    const kn_tensor *x = in[0];
    int r = p.rank;
    kn_tensor *y = output(ex, n, out, x->type.dtype, r, p.out);
    if (!y) return cx->status;
    int64_t ynumel = kn_tensor_numel(y);
    if (ynumel == 0) return KN_OK;
    for (int a = 0; a < r; a++)
        if (x->type.dims[a] == 0)
            return kn_diag(cx, n, KN_EINVAL, "cannot resize an empty axis %d to length %lld", a,
                           (long long)p.out[a]);
    int a0, a1;
    if (kn_resize_bilinear_axes(&p, y->type.dtype, &a0, &a1))
        return eval_bilinear(ex, n, &p, a0, a1, x, y);

    /* Taps per axis: up to win[a] per output coordinate. */
    int64_t *tidx[KN_MAX_RANK];
    double *tw[KN_MAX_RANK];
    int *tn[KN_MAX_RANK], win[KN_MAX_RANK];
    for (int a = 0; a < r; a++) {
        int64_t len = p.out[a];
        win[a] = kn_resize_window(&p, a);
        tidx[a] = kn_arena_array(ar, (size_t)len * (size_t)win[a], sizeof(int64_t));
        tw[a] = kn_arena_array(ar, (size_t)len * (size_t)win[a], sizeof(double));
        tn[a] = kn_arena_array(ar, (size_t)len, sizeof(int));
        if (!tidx[a] || !tw[a] || !tn[a]) return kn_diag(cx, n, KN_ELIMIT, "output too large");
        for (int64_t o = 0; o < len; o++)
            tn[a][o] =
                resize_taps(&p, a, x->type.dims[a], o, tidx[a] + o * win[a], tw[a] + o * win[a]);
    }

    int64_t xstr[KN_MAX_RANK], oi[KN_MAX_RANK] = {0};
    kn_strides(r, x->type.dims, xstr);
    for (int64_t e = 0; e < ynumel; e++) {
        int outside = 0;
        for (int a = 0; a < r; a++) outside |= tn[a][oi[a]] == 0;
        double v;
        if (outside)
            v = p.extrapolation;
        else {
            /* Sum over every combination k[] of the axes' taps. */
            int k[KN_MAX_RANK] = {0};
            v = 0;
            for (;;) {
                double wt = 1;
                int64_t off = 0;
                for (int a = 0; a < r; a++) {
                    wt *= tw[a][oi[a] * win[a] + k[a]];
                    off += tidx[a][oi[a] * win[a] + k[a]] * xstr[a];
                }
                v += wt * kn_load_f64(x->data, x->type.dtype, (size_t)off);
                int a = r - 1;
                while (a >= 0 && ++k[a] == tn[a][oi[a]]) k[a--] = 0;
                if (a < 0) break;
            }
        }
        store_value(y, (size_t)e, v);
        for (int a = r - 1; a >= 0 && ++oi[a] == p.out[a]; a--) oi[a] = 0;
    }
    return KN_OK;
}

/* ---- GridSample ---- */

static const char *const gs_modes[] = {"bilinear", "nearest", "bicubic"};
static const char *const gs_paddings[] = {"zeros", "border", "reflection"};

kn_status kn_grid_setup(kn_ctx *cx, const kn_node *n, kn_grid_params *g) {
    /* opset 20 renamed bilinear/bicubic to linear/cubic */
    const char *mode = kn_attr_str(cx, n, "mode", n->opset >= 20 ? "linear" : "bilinear");
    const char *pad = kn_attr_str(cx, n, "padding_mode", "zeros");
    g->align_corners = kn_attr_int(cx, n, "align_corners", 0) != 0;
    if (kn_failed(cx)) return cx->status;
    g->mode = pick(mode, gs_modes, 3);
    if (n->opset >= 20)
        g->mode = !strcmp(mode, "linear")    ? GS_BILINEAR
                  : !strcmp(mode, "cubic")   ? GS_BICUBIC
                  : !strcmp(mode, "nearest") ? GS_NEAREST
                                             : -1;
    if (g->mode < 0) return kn_diag(cx, n, KN_EINVAL, "unsupported mode '%s'", mode);
    g->padding = pick(pad, gs_paddings, 3);
    if (g->padding < 0) return kn_diag(cx, n, KN_EINVAL, "unsupported padding_mode '%s'", pad);
    return KN_OK;
}

static kn_status infer_gridsample(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  kn_type *out) {
    kn_grid_params g;
    kn_status st = kn_grid_setup(cx, n, &g);
    if (!st) st = kn_check_dtype(cx, n, in[0], 0, KN_DT_NUM);
    if (!st) st = kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT);
    if (st) return st;
    const kn_type *xt = &in[0]->type, *gt = &in[1]->type;
    if (xt->rank >= 0 && xt->rank != 4 && xt->rank != 5)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "X has rank %d, only 4-D and 5-D (2 or 3 spatial axes) are supported",
                       xt->rank);
    int rank = xt->rank >= 0 ? xt->rank : gt->rank, r = rank - 2;
    if (gt->rank >= 0 && xt->rank >= 0 && gt->rank != xt->rank)
        return kn_diag(cx, n, KN_EINVAL, "grid has rank %d, expected %d", gt->rank, xt->rank);
    if (rank >= 0 && g.mode == GS_BICUBIC && r != 2)
        return kn_diag(cx, n, KN_EINVAL, "cubic mode supports 2 spatial axes only (X has %d)", r);
    if (rank >= 0 && gt->rank >= 0 && gt->dims[rank - 1] >= 0 && gt->dims[rank - 1] != r)
        return kn_diag(cx, n, KN_EINVAL, "grid's last dim is %lld, expected %d",
                       (long long)gt->dims[rank - 1], r);
    if (xt->rank >= 0 && gt->rank >= 0 && xt->dims[0] >= 0 && gt->dims[0] >= 0 &&
        xt->dims[0] != gt->dims[0])
        return kn_diag(cx, n, KN_EINVAL, "X has batch %lld but grid has %lld",
                       (long long)xt->dims[0], (long long)gt->dims[0]);
    if (rank < 0) {
        out[0] = kn_type_unknown(xt->dtype);
        return KN_OK;
    }
    int64_t d[KN_MAX_RANK];
    for (int k = 0; k < rank; k++) d[k] = -1;
    if (xt->rank >= 0) {
        d[0] = xt->dims[0];
        d[1] = xt->dims[1];
    }
    if (gt->rank >= 0) {
        if (d[0] < 0) d[0] = gt->dims[0];
        for (int k = 0; k < r; k++) d[2 + k] = gt->dims[1 + k];
    }
    out[0] = kn_type_make(xt->dtype, rank, d);
    return KN_OK;
}

/* Reflects x into [lo, hi] by folding at the borders (onnxruntime's GsReflect). */
static double gs_reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo) {
        double dx = lo - x;
        double k = floor(dx / range), r = dx - k * range;
        return fmod(k, 2) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        double k = floor(dx / range), r = dx - k * range;
        return fmod(k, 2) == 0 ? hi - r : lo + r;
    }
    return x;
}

static void gs_cubic(double t, double *c) {
    const double A = -0.75;
    c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

/* The element at integer position pos[0..r) of the plane at base (extents D) with the
 * padding rule for positions outside. */
static double gs_pixel(const kn_tensor *x, int64_t base, int r, const int64_t *D,
                       const int64_t *pos, const kn_grid_params *g) {
    int64_t at = 0;
    for (int d = 0; d < r; d++) {
        int64_t p = pos[d];
        if (g->padding == GS_ZEROS) {
            if (p < 0 || p >= D[d]) return 0;
        } else if (g->padding == GS_REFLECTION) {
            double lo = g->align_corners ? 0 : -0.5;
            p = (int64_t)gs_reflect((double)p, lo, (double)(D[d] - 1) - lo);
        }
        p = p < 0 ? 0 : p >= D[d] ? D[d] - 1 : p;
        at = at * D[d] + p;
    }
    return kn_load_f64(x->data, x->type.dtype, (size_t)(base + at));
}

/* Tap sum over axes d..r): sum over k of w[d][k] * (the sum over the next axes), the
 * innermost being the pixel at i0 + k (nt taps an axis). */
static double gs_taps(const kn_tensor *x, int64_t base, int r, const int64_t *D, const int64_t *i0,
                      double (*w)[4], int nt, int d, int64_t *pos, const kn_grid_params *g) {
    if (d == r) return gs_pixel(x, base, r, D, pos, g);
    double v = 0;
    for (int k = 0; k < nt; k++) {
        pos[d] = i0[d] + k;
        v += w[d][k] * gs_taps(x, base, r, D, i0, w, nt, d + 1, pos, g);
    }
    return v;
}

/* X [N, C, D_0..D_r-1], grid [N, O_0..O_r-1, r] whose last axis holds the coordinate of
 * the last spatial axis first (x, then y, then z). */
static kn_status eval_gridsample(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                 kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_grid_params g;
    if (kn_alloc_outputs(ex, n, in, out, infer_gridsample) || kn_grid_setup(cx, n, &g))
        return cx->status;
    const kn_tensor *x = in[0], *grid = in[1];
    kn_tensor *y = out[0];
    int r = x->type.rank - 2;
    int64_t N = x->type.dims[0], C = x->type.dims[1], D[KN_MAX_RANK], O = 1, P = 1;
    for (int d = 0; d < r; d++) {
        D[d] = x->type.dims[2 + d];
        O *= grid->type.dims[1 + d];
        P *= D[d];
    }
    if (kn_tensor_numel(y) == 0) return KN_OK;
    if (P == 0) return kn_diag(cx, n, KN_EINVAL, "X has an empty spatial dim");
    int nt = g.mode == GS_NEAREST ? 1 : g.mode == GS_BILINEAR ? 2 : 4;
    double lo = g.align_corners ? 0 : -0.5;
    for (int64_t b = 0; b < N; b++)
        for (int64_t o = 0; o < O; o++) {
            double p[KN_MAX_RANK], w[KN_MAX_RANK][4];
            int64_t i0[KN_MAX_RANK], pos[KN_MAX_RANK];
            bool outside = false;
            for (int d = 0; d < r; d++) {
                double gc = kn_load_f64(grid->data, grid->type.dtype,
                                        (size_t)((b * O + o) * r + r - 1 - d));
                /* normalized [-1, 1] to pixel coordinates */
                p[d] = g.align_corners ? (gc + 1) / 2 * (double)(D[d] - 1)
                                       : ((gc + 1) * (double)D[d] - 1) / 2;
                if (g.mode == GS_NEAREST) p[d] = nearbyint(p[d]);
                if (p[d] < lo || p[d] > (double)(D[d] - 1) - lo) outside = true;
            }
            /* coordinates outside [lo, hi] are moved in by the padding rule
             * (onnxruntime's GridSample); the taps are padded again in gs_pixel */
            for (int d = 0; d < r; d++) {
                if (outside && g.padding == GS_BORDER)
                    p[d] = fmax(0, fmin(p[d], (double)(D[d] - 1)));
                else if (outside && g.padding == GS_REFLECTION)
                    p[d] = gs_reflect(p[d], lo, (double)(D[d] - 1) - lo);
                /* keep far-away coordinates in int64 range; they only see padding */
                p[d] = fmax(fmin(p[d], (double)D[d] + 4), -5.0);
                double f = floor(p[d]);
                if (g.mode == GS_NEAREST) {
                    i0[d] = (int64_t)p[d];
                    w[d][0] = 1;
                } else if (g.mode == GS_BILINEAR) {
                    i0[d] = (int64_t)f;
                    w[d][0] = 1 - (p[d] - f);
                    w[d][1] = p[d] - f;
                } else {
                    i0[d] = (int64_t)f - 1;
                    gs_cubic(p[d] - f, w[d]);
                }
            }
            for (int64_t c = 0; c < C; c++)
                store_value(y, (size_t)((b * C + c) * O + o),
                            gs_taps(x, (b * C + c) * P, r, D, i0, w, nt, 0, pos, &g));
        }
    return KN_OK;
}

/* ---- RoiAlign, MaxRoiPool ---- */

static kn_status infer_roialign(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT);
    if (!st) st = kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT);
    if (!st) st = kn_check_dtype(cx, n, in[2], 2, KN_DT(I64) | KN_DT(I32));
    if (st) return st;
    const char *mode = kn_attr_str(cx, n, "mode", "avg");
    const char *coord = kn_attr_str(cx, n, "coordinate_transformation_mode", "half_pixel");
    int64_t oh = kn_attr_int(cx, n, "output_height", 1);
    int64_t ow = kn_attr_int(cx, n, "output_width", 1);
    int64_t sr = kn_attr_int(cx, n, "sampling_ratio", 0);
    if (kn_failed(cx)) return cx->status;
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return kn_diag(cx, n, KN_EINVAL, "unsupported mode '%s'", mode);
    if (strcmp(coord, "half_pixel") && strcmp(coord, "output_half_pixel"))
        return kn_diag(cx, n, KN_EINVAL, "unsupported coordinate_transformation_mode '%s'", coord);
    if (oh <= 0 || ow <= 0)
        return kn_diag(cx, n, KN_EINVAL, "output_height and output_width must be positive");
    if (sr < 0) return kn_diag(cx, n, KN_EINVAL, "sampling_ratio must be >= 0");
    const kn_type *xt = &in[0]->type, *rt = &in[1]->type, *bt = &in[2]->type;
    if (xt->rank >= 0 && xt->rank != 4)
        return kn_diag(cx, n, KN_EINVAL, "X has rank %d, expected 4", xt->rank);
    if (rt->rank >= 0 && (rt->rank != 2 || (rt->dims[1] >= 0 && rt->dims[1] != 4)))
        return kn_diag(cx, n, KN_EINVAL, "rois must have shape [num_rois, 4]");
    if (bt->rank >= 0 && bt->rank != 1)
        return kn_diag(cx, n, KN_EINVAL, "batch_indices must have rank 1");
    int64_t r = rt->rank == 2 ? rt->dims[0] : bt->rank == 1 ? bt->dims[0] : -1;
    if (rt->rank == 2 && bt->rank == 1 && rt->dims[0] >= 0 && bt->dims[0] >= 0 &&
        rt->dims[0] != bt->dims[0])
        return kn_diag(cx, n, KN_EINVAL, "rois has %lld rows but batch_indices %lld",
                       (long long)rt->dims[0], (long long)bt->dims[0]);
    int64_t d[4] = {r, xt->rank == 4 ? xt->dims[1] : -1, oh, ow};
    out[0] = kn_type_make(xt->dtype, 4, d);
    return KN_OK;
}

/* Bilinear sample of an H x W plane at (y, x) as onnxruntime's RoiAlign does it:
 * points more than one pixel outside give 0, others are clamped to the plane. */
static void roi_bilinear(int64_t h, int64_t w, double y, double x, int64_t *pos, double *wt) {
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) {
        for (int k = 0; k < 4; k++) pos[k] = 0, wt[k] = 0;
        return;
    }
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= h - 1) {
        y1 = y0 = h - 1;
        y = (double)y0;
    } else
        y1 = y0 + 1;
    if (x0 >= w - 1) {
        x1 = x0 = w - 1;
        x = (double)x0;
    } else
        x1 = x0 + 1;
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
    pos[0] = y0 * w + x0, pos[1] = y0 * w + x1, pos[2] = y1 * w + x0, pos[3] = y1 * w + x1;
    wt[0] = hy * hx, wt[1] = hy * lx, wt[2] = ly * hx, wt[3] = ly * lx;
}

kn_status kn_roialign_attrs_get(kn_ctx *cx, const kn_node *n, kn_roialign_attrs *a) {
    a->is_max = !strcmp(kn_attr_str(cx, n, "mode", "avg"), "max");
    /* Opset 10 had no attribute and behaved as output_half_pixel. */
    const char *coord = kn_attr_str(cx, n, "coordinate_transformation_mode",
                                    n->opset < 16 ? "output_half_pixel" : "half_pixel");
    a->oh = kn_attr_int(cx, n, "output_height", 1);
    a->ow = kn_attr_int(cx, n, "output_width", 1);
    a->sr = kn_attr_int(cx, n, "sampling_ratio", 0);
    a->scale = kn_attr_float(cx, n, "spatial_scale", 1.0f);
    if (kn_failed(cx)) return cx->status;
    a->offset = strcmp(coord, "half_pixel") ? 0.0 : 0.5;
    return KN_OK;
}

static kn_status eval_roialign(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *x = in[0], *rois = in[1], *bi = in[2];
    kn_roialign_attrs a;
    if (kn_roialign_attrs_get(cx, n, &a)) return cx->status;
    int64_t N = x->type.dims[0], C = x->type.dims[1], H = x->type.dims[2], W = x->type.dims[3];
    int64_t R = rois->type.dims[0];
    int64_t d[4] = {R, C, a.oh, a.ow};
    kn_tensor *y = output(ex, n, out, x->type.dtype, 4, d);
    if (!y) return cx->status;
    for (int64_t r = 0; r < R; r++) {
        int64_t b = kn_load_i64(bi->data, bi->type.dtype, (size_t)r);
        if (b < 0 || b >= N)
            return kn_diag(cx, n, KN_EINVAL, "batch_indices[%lld] = %lld is out of range",
                           (long long)r, (long long)b);
        double rv[4];
        for (int k = 0; k < 4; k++)
            rv[k] =
                kn_load_f64(rois->data, rois->type.dtype, (size_t)(r * 4 + k)) * a.scale - a.offset;
        double x0 = rv[0], y0 = rv[1], rw = rv[2] - rv[0], rh = rv[3] - rv[1];
        if (a.offset == 0) { /* output_half_pixel: force malformed rois to 1x1 */
            rw = fmax(rw, 1.0);
            rh = fmax(rh, 1.0);
        }
        double bh = rh / (double)a.oh, bw = rw / (double)a.ow;
        int64_t gh = a.sr > 0 ? a.sr : (int64_t)ceil(rh / (double)a.oh);
        int64_t gw = a.sr > 0 ? a.sr : (int64_t)ceil(rw / (double)a.ow);
        double count = (double)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (b * C + c) * H * W;
            for (int64_t ph = 0; ph < a.oh; ph++)
                for (int64_t pw = 0; pw < a.ow; pw++) {
                    double v = 0;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        double sy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double sx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            int64_t pos[4];
                            double wt[4], s = 0, m = 0;
                            roi_bilinear(H, W, sy, sx, pos, wt);
                            for (int k = 0; k < 4; k++) {
                                double t = wt[k] * kn_load_f64(x->data, x->type.dtype,
                                                               (size_t)(base + pos[k]));
                                s += t;
                                m = k == 0 || t > m ? t : m;
                            }
                            /* max mode: onnxruntime's max of the weighted corners */
                            if (a.is_max)
                                v = (iy == 0 && ix == 0) || m > v ? m : v;
                            else
                                v += s;
                        }
                    }
                    if (!a.is_max) v /= count;
                    store_value(y, (size_t)(((r * C + c) * a.oh + ph) * a.ow + pw), v);
                }
        }
    }
    return KN_OK;
}

static kn_status infer_maxroipool(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT);
    if (!st) st = kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT);
    if (st) return st;
    const int64_t *ps;
    int nps = kn_attr_ints(cx, n, "pooled_shape", &ps);
    if (kn_failed(cx)) return cx->status;
    if (nps != 2 || ps[0] <= 0 || ps[1] <= 0)
        return kn_diag(cx, n, KN_EINVAL, "pooled_shape must be two positive ints");
    const kn_type *xt = &in[0]->type, *rt = &in[1]->type;
    if (xt->rank >= 0 && xt->rank != 4)
        return kn_diag(cx, n, KN_EINVAL, "X has rank %d, expected 4", xt->rank);
    if (rt->rank >= 0 && (rt->rank != 2 || (rt->dims[1] >= 0 && rt->dims[1] != 5)))
        return kn_diag(cx, n, KN_EINVAL, "rois must have shape [num_rois, 5]");
    int64_t d[4] = {rt->rank == 2 ? rt->dims[0] : -1, xt->rank == 4 ? xt->dims[1] : -1, ps[0],
                    ps[1]};
    out[0] = kn_type_make(xt->dtype, 4, d);
    return KN_OK;
}

/* Caffe's ROI pooling: rois are [batch, x1, y1, x2, y2], rounded after scaling; each
 * output cell is the max of its bin, 0 for an empty bin. */
static kn_status eval_maxroipool(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                 kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *x = in[0], *rois = in[1];
    const int64_t *ps;
    kn_attr_ints(cx, n, "pooled_shape", &ps);
    double scale = kn_attr_float(cx, n, "spatial_scale", 1.0f);
    if (kn_failed(cx)) return cx->status;
    int64_t N = x->type.dims[0], C = x->type.dims[1], H = x->type.dims[2], W = x->type.dims[3];
    int64_t R = rois->type.dims[0], PH = ps[0], PW = ps[1];
    int64_t d[4] = {R, C, PH, PW};
    kn_tensor *y = output(ex, n, out, x->type.dtype, 4, d);
    if (!y) return cx->status;
    for (int64_t r = 0; r < R; r++) {
        double rv[5];
        for (int k = 0; k < 5; k++)
            rv[k] = kn_load_f64(rois->data, rois->type.dtype, (size_t)(r * 5 + k));
        int64_t b = (int64_t)rv[0];
        if (!(rv[0] >= 0 && rv[0] < (double)N))
            return kn_diag(cx, n, KN_EINVAL, "roi %lld has batch index %g out of range",
                           (long long)r, rv[0]);
        int64_t xs = (int64_t)round(rv[1] * scale), ys = (int64_t)round(rv[2] * scale);
        int64_t xe = (int64_t)round(rv[3] * scale), ye = (int64_t)round(rv[4] * scale);
        int64_t rh = ye - ys + 1 > 1 ? ye - ys + 1 : 1, rw = xe - xs + 1 > 1 ? xe - xs + 1 : 1;
        double bh = (double)rh / (double)PH, bw = (double)rw / (double)PW;
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (b * C + c) * H * W;
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    int64_t h0 = (int64_t)floor((double)ph * bh) + ys;
                    int64_t h1 = (int64_t)ceil((double)(ph + 1) * bh) + ys;
                    int64_t w0 = (int64_t)floor((double)pw * bw) + xs;
                    int64_t w1 = (int64_t)ceil((double)(pw + 1) * bw) + xs;
                    h0 = h0 < 0 ? 0 : h0 > H ? H : h0;
                    h1 = h1 < 0 ? 0 : h1 > H ? H : h1;
                    w0 = w0 < 0 ? 0 : w0 > W ? W : w0;
                    w1 = w1 < 0 ? 0 : w1 > W ? W : w1;
                    double m = 0;
                    int any = 0;
                    for (int64_t i = h0; i < h1; i++)
                        for (int64_t j = w0; j < w1; j++) {
                            double v =
                                kn_load_f64(x->data, x->type.dtype, (size_t)(base + i * W + j));
                            if (!any || v > m) m = v;
                            any = 1;
                        }
                    store_value(y, (size_t)(((r * C + c) * PH + ph) * PW + pw), m);
                }
        }
    }
    return KN_OK;
}

/* ---- NonMaxSuppression ---- */

/* Box i of batch b as (ymin, xmin, ymax, xmax). */
static void nms_box(const kn_tensor *boxes, int center, int64_t b, int64_t i, double *bx) {
    int64_t nb = boxes->type.dims[1];
    double v[4];
    for (int k = 0; k < 4; k++)
        v[k] = kn_load_f64(boxes->data, boxes->type.dtype, (size_t)((b * nb + i) * 4 + k));
    if (center) { /* [x_center, y_center, width, height] */
        bx[0] = v[1] - v[3] / 2, bx[1] = v[0] - v[2] / 2;
        bx[2] = v[1] + v[3] / 2, bx[3] = v[0] + v[2] / 2;
    } else { /* [y1, x1, y2, x2], any two opposite corners */
        bx[0] = fmin(v[0], v[2]), bx[1] = fmin(v[1], v[3]);
        bx[2] = fmax(v[0], v[2]), bx[3] = fmax(v[1], v[3]);
    }
}

/* True if boxes a and b overlap by IoU > threshold (onnxruntime's SuppressByIOU). */
static int nms_suppress(const double *a, const double *b, double threshold) {
    double ymin = fmax(a[0], b[0]), xmin = fmax(a[1], b[1]);
    double ymax = fmin(a[2], b[2]), xmax = fmin(a[3], b[3]);
    if (xmax <= xmin || ymax <= ymin) return 0;
    double inter = (xmax - xmin) * (ymax - ymin);
    double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    double uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return 0;
    return inter / uni > threshold;
}

/* Runs the selection; writes [batch, class, box] triples to sel when non-NULL and
 * returns their count. Scratch memory comes from a. */
static int64_t nms_run(kn_arena *a, const kn_node *n, kn_tensor *const *in, int center,
                       int64_t *sel) {
    const kn_tensor *boxes = in[0], *scores = in[1];
    const kn_tensor *tmax = kn_opt_in(n, in, 2), *tiou = kn_opt_in(n, in, 3),
                    *tscore = kn_opt_in(n, in, 4);
    int64_t maxout = presence(tmax) > 0 ? kn_load_i64(tmax->data, tmax->type.dtype, 0) : 0;
    double iou = presence(tiou) > 0 ? kn_load_f64(tiou->data, tiou->type.dtype, 0) : 0;
    int has_st = presence(tscore) > 0;
    double sthr = has_st ? kn_load_f64(tscore->data, tscore->type.dtype, 0) : 0;
    int64_t B = scores->type.dims[0], C = scores->type.dims[1], NB = scores->type.dims[2];
    if (maxout <= 0 || NB == 0) return 0;
    int64_t *order = kn_arena_array(a, (size_t)NB, sizeof *order);
    int64_t *chosen = kn_arena_array(a, (size_t)NB, sizeof *chosen);
    double *sc = kn_arena_array(a, (size_t)NB, sizeof *sc);
    KN_ASSERT(order && chosen && sc);
    int64_t count = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            int64_t m = 0, nsel = 0;
            for (int64_t i = 0; i < NB; i++) {
                sc[i] =
                    kn_load_f64(scores->data, scores->type.dtype, (size_t)((b * C + c) * NB + i));
                if (!has_st || sc[i] > sthr) order[m++] = i;
            }
            /* Insertion sort: score descending, then index ascending. */
            for (int64_t i = 1; i < m; i++) {
                int64_t t = order[i], j = i;
                while (j > 0 && sc[order[j - 1]] < sc[t]) {
                    order[j] = order[j - 1];
                    j--;
                }
                order[j] = t;
            }
            for (int64_t i = 0; i < m && nsel < maxout; i++) {
                double bi[4], bj[4];
                nms_box(boxes, center, b, order[i], bi);
                int keep = 1;
                for (int64_t j = 0; j < nsel && keep; j++) {
                    nms_box(boxes, center, b, chosen[j], bj);
                    if (nms_suppress(bi, bj, iou)) keep = 0;
                }
                if (!keep) continue;
                chosen[nsel++] = order[i];
                if (sel) {
                    sel[count * 3] = b;
                    sel[count * 3 + 1] = c;
                    sel[count * 3 + 2] = order[i];
                }
                count++;
            }
        }
    return count;
}

static kn_status infer_nms(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT);
    if (!st) st = kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT);
    if (st) return st;
    int64_t center = kn_attr_int(cx, n, "center_point_box", 0);
    if (kn_failed(cx)) return cx->status;
    if (center != 0 && center != 1)
        return kn_diag(cx, n, KN_EINVAL, "center_point_box must be 0 or 1");
    const kn_type *bt = &in[0]->type, *stt = &in[1]->type;
    if (bt->rank >= 0 && (bt->rank != 3 || (bt->dims[2] >= 0 && bt->dims[2] != 4)))
        return kn_diag(cx, n, KN_EINVAL, "boxes must have shape [batch, boxes, 4]");
    if (stt->rank >= 0 && stt->rank != 3)
        return kn_diag(cx, n, KN_EINVAL, "scores must have shape [batch, classes, boxes]");
    int64_t d[2] = {-1, 3};
    int known = kn_type_static(bt) && kn_type_static(stt) && in[0]->data && in[1]->data;
    if (bt->rank == 3 && stt->rank == 3 && known &&
        (bt->dims[0] != stt->dims[0] || bt->dims[1] != stt->dims[2]))
        return kn_diag(cx, n, KN_EINVAL, "boxes and scores disagree on batch or box count");
    for (int i = 2; i < 5; i++) {
        const kn_tensor *t = kn_opt_in(n, in, i);
        if (!t) continue;
        int p = presence(t);
        if (p < 0 || (p > 0 && !t->data)) known = 0;
        if (p > 0 && kn_tensor_numel(t) != 1)
            return kn_diag(cx, n, KN_EINVAL, "input %d must hold one value", i);
    }
    if (known) {
        kn_arena *a = kn_arena_create();
        d[0] = nms_run(a, n, in, (int)center, NULL);
        kn_arena_destroy(a);
    }
    out[0] = kn_type_make(KN_I64, 2, d);
    return KN_OK;
}

static kn_status eval_nms(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    int center = (int)kn_attr_int(cx, n, "center_point_box", 0);
    if (kn_failed(cx)) return cx->status;
    kn_arena *a = kn_exec_arena(ex);
    int64_t nb = in[1]->type.dims[0] * in[1]->type.dims[1] * in[1]->type.dims[2];
    int64_t *sel = kn_arena_array(a, (size_t)(nb > 0 ? nb : 1) * 3, sizeof *sel);
    if (!sel) return kn_diag(cx, n, KN_ELIMIT, "too many boxes");
    int64_t count = nms_run(a, n, in, center, sel);
    int64_t d[2] = {count, 3};
    kn_tensor *y = output(ex, n, out, KN_I64, 2, d);
    if (!y) return cx->status;
    if (y->type.dims[0] != count)
        return kn_diag(cx, n, KN_EINTERNAL, "selected %lld boxes, inferred %lld", (long long)count,
                       (long long)y->type.dims[0]);
    kn_tensor_store_i64s(y, sel);
    return KN_OK;
}

/* ---- CenterCropPad (opset 18): crop or zero-pad each listed axis to a size, centred:
 * a crop starts at (d - s) / 2, a pad puts (s - d) / 2 zeros first ---- */

kn_status kn_ccp_plan_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const int64_t *shape,
                           int count, kn_ccp_plan *p) {
    const int64_t *axes;
    int na = kn_attr_ints(cx, n, "axes", &axes);
    if (kn_failed(cx)) return cx->status;
    int r = x->rank, cnt = na < 0 ? r : na;
    if (count != cnt)
        return kn_diag(cx, n, KN_EINVAL, "shape has %d values for %d axes", count, cnt);
    for (int d = 0; d < r; d++) p->out[d] = x->dims[d], p->start[d] = 0;
    for (int i = 0; i < cnt; i++) {
        int a = i;
        if (na >= 0 && kn_axis(cx, n, axes[i], r, 0, &a)) return cx->status;
        int64_t s = shape[i], d = x->dims[a];
        if (s < 0) return kn_diag(cx, n, KN_EINVAL, "shape[%d] is negative", i);
        p->out[a] = s;
        p->start[a] = d < 0 ? 0 : s <= d ? (d - s) / 2 : -((s - d) / 2);
    }
    return KN_OK;
}

/* The shape (or image/block) input i of n as int64 values; *known 0 without data. */
static kn_status shape_input(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int i, int64_t *v,
                             int cap, int *count, int *known) {
    const kn_tensor *t = in[i];
    *known = 0;
    if (kn_check_dtype(cx, n, t, i, KN_DT(I64) | KN_DT(I32))) return cx->status;
    if (!kn_data_known(t)) return KN_OK;
    int64_t c = kn_tensor_numel(t);
    if (c > cap) return kn_diag(cx, n, KN_EINVAL, "input %d has too many values", i);
    for (int64_t k = 0; k < c; k++) v[k] = kn_load_i64(t->data, t->type.dtype, (size_t)k);
    *count = (int)c;
    *known = 1;
    return KN_OK;
}

static kn_status infer_ccp(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const kn_type *x = &in[0]->type;
    int64_t s[KN_MAX_RANK];
    int cnt = 0, known;
    out[0] = kn_type_unknown(x->dtype);
    if (shape_input(cx, n, in, 1, s, KN_MAX_RANK, &cnt, &known)) return cx->status;
    if (x->rank < 0) return KN_OK;
    out[0] = *x;
    kn_ccp_plan p;
    if (!known) {
        for (int d = 0; d < x->rank; d++) out[0].dims[d] = -1, out[0].sym[d] = NULL;
        return KN_OK;
    }
    if (kn_ccp_plan_make(cx, n, x, s, cnt, &p)) return cx->status;
    for (int d = 0; d < x->rank; d++)
        if (p.out[d] != x->dims[d]) out[0].dims[d] = p.out[d], out[0].sym[d] = NULL;
    return KN_OK;
}

static kn_status eval_ccp(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_ccp)) return cx->status;
    const kn_tensor *x = in[0];
    int64_t s[KN_MAX_RANK], xs[KN_MAX_RANK];
    int cnt = 0, known, r = x->type.rank;
    kn_ccp_plan p;
    if (shape_input(cx, n, in, 1, s, KN_MAX_RANK, &cnt, &known) ||
        kn_ccp_plan_make(cx, n, &x->type, s, cnt, &p))
        return cx->status;
    kn_strides(r, x->type.dims, xs);
    size_t es = kn_elem_size(x->type.dtype);
    for (int64_t i = 0; i < kn_tensor_numel(out[0]); i++) {
        int64_t rem = i, at = 0;
        bool inside = true;
        for (int d = r - 1; d >= 0; d--) {
            int64_t c = rem % p.out[d] + p.start[d];
            rem /= p.out[d];
            if (c < 0 || c >= x->type.dims[d]) inside = false;
            at += c * xs[d];
        }
        if (inside) kn_copy_elem(out[0]->data, i, x->data, at, es);
    }
    return KN_OK;
}

/* ---- Col2Im (opset 18): the sum of the column blocks back into an image ---- */

kn_status kn_col2im_plan_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const int64_t *image,
                              const int64_t *block, int r, kn_col2im_plan *p) {
    memset(p, 0, sizeof *p);
    if (r < 1 || r > KN_MAX_RANK - 2)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "images of %d axes are not supported (1 to %d)", r,
                       KN_MAX_RANK - 2);
    int64_t pads[2 * KN_MAX_RANK] = {0};
    p->r = r;
    for (int d = 0; d < r; d++) p->dil[d] = p->str[d] = 1;
    const int64_t *v;
    int k;
    if ((k = kn_attr_ints(cx, n, "dilations", &v)) >= 0) {
        if (k != r) return kn_diag(cx, n, KN_EINVAL, "dilations needs %d values", r);
        memcpy(p->dil, v, (size_t)r * sizeof *v);
    }
    if ((k = kn_attr_ints(cx, n, "strides", &v)) >= 0) {
        if (k != r) return kn_diag(cx, n, KN_EINVAL, "strides needs %d values", r);
        memcpy(p->str, v, (size_t)r * sizeof *v);
    }
    if ((k = kn_attr_ints(cx, n, "pads", &v)) >= 0) {
        if (k != 2 * r) return kn_diag(cx, n, KN_EINVAL, "pads needs %d values", 2 * r);
        memcpy(pads, v, (size_t)(2 * r) * sizeof *v);
    }
    if (kn_failed(cx)) return cx->status;
    if (x->rank != 3) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected 3", x->rank);
    p->n = x->dims[0];
    p->kk = p->ll = 1;
    for (int d = 0; d < r; d++) {
        if (p->dil[d] < 1 || p->str[d] < 1 || block[d] < 1 || image[d] < 0 || pads[d] < 0 ||
            pads[d + r] < 0)
            return kn_diag(cx, n, KN_EINVAL, "bad image, block, dilation, stride or pad value");
        p->img[d] = image[d], p->k[d] = block[d], p->pad[d] = pads[d];
        p->l[d] =
            (image[d] + pads[d] + pads[d + r] - (p->dil[d] * (block[d] - 1) + 1)) / p->str[d] + 1;
        if (p->l[d] < 1)
            return kn_diag(cx, n, KN_EINVAL, "the block does not fit the padded image on axis %d",
                           d);
        p->kk *= block[d], p->ll *= p->l[d];
    }
    if (x->dims[1] >= 0 && x->dims[1] % p->kk)
        return kn_diag(cx, n, KN_EINVAL,
                       "input dim 1 (%lld) is not a multiple of the block size %lld",
                       (long long)x->dims[1], (long long)p->kk);
    p->c = x->dims[1] < 0 ? -1 : x->dims[1] / p->kk;
    if (x->dims[2] >= 0 && x->dims[2] != p->ll)
        return kn_diag(cx, n, KN_EINVAL, "input has %lld blocks, the image and block give %lld",
                       (long long)x->dims[2], (long long)p->ll);
    return KN_OK;
}

static kn_status infer_col2im(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const kn_type *x = &in[0]->type;
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_NUM)) return cx->status;
    int64_t im[KN_MAX_RANK], bl[KN_MAX_RANK];
    int ci = 0, cb = 0, ki, kb;
    if (shape_input(cx, n, in, 1, im, KN_MAX_RANK, &ci, &ki) ||
        shape_input(cx, n, in, 2, bl, KN_MAX_RANK, &cb, &kb))
        return cx->status;
    out[0] = kn_type_unknown(x->dtype);
    if (!ki || !kb || x->rank < 0) return KN_OK;
    if (ci != cb)
        return kn_diag(cx, n, KN_EINVAL, "image_shape has %d values and block_shape %d", ci, cb);
    kn_col2im_plan p;
    if (kn_col2im_plan_make(cx, n, x, im, bl, ci, &p)) return cx->status;
    int64_t dims[KN_MAX_RANK] = {p.n, p.c};
    memcpy(dims + 2, p.img, (size_t)p.r * sizeof *dims);
    out[0] = kn_type_make(x->dtype, 2 + p.r, dims);
    return KN_OK;
}

static kn_status eval_col2im(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_col2im)) return cx->status;
    int64_t im[KN_MAX_RANK], bl[KN_MAX_RANK];
    int ci, cb, ki, kb;
    kn_col2im_plan p;
    if (shape_input(cx, n, in, 1, im, KN_MAX_RANK, &ci, &ki) ||
        shape_input(cx, n, in, 2, bl, KN_MAX_RANK, &cb, &kb) ||
        kn_col2im_plan_make(cx, n, &in[0]->type, im, bl, ci, &p))
        return cx->status;
    int64_t ist[KN_MAX_RANK];
    kn_strides(p.r, p.img, ist);
    for (int64_t bc = 0; bc < p.n * p.c; bc++)
        for (int64_t kf = 0; kf < p.kk; kf++)
            for (int64_t lf = 0; lf < p.ll; lf++) {
                /* block entry kf at block position lf: image position l*str - pad + k*dil */
                int64_t o = 0, kr = kf, lr = lf;
                bool inside = true;
                for (int d = p.r - 1; d >= 0; d--) {
                    int64_t kd = kr % p.k[d], ld = lr % p.l[d];
                    kr /= p.k[d], lr /= p.l[d];
                    int64_t y = ld * p.str[d] - p.pad[d] + kd * p.dil[d];
                    if (y < 0 || y >= p.img[d]) inside = false;
                    o += y * ist[d];
                }
                if (!inside) continue;
                int64_t c = bc % p.c, b = bc / p.c;
                o += bc * ist[0] * p.img[0];
                int64_t s = (b * p.c * p.kk + c * p.kk + kf) * p.ll + lf;
                kn_tensor_set_f64(out[0], o,
                                  kn_tensor_get_f64(out[0], o) + kn_tensor_get_f64(in[0], s));
            }
    return KN_OK;
}

/* ---- AffineGrid (opset 20) ----
 *
 * theta [N, r, r+1] (r = 2 or 3 spatial axes) and size [N, C, spatial...] give the grid
 * [N, spatial..., r]: at each position the affine map theta[n] of the normalized
 * coordinates (x along the last axis, then y, then z) in [-1, 1], which with
 * align_corners are -1 + 2i/(S-1) (-1 when S is 1, as ONNX's reference) and otherwise
 * the pixel centres (2i+1)/S - 1. */

/* The normalized coordinate of index i on an axis of s elements. */
double kn_affine_coord(int64_t i, int64_t s, int align) {
    if (align) return s > 1 ? -1.0 + 2.0 * (double)i / (double)(s - 1) : -1.0;
    return (2.0 * (double)i + 1.0) / (double)s - 1.0;
}

static kn_status infer_affinegrid(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  kn_type *out) {
    kn_attr_int(cx, n, "align_corners", 0);
    if (kn_failed(cx) || kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    const kn_type *th = &in[0]->type;
    int64_t s[KN_MAX_RANK];
    int cnt = 0, known;
    if (shape_input(cx, n, in, 1, s, KN_MAX_RANK, &cnt, &known)) return cx->status;
    out[0] = kn_type_unknown(th->dtype);
    if (th->rank >= 0 && th->rank != 3)
        return kn_diag(cx, n, KN_EINVAL, "theta has rank %d, expected 3", th->rank);
    if (!known) return KN_OK;
    if (cnt != 4 && cnt != 5)
        return kn_diag(cx, n, KN_EINVAL, "size has %d values, expected 4 (2-D) or 5 (3-D)", cnt);
    int r = cnt - 2;
    for (int k = 0; k < cnt; k++)
        if (s[k] < 0)
            return kn_diag(cx, n, KN_EINVAL, "size[%d] is %lld, expected >= 0", k, (long long)s[k]);
    if (th->rank == 3 &&
        ((th->dims[0] >= 0 && th->dims[0] != s[0]) || (th->dims[1] >= 0 && th->dims[1] != r) ||
         (th->dims[2] >= 0 && th->dims[2] != r + 1)))
        return kn_diag(cx, n, KN_EINVAL,
                       "theta is [%lld, %lld, %lld], expected [%lld, %d, %d] for size of %d values",
                       (long long)th->dims[0], (long long)th->dims[1], (long long)th->dims[2],
                       (long long)s[0], r, r + 1, cnt);
    int64_t d[KN_MAX_RANK];
    d[0] = s[0];
    for (int k = 0; k < r; k++) d[1 + k] = s[2 + k];
    d[r + 1] = r;
    out[0] = kn_type_make(th->dtype, r + 2, d);
    return KN_OK;
}

static kn_status eval_affinegrid(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                 kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_affinegrid)) return cx->status;
    int align = kn_attr_int(cx, n, "align_corners", 0) != 0;
    const kn_tensor *th = in[0];
    kn_tensor *y = out[0];
    int r = y->type.rank - 2;
    const int64_t *e = y->type.dims + 1; /* the spatial extents, outermost first */
    int64_t pos = kn_prod(e, 0, r), at[KN_MAX_RANK];
    for (int64_t b = 0; b < y->type.dims[0]; b++)
        for (int64_t p = 0; p < pos; p++) {
            for (int64_t a = r - 1, q = p; a >= 0; q /= e[a], a--) at[a] = q % e[a];
            for (int j = 0; j < r; j++) {
                int64_t row = (b * r + j) * (r + 1);
                double acc = kn_tensor_get_f64(th, row + r);
                for (int k = 0; k < r; k++) /* x is the last axis */
                    acc += kn_tensor_get_f64(th, row + k) *
                           kn_affine_coord(at[r - 1 - k], e[r - 1 - k], align);
                kn_tensor_set_f64(y, (b * pos + p) * r + j, acc);
            }
        }
    return KN_OK;
}

const kn_opimpl kn_ops_image[] = {
    {KN_OP_RESIZE, infer_resize, eval_resize},
    {KN_OP_UPSAMPLE, infer_resize, eval_resize},
    {KN_OP_GRIDSAMPLE, infer_gridsample, eval_gridsample},
    {KN_OP_AFFINEGRID, infer_affinegrid, eval_affinegrid},
    {KN_OP_ROIALIGN, infer_roialign, eval_roialign},
    {KN_OP_MAXROIPOOL, infer_maxroipool, eval_maxroipool},
    {KN_OP_NONMAXSUPPRESSION, infer_nms, eval_nms},
    {KN_OP_CENTERCROPPAD, infer_ccp, eval_ccp},
    {KN_OP_COL2IM, infer_col2im, eval_col2im},
    {KN_OP_COUNT, 0, 0},
};
