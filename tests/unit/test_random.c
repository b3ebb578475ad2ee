/* Statistical tests of the random operators (RandomUniform, RandomNormal, their
 * *Like forms, Bernoulli, Multinomial). Their values come from the interpreter's
 * own stream, so the ONNX conformance data cannot match them bit for bit; this file
 * is their real test. Each op runs as a one-node model built in memory and is
 * checked for:
 *   - output dtype and shape, both at run time and from static inference (the
 *     `dtype` attribute, the *Like forms taking the input's shape and dtype);
 *   - attribute errors, with their messages;
 *   - the distribution: range, sample mean and variance, and one shape statistic,
 *     each within 5 standard errors of the value derived from the distribution's
 *     definition (a false failure has probability < 1e-6 per check);
 *   - determinism: the run seed alone fixes the output.
 * Every expected value is derived in the comment next to it, never copied from a
 * run. */
#include "ir/interp.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Z 5.0 /* tolerance in standard errors */

/* ---- one-node models ---- */

typedef struct spec {
    const char *op;
    int dtype;            /* `dtype` attribute (TensorProto.DataType); 0 = absent */
    int rank;             /* `shape` attribute of RandomUniform/Normal; -1 = absent */
    const int64_t *shape; /* its dims */
    int has_p;            /* set low/high (uniform) or mean/scale (normal) */
    double p0, p1;
    int64_t sample_size; /* Multinomial; 0 = absent */
    int in_dtype;        /* dtype of graph input x; 0 = the op has no input */
    int in_rank;
    const int64_t *in_dims;
} spec;

/* Table shorthands, one case a line. GEN: a generator with a `shape` attribute of
 * rank r (-1: no attribute); ON: an op on input x of dtype idt and shape d; the
 * P forms also set the float parameters (low, high or mean, scale); MULTI:
 * Multinomial with sample_size ss (0: no attribute). */
#define GEN(o, dt, r, sh)                                                                          \
    { .op = o, .dtype = dt, .rank = r, .shape = sh }
#define GENP(o, dt, r, sh, a, b)                                                                   \
    { .op = o, .dtype = dt, .rank = r, .shape = sh, .has_p = 1, .p0 = a, .p1 = b }
#define ON(o, dt, idt, r, d)                                                                       \
    { .op = o, .dtype = dt, .rank = -1, .in_dtype = idt, .in_rank = r, .in_dims = d }
#define ONP(o, dt, idt, r, d, a, b)                                                                \
    {                                                                                              \
        .op = o, .dtype = dt, .rank = -1, .has_p = 1, .p0 = a, .p1 = b, .in_dtype = idt,           \
        .in_rank = r, .in_dims = d                                                                 \
    }
#define MULTI(dt, ss, idt, r, d)                                                                   \
    {                                                                                              \
        .op = "Multinomial", .dtype = dt, .rank = -1, .sample_size = ss, .in_dtype = idt,          \
        .in_rank = r, .in_dims = d                                                                 \
    }

static char *in_x[] = {"x"}, *out_y[] = {"y"};

