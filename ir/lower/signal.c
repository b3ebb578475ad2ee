/* Lowerings of group 'signal': DFT, STFT, the Hann/Hamming/Blackman windows and
 * MelWeightMatrix.
 *
 * Transforms are the interpreter's O(n^2) sums (ir/ops/signal.c): per output bin k
 * a loop over m accumulating x * e^(i*sign*2*pi*((k*m) mod N)/N), the angle in f64
 * (the reduction mod N keeps it exact), the sums in the output's compute dtype.
 * Shape-carrying scalars (dft_length, frame_step, frame_length, window size,
 * num_mel_bins, dft_length of MelWeightMatrix) are read from constants or the
 * output shape; other scalars (sample rate, edge frequencies) load at run time. */
#include "ir/kir.h"

#include <math.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

static kn_kx *I(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}
static kn_kx *V(kn_lower *L, int v) {
    return kx_var(L, v);
}
static kn_kx *F(kn_lower *L, double v) {
    return kx_const(L, KN_F64, v);
}

/* Constant scalar input i as an integer; reports and returns -1 when not constant. */
static int64_t const_i64(kn_lower *L, const kn_node *n, int i, const char *what) {
    const kn_tensor *t = kl_const(L, n, i);
    if (!t || kn_tensor_numel(t) != 1) {
        kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED, "needs a constant '%s' input (%s)", what,
                kn_hint_text(kl_ctx(L), KN_HINT_BIND));
        return -1;
    }
    return kn_load_i64(t->data, t->type.dtype, 0);
}

/* Inside a loop over m (var vm) for bin k (var vk): re += xr*cos - xi*sin,
 * im += xr*sin + xi*cos with th = sign*2*pi*((k*m) mod N)/N. xi may be NULL. */
static void rot_acc(kn_lower *L, kn_dtype t, int re, int im, kn_kx *xr, kn_kx *xi, int vk, int vm,
                    int64_t N, double sign) {
    kn_kx *km = kx_bin(L, KX_MOD, kx_mul(L, V(L, vk), V(L, vm)), I(L, N));
    int th = kl_decl(
        L, KN_F64,
        kx_bin(L, KX_DIV, kx_mul(L, F(L, sign * 2 * PI), kx_cast(L, KN_F64, km)), F(L, (double)N)));
    int c = kl_decl(L, t, kx_un(L, KX_COS, V(L, th))),
        s = kl_decl(L, t, kx_un(L, KX_SIN, V(L, th)));
    int vr = kl_decl(L, t, xr);
    if (xi) {
        int vi = kl_decl(L, t, xi);
        kl_set(L, re,
               kx_add(L, V(L, re),
                      kx_sub(L, kx_mul(L, V(L, vr), V(L, c)), kx_mul(L, V(L, vi), V(L, s)))));
        kl_set(L, im,
               kx_add(L, V(L, im),
                      kx_add(L, kx_mul(L, V(L, vr), V(L, s)), kx_mul(L, V(L, vi), V(L, c)))));
    } else {
        kl_set(L, re, kx_fma(L, V(L, vr), V(L, c), V(L, re)));
        kl_set(L, im, kx_fma(L, V(L, vr), V(L, s), V(L, im)));
    }
}

static kn_status lower_dft(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    int64_t ax = n->opset >= 20 ? -2 : kn_attr_int(cx, n, "axis", 1); /* see ir/ops/signal.c */
    if (n->opset >= 20 && n->nin > 2 && in[2] && (ax = const_i64(L, n, 2, "axis")) == -1 &&
        kn_failed(cx))
        return cx->status;
    int onesided = (int)kn_attr_int(cx, n, "onesided", 0);
    int inverse = (int)kn_attr_int(cx, n, "inverse", 0);
    if (kn_failed(cx)) return cx->status;
    kn_kbuf *X = in[0], *Y = out[0];
    int r = X->rank, axis;
    if (kn_axis(cx, n, ax, r, 0, &axis)) return cx->status;
    int64_t outer = kn_prod(X->dims, 0, axis), inner = kn_prod(X->dims, axis + 1, r - 1);
    int64_t Lx = X->dims[axis], comp = X->dims[r - 1], N = Lx;
    if (in[1] && (N = const_i64(L, n, 1, "dft_length")) < 0) return cx->status;
    if (N <= 0) return kn_diag(cx, n, KN_EINVAL, "dft_length must be positive");
    int64_t K = onesided ? N / 2 + 1 : N, M = N < Lx ? N : Lx;
    kn_dtype t = kx_compute_dtype(Y->dtype);
    double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)N : 1;
    int o = kl_for(L, outer), i = kl_for(L, inner), k = kl_for(L, K);
    int re = kl_decl(L, t, kx_const(L, t, 0)), im = kl_decl(L, t, kx_const(L, t, 0));
    int m = kl_for(L, M);
    kn_kx *e =
        kx_mul(L,
               kx_add(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, o), I(L, Lx)), V(L, m)), I(L, inner)),
                      V(L, i)),
               I(L, comp));
    rot_acc(L, t, re, im, kx_load(L, X, e), comp == 2 ? kx_load(L, X, kx_add(L, e, I(L, 1))) : NULL,
            k, m, N, sign);
    kl_end(L);
    kn_kx *at = kx_mul(
        L,
        kx_add(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, o), I(L, K)), V(L, k)), I(L, inner)), V(L, i)),
        I(L, 2));
    kl_store(L, Y, at, kx_mul(L, V(L, re), kx_const(L, t, scale)));
    kl_store(L, Y, kx_add(L, at, I(L, 1)), kx_mul(L, V(L, im), kx_const(L, t, scale)));
    kl_end_n(L, 3);
    return KN_OK;
}

