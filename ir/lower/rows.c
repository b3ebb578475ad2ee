/* Softmax and LayerNormalization over the last axis as vector row kernels.
 *
 * The general lowerings (ir/lower/nn.c) walk any axis with scalar loops: a max pass,
 * a sum pass and a write pass that computes exp twice (Softmax); mean, variance and
 * write passes (LayerNormalization). When the reduced axis is the last one (contiguous
 * rows of len elements, as in every transformer), the target has vectors of W > 1 f32
 * lanes (a CPU, or an OpenCL device with vectors inside a work-item) and len >= W,
 * these lowerings take over:
 *
 *   Softmax, per row:   vector max over the row (W lanes, then across lanes, then the
 *                       len % W tail); e = exp(x - max) stored to y while summed in a
 *                       vector; y *= 1 / sum. The exp is KX_EXP on W lanes, which the
 *                       vmath pass turns into its polynomial (passes/vmath.c).
 *   LayerNormalization: one pass summing d = x - x[0] and d * d in two vectors (the
 *                       shift by the row's first element keeps the one-pass variance
 *                       from cancelling when the mean is large against the spread):
 *                       mean = x[0] + s1 / len, var = max(s2 / len - (s1 / len)^2, 0);
 *                       then y = (x - mean) * (1 / sqrt(var + eps)) * scale + bias with
 *                       vector loads of the scale and bias rows; Mean and InvStdDev
 *                       outputs are written when present.
 *
 * f32 only; anything else (other axes, dtypes, a scale that is not one row of len,
 * scalar targets and OpenCL devices without vectors) keeps the general lowering. */
#include "ir/kir.h"
#include "ir/ops.h"
#include "ir/ops/nn_norm_attrs.h"

#include <math.h>

static kn_kx *var(kn_lower *L, int v) {
    return kx_var(L, v);
}

static kn_kx *f(kn_lower *L, double v) {
    return kx_const(L, KN_F32, v);
}

/* The lanes of vector local v folded with op into a scalar. */
static kn_kx *across(kn_lower *L, int v, int lanes, kn_kx_op op) {
    kn_kx *r = kx_lane(L, v, 0);
    for (int i = 1; i < lanes; i++) r = kx_bin(L, op, r, kx_lane(L, v, i));
    return r;
}

/* Vector width for rows of len f32 elements, or 0 when the general lowering stays.
 * OpenCL devices with vectors (the opencl target's vector_bits) take the row kernels
 * too, one row a work-item: their compilers do not vectorize across work-items whose
 * body loops over the row (PoCL), so the general lowering's rows ran as scalar code. */
static int row_lanes(kn_lower *L, int64_t len) {
    int w = kl_lanes(L, KN_F32);
    return w > 1 && len >= w ? w : 0;
}

/* Rows a step of the Softmax row kernel (kn_sched.smrows): what a rebuilding pass asks
 * (passes/rows.c, which chooses it), else its default (kn_smrows_default). A row's max and
 * sum end in a chain of W - 1 dependent scalar steps across the lanes (kept in order: the
 * sum's rounding), which the out-of-order core cannot overlap with the next row's work
 * from one row a step; with four rows a step the four chains run side by side. BERT's
 * 4 x 128 x 128 Softmax on the AMD EPYC VM (Zen 4): 36 us at one row a step, 30 at two, 27
 * at four and at eight. The OpenCL row kernels (one row a work-item) keep one. */
static int softmax_rows_a_step(kn_lower *L, int64_t outer) {
    const kn_sched *want = kl_wanted_sched(L);
    if (want && want->smrows >= 1 && want->smrows <= KN_SOFTMAX_MAX_ROWS &&
        outer % want->smrows == 0)
        return want->smrows;
    return kn_smrows_default(kl_register_tiles(L), outer);
}

