/* Lowerings of group 'nn' to the kernel IR (see ir/kir.h): convolutions, pools, matrix
 * products, Einsum, Det, the normalizations and the softmax family. Semantics mirror the
 * interpreter (ir/ops/nn.c, ir/ops/nn_norm.c).
 *
 * Conv, ConvTranspose and every pool (the global ones are pools whose window is the
 * whole input) share one window walk (win_open/win_close): for one output position it
 * opens a loop per spatial axis over the kernel and yields the input position and an
 * in-bounds condition, which guards the reads with kl_if (padding, ceil_mode overhang,
 * ConvTranspose's stride holes). All are gathers over output positions, so each output
 * element is written once. The normalizations share a reduction view (rview): loops
 * over the kept axes outside, one nest over the reduced axes per pass (sum, squared
 * deviations, normalize). Floats accumulate in the output's compute dtype, integers
 * (MatMul, Gemm, Einsum) in uint64 that wraps like the interpreter's. */
#include "ir/kir.h"
#include "ir/ops/nn_attrs.h"
#include "ir/ops/nn_norm_attrs.h"
#include "ir/epilogue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- expression shorthands (index arithmetic is i64) ---- */

/* base + a * s */
static kn_kx *madd(kn_lower *L, kn_kx *base, kn_kx *a, int64_t s) {
    return kx_add(L, base, kx_bin(L, KX_MUL, a, kx_int(L, s)));
}

static kn_kx *var(kn_lower *L, int v) {
    return kx_var(L, v);
}

/* c && d, either may be NULL (true). */
static kn_kx *both(kn_lower *L, kn_kx *c, kn_kx *d) {
    return !c ? d : !d ? c : kx_bin(L, KX_LAND, c, d);
}

static void if_open(kn_lower *L, kn_kx *cond) {
    if (cond) kl_if(L, cond);
}

static void if_close(kn_lower *L, kn_kx *cond) {
    if (cond) kl_end(L);
}

static bool is_float(kn_dtype t) {
    return kn_dtype_get(t)->is_float;
}

/* ---- window geometry ---- */

/* The interpreter's window of n (kn_window_make, or kn_convt_window for ConvTranspose)
 * for input x and, for convolutions, weights wt (NULL for pools); infer resolved it
 * alike, so its output extents are odims. */
static kn_status window_init(kn_lower *L, const kn_node *n, const kn_kbuf *x, const kn_kbuf *wt,
                             int ceil_mode, const int64_t *odims, kn_window *w) {
    kn_ctx *cx = kl_ctx(L);
    kn_type xt = kn_type_make(x->dtype, x->rank, x->dims);
    kn_status st;
    if (n->op == KN_OP_CONVTRANSPOSE) {
        kn_type wtt = kn_type_make(wt->dtype, wt->rank, wt->dims);
        st = kn_convt_window(cx, n, &xt, &wtt, w);
    } else {
        st = kn_window_make(cx, n, &xt, wt ? wt->dims + 2 : NULL, ceil_mode, w);
    }
    if (st) return st;
    for (int i = 0; i < w->nsp; i++) KN_ASSERT(w->out[i] == odims[i]);
    return KN_OK;
}

/* One output position's window: kernel loop vars kv, input coordinates pos, the
 * condition that every coordinate is inside the input (NULL: always) and, for forward
 * windows, inside the padded input (NULL: always); off and koff are the row-major
 * spatial offsets into the input and the kernel. */
typedef struct wpos {
    int kv[KN_MAX_RANK];
    kn_kx *pos[KN_MAX_RANK], *inb, *inpad, *off, *koff;
} wpos;

/* Opens w->nsp kernel loops for output position ov (loop vars); close with win_close.
 * Bounds tests are emitted only where the static ranges can leave the input. */
static void win_open(kn_lower *L, const kn_window *w, const int *ov, wpos *p) {
    int nsp = w->nsp;
    p->inb = p->inpad = NULL;
    p->off = p->koff = kx_int(L, 0);
    for (int i = 0; i < nsp; i++) p->kv[i] = kl_for(L, w->k[i]);
    for (int i = 0; i < nsp; i++) {
        kn_kx *o = var(L, ov[i]), *k = var(L, p->kv[i]), *pos;
        int64_t in = w->in[i], s = w->s[i], d = w->d[i], ext = (w->k[i] - 1) * d;
        if (!w->transposed) {
            pos = madd(L, madd(L, kx_int(L, -w->pb[i]), o, s), k, d);
            int64_t hi = (w->out[i] - 1) * s - w->pb[i] + ext;
            if (w->pb[i] > 0) p->inb = both(L, p->inb, kx_bin(L, KX_GE, pos, kx_int(L, 0)));
            if (hi >= in) p->inb = both(L, p->inb, kx_bin(L, KX_LT, pos, kx_int(L, in)));
            if (hi >= in + w->pe[i])
                p->inpad = both(L, p->inpad, kx_bin(L, KX_LT, pos, kx_int(L, in + w->pe[i])));
        } else {
            kn_kx *t = madd(L, kx_add(L, o, kx_int(L, w->pb[i])), k, -d);
            int64_t hi = w->out[i] - 1 + w->pb[i];
            if (w->pb[i] - ext < 0) p->inb = both(L, p->inb, kx_bin(L, KX_GE, t, kx_int(L, 0)));
            if (s > 1)
                p->inb = both(L, p->inb,
                              kx_bin(L, KX_EQ, kx_bin(L, KX_MOD, t, kx_int(L, s)), kx_int(L, 0)));
            if (hi > s * (in - 1)) p->inb = both(L, p->inb, kx_bin(L, KX_LT, t, kx_int(L, s * in)));
            pos = s > 1 ? kx_bin(L, KX_DIV, t, kx_int(L, s)) : t;
        }
        p->pos[i] = pos;
        p->off = madd(L, p->off, pos, kn_prod(w->in, i + 1, nsp));
        p->koff = madd(L, p->koff, k, kn_prod(w->k, i + 1, nsp));
    }
}

static void win_close(kn_lower *L, const kn_window *w) {
    kl_end_n(L, w->nsp);
}

/* Row-major offset of spatial loop vars v over dims[0..nsp). */
static kn_kx *sp_offset(kn_lower *L, int nsp, const int64_t *dims, const int *v) {
    int64_t st[KN_MAX_RANK];
    kn_strides(nsp, dims, st);
    return kx_offset(L, nsp, v, st);
}

static void logical_bufs(const kn_node *n, const kn_kbuf *x, const kn_kbuf *y, kn_kbuf *xl,
                         kn_kbuf *yl, bool *xcl, bool *ycl);

/* ---- channels-last depthwise Conv ---- */

static kn_kx *pool_at(kn_lower *L, bool cl, kn_kx *sp, kn_kx *ch, int vb, int64_t c, int64_t sz);

/* Whether Conv n (its window w) is a depthwise one this file lowers channels-last:
 * x or y channels-last (kn.layout), one f32 input and output channel a group, constant
 * weights (passes/layout.c folds only such ones). */
static bool dw_cl(const kn_node *n, kn_kbuf *const *in, kn_kbuf *y, bool xcl, bool ycl,
                  int64_t group, int64_t c, int64_t m) {
    return n->op == KN_OP_CONV && (xcl || ycl) && group == c && m == c && y->dtype == KN_F32 &&
           in[0]->dtype == KN_F32 && in[1]->kind == KB_CONST && in[1]->data &&
           in[1]->dtype == KN_F32;
}

/* A depthwise Conv over channels-last x and/or y, as the pools do (pool_body_cl): a
 * channel row of accumulators (from 0), each tap of the window inside the input adds
 * x * w to the whole row, channels innermost, then the bias and the epilogue run over the
 * row (the bias after the sum, as in every float contraction: lower_conv). The
 * accumulators are y itself when y is channels-last; for a channels-first y (only x
 * folded) they are a row of f32 scratch per outermost output row (so that loop stays
 * parallel), and the finished row is stored H*W apart once per output position instead of
 * at every tap. The weights are packed tap-major ([tap][c], a table) so that row reads
 * consecutive weights. Each channel sums its taps in the plain nest's order with the same
 * fma, so the result is the plain nest's. */
static kn_status lower_dw_cl(kn_lower *L, kn_kbuf *const *in, kn_kbuf *y, const kn_window *w,
                             bool xcl, bool ycl, const kn_epilogue *epi) {
    kn_kbuf *x = in[0], *wt = in[1], *bias = in[2];
    int64_t c = ycl ? y->dims[y->rank - 1] : y->dims[1];
    int64_t isz = kn_prod(w->in, 0, w->nsp), osz = kn_prod(w->out, 0, w->nsp);
    int64_t nk = kn_prod(w->k, 0, w->nsp);
    float *pk = malloc((size_t)(nk * c) * sizeof *pk);
    KN_ASSERT(pk);
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t k = 0; k < nk; k++)
            pk[k * c + ch] = (float)kn_load_f64(wt->data->data, KN_F32, (size_t)(ch * nk + k));
    kn_kbuf *wp = kl_table(L, KN_F32, nk * c, pk);
    free(pk);
    kn_kbuf *a = ycl ? y : kl_scratch(L, KN_F32, x->dims[0] * w->out[0] * c);
    int vb = kl_for(L, x->dims[0]), ov[KN_MAX_RANK];
    kl_for_shape(L, w->nsp, w->out, ov);