static kn_status lower_stft(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *X = in[0], *win = in[2], *Y = out[0];
    int64_t step = const_i64(L, n, 1, "frame_step");
    if (step < 0) return cx->status;
    int64_t flen = win ? win->dims[0] : const_i64(L, n, 3, "frame_length");
    if (flen < 0) return cx->status;
    int64_t B = Y->dims[0], frames = Y->dims[1], bins = Y->dims[2];
    int64_t len = X->dims[1], comp = X->dims[2];
    kn_dtype t = kx_compute_dtype(Y->dtype);
    int b = kl_for(L, B), f = kl_for(L, frames), k = kl_for(L, bins);
    int re = kl_decl(L, t, kx_const(L, t, 0)), im = kl_decl(L, t, kx_const(L, t, 0));
    int m = kl_for(L, flen);
    kn_kx *e =
        kx_mul(L,
               kx_add(L, kx_add(L, kx_mul(L, V(L, b), I(L, len)), kx_mul(L, V(L, f), I(L, step))),
                      V(L, m)),
               I(L, comp));
    kn_kx *xr = kx_load(L, X, e), *xi = comp == 2 ? kx_load(L, X, kx_add(L, e, I(L, 1))) : NULL;
    if (win) {
        int wm = kl_decl(L, t, kx_load(L, win, V(L, m)));
        xr = kx_mul(L, xr, V(L, wm));
        if (xi) xi = kx_mul(L, xi, V(L, wm));
    }
    rot_acc(L, t, re, im, xr, xi, k, m, flen, -1);
    kl_end(L);
    kn_kx *at = kx_mul(
        L,
        kx_add(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, frames)), V(L, f)), I(L, bins)),
               V(L, k)),
        I(L, 2));
    kl_store(L, Y, at, V(L, re));
    kl_store(L, Y, kx_add(L, at, I(L, 1)), V(L, im));
    kl_end_n(L, 3);
    return KN_OK;
}

static kn_status lower_window(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    (void)in;
    kn_ctx *cx = kl_ctx(L);
    int periodic = (int)kn_attr_int(cx, n, "periodic", 1);
    if (kn_failed(cx)) return cx->status;
    kn_kbuf *Y = out[0];
    int64_t N = Y->dims[0];
    double den = (double)(periodic ? N : N - 1);
    int i = kl_for(L, N);
    int x = kl_decl(
        L, KN_F64,
        den > 0 ? kx_bin(L, KX_DIV, kx_mul(L, F(L, 2 * PI), kx_cast(L, KN_F64, V(L, i))), F(L, den))
                : F(L, 0));
    kn_kx *cs = kx_un(L, KX_COS, V(L, x)), *v;
    if (n->op == KN_OP_HANNWINDOW)
        v = kx_sub(L, F(L, 0.5), kx_mul(L, F(L, 0.5), cs));
    else if (n->op == KN_OP_HAMMINGWINDOW)
        v = kx_sub(L, F(L, 25.0 / 46), kx_mul(L, F(L, 1 - 25.0 / 46), cs));
    else
        v = kx_add(L, kx_sub(L, F(L, 0.42), kx_mul(L, F(L, 0.5), cs)),
                   kx_mul(L, F(L, 0.08), kx_un(L, KX_COS, kx_mul(L, F(L, 2), V(L, x)))));
    if (!kn_dtype_get(Y->dtype)->is_float) v = kx_un(L, KX_TRUNC, v);
    kl_store(L, Y, V(L, i), v);
    kl_end(L);
    return KN_OK;
}

/* Triangular mel filters (see eval_mel in ir/ops/signal.c). The mel points go to a
 * scratch table, clamped to [0, nbins] so the fills stay in bounds. */
