/* Elementwise unary operators: the math functions (Abs .. ThresholdedRelu), Cast,
 * CastLike and Clip. See ir/ops.h for the infer/eval contract.
 *
 * The math functions are rows of one table (`unary_defs`): a double->double function
 * with up to three float attributes, an optional exact int64 function for integer
 * inputs, the accepted input dtypes and the output dtype. One infer and one eval
 * serve every row. Floats are computed in double and rounded once on store;
 * integers go through int64 (or the double function, for ops that have no integer
 * form but accept integers, like Shrink). Cast converts between every dtype,
 * including strings, which print like numpy's str() of the source float type. */
#include "ir/ops/unary_attrs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The math table ---- */

typedef double (*unary_fn)(double x, const double *p);
/* Integer form; u is set for unsigned inputs (whose int64 value may have wrapped). */
typedef int64_t (*unary_ifn)(int64_t x, bool u);

typedef struct unary_def {
    kn_op op;
    unary_fn f;
    unary_ifn fi;        /* exact integer form, or NULL: integers use f */
    unsigned mask;       /* accepted input dtypes */
    kn_dtype out;        /* output dtype; KN_UNDEF: same as the input */
    const char *attr[3]; /* attribute names read into p[0..3), NULL-terminated */
    double def[3];       /* their defaults */
} unary_def;

