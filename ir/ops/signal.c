/* Signal-processing operators: DFT, STFT, the Hann/Hamming/Blackman windows and
 * MelWeightMatrix (opset 17).
 *
 * Complex tensors carry a trailing dimension of 2 (real, imaginary); real input to
 * DFT/STFT has a trailing 1. Transforms are the plain O(n^2) sums in double, with
 * the angle reduced as 2*pi*((k*n) mod N)/N so large k*n keep their precision.
 * Output shapes that depend on scalar inputs (window size, dft_length, frame
 * counts) are unknown (-1) during static inference when those inputs are not
 * constants. */
#include "ir/ops.h"

#include <math.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

/* Scalar integer input i (a scalar or one-element tensor); *known = 0 if its data is
 * not available. */
static kn_status scalar_i64(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i, int *known,
                            int64_t *v) {
    *known = 0;
    if (kn_check_dtype(cx, n, t, i, KN_DT(I32) | KN_DT(I64))) return cx->status;
    if (!t->data) return KN_OK;
    if (kn_tensor_numel(t) != 1) return kn_diag(cx, n, KN_EINVAL, "input %d must be a scalar", i);
    *known = 1;
    *v = kn_load_i64(t->data, t->type.dtype, 0);
    return KN_OK;
}

/* output_datatype attribute of the window and mel ops: a numeric dtype. */
static kn_status output_datatype(kn_ctx *cx, const kn_node *n, kn_dtype *dt) {
    int64_t v = kn_attr_int(cx, n, "output_datatype", KN_F32);
    if (kn_failed(cx)) return cx->status;
    if (v <= 0 || v >= 32 || !kn_dtype_valid((int)v) || !(KN_DT_NUM & (1u << v)))
        return kn_diag(cx, n, KN_EINVAL, "output_datatype %lld is not a numeric type",
                       (long long)v);
    *dt = (kn_dtype)v;
    return KN_OK;
}

/* Adds x * e^(i*sign*2*pi*k*m/N) to (*re, *im). */
static void cadd_rot(double *re, double *im, double xr, double xi, int64_t k, int64_t m, int64_t N,
                     double sign) {
    double th = sign * 2 * PI * (double)((k * m) % N) / (double)N;
    *re += xr * cos(th) - xi * sin(th);
    *im += xr * sin(th) + xi * cos(th);
}

/* ---- DFT ---- */

static kn_status dft_params(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int *axis,
                            int *onesided, int *inverse) {
    /* opset 20 moved axis to input 2 (default -2: the last signal axis) */
    int64_t ax = n->opset >= 20 ? -2 : kn_attr_int(cx, n, "axis", 1);
    const kn_tensor *at = n->opset >= 20 ? kn_opt_in(n, in, 2) : NULL;
    if (at && !kn_data_known(at)) {
        *axis = -1;
        return KN_OK;
    }
    if (at && (kn_tensor_numel(at) != 1 || !kn_dtype_get(at->type.dtype)->is_int))
        return kn_diag(cx, n, KN_EINVAL, "axis must be an integer scalar");
    if (at) ax = kn_load_i64(at->data, at->type.dtype, 0);
    *onesided = (int)kn_attr_int(cx, n, "onesided", 0);
    *inverse = (int)kn_attr_int(cx, n, "inverse", 0);
    if (kn_failed(cx)) return cx->status;
    int r = in[0]->type.rank;
    *axis = -1;
    if (r < 0) return KN_OK;
    if (r < 2) return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected at least 2", r);
    if (kn_axis(cx, n, ax, r, 0, axis)) return cx->status;
    if (*axis == r - 1)
        return kn_diag(cx, n, KN_EINVAL, "axis %lld is the complex component dimension",
                       (long long)ax);
    return KN_OK;
}