#define YI(vc) pool_at(L, ycl, sp_offset(L, w->nsp, w->out, ov), var(L, vc), vb, c, osz)
#define AI(vc)                                                                                     \
    (ycl ? YI(vc) : madd(L, var(L, vc), madd(L, var(L, ov[0]), var(L, vb), w->out[0]), c))
    int vc = kl_for(L, c);
    kl_store(L, a, AI(vc), kx_const(L, KN_F32, 0));
    kl_end(L);
    wpos q;
    win_open(L, w, ov, &q);
    if_open(L, q.inb);
    vc = kl_for(L, c);
    kn_kx *xv = kx_load(L, x, pool_at(L, xcl, q.off, var(L, vc), vb, c, isz));
    kn_kx *wv = kx_load(L, wp, madd(L, var(L, vc), q.koff, c));
    kl_store(L, a, AI(vc), kx_fma(L, xv, wv, kx_load(L, a, AI(vc))));
    kl_end(L);
    if_close(L, q.inb);
    win_close(L, w);
    if (epi->n || !ycl || bias) {
        vc = kl_for(L, c);
        kn_kx *coord[KN_MAX_RANK] = {var(L, vb), var(L, vc)}, *opnd[KN_EPI_MAX] = {0};
        for (int i = 0; i < w->nsp; i++) coord[2 + i] = var(L, ov[i]);
        for (int k = 0; k < epi->n; k++)
            if (epi->s[k].operand >= 0) opnd[k] = kl_bcast_load(L, in[epi->s[k].operand], y, coord);
        kn_kx *v = kx_load(L, a, AI(vc));
        if (bias) v = kx_add(L, v, kx_load(L, bias, var(L, vc)));
        kl_store(L, y, YI(vc), epi->n ? kl_epilogue(L, epi, v, opnd) : v);
        kl_end(L);
    }
#undef AI
#undef YI
    kl_end_n(L, w->nsp + 1);
    return KN_OK;
}

/* ---- Conv, ConvTranspose ---- */

/* y[b, g*mg+mi, o...] = (sum over ci < cg and the window of x[b, g*cg+ci, pos...] *
 * weight) + bias, where the weight is W[g*mg+mi, ci, k...] (Conv) or W[g*cg+ci, mi, k...]
 * (ConvTranspose). The bias is added after the sum, before the epilogue, on every path
 * (the tile passes too): ONNX's reference order and ONNX Runtime's (MLAS), whose float32
 * rounding differs from a sum started at the bias (docs/decisions.md, "Conv and Gemm
 * add the bias after the sum"). */
static kn_status lower_conv(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *wt = in[1], *bias = in[2], *y = out[0];
    int transposed = n->op == KN_OP_CONVTRANSPOSE;
    /* xl, yl: x and y with their logical (channels-first) dims; a channels-last one
     * (kn.layout) is addressed with the channel innermost */
    bool xcl, ycl;
    kn_kbuf xl, yl;
    logical_bufs(n, x, y, &xl, &yl, &xcl, &ycl);
    kn_window w;
    if (window_init(L, n, &xl, wt, 0, yl.dims + 2, &w)) return kl_ctx(L)->status;
    int64_t group = kn_attr_int(kl_ctx(L), n, "group", 1);
    kn_epilogue epi;
    if (kn_epilogue_of(kl_ctx(L), n, &epi)) return kl_ctx(L)->status;
    int64_t c = xl.dims[1], m = yl.dims[1], cg = c / group, mg = m / group;
    int64_t isz = kn_prod(w.in, 0, w.nsp), osz = kn_prod(w.out, 0, w.nsp);
    int64_t nk = kn_prod(w.k, 0, w.nsp);
    bool dwcl = dw_cl(n, in, y, xcl, ycl, group, c, m);
    if (dwcl && lower_dw_cl(L, in, y, &w, xcl, ycl, &epi)) return kl_ctx(L)->status;
    if (dwcl) goto describe;
    kn_dtype t = kx_compute_dtype(y->dtype);
    int vb = kl_for(L, x->dims[0]), vg = kl_for(L, group), vm = kl_for(L, mg), ov[KN_MAX_RANK];
    kn_kx *mo = madd(L, var(L, vm), var(L, vg), mg);
    kl_for_shape(L, w.nsp, w.out, ov);
    int acc = kl_decl(L, t, kx_const(L, t, 0));
    int vc = kl_for(L, cg);
    kn_kx *ci = madd(L, var(L, vc), var(L, vg), cg); /* input channel */
    wpos p;
    win_open(L, &w, ov, &p);
    if_open(L, p.inb);
    kn_kx *xi =
        xcl ? madd(L, madd(L, ci, p.off, c), var(L, vb), c * isz)
            : kx_add(L, madd(L, madd(L, kx_int(L, 0), var(L, vb), c * isz), ci, isz), p.off);
    kn_kx *wi = transposed ? madd(L, madd(L, kx_int(L, 0), ci, mg * nk), var(L, vm), nk)
                           : madd(L, madd(L, kx_int(L, 0), mo, cg * nk), var(L, vc), nk);
    wi = kx_add(L, wi, p.koff);
    kl_set(L, acc, kx_fma(L, kx_load(L, x, xi), kx_load(L, wt, wi), var(L, acc)));
    if_close(L, p.inb);
    win_close(L, &w);
    kl_end(L);
    if (bias) /* after the sum, as ONNX's reference and ONNX Runtime's MLAS add it */
        kl_set(L, acc, kx_add(L, var(L, acc), kx_cast(L, t, kx_load(L, bias, mo))));
    kn_kx *yi = ycl ? madd(L, madd(L, mo, sp_offset(L, w.nsp, w.out, ov), m), var(L, vb), m * osz)
                    : kx_add(L, madd(L, kx_int(L, 0), madd(L, mo, var(L, vb), m), osz),
                             sp_offset(L, w.nsp, w.out, ov));
    kn_kx *coord[KN_MAX_RANK] = {var(L, vb), mo}, *opnd[KN_EPI_MAX] = {0};
    for (int i = 0; i < w.nsp; i++) coord[2 + i] = var(L, ov[i]);
    for (int k = 0; k < epi.n; k++)
        if (epi.s[k].operand >= 0) opnd[k] = kl_bcast_load(L, in[epi.s[k].operand], y, coord);
    kl_store(L, y, yi, kl_epilogue(L, &epi, var(L, acc), opnd));
    kl_end_n(L, w.nsp + 3);
describe:
    if (!transposed && w.nsp <= 2) { /* describe it for the tile pass */
        int two = w.nsp == 2;
        kn_contract d = {.kind = KN_CONTRACT_CONV,
                         .x = x,
                         .w = wt,
                         .bias = bias,
                         .y = y,
                         .nsp = w.nsp,
                         .n = x->dims[0],
                         .c = c,
                         .m = m,
                         .group = group,
                         .h = two ? w.in[0] : 1,
                         .oh = two ? w.out[0] : 1,
                         .kh = two ? w.k[0] : 1,
                         .sh = two ? w.s[0] : 1,
                         .dh = two ? w.d[0] : 1,
                         .ph = two ? w.pb[0] : 0,
                         .peh = two ? w.pe[0] : 0,
                         .w_ = w.in[two],
                         .ow = w.out[two],
                         .kw = w.k[two],
                         .sw = w.s[two],
                         .dw = w.d[two],
                         .pw = w.pb[two],
                         .pew = w.pe[two],
                         .epi = epi.n ? &epi : NULL};
        int64_t h = d.h, iw = d.w_, oh = d.oh, ow = d.ow;
        if (xcl) memcpy(d.xs, (int64_t[4]){h * iw * c, 1, iw * c, c}, sizeof d.xs);
        if (ycl) memcpy(d.ys, (int64_t[4]){oh * ow * m, 1, ow * m, m}, sizeof d.ys);
        for (int k = 0; k < epi.n; k++)
            d.operand[k] = epi.s[k].operand >= 0 ? in[epi.s[k].operand] : NULL;
        kl_contract(L, &d);
    }
    return KN_OK;
}

/* ---- DeformConv ---- */

/* The plain nest of a grouped Conv of r = 1..3 spatial axes whose tap k reads x
 * multilinearly at its displaced position (ir/ops/nn.c); positions are computed in f64
 * as the interpreter does; a position outside (-1, extent) on any axis, or NaN, samples
 * 0 (it is replaced by -2 before the integer conversion, so that stays defined), and a
 * corner outside the input gets weight 0 and a clamped index, so no load leaves x. */