static double f_abs(double x, const double *p) {
    (void)p;
    return fabs(x);
}
static double f_acos(double x, const double *p) {
    (void)p;
    return acos(x);
}
static double f_acosh(double x, const double *p) {
    (void)p;
    return acosh(x);
}
static double f_asin(double x, const double *p) {
    (void)p;
    return asin(x);
}
static double f_asinh(double x, const double *p) {
    (void)p;
    return asinh(x);
}
static double f_atan(double x, const double *p) {
    (void)p;
    return atan(x);
}
static double f_atanh(double x, const double *p) {
    (void)p;
    return atanh(x);
}
static double f_ceil(double x, const double *p) {
    (void)p;
    return ceil(x);
}
/* p: alpha */
static double f_celu(double x, const double *p) {
    return fmax(0, x) + fmin(0, p[0] * (exp(x / p[0]) - 1));
}
static double f_cos(double x, const double *p) {
    (void)p;
    return cos(x);
}
static double f_cosh(double x, const double *p) {
    (void)p;
    return cosh(x);
}
/* p: alpha */
static double f_elu(double x, const double *p) {
    return x < 0 ? p[0] * (exp(x) - 1) : x;
}
static double f_erf(double x, const double *p) {
    (void)p;
    return erf(x);
}
static double f_exp(double x, const double *p) {
    (void)p;
    return exp(x);
}
static double f_floor(double x, const double *p) {
    (void)p;
    return floor(x);
}
/* p: alpha, beta */
static double f_hardsigmoid(double x, const double *p) {
    return fmax(0, fmin(1, p[0] * x + p[1]));
}
static double f_hardswish(double x, const double *p) {
    (void)p;
    return x * fmax(0, fmin(1, x / 6 + 0.5));
}
/* p: detect_negative, detect_positive */
static double f_isinf(double x, const double *p) {
    return isinf(x) && (x < 0 ? p[0] != 0 : p[1] != 0);
}
static double f_isnan(double x, const double *p) {
    (void)p;
    return isnan(x);
}
/* p: alpha */
static double f_leakyrelu(double x, const double *p) {
    return x < 0 ? p[0] * x : x;
}
static double f_log(double x, const double *p) {
    (void)p;
    return log(x);
}
static double f_neg(double x, const double *p) {
    (void)p;
    return -x;
}
static double f_not(double x, const double *p) {
    (void)p;
    return x == 0;
}
static double f_reciprocal(double x, const double *p) {
    (void)p;
    return 1 / x;
}
static double f_relu(double x, const double *p) {
    (void)p;
    return x < 0 ? 0 : x; /* NaN stays NaN, as numpy's maximum(x, 0) */
}
static double f_round(double x, const double *p) {
    (void)p;
    return nearbyint(x); /* default rounding mode: half to even */
}
/* p: alpha, gamma */
static double f_selu(double x, const double *p) {
    return x <= 0 ? p[1] * (p[0] * exp(x) - p[0]) : p[1] * x;
}
/* p: lambd, bias */
static double f_shrink(double x, const double *p) {
    return x < -p[0] ? x + p[1] : x > p[0] ? x - p[1] : 0;
}
static double f_sigmoid(double x, const double *p) {
    (void)p;
    return 1 / (1 + exp(-x));
}
static double f_sign(double x, const double *p) {
    (void)p;
    return isnan(x) ? x : (x > 0) - (x < 0);
}
static double f_sin(double x, const double *p) {
    (void)p;
    return sin(x);
}
static double f_sinh(double x, const double *p) {
    (void)p;
    return sinh(x);
}
/* log(1 + exp(x)) without overflow for large x. */
static double f_softplus(double x, const double *p) {
    (void)p;
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
static double f_softsign(double x, const double *p) {
    (void)p;
    return x / (1 + fabs(x));
}
static double f_sqrt(double x, const double *p) {
    (void)p;
    return sqrt(x);
}
static double f_tan(double x, const double *p) {
    (void)p;
    return tan(x);
}
static double f_tanh(double x, const double *p) {
    (void)p;
    return tanh(x);
}
/* p: alpha */
static double f_thresholdedrelu(double x, const double *p) {
    return x > p[0] ? x : 0;
}

/* p: 1 for approximate="tanh" (opset 20) */
static double f_gelu(double x, const double *p) {
    if (p[0] != 0) return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}
/* x * tanh(softplus(x)) (opset 18) */
static double f_mish(double x, const double *p) {
    return x * tanh(f_softplus(x, p));
}
/* BitwiseNot on integers only: f is never called */
static double f_unused(double x, const double *p) {
    (void)p;
    return x;
}
static int64_t i_bnot(int64_t x, bool u) {
    (void)u;
    return ~x; /* stored with wrap-around: ~x of an unsigned value's bits */
}

/* Integer forms: wrap like C unsigned arithmetic (numpy's abs(INT_MIN) == INT_MIN). */
static int64_t i_abs(int64_t x, bool u) {
    return u || x >= 0 ? x : (int64_t)(0 - (uint64_t)x);
}
static int64_t i_neg(int64_t x, bool u) {
    (void)u;
    return (int64_t)(0 - (uint64_t)x);
}
static int64_t i_relu(int64_t x, bool u) {
    return u || x >= 0 ? x : 0;
}
static int64_t i_sign(int64_t x, bool u) {
    return u ? x != 0 : (x > 0) - (x < 0);
}

#define F KN_DT_FLOAT
#define N KN_DT_NUM
/* Selu's defaults are the float32 values the ONNX spec gives. */
static const unary_def unary_defs[] = {
    {KN_OP_ABS, f_abs, i_abs, N, KN_UNDEF, {0}, {0}},
    {KN_OP_ACOS, f_acos, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ACOSH, f_acosh, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ASIN, f_asin, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ASINH, f_asinh, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ATAN, f_atan, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ATANH, f_atanh, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_CEIL, f_ceil, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_CELU, f_celu, NULL, F, KN_UNDEF, {"alpha"}, {1.0}},
    {KN_OP_COS, f_cos, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_COSH, f_cosh, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ELU, f_elu, NULL, F, KN_UNDEF, {"alpha"}, {1.0}},
    {KN_OP_ERF, f_erf, NULL, N, KN_UNDEF, {0}, {0}},
    {KN_OP_EXP, f_exp, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_FLOOR, f_floor, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_HARDSIGMOID, f_hardsigmoid, NULL, F, KN_UNDEF, {"alpha", "beta"}, {0.2f, 0.5f}},
    {KN_OP_HARDSWISH, f_hardswish, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_ISINF, f_isinf, NULL, F, KN_BOOL, {"detect_negative", "detect_positive"}, {1, 1}},
    {KN_OP_ISNAN, f_isnan, NULL, F, KN_BOOL, {0}, {0}},
    {KN_OP_LEAKYRELU, f_leakyrelu, NULL, F, KN_UNDEF, {"alpha"}, {0.01f}},
    {KN_OP_LOG, f_log, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_NEG, f_neg, i_neg, F | KN_DT_SINT, KN_UNDEF, {0}, {0}},
    {KN_OP_NOT, f_not, NULL, KN_DT(BOOL), KN_UNDEF, {0}, {0}},
    {KN_OP_RECIPROCAL, f_reciprocal, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_RELU, f_relu, i_relu, F | KN_DT_SINT, KN_UNDEF, {0}, {0}},
    {KN_OP_ROUND, f_round, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_SELU,
     f_selu,
     NULL,
     F,
     KN_UNDEF,
     {"alpha", "gamma"},
     {1.67326319217681884765625, 1.05070102214813232421875}},
    {KN_OP_SHRINK, f_shrink, NULL, N, KN_UNDEF, {"lambd", "bias"}, {0.5f, 0.0}},
    {KN_OP_SIGMOID, f_sigmoid, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_SIGN, f_sign, i_sign, N, KN_UNDEF, {0}, {0}},
    {KN_OP_SIN, f_sin, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_SINH, f_sinh, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_SOFTPLUS, f_softplus, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_SOFTSIGN, f_softsign, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_SQRT, f_sqrt, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_TAN, f_tan, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_TANH, f_tanh, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_THRESHOLDEDRELU, f_thresholdedrelu, NULL, F, KN_UNDEF, {"alpha"}, {1.0}},
    {KN_OP_GELU, f_gelu, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_MISH, f_mish, NULL, F, KN_UNDEF, {0}, {0}},
    {KN_OP_BITWISENOT, f_unused, i_bnot, KN_DT_INT, KN_UNDEF, {0}, {0}},
};
#undef F
#undef N

static const unary_def *unary_find(kn_op op) {
    for (size_t i = 0; i < sizeof unary_defs / sizeof *unary_defs; i++)
        if (unary_defs[i].op == op) return &unary_defs[i];
    KN_ASSERT(!"op registered without a unary_defs row");
    return NULL;
}

double kn_attr_num(kn_ctx *cx, const kn_node *n, const char *name, double def) {
    const kn_attr *a = kn_node_attr(n, name);
    if (!a) return def;
    if (a->kind == KN_ATTR_INT) return (double)a->i;
    if (a->kind == KN_ATTR_FLOAT) return a->f;
    kn_diag(cx, n, KN_EINVAL, "attribute '%s' must be a number", name);
    return def;
}

kn_status kn_unary_params(kn_ctx *cx, const kn_node *n, double *p) {
    const unary_def *d = unary_find(n->op);
    for (int k = 0; k < 3; k++) p[k] = d->attr[k] ? kn_attr_num(cx, n, d->attr[k], d->def[k]) : 0;
    if (n->op == KN_OP_GELU) { /* a string attribute: p[0] = 1 for the tanh form */
        const char *s = kn_attr_str(cx, n, "approximate", "none");
        if (!kn_failed(cx) && strcmp(s, "none") && strcmp(s, "tanh"))
            return kn_diag(cx, n, KN_EINVAL, "approximate must be \"none\" or \"tanh\", not \"%s\"",
                           s);
        p[0] = !kn_failed(cx) && !strcmp(s, "tanh");
    }
    return cx->status;
}

static kn_status infer_unary(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const unary_def *d = unary_find(n->op);
    double p[3];
    if (kn_unary_params(cx, n, p) || kn_check_dtype(cx, n, in[0], 0, d->mask)) return cx->status;
    out[0] = in[0]->type;
    if (d->out) out[0].dtype = d->out;
    return KN_OK;
}

static kn_status eval_unary(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const unary_def *d = unary_find(n->op);
    double p[3];
    if (kn_unary_params(cx, n, p)) return cx->status;
    kn_dtype it = in[0]->type.dtype, ot = d->out ? d->out : it;
    kn_type t = in[0]->type;
    t.dtype = ot;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &t);
    if (!y) return cx->status;
    const kn_dtype_info *info = kn_dtype_get(it);
    int64_t numel = kn_tensor_numel(in[0]);
    for (int64_t i = 0; i < numel; i++) {
        size_t k = (size_t)i;
        if (info->is_int && d->fi)
            kn_store_i64(y->data, ot, k, d->fi(kn_load_i64(in[0]->data, it, k), !info->is_signed));
        else
            kn_store_f64(y->data, ot, k, d->f(kn_load_f64(in[0]->data, it, k), p));
    }
    return KN_OK;
}

