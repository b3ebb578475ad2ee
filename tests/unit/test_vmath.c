/* The vmath pass's polynomials (passes/vmath.c) against libm: the kernel-IR
 * expression kn_vmath_expand builds for exp, tanh and erf is evaluated in f32 (each
 * node rounded to float, fma fused, as the emitters compute it) on every float in
 * narrow intervals around where the approximations change behaviour, on floats spread
 * over the whole useful range (every 4093rd bit pattern), and on special values; the
 * reference is libm in double. Bounds: the ONNX tests' tolerance (1e-3 relative plus
 * 1e-5 absolute) always, and the tighter figures vmath.c documents. */
#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/vmath.h"
#include "test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static float eval(const kn_kx *x, float v) {
    float a = x->a[0] ? eval(x->a[0], v) : 0, b = x->a[1] ? eval(x->a[1], v) : 0;
    switch (x->op) {
    case KX_CONST: return (float)x->f;
    case KX_VAR: return v;
    case KX_FLOOR: return floorf(a);
    case KX_ADD: return a + b;
    case KX_SUB: return a - b;
    case KX_MUL: return a * b;
    case KX_DIV: return a / b;
    case KX_MIN: return isnan(a) ? a : isnan(b) ? b : a < b ? a : b; /* as the emitters */
    case KX_MAX: return isnan(a) ? a : isnan(b) ? b : a > b ? a : b;
    case KX_FMA: return fmaf(a, b, eval(x->a[2], v));
    case KX_LDEXP: return isnan(b) ? NAN : ldexpf(a, (int)b);
    case KX_CAST: return a;
    case KX_NEG: return -a;
    case KX_LT: return a < b;
    case KX_SELECT: return a != 0 ? b : eval(x->a[2], v);
    default: fprintf(stderr, "op %d not evaluated\n", (int)x->op); return NAN;
    }
}

typedef struct fn_case {
    kn_kx_op op;
    double (*ref)(double);
    double abs_bound, rel_bound; /* the documented accuracy */
    int form;                    /* 0: op(x); 1: sigmoid 1 / (1 + exp(-x)); 2: SiLU x * sigmoid */
} fn_case;

static double sigmoid_ref(double x) {
    return 1 / (1 + exp(-x));
}

static double silu_ref(double x) {
    return x / (1 + exp(-x));
}

static float bits_to_f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static double worst_tol, worst_abs, worst_rel;
static long checked, bad;

static void check_one(const fn_case *c, const kn_kx *e, float x) {
    float y = eval(e, x);
    double r = c->ref((double)x);
    checked++;
    if (isnan(r)) {
        if (!isnan(y)) bad++;
        return;
    }
    if (isinf(r) || isinf(y)) {
        if (y != (float)r) bad++;
        return;
    }
    double err = fabs((double)y - r);
    double tol = err / (1e-5 + 1e-3 * fabs(r));
    if (tol > worst_tol) worst_tol = tol;
    if (err > worst_abs) worst_abs = err;
    if (fabs(r) > 1e-30 && err / fabs(r) > worst_rel) worst_rel = err / fabs(r);
    bool ok =
        tol <= 1.0 && (c->op == KX_EXP && !c->form
                           ? (fabs(r) < 0x1p-126 ? err < 0x1p-148 : err <= c->rel_bound * fabs(r))
                           : err <= c->abs_bound + c->rel_bound * fabs(r));
    if (!ok) {
        if (bad < 5) fprintf(stderr, "op %d: x=%.9g got %.9g want %.9g\n", (int)c->op, x, y, r);
        bad++;
    }
}

/* every float in [lo, hi] whose bit pattern is a multiple of step from lo's */
static void sweep(const fn_case *c, const kn_kx *e, float lo, float hi, uint32_t step) {
    for (float x = lo; x <= hi;) {
        check_one(c, e, x);
        uint32_t u = f_to_bits(x);
        if (x < 0) { /* towards zero, then through +0 */
            if (u - 0x80000000u < step) {
                x = 0.0f;
                continue;
            }
            x = bits_to_f(u - step);
        } else {
            x = bits_to_f(u + step);
        }
    }
}

int main(void) {
    static const fn_case cases[] = {
        {KX_EXP, exp, 0, 2e-7, 0},          {KX_TANH, tanh, 1e-6, 0, 0},
        {KX_ERF, erf, 1e-6, 0, 0},          {KX_EXP, sigmoid_ref, 1e-30, 2e-7, 1},
        {KX_EXP, silu_ref, 1e-30, 2e-7, 2},
    };
    kn_kprog p = {0};
    p.arena = kn_arena_create();
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_lower *L = kl_builder(&cx, &p);
    kn_kx arg = {.op = KX_VAR, .dtype = KN_F32, .var = 0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const fn_case *c = &cases[i];
        kn_kx call = {.op = c->op, .dtype = KN_F32, .a = {&arg}};
        /* sigmoid and SiLU as ir/lower/epilogue.c writes them */
        kn_kx neg = {.op = KX_NEG, .dtype = KN_F32, .a = {&arg}};
        kn_kx one = {.op = KX_CONST, .dtype = KN_F32, .f = 1.0};
        kn_kx en = {.op = KX_EXP, .dtype = KN_F32, .a = {&neg}};
        kn_kx den = {.op = KX_ADD, .dtype = KN_F32, .a = {&one, &en}};
        kn_kx sig = {.op = KX_DIV, .dtype = KN_F32, .a = {&one, &den}};
        kn_kx silu = {.op = KX_MUL, .dtype = KN_F32, .a = {&arg, &sig}};
        kn_kx *e = kn_vmath_expand(L, c->form == 1 ? &sig : c->form == 2 ? &silu : &call);
        /* the expansion, not libm's exp inside it */
        CHECK(!e || !c->form || e->op == KX_DIV);
        CHECK(e != NULL);
        if (!e) continue;
        worst_tol = worst_abs = worst_rel = 0;
        checked = bad = 0;
        float range = c->op == KX_EXP ? 104.0f : 10.0f;
        sweep(c, e, -range, range, 4093); /* the whole range */
        sweep(c, e, -0.01f, 0.01f, 4093); /* near 0, down to subnormals */
        sweep(c, e, 0.5f, 0.5078125f, 1); /* every float of one binade's slice */
        sweep(c, e, -3.99f, -3.97f, 1);   /* near erf's clamp */
        if (c->op == KX_EXP && !c->form) {
            sweep(c, e, 88.0f, 89.5f, 1);     /* overflow to infinity */
            sweep(c, e, -104.0f, -86.0f, 13); /* subnormals and underflow */
        }
        static const float special[] = {0.0f,   -0.0f,  INFINITY, -INFINITY, NAN,     1e30f,
                                        -1e30f, 1e-40f, -1e-40f,  FLT_MAX,   -FLT_MAX};
        for (size_t s = 0; s < sizeof special / sizeof *special; s++) check_one(c, e, special[s]);
        printf("op %d form %d: %ld floats, worst %.3g of the test tolerance, abs %.3g, rel %.3g, "
               "%ld bad\n",
               (int)c->op, c->form, checked, worst_tol, worst_abs, worst_rel, bad);
        CHECK(bad == 0);
        CHECK(checked > 1000000);
    }
    kl_builder_destroy(L);
    kn_arena_destroy(p.arena);
    return TEST_DONE();
}