static kn_status lower_deformconv(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                  kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *wt = in[1], *off = in[2], *bias = in[3], *mk = in[4], *y = out[0];
    kn_type xt = kn_type_make(x->dtype, x->rank, x->dims);
    kn_window w;
    int64_t group = kn_attr_int(cx, n, "group", 1), og = kn_attr_int(cx, n, "offset_group", 1);
    if (kn_failed(cx) || kn_window_make(cx, n, &xt, wt->dims + 2, 0, &w)) return cx->status;
    if (!y->numel) return KN_OK;
    int r = x->rank - 2;
    const int64_t *D = x->dims + 2;
    int64_t k = 1, osz = 1;
    for (int a = 0; a < r; a++) {
        if (!D[a]) return kn_diag(cx, n, KN_EINVAL, "X has an empty spatial dim");
        k *= w.k[a], osz *= w.out[a];
    }
    kn_dtype t = kx_compute_dtype(y->dtype);
    int64_t c = x->dims[1], m = y->dims[1];
    int64_t cg = c / group, mg = m / group, cpo = c / og;
    int vb = kl_for(L, x->dims[0]), vm = kl_for(L, m), ov[KN_MAX_RANK] = {0}, kv[KN_MAX_RANK] = {0};
    for (int a = 0; a < r; a++) ov[a] = kl_for(L, w.out[a]);
    kn_kx *spe = var(L, ov[0]);
    for (int a = 1; a < r; a++) spe = madd(L, var(L, ov[a]), spe, w.out[a]);
    int sp = kl_decl(L, KN_I64, spe);
    int acc = kl_decl(L, t, bias ? kx_load(L, bias, var(L, vm)) : kx_const(L, t, 0));
    int vc = kl_for(L, cg);
    int ic =
        kl_decl(L, KN_I64, madd(L, var(L, vc), kx_bin(L, KX_DIV, var(L, vm), kx_int(L, mg)), cg));
    int g = kl_decl(L, KN_I64, kx_bin(L, KX_DIV, var(L, ic), kx_int(L, cpo)));
    for (int a = 0; a < r; a++) kv[a] = kl_for(L, w.k[a]);
    kn_kx *je = var(L, kv[0]);
    for (int a = 1; a < r; a++) je = madd(L, var(L, kv[a]), je, w.k[a]);
    int j = kl_decl(L, KN_I64, je);
    kn_kx *bg = madd(L, var(L, g), var(L, vb), og); /* b * og + g */
    /* offset channel (bg * K + j) * r + a at spatial position sp */
    int ob = kl_decl(L, KN_I64,
                     madd(L, var(L, sp), kx_mul(L, madd(L, var(L, j), bg, k), kx_int(L, r)), osz));
    int lo[KN_MAX_RANK], fr[KN_MAX_RANK], ok = -1;
    for (int a = 0; a < r; a++) {
        kn_kx *base =
            madd(L, madd(L, kx_int(L, -w.pb[a]), var(L, ov[a]), w.s[a]), var(L, kv[a]), w.d[a]);
        kn_kx *d = kx_cast(L, KN_F64, kx_load(L, off, madd(L, var(L, ob), kx_int(L, a), osz)));
        int raw = kl_decl(L, KN_F64, kx_add(L, kx_cast(L, KN_F64, base), d));
        /* inside (-1, extent), false for NaN: else the tap samples 0, as the interpreter */
        kn_kx *in_a = kx_bin(L, KX_LAND, kx_bin(L, KX_GT, var(L, raw), kx_const(L, KN_F64, -1)),
                             kx_bin(L, KX_LT, var(L, raw), kx_const(L, KN_F64, (double)D[a])));
        ok = kl_decl(L, KN_BOOL, a ? kx_bin(L, KX_LAND, var(L, ok), in_a) : in_a);
        int pos =
            kl_decl(L, KN_F64, kx_select(L, var(L, ok), var(L, raw), kx_const(L, KN_F64, -2.0)));
        int f = kl_decl(L, KN_F64, kx_un(L, KX_FLOOR, var(L, pos)));
        fr[a] = kl_decl(L, KN_F64, kx_sub(L, var(L, pos), var(L, f)));
        lo[a] = kl_decl(L, KN_I64, kx_cast(L, KN_I64, var(L, f)));
    }
    int v = kl_decl(L, KN_F64, kx_const(L, KN_F64, 0));
    for (int cb = 0; cb < (1 << r); cb++) {
        kn_kx *inside = var(L, ok), *wgt = NULL, *xi = madd(L, var(L, ic), var(L, vb), c);
        for (int a = 0; a < r; a++) {
            int bit = (cb >> (r - 1 - a)) & 1;
            kn_kx *q = kx_add(L, var(L, lo[a]), kx_int(L, bit));
            inside = kx_bin(L, KX_LAND, inside,
                            kx_bin(L, KX_LAND, kx_bin(L, KX_GE, q, kx_int(L, 0)),
                                   kx_bin(L, KX_LT, q, kx_int(L, D[a]))));
            kn_kx *wa = bit ? var(L, fr[a]) : kx_sub(L, kx_const(L, KN_F64, 1), var(L, fr[a]));
            wgt = wgt ? kx_mul(L, wgt, wa) : wa;
            kn_kx *cq = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, q, kx_int(L, 0)), kx_int(L, D[a] - 1));
            xi = madd(L, cq, xi, D[a]);
        }
        wgt = kx_select(L, inside, wgt, kx_const(L, KN_F64, 0));
        kl_set(L, v, kx_add(L, var(L, v), kx_mul(L, wgt, kx_cast(L, KN_F64, kx_load(L, x, xi)))));
    }
    kn_kx *val = var(L, v);
    if (mk)
        val = kx_mul(L, val,
                     kx_cast(L, KN_F64,
                             kx_load(L, mk, madd(L, var(L, sp), madd(L, var(L, j), bg, k), osz))));
    kn_kx *wv = kx_load(L, wt, madd(L, var(L, j), madd(L, var(L, vc), var(L, vm), cg), k));
    kl_set(L, acc, kx_fma(L, kx_cast(L, t, val), wv, var(L, acc)));
    kl_end_n(L, r + 1);
    kl_store(L, y, madd(L, var(L, sp), madd(L, var(L, vm), var(L, vb), m), osz), var(L, acc));
    kl_end_n(L, r + 2);
    return KN_OK;
}

/* ---- pools ---- */

typedef enum { POOL_AVG, POOL_MAX, POOL_LP } pool_kind;

/* Opens the window loops of a pool at output position ov and, inside them, the test that
 * the position falls inside the input (closed by the caller). count_pad: an average that
 * includes the padding counts every position of the window in cnt, inside or not. */
static void pool_window_open(kn_lower *L, const kn_window *w, const int *ov, bool count_pad,
                             int cnt, wpos *q) {
    win_open(L, w, ov, q);
    if (count_pad) {
        if_open(L, q->inpad);
        kl_set(L, cnt, kx_add(L, var(L, cnt), kx_int(L, 1)));
        if_close(L, q->inpad);
    }
    if_open(L, q->inb);
}

/* y[ch, o...] over channels ch of N*C: average, max (with its flat input index into idx
 * when idx is not NULL) or Lp norm of the window. */
static void pool_body(kn_lower *L, const kn_window *w, pool_kind kind, kn_kbuf *x, kn_kbuf *y,
                      kn_kbuf *idx, int include_pad, int col_major, double p) {
    kn_dtype t = kx_compute_dtype(y->dtype);
    int64_t isz = kn_prod(w->in, 0, w->nsp), osz = kn_prod(w->out, 0, w->nsp);
    int vch = kl_for(L, x->dims[0] * x->dims[1]), ov[KN_MAX_RANK];
    kl_for_shape(L, w->nsp, w->out, ov);
    double lowest = is_float(t) ? -INFINITY : t == KN_I8 ? -128 : 0;
    int acc = kl_decl(L, t, kx_const(L, t, kind == POOL_MAX ? lowest : 0));
    int cnt = kind == POOL_AVG ? kl_decl(L, KN_I64, kx_int(L, 0)) : -1;
    int at = idx ? kl_decl(L, KN_I64, kx_int(L, -1)) : -1;
    wpos q;
    pool_window_open(L, w, ov, kind == POOL_AVG && include_pad, cnt, &q);
#define XV() kx_load(L, x, madd(L, q.off, var(L, vch), isz))
    if (kind == POOL_MAX && idx) {
        kl_if(L, kx_bin(L, KX_LOR, kx_bin(L, KX_LT, var(L, at), kx_int(L, 0)),
                        kx_bin(L, KX_GT, XV(), var(L, acc))));
        kl_set(L, acc, XV());
        kn_kx *flat = q.off;
        if (col_major) {
            flat = kx_int(L, 0);
            for (int a = 0; a < w->nsp; a++) flat = madd(L, flat, q.pos[a], kn_prod(w->in, 0, a));
        }
        kl_set(L, at, flat);
        kl_end(L);
    } else if (kind == POOL_MAX) {
        kl_set(L, acc, kx_bin(L, KX_MAX, XV(), var(L, acc)));
    } else if (kind == POOL_LP) {
        kn_kx *pw = p == 1   ? kx_un(L, KX_ABS, XV())
                    : p == 2 ? kx_bin(L, KX_MUL, XV(), XV())
                             : kx_bin(L, KX_POW, kx_un(L, KX_ABS, XV()), kx_const(L, t, p));
        kl_set(L, acc, kx_add(L, var(L, acc), pw));
    } else {
        kl_set(L, acc, kx_add(L, var(L, acc), XV()));
        if (!include_pad) kl_set(L, cnt, kx_add(L, var(L, cnt), kx_int(L, 1)));
    }
#undef XV
    if_close(L, q.inb);
    win_close(L, w);
    kn_kx *r = var(L, acc);
    if (kind == POOL_LP)
        r = p == 1   ? r
            : p == 2 ? kx_un(L, KX_SQRT, r)
                     : kx_bin(L, KX_POW, r, kx_const(L, t, 1.0 / p));
    if (kind == POOL_AVG) r = kx_bin(L, KX_DIV, r, kx_cast(L, t, var(L, cnt)));
    kn_kx *yi = madd(L, sp_offset(L, w->nsp, w->out, ov), var(L, vch), osz);
    kl_store(L, y, yi, r);
    if (idx)
        kl_store(L, idx, madd(L, sp_offset(L, w->nsp, w->out, ov), var(L, vch), osz),
                 madd(L, var(L, at), var(L, vch), isz));
    kl_end_n(L, w->nsp + 1);
}

