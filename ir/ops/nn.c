/* Operators of group 'nn': convolution, pooling, matrix products, Einsum and Det.
 *
 * See ir/ops.h for the infer/eval contract. Convolutions and pools share one window
 * geometry (kn_window_make, ir/ops/nn_attrs.h): kernel, strides, dilations and begin/end pads per
 * spatial axis, resolved from the attributes and auto_pad against the input shape, so infer and
 * eval agree by construction. Every eval is a direct loop over output positions (ConvTranspose and
 * MaxUnpool scatter over input positions instead), accumulating floats in double and integers in
 * int64/uint64. Layouts are ONNX's: NC[D...] data, M x C/group x k... conv weights, C x M/group x
 * k... transposed-conv weights. The normalization and softmax family lives in nn_norm.c. */
#include "ir/ops/nn_attrs.h"
#include "ir/epilogue.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shared helpers ---- */

/* Coordinates of flat index i in a row-major shape of rank r. */
static void unflat(int64_t i, int r, const int64_t *dims, int64_t *coord) {
    for (int d = r - 1; d >= 0; d--) {
        coord[d] = dims[d] ? i % dims[d] : 0;
        i = dims[d] ? i / dims[d] : 0;
    }
}

/* INTS attribute of exactly `want` entries into v; def for every entry if absent. */
static kn_status ints_attr(kn_ctx *cx, const kn_node *n, const char *name, int want, int64_t def,
                           int64_t *v) {
    const int64_t *a;
    int cnt = kn_attr_ints(cx, n, name, &a);
    if (kn_failed(cx)) return cx->status;
    if (cnt < 0) {
        for (int i = 0; i < want; i++) v[i] = def;
        return KN_OK;
    }
    if (cnt != want)
        return kn_diag(cx, n, KN_EINVAL, "%s has %d values, expected %d", name, cnt, want);
    for (int i = 0; i < want; i++) v[i] = a[i];
    return KN_OK;
}

/* ---- window geometry of convolutions and pools ---- */

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

static kn_status auto_pad(kn_ctx *cx, const kn_node *n, int *mode) {
    const char *s = kn_attr_str(cx, n, "auto_pad", "NOTSET");
    if (kn_failed(cx)) return cx->status;
    if (!strcmp(s, "NOTSET") || !*s)
        *mode = PAD_NOTSET;
    else if (!strcmp(s, "SAME_UPPER"))
        *mode = PAD_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER"))
        *mode = PAD_SAME_LOWER;
    else if (!strcmp(s, "VALID"))
        *mode = PAD_VALID;
    else
        return kn_diag(cx, n, KN_EINVAL, "unknown auto_pad '%s'", s);
    return KN_OK;
}

kn_status kn_window_extent(kn_ctx *cx, const kn_node *n, int axis, int64_t k, int64_t d,
                           int64_t *ek) {
    if (__builtin_mul_overflow(k - 1, d, ek) || __builtin_add_overflow(*ek, 1, ek))
        return kn_diag(cx, n, KN_EINVAL,
                       "kernel extent (%lld - 1) x dilation %lld + 1 on axis %d is past int64",
                       (long long)k, (long long)d, axis);
    return KN_OK;
}

kn_status kn_window_padded(kn_ctx *cx, const kn_node *n, int axis, int64_t in, int64_t pb,
                           int64_t pe, int64_t *full) {
    if (__builtin_add_overflow(in, pb, full) || __builtin_add_overflow(*full, pe, full))
        return kn_diag(cx, n, KN_EINVAL,
                       "padded extent %lld + %lld + %lld on axis %d is past int64", (long long)in,
                       (long long)pb, (long long)pe, axis);
    return KN_OK;
}

kn_status kn_window_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const int64_t *kdims,
                         int ceil_mode, kn_window *w) {
    int nsp = x->rank - 2, mode;
    if (nsp < 1) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 3", x->rank);
    memset(w, 0, sizeof *w);
    w->nsp = nsp;
    const int64_t *ks;
    int nk = kn_attr_ints(cx, n, "kernel_shape", &ks);
    if (kn_failed(cx)) return cx->status;
    if (nk >= 0 && nk != nsp)
        return kn_diag(cx, n, KN_EINVAL, "kernel_shape has %d dims, expected %d", nk, nsp);
    if (nk < 0 && !kdims) return kn_diag(cx, n, KN_EINVAL, "kernel_shape is required");
    for (int i = 0; i < nsp; i++) {
        w->in[i] = x->dims[i + 2];
        w->k[i] = nk >= 0 ? ks[i] : kdims[i];
        if (nk >= 0 && kdims && kdims[i] >= 0 && kdims[i] != ks[i])
            return kn_diag(cx, n, KN_EINVAL, "kernel_shape[%d] is %lld but the weights have %lld",
                           i, (long long)ks[i], (long long)kdims[i]);
        if (nk >= 0 && ks[i] < 1)
            return kn_diag(cx, n, KN_EINVAL, "kernel_shape[%d] is %lld", i, (long long)ks[i]);
        if (w->k[i] == 0) /* weights with a zero spatial dimension */
            return kn_diag(cx, n, KN_EINVAL, "the kernel is empty: weight dimension %d is 0",
                           i + 2);
    }
    int64_t pads[2 * KN_MAX_RANK];
    if (ints_attr(cx, n, "strides", nsp, 1, w->s) || ints_attr(cx, n, "dilations", nsp, 1, w->d) ||
        ints_attr(cx, n, "pads", 2 * nsp, 0, pads) || auto_pad(cx, n, &mode))
        return cx->status;
    for (int i = 0; i < nsp; i++) {
        if (w->s[i] < 1 || w->d[i] < 1)
            return kn_diag(cx, n, KN_EINVAL, "strides and dilations must be >= 1");
        if (pads[i] < 0 || pads[i + nsp] < 0) return kn_diag(cx, n, KN_EINVAL, "pads must be >= 0");
        w->pb[i] = pads[i];
        w->pe[i] = pads[i + nsp];
        int64_t in = w->in[i], s = w->s[i];
        if (in < 0 || w->k[i] < 0) {
            w->out[i] = -1;
            continue;
        }
        int64_t ek; /* extent of the dilated kernel */
        if (kn_window_extent(cx, n, i + 2, w->k[i], w->d[i], &ek)) return cx->status;
        if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            w->out[i] = kn_window_same_out(in, s);
            int64_t total = ek - (in - (w->out[i] - 1) * s); /* the input past the last start */
            if (total < 0) total = 0;
            w->pb[i] = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
            continue;
        }
        if (mode == PAD_VALID) w->pb[i] = w->pe[i] = 0;
        int64_t span;
        if (kn_window_padded(cx, n, i + 2, in, w->pb[i], w->pe[i], &span)) return cx->status;
        span -= ek;
        if (span < 0)
            return kn_diag(cx, n, KN_EINVAL,
                           "kernel extent %lld exceeds padded input extent %lld on axis %d",
                           (long long)ek, (long long)(in + w->pb[i] + w->pe[i]), i + 2);
        w->out[i] = span / s + (ceil_mode && span % s != 0) + 1;
        /* The last window must start inside the input or the begin padding. */
        int64_t last;
        if (ceil_mode && (__builtin_mul_overflow(w->out[i] - 1, s, &last) || last >= in + w->pb[i]))
            w->out[i]--;
    }
    return KN_OK;
}

/* Input coordinate of output position o and kernel offset kk on axis i. */
static int64_t win_pos(const kn_window *w, int i, int64_t o, int64_t kk) {
    return o * w->s[i] - w->pb[i] + kk * w->d[i];
}

/* Whether the window of output coordinates oc lies wholly in the padding on one of the
 * first na axes (its first tap past the input's end or its last before the start): no
 * tap reads x. */
static bool win_all_pad(const kn_window *w, const int64_t *oc, int na) {
    for (int i = 0; i < na; i++)
        if (win_pos(w, i, oc[i], 0) >= w->in[i] || win_pos(w, i, oc[i], w->k[i] - 1) < 0)
            return true;
    return false;
}

/* Flat spatial offset of the input position for output coordinates oc and kernel
 * coordinates kc, or -1 when it falls in the padding. */
static int64_t win_offset(const kn_window *w, const int64_t *oc, const int64_t *kc) {
    int64_t off = 0;
    for (int i = 0; i < w->nsp; i++) {
        int64_t p = win_pos(w, i, oc[i], kc[i]);
        if (p < 0 || p >= w->in[i]) return -1;
        off = off * w->in[i] + p;
    }
    return off;
}

/* Kernel coordinates of every kernel element, nk x nsp, in arena a. */
static int64_t *kernel_coords(kn_arena *a, const kn_window *w, int64_t *nk) {
    *nk = kn_prod(w->k, 0, w->nsp);
    int64_t *kc = kn_arena_array(a, (size_t)(*nk > 0 ? *nk : 1) * (size_t)w->nsp, sizeof *kc);
    KN_ASSERT(kc);
    for (int64_t j = 0; j < *nk; j++) unflat(j, w->nsp, w->k, kc + j * w->nsp);
    return kc;
}

/* ---- Conv ---- */