/* ---- Cast, CastLike ---- */

/* Opset 1 gives Cast's `to` as a TensorProto.DataType name. */
static kn_dtype dtype_from_onnx_name(const char *s) {
    static const struct {
        const char *name;
        kn_dtype t;
    } names[] = {{"FLOAT", KN_F32},
                 {"UINT8", KN_U8},
                 {"INT8", KN_I8},
                 {"UINT16", KN_U16},
                 {"INT16", KN_I16},
                 {"INT32", KN_I32},
                 {"INT64", KN_I64},
                 {"STRING", KN_STRING},
                 {"BOOL", KN_BOOL},
                 {"FLOAT16", KN_F16},
                 {"DOUBLE", KN_F64},
                 {"UINT32", KN_U32},
                 {"UINT64", KN_U64},
                 {"BFLOAT16", KN_BF16},
                 {"FLOAT8E4M3FN", KN_F8E4M3FN},
                 {"FLOAT8E4M3FNUZ", KN_F8E4M3FNUZ},
                 {"FLOAT8E5M2", KN_F8E5M2},
                 {"FLOAT8E5M2FNUZ", KN_F8E5M2FNUZ},
                 {"UINT4", KN_U4},
                 {"INT4", KN_I4}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i].name, s)) return names[i].t;
    return KN_UNDEF;
}

