/* The vmath pass: exp, tanh and erf on f32 as polynomials in the kernel IR.
 * requires: kir; changes expressions only (no buffers, no loops).
 *
 * Lowerings write KX_EXP, KX_TANH and KX_ERF; emitters would call libm for them,
 * one lane at a time, which keeps a loop of them (Softmax, GELU, Sigmoid, SiLU) from
 * vectorizing. This pass replaces each f32 one (scalar or vector) by arithmetic the
 * emitters turn into SIMD code:
 *
 *   exp(x):  x clamped to [-103, 89] (below: 0 or a subnormal, above: infinity),
 *            n = floor(x log2(e) + 1/2), r = x - n ln2 (ln2 in two parts, Cephes),
 *            exp(r) = 1 + r + r^2 p(r) with Cephes expf's degree-5 p, then
 *            ldexp(exp(r), n) (KX_LDEXP, exact for the n the clamp allows);
 *   tanh(x): x p(x^2) / q(x^2), x clamped to +-7.9053 (tanh is 1 in f32 beyond),
 *            degrees 13/6 (Eigen's fast tanh);
 *   erf(x):  x p(x^2) / q(x^2), x clamped to +-4, degrees 13/8 (Eigen's fast erf).
 *
 * Checked against libm over every f32 in a range by tests/unit/test_vmath.c: the
 * largest error is below 1e-6 absolute (tanh, erf) and 2e-7 relative (exp, sigmoid,
 * SiLU), well inside the 1e-3 relative / 1e-5 absolute tolerance of the ONNX tests. NaN stays
 * NaN (the clamps are comparisons a NaN fails). Sigmoid and SiLU are written with exp
 * by their lowerings, 1 / (1 + exp(-v)) and v * that; this pass recognizes both and
 * expands them as 1 / (1 + exp(-v)) and v / (1 + exp(-v)), exp(-v) computed without
 * the negation and with a degree-4 p (exp_p4: one multiply-add fewer, the same
 * worst error in f32): SiLU epilogues were a fifth of EfficientNet-B0's run, and
 * their exp is bound by the multiply-adds (docs/benchmarks.md).
 *
 * The argument, the clamped argument and the reduced one are held in new locals
 * declared just before the statement (a store, declaration, assignment or if), so
 * each is computed once. Where the call sits in a branch of a select (or the right
 * side of && / ||) its argument may be valid only when the branch is taken, so there
 * the expansion repeats it as a tree instead (and keeps libm when it is larger than
 * KV_MAX_ARG nodes). Loop extents and while conditions are left as they are. */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "passes/pass.h"
#include "passes/vmath.h"

#include <math.h>
#include <string.h>

enum { KV_MAX_ARG = 48 };

typedef struct vctx {
    kn_kprog *p;
    kn_lower *L;
    kn_ks *block; /* where locals go: before block->body[at] (NULL: repeat trees) */
    int at;
} vctx;

static int size_of(const kn_kx *x) {
    if (!x) return 0;
    return 1 + size_of(x->a[0]) + size_of(x->a[1]) + size_of(x->a[2]);
}

/* x held in a new local declared before the statement being rewritten, or x itself */
static kn_kx *bind(vctx *V, kn_kx *x) {
    if (!V->block || x->op == KX_VAR || x->op == KX_CONST) return x;
    int v = kn_kprog_new_var(V->p, x->dtype, kx_lanes(x));
    kn_block_insert(V->p, V->block, V->at++, kn_ks_decl(V->p, v, x));
    return kx_var(V->L, v);
}

static kn_kx *C(kn_lower *L, double v) {
    return kx_const(L, KN_F32, v);
}

/* c[0] x^(n-1) + ... + c[n-1] by Horner with fused multiply-adds */
static kn_kx *horner(kn_lower *L, kn_kx *x, const double *c, int n) {
    kn_kx *r = C(L, c[0]);
    for (int i = 1; i < n; i++) r = kx_fma(L, r, x, C(L, c[i]));
    return r;
}

/* x clamped to [lo, hi] with comparisons: (hi < x ? hi : x), then (t < lo ? lo : t). A
 * NaN x compares false and stays NaN, as KX_MIN/KX_MAX keep it, but each select is one
 * instruction where the target has min/max (x86 minps returns its second operand
 * when either is NaN), where the NaN-propagating KX_MIN/KX_MAX took four (two
 * compares, a mask or, a blend). */