static kn_status infer_conv_cf(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT))
        return cx->status;
    const kn_type *x = &in[0]->type, *wt = &in[1]->type;
    int64_t group = kn_attr_int(cx, n, "group", 1);
    if (kn_failed(cx)) return cx->status;
    if (group < 1) return kn_diag(cx, n, KN_EINVAL, "group is %lld", (long long)group);
    if (x->rank < 0) {
        out[0] = kn_type_unknown(x->dtype);
        return KN_OK;
    }
    int64_t kd[KN_MAX_RANK];
    for (int i = 0; i < x->rank - 2; i++) kd[i] = -1;
    if (wt->rank >= 0) {
        if (wt->rank != x->rank)
            return kn_diag(cx, n, KN_EINVAL, "weights have rank %d, input has rank %d", wt->rank,
                           x->rank);
        for (int i = 0; i < x->rank - 2; i++) kd[i] = wt->dims[i + 2];
        int64_t c = x->dims[1], m = wt->dims[0];
        if (c >= 0 && wt->dims[1] >= 0 && c != wt->dims[1] * group)
            return kn_diag(cx, n, KN_EINVAL, "input has %lld channels, weights expect %lld x %lld",
                           (long long)c, (long long)wt->dims[1], (long long)group);
        if (m >= 0 && m % group)
            return kn_diag(cx, n, KN_EINVAL, "%lld output channels not divisible by group %lld",
                           (long long)m, (long long)group);
        if (kn_opt_in(n, in, 2) && in[2]->type.rank >= 0 &&
            (in[2]->type.rank != 1 ||
             (m >= 0 && in[2]->type.dims[0] >= 0 && in[2]->type.dims[0] != m)))
            return kn_diag(cx, n, KN_EINVAL, "bias must have shape [%lld]", (long long)m);
    }
    kn_window w;
    if (kn_window_make(cx, n, x, kd, 0, &w)) return cx->status;
    int64_t dims[KN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = wt->rank >= 0 ? wt->dims[0] : -1;
    for (int i = 0; i < w.nsp; i++) dims[i + 2] = w.out[i];
    out[0] = kn_type_make(x->dtype, x->rank, dims);
    out[0].sym[0] = x->sym[0];
    return KN_OK;
}

/* ---- channels-last Conv (kn.layout, passes/layout.c) ---- */

bool kn_conv_layout(const kn_node *n, bool *xcl, bool *ycl) {
    const kn_attr *a = kn_node_attr(n, KN_ATTR_LAYOUT);
    *xcl = *ycl = false;
    if (!a || a->kind != KN_ATTR_INTS || a->n != 2) return false;
    *xcl = a->ints[0] != 0;
    *ycl = a->ints[1] != 0;
    return *xcl || *ycl;
}

kn_type kn_type_channels(const kn_type *t, bool to_last) {
    kn_type o = *t;
    int r = t->rank;
    for (int d = 1; d < r && r >= 3; d++) {
        int from = to_last ? (d == r - 1 ? 1 : d + 1) : (d == 1 ? r - 1 : d - 1);
        o.dims[d] = t->dims[from];
        o.sym[d] = t->sym[from];
    }
    return o;
}

void kn_tensor_move_channels(const kn_tensor *src, kn_tensor *dst, bool to_last) {
    const kn_type *t = &src->type;
    int r = t->rank;
    int64_t ds[KN_MAX_RANK], c[KN_MAX_RANK], numel = kn_prod(t->dims, 0, r);
    kn_strides(r, dst->type.dims, ds);
    size_t es = kn_elem_size(t->dtype);
    for (int64_t i = 0; i < numel; i++) {
        unflat(i, r, t->dims, c);
        int64_t at = c[0] * ds[0];
        for (int d = 1; d < r; d++) {
            int to = to_last ? (d == 1 ? r - 1 : d - 1) : (d == r - 1 ? 1 : d + 1);
            at += c[d] * ds[to];
        }
        kn_copy_elem(dst->data, at, src->data, i, es);
    }
}

/* Conv's inputs with input 0 replaced by x (n->nin entries). */
static void with_input(const kn_node *n, kn_tensor *const *in, kn_tensor *x, kn_tensor **ins) {
    KN_ASSERT(n->nin <= 16);
    for (int k = 0; k < n->nin; k++) ins[k] = in[k];
    ins[0] = x;
}

static kn_status infer_conv(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    bool xcl, ycl;
    if (!kn_conv_layout(n, &xcl, &ycl)) return infer_conv_cf(cx, n, in, out);
    kn_tensor xt = *in[0], *ins[16];
    if (xcl) xt.type = kn_type_channels(&in[0]->type, false);
    with_input(n, in, &xt, ins);
    if (infer_conv_cf(cx, n, ins, out)) return cx->status;
    if (ycl) out[0] = kn_type_channels(&out[0], true);
    return KN_OK;
}

static kn_status conv_compute(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor *y);

/* A channels-last Conv: its input moved to channels-first, the Conv and its epilogue
 * computed there, the result moved to channels-last (interp.c leaves the epilogue to
 * this function: it applies to the channels-first result). */
static kn_status eval_conv(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_conv)) return cx->status;
    bool xcl, ycl;
    if (!kn_conv_layout(n, &xcl, &ycl)) return conv_compute(ex, n, in, out[0]);
    kn_arena *a = kn_exec_arena(ex);
    kn_tensor *x = in[0], *ins[16];
    if (xcl) {
        kn_type t = kn_type_channels(&in[0]->type, false);
        if (!(x = kn_tensor_new(a, &t))) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
        kn_tensor_move_channels(in[0], x, false);
    }
    with_input(n, in, x, ins);
    kn_tensor *y = out[0];
    if (ycl) {
        kn_type t = kn_type_channels(&out[0]->type, false);
        if (!(y = kn_tensor_new(a, &t))) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
    }
    if (conv_compute(ex, n, ins, y)) return cx->status;
    if (ycl) {
        kn_epilogue e;
        if (kn_epilogue_of(cx, n, &e) || (e.n && kn_epilogue_eval(cx, n, &e, y, ins)))
            return cx->status;
        kn_tensor_move_channels(y, out[0], true);
    }
    return KN_OK;
}

/* The channels-first Conv of in[] into y. */
static kn_status conv_compute(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor *y) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *x = in[0], *wt = in[1], *b = kn_opt_in(n, in, 2);
    int64_t kd[KN_MAX_RANK];
    for (int i = 0; i < x->type.rank - 2; i++) kd[i] = wt->type.dims[i + 2];
    kn_window w;
    if (kn_window_make(cx, n, &x->type, kd, 0, &w)) return cx->status;
    int64_t group = kn_attr_int(cx, n, "group", 1);
    int64_t nb = x->type.dims[0], c = x->type.dims[1], m = wt->type.dims[0];
    int64_t cg = c / group, mg = m / group;
    int64_t isz = kn_prod(w.in, 0, w.nsp), osz = kn_prod(w.out, 0, w.nsp), nk;
    int64_t *kc = kernel_coords(kn_exec_arena(ex), &w, &nk);
    int64_t oc[KN_MAX_RANK];
    /* Output positions in rows along the last axis l. Only the columns [lo, hi) have
     * windows that reach the input on it; elsewhere every tap is padding and the output is
     * the bias (a fuzzed depthwise Conv padded by 4 M columns had 33 M such outputs). */
    int l = w.nsp - 1;
    int64_t ow = w.out[l], rows = ow ? osz / ow : 0;
    int64_t t0 = w.pb[l] - (w.k[l] - 1) * w.d[l], t1 = w.in[l] - 1 + w.pb[l];
    int64_t lo = t0 <= 0 ? 0 : (t0 + w.s[l] - 1) / w.s[l], hi = t1 < 0 ? 0 : t1 / w.s[l] + 1;
    for (int64_t b0 = 0; b0 < nb; b0++)
        for (int64_t mo = 0; mo < m; mo++) {
            int64_t g = mo / mg;
            double bias = b ? kn_load_f64(b->data, b->type.dtype, (size_t)mo) : 0.0;
            for (int64_t r = 0; r < rows; r++) {
                unflat(r, l, w.out, oc);
                bool pad = win_all_pad(&w, oc, l);
                for (int64_t xo = 0; xo < ow; xo++) {
                    double acc = 0; /* the bias after the sum: ONNX's reference order */
                    oc[l] = xo;
                    for (int64_t ci = 0; !pad && xo >= lo && xo < hi && ci < cg; ci++) {
                        int64_t xbase = (b0 * c + g * cg + ci) * isz, wbase = (mo * cg + ci) * nk;
                        for (int64_t j = 0; j < nk; j++) {
                            int64_t off = win_offset(&w, oc, kc + j * w.nsp);
                            if (off < 0) continue;
                            acc += kn_load_f64(x->data, x->type.dtype, (size_t)(xbase + off)) *
                                   kn_load_f64(wt->data, wt->type.dtype, (size_t)(wbase + j));
                        }
                    }
                    kn_store_f64(y->data, y->type.dtype,
                                 (size_t)((b0 * m + mo) * osz + r * ow + xo), acc + bias);
                }
            }
        }
    return KN_OK;
}