static kn_status cast_target(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_dtype *t) {
    if (n->op == KN_OP_CASTLIKE) {
        if (kn_check_dtype(cx, n, in[1], 1, KN_DT_ANY)) return cx->status;
        *t = in[1]->type.dtype;
        return KN_OK;
    }
    const kn_attr *a = kn_node_attr(n, "to");
    if (!a) return kn_diag(cx, n, KN_EINVAL, "attribute 'to' is required");
    if (a->kind == KN_ATTR_STRING)
        *t = dtype_from_onnx_name(a->s);
    else if (a->kind == KN_ATTR_INT)
        *t = a->i > 0 && a->i < KN_DTYPE_MAX ? (kn_dtype)a->i : KN_UNDEF;
    else
        return kn_diag(cx, n, KN_EINVAL, "attribute 'to' must be an int");
    if (!kn_dtype_valid(*t)) {
        const char *name = a->kind == KN_ATTR_STRING ? a->s : kn_onnx_type_name((int)a->i);
        if (name)
            return kn_diag(cx, n, KN_EUNSUPPORTED,
                           "attribute 'to' names %s, a type kiln does not support (%s)", name,
                           KN_UNSUPPORTED_TYPES);
        return kn_diag(cx, n, KN_EUNSUPPORTED, "attribute 'to' names an unsupported type");
    }
    return KN_OK;
}