bool kl_softmax_rows(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *y = out[0];
    int64_t outer, len, inner;
    if (n->op != KN_OP_SOFTMAX || x->dtype != KN_F32 || y->dtype != KN_F32 ||
        kn_softmax_view(kl_ctx(L), n, x->rank, x->dims, &outer, &len, &inner) || inner != 1)
        return false;
    int W = row_lanes(L, len);
    if (!W) return false;
    int R = softmax_rows_a_step(L, outer);
    kn_sched *rec = kl_sched_record(L);
    if (rec) rec->smrows = R;
    int64_t nv = len / W, tail = len % W;
    int vo = kl_for(L, outer / R);
    int base[KN_SOFTMAX_MAX_ROWS], vm[KN_SOFTMAX_MAX_ROWS], mx[KN_SOFTMAX_MAX_ROWS],
        vs[KN_SOFTMAX_MAX_ROWS];
    int sum[KN_SOFTMAX_MAX_ROWS], rs[KN_SOFTMAX_MAX_ROWS];
    for (int r = 0; r < R; r++)
        base[r] = kl_decl(L, KN_I64,
                          kx_mul(L, kx_add(L, kx_mul(L, var(L, vo), kx_int(L, R)), kx_int(L, r)),
                                 kx_int(L, len)));
#define AT(r, j, s) kx_add(L, var(L, base[r]), kx_mul(L, var(L, j), kx_int(L, s)))
#define TAIL(r, t) kx_add(L, AT(r, t, 1), kx_int(L, nv *W))
    /* max */
    for (int r = 0; r < R; r++) vm[r] = kl_decl_vec(L, KN_F32, W, f(L, -INFINITY));
    int j = kl_for(L, nv);
    for (int r = 0; r < R; r++)
        kl_set(L, vm[r], kx_bin(L, KX_MAX, var(L, vm[r]), kx_vload(L, x, AT(r, j, W), W)));
    kl_end(L);
    for (int r = 0; r < R; r++) mx[r] = kl_decl(L, KN_F32, across(L, vm[r], W, KX_MAX));
    int t;
    for (int r = 0; r < R && tail; r++) {
        t = kl_for(L, tail);
        kl_set(L, mx[r], kx_bin(L, KX_MAX, var(L, mx[r]), kx_load(L, x, TAIL(r, t))));
        kl_end(L);
    }
    /* e = exp(x - max) into y, summed */
    for (int r = 0; r < R; r++) vs[r] = kl_decl_vec(L, KN_F32, W, f(L, 0));
    j = kl_for(L, nv);
    for (int r = 0; r < R; r++) {
        int e =
            kl_decl_vec(L, KN_F32, W,
                        kx_un(L, KX_EXP, kx_sub(L, kx_vload(L, x, AT(r, j, W), W), var(L, mx[r]))));
        kl_store(L, y, AT(r, j, W), var(L, e));
        kl_set(L, vs[r], kx_add(L, var(L, vs[r]), var(L, e)));
    }
    kl_end(L);
    for (int r = 0; r < R; r++) sum[r] = kl_decl(L, KN_F32, across(L, vs[r], W, KX_ADD));
    for (int r = 0; r < R && tail; r++) {
        t = kl_for(L, tail);
        int es = kl_decl(L, KN_F32,
                         kx_un(L, KX_EXP, kx_sub(L, kx_load(L, x, TAIL(r, t)), var(L, mx[r]))));
        kl_store(L, y, TAIL(r, t), var(L, es));
        kl_set(L, sum[r], kx_add(L, var(L, sum[r]), var(L, es)));
        kl_end(L);
    }
    /* y *= 1 / sum */
    for (int r = 0; r < R; r++)
        rs[r] = kl_decl(L, KN_F32, kx_bin(L, KX_DIV, f(L, 1), var(L, sum[r])));
    j = kl_for(L, nv);
    for (int r = 0; r < R; r++)
        kl_store(L, y, AT(r, j, W), kx_mul(L, kx_vload(L, y, AT(r, j, W), W), var(L, rs[r])));
    kl_end(L);
    for (int r = 0; r < R && tail; r++) {
        t = kl_for(L, tail);
        kl_store(L, y, TAIL(r, t), kx_mul(L, kx_load(L, y, TAIL(r, t)), var(L, rs[r])));
        kl_end(L);
    }
    kl_end(L);
#undef TAIL
#undef AT
    return true;
}