/* ---- DeformConv (opset 19) ----
 *
 * A Conv of r = 1, 2 or 3 spatial axes whose taps are displaced: tap k (flat over the
 * kernel's axes) of output position o in offset group og reads x at position
 * o*s - pad + k*dil + delta on each axis d, where delta_d = offset[b, (og*K + k)*r + d, o]
 * (K taps; for 2-D: y then x, as ONNX's reference implementation reshapes offset to
 * [N, offset_group, k..., r, o...]), multilinearly (2^r corners, a corner outside the
 * input counting 0), scaled by mask[b, og*K + k, o] when given; input channel ic is in
 * offset group ic / (C / offset_group). Inputs: X, W, offset, B, mask. */

kn_status kn_deform_check(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_window *w,
                          int64_t *og) {
    const kn_type *x = &in[0]->type, *wt = &in[1]->type;
    int64_t group = kn_attr_int(cx, n, "group", 1);
    *og = kn_attr_int(cx, n, "offset_group", 1);
    if (kn_failed(cx)) return cx->status;
    if (group < 1 || *og < 1)
        return kn_diag(cx, n, KN_EINVAL, "group %lld and offset_group %lld must be >= 1",
                       (long long)group, (long long)*og);
    if (x->rank < 3 || x->rank > 5 || wt->rank != x->rank)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "input and weights have ranks %d and %d: DeformConv takes 1 to 3 spatial "
                       "axes (equal ranks 3 to 5)",
                       x->rank, wt->rank);
    int r = x->rank - 2;
    int64_t c = x->dims[1], m = wt->dims[0];
    if (c >= 0 && wt->dims[1] >= 0 && c != wt->dims[1] * group)
        return kn_diag(cx, n, KN_EINVAL, "input has %lld channels, weights expect %lld x %lld",
                       (long long)c, (long long)wt->dims[1], (long long)group);
    if (m >= 0 && m % group)
        return kn_diag(cx, n, KN_EINVAL, "%lld output channels not divisible by group %lld",
                       (long long)m, (long long)group);
    if (c >= 0 && c % *og)
        return kn_diag(cx, n, KN_EINVAL, "%lld input channels not divisible by offset_group %lld",
                       (long long)c, (long long)*og);
    if (kn_window_make(cx, n, x, wt->dims + 2, 0, w)) return cx->status;
    int64_t k = 1;
    for (int d = 0; d < r; d++) k = k < 0 || w->k[d] < 0 ? -1 : k * w->k[d];
    const kn_tensor *b = kn_opt_in(n, in, 3), *mk = kn_opt_in(n, in, 4);
    const kn_type *ot = &in[2]->type;
    int64_t want[KN_MAX_RANK] = {x->dims[0], k < 0 ? -1 : *og * r * k};
    for (int d = 0; d < r; d++) want[2 + d] = w->out[d];
    for (int pass = 0; pass < 2; pass++) {
        const kn_type *t = pass ? (mk ? &mk->type : NULL) : ot;
        if (!t || t->rank < 0) continue;
        if (pass) want[1] = k < 0 ? -1 : *og * k;
        bool ok = t->rank == x->rank;
        for (int d = 0; d < x->rank && ok; d++)
            ok = t->dims[d] < 0 || want[d] < 0 || t->dims[d] == want[d];
        char buf[128], wb[160];
        if (!ok) {
            int at = snprintf(wb, sizeof wb, "[");
            for (int d = 0; d < x->rank; d++)
                at += snprintf(wb + at, sizeof wb - (size_t)at, "%s%lld", d ? ", " : "",
                               (long long)want[d]);
            snprintf(wb + at, sizeof wb - (size_t)at, "]");
            return kn_diag(cx, n, KN_EINVAL, "%s has shape %s, expected %s",
                           pass ? "mask" : "offset", kn_type_str(t, buf, sizeof buf), wb);
        }
    }
    if (b && b->type.rank >= 0 &&
        (b->type.rank != 1 || (m >= 0 && b->type.dims[0] >= 0 && b->type.dims[0] != m)))
        return kn_diag(cx, n, KN_EINVAL, "bias must have shape [%lld]", (long long)m);
    return KN_OK;
}

static kn_status infer_deformconv(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                  kn_type *out) {
    for (int i = 0; i < n->nin; i++)
        if (kn_opt_in(n, in, i) && kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type, *wt = &in[1]->type;
    out[0] = kn_type_unknown(x->dtype);
    if (x->rank < 0 || wt->rank < 0) return KN_OK;
    kn_window w;
    int64_t og;
    if (kn_deform_check(cx, n, in, &w, &og)) return cx->status;
    int64_t dims[KN_MAX_RANK] = {x->dims[0], wt->dims[0]};
    for (int d = 0; d < x->rank - 2; d++) dims[2 + d] = w.out[d];
    out[0] = kn_type_make(x->dtype, x->rank, dims);
    return KN_OK;
}

static kn_status eval_deformconv(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                 kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_deformconv)) return cx->status;
    kn_window w;
    int64_t og;
    if (kn_deform_check(cx, n, in, &w, &og)) return cx->status;
    const kn_tensor *x = in[0], *wt = in[1], *off = in[2], *b = kn_opt_in(n, in, 3),
                    *mk = kn_opt_in(n, in, 4);
    kn_tensor *y = out[0];
    int64_t group = kn_attr_int(cx, n, "group", 1);
    int r = x->type.rank - 2;
    int64_t nb = x->type.dims[0], c = x->type.dims[1], m = wt->type.dims[0];
    int64_t cg = c / group, mg = m / group, cpo = c / og;
    const int64_t *D = x->type.dims + 2;
    int64_t k = 1, osz = 1, isz = 1;
    for (int d = 0; d < r; d++) k *= w.k[d], osz *= w.out[d], isz *= D[d];
    for (int64_t b0 = 0; b0 < nb; b0++)
        for (int64_t mo = 0; mo < m; mo++)
            for (int64_t sp = 0; sp < osz; sp++) {
                double acc = b ? kn_tensor_get_f64(b, mo) : 0.0;
                int64_t o[KN_MAX_RANK];
                for (int64_t d = r - 1, q = sp; d >= 0; q /= w.out[d], d--) o[d] = q % w.out[d];
                for (int64_t ci = 0; ci < cg; ci++) {
                    int64_t ic = mo / mg * cg + ci, g = ic / cpo;
                    for (int64_t j = 0; j < k; j++) {
                        double p[KN_MAX_RANK];
                        int64_t p0[KN_MAX_RANK];
                        bool ok = true;
                        for (int64_t d = r - 1, q = j; d >= 0; q /= w.k[d], d--) {
                            int64_t kd = q % w.k[d];
                            int64_t ob = (((b0 * og + g) * k + j) * r + d) * osz + sp;
                            p[d] = (double)(o[d] * w.s[d] - w.pb[d] + kd * w.d[d]) +
                                   kn_tensor_get_f64(off, ob);
                            /* outside (-1, extent) or NaN: 0 (no corner inside) */
                            if (!(p[d] > -1 && p[d] < (double)D[d])) ok = false;
                        }
                        double v = 0;
                        for (int d = 0; d < r && ok; d++) p0[d] = (int64_t)floor(p[d]);
                        /* corner bits: axis 0 the most significant (y before x in 2-D) */
                        for (int cb = 0; cb < (1 << r) && ok; cb++) {
                            double wgt = 1;
                            int64_t at = 0;
                            bool inside = true;
                            for (int d = 0; d < r; d++) {
                                int bit = (cb >> (r - 1 - d)) & 1;
                                int64_t q = p0[d] + bit;
                                double fr = p[d] - (double)p0[d];
                                wgt *= bit ? fr : 1 - fr;
                                if (q < 0 || q >= D[d]) inside = false;
                                at = at * D[d] + q;
                            }
                            if (inside) v += wgt * kn_tensor_get_f64(x, (b0 * c + ic) * isz + at);
                        }
                        if (mk) v *= kn_tensor_get_f64(mk, ((b0 * og + g) * k + j) * osz + sp);
                        acc += v * kn_tensor_get_f64(wt, (mo * cg + ci) * k + j);
                    }
                }
                kn_tensor_set_f64(y, (b0 * m + mo) * osz + sp, acc);
            }
    return KN_OK;
}

/* ---- ConvTranspose ---- */