static kn_status infer_cast(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_dtype t;
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_ANY) || cast_target(cx, n, in, &t)) return cx->status;
    kn_attr_int(cx, n, "saturate", 1); /* opset 19: float8 targets */
    if (kn_failed(cx)) return cx->status;
    kn_dtype st = in[0]->type.dtype;
    if ((st == KN_STRING && kn_dtype_get(t)->is_narrow) ||
        (t == KN_STRING && kn_dtype_get(st)->is_narrow))
        return kn_diag(cx, n, KN_EUNSUPPORTED, "casting %s to %s is not supported",
                       kn_dtype_name(st), kn_dtype_name(t));
    out[0] = in[0]->type;
    out[0].dtype = t;
    return KN_OK;
}

/* True if v and w are the same value once stored as dtype t. */
static bool same_in(kn_dtype t, double v, double w) {
    unsigned char a[8] = {0}, b[8] = {0};
    kn_store_f64(a, t, 0, v);
    kn_store_f64(b, t, 0, w);
    return !memcmp(a, b, sizeof a);
}

/* v (a value of float dtype t) as numpy's str() prints it: the shortest digits that
 * read back to the same t value; positional for 1e-4 <= |v| < 1e16 ("0.5", "100.0"),
 * else scientific ("1e-05", "1.5e+16"). */