static kn_kx *clamp(vctx *V, kn_kx *x, double lo, double hi) {
    kn_lower *L = V->L;
    x = bind(V, x);
    kn_kx *t = bind(V, kx_select(L, kx_bin(L, KX_LT, C(L, hi), x), C(L, hi), x));
    return kx_select(L, kx_bin(L, KX_LT, t, C(L, lo)), C(L, lo), t);
}

static const double exp_p[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                               4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};

static kn_kx *v_exp(vctx *V, kn_kx *x) {
    const double *p = exp_p;
    kn_lower *L = V->L;
    kn_kx *xc = bind(V, clamp(V, x, -103.0, 89.0));
    kn_kx *n = bind(V, kx_un(L, KX_FLOOR, kx_fma(L, xc, C(L, 1.44269504088896341), C(L, 0.5))));
    kn_kx *r = kx_fma(L, n, C(L, -0.693359375), xc);
    r = bind(V, kx_fma(L, n, C(L, 2.12194440e-4), r));
    kn_kx *y = kx_fma(L, horner(L, r, p, 6), kx_bin(L, KX_MUL, r, r), kx_add(L, r, C(L, 1)));
    return kx_bin(L, KX_LDEXP, y, n);
}

/* x p(x^2) / q(x^2) on x clamped to [-lim, lim] */
static kn_kx *v_ratio(vctx *V, kn_kx *x, double lim, const double *p, int np, const double *q,
                      int nq) {
    kn_lower *L = V->L;
    kn_kx *xc = bind(V, clamp(V, x, -lim, lim));
    kn_kx *x2 = bind(V, kx_bin(L, KX_MUL, xc, xc));
    return kx_bin(L, KX_DIV, kx_bin(L, KX_MUL, xc, horner(L, x2, p, np)), horner(L, x2, q, nq));
}

static kn_kx *v_tanh(vctx *V, kn_kx *x) {
    static const double p[] = {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                               5.12229709037114e-08,  1.48572235717979e-05, 6.37261928875436e-04,
                               4.89352455891786e-03};
    static const double q[] = {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                               4.89352518554385e-03};
    return v_ratio(V, x, 7.90531110763549805, p, 7, q, 4);
}

static kn_kx *v_erf(vctx *V, kn_kx *x) {
    static const double p[] = {-2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
                               -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02};
    static const double q[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02};
    return v_ratio(V, x, 4.0, p, 7, q, 5);
}

/* exp(r) = 1 + r + r^2 p(r) on |r| <= ln2/2 with p of degree 4: fitted here (weighted
 * least squares on the relative error of exp, iterated towards minimax), the
 * polynomial's own relative error 3.2e-9, under f32's rounding (6e-8), where Cephes'
 * degree-5 exp_p has 5e-11: evaluated in f32 both err by at most 1.1e-7. For the
 * sigmoid forms only: one multiply-add fewer where an exp is 12 of them (EfficientNet-B0's
 * SiLU epilogues, multiply-add bound on Zen 4); exp itself keeps exp_p (Softmax's bits). */
static const double exp_p4[] = {1.3813760066E-3, 8.3691239318E-3, 4.1668427658E-2, 1.6666517258E-1,
                                4.9999993220E-1};

/* exp(-v), every step the negation of exp(-v)'s as v_exp computes it but with exp_p4
 * (without the negation): v clamped to [-89, 103], n = floor(-v log2(e) + 1/2), q = v +
 * n ln2 = -r, exp(r) = 1 - q + q^2 p(-q) (p's odd-degree coefficients negated). */
static kn_kx *v_exp_neg(vctx *V, kn_kx *v) {
    kn_lower *L = V->L;
    enum { NP = sizeof exp_p4 / sizeof *exp_p4 };
    double pn[NP];
    for (int i = 0; i < NP; i++) pn[i] = (NP - 1 - i) % 2 ? -exp_p4[i] : exp_p4[i];
    kn_kx *vc = bind(V, clamp(V, v, -89.0, 103.0));
    kn_kx *n = bind(V, kx_un(L, KX_FLOOR, kx_fma(L, vc, C(L, -1.44269504088896341), C(L, 0.5))));
    kn_kx *q = kx_fma(L, n, C(L, 0.693359375), vc);
    q = bind(V, kx_fma(L, n, C(L, -2.12194440e-4), q));
    kn_kx *y = kx_fma(L, horner(L, q, pn, NP), kx_bin(L, KX_MUL, q, q), kx_sub(L, C(L, 1), q));
    return kx_bin(L, KX_LDEXP, y, n);
}