kn_status kn_convt_window(kn_ctx *cx, const kn_node *n, const kn_type *x, const kn_type *wt,
                          kn_window *w) {
    int nsp = x->rank - 2, mode;
    if (nsp < 1) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 3", x->rank);
    memset(w, 0, sizeof *w);
    w->nsp = nsp;
    w->transposed = 1;
    int64_t pads[2 * KN_MAX_RANK], opad[KN_MAX_RANK];
    const int64_t *ks, *os;
    int nk = kn_attr_ints(cx, n, "kernel_shape", &ks);
    int nos = kn_attr_ints(cx, n, "output_shape", &os);
    if (kn_failed(cx) || ints_attr(cx, n, "strides", nsp, 1, w->s) ||
        ints_attr(cx, n, "dilations", nsp, 1, w->d) || ints_attr(cx, n, "pads", 2 * nsp, 0, pads) ||
        ints_attr(cx, n, "output_padding", nsp, 0, opad) || auto_pad(cx, n, &mode))
        return cx->status;
    if (nk >= 0 && nk != nsp)
        return kn_diag(cx, n, KN_EINVAL, "kernel_shape has %d dims, expected %d", nk, nsp);
    if (nos >= 0 && nos != nsp && nos != nsp + 2)
        return kn_diag(cx, n, KN_EINVAL, "output_shape has %d dims, expected %d", nos, nsp);
    if (nos == nsp + 2) os += 2;
    for (int i = 0; i < nsp; i++) {
        w->in[i] = x->dims[i + 2];
        w->k[i] = nk >= 0 ? ks[i] : wt->rank >= 0 ? wt->dims[i + 2] : -1;
        int64_t kd = wt->rank == x->rank ? wt->dims[i + 2] : -1;
        if (nk >= 0 && kd >= 0 && kd != ks[i])
            return kn_diag(cx, n, KN_EINVAL, "kernel_shape[%d] is %lld but the weights have %lld",
                           i, (long long)ks[i], (long long)kd);
        if (nk >= 0 && ks[i] < 1)
            return kn_diag(cx, n, KN_EINVAL, "kernel_shape[%d] is %lld", i, (long long)ks[i]);
        if (w->s[i] < 1 || w->d[i] < 1)
            return kn_diag(cx, n, KN_EINVAL, "strides and dilations must be >= 1");
        w->pb[i] = pads[i];
        w->pe[i] = pads[i + nsp];
        int64_t in = w->in[i], ek = (w->k[i] - 1) * w->d[i] + 1;
        if (in < 0 || w->k[i] < 0) {
            w->out[i] = nos >= 0 ? os[i] : -1;
            continue;
        }
        int64_t full = w->s[i] * (in - 1) + opad[i] + ek; /* unpadded scatter extent */
        if (nos >= 0 || mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            w->out[i] = nos >= 0 ? os[i] : in * w->s[i];
            int64_t total = full - w->out[i];
            if (total < 0) total = 0;
            /* As onnxruntime: SAME_UPPER puts the odd pad at the end of the output. */
            w->pb[i] = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        } else {
            if (mode == PAD_VALID) w->pb[i] = w->pe[i] = 0;
            w->out[i] = full - w->pb[i] - w->pe[i];
        }
        if (w->out[i] < 1)
            return kn_diag(cx, n, KN_EINVAL, "output extent %lld on axis %d", (long long)w->out[i],
                           i + 2);
    }
    return KN_OK;
}

static kn_status infer_convt(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT_FLOAT))
        return cx->status;
    const kn_type *x = &in[0]->type, *wt = &in[1]->type;
    int64_t group = kn_attr_int(cx, n, "group", 1);
    if (kn_failed(cx)) return cx->status;
    if (group < 1) return kn_diag(cx, n, KN_EINVAL, "group is %lld", (long long)group);
    if (x->rank < 0) {
        out[0] = kn_type_unknown(x->dtype);
        return KN_OK;
    }
    if (wt->rank >= 0 && wt->rank != x->rank)
        return kn_diag(cx, n, KN_EINVAL, "weights have rank %d, input has rank %d", wt->rank,
                       x->rank);
    if (wt->rank >= 0 && x->dims[1] >= 0 && wt->dims[0] >= 0 && x->dims[1] != wt->dims[0])
        return kn_diag(cx, n, KN_EINVAL, "input has %lld channels, weights have %lld",
                       (long long)x->dims[1], (long long)wt->dims[0]);
    kn_window w;
    if (kn_convt_window(cx, n, x, wt, &w)) return cx->status;
    int64_t dims[KN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = wt->rank >= 0 && wt->dims[1] >= 0 ? wt->dims[1] * group : -1;
    for (int i = 0; i < w.nsp; i++) dims[i + 2] = w.out[i];
    out[0] = kn_type_make(x->dtype, x->rank, dims);
    out[0].sym[0] = x->sym[0];
    return KN_OK;
}

static kn_status eval_convt(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_convt)) return cx->status;
    const kn_tensor *x = in[0], *wt = in[1], *b = kn_opt_in(n, in, 2);
    kn_tensor *y = out[0];
    kn_window w;
    if (kn_convt_window(cx, n, &x->type, &wt->type, &w)) return cx->status;
    int64_t group = kn_attr_int(cx, n, "group", 1);
    int64_t nb = x->type.dims[0], c = x->type.dims[1], mg = wt->type.dims[1], m = mg * group;
    int64_t cg = c / group;
    int64_t isz = kn_prod(w.in, 0, w.nsp), osz = kn_prod(w.out, 0, w.nsp), nk;
    int64_t *kc = kernel_coords(kn_exec_arena(ex), &w, &nk);
    double *acc = kn_arena_array(kn_exec_arena(ex), (size_t)(osz > 0 ? osz : 1), sizeof *acc);
    KN_ASSERT(acc);
    int64_t ic[KN_MAX_RANK];
    for (int64_t b0 = 0; b0 < nb; b0++)
        for (int64_t mo = 0; mo < m; mo++) {
            int64_t g = mo / mg, mi = mo % mg;
            double bias = b ? kn_load_f64(b->data, b->type.dtype, (size_t)mo) : 0.0;
            for (int64_t o = 0; o < osz; o++) acc[o] = 0;
            for (int64_t ci = 0; ci < cg; ci++) {
                int64_t xbase = (b0 * c + g * cg + ci) * isz;
                int64_t wbase = ((g * cg + ci) * mg + mi) * nk;
                for (int64_t i = 0; i < isz; i++) {
                    unflat(i, w.nsp, w.in, ic);
                    double xv = kn_load_f64(x->data, x->type.dtype, (size_t)(xbase + i));
                    for (int64_t j = 0; j < nk; j++) {
                        int64_t off = 0, inside = 1;
                        for (int a = 0; a < w.nsp && inside; a++) {
                            int64_t p = win_pos(&w, a, ic[a], kc[j * w.nsp + a]);
                            inside = p >= 0 && p < w.out[a];
                            off = off * w.out[a] + p;
                        }
                        if (inside)
                            acc[off] +=
                                xv * kn_load_f64(wt->data, wt->type.dtype, (size_t)(wbase + j));
                    }
                }
            }
            for (int64_t o = 0; o < osz; o++) /* the bias after the sum, as Conv */
                kn_store_f64(y->data, y->type.dtype, (size_t)((b0 * m + mo) * osz + o),
                             acc[o] + bias);
        }
    return KN_OK;
}

/* ---- AveragePool, MaxPool, LpPool ---- */

double kn_lp_order(kn_ctx *cx, const kn_node *n) {
    const kn_attr *a = kn_node_attr(n, "p");
    if (a && a->kind == KN_ATTR_FLOAT) return a->f;
    return (double)kn_attr_int(cx, n, "p", 2);
}

static kn_status infer_pool_cf(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    unsigned ok = KN_DT_FLOAT;
    if (n->op == KN_OP_MAXPOOL) ok |= KN_DT(I8) | KN_DT(U8);
    if (kn_check_dtype(cx, n, in[0], 0, ok)) return cx->status;
    const kn_type *x = &in[0]->type;
    int64_t ceil_mode = kn_attr_int(cx, n, "ceil_mode", 0);
    int64_t order = kn_attr_int(cx, n, "storage_order", 0);
    if (kn_failed(cx)) return cx->status;
    if (order != 0 && order != 1)
        return kn_diag(cx, n, KN_EINVAL, "storage_order is %lld", (long long)order);
    if (x->rank < 0) {
        for (int j = 0; j < n->nout; j++) out[j] = kn_type_unknown(j ? KN_I64 : x->dtype);
        return KN_OK;
    }
    kn_window w;
    if (kn_window_make(cx, n, x, NULL, (int)ceil_mode, &w)) return cx->status;
    int64_t dims[KN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; i < w.nsp; i++) dims[i + 2] = w.out[i];
    out[0] = kn_type_make(x->dtype, x->rank, dims);
    out[0].sym[0] = x->sym[0];
    out[0].sym[1] = x->sym[1];
    if (n->nout > 1) {
        out[1] = out[0];
        out[1].dtype = KN_I64;
    }
    return KN_OK;
}