static void format_float(char *buf, size_t cap, double v, kn_dtype t) {
    if (isnan(v)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, cap, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char e[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec, v);
        if (same_in(t, strtod(e, NULL), v)) break;
    }
    /* e is "-d.ddde+XX": collect the digits and the exponent. */
    char digits[24];
    int nd = 0;
    const char *s = e;
    bool neg = *s == '-';
    if (neg) s++;
    for (; *s && *s != 'e'; s++)
        if (*s != '.') digits[nd++] = *s;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    int exp10 = atoi(s + 1);
    char *o = buf, *end = buf + cap - 1;
#define PUT(c) (o < end ? (void)(*o++ = (c)) : (void)0)
    if (neg) PUT('-');
    double a = fabs(v);
    if (a >= 1e-4 && a < 1e16) {
        if (exp10 < 0) {
            PUT('0');
            PUT('.');
            for (int z = 0; z < -exp10 - 1; z++) PUT('0');
            for (int k = 0; k < nd; k++) PUT(digits[k]);
        } else {
            for (int k = 0; k <= exp10; k++) PUT(k < nd ? digits[k] : '0');
            PUT('.');
            if (nd > exp10 + 1)
                for (int k = exp10 + 1; k < nd; k++) PUT(digits[k]);
            else
                PUT('0');
        }
        *o = 0;
    } else {
        PUT(digits[0]);
        if (nd > 1) {
            PUT('.');
            for (int k = 1; k < nd; k++) PUT(digits[k]);
        }
        *o = 0;
        size_t used = (size_t)(o - buf);
        snprintf(o, cap - used, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    }
#undef PUT
}

/* Element k of src (dtype st, not string) as text. */
static void format_elem(char *buf, size_t cap, const void *src, kn_dtype st, size_t k) {
    const kn_dtype_info *info = kn_dtype_get(st);
    if (info->is_float)
        format_float(buf, cap, kn_load_f64(src, st, k), st);
    else if (st == KN_BOOL)
        snprintf(buf, cap, "%s", kn_load_i64(src, st, k) ? "True" : "False");
    else if (info->is_signed)
        snprintf(buf, cap, "%lld", (long long)kn_load_i64(src, st, k));
    else
        snprintf(buf, cap, "%llu", (unsigned long long)kn_load_u64(src, st, k));
}

/* Parses text s into element k of dst (dtype dt, not string). strtod reads "NaN",
 * "INF", "+INF", "-INF" in any case; integer text into integer types is exact. */
static void parse_elem(void *dst, kn_dtype dt, size_t k, const char *s) {
    const kn_dtype_info *info = kn_dtype_get(dt);
    char *end;
    if (info->is_int) {
        if (info->is_signed) {
            long long v = strtoll(s, &end, 10);
            if (end != s && !*end) {
                kn_store_i64(dst, dt, k, v);
                return;
            }
        } else {
            unsigned long long v = strtoull(s, &end, 10);
            if (end != s && !*end && !strchr(s, '-')) {
                kn_store_u64(dst, dt, k, v);
                return;
            }
        }
    }
    kn_store_f64(dst, dt, k, strtod(s, NULL));
}

/* dst[k] = src[k] converted; dst already has src's shape. Float to integer truncates
 * toward zero; float to bfloat16 truncates the low mantissa bits, as the ONNX 1.12
 * reference (and its test data) does. float8 sources are their values (a NaN code is
 * NaN); to float8 rounds to nearest even and, with `saturate`, clamps to the largest
 * finite value (kn_f8_encode's tables, from Cast-19); to 4 bits clamps to the type's
 * range, then rounds half to even (the ONNX reference's subbyte conversion; NaN gives
 * 0). */
static void convert(kn_arena *a, const kn_tensor *src, kn_tensor *dst, bool saturate) {
    kn_dtype st = src->type.dtype, dt = dst->type.dtype;
    const kn_dtype_info *si = kn_dtype_get(st), *di = kn_dtype_get(dt);
    int64_t numel = kn_tensor_numel(src);
    for (int64_t i = 0; i < numel; i++) {
        size_t k = (size_t)i;
        if (kn_dtype_is_f8(dt) && st != KN_STRING) {
            double v = st == KN_U64 ? (double)kn_load_u64(src->data, st, k)
                                    : kn_load_f64(src->data, st, k);
            ((uint8_t *)dst->data)[k] = kn_f8_encode(v, kn_f8_kind_of(dt), saturate);
        } else if (kn_dtype_is_4bit(dt) && st != KN_STRING) {
            double v = st == KN_U64 ? (double)kn_load_u64(src->data, st, k)
                                    : kn_load_f64(src->data, st, k);
            double lo = dt == KN_I4 ? -8 : 0, hi = dt == KN_I4 ? 7 : 15;
            v = isnan(v) ? 0 : nearbyint(v < lo ? lo : v > hi ? hi : v);
            kn_store_i64(dst->data, dt, k, (int64_t)v);
        } else if (st == KN_STRING && dt == KN_STRING) {
            ((char **)dst->data)[k] = kn_arena_strdup(a, ((char *const *)src->data)[k]);
        } else if (st == KN_STRING) {
            parse_elem(dst->data, dt, k, ((char *const *)src->data)[k]);
        } else if (dt == KN_STRING) {
            char buf[64];
            format_elem(buf, sizeof buf, src->data, st, k);
            ((char **)dst->data)[k] = kn_arena_strdup(a, buf);
        } else if (dt == KN_BF16 && st == KN_F32) {
            uint32_t bits;
            memcpy(&bits, (const float *)src->data + k, 4);
            ((uint16_t *)dst->data)[k] = (uint16_t)(bits >> 16);
        } else if (si->is_float || di->is_float || kn_dtype_is_f8(st)) {
            kn_store_f64(dst->data, dt, k, kn_load_f64(src->data, st, k));
        } else if (st == KN_U64) {
            kn_store_u64(dst->data, dt, k, kn_load_u64(src->data, st, k));
        } else {
            kn_store_i64(dst->data, dt, k, kn_load_i64(src->data, st, k));
        }
    }
}

static kn_status eval_cast(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_dtype t;
    if (cast_target(cx, n, in, &t)) return cx->status;
    kn_type ty = in[0]->type;
    ty.dtype = t;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &ty);
    if (!y) return cx->status;
    bool saturate = kn_attr_int(cx, n, "saturate", 1) != 0;
    convert(kn_exec_arena(ex), in[0], y, saturate);
    return KN_OK;
}

/* ---- Clip ---- */

/* Opset < 11: bounds are float attributes `min`/`max`; opset >= 11: optional scalar
 * inputs 1 and 2 of the input's type. Integer types are clipped exactly. */