/* Element ch of batch b at spatial offset sp of a pooled tensor with c channels and
 * sz spatial elements, stored channels-last (cl) or channels-first. */
static kn_kx *pool_at(kn_lower *L, bool cl, kn_kx *sp, kn_kx *ch, int vb, int64_t c, int64_t sz) {
    if (cl) return madd(L, madd(L, ch, sp, c), var(L, vb), c * sz);
    return kx_add(L, madd(L, kx_int(L, 0), madd(L, ch, var(L, vb), c), sz), sp);
}

/* A pool whose x or y is channels-last (kn.layout, passes/layout.c): for each output
 * position the window is walked once and each tap inside the input updates the whole
 * channel row of the accumulators, then a last loop over the channels finishes the
 * average or the norm. The accumulators are y itself when y holds its compute dtype; a
 * float16 pool accumulates in a float32 scratch laid out as a channels-last y (sums and
 * squares leave float16's range, and a MaxPool in y would round to float16 at every tap:
 * 30x slower), so each output position keeps its own row and the position loops stay
 * parallel. The channel loops are innermost, so a channels-last x is read, and y written,
 * in consecutive elements; each channel still sees its taps in the plain nest's order.
 * MaxPool's Indices are not produced (the pass admits single-output pools only). */
static kn_status pool_body_cl(kn_lower *L, const kn_node *n, const kn_window *w, pool_kind kind,
                              kn_kbuf *x, kn_kbuf *y, bool xcl, bool ycl, int include_pad,
                              double p) {
    kn_dtype t = kx_compute_dtype(y->dtype);
    if (t != y->dtype && y->dtype != KN_F16)
        return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED, "channels-last pool of type %s",
                       kn_dtype_name(y->dtype));
    bool in_y = t == y->dtype;
    kn_kbuf *a = in_y ? y : kl_scratch(L, t, y->numel);
    bool acl = in_y ? ycl : true;
    int64_t c = xcl ? x->dims[x->rank - 1] : x->dims[1];
    int64_t isz = kn_prod(w->in, 0, w->nsp), osz = kn_prod(w->out, 0, w->nsp);
    int vb = kl_for(L, x->dims[0]), ov[KN_MAX_RANK];
    kl_for_shape(L, w->nsp, w->out, ov);
#define YI(vc) pool_at(L, ycl, sp_offset(L, w->nsp, w->out, ov), var(L, vc), vb, c, osz)
#define AI(vc) pool_at(L, acl, sp_offset(L, w->nsp, w->out, ov), var(L, vc), vb, c, osz)
    double lowest = is_float(t) ? -INFINITY : t == KN_I8 ? -128 : 0;
    int vc = kl_for(L, c);
    kl_store(L, a, AI(vc), kx_const(L, t, kind == POOL_MAX ? lowest : 0));
    kl_end(L);
    int cnt = kind == POOL_AVG ? kl_decl(L, KN_I64, kx_int(L, 0)) : -1;
    wpos q;
    pool_window_open(L, w, ov, kind == POOL_AVG && include_pad, cnt, &q);
    if (kind == POOL_AVG && !include_pad) kl_set(L, cnt, kx_add(L, var(L, cnt), kx_int(L, 1)));
    vc = kl_for(L, c);
    int xv = kl_decl(L, t, kx_load(L, x, pool_at(L, xcl, q.off, var(L, vc), vb, c, isz)));
    kn_kx *acc = kx_load(L, a, AI(vc)), *r;
    if (kind == POOL_MAX)
        r = kx_bin(L, KX_MAX, var(L, xv), acc);
    else if (kind == POOL_LP)
        r = kx_add(L, acc,
                   p == 1   ? kx_un(L, KX_ABS, var(L, xv))
                   : p == 2 ? kx_bin(L, KX_MUL, var(L, xv), var(L, xv))
                            : kx_bin(L, KX_POW, kx_un(L, KX_ABS, var(L, xv)), kx_const(L, t, p)));
    else
        r = kx_add(L, acc, var(L, xv));
    kl_store(L, a, AI(vc), r);
    kl_end(L);
    if_close(L, q.inb);
    win_close(L, w);
    if (kind == POOL_AVG || (kind == POOL_LP && p != 1) || !in_y) {
        vc = kl_for(L, c);
        kn_kx *v = kx_load(L, a, AI(vc));
        r = kind == POOL_AVG            ? kx_bin(L, KX_DIV, v, kx_cast(L, t, var(L, cnt)))
            : kind == POOL_LP && p == 2 ? kx_un(L, KX_SQRT, v)
            : kind == POOL_LP && p != 1 ? kx_bin(L, KX_POW, v, kx_const(L, t, 1.0 / p))
                                        : v;
        kl_store(L, y, YI(vc), r);
        kl_end(L);
    }
#undef AI
#undef YI
    kl_end_n(L, w->nsp + 1);
    return KN_OK;
}

/* x and y with their logical (channels-first) dims for a node with kn.layout. */
static void logical_bufs(const kn_node *n, const kn_kbuf *x, const kn_kbuf *y, kn_kbuf *xl,
                         kn_kbuf *yl, bool *xcl, bool *ycl) {
    kn_conv_layout(n, xcl, ycl);
    *xl = *x, *yl = *y;
    for (int d = 1; d < x->rank; d++) {
        xl->dims[d] = !*xcl ? x->dims[d] : d == 1 ? x->dims[x->rank - 1] : x->dims[d - 1];
        yl->dims[d] = !*ycl ? y->dims[d] : d == 1 ? y->dims[y->rank - 1] : y->dims[d - 1];
    }
}

static pool_kind pool_kind_of(kn_op op) {
    return op == KN_OP_MAXPOOL || op == KN_OP_GLOBALMAXPOOL ? POOL_MAX
           : op == KN_OP_LPPOOL || op == KN_OP_GLOBALLPPOOL ? POOL_LP
                                                            : POOL_AVG;
}

static kn_status lower_pool(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    int64_t ceil_mode = kn_attr_int(cx, n, "ceil_mode", 0);
    if (kn_failed(cx)) return cx->status;
    kn_kbuf xl, yl;
    bool xcl, ycl;
    logical_bufs(n, in[0], out[0], &xl, &yl, &xcl, &ycl);
    kn_window w;
    if (window_init(L, n, &xl, NULL, (int)ceil_mode, yl.dims + 2, &w)) return cx->status;
    int64_t include_pad = kn_attr_int(cx, n, "count_include_pad", 0);
    int64_t order = kn_attr_int(cx, n, "storage_order", 0);
    double p = kn_lp_order(cx, n);
    if (kn_failed(cx)) return cx->status;
    if (xcl || ycl)
        return pool_body_cl(L, n, &w, pool_kind_of(n->op), in[0], out[0], xcl, ycl,
                            (int)include_pad, p);
    pool_body(L, &w, pool_kind_of(n->op), in[0], out[0], n->op == KN_OP_MAXPOOL ? out[1] : NULL,
              (int)include_pad, order == 1, p);
    return KN_OK;
}

/* A global pool is a pool whose window is the whole spatial input. */
static kn_status lower_global_pool(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                   kn_kbuf *const *out) {
    kn_kbuf *x = in[0], xl, yl;
    bool xcl, ycl;
    logical_bufs(n, x, out[0], &xl, &yl, &xcl, &ycl);
    kn_window w;
    memset(&w, 0, sizeof w);
    w.nsp = x->rank - 2;
    for (int i = 0; i < w.nsp; i++) {
        w.in[i] = w.k[i] = xl.dims[i + 2];
        w.out[i] = w.s[i] = w.d[i] = 1;
    }
    double p = kn_lp_order(kl_ctx(L), n);
    if (kn_failed(kl_ctx(L))) return kl_ctx(L)->status;
    if (xcl || ycl) return pool_body_cl(L, n, &w, pool_kind_of(n->op), x, out[0], xcl, ycl, 0, p);
    pool_body(L, &w, pool_kind_of(n->op), x, out[0], NULL, 0, 0, p);
    return KN_OK;
}