static kn_status pool_compute(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_pool_cf)) return cx->status;
    const kn_tensor *x = in[0];
    kn_tensor *y = out[0], *idx = n->nout > 1 && n->out[1] ? out[1] : NULL;
    kn_window w;
    int64_t ceil_mode = kn_attr_int(cx, n, "ceil_mode", 0);
    int64_t include_pad = kn_attr_int(cx, n, "count_include_pad", 0);
    int64_t order = kn_attr_int(cx, n, "storage_order", 0);
    double p = kn_lp_order(cx, n);
    if (kn_failed(cx) || kn_window_make(cx, n, &x->type, NULL, (int)ceil_mode, &w))
        return cx->status;
    int64_t nc = x->type.dims[0] * x->type.dims[1];
    int64_t isz = kn_prod(w.in, 0, w.nsp), osz = kn_prod(w.out, 0, w.nsp), nk;
    int64_t *kc = kernel_coords(kn_exec_arena(ex), &w, &nk);
    int64_t oc[KN_MAX_RANK], pc[KN_MAX_RANK];
    kn_dtype dt = x->type.dtype;
    for (int64_t ch = 0; ch < nc; ch++)
        for (int64_t o = 0; o < osz; o++) {
            unflat(o, w.nsp, w.out, oc);
            double acc = 0, best = -INFINITY;
            int64_t count = 0, best_at = -1;
            for (int64_t j = 0; j < nk; j++) {
                int64_t off = win_offset(&w, oc, kc + j * w.nsp);
                if (off < 0) continue;
                double v = kn_load_f64(x->data, dt, (size_t)(ch * isz + off));
                count++;
                if (n->op == KN_OP_LPPOOL)
                    acc += pow(fabs(v), p);
                else
                    acc += v;
                /* a NaN wins (the last one), as in the lowering's max: v != v */
                if (best_at < 0 || v != v || v > best) {
                    best = v;
                    best_at = off;
                }
            }
            double r;
            if (n->op == KN_OP_MAXPOOL) {
                r = best;
                if (best_at < 0) r = kn_dtype_get(dt)->is_float ? -INFINITY : 0;
            } else if (n->op == KN_OP_LPPOOL) {
                r = pow(acc, 1.0 / p);
            } else {
                if (include_pad) {
                    /* Window positions inside the padded input (not the ceil overhang). */
                    count = 1;
                    for (int a = 0; a < w.nsp; a++) {
                        int64_t lo = win_pos(&w, a, oc[a], 0), hi = lo + (w.k[a] - 1) * w.d[a];
                        int64_t cnt = 0;
                        for (int64_t q = lo; q <= hi; q += w.d[a])
                            cnt += q >= -w.pb[a] && q < w.in[a] + w.pe[a];
                        count *= cnt;
                    }
                }
                r = count ? acc / (double)count : NAN;
            }
            kn_store_f64(y->data, y->type.dtype, (size_t)(ch * osz + o), r);
            if (idx) {
                int64_t flat = best_at;
                if (order == 1 && best_at >= 0) {
                    /* Column-major over the spatial axes. */
                    unflat(best_at, w.nsp, w.in, pc);
                    flat = 0;
                    for (int a = w.nsp - 1; a >= 0; a--) flat = flat * w.in[a] + pc[a];
                }
                kn_store_i64(idx->data, KN_I64, (size_t)(ch * osz + o), ch * isz + flat);
            }
        }
    return KN_OK;
}

/* ---- GlobalAveragePool, GlobalMaxPool, GlobalLpPool ---- */

static kn_status infer_global_pool_cf(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                      kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    if (x->rank < 0) {
        out[0] = kn_type_unknown(x->dtype);
        return KN_OK;
    }
    if (x->rank < 2) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 2", x->rank);
    out[0] = *x;
    for (int d = 2; d < x->rank; d++) {
        out[0].dims[d] = 1;
        out[0].sym[d] = NULL;
    }
    return KN_OK;
}

static kn_status global_pool_compute(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                     kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_global_pool_cf)) return cx->status;
    const kn_tensor *x = in[0];
    double p = kn_lp_order(cx, n);
    if (kn_failed(cx)) return cx->status;
    int64_t nc = x->type.dims[0] * x->type.dims[1];
    int64_t inner = kn_prod(x->type.dims, 2, x->type.rank);
    for (int64_t ch = 0; ch < nc; ch++) {
        double acc = 0, best = -INFINITY;
        for (int64_t i = 0; i < inner; i++) {
            double v = kn_load_f64(x->data, x->type.dtype, (size_t)(ch * inner + i));
            if (n->op == KN_OP_GLOBALLPPOOL)
                acc += pow(fabs(v), p);
            else
                acc += v;
            if (v > best || i == 0) best = v;
        }
        double r = n->op == KN_OP_GLOBALMAXPOOL  ? best
                   : n->op == KN_OP_GLOBALLPPOOL ? pow(acc, 1.0 / p)
                                                 : acc / (double)inner;
        kn_store_f64(out[0]->data, out[0]->type.dtype, (size_t)ch, r);
    }
    return KN_OK;
}

/* ---- channels-last pools (kn.layout, passes/layout.c) ----
 *
 * As for a Conv: the pool of the channels-first tensors, its input moved to channels
 * first when it is stored channels-last, its result moved back. Only single-output
 * pools carry the attribute (MaxPool without Indices). */

typedef kn_status (*pool_eval_fn)(kn_exec *, const kn_node *, kn_tensor *const *, kn_tensor **);

static kn_status infer_pool_cl(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out,
                               kn_infer_fn cf) {
    bool xcl, ycl;
    if (!kn_conv_layout(n, &xcl, &ycl)) return cf(cx, n, in, out);
    kn_tensor xt = *in[0], *ins[1] = {&xt};
    if (xcl) xt.type = kn_type_channels(&in[0]->type, false);
    if (cf(cx, n, ins, out)) return cx->status;
    if (ycl) out[0] = kn_type_channels(&out[0], true);
    return KN_OK;
}

static kn_status eval_pool_cl(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out,
                              kn_infer_fn infer, pool_eval_fn cf) {
    kn_ctx *cx = kn_exec_ctx(ex);
    bool xcl, ycl;
    if (!kn_conv_layout(n, &xcl, &ycl)) return cf(ex, n, in, out);
    if (n->nout != 1)
        return kn_diag(cx, n, KN_EINVAL, "kn.layout on a pool with %d outputs", n->nout);
    if (kn_alloc_outputs(ex, n, in, out, infer)) return cx->status;
    kn_arena *a = kn_exec_arena(ex);
    kn_tensor *x = in[0], *y = out[0];
    if (xcl) {
        kn_type t = kn_type_channels(&in[0]->type, false);
        if (!(x = kn_tensor_new(a, &t))) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
        kn_tensor_move_channels(in[0], x, false);
    }
    if (ycl) {
        kn_type t = kn_type_channels(&out[0]->type, false);
        if (!(y = kn_tensor_new(a, &t))) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
    }
    kn_tensor *ins[1] = {x}, *outs[1] = {y};
    if (cf(ex, n, ins, outs)) return cx->status;
    if (ycl) kn_tensor_move_channels(y, out[0], true);
    return KN_OK;
}

static kn_status infer_pool(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    return infer_pool_cl(cx, n, in, out, infer_pool_cf);
}

static kn_status eval_pool(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    return eval_pool_cl(ex, n, in, out, infer_pool, pool_compute);
}

static kn_status infer_global_pool(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                   kn_type *out) {
    return infer_pool_cl(cx, n, in, out, infer_global_pool_cf);
}

static kn_status eval_global_pool(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                  kn_tensor **out) {
    return eval_pool_cl(ex, n, in, out, infer_global_pool, global_pool_compute);
}

/* ---- MaxUnpool ---- */

static kn_status infer_maxunpool(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT) || kn_check_dtype(cx, n, in[1], 1, KN_DT(I64)))
        return cx->status;
    const kn_type *x = &in[0]->type;
    if (kn_opt_in(n, in, 2)) {
        const kn_tensor *s = in[2];
        if (kn_check_dtype(cx, n, s, 2, KN_DT(I64))) return cx->status;
        if (!s->data || s->type.rank != 1 || s->type.dims[0] < 0) {
            out[0] = kn_type_unknown(x->dtype);
            return KN_OK;
        }
        int64_t r = s->type.dims[0], dims[KN_MAX_RANK];
        if (r > KN_MAX_RANK || (x->rank >= 0 && r != x->rank))
            return kn_diag(cx, n, KN_EINVAL, "output_shape has %lld entries, input rank is %d",
                           (long long)r, x->rank);
        for (int d = 0; d < r; d++) {
            dims[d] = kn_load_i64(s->data, KN_I64, (size_t)d);
            if (dims[d] < 0)
                return kn_diag(cx, n, KN_EINVAL, "output_shape[%d] is %lld", d, (long long)dims[d]);
        }
        out[0] = kn_type_make(x->dtype, (int)r, dims);
        return KN_OK;
    }
    if (x->rank < 0) {
        out[0] = kn_type_unknown(x->dtype);
        return KN_OK;
    }
    kn_window w;
    if (kn_window_make(cx, n, x, NULL, 0, &w)) return cx->status;
    int64_t dims[KN_MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; i < w.nsp; i++)
        dims[i + 2] = w.in[i] < 0 ? -1 : (w.in[i] - 1) * w.s[i] + w.k[i] - w.pb[i] - w.pe[i];
    out[0] = kn_type_make(x->dtype, x->rank, dims);
    out[0].sym[0] = x->sym[0];
    out[0].sym[1] = x->sym[1];
    return KN_OK;
}