static bool is_one(const kn_kx *x) {
    return x->op == KX_CONST && x->dtype == KN_F32 && x->f == 1.0;
}

/* v when x is sigmoid(v) = 1 / (1 + exp(-v)) as the lowerings write it
 * (ir/lower/epilogue.c), else NULL */
static kn_kx *sigmoid_arg(const kn_kx *x) {
    if (x->op != KX_DIV || x->dtype != KN_F32 || !is_one(x->a[0])) return NULL;
    const kn_kx *d = x->a[1];
    if (d->op != KX_ADD) return NULL;
    const kn_kx *e = is_one(d->a[0]) ? d->a[1] : is_one(d->a[1]) ? d->a[0] : NULL;
    if (!e || e->op != KX_EXP || e->a[0]->op != KX_NEG) return NULL;
    return e->a[0]->a[0];
}

/* sigmoid(v) as 1 / (1 + exp(-v)) and SiLU, v * sigmoid(v), as v / (1 + exp(-v)) (one
 * multiply fewer), exp(-v) by v_exp_neg; `arg` rewrites v first (NULL: v as it is).
 * NULL when x is neither. */
static kn_kx *expand_sigmoid(vctx *V, kn_kx *x, kn_kx *(*arg)(vctx *, kn_kx *)) {
    if (x->dtype != KN_F32) return NULL;
    kn_kx *v = sigmoid_arg(x), *num = NULL;
    if (!v && x->op == KX_MUL) {
        for (int i = 0; i < 2 && !v; i++) {
            kn_kx *s = sigmoid_arg(x->a[i]);
            if (s && kn_kx_equal(s, x->a[1 - i])) v = s, num = s;
        }
    }
    if (!v || (!V->block && size_of(v) > KV_MAX_ARG)) return NULL;
    if (arg) v = arg(V, v);
    v = bind(V, v);
    kn_lower *L = V->L;
    return kx_bin(L, KX_DIV, num ? v : C(L, 1), kx_add(L, C(L, 1), v_exp_neg(V, v)));
}

static kn_kx *expand(vctx *V, kn_kx *x) {
    if (x->dtype != KN_F32 || (!V->block && size_of(x->a[0]) > KV_MAX_ARG)) return NULL;
    switch (x->op) {
    case KX_EXP: return v_exp(V, x->a[0]);
    case KX_TANH: return v_tanh(V, x->a[0]);
    case KX_ERF: return v_erf(V, x->a[0]);
    default: return NULL;
    }
}

kn_kx *kn_vmath_expand(kn_lower *L, kn_kx *x) {
    vctx V = {L->p, L, NULL, 0};
    kn_kx *s = expand_sigmoid(&V, x, NULL);
    return s ? s : expand(&V, x);
}

static kn_kx *rewrite(vctx *V, kn_kx *x, bool guarded);

static kn_kx *rewrite_arg(vctx *V, kn_kx *v) {
    return rewrite(V, v, !V->block);
}

/* x with its calls expanded, children first; `guarded`: x is evaluated only under a
 * condition (a select's branch, the right side of && or ||) */
static kn_kx *rewrite(vctx *V, kn_kx *x, bool guarded) {
    if (!x) return NULL;
    kn_ks *blk = V->block;
    if (guarded) V->block = NULL;
    kn_kx *sig = expand_sigmoid(V, x, rewrite_arg);
    V->block = blk;
    if (sig) return sig;
    kn_kx *a[3];
    bool changed = false;
    for (int i = 0; i < 3; i++) {
        bool g = guarded || (x->op == KX_SELECT && i > 0) ||
                 ((x->op == KX_LAND || x->op == KX_LOR) && i == 1);
        a[i] = rewrite(V, x->a[i], g);
        changed |= a[i] != x->a[i];
    }
    kn_kx *y = x;
    if (changed) {
        y = kn_arena_alloc(V->p->arena, sizeof *y);
        KN_ASSERT(y);
        *y = *x;
        memcpy(y->a, a, sizeof a);
    }
    kn_ks *block = V->block;
    if (guarded) V->block = NULL;
    kn_kx *r = expand(V, y);
    V->block = block;
    return r ? r : y;
}