static kn_status infer_dft(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    int axis, onesided, inverse;
    if (dft_params(cx, n, in, &axis, &onesided, &inverse)) return cx->status;
    const kn_type *x = &in[0]->type;
    if (x->rank < 0) {
        out[0] = kn_type_unknown(x->dtype);
        return KN_OK;
    }
    int64_t c = x->dims[x->rank - 1];
    if (c >= 0 && c != 1 && c != 2)
        return kn_diag(cx, n, KN_EINVAL, "last dimension is %lld, expected 1 (real) or 2",
                       (long long)c);
    if (axis < 0) { /* the axis input is not known yet */
        out[0] = *x;
        for (int d = 0; d < x->rank; d++) out[0].dims[d] = -1, out[0].sym[d] = NULL;
        out[0].dims[x->rank - 1] = 2;
        return KN_OK;
    }
    int64_t len = x->dims[axis];
    kn_tensor *lt = kn_opt_in(n, in, 1);
    if (lt) {
        int known;
        int64_t v;
        if (scalar_i64(cx, n, lt, 1, &known, &v)) return cx->status;
        if (known && v <= 0)
            return kn_diag(cx, n, KN_EINVAL, "dft_length %lld must be positive", (long long)v);
        len = known ? v : -1;
    }
    out[0] = *x;
    out[0].dims[x->rank - 1] = 2;
    out[0].sym[x->rank - 1] = NULL;
    out[0].dims[axis] = len < 0 ? -1 : onesided ? len / 2 + 1 : len;
    if (lt || onesided) out[0].sym[axis] = NULL;
    return KN_OK;
}

static kn_status eval_dft(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    int axis, onesided, inverse;
    if (dft_params(cx, n, in, &axis, &onesided, &inverse)) return cx->status;
    const kn_type *x = &in[0]->type;
    int r = x->rank;
    int64_t outer = 1, inner = 1, L = x->dims[axis], comp = x->dims[r - 1];
    for (int d = 0; d < axis; d++) outer *= x->dims[d];
    for (int d = axis + 1; d < r - 1; d++) inner *= x->dims[d];
    int64_t N = kn_opt_in(n, in, 1) ? kn_load_i64(in[1]->data, in[1]->type.dtype, 0) : L;
    int64_t K = onesided ? N / 2 + 1 : N, M = N < L ? N : L;
    double *X = kn_tensor_f64s(kn_exec_arena(ex), in[0]);
    double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)N : 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            for (int64_t k = 0; k < K; k++) {
                double re = 0, im = 0;
                for (int64_t m = 0; m < M; m++) {
                    const double *e = X + ((o * L + m) * inner + i) * comp;
                    cadd_rot(&re, &im, e[0], comp == 2 ? e[1] : 0, k, m, N, sign);
                }
                size_t at = (size_t)(((o * K + k) * inner + i) * 2);
                kn_store_f64(out[0]->data, out[0]->type.dtype, at, re * scale);
                kn_store_f64(out[0]->data, out[0]->type.dtype, at + 1, im * scale);
            }
    return KN_OK;
}

/* ---- STFT ---- */

typedef struct stft_shape {
    int64_t batch, len, comp; /* signal [batch, len, comp] */
    int64_t step, flen;       /* frame_step, frame_length; -1 unknown */
    int64_t frames, bins;     /* -1 unknown */
} stft_shape;

static kn_status stft_shape_get(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, stft_shape *s) {
    int onesided = (int)kn_attr_int(cx, n, "onesided", 1);
    if (kn_failed(cx)) return cx->status;
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type;
    if (x->rank >= 0 && x->rank != 3)
        return kn_diag(cx, n, KN_EINVAL, "signal has rank %d, expected 3", x->rank);
    s->batch = x->rank == 3 ? x->dims[0] : -1;
    s->len = x->rank == 3 ? x->dims[1] : -1;
    s->comp = x->rank == 3 ? x->dims[2] : -1;
    if (s->comp >= 0 && s->comp != 1 && s->comp != 2)
        return kn_diag(cx, n, KN_EINVAL, "signal's last dimension is %lld, expected 1 or 2",
                       (long long)s->comp);
    int known = 0;
    if (scalar_i64(cx, n, in[1], 1, &known, &s->step)) return cx->status;
    if (!known)
        s->step = -1;
    else if (s->step <= 0)
        return kn_diag(cx, n, KN_EINVAL, "frame_step %lld must be positive", (long long)s->step);
    kn_tensor *win = kn_opt_in(n, in, 2), *fl = kn_opt_in(n, in, 3);
    s->flen = -1;
    if (win) {
        if (kn_check_dtype(cx, n, win, 2, KN_DT_FLOAT)) return cx->status;
        if (win->type.rank >= 0 && win->type.rank != 1)
            return kn_diag(cx, n, KN_EINVAL, "window has rank %d, expected 1", win->type.rank);
        if (win->type.rank == 1) s->flen = win->type.dims[0];
    }
    if (fl) {
        int64_t v;
        if (scalar_i64(cx, n, fl, 3, &known, &v)) return cx->status;
        if (known && s->flen >= 0 && v != s->flen)
            return kn_diag(cx, n, KN_EINVAL, "frame_length %lld differs from window length %lld",
                           (long long)v, (long long)s->flen);
        if (known) s->flen = v;
    }
    if (!win && !fl)
        return kn_diag(cx, n, KN_EINVAL, "either window or frame_length must be given");
    if (s->flen == 0 || (s->flen > 0 && s->len >= 0 && s->flen > s->len))
        return kn_diag(cx, n, KN_EINVAL, "frame_length %lld is not in [1, signal length %lld]",
                       (long long)s->flen, (long long)s->len);
    s->frames = s->len >= 0 && s->flen > 0 && s->step > 0 ? (s->len - s->flen) / s->step + 1 : -1;
    s->bins = s->flen < 0 ? -1 : onesided ? s->flen / 2 + 1 : s->flen;
    return KN_OK;
}