/* (var / stride) % extent; no modulo when extent is 0 (the outermost axis). */
static kn_kx *unflat_coord(kn_lower *L, int v, int64_t stride, int64_t extent) {
    kn_kx *c = kx_bin(L, KX_DIV, var(L, v), kx_int(L, stride));
    return extent ? kx_bin(L, KX_MOD, c, kx_int(L, extent)) : c;
}

/* y = 0, then each x[i] lands at the output coordinates of indices[i], which address the
 * unpooled shape the window implies (an output_shape may be larger). Out-of-range indices
 * (an error in the interpreter) are skipped. */
static kn_status lower_maxunpool(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *ix = in[1], *y = out[0];
    int r = x->rank;
    kn_window w; /* as the interpreter: the pool window over x, the pooled input */
    kn_type xt = kn_type_make(x->dtype, x->rank, x->dims);
    int64_t dflt[KN_MAX_RANK], dst[KN_MAX_RANK], yst[KN_MAX_RANK];
    if (kn_window_make(kl_ctx(L), n, &xt, NULL, 0, &w)) return kl_ctx(L)->status;
    dflt[0] = x->dims[0];
    dflt[1] = x->dims[1];
    for (int i = 0; i < w.nsp; i++)
        dflt[i + 2] = (w.in[i] - 1) * w.s[i] + w.k[i] - w.pb[i] - w.pe[i];
    kn_strides(r, dflt, dst);
    kn_strides(r, y->dims, yst);
    kn_dtype t = kx_compute_dtype(y->dtype);
    int vz = kl_for(L, y->numel);
    kl_store(L, y, var(L, vz), kx_const(L, t, 0));
    kl_end(L);
    int vi = kl_for(L, x->numel);
    int at = kl_decl(L, KN_I64, kx_load(L, ix, var(L, vi)));
    kn_kx *cond = both(L, kx_bin(L, KX_GE, var(L, at), kx_int(L, 0)),
                       kx_bin(L, KX_LT, var(L, at), kx_int(L, kn_prod(dflt, 0, r))));
    bool same = !memcmp(dflt, y->dims, (size_t)r * sizeof *dflt);
    kn_kx *off = var(L, at);
    if (!same) {
        off = kx_int(L, 0);
        for (int d = 0; d < r; d++) {
            off = madd(L, off, unflat_coord(L, at, dst[d], d ? dflt[d] : 0), yst[d]);
            if (dflt[d] > y->dims[d])
                cond = both(L, cond,
                            kx_bin(L, KX_LT, unflat_coord(L, at, dst[d], d ? dflt[d] : 0),
                                   kx_int(L, y->dims[d])));
        }
    }
    kl_if(L, cond);
    kl_store(L, y, off, kx_load(L, x, var(L, vi)));
    kl_end_n(L, 2);
    return KN_OK;
}

/* ---- Gemm, MatMul ---- */

/* acc += a * b: fma for floats; for integers a wrapping uint64 multiply-add. */
static kn_kx *mac(kn_lower *L, kn_kx *a, kn_kx *b, kn_kx *acc) {
    if (is_float(acc->dtype)) return kx_fma(L, a, b, acc);
    return kx_add(L, acc, kx_bin(L, KX_MUL, kx_cast(L, KN_U64, a), kx_cast(L, KN_U64, b)));
}

static kn_dtype acc_dtype(kn_dtype t) {
    return is_float(t) ? kx_compute_dtype(t) : KN_U64;
}

static kn_status lower_gemm(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *a = in[0], *b = in[1], *c = in[2], *y = out[0];
    int64_t ta = kn_attr_int(cx, n, "transA", 0), tb = kn_attr_int(cx, n, "transB", 0);
    double alpha = kn_attr_float(cx, n, "alpha", 1.0f), beta = kn_attr_float(cx, n, "beta", 1.0f);
    if (kn_failed(cx)) return cx->status;
    kn_epilogue epi;
    if (kn_epilogue_of(cx, n, &epi)) return cx->status;
    int64_t m = y->dims[0], nn = y->dims[1], k = a->dims[ta ? 0 : 1];
    kn_dtype t = kx_compute_dtype(y->dtype), at = acc_dtype(y->dtype);
    int v[2];
    kl_for_shape(L, 2, y->dims, v);
    int acc = kl_decl(L, at, kx_const(L, at, 0));
    int vl = kl_for(L, k);
    kn_kx *i = var(L, v[0]), *j = var(L, v[1]), *l = var(L, vl);
    kn_kx *ai = ta ? madd(L, i, l, m) : madd(L, l, i, k);
    kn_kx *bi = tb ? madd(L, l, j, k) : madd(L, j, l, nn);
    kl_set(L, acc, mac(L, kx_load(L, a, ai), kx_load(L, b, bi), var(L, acc)));
    kl_end(L);
    kn_kx *r;
    if (is_float(t)) {
        r = var(L, acc);
        if (alpha != 1) r = kx_bin(L, KX_MUL, kx_const(L, t, alpha), r);
        if (c && beta != 0) {
            kn_kx *cv = kx_load(L, c, kx_bcast_offset(L, c, 2, y->dims, v));
            r = beta == 1 ? kx_add(L, r, cv) : kx_fma(L, kx_const(L, t, beta), cv, r);
        }
    } else {
        r = kx_cast(L, KN_I64, var(L, acc));
        if (alpha != 1)
            r = kx_cast(L, KN_I64,
                        kx_bin(L, KX_MUL, kx_const(L, KN_F64, alpha), kx_cast(L, KN_F64, r)));
        if (c && beta != 0) {
            kn_kx *cv = kx_load(L, c, kx_bcast_offset(L, c, 2, y->dims, v));
            if (beta != 1)
                cv = kx_cast(L, KN_I64,
                             kx_bin(L, KX_MUL, kx_const(L, KN_F64, beta), kx_cast(L, KN_F64, cv)));
            r = kx_add(L, r, kx_cast(L, KN_I64, cv));
        }
    }
    kn_kx *coord[2] = {i, j}, *opnd[KN_EPI_MAX] = {0};
    for (int s = 0; s < epi.n; s++)
        if (epi.s[s].operand >= 0) opnd[s] = kl_bcast_load(L, in[epi.s[s].operand], y, coord);
    if (epi.n) r = kl_epilogue(L, &epi, kx_cast(L, t, r), opnd);
    kl_store(L, y, madd(L, j, i, nn), r);
    kl_end_n(L, 2);
    /* a row bias (C of N elements) or none: a contraction the tile pass can rebuild */
    bool row_c =
        !c || beta == 0 || (c->numel == nn && (c->rank == 1 || (c->rank == 2 && c->dims[1] == nn)));
    if (is_float(t) && row_c) {
        kn_contract d = {.kind = KN_CONTRACT_MATMUL,
                         .x = a,
                         .w = b,
                         .bias = beta != 0 ? c : NULL,
                         .y = y,
                         .M = m,
                         .K = k,
                         .N = nn,
                         .ta = ta,
                         .tb = tb,
                         .alpha = alpha,
                         .beta = beta,
                         .epi = epi.n ? &epi : NULL};
        for (int s = 0; s < epi.n; s++)
            d.operand[s] = epi.s[s].operand >= 0 ? in[epi.s[s].operand] : NULL;
        kl_contract(L, &d);
    }
    return KN_OK;
}

/* numpy matmul: a 1-D A gains a leading 1, a 1-D B a trailing 1 (absent from the
 * result); the batch dims broadcast (stride 0 on size-1 and missing dims). */