static void rewrite_block(vctx *V, kn_ks *b) {
    for (int i = 0; i < b->n; i++) {
        kn_ks *s = b->body[i];
        V->block = b;
        V->at = i;
        switch (s->kind) {
        case KS_STORE:
        case KS_DECL:
        case KS_SET: s->value = rewrite(V, s->value, false); break;
        case KS_IF: s->cond = rewrite(V, s->cond, false); break;
        default: break;
        }
        int here = V->at; /* s, after the locals inserted before it */
        for (int j = 0; j < s->n; j++)
            if (s->body[j]) rewrite_block(V, s->body[j]);
        i = here;
    }
}

/* ---- division by a constant (kn_vmath_div_const) ----
 *
 * Helium (MVE) has no vector divide, so QuantizeLinear's v / s (ONNX: the float32
 * quotient, correctly rounded) is built from multiplies and fused multiply-adds, with
 * r = RN(1/s) computed here by a float32 division:
 *
 *   q0 = v r,  e0 = fma(-q0, s, v),  q1 = fma(e0, r, q0),
 *              e1 = fma(-q1, s, v),  q2 = fma(e1, r, q1) = RN(v / s).
 *
 * Why q2 is exact (z = v / s, u = 2^-24, no underflow or overflow: below):
 *  1. q0 = RN(v r) with r = (1/s)(1 + d), |d| <= u, so |q0 - z| <= u|z| + ulp(z)/2 < 2 ulp(z).
 *  2. The exact residual v - q0 s = s (z - q0); e0 is it rounded (relative error <= u),
 *     so q0 + e0 r = z + (z - q0)(d + d' + d d'), within 2 ulp * 2^-23 = 2^-22 ulp(z) of z:
 *     its rounding q1 is RD(z) or RU(z), a faithful quotient.
 *  3. For a faithful q1 the residual v - q1 s is a float32 (Boldo and Daumas: the
 *     remainder of a faithful quotient is representable), so e1 is exact, and by
 *     Markstein's theorem (Handbook of Floating-Point Arithmetic, Muller et al., 2nd ed.,
 *     Thm. 4.10 / Markstein 1990: q faithful, y within half an ulp of 1/b, r = a - bq exact
 *     give RN(q + r y) = RN(a / b)) q2 = RN(z), ties included (a quotient of two float32
 *     values is never a midpoint of float32, so the last rounding decides no tie).
 * Ranges: the caller clamps |v| to 2^22 s, so |z| <= 2^22, q s stays finite and nothing
 * overflows; an infinity never enters (it is clamped). With s >= 2^-64 and |z| >= 2^-2 (below
 * that every q_i rounds to the integer 0 whatever its last bits, which is all
 * QuantizeLinear uses) |v| >= 2^-66 and every nonzero exact residual is a multiple of
 * ulp(q) ulp(s) >= 2^-112, a normal float: no subnormal residual, so flush-to-zero
 * arithmetic (MVE's) gives the same bits. tests/quant/make_quantize_ties.py checks
 * ties, their float32 neighbours and random values for inexact scales through every
 * backend and on the M55 board. */
bool kn_vmath_div_const_ok(double s) {
    return s == (double)(float)s && s >= 0x1p-64 && s <= 0x1p64;
}

kn_kx *kn_vmath_div_const(kn_lower *L, kn_kx *v, double s) {
    KN_ASSERT(kn_vmath_div_const_ok(s));
    volatile float one = 1.0f, sf = (float)s; /* float32 arithmetic, not folded wider */
    float r = one / sf;
    kn_kx *kr = C(L, r), *ks = C(L, s);
    kn_kx *q = kx_bin(L, KX_MUL, v, kr);
    for (int i = 0; i < 2; i++) {
        kn_kx *e = kx_fma_exact(L, kx_un(L, KX_NEG, q), ks, v);
        q = kx_fma_exact(L, e, kr, q);
    }
    return q;
}

kn_status kn_kpass_vmath(kn_ctx *cx, kn_kprog *p) {
    vctx V = {p, kl_builder(cx, p), NULL, 0};
    for (int k = 0; k < p->nkernels; k++) rewrite_block(&V, p->kernels[k]->body);
    kl_builder_destroy(V.L);
    return KN_OK;
}