static kn_status eval_maxunpool(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_maxunpool)) return cx->status;
    const kn_tensor *x = in[0], *ix = in[1];
    kn_tensor *y = out[0];
    const kn_type *yt = &y->type;
    int64_t cnt = kn_tensor_numel(x);
    if (kn_tensor_numel(ix) != cnt)
        return kn_diag(cx, n, KN_EINVAL, "indices have %lld elements, input has %lld",
                       (long long)kn_tensor_numel(ix), (long long)cnt);
    /* Indices address the unpooled shape implied by the window (as MaxPool made them);
     * an output_shape may be larger, so go through coordinates. */
    kn_window w;
    if (kn_window_make(cx, n, &x->type, NULL, 0, &w)) return cx->status;
    int64_t dflt[KN_MAX_RANK], coord[KN_MAX_RANK];
    dflt[0] = x->type.dims[0];
    dflt[1] = x->type.dims[1];
    for (int i = 0; i < w.nsp; i++)
        dflt[i + 2] = (w.in[i] - 1) * w.s[i] + w.k[i] - w.pb[i] - w.pe[i];
    if (yt->rank != x->type.rank)
        return kn_diag(cx, n, KN_EINVAL, "output_shape has rank %d, input has rank %d", yt->rank,
                       x->type.rank);
    int64_t ndflt = kn_prod(dflt, 0, yt->rank);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t at = kn_load_i64(ix->data, KN_I64, (size_t)i), off = 0;
        if (at < 0 || at >= ndflt)
            return kn_diag(cx, n, KN_EINVAL, "index %lld is outside the unpooled %lld elements",
                           (long long)at, (long long)ndflt);
        unflat(at, yt->rank, dflt, coord);
        for (int d = 0; d < yt->rank; d++) {
            if (coord[d] >= yt->dims[d])
                return kn_diag(cx, n, KN_EINVAL, "index %lld falls outside output_shape",
                               (long long)at);
            off = off * yt->dims[d] + coord[d];
        }
        kn_store_f64(y->data, yt->dtype, (size_t)off,
                     kn_load_f64(x->data, x->type.dtype, (size_t)i));
    }
    return KN_OK;
}

/* ---- Gemm ---- */

#define KN_DT_MATMUL (KN_DT_FLOAT | KN_DT(I32) | KN_DT(I64) | KN_DT(U32) | KN_DT(U64))

static kn_status infer_gemm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_MATMUL) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT_MATMUL))
        return cx->status;
    const kn_type *a = &in[0]->type, *b = &in[1]->type;
    if (a->dtype != b->dtype)
        return kn_diag(cx, n, KN_EINVAL, "A is %s but B is %s", kn_dtype_name(a->dtype),
                       kn_dtype_name(b->dtype));
    if (!kn_opt_in(n, in, 2) && n->opset < 11)
        return kn_diag(cx, n, KN_EINVAL, "C is required before opset 11");
    int64_t ta = kn_attr_int(cx, n, "transA", 0), tb = kn_attr_int(cx, n, "transB", 0);
    if (kn_failed(cx)) return cx->status;
    if (a->rank < 0 || b->rank < 0) {
        out[0] = kn_type_make(a->dtype, 2, (int64_t[]){-1, -1});
        return KN_OK;
    }
    if (a->rank != 2 || b->rank != 2)
        return kn_diag(cx, n, KN_EINVAL, "A and B must be matrices, got ranks %d and %d", a->rank,
                       b->rank);
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
    int64_t k2 = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
    if (k >= 0 && k2 >= 0 && k != k2)
        return kn_diag(cx, n, KN_EINVAL, "inner dimensions differ: %lld and %lld", (long long)k,
                       (long long)k2);
    out[0] = kn_type_make(a->dtype, 2, (int64_t[]){m, nn});
    out[0].sym[0] = m < 0 ? a->sym[ta ? 1 : 0] : NULL;
    out[0].sym[1] = nn < 0 ? b->sym[tb ? 0 : 1] : NULL;
    if (kn_opt_in(n, in, 2)) {
        const kn_type *c = &in[2]->type;
        if (c->dtype != a->dtype)
            return kn_diag(cx, n, KN_EINVAL, "C is %s, expected %s", kn_dtype_name(c->dtype),
                           kn_dtype_name(a->dtype));
        if (c->rank > 2) return kn_diag(cx, n, KN_EINVAL, "C has rank %d", c->rank);
        for (int d = 0; c->rank >= 0 && d < c->rank; d++) {
            int64_t e = c->dims[d], want = out[0].dims[d + 2 - c->rank];
            if (e >= 0 && want >= 0 && e != 1 && e != want)
                return kn_diag(cx, n, KN_EINVAL, "C dim %d is %lld, cannot broadcast to %lld", d,
                               (long long)e, (long long)want);
        }
    }
    return KN_OK;
}

static kn_status eval_gemm(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_gemm)) return cx->status;
    const kn_tensor *a = in[0], *b = in[1], *c = kn_opt_in(n, in, 2);
    kn_tensor *y = out[0];
    int64_t ta = kn_attr_int(cx, n, "transA", 0), tb = kn_attr_int(cx, n, "transB", 0);
    double alpha = kn_attr_float(cx, n, "alpha", 1.0f), beta = kn_attr_float(cx, n, "beta", 1.0f);
    if (kn_failed(cx)) return cx->status;
    int64_t m = y->type.dims[0], nn = y->type.dims[1], k = a->type.dims[ta ? 0 : 1];
    int64_t cs[2] = {0, 0};
    if (c) kn_bcast_strides(&c->type, 2, y->type.dims, cs);
    kn_dtype dt = y->type.dtype;
    bool fl = kn_dtype_get(dt)->is_float;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nn; j++) {
            double acc = 0;
            int64_t iacc = 0;
            for (int64_t l = 0; l < k; l++) {
                size_t ai = (size_t)(ta ? l * m + i : i * k + l);
                size_t bi = (size_t)(tb ? j * k + l : l * nn + j);
                if (fl)
                    acc += kn_load_f64(a->data, dt, ai) * kn_load_f64(b->data, dt, bi);
                else
                    iacc = (int64_t)((uint64_t)iacc + (uint64_t)kn_load_i64(a->data, dt, ai) *
                                                          (uint64_t)kn_load_i64(b->data, dt, bi));
            }
            size_t ci = (size_t)(i * cs[0] + j * cs[1]);
            if (fl) {
                double r = alpha * acc;
                if (c && beta != 0) r += beta * kn_load_f64(c->data, dt, ci);
                kn_store_f64(y->data, dt, (size_t)(i * nn + j), r);
            } else {
                int64_t r = (int64_t)(alpha * (double)iacc);
                if (c && beta != 0) r += (int64_t)(beta * (double)kn_load_i64(c->data, dt, ci));
                kn_store_i64(y->data, dt, (size_t)(i * nn + j), r);
            }
        }
    return KN_OK;
}

/* ---- MatMul ---- */

/* numpy matmul shapes: a 1-D A gains a leading 1, a 1-D B a trailing 1, both removed
 * from the result; the batch dims broadcast. */
static kn_status infer_matmul(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_MATMUL) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT_MATMUL))
        return cx->status;
    const kn_type *a = &in[0]->type, *b = &in[1]->type;
    if (a->dtype != b->dtype)
        return kn_diag(cx, n, KN_EINVAL, "A is %s but B is %s", kn_dtype_name(a->dtype),
                       kn_dtype_name(b->dtype));
    if (a->rank < 0 || b->rank < 0) {
        out[0] = kn_type_unknown(a->dtype);
        return KN_OK;
    }
    if (a->rank < 1 || b->rank < 1)
        return kn_diag(cx, n, KN_EINVAL, "MatMul operands must have rank >= 1");
    int64_t m = a->rank > 1 ? a->dims[a->rank - 2] : 1, k = a->dims[a->rank - 1];
    int64_t k2 = b->rank > 1 ? b->dims[b->rank - 2] : b->dims[0];
    int64_t nn = b->rank > 1 ? b->dims[b->rank - 1] : 1;
    if (k >= 0 && k2 >= 0 && k != k2)
        return kn_diag(cx, n, KN_EINVAL, "inner dimensions differ: %lld and %lld", (long long)k,
                       (long long)k2);
    kn_type ba = *a, bb = *b, o;
    ba.rank = a->rank > 2 ? a->rank - 2 : 0;
    bb.rank = b->rank > 2 ? b->rank - 2 : 0;
    memset(&o, 0, sizeof o);
    const kn_type *bt[2] = {&ba, &bb};
    if (kn_broadcast(cx, n, 2, bt, &o)) return cx->status;
    if (o.rank + 2 > KN_MAX_RANK) return kn_diag(cx, n, KN_EINVAL, "result rank too large");
    o.dtype = a->dtype;
    o.kind = KN_KIND_TENSOR;
    if (a->rank > 1) {
        o.sym[o.rank] = a->sym[a->rank - 2];
        o.dims[o.rank++] = m;
    }
    if (b->rank > 1) {
        o.sym[o.rank] = b->sym[b->rank - 1];
        o.dims[o.rank++] = nn;
    }
    out[0] = o;
    return KN_OK;
}