static kn_status infer_stft(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    stft_shape s;
    if (stft_shape_get(cx, n, in, &s)) return cx->status;
    int64_t dims[4] = {s.batch, s.frames, s.bins, 2};
    out[0] = kn_type_make(in[0]->type.dtype, 4, dims);
    if (in[0]->type.rank == 3) out[0].sym[0] = in[0]->type.sym[0];
    return KN_OK;
}

static kn_status eval_stft(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    stft_shape s;
    if (stft_shape_get(cx, n, in, &s)) return cx->status;
    kn_arena *a = kn_exec_arena(ex);
    double *X = kn_tensor_f64s(a, in[0]);
    double *w = kn_opt_in(n, in, 2) ? kn_tensor_f64s(a, in[2]) : NULL;
    for (int64_t b = 0; b < s.batch; b++)
        for (int64_t f = 0; f < s.frames; f++)
            for (int64_t k = 0; k < s.bins; k++) {
                double re = 0, im = 0;
                for (int64_t m = 0; m < s.flen; m++) {
                    const double *e = X + (b * s.len + f * s.step + m) * s.comp;
                    double wm = w ? w[m] : 1;
                    cadd_rot(&re, &im, e[0] * wm, s.comp == 2 ? e[1] * wm : 0, k, m, s.flen, -1);
                }
                size_t at = (size_t)(((b * s.frames + f) * s.bins + k) * 2);
                kn_store_f64(out[0]->data, out[0]->type.dtype, at, re);
                kn_store_f64(out[0]->data, out[0]->type.dtype, at + 1, im);
            }
    return KN_OK;
}

/* ---- windows ---- */

typedef enum window_kind { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN } window_kind;

static kn_status infer_window(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_dtype dt = KN_UNDEF;
    if (output_datatype(cx, n, &dt)) return cx->status;
    int known = 0;
    int64_t size = 0;
    if (scalar_i64(cx, n, in[0], 0, &known, &size)) return cx->status;
    if (known && size < 0)
        return kn_diag(cx, n, KN_EINVAL, "window size %lld is negative", (long long)size);
    int64_t dims[1] = {known ? size : -1};
    out[0] = kn_type_make(dt, 1, dims);
    return KN_OK;
}

static kn_status eval_window(kn_exec *ex, const kn_node *n, window_kind kind, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    int periodic = (int)kn_attr_int(cx, n, "periodic", 1);
    if (kn_failed(cx)) return cx->status;
    int64_t N = out[0]->type.dims[0];
    double den = (double)(periodic ? N : N - 1);
    for (int64_t i = 0; i < N; i++) {
        double x = den > 0 ? 2 * PI * (double)i / den : 0, v;
        switch (kind) {
        case WIN_HANN: v = 0.5 - 0.5 * cos(x); break;
        case WIN_HAMMING: v = 25.0 / 46 - (1 - 25.0 / 46) * cos(x); break;
        default: v = 0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x); break;
        }
        kn_store_f64(out[0]->data, out[0]->type.dtype, (size_t)i, v);
    }
    return KN_OK;
}