static kn_status lower_matmul(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    kn_kbuf *a = in[0], *b = in[1], *y = out[0];
    kn_epilogue epi;
    if (kn_epilogue_of(kl_ctx(L), n, &epi)) return kl_ctx(L)->status;
    int ar = a->rank, br = b->rank, yr = y->rank;
    int64_t k = a->dims[ar - 1], nn = br > 1 ? b->dims[br - 1] : 1;
    int nbatch = yr - (ar > 1) - (br > 1);
    int64_t ast[KN_MAX_RANK], bst[KN_MAX_RANK], yst[KN_MAX_RANK];
    kn_strides(ar, a->dims, ast);
    kn_strides(br, b->dims, bst);
    kn_strides(yr, y->dims, yst);
    kn_dtype at = acc_dtype(y->dtype);
    int v[KN_MAX_RANK];
    kl_for_shape(L, yr, y->dims, v);
    kn_kx *ao = kx_int(L, 0), *bo = kx_int(L, 0);
    int abr = ar > 2 ? ar - 2 : 0, bbr = br > 2 ? br - 2 : 0;
    for (int d = 0; d < nbatch; d++) {
        int da = d - (nbatch - abr), db = d - (nbatch - bbr);
        if (da >= 0 && a->dims[da] != 1) ao = madd(L, ao, var(L, v[d]), ast[da]);
        if (db >= 0 && b->dims[db] != 1) bo = madd(L, bo, var(L, v[d]), bst[db]);
    }
    if (ar > 1) ao = madd(L, ao, var(L, v[nbatch]), k);
    if (br > 1) bo = kx_add(L, bo, var(L, v[yr - 1]));
    int acc = kl_decl(L, at, kx_const(L, at, 0));
    int vl = kl_for(L, k);
    kl_set(L, acc,
           mac(L, kx_load(L, a, kx_add(L, ao, var(L, vl))),
               kx_load(L, b, madd(L, bo, var(L, vl), nn)), var(L, acc)));
    kl_end(L);
    kn_kx *coord[KN_MAX_RANK], *opnd[KN_EPI_MAX] = {0}, *r = var(L, acc);
    for (int d = 0; d < yr; d++) coord[d] = var(L, v[d]);
    for (int s = 0; s < epi.n; s++)
        if (epi.s[s].operand >= 0) opnd[s] = kl_bcast_load(L, in[epi.s[s].operand], y, coord);
    if (epi.n) r = kl_epilogue(L, &epi, r, opnd);
    kl_store(L, y, kx_offset(L, yr, v, yst), r);
    kl_end_n(L, yr);
    /* a contraction: B one matrix for every row of A (y's rows are A's rows), or one
     * matrix product per batch (attention), A and B broadcasting over the batch dims */
    if (is_float(y->dtype) && ar >= 2 && br >= 2 && y->numel > 0 && k > 0) {
        kn_contract d = {.kind = KN_CONTRACT_MATMUL,
                         .x = a,
                         .w = b,
                         .y = y,
                         .M = a->numel / k,
                         .K = k,
                         .N = nn,
                         .alpha = 1,
                         .epi = epi.n ? &epi : NULL};
        if (b->numel != k * nn) { /* B differs between batches */
            d.M = a->dims[ar - 2];
            d.batch = y->numel / (d.M * nn);
            for (int i = 0; i < nbatch; i++) {
                int da = i - (nbatch - abr), db = i - (nbatch - bbr);
                if (y->dims[i] == 1) continue;
                d.bdims[d.nbd] = y->dims[i];
                d.xbs[d.nbd] = da >= 0 && a->dims[da] != 1 ? ast[da] : 0;
                d.wbs[d.nbd] = db >= 0 && b->dims[db] != 1 ? bst[db] : 0;
                d.nbd++;
            }
        }
        for (int s = 0; s < epi.n; s++)
            d.operand[s] = epi.s[s].operand >= 0 ? in[epi.s[s].operand] : NULL;
        kl_contract(L, &d);
    }
    return KN_OK;
}

/* ---- Einsum ---- */

/* kn_einsum_parse over the buffers' shapes. */
static kn_status ein_parse(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_einsum *p) {
    kn_type t[EIN_MAX_IN];
    const kn_type *tp[EIN_MAX_IN];
    for (int i = 0; i < n->nin && i < EIN_MAX_IN; i++) {
        t[i] = kn_type_make(in[i]->dtype, in[i]->rank, in[i]->dims);
        tp[i] = &t[i];
    }
    return kn_einsum_parse(kl_ctx(L), n, tp, p);
}

/* One loop per distinct label: the output's outside (in output order), the summed ones
 * inside; each operand is read at the offset its labels give (stride 0 on size-1 dims,
 * which broadcast). */
static kn_status lower_einsum(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    kn_einsum *p = &(kn_einsum){0};
    if (ein_parse(L, n, in, p)) return kl_ctx(L)->status;
    kn_kbuf *y = out[0];
    kn_dtype at = acc_dtype(y->dtype);
    int lv[EIN_LABELS], isout[EIN_LABELS] = {0}, nsum = 0;
    for (int d = 0; d < p->orank; d++) {
        lv[p->olab[d]] = kl_for(L, y->dims[d]);
        isout[p->olab[d]] = 1;
    }
    int acc = kl_decl(L, at, kx_const(L, at, 0));
    for (int l = 0; l < EIN_LABELS; l++)
        if (p->used[l] && !isout[l]) lv[l] = kl_for(L, p->size[l]), nsum++;
    kn_kx *prod = NULL;
    for (int i = 0; i < p->nin; i++) {
        int64_t st[KN_MAX_RANK];
        kn_strides(p->rank[i], in[i]->dims, st);
        kn_kx *off = kx_int(L, 0);
        for (int d = 0; d < p->rank[i]; d++)
            if (in[i]->dims[d] != 1) off = madd(L, off, var(L, lv[p->lab[i][d]]), st[d]);
        kn_kx *v = kx_load(L, in[i], off);
        if (!is_float(at)) v = kx_cast(L, at, v);
        prod = prod ? kx_bin(L, KX_MUL, prod, v) : v;
    }
    kl_set(L, acc, kx_add(L, var(L, acc), prod));
    kl_end_n(L, nsum);
    int ov[KN_MAX_RANK];
    for (int d = 0; d < p->orank; d++) ov[d] = lv[p->olab[d]];
    int64_t yst[KN_MAX_RANK];
    kn_strides(y->rank, y->dims, yst);
    kl_store(L, y, kx_offset(L, y->rank, ov, yst),
             is_float(at) ? var(L, acc) : kx_cast(L, KN_I64, var(L, acc)));
    kl_end_n(L, p->orank);
    return KN_OK;
}

/* ---- Det ---- */

/* LU with partial pivoting of each matrix, copied into a scratch buffer; the
 * determinant is the signed product of the pivots (0 at the first zero pivot). */
static kn_status lower_det(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    (void)n;
    kn_kbuf *x = in[0], *y = out[0];
    int64_t m = x->dims[x->rank - 1], mm = m * m;
    kn_dtype t = kx_compute_dtype(y->dtype);
    kn_kbuf *a = kl_scratch(L, t, mm > 0 ? mm : 1);
#define A(r, c) kx_load(L, a, madd(L, (c), (r), m))
    int vb = kl_for(L, y->numel);
    int vi = kl_for(L, mm);
    kl_store(L, a, var(L, vi), kx_load(L, x, madd(L, var(L, vi), var(L, vb), mm)));
    kl_end(L);
    int det = kl_decl(L, t, kx_const(L, t, 1)), live = kl_decl(L, KN_BOOL, kx_int(L, 1));
    int vc = kl_for(L, m);
    kn_kx *col = var(L, vc), *rest = kx_bin(L, KX_SUB, kx_int(L, m - 1), col);
    kl_if(L, var(L, live));
    int piv = kl_decl(L, KN_I64, col);
    int vr = kl_for_x(L, rest); /* rows col+1 .. m-1 */
    kn_kx *r = kx_add(L, kx_add(L, var(L, vr), col), kx_int(L, 1));
    kl_if(L, kx_bin(L, KX_GT, kx_un(L, KX_ABS, A(r, col)), kx_un(L, KX_ABS, A(var(L, piv), col))));
    kl_set(L, piv, kx_add(L, kx_add(L, var(L, vr), col), kx_int(L, 1)));
    kl_end_n(L, 2);
    kl_if(L, kx_bin(L, KX_EQ, A(var(L, piv), col), kx_const(L, t, 0)));
    kl_set(L, det, kx_const(L, t, 0));
    kl_set(L, live, kx_int(L, 0));
    kl_else(L);
    kl_if(L, kx_bin(L, KX_NE, var(L, piv), col));
    int vq = kl_for(L, m);
    kn_kx *q = var(L, vq);
    int tmp = kl_decl(L, t, A(col, q));
    kl_store(L, a, madd(L, q, col, m), A(var(L, piv), q));
    kl_store(L, a, madd(L, q, var(L, piv), m), var(L, tmp));
    kl_end(L);
    kl_set(L, det, kx_un(L, KX_NEG, var(L, det)));
    kl_end(L);
    kl_set(L, det, kx_bin(L, KX_MUL, var(L, det), A(col, col)));
    vr = kl_for_x(L, kx_bin(L, KX_SUB, kx_int(L, m - 1), col));
    r = kx_add(L, kx_add(L, var(L, vr), col), kx_int(L, 1));
    int f = kl_decl(L, t, kx_bin(L, KX_DIV, A(r, col), A(col, col)));
    vq = kl_for_x(L, kx_bin(L, KX_SUB, kx_int(L, m), col)); /* columns col .. m-1 */
    q = kx_add(L, var(L, vq), col);
    kl_store(L, a, madd(L, q, r, m),
             kx_bin(L, KX_SUB, A(r, q), kx_bin(L, KX_MUL, var(L, f), A(col, q))));
    kl_end_n(L, 3); /* for q, for r, else */
    kl_end_n(L, 2); /* if live, for col */
#undef A
    kl_store(L, y, var(L, vb), var(L, det));
    kl_end(L);
    return KN_OK;
}