static kn_status lower_mel(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_kbuf *Y = out[0];
    int64_t nbins = Y->dims[0], mels = Y->dims[1];
    int64_t dftlen = const_i64(L, n, 1, "dft_length");
    if (dftlen < 0) return kl_ctx(L)->status;
    kn_kx *rate = kx_cast(L, KN_F64, kx_load(L, in[2], I(L, 0)));
    kn_kx *lo = kx_cast(L, KN_F64, kx_load(L, in[3], I(L, 0)));
    kn_kx *hi = kx_cast(L, KN_F64, kx_load(L, in[4], I(L, 0)));
    /* mel(f) = 2595 * log10(1 + f / 700) */
    kn_kx *ln10 = F(L, log(10.0));
    int mlo = kl_decl(
        L, KN_F64,
        kx_mul(L, F(L, 2595),
               kx_bin(L, KX_DIV,
                      kx_un(L, KX_LOG, kx_add(L, F(L, 1), kx_bin(L, KX_DIV, lo, F(L, 700)))),
                      ln10)));
    int mhi = kl_decl(
        L, KN_F64,
        kx_mul(L, F(L, 2595),
               kx_bin(L, KX_DIV,
                      kx_un(L, KX_LOG, kx_add(L, F(L, 1), kx_bin(L, KX_DIV, hi, F(L, 700)))),
                      ln10)));
    int step = kl_decl(
        L, KN_F64, kx_bin(L, KX_DIV, kx_sub(L, V(L, mhi), V(L, mlo)), F(L, (double)(mels + 2))));
    int vr = kl_decl(L, KN_F64, rate);
    kn_kbuf *pt = kl_scratch(L, KN_I64, mels + 2);
    int i = kl_for(L, mels + 2);
    kn_kx *mel =
        kx_bin(L, KX_DIV, kx_add(L, kx_mul(L, kx_cast(L, KN_F64, V(L, i)), V(L, step)), V(L, mlo)),
               F(L, 2595));
    kn_kx *hz = kx_mul(L, F(L, 700), kx_sub(L, kx_bin(L, KX_POW, F(L, 10), mel), F(L, 1)));
    kn_kx *bin =
        kx_un(L, KX_FLOOR, kx_bin(L, KX_DIV, kx_mul(L, F(L, (double)(dftlen + 1)), hz), V(L, vr)));
    kl_store(L, pt, V(L, i),
             kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, kx_cast(L, KN_I64, bin), I(L, 0)), I(L, nbins)));
    kl_end(L);
    kn_dtype t = kx_compute_dtype(Y->dtype);
    int e = kl_for(L, Y->numel);
    kl_store(L, Y, V(L, e), kx_const(L, t, 0));
    kl_end(L);
    i = kl_for(L, mels);
    int l = kl_decl(L, KN_I64, kx_load(L, pt, V(L, i)));
    int c = kl_decl(L, KN_I64, kx_load(L, pt, kx_add(L, V(L, i), I(L, 1))));
    int r = kl_decl(L, KN_I64, kx_load(L, pt, kx_add(L, V(L, i), I(L, 2))));
    kl_if(L, kx_bin(L, KX_EQ, V(L, c), V(L, l)));
    kl_if(L, kx_bin(L, KX_LT, V(L, c), I(L, nbins)));
    kl_store(L, Y, kx_add(L, kx_mul(L, V(L, c), I(L, mels)), V(L, i)), kx_const(L, t, 1));
    kl_end(L);
    kl_else(L);
    /* j in [l, min(c, nbins - 1)] */
    int jn = kl_decl(
        L, KN_I64,
        kx_sub(L, kx_add(L, kx_bin(L, KX_MIN, V(L, c), I(L, nbins - 1)), I(L, 1)), V(L, l)));
    int j = kl_for_x(L, V(L, jn));
    kl_store(L, Y, kx_add(L, kx_mul(L, kx_add(L, V(L, l), V(L, j)), I(L, mels)), V(L, i)),
             kx_bin(L, KX_DIV, kx_cast(L, KN_F64, V(L, j)),
                    kx_cast(L, KN_F64, kx_sub(L, V(L, c), V(L, l)))));
    kl_end(L);
    kl_end(L); /* if */
    /* j in [c, min(r, nbins)) */
    jn = kl_decl(L, KN_I64, kx_sub(L, kx_bin(L, KX_MIN, V(L, r), I(L, nbins)), V(L, c)));
    j = kl_for_x(L, V(L, jn));
    kl_store(L, Y, kx_add(L, kx_mul(L, kx_add(L, V(L, c), V(L, j)), I(L, mels)), V(L, i)),
             kx_bin(L, KX_DIV, kx_cast(L, KN_F64, kx_sub(L, kx_sub(L, V(L, r), V(L, c)), V(L, j))),
                    kx_cast(L, KN_F64, kx_sub(L, V(L, r), V(L, c)))));
    kl_end(L);
    kl_end(L); /* i */
    return KN_OK;
}

const kn_oplower kn_lower_signal[] = {
    {KN_OP_DFT, lower_dft},
    {KN_OP_STFT, lower_stft},
    {KN_OP_HANNWINDOW, lower_window},
    {KN_OP_HAMMINGWINDOW, lower_window},
    {KN_OP_BLACKMANWINDOW, lower_window},
    {KN_OP_MELWEIGHTMATRIX, lower_mel},
    {KN_OP_COUNT, 0},
};