static kn_status eval_matmul(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_matmul)) return cx->status;
    const kn_tensor *a = in[0], *b = in[1];
    kn_tensor *y = out[0];
    const kn_type *at = &a->type, *bt = &b->type;
    int64_t m = at->rank > 1 ? at->dims[at->rank - 2] : 1, k = at->dims[at->rank - 1];
    int64_t nn = bt->rank > 1 ? bt->dims[bt->rank - 1] : 1;
    /* Batch shapes and their broadcast strides, in units of whole matrices. */
    kn_type ba = *at, bb = *bt;
    ba.rank = at->rank > 2 ? at->rank - 2 : 0;
    bb.rank = bt->rank > 2 ? bt->rank - 2 : 0;
    int orank = ba.rank > bb.rank ? ba.rank : bb.rank;
    int64_t odims[KN_MAX_RANK] = {0}, sa[KN_MAX_RANK], sb[KN_MAX_RANK];
    for (int d = 0; d < orank; d++) {
        int ka = d - (orank - ba.rank), kb = d - (orank - bb.rank);
        int64_t ea = ka < 0 ? 1 : ba.dims[ka], eb = kb < 0 ? 1 : bb.dims[kb];
        odims[d] = ea == 1 ? eb : ea;
    }
    kn_bcast_strides(&ba, orank, odims, sa);
    kn_bcast_strides(&bb, orank, odims, sb);
    int64_t nbatch = kn_prod(odims, 0, orank);
    kn_dtype dt = y->type.dtype;
    bool fl = kn_dtype_get(dt)->is_float, uns = !kn_dtype_get(dt)->is_signed;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t oa = kn_bcast_offset(bi, orank, odims, sa) * m * k;
        int64_t ob = kn_bcast_offset(bi, orank, odims, sb) * k * nn;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                double acc = 0;
                uint64_t iacc = 0;
                for (int64_t l = 0; l < k; l++) {
                    size_t ai = (size_t)(oa + i * k + l), bj = (size_t)(ob + l * nn + j);
                    if (fl)
                        acc += kn_load_f64(a->data, dt, ai) * kn_load_f64(b->data, dt, bj);
                    else
                        iacc += kn_load_u64(a->data, dt, ai) * kn_load_u64(b->data, dt, bj);
                }
                size_t yi = (size_t)((bi * m + i) * nn + j);
                if (fl)
                    kn_store_f64(y->data, dt, yi, acc);
                else if (uns)
                    kn_store_u64(y->data, dt, yi, iacc);
                else
                    kn_store_i64(y->data, dt, yi, (int64_t)iacc);
            }
    }
    return KN_OK;
}

/* ---- Einsum ---- */

static int ein_letter(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return 26 + ch - 'a';
    return -1;
}

/* Parses one term of the equation (s..e): its letter labels into lab, the label index
 * before which "..." stands into *ell_at (-1 if none). Returns the label count, or -1
 * after reporting a malformed term. */
static int ein_term(kn_ctx *cx, const kn_node *n, const char *s, const char *e, int *lab,
                    int *ell_at) {
    int len = 0;
    *ell_at = -1;
    while (s < e) {
        if (*s == ' ') {
            s++;
            continue;
        }
        if (*s == '.') {
            if (e - s < 3 || s[1] != '.' || s[2] != '.' || *ell_at >= 0) {
                kn_diag(cx, n, KN_EINVAL, "bad ellipsis in equation");
                return -1;
            }
            *ell_at = len;
            s += 3;
            continue;
        }
        int l = ein_letter(*s);
        if (l < 0 || len >= KN_MAX_RANK) {
            kn_diag(cx, n, KN_EINVAL, "bad equation term near '%c'", *s);
            return -1;
        }
        lab[len++] = l;
        s++;
    }
    return len;
}

kn_status kn_einsum_parse(kn_ctx *cx, const kn_node *n, const kn_type *const *types, kn_einsum *p) {
    const char *eq = kn_attr_str(cx, n, "equation", NULL);
    if (kn_failed(cx)) return cx->status;
    if (!eq) return kn_diag(cx, n, KN_EINVAL, "equation is required");
    memset(p, 0, sizeof *p);
    p->nin = n->nin;
    if (p->nin > EIN_MAX_IN) return kn_diag(cx, n, KN_EUNSUPPORTED, "more than 32 operands");
    const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq), *s = eq;
    int lab[EIN_MAX_IN][KN_MAX_RANK], len[EIN_MAX_IN], ell[EIN_MAX_IN], count[EIN_LABELS] = {0};
    for (int i = 0; i < p->nin; i++) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        if (!comma && i + 1 < p->nin)
            return kn_diag(cx, n, KN_EINVAL, "equation has fewer terms than %d inputs", p->nin);
        if (comma && i + 1 == p->nin)
            return kn_diag(cx, n, KN_EINVAL, "equation has more terms than %d inputs", p->nin);
        const char *te = comma ? comma : end;
        len[i] = ein_term(cx, n, s, te, lab[i], &ell[i]);
        if (len[i] < 0) return cx->status;
        int r = types[i]->rank, ne = r - len[i];
        if (ne < 0 || (ell[i] < 0 && ne != 0))
            return kn_diag(cx, n, KN_EINVAL, "term %d has %d labels but input rank is %d", i,
                           len[i], r);
        if (ne > p->nell) p->nell = ne;
        p->rank[i] = r;
        for (int t = 0; t < len[i]; t++) count[lab[i][t]]++;
        s = te + 1;
    }
    /* Each input's axes as labels; ellipsis dims right-aligned to the widest. */
    for (int i = 0; i < p->nin; i++) {
        int ne = p->rank[i] - len[i], d = 0;
        for (int t = 0; t <= len[i]; t++) {
            if (t == ell[i])
                for (int q = 0; q < ne; q++) p->lab[i][d++] = EIN_LETTERS + p->nell - ne + q;
            if (t < len[i]) p->lab[i][d++] = lab[i][t];
        }
    }
    int olab[KN_MAX_RANK], oell;
    if (arrow) {
        int olen = ein_term(cx, n, arrow + 2, arrow + strlen(arrow), olab, &oell);
        if (olen < 0) return cx->status;
        if (olen + (oell >= 0 ? p->nell : 0) > KN_MAX_RANK)
            return kn_diag(cx, n, KN_EINVAL, "output rank too large");
        int d = 0;
        for (int t = 0; t <= olen; t++) {
            if (t == oell)
                for (int q = 0; q < p->nell; q++) p->olab[d++] = EIN_LETTERS + q;
            if (t == olen) break;
            int l = olab[t];
            if (!count[l])
                return kn_diag(cx, n, KN_EINVAL, "output label '%c' is not in any input",
                               l < 26 ? 'A' + l : 'a' + l - 26);
            for (int q = 0; q < d; q++)
                if (p->olab[q] == l) return kn_diag(cx, n, KN_EINVAL, "output label repeated");
            p->olab[d++] = l;
        }
        p->orank = d;
    } else {
        int d = 0;
        for (int q = 0; q < p->nell; q++) p->olab[d++] = EIN_LETTERS + q;
        for (int l = 0; l < EIN_LETTERS; l++)
            if (count[l] == 1) {
                if (d >= KN_MAX_RANK) return kn_diag(cx, n, KN_EINVAL, "output rank too large");
                p->olab[d++] = l;
            }
        p->orank = d;
    }
    /* Label extents: letters must agree; broadcast dims may be 1. */
    for (int l = 0; l < EIN_LABELS; l++) p->size[l] = -2;
    for (int i = 0; i < p->nin; i++)
        for (int d = 0; d < p->rank[i]; d++) {
            int l = p->lab[i][d];
            int64_t e = types[i]->dims[d];
            p->used[l] = 1;
            if (l >= EIN_LETTERS && e == 1) continue;
            if (p->size[l] == -2 || (l >= EIN_LETTERS && p->size[l] == 1))
                p->size[l] = e;
            else if (e >= 0 && p->size[l] >= 0 && e != p->size[l])
                return kn_diag(cx, n, KN_EINVAL, "label extents differ: %lld and %lld",
                               (long long)p->size[l], (long long)e);
            else if (e < 0)
                p->size[l] = -1;
        }
    for (int l = 0; l < EIN_LABELS; l++)
        if (p->size[l] == -2) p->size[l] = 1;
    return KN_OK;
}

/* kn_einsum_parse over the input tensors' types. */
static kn_status ein_parse(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_einsum *p) {
    const kn_type *t[EIN_MAX_IN];
    for (int i = 0; i < n->nin && i < EIN_MAX_IN; i++) t[i] = &in[i]->type;
    return kn_einsum_parse(cx, n, t, p);
}

static kn_status infer_einsum(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    for (int i = 0; i < n->nin; i++)
        if (kn_check_dtype(cx, n, in[i], i, KN_DT_NUM)) return cx->status;
    kn_dtype dt = in[0]->type.dtype;
    for (int i = 0; i < n->nin; i++) {
        if (in[i]->type.dtype != dt)
            return kn_diag(cx, n, KN_EINVAL, "input %d is %s, expected %s", i,
                           kn_dtype_name(in[i]->type.dtype), kn_dtype_name(dt));
        if (in[i]->type.rank < 0) {
            out[0] = kn_type_unknown(dt);
            return KN_OK;
        }
    }
    kn_einsum *p = &(kn_einsum){0};
    if (ein_parse(cx, n, in, p)) return cx->status;
    int64_t dims[KN_MAX_RANK];
    for (int d = 0; d < p->orank; d++) dims[d] = p->size[p->olab[d]];
    out[0] = kn_type_make(dt, p->orank, dims);
    return KN_OK;
}