bool kl_layernorm_rows(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *w = in[1], *b = n->nin > 2 ? in[2] : NULL, *y = out[0];
    if (n->op != KN_OP_LAYERNORMALIZATION || x->dtype != KN_F32 || y->dtype != KN_F32 ||
        x->rank < 1 || !w || w->dtype != KN_F32 || (b && b->dtype != KN_F32))
        return false;
    int ax;
    kn_ctx scratch;
    kn_ctx_init(&scratch, cx->file);
    double eps = kn_attr_float(&scratch, n, "epsilon", 1e-5f);
    if (kn_axis(&scratch, n, kn_attr_int(&scratch, n, "axis", -1), x->rank, 0, &ax) ||
        kn_failed(&scratch) || ax != x->rank - 1)
        return false;
    int64_t len = x->dims[x->rank - 1], outer = x->numel / (len ? len : 1);
    if (w->numel != len || (b && b->numel != len)) return false;
    int W = row_lanes(L, len);
    if (!W) return false;
    int64_t nv = len / W, tail = len % W;
    int vo = kl_for(L, outer);
    int base = kl_decl(L, KN_I64, kx_mul(L, var(L, vo), kx_int(L, len)));
#define AT(j, s) kx_add(L, var(L, base), kx_mul(L, var(L, j), kx_int(L, s)))
#define TAIL(t) kx_add(L, AT(t, 1), kx_int(L, nv *W))
    int k0 = kl_decl(L, KN_F32, kx_load(L, x, var(L, base)));
    int v1 = kl_decl_vec(L, KN_F32, W, f(L, 0)), v2 = kl_decl_vec(L, KN_F32, W, f(L, 0));
    int j = kl_for(L, nv);
    int d = kl_decl_vec(L, KN_F32, W, kx_sub(L, kx_vload(L, x, AT(j, W), W), var(L, k0)));
    kl_set(L, v1, kx_add(L, var(L, v1), var(L, d)));
    kl_set(L, v2, kx_fma(L, var(L, d), var(L, d), var(L, v2)));
    kl_end(L);
    int s1 = kl_decl(L, KN_F32, across(L, v1, W, KX_ADD));
    int s2 = kl_decl(L, KN_F32, across(L, v2, W, KX_ADD));
    int t;
    if (tail) {
        t = kl_for(L, tail);
        int ds = kl_decl(L, KN_F32, kx_sub(L, kx_load(L, x, TAIL(t)), var(L, k0)));
        kl_set(L, s1, kx_add(L, var(L, s1), var(L, ds)));
        kl_set(L, s2, kx_fma(L, var(L, ds), var(L, ds), var(L, s2)));
        kl_end(L);
    }
    int m1 = kl_decl(L, KN_F32, kx_mul(L, var(L, s1), f(L, 1.0 / (double)len)));
    kn_kx *vr = kx_sub(L, kx_mul(L, var(L, s2), f(L, 1.0 / (double)len)),
                       kx_mul(L, var(L, m1), var(L, m1)));
    int vq = kl_decl(L, KN_F32, kx_bin(L, KX_MAX, vr, f(L, 0)));
    int mean = kl_decl(L, KN_F32, kx_add(L, var(L, k0), var(L, m1)));
    int rstd = kl_decl(
        L, KN_F32, kx_bin(L, KX_DIV, f(L, 1), kx_un(L, KX_SQRT, kx_add(L, var(L, vq), f(L, eps)))));
    j = kl_for(L, nv);
    kn_kx *wi = kx_mul(L, var(L, j), kx_int(L, W));
    kn_kx *yv =
        kx_mul(L, kx_mul(L, kx_sub(L, kx_vload(L, x, AT(j, W), W), var(L, mean)), var(L, rstd)),
               kx_vload(L, w, wi, W));
    if (b) yv = kx_add(L, yv, kx_vload(L, b, kx_mul(L, var(L, j), kx_int(L, W)), W));
    kl_store(L, y, AT(j, W), yv);
    kl_end(L);
    if (tail) {
        t = kl_for(L, tail);
        kn_kx *ci = kx_add(L, var(L, t), kx_int(L, nv * W));
        kn_kx *ys =
            kx_mul(L, kx_mul(L, kx_sub(L, kx_load(L, x, TAIL(t)), var(L, mean)), var(L, rstd)),
                   kx_load(L, w, ci));
        if (b) ys = kx_add(L, ys, kx_load(L, b, kx_add(L, var(L, t), kx_int(L, nv * W))));
        kl_store(L, y, TAIL(t), ys);
        kl_end(L);
    }
    if (n->nout > 1 && out[1]) kl_store(L, out[1], var(L, vo), var(L, mean));
    if (n->nout > 2 && out[2]) kl_store(L, out[2], var(L, vo), var(L, rstd));
    kl_end(L);
#undef TAIL
#undef AT
    return true;
}