/* ---- reduction views for the normalizations ---- */

/* x's axes split into kept (red[d] == 0) and reduced ones; v holds the loop var of each
 * axis while its loop is open. */
typedef struct rview {
    int rank, red[KN_MAX_RANK], v[KN_MAX_RANK];
    const int64_t *dims;
    int64_t st[KN_MAX_RANK], kst[KN_MAX_RANK], cnt;
} rview;

static void rv_init(rview *r, const kn_kbuf *x, const int *red) {
    r->rank = x->rank;
    r->dims = x->dims;
    kn_strides(x->rank, x->dims, r->st);
    r->cnt = 1;
    int64_t s = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        r->red[d] = red[d];
        r->kst[d] = red[d] ? 0 : s;
        if (red[d])
            r->cnt *= x->dims[d];
        else
            s *= x->dims[d];
    }
}

/* Opens loops over the reduced (reduced=1) or kept axes; returns how many. */
static int rv_open(kn_lower *L, rview *r, int reduced) {
    int k = 0;
    for (int d = 0; d < r->rank; d++)
        if (r->red[d] == reduced) r->v[d] = kl_for(L, r->dims[d]), k++;
    return k;
}

/* The element offset of the current position (all loops open). */
static kn_kx *rv_off(kn_lower *L, const rview *r) {
    return kx_offset(L, r->rank, r->v, r->st);
}

/* Row-major offset over the kept axes only (a per-row statistic or parameter). */
static kn_kx *rv_kept(kn_lower *L, const rview *r) {
    return kx_offset(L, r->rank, r->v, r->kst);
}

/* Declares the mean and population variance of x over the reduced axes at the current
 * kept position, in dtype t (two passes). */
static void rv_moments(kn_lower *L, rview *r, kn_kbuf *x, kn_dtype t, int *mean, int *vr) {
    kn_kx *cnt = kx_const(L, t, (double)(r->cnt > 0 ? r->cnt : 1));
    int s = kl_decl(L, t, kx_const(L, t, 0));
    int k = rv_open(L, r, 1);
    kl_set(L, s, kx_add(L, var(L, s), kx_load(L, x, rv_off(L, r))));
    kl_end_n(L, k);
    *mean = kl_decl(L, t, kx_bin(L, KX_DIV, var(L, s), cnt));
    int q = kl_decl(L, t, kx_const(L, t, 0));
    k = rv_open(L, r, 1);
    kn_kx *d1 = kx_bin(L, KX_SUB, kx_load(L, x, rv_off(L, r)), var(L, *mean));
    kn_kx *d2 = kx_bin(L, KX_SUB, kx_load(L, x, rv_off(L, r)), var(L, *mean));
    kl_set(L, q, kx_fma(L, d1, d2, var(L, q)));
    kl_end_n(L, k);
    *vr = kl_decl(L, t, kx_bin(L, KX_DIV, var(L, q), kx_const(L, t, (double)r->cnt)));
}

/* ---- BatchNormalization, InstanceNormalization, LayerNormalization, MVN ---- */

/* Per-channel parameters (C x D1 x ... with spatial=0 before opset 9), statistics over
 * the batch and spatial axes in training mode, which also writes the running and saved
 * statistics. */
static kn_status lower_batchnorm(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *scale = in[1], *bias = in[2], *mean = in[3], *vr = in[4];
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    double mom = kn_attr_float(cx, n, "momentum", 0.9f);
    int train = kn_bn_training(cx, n);
    int64_t spatial = n->opset < 9 ? kn_attr_int(cx, n, "spatial", 1) : 1;
    if (kn_failed(cx)) return cx->status;
    kn_dtype t = kx_compute_dtype(out[0]->dtype);
    int red[KN_MAX_RANK] = {1};
    for (int d = 2; d < x->rank; d++) red[d] = spatial != 0;
    rview r;
    rv_init(&r, x, red);
    int nk = rv_open(L, &r, 0), m, v;
    kn_kx *pi = rv_kept(L, &r);
    if (train) {
        rv_moments(L, &r, x, t, &m, &v);
    } else {
        m = kl_decl(L, t, kx_load(L, mean, pi));
        v = kl_decl(L, t, kx_load(L, vr, pi));
    }
    int k = kl_decl(L, t,
                    kx_bin(L, KX_DIV, kx_load(L, scale, pi),
                           kx_un(L, KX_SQRT, kx_add(L, var(L, v), kx_const(L, t, eps)))));
    int nr = rv_open(L, &r, 1);
    kn_kx *xv = kx_bin(L, KX_SUB, kx_load(L, x, rv_off(L, &r)), var(L, m));
    kl_store(L, out[0], rv_off(L, &r), kx_fma(L, xv, var(L, k), kx_load(L, bias, pi)));
    kl_end_n(L, nr);
    if (train) {
        kn_kx *stat[5] = {NULL, NULL, NULL, var(L, m), var(L, v)};
        for (int j = 1; j < 3; j++)
            stat[j] = kx_fma(L, kx_load(L, j == 1 ? mean : vr, pi), kx_const(L, t, mom),
                             kx_bin(L, KX_MUL, var(L, j == 1 ? m : v), kx_const(L, t, 1 - mom)));
        for (int j = 1; j < n->nout && j < 5; j++)
            if (out[j]) kl_store(L, out[j], pi, stat[j]);
    }
    kl_end_n(L, nk);
    return KN_OK;
}

/* The normalizations over a set of reduced axes: y = (x - mean) * k + b with per-op k and
 * b. InstanceNormalization reduces axes 2.., LayerNormalization axis.. (and writes Mean
 * and InvStdDev), MeanVarianceNormalization its axes. */
static kn_status lower_norm(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    if (kl_layernorm_rows(L, n, in, out)) return KN_OK; /* last axis, vectors (rows.c) */
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *y = out[0];
    int red[KN_MAX_RANK] = {0}, ax = 0;
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    if (n->op == KN_OP_INSTANCENORMALIZATION) {
        for (int d = 2; d < x->rank; d++) red[d] = 1;
    } else if (n->op == KN_OP_LAYERNORMALIZATION) {
        if (kn_axis(cx, n, kn_attr_int(cx, n, "axis", -1), x->rank, 0, &ax)) return cx->status;
        for (int d = ax; d < x->rank; d++) red[d] = 1;
    } else {
        if (kn_mvn_axes(cx, n, x->rank, red)) return cx->status;
    }
    if (kn_failed(cx)) return cx->status;
    kn_dtype t = kx_compute_dtype(y->dtype);
    rview r;
    rv_init(&r, x, red);
    int nk = rv_open(L, &r, 0), m, v, k;
    rv_moments(L, &r, x, t, &m, &v);
    kn_kx *sd = kx_un(L, KX_SQRT, kx_add(L, var(L, v), kx_const(L, t, eps)));
    if (n->op == KN_OP_MEANVARIANCENORMALIZATION)
        k = kl_decl(L, t,
                    kx_bin(L, KX_DIV, kx_const(L, t, 1),
                           kx_add(L, kx_un(L, KX_SQRT, var(L, v)), kx_const(L, t, 1e-9))));
    else if (n->op == KN_OP_INSTANCENORMALIZATION)
        k = kl_decl(L, t, kx_bin(L, KX_DIV, kx_load(L, in[1], var(L, r.v[1])), sd));
    else
        k = kl_decl(L, t, kx_bin(L, KX_DIV, kx_const(L, t, 1), sd));
    int nr = rv_open(L, &r, 1);
    kn_kx *xv = kx_bin(L, KX_SUB, kx_load(L, x, rv_off(L, &r)), var(L, m)), *yv;
    if (n->op == KN_OP_INSTANCENORMALIZATION) {
        yv = kx_fma(L, xv, var(L, k), kx_load(L, in[2], var(L, r.v[1])));
    } else if (n->op == KN_OP_LAYERNORMALIZATION) {
        yv = kx_bin(L, KX_MUL, kx_bin(L, KX_MUL, xv, var(L, k)),
                    kx_load(L, in[1], kx_bcast_offset(L, in[1], r.rank, r.dims, r.v)));
        if (in[2])
            yv = kx_add(L, yv, kx_load(L, in[2], kx_bcast_offset(L, in[2], r.rank, r.dims, r.v)));
    } else {
        yv = kx_bin(L, KX_MUL, xv, var(L, k));
    }
    kl_store(L, y, rv_off(L, &r), yv);
    kl_end_n(L, nr);
    if (n->op == KN_OP_LAYERNORMALIZATION) {
        if (n->nout > 1 && out[1]) kl_store(L, out[1], rv_kept(L, &r), var(L, m));
        if (n->nout > 2 && out[2]) kl_store(L, out[2], rv_kept(L, &r), var(L, k));
    }
    kl_end_n(L, nk);
    return KN_OK;
}

/* GroupNormalization: per (batch, group) row of C/G channels x spatial, contiguous:
 * mean, variance, then y = (x - mean) / sqrt(var + eps) * scale + bias with scale and
 * bias per group (opset 18) or per channel (21). */