static void build(model *md, const spec *s) {
    model_init(md, 15); /* Bernoulli is new in opset 15 */
    if (s->in_dtype) add_input_typed(md, "x", s->in_dtype, s->in_rank, s->in_dims);
    Onnx__NodeProto *n = add_node(md, s->op, "r0", s->in_dtype ? 1 : 0, in_x, 1, out_y);
    Onnx__AttributeProto *a;
    if (s->dtype) {
        a = add_attr(md, n, "dtype", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
        a->has_i = 1;
        a->i = s->dtype;
    }
    if (s->rank >= 0) {
        a = add_attr(md, n, "shape", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
        a->n_ints = (size_t)s->rank;
        a->ints = (int64_t *)s->shape;
    }
    if (s->has_p) {
        int normal = strstr(s->op, "Normal") != NULL;
        a = add_attr(md, n, normal ? "mean" : "low", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
        a->has_f = 1;
        a->f = (float)s->p0;
        a = add_attr(md, n, normal ? "scale" : "high",
                     ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
        a->has_f = 1;
        a->f = (float)s->p1;
    }
    if (s->sample_size) {
        a = add_attr(md, n, "sample_size", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
        a->has_i = 1;
        a->i = s->sample_size;
    }
    add_output(md, "y");
}

/* Loads s, runs the shape pass (the statically inferred output type goes to
 * *static_ty) and then the interpreter with input x (NULL if none) and the given
 * seed. *y lives in arena a. On failure cx holds the message. */
static kn_status run(kn_ctx *cx, const spec *s, kn_arena *a, kn_tensor *x, uint64_t seed,
                     kn_tensor **y, kn_type *static_ty) {
    model md;
    build(&md, s);
    kn_graph *g = NULL;
    *y = NULL;
    kn_status st = load(&md, cx, &g, 0);
    if (!st) st = kn_pass_run_pipeline(cx, g, "shape", NULL, NULL);
    if (!st && static_ty) *static_ty = g->outputs[0]->type;
    if (!st) st = kn_interp_run(cx, g, a, &x, y, seed);
    kn_graph_destroy(g);
    return st;
}

/* The input tensor of s, every element v (NULL if the op has no input). */
static kn_tensor *make_input(kn_arena *a, const spec *s, double v) {
    if (!s->in_dtype) return NULL;
    kn_tensor *x = kn_tensor_make(a, (kn_dtype)s->in_dtype, s->in_rank, s->in_dims);
    for (int64_t i = 0; i < kn_tensor_numel(x); i++)
        kn_store_f64(x->data, x->type.dtype, (size_t)i, v);
    return x;
}

static bool type_is(const kn_type *t, kn_dtype dt, int rank, const int64_t *dims) {
    if (t->kind != KN_KIND_TENSOR || t->dtype != dt || t->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (t->dims[i] != dims[i]) return false;
    return true;
}

/* ---- dtype and shape ---- */

static const int64_t s234[] = {2, 3, 4}, s5[] = {5}, s25[] = {2, 5}, s32[] = {3, 2}, s4[] = {4},
                     s22[] = {2, 2}, s23[] = {2, 3}, s21[] = {2, 1}, s27[] = {2, 7}, s40[] = {4, 0};

/* ONNX element types: 1 float, 6 int32, 7 int64, 9 bool, 10 float16, 11 double,
 * 16 bfloat16. */
static void test_types(void) {
    static const struct {
        const char *what;
        spec s;
        kn_dtype dt; /* expected output */
        int rank;
        const int64_t *dims;
    } cases[] = {
        /* RandomUniform/Normal: shape from the attribute, dtype default float */
        {"uniform default", GEN("RandomUniform", 0, 3, s234), KN_F32, 3, s234},
        {"uniform f64", GEN("RandomUniform", 11, 1, s5), KN_F64, 1, s5},
        {"uniform f16 scalar", GEN("RandomUniform", 10, 0, NULL), KN_F16, 0, NULL},
        {"uniform empty", GEN("RandomUniform", 0, 2, s40), KN_F32, 2, s40},
        {"normal bf16", GEN("RandomNormal", 16, 2, s25), KN_BF16, 2, s25},
        {"normal default", GENP("RandomNormal", 0, 1, s4, 2, 3), KN_F32, 1, s4},
        /* *Like: the input's shape; dtype = attribute, else the input's */
        {"uniform like f64", ON("RandomUniformLike", 0, 11, 2, s25), KN_F64, 2, s25},
        {"uniform like f16->f32", ON("RandomUniformLike", 1, 10, 2, s32), KN_F32, 2, s32},
        /* an int input without dtype: ONNX leaves it undefined (the output must be a
         * float type); kiln falls back to float */
        {"uniform like i64", ON("RandomUniformLike", 0, 7, 2, s32), KN_F32, 2, s32},
        {"normal like f32->f64", ON("RandomNormalLike", 11, 1, 1, s4), KN_F64, 1, s4},
        {"normal like bf16", ON("RandomNormalLike", 0, 16, 2, s22), KN_BF16, 2, s22},
        /* Bernoulli: the input's shape; dtype = attribute (any number or bool), else
         * the input's */
        {"bernoulli default", ON("Bernoulli", 0, 1, 2, s22), KN_F32, 2, s22},
        {"bernoulli f64", ON("Bernoulli", 0, 11, 1, s5), KN_F64, 1, s5},
        {"bernoulli bool", ON("Bernoulli", 9, 1, 2, s23), KN_BOOL, 2, s23},
        {"bernoulli i64", ON("Bernoulli", 7, 10, 1, s4), KN_I64, 1, s4},
        /* Multinomial: [batch, sample_size], sample_size default 1, dtype default int32 */
        {"multinomial default", MULTI(0, 0, 1, 2, s23), KN_I32, 2, s21},
        {"multinomial i64", MULTI(7, 7, 11, 2, s25), KN_I64, 2, s27},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kn_arena *a = kn_arena_create();
        kn_ctx cx;
        kn_tensor *y;
        kn_type sty;
        /* 0.5 is a valid probability and logit, and exact in every dtype */
        kn_status st = run(&cx, &cases[i].s, a, make_input(a, &cases[i].s, 0.5), 1, &y, &sty);
        bool ok = st == KN_OK && y && type_is(&y->type, cases[i].dt, cases[i].rank, cases[i].dims);
        ok = ok && type_is(&sty, cases[i].dt, cases[i].rank, cases[i].dims);
        if (!ok) {
            char b1[128] = "-", b2[128] = "-";
            if (y) kn_type_str(&y->type, b1, sizeof b1);
            if (!st) kn_type_str(&sty, b2, sizeof b2);
            fprintf(stderr, "case '%s': status %d, run %s, static %s: %s\n", cases[i].what, st, b1,
                    b2, cx.msg);
        }
        CHECK(ok);
        kn_arena_destroy(a);
    }
}

static void test_errors(void) {
    static const struct {
        const char *what;
        spec s;
        const char *msg;
    } cases[] = {
        {"uniform int dtype", GEN("RandomUniform", 6, 1, s4), "dtype 6 is not allowed here"},
        {"uniform no shape", GEN("RandomUniform", 0, -1, NULL), "attribute 'shape' is required"},
        {"normal bad dtype", GEN("RandomNormal", 99, 1, s4), "dtype 99 is not allowed here"},
        {"like int dtype", ON("RandomNormalLike", 7, 1, 1, s4), "dtype 7 is not allowed here"},
        {"bernoulli string dtype", ON("Bernoulli", 8, 1, 1, s4), "dtype 8 is not allowed here"},
        {"multinomial float dtype", MULTI(1, 0, 1, 2, s23), "dtype 1 is not allowed here"},
        {"multinomial rank", MULTI(0, 0, 1, 1, s4), "expected 2"},
        {"multinomial samples", MULTI(0, -2, 1, 2, s23), "sample_size must be positive"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kn_arena *a = kn_arena_create();
        kn_ctx cx;
        kn_tensor *y;
        kn_status st = run(&cx, &cases[i].s, a, make_input(a, &cases[i].s, 0.5), 1, &y, NULL);
        bool ok = st == KN_EINVAL && strstr(cx.msg, cases[i].msg);
        if (!ok) fprintf(stderr, "case '%s': status %d, message: %s\n", cases[i].what, st, cx.msg);
        CHECK(ok);
        kn_arena_destroy(a);
    }
}

/* ---- distributions ---- */

#define N 100000 /* samples per distribution check */
static const int64_t s_n[] = {100, N / 100}, s_3n[] = {3, N}, s_34[] = {3, 4};

/* Sample moments of the n values of t, converted to double. */
typedef struct moments {
    double mean, var, lo, hi, r1; /* var: unbiased; r1: lag-1 autocorrelation */
} moments;

static moments moments_of(const kn_tensor *t, int64_t n) {
    moments m = {0, 0, INFINITY, -INFINITY, 0};
    for (int64_t i = 0; i < n; i++) {
        double v = kn_load_f64(t->data, t->type.dtype, (size_t)i);
        m.mean += v;
        m.lo = fmin(m.lo, v);
        m.hi = fmax(m.hi, v);
    }
    m.mean /= (double)n;
    double c1 = 0, prev = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = kn_load_f64(t->data, t->type.dtype, (size_t)i) - m.mean;
        m.var += d * d;
        if (i) c1 += d * prev;
        prev = d;
    }
    m.r1 = c1 / m.var;
    m.var /= (double)(n - 1);
    return m;
}

/* |got - want| <= Z * se, reported with its name if not. */
static bool near(const char *what, const char *stat, double got, double want, double se) {
    bool ok = fabs(got - want) <= Z * se;
    if (!ok)
        fprintf(stderr, "%s: %s = %.6g, expected %.6g +- %.3g (%g SE)\n", what, stat, got, want,
                Z * se, Z);
    return ok;
}

/* The contract shared by both continuous families: with n i.i.d. samples of
 * variance s2 and fourth central moment mu4,
 *   SE(mean)      = sqrt(s2 / n)
 *   SE(variance)  = sqrt((mu4 - s2^2) / n)   (the delta method for sample variance)
 *   SE(r1)        = 1 / sqrt(n)              (lag-1 autocorrelation of i.i.d. data) */
static void check_moments(const char *what, const moments *m, int64_t n, double mean, double s2,
                          double mu4) {
    double rn = sqrt((double)n);
    CHECK(near(what, "mean", m->mean, mean, sqrt(s2) / rn));
    CHECK(near(what, "variance", m->var, s2, sqrt(mu4 - s2 * s2) / rn));
    CHECK(near(what, "lag-1 autocorrelation", m->r1, 0, 1 / rn));
}

static void test_continuous(void) {
    static const struct {
        const char *what;
        spec s;
    } cases[] = {
        {"uniform f32 [0,1)", GEN("RandomUniform", 0, 2, s_n)},
        {"uniform f64 [-2,3)", GENP("RandomUniform", 11, 2, s_n, -2, 3)},
        {"uniform f16 [0,1)", GEN("RandomUniform", 10, 2, s_n)},
        {"uniform bf16 [-1,1)", GENP("RandomUniform", 16, 2, s_n, -1, 1)},
        {"uniform like f64 [10,20)", ONP("RandomUniformLike", 0, 11, 2, s_n, 10, 20)},
        {"normal f32 (0,1)", GEN("RandomNormal", 0, 2, s_n)},
        {"normal f64 (3,0.5)", GENP("RandomNormal", 11, 2, s_n, 3, 0.5)},
        {"normal like f16 (-1,2)", ONP("RandomNormalLike", 0, 10, 2, s_n, -1, 2)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const spec *s = &cases[i].s;
        const char *what = cases[i].what;
        int normal = strstr(s->op, "Normal") != NULL;
        /* ONNX defaults: low 0, high 1; mean 0, scale 1 */
        double p0 = s->has_p ? s->p0 : 0, p1 = s->has_p ? s->p1 : 1;
        kn_arena *a = kn_arena_create();
        kn_ctx cx;
        kn_tensor *y;
        CHECK(run(&cx, s, a, make_input(a, s, 0), 7, &y, NULL) == KN_OK);
        if (!y) {
            fprintf(stderr, "%s: %s\n", what, cx.msg);
            kn_arena_destroy(a);
            continue;
        }
        int64_t n = kn_tensor_numel(y);
        CHECK(n == N);
        moments m = moments_of(y, n);
        if (!normal) {
            /* U = a + (b-a) V with V uniform on [0,1): t = V - 1/2 is uniform on
             * [-1/2, 1/2), so E t^2 = int t^2 dt = 1/12 and E t^4 = 1/80:
             *   mean (a+b)/2, variance (b-a)^2/12, mu4 (b-a)^4/80.
             * Every value, after rounding to the output dtype, lies in [a, b). */
            double w = p1 - p0;
            bool in_range = m.lo >= p0 && m.hi < p1;
            if (!in_range) fprintf(stderr, "%s: range [%g, %g]\n", what, m.lo, m.hi);
            CHECK(in_range);
            check_moments(what, &m, n, (p0 + p1) / 2, w * w / 12, w * w * w * w / 80);
        } else {
            /* Normal(mu, sigma): variance sigma^2, mu4 = 3 sigma^4. As a check of the
             * shape beyond two moments, P(|X - mu| < sigma) = erf(1/sqrt 2), a
             * binomial frequency with SE sqrt(p(1-p)/n). */
            double s2 = p1 * p1;
            check_moments(what, &m, n, p0, s2, 3 * s2 * s2);
            int64_t inside = 0;
            for (int64_t k = 0; k < n; k++)
                inside += fabs(kn_load_f64(y->data, y->type.dtype, (size_t)k) - p0) < p1;
            double p = erf(1 / sqrt(2.0));
            CHECK(near(what, "P(|x-mean| < scale)", (double)inside / (double)n, p,
                       sqrt(p * (1 - p) / (double)n)));
        }
        kn_arena_destroy(a);
    }
}

/* Bernoulli: row r of the [3, N] input holds probability p[r]; output element is 1
 * with probability p, else 0. p = 0 and p = 1 are exact (never / always); for
 * 0 < p < 1 the row's frequency has SE sqrt(p(1-p)/N). */
static void test_bernoulli(void) {
    static const float probs[] = {0, 1, 0.3f};
    static const int dtypes[] = {0, 9, 6}; /* the input's (float), bool, int32 */
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++) {
        spec s = ON("Bernoulli", dtypes[i], 1, 2, s_3n);
        kn_arena *a = kn_arena_create();
        kn_tensor *x = make_input(a, &s, 0), *y;
        for (int r = 0; r < 3; r++)
            for (int64_t k = 0; k < N; k++) ((float *)x->data)[r * N + k] = probs[r];
        kn_ctx cx;
        CHECK(run(&cx, &s, a, x, 11, &y, NULL) == KN_OK);
        if (!y) {
            kn_arena_destroy(a);
            continue;
        }
        int64_t ones[3] = {0}, other = 0;
        for (int r = 0; r < 3; r++)
            for (int64_t k = 0; k < N; k++) {
                double v = kn_load_f64(y->data, y->type.dtype, (size_t)(r * N + k));
                ones[r] += v == 1;
                other += v != 0 && v != 1;
            }
        CHECK(other == 0);
        CHECK(ones[0] == 0);
        CHECK(ones[1] == N);
        double p = probs[2]; /* the float's exact value, which the op compares against */
        CHECK(near("bernoulli p=0.3", "frequency", (double)ones[2] / N, p, sqrt(p * (1 - p) / N)));
        kn_arena_destroy(a);
    }
}

/* Multinomial: input rows are unnormalized log-probabilities l, so class c has
 * probability p_c = exp(l_c) / sum_j exp(l_j). Over S = N samples a class's count
 * is binomial: frequency SE sqrt(p(1-p)/S).
 *   row 0: l = log(1,2,3,4)  -> p = (1,2,3,4)/10 (the normalization is the op's job)
 *   row 1: l = (-50,-50,50,-50) -> p_2 = 1/(1 + 3e^-100) = 1 - 1e-43: always class 2
 *   row 2: l = (7,7,7,7)     -> p = 1/4 each (shift invariance) */
static void test_multinomial(void) {
    static const float logits[3][4] = {
        {0.0f, 0.69314718f, 1.09861229f, 1.38629436f}, /* log 1, log 2, log 3, log 4 */
        {-50, -50, 50, -50},
        {7, 7, 7, 7},
    };
    static const double want[3][4] = {{0.1, 0.2, 0.3, 0.4}, {0, 0, 1, 0}, {0.25, 0.25, 0.25, 0.25}};
    spec s = MULTI(7, N, 1, 2, s_34);
    kn_arena *a = kn_arena_create();
    kn_tensor *x = make_input(a, &s, 0), *y;
    memcpy(x->data, logits, sizeof logits);
    kn_ctx cx;
    CHECK(run(&cx, &s, a, x, 13, &y, NULL) == KN_OK);
    if (!y) {
        kn_arena_destroy(a);
        return;
    }
    CHECK(type_is(&y->type, KN_I64, 2, s_3n));
    for (int r = 0; r < 3; r++) {
        int64_t count[4] = {0}, outside = 0;
        for (int64_t k = 0; k < N; k++) {
            int64_t c = ((int64_t *)y->data)[r * N + k];
            if (c >= 0 && c < 4)
                count[c]++;
            else
                outside++;
        }
        CHECK(outside == 0);
        for (int c = 0; c < 4; c++) {
            double p = want[r][c], f = (double)count[c] / N;
            if (p == 0 || p == 1)
                CHECK(f == p);
            else
                CHECK(near("multinomial", "class frequency", f, p, sqrt(p * (1 - p) / N)));
        }
    }
    kn_arena_destroy(a);
}

/* ---- determinism: the run seed alone fixes the output ---- */

static void test_seeds(void) {
    static const spec cases[] = {
        GEN("RandomUniform", 0, 2, s_34),
        GEN("RandomNormal", 11, 2, s_34),
        ON("RandomUniformLike", 10, 1, 2, s_34),
        ON("RandomNormalLike", 0, 16, 2, s_34),
        ON("Bernoulli", 9, 1, 2, s_3n), /* p = 0.5 */
        MULTI(0, 64, 1, 2, s_34),
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kn_arena *a = kn_arena_create();
        kn_tensor *x = make_input(a, &cases[i], 0.5), *y[3];
        kn_ctx cx;
        static const uint64_t seeds[3] = {42, 42, 43};
        bool ran = true;
        for (int k = 0; k < 3; k++)
            ran = ran && run(&cx, &cases[i], a, x, seeds[k], &y[k], NULL) == 0;
        CHECK(ran);
        if (ran) {
            size_t nb = kn_tensor_nbytes(y[0]);
            bool same = !memcmp(y[0]->data, y[1]->data, nb);
            bool differ = memcmp(y[0]->data, y[2]->data, nb) != 0;
            if (!same || !differ)
                fprintf(stderr, "%s: same seed %s, different seed %s\n", cases[i].op,
                        same ? "same" : "DIFFERS", differ ? "differs" : "SAME");
            CHECK(same && differ);
        }
        kn_arena_destroy(a);
    }
}

int main(void) {
    test_types();
    test_errors();
    test_continuous();
    test_bernoulli();
    test_multinomial();
    test_seeds();
    return TEST_DONE();
}