static kn_status eval_einsum(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_einsum)) return cx->status;
    kn_einsum *p = &(kn_einsum){0};
    if (ein_parse(cx, n, in, p)) return cx->status;
    /* Loop order: output labels, then the summed labels that several inputs share; a
     * summed label of one input only (private) is summed inside that input's factor, as
     * sum over all labels of prod_i x_i = prod_i (sum over i's private labels of x_i): a
     * fuzzed "bij,bqk->bik" made 47 x 48 products per output otherwise, not 47 + 48. */
    int order[EIN_LABELS], nl = 0, isout[EIN_LABELS] = {0}, owner[EIN_LABELS];
    for (int l = 0; l < EIN_LABELS; l++) owner[l] = -1; /* -1 none, -2 several inputs */
    for (int i = 0; i < p->nin; i++)
        for (int d = 0; d < p->rank[i]; d++) {
            int l = p->lab[i][d];
            owner[l] = owner[l] == -1 || owner[l] == i ? i : -2;
        }
    for (int d = 0; d < p->orank; d++) {
        order[nl++] = p->olab[d];
        isout[p->olab[d]] = 1;
    }
    int priv[EIN_MAX_IN][EIN_LABELS], npriv[EIN_MAX_IN] = {0};
    for (int l = 0; l < EIN_LABELS; l++) {
        if (!p->used[l] || isout[l]) continue;
        if (owner[l] >= 0)
            priv[owner[l]][npriv[owner[l]]++] = l;
        else
            order[nl++] = l;
    }
    int64_t ext[EIN_LABELS], val[EIN_LABELS] = {0}, total = 1;
    for (int q = 0; q < nl; q++) {
        ext[q] = p->size[order[q]];
        total *= ext[q];
    }
    kn_tensor *y = out[0];
    kn_dtype dt = y->type.dtype;
    bool fl = kn_dtype_get(dt)->is_float;
    int64_t ny = kn_tensor_numel(y);
    double *acc = kn_arena_array(kn_exec_arena(ex), (size_t)(ny > 0 ? ny : 1), sizeof *acc);
    uint64_t *iacc = kn_arena_array(kn_exec_arena(ex), (size_t)(ny > 0 ? ny : 1), sizeof *iacc);
    KN_ASSERT(acc && iacc);
    /* Each label's step in y and in each input: the sum of the strides of the dims it labels
     * (a label repeated in one input walks its diagonal; a broadcast dim of 1 steps 0). The
     * odometers below move the offsets by these steps instead of recomputing them from every
     * label's value: a fuzzed "bij,bqk" (implicit output ijkq, 6.7 M outputs, 5 terms each)
     * took 15 s under ASan, most of it in the recomputed offsets. Same terms, same order. */
    int64_t ystep[EIN_LABELS] = {0}, xstep[EIN_MAX_IN][EIN_LABELS], st[KN_MAX_RANK];
    memset(xstep, 0, sizeof xstep);
    kn_strides(p->orank, y->type.dims, st);
    for (int d = 0; d < p->orank; d++) ystep[p->olab[d]] += st[d];
    int64_t cnt[EIN_MAX_IN];
    for (int i = 0; i < p->nin; i++) {
        kn_strides(p->rank[i], in[i]->type.dims, st);
        for (int d = 0; d < p->rank[i]; d++)
            if (in[i]->type.dims[d] != 1) xstep[i][p->lab[i][d]] += st[d];
        cnt[i] = 1;
        for (int q = 0; q < npriv[i]; q++) cnt[i] *= p->size[priv[i][q]];
    }
    /* val and pv count through their labels' extents like odometers (last fastest); yo and
     * xo[i] are the offsets of val's labels in y and in input i */
    int64_t yo = 0, xo[EIN_MAX_IN] = {0};
    for (int64_t it = 0; it < total; it++) {
        if (it)
            for (int q = nl - 1; q >= 0; q--) {
                int l = order[q];
                int64_t back = ++val[q] < ext[q] ? -1 : ext[q] - 1; /* -1: one step on */
                if (back < 0) {
                    yo += ystep[l];
                    for (int i = 0; i < p->nin; i++) xo[i] += xstep[i][l];
                    break;
                }
                val[q] = 0;
                yo -= back * ystep[l];
                for (int i = 0; i < p->nin; i++) xo[i] -= back * xstep[i][l];
            }
        double pr = 1;
        uint64_t ipr = 1;
        for (int i = 0; i < p->nin; i++) {
            if (!npriv[i]) { /* one term */
                if (fl)
                    pr *= kn_load_f64(in[i]->data, dt, (size_t)xo[i]);
                else
                    ipr *= kn_load_u64(in[i]->data, dt, (size_t)xo[i]);
                continue;
            }
            int64_t pv[KN_MAX_RANK], off = xo[i];
            for (int q = 0; q < npriv[i]; q++) pv[q] = 0;
            double f = 0;
            uint64_t fi = 0;
            for (int64_t c = 0; c < cnt[i]; c++) {
                if (c)
                    for (int q = npriv[i] - 1; q >= 0; q--) {
                        int l = priv[i][q];
                        if (++pv[q] < p->size[l]) {
                            off += xstep[i][l];
                            break;
                        }
                        pv[q] = 0;
                        off -= (p->size[l] - 1) * xstep[i][l];
                    }
                if (fl)
                    f += kn_load_f64(in[i]->data, dt, (size_t)off);
                else
                    fi += kn_load_u64(in[i]->data, dt, (size_t)off);
            }
            pr *= f;
            ipr *= fi;
        }
        if (fl)
            acc[yo] += pr;
        else
            iacc[yo] += ipr;
    }
    for (int64_t i = 0; i < ny; i++) {
        if (fl)
            kn_store_f64(y->data, dt, (size_t)i, acc[i]);
        else if (!kn_dtype_get(dt)->is_signed)
            kn_store_u64(y->data, dt, (size_t)i, iacc[i]);
        else
            kn_store_i64(y->data, dt, (size_t)i, (int64_t)iacc[i]);
    }
    return KN_OK;
}

/* ---- Det ---- */

static kn_status infer_det(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    if (x->rank < 0) {
        out[0] = kn_type_unknown(x->dtype);
        return KN_OK;
    }
    if (x->rank < 2) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected >= 2", x->rank);
    int64_t r = x->dims[x->rank - 2], c = x->dims[x->rank - 1];
    if (r >= 0 && c >= 0 && r != c)
        return kn_diag(cx, n, KN_EINVAL, "matrices are %lld x %lld, not square", (long long)r,
                       (long long)c);
    out[0] = *x;
    out[0].rank = x->rank - 2;
    return KN_OK;
}

static kn_status eval_det(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_det)) return cx->status;
    const kn_tensor *x = in[0];
    int64_t m = x->type.dims[x->type.rank - 1], cnt = kn_tensor_numel(out[0]);
    double *a = kn_arena_array(kn_exec_arena(ex), (size_t)(m * m > 0 ? m * m : 1), sizeof *a);
    KN_ASSERT(a);
    for (int64_t b = 0; b < cnt; b++) {
        for (int64_t i = 0; i < m * m; i++)
            a[i] = kn_load_f64(x->data, x->type.dtype, (size_t)(b * m * m + i));
        /* LU with partial pivoting; det is the signed product of the pivots. */
        double det = 1;
        for (int64_t col = 0; col < m; col++) {
            int64_t piv = col;
            for (int64_t r = col + 1; r < m; r++)
                if (fabs(a[r * m + col]) > fabs(a[piv * m + col])) piv = r;
            if (a[piv * m + col] == 0) {
                det = 0;
                break;
            }
            if (piv != col) {
                for (int64_t q = 0; q < m; q++) {
                    double t = a[col * m + q];
                    a[col * m + q] = a[piv * m + q];
                    a[piv * m + q] = t;
                }
                det = -det;
            }
            det *= a[col * m + col];
            for (int64_t r = col + 1; r < m; r++) {
                double f = a[r * m + col] / a[col * m + col];
                for (int64_t q = col; q < m; q++) a[r * m + q] -= f * a[col * m + q];
            }
        }
        kn_store_f64(out[0]->data, out[0]->type.dtype, (size_t)b, det);
    }
    return KN_OK;
}

const kn_opimpl kn_ops_nn[] = {
    {KN_OP_CONV, infer_conv, eval_conv},
    {KN_OP_CONVTRANSPOSE, infer_convt, eval_convt},
    {KN_OP_DEFORMCONV, infer_deformconv, eval_deformconv},
    {KN_OP_AVERAGEPOOL, infer_pool, eval_pool},
    {KN_OP_MAXPOOL, infer_pool, eval_pool},
    {KN_OP_LPPOOL, infer_pool, eval_pool},
    {KN_OP_GLOBALAVERAGEPOOL, infer_global_pool, eval_global_pool},
    {KN_OP_GLOBALMAXPOOL, infer_global_pool, eval_global_pool},
    {KN_OP_GLOBALLPPOOL, infer_global_pool, eval_global_pool},
    {KN_OP_MAXUNPOOL, infer_maxunpool, eval_maxunpool},
    {KN_OP_GEMM, infer_gemm, eval_gemm},
    {KN_OP_MATMUL, infer_matmul, eval_matmul},
    {KN_OP_EINSUM, infer_einsum, eval_einsum},
    {KN_OP_DET, infer_det, eval_det},
    {KN_OP_COUNT, 0, 0},
};