static kn_status lower_groupnorm(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *y = out[0];
    double eps = kn_attr_float(cx, n, "epsilon", 1e-5f);
    int64_t g = kn_attr_int(cx, n, "num_groups", 1);
    if (kn_failed(cx)) return cx->status;
    int64_t c = x->dims[1], cg = c / g, inner = kn_prod(x->dims, 2, x->rank), len = cg * inner;
    kn_dtype t = kx_compute_dtype(y->dtype);
    int vr = kl_for(L, x->dims[0] * g);
    kn_kx *base = kx_mul(L, var(L, vr), kx_int(L, len));
    int s = kl_decl(L, t, kx_const(L, t, 0));
    int vi = kl_for(L, len);
    kl_set(L, s, kx_add(L, var(L, s), kx_load(L, x, kx_add(L, base, var(L, vi)))));
    kl_end(L);
    int m = kl_decl(L, t, kx_bin(L, KX_DIV, var(L, s), kx_const(L, t, len ? (double)len : 1)));
    int q = kl_decl(L, t, kx_const(L, t, 0));
    vi = kl_for(L, len);
    kn_kx *d = kx_bin(L, KX_SUB, kx_load(L, x, kx_add(L, base, var(L, vi))), var(L, m));
    int dv = kl_decl(L, t, d);
    kl_set(L, q, kx_fma(L, var(L, dv), var(L, dv), var(L, q)));
    kl_end(L);
    kn_kx *vq = kx_bin(L, KX_DIV, var(L, q), kx_const(L, t, len ? (double)len : 1));
    int k = kl_decl(L, t,
                    kx_bin(L, KX_DIV, kx_const(L, t, 1),
                           kx_un(L, KX_SQRT, kx_add(L, vq, kx_const(L, t, eps)))));
    int vc = kl_for(L, cg), vj = kl_for(L, inner);
    kn_kx *grp = kx_bin(L, KX_MOD, var(L, vr), kx_int(L, g));
    kn_kx *p = n->opset >= 21 ? kx_add(L, kx_mul(L, grp, kx_int(L, cg)), var(L, vc)) : grp;
    kn_kx *at = kx_add(L, base, kx_add(L, kx_mul(L, var(L, vc), kx_int(L, inner)), var(L, vj)));
    kn_kx *xv = kx_bin(L, KX_MUL, kx_bin(L, KX_SUB, kx_load(L, x, at), var(L, m)), var(L, k));
    kl_store(L, y, at, kx_fma(L, xv, kx_load(L, in[1], p), kx_load(L, in[2], p)));
    kl_end_n(L, 3);
    return KN_OK;
}

/* ---- LRN ---- */

static kn_status lower_lrn(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *y = out[0];
    kn_lrn_attrs a;
    if (kn_lrn_attrs_get(cx, n, &a)) return cx->status;
    kn_dtype t = kx_compute_dtype(y->dtype);
    int64_t c = x->dims[1], inner = kn_prod(x->dims, 2, x->rank), lo = (a.size - 1) / 2;
    int vb = kl_for(L, x->dims[0]), vc = kl_for(L, c), vi = kl_for(L, inner);
    int sq = kl_decl(L, t, kx_const(L, t, 0));
    int vj = kl_for(L, a.size);
    kn_kx *ch = kx_add(L, kx_add(L, var(L, vc), var(L, vj)), kx_int(L, -lo));
    kl_if(L, both(L, kx_bin(L, KX_GE, ch, kx_int(L, 0)), kx_bin(L, KX_LT, ch, kx_int(L, c))));
    kn_kx *at = madd(L, var(L, vi), madd(L, ch, var(L, vb), c), inner);
    kl_set(L, sq, kx_fma(L, kx_load(L, x, at), kx_load(L, x, at), var(L, sq)));
    kl_end_n(L, 2);
    kn_kx *xi = madd(L, var(L, vi), madd(L, var(L, vc), var(L, vb), c), inner);
    kn_kx *den = kx_bin(
        L, KX_POW,
        kx_fma(L, kx_const(L, t, a.alpha / (double)a.size), var(L, sq), kx_const(L, t, a.bias)),
        kx_const(L, t, a.beta));
    kl_store(L, y, xi, kx_bin(L, KX_DIV, kx_load(L, x, xi), den));
    kl_end_n(L, 3);
    return KN_OK;
}

/* ---- Softmax, LogSoftmax, Hardmax ---- */

/* x as (outer, len, inner) around the axis (before opset 13, coerced to 2-D at it: len
 * is the product of the trailing dims and inner 1); per row a max pass, a sum pass
 * (Softmax, LogSoftmax) and the write pass. Hardmax keeps the first maximum. */
static kn_status lower_softmax(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                               kn_kbuf *const *out) {
    if (kl_softmax_rows(L, n, in, out)) return KN_OK; /* last axis, vectors (rows.c) */
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *x = in[0], *y = out[0];
    int64_t outer, len, inner;
    if (kn_softmax_view(cx, n, x->rank, x->dims, &outer, &len, &inner)) return cx->status;
    kn_dtype t = kx_compute_dtype(y->dtype);
    int vo = kl_for(L, outer), vi = kl_for(L, inner), vk;
#define AT() madd(L, madd(L, var(L, vi), var(L, vo), len *inner), var(L, vk), inner)
    int mx = kl_decl(L, t, kx_const(L, t, -INFINITY));
    if (n->op == KN_OP_HARDMAX) {
        int arg = kl_decl(L, KN_I64, kx_int(L, 0));
        vk = kl_for(L, len);
        kl_if(L, kx_bin(L, KX_LOR, kx_bin(L, KX_GT, kx_load(L, x, AT()), var(L, mx)),
                        kx_bin(L, KX_EQ, var(L, vk), kx_int(L, 0))));
        kl_set(L, mx, kx_load(L, x, AT()));
        kl_set(L, arg, var(L, vk));
        kl_end_n(L, 2);
        vk = kl_for(L, len);
        kl_store(L, y, AT(), kx_cast(L, t, kx_bin(L, KX_EQ, var(L, vk), var(L, arg))));
        kl_end_n(L, 3);
        return KN_OK;
    }
    vk = kl_for(L, len);
    kl_set(L, mx, kx_bin(L, KX_MAX, kx_load(L, x, AT()), var(L, mx)));
    kl_end(L);
    int s = kl_decl(L, t, kx_const(L, t, 0));
    vk = kl_for(L, len);
    kl_set(
        L, s,
        kx_add(L, var(L, s), kx_un(L, KX_EXP, kx_bin(L, KX_SUB, kx_load(L, x, AT()), var(L, mx)))));
    kl_end(L);
    kn_kx *yv;
    if (n->op == KN_OP_SOFTMAX) {
        int rs = kl_decl(L, t, kx_bin(L, KX_DIV, kx_const(L, t, 1), var(L, s)));
        vk = kl_for(L, len);
        yv = kx_bin(L, KX_MUL, kx_un(L, KX_EXP, kx_bin(L, KX_SUB, kx_load(L, x, AT()), var(L, mx))),
                    var(L, rs));
    } else {
        int lse = kl_decl(L, t, kx_add(L, var(L, mx), kx_un(L, KX_LOG, var(L, s))));
        vk = kl_for(L, len);
        yv = kx_bin(L, KX_SUB, kx_load(L, x, AT()), var(L, lse));
    }
    kl_store(L, y, AT(), yv);
    kl_end_n(L, 3);
#undef AT
    return KN_OK;
}

const kn_oplower kn_lower_nn[] = {
    {KN_OP_CONV, lower_conv},
    {KN_OP_CONVTRANSPOSE, lower_conv},
    {KN_OP_DEFORMCONV, lower_deformconv},
    {KN_OP_AVERAGEPOOL, lower_pool},
    {KN_OP_MAXPOOL, lower_pool},
    {KN_OP_LPPOOL, lower_pool},
    {KN_OP_GLOBALAVERAGEPOOL, lower_global_pool},
    {KN_OP_GLOBALMAXPOOL, lower_global_pool},
    {KN_OP_GLOBALLPPOOL, lower_global_pool},
    {KN_OP_MAXUNPOOL, lower_maxunpool},
    {KN_OP_GEMM, lower_gemm},
    {KN_OP_MATMUL, lower_matmul},
    {KN_OP_EINSUM, lower_einsum},
    {KN_OP_DET, lower_det},
    {KN_OP_BATCHNORMALIZATION, lower_batchnorm},
    {KN_OP_INSTANCENORMALIZATION, lower_norm},
    {KN_OP_GROUPNORMALIZATION, lower_groupnorm},
    {KN_OP_LAYERNORMALIZATION, lower_norm},
    {KN_OP_MEANVARIANCENORMALIZATION, lower_norm},
    {KN_OP_LRN, lower_lrn},
    {KN_OP_SOFTMAX, lower_softmax},
    {KN_OP_LOGSOFTMAX, lower_softmax},
    {KN_OP_HARDMAX, lower_softmax},
    {KN_OP_COUNT, 0},
};