static kn_status eval_hann(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    (void)in;
    return eval_window(ex, n, WIN_HANN, out);
}
static kn_status eval_hamming(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    (void)in;
    return eval_window(ex, n, WIN_HAMMING, out);
}
static kn_status eval_blackman(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    (void)in;
    return eval_window(ex, n, WIN_BLACKMAN, out);
}

/* ---- MelWeightMatrix ---- */

static kn_status infer_mel(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_dtype dt = KN_UNDEF;
    if (output_datatype(cx, n, &dt)) return cx->status;
    int known_m, known_d, known_r;
    int64_t mels = -1, dftlen = -1, rate = -1;
    if (scalar_i64(cx, n, in[0], 0, &known_m, &mels) ||
        scalar_i64(cx, n, in[1], 1, &known_d, &dftlen) ||
        scalar_i64(cx, n, in[2], 2, &known_r, &rate) ||
        kn_check_dtype(cx, n, in[3], 3, KN_DT_FLOAT) ||
        kn_check_dtype(cx, n, in[4], 4, KN_DT_FLOAT))
        return cx->status;
    if ((known_m && mels <= 0) || (known_d && dftlen <= 0) || (known_r && rate <= 0))
        return kn_diag(cx, n, KN_EINVAL,
                       "num_mel_bins, dft_length and sample_rate must be positive");
    int64_t dims[2] = {known_d ? dftlen / 2 + 1 : -1, known_m ? mels : -1};
    out[0] = kn_type_make(dt, 2, dims);
    return KN_OK;
}

/* Triangular filters between mel-spaced points mapped to DFT bins, peak 1.0, as in
 * the ONNX MelWeightMatrix definition: num_mel_bins + 2 points spaced by
 * (mel(high) - mel(low)) / (num_mel_bins + 2), bin = floor((dft_length + 1) * f / rate). */
static kn_status eval_mel(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    int64_t mels = kn_load_i64(in[0]->data, in[0]->type.dtype, 0);
    int64_t dftlen = kn_load_i64(in[1]->data, in[1]->type.dtype, 0);
    int64_t rate = kn_load_i64(in[2]->data, in[2]->type.dtype, 0);
    double lo = kn_load_f64(in[3]->data, in[3]->type.dtype, 0);
    double hi = kn_load_f64(in[4]->data, in[4]->type.dtype, 0);
    int64_t nbins = dftlen / 2 + 1;
    int64_t *pt = kn_arena_array(kn_exec_arena(ex), (size_t)(mels + 2), sizeof *pt);
    double *w = kn_arena_array(kn_exec_arena(ex), (size_t)(nbins * mels), sizeof *w);
    if (!pt || !w) return kn_diag(cx, n, KN_ELIMIT, "mel weight matrix too large");
    double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700);
    double step = (mhi - mlo) / (double)(mels + 2);
    for (int64_t i = 0; i < mels + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);
        pt[i] = (int64_t)floor((double)(dftlen + 1) * hz / (double)rate);
        if (pt[i] < 0 || pt[i] >= nbins + 1)
            return kn_diag(cx, n, KN_EINVAL, "mel edge frequencies map outside the DFT bins");
    }
    for (int64_t i = 0; i < mels; i++) {
        int64_t l = pt[i], c = pt[i + 1], r = pt[i + 2];
        if (c == l) {
            if (c < nbins) w[c * mels + i] = 1;
        } else {
            for (int64_t j = l; j <= c && j < nbins; j++)
                w[j * mels + i] = (double)(j - l) / (double)(c - l);
        }
        for (int64_t j = c; j < r && j < nbins; j++)
            w[j * mels + i] = (double)(r - j) / (double)(r - c);
    }
    kn_tensor_store_f64s(out[0], w);
    return KN_OK;
}

const kn_opimpl kn_ops_signal[] = {
    {KN_OP_DFT, infer_dft, eval_dft},
    {KN_OP_STFT, infer_stft, eval_stft},
    {KN_OP_HANNWINDOW, infer_window, eval_hann},
    {KN_OP_HAMMINGWINDOW, infer_window, eval_hamming},
    {KN_OP_BLACKMANWINDOW, infer_window, eval_blackman},
    {KN_OP_MELWEIGHTMATRIX, infer_mel, eval_mel},
    {KN_OP_COUNT, 0, 0},
};