static kn_status infer_clip(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    unsigned mask = n->opset < 12 ? KN_DT_FLOAT : KN_DT_NUM;
    if (kn_check_dtype(cx, n, in[0], 0, mask)) return cx->status;
    if (n->opset < 11) {
        kn_attr_num(cx, n, "min", 0);
        kn_attr_num(cx, n, "max", 0);
        if (kn_failed(cx)) return cx->status;
    } else {
        for (int i = 1; i < 3 && i < n->nin; i++) {
            if (!in[i]) continue;
            if (in[i]->type.kind != KN_KIND_TENSOR || in[i]->type.dtype != in[0]->type.dtype)
                return kn_diag(cx, n, KN_EINVAL, "input %d must have the type of input 0", i);
            if (in[i]->type.rank > 0 && kn_type_numel(&in[i]->type) > 1)
                return kn_diag(cx, n, KN_EINVAL, "input %d (%s) must be a scalar", i,
                               i == 1 ? "min" : "max");
        }
    }
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status eval_clip(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_dtype t = in[0]->type.dtype;
    kn_tensor *y = kn_ensure_output(ex, n, out, 0, &in[0]->type);
    if (!y) return cx->status;
    const kn_tensor *lo = n->opset >= 11 && n->nin > 1 ? in[1] : NULL;
    const kn_tensor *hi = n->opset >= 11 && n->nin > 2 ? in[2] : NULL;
    if (lo && kn_tensor_numel(lo) < 1) lo = NULL;
    if (hi && kn_tensor_numel(hi) < 1) hi = NULL;
    const kn_dtype_info *info = kn_dtype_get(t);
    int64_t numel = kn_tensor_numel(in[0]);
    if (info->is_float) {
        double fl = lo ? kn_load_f64(lo->data, t, 0) : -INFINITY;
        double fh = hi ? kn_load_f64(hi->data, t, 0) : INFINITY;
        if (n->opset < 11) {
            fl = kn_attr_num(cx, n, "min", -INFINITY);
            fh = kn_attr_num(cx, n, "max", INFINITY);
        }
        for (int64_t i = 0; i < numel; i++) {
            double v = kn_load_f64(in[0]->data, t, (size_t)i);
            v = v < fl ? fl : v; /* NaN passes through, as numpy.clip */
            v = v > fh ? fh : v;
            kn_store_f64(y->data, t, (size_t)i, v);
        }
    } else if (info->is_signed) {
        int64_t il = lo ? kn_load_i64(lo->data, t, 0) : INT64_MIN;
        int64_t ih = hi ? kn_load_i64(hi->data, t, 0) : INT64_MAX;
        for (int64_t i = 0; i < numel; i++) {
            int64_t v = kn_load_i64(in[0]->data, t, (size_t)i);
            v = v < il ? il : v;
            v = v > ih ? ih : v;
            kn_store_i64(y->data, t, (size_t)i, v);
        }
    } else {
        uint64_t ul = lo ? kn_load_u64(lo->data, t, 0) : 0;
        uint64_t uh = hi ? kn_load_u64(hi->data, t, 0) : UINT64_MAX;
        for (int64_t i = 0; i < numel; i++) {
            uint64_t v = kn_load_u64(in[0]->data, t, (size_t)i);
            v = v < ul ? ul : v;
            v = v > uh ? uh : v;
            kn_store_u64(y->data, t, (size_t)i, v);
        }
    }
    return KN_OK;
}

#define U(id)                                                                                      \
    { KN_OP_##id, infer_unary, eval_unary }
const kn_opimpl kn_ops_unary[] = {
    KN_UNARY_MATH_OPS(U),
    {KN_OP_CAST, infer_cast, eval_cast},
    {KN_OP_CASTLIKE, infer_cast, eval_cast},
    {KN_OP_CLIP, infer_clip, eval_clip},
    {KN_OP_COUNT, 0, 0},
};
#undef U
