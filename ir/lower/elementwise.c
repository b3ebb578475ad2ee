/* Lowerings of elementwise operators (the ops of ir/ops/unary.c and ir/ops/binary.c,
 * plus Identity and inference-mode Dropout): one loop nest over the output shape,
 * each input read at its broadcast offset.
 *
 * Like the interpreter, the ops are table rows: `un_defs` gives each unary op one
 * kernel-IR operator or a small expression builder with up to three attributes;
 * `bin_defs` gives each binary op (or variant: Mod's fmod, BitShift's direction)
 * one operator or a builder, folded left over the inputs for the variadic ops.
 * Arithmetic happens in the output's compute dtype (f16/bf16 in f32); integer inputs
 * of unary ops without an integer form are computed in f64, as the interpreter does.
 * Builders may declare locals (kl_decl) and open loops (Pow's integer form): they run
 * inside the element loop. NaN handling mirrors the interpreter exactly: where it
 * uses C fmin/fmax (a NaN operand gives the other), builders use comparisons. The
 * opset <= 6 forms (binary ops with broadcast=1 and axis, PRelu's per-channel 1-D
 * slope) read input 1 through a view with 1-dims added at the legacy axis. */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/ops/binary_attrs.h"
#include "ir/ops/unary_attrs.h"

#include <math.h>
#include <string.h>

/* ---- shared loop helpers ---- */

/* Opens loops over out's shape; returns the flat output index expression. */
static kn_kx *open_loops(kn_lower *L, const kn_kbuf *out, int *vars) {
    kl_for_shape(L, out->rank, out->dims, vars);
    int64_t st[KN_MAX_RANK];
    kn_strides(out->rank, out->dims, st);
    return kx_offset(L, out->rank, vars, st);
}

/* buf's element for output index vars, offset as `view` (buf itself, or a legacy
 * view of its shape) broadcasts against out. */
static kn_kx *load_view(kn_lower *L, kn_kbuf *buf, const kn_kbuf *view, const kn_kbuf *out,
                        const int *vars) {
    return kx_load(L, buf, kx_bcast_offset(L, view, out->rank, out->dims, vars));
}

static kn_kx *load_b(kn_lower *L, kn_kbuf *in, const kn_kbuf *out, const int *vars) {
    return load_view(L, in, in, out, vars);
}

/* x as a scalar local, so builders can use it several times without repeating it. */
static kn_kx *tmp(kn_lower *L, kn_kx *x) {
    if (x->op == KX_VAR || x->op == KX_CONST || x->op == KX_LOAD) return x;
    return kx_var(L, kl_decl(L, x->dtype, x));
}

static kn_kx *k(kn_lower *L, const kn_kx *like, double v) {
    return kx_const(L, like->dtype, v);
}

static bool is_float_t(kn_dtype t) {
    return kn_dtype_get(t)->is_float;
}

static bool is_unsigned_t(kn_dtype t) {
    return !kn_dtype_get(t)->is_signed; /* unsigned integers and bool */
}

/* C's fmin(y, c) / fmax(y, c) for a constant c: a NaN y gives c. */
static kn_kx *fmin_c(kn_lower *L, kn_kx *y, double c) {
    y = tmp(L, y);
    return kx_select(L, kx_bin(L, KX_LT, y, k(L, y, c)), y, k(L, y, c));
}
static kn_kx *fmax_c(kn_lower *L, kn_kx *y, double c) {
    y = tmp(L, y);
    return kx_select(L, kx_bin(L, KX_GT, y, k(L, y, c)), y, k(L, y, c));
}

/* ---- unary ops ---- */

/* Builds op(x); p holds the op's attributes (kn_unary_params). x is in the compute dtype. */
typedef kn_kx *(*un_build)(kn_lower *L, kn_kx *x, const double *p);

static kn_kx *u_celu(kn_lower *L, kn_kx *x, const double *p) {
    kn_kx *e = kx_bin(L, KX_SUB, kx_un(L, KX_EXP, kx_bin(L, KX_DIV, x, k(L, x, p[0]))), k(L, x, 1));
    return kx_bin(L, KX_ADD, fmax_c(L, x, 0), fmin_c(L, kx_bin(L, KX_MUL, k(L, x, p[0]), e), 0));
}
static kn_kx *u_elu(kn_lower *L, kn_kx *x, const double *p) {
    kn_kx *e = kx_bin(L, KX_SUB, kx_un(L, KX_EXP, x), k(L, x, 1));
    return kx_select(L, kx_bin(L, KX_LT, x, k(L, x, 0)), kx_bin(L, KX_MUL, k(L, x, p[0]), e), x);
}
static kn_kx *u_hardsigmoid(kn_lower *L, kn_kx *x, const double *p) {
    kn_kx *y = kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, k(L, x, p[0]), x), k(L, x, p[1]));
    return fmax_c(L, fmin_c(L, y, 1), 0);
}
static kn_kx *u_hardswish(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    kn_kx *y = kx_bin(L, KX_ADD, kx_bin(L, KX_DIV, x, k(L, x, 6)), k(L, x, 0.5));
    return kx_bin(L, KX_MUL, x, fmax_c(L, fmin_c(L, y, 1), 0));
}
/* p: detect_negative, detect_positive */
static kn_kx *u_isinf(kn_lower *L, kn_kx *x, const double *p) {
    if (p[0] != 0 && p[1] != 0) return kx_un(L, KX_ISINF, x);
    if (p[0] == 0 && p[1] == 0) return kx_const(L, KN_BOOL, 0);
    return kx_bin(L, KX_EQ, x, k(L, x, p[1] != 0 ? INFINITY : -INFINITY));
}
static kn_kx *u_leakyrelu(kn_lower *L, kn_kx *x, const double *p) {
    return kx_select(L, kx_bin(L, KX_LT, x, k(L, x, 0)), kx_bin(L, KX_MUL, k(L, x, p[0]), x), x);
}
static kn_kx *u_reciprocal(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    return kx_bin(L, KX_DIV, k(L, x, 1), x);
}
static kn_kx *u_relu(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    return kx_bin(L, KX_MAX, x, k(L, x, 0)); /* NaN stays NaN */
}
/* p: alpha, gamma */
static kn_kx *u_selu(kn_lower *L, kn_kx *x, const double *p) {
    kn_kx *neg =
        kx_bin(L, KX_SUB, kx_bin(L, KX_MUL, k(L, x, p[0]), kx_un(L, KX_EXP, x)), k(L, x, p[0]));
    return kx_select(L, kx_bin(L, KX_LE, x, k(L, x, 0)), kx_bin(L, KX_MUL, k(L, x, p[1]), neg),
                     kx_bin(L, KX_MUL, k(L, x, p[1]), x));
}
/* p: lambd, bias */
static kn_kx *u_shrink(kn_lower *L, kn_kx *x, const double *p) {
    kn_kx *hi = kx_select(L, kx_bin(L, KX_GT, x, k(L, x, p[0])),
                          kx_bin(L, KX_SUB, x, k(L, x, p[1])), k(L, x, 0));
    return kx_select(L, kx_bin(L, KX_LT, x, k(L, x, -p[0])), kx_bin(L, KX_ADD, x, k(L, x, p[1])),
                     hi);
}
static kn_kx *u_sigmoid(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    kn_kx *e = kx_un(L, KX_EXP, kx_un(L, KX_NEG, x));
    return kx_bin(L, KX_DIV, k(L, x, 1), kx_bin(L, KX_ADD, k(L, x, 1), e));
}
/* NaN stays NaN; unsigned x compares only with 0 (no always-false x < 0). */
static kn_kx *u_sign(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    if (is_unsigned_t(x->dtype)) return kx_cast(L, x->dtype, kx_bin(L, KX_NE, x, k(L, x, 0)));
    kn_kx *rest = kx_select(L, kx_bin(L, KX_LT, x, k(L, x, 0)), k(L, x, -1),
                            is_float_t(x->dtype) ? x : k(L, x, 0));
    return kx_select(L, kx_bin(L, KX_GT, x, k(L, x, 0)), k(L, x, 1), rest);
}
/* x > 0 ? x + log(1 + exp(-x)) : log(1 + exp(x)), without overflow for large x. */
static kn_kx *u_softplus(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    kn_kx *pos = kx_bin(
        L, KX_ADD, x,
        kx_un(L, KX_LOG, kx_bin(L, KX_ADD, k(L, x, 1), kx_un(L, KX_EXP, kx_un(L, KX_NEG, x)))));
    kn_kx *neg = kx_un(L, KX_LOG, kx_bin(L, KX_ADD, k(L, x, 1), kx_un(L, KX_EXP, x)));
    return kx_select(L, kx_bin(L, KX_GT, x, k(L, x, 0)), pos, neg);
}
static kn_kx *u_softsign(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    return kx_bin(L, KX_DIV, x, kx_bin(L, KX_ADD, k(L, x, 1), kx_un(L, KX_ABS, x)));
}
static kn_kx *u_thresholdedrelu(kn_lower *L, kn_kx *x, const double *p) {
    return kx_select(L, kx_bin(L, KX_GT, x, k(L, x, p[0])), x, k(L, x, 0));
}
/* p[0]: 1 for the tanh form */
static kn_kx *u_gelu(kn_lower *L, kn_kx *x, const double *p) {
    kn_kx *inner;
    if (p[0] != 0) {
        kn_kx *x3 = kx_bin(L, KX_MUL, kx_bin(L, KX_MUL, x, x), x);
        kn_kx *s = kx_bin(L, KX_ADD, x, kx_bin(L, KX_MUL, k(L, x, 0.044715), x3));
        inner = kx_un(L, KX_TANH, kx_bin(L, KX_MUL, k(L, x, sqrt(2 / M_PI)), s));
    } else {
        inner = kx_un(L, KX_ERF, kx_bin(L, KX_MUL, x, k(L, x, 1 / sqrt(2.0))));
    }
    return kx_bin(L, KX_MUL, kx_bin(L, KX_MUL, k(L, x, 0.5), x),
                  kx_bin(L, KX_ADD, k(L, x, 1), inner));
}
static kn_kx *u_mish(kn_lower *L, kn_kx *x, const double *p) {
    return kx_bin(L, KX_MUL, x, kx_un(L, KX_TANH, u_softplus(L, x, p)));
}
static kn_kx *u_abs(kn_lower *L, kn_kx *x, const double *p) {
    (void)p;
    return is_unsigned_t(x->dtype) ? x : kx_un(L, KX_ABS, x);
}

typedef struct un_def {
    kn_op op;
    kn_kx_op kx;    /* the kernel-IR operator, or KX_OP_COUNT: build */
    un_build build; /* or NULL */
    bool exact_int; /* integer inputs computed as integers; else in f64 */
} un_def;

#define M(id, kx)                                                                                  \
    { KN_OP_##id, KX_##kx, NULL, false }
#define B(id, fn, exact)                                                                           \
    { KN_OP_##id, KX_OP_COUNT, fn, exact }
static const un_def un_defs[] = {
    B(ABS, u_abs, true),
    M(ACOS, ACOS),
    M(ACOSH, ACOSH),
    M(ASIN, ASIN),
    M(ASINH, ASINH),
    M(ATAN, ATAN),
    M(ATANH, ATANH),
    M(CEIL, CEIL),
    B(CELU, u_celu, false),
    M(COS, COS),
    M(COSH, COSH),
    B(ELU, u_elu, false),
    M(ERF, ERF),
    M(EXP, EXP),
    M(FLOOR, FLOOR),
    B(HARDSIGMOID, u_hardsigmoid, false),
    B(HARDSWISH, u_hardswish, false),
    B(ISINF, u_isinf, false),
    M(ISNAN, ISNAN),
    B(LEAKYRELU, u_leakyrelu, false),
    M(LOG, LOG),
    {KN_OP_NEG, KX_NEG, NULL, true},
    {KN_OP_NOT, KX_NOT, NULL, true},
    B(RECIPROCAL, u_reciprocal, false),
    B(RELU, u_relu, true),
    M(ROUND, ROUND),
    B(SELU, u_selu, false),
    B(SHRINK, u_shrink, false),
    B(SIGMOID, u_sigmoid, false),
    B(SIGN, u_sign, true),
    M(SIN, SIN),
    M(SINH, SINH),
    B(SOFTPLUS, u_softplus, false),
    B(SOFTSIGN, u_softsign, false),
    M(SQRT, SQRT),
    M(TAN, TAN),
    M(TANH, TANH),
    B(THRESHOLDEDRELU, u_thresholdedrelu, false),
    B(GELU, u_gelu, false),
    B(MISH, u_mish, false),
    {KN_OP_BITWISENOT, KX_BNOT, NULL, true},
};
#undef M
#undef B

static kn_status lower_unary(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    const un_def *d = NULL;
    for (size_t r = 0; r < sizeof un_defs / sizeof *un_defs; r++)
        if (un_defs[r].op == n->op) d = &un_defs[r];
    KN_ASSERT(d);
    double p[3];
    if (kn_unary_params(kl_ctx(L), n, p)) return kl_ctx(L)->status;
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *x = load_b(L, in[0], out[0], v);
    if (kn_dtype_get(in[0]->dtype)->is_int && !d->exact_int) x = kx_cast(L, KN_F64, x);
    kn_kx *y = d->build ? d->build(L, x, p) : kx_un(L, d->kx, x);
    kn_epilogue epi; /* passes/chain.c makes float unary ops heads of elementwise chains */
    if (kn_epilogue_of(kl_ctx(L), n, &epi)) return kl_ctx(L)->status;
    if (epi.n) {
        kn_kx *opnd[KN_EPI_MAX] = {0};
        for (int s = 0; s < epi.n; s++)
            if (epi.s[s].operand >= 0) opnd[s] = load_b(L, in[epi.s[s].operand], out[0], v);
        y = kl_epilogue(L, &epi, y, opnd);
    }
    kl_store(L, out[0], i, y);
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

/* ---- Cast, CastLike ---- */

/* x (f32) truncated to bfloat16 precision, exactly representable in bfloat16 so the
 * rounding store keeps it: the ONNX 1.12 reference drops the low 16 bits. Computed
 * in f64 as trunc(|x| / u) * u, u the bfloat16 ulp at |x|: 2^(e-7) for 2^e <= |x| <
 * 2^(e+1), with 2^e from log corrected by one step either way, and e >= -126
 * (subnormals). Checked bit-exact against truncation on millions of random floats. */
static kn_kx *bf16_trunc(kn_lower *L, kn_kx *x) {
    kn_kx *a = tmp(L, kx_cast(L, KN_F64, kx_un(L, KX_ABS, x)));
    kn_kx *e = kx_un(L, KX_FLOOR, kx_bin(L, KX_MUL, kx_un(L, KX_LOG, a), k(L, a, 1 / log(2.0))));
    kn_kx *pw = tmp(L, kx_bin(L, KX_POW, k(L, a, 2), e));
    pw = tmp(L, kx_select(L, kx_bin(L, KX_GT, pw, a), kx_bin(L, KX_MUL, pw, k(L, a, 0.5)), pw));
    kn_kx *up = kx_bin(L, KX_LE, kx_bin(L, KX_MUL, pw, k(L, a, 2)), a);
    pw = kx_select(L, up, kx_bin(L, KX_MUL, pw, k(L, a, 2)), pw);
    pw = tmp(L, kx_bin(L, KX_MAX, pw, k(L, a, 0x1p-126))); /* subnormals: ulp 2^-133 */
    kn_kx *u = kx_bin(L, KX_MUL, pw, k(L, a, 0x1p-7));
    kn_kx *t = tmp(L, kx_bin(L, KX_MUL, kx_un(L, KX_TRUNC, kx_bin(L, KX_DIV, a, u)), u));
    kn_kx *sgn = kx_select(L, kx_bin(L, KX_LT, x, k(L, x, 0)), kx_un(L, KX_NEG, t), t);
    /* zero, inf, NaN: unchanged */
    kn_kx *plain = kx_bin(L, KX_LOR, kx_bin(L, KX_EQ, a, k(L, a, 0)),
                          kx_bin(L, KX_LOR, kx_un(L, KX_ISINF, a), kx_un(L, KX_ISNAN, a)));
    return kx_select(L, plain, kx_cast(L, KN_F64, x), sgn);
}

/* x (of dtype `from`, loaded) converted to `to` as ir/ops/unary.c's convert: float to
 * integer goes through int64 (then wraps, as the interpreter's stores), float to
 * bfloat16 truncates. */
static kn_kx *convert(kn_lower *L, kn_kx *x, kn_dtype from, kn_dtype to, bool saturate) {
    const kn_dtype_info *ti = kn_dtype_get(to);
    if (kn_dtype_is_f8(from)) { /* its value, then as from f32 (exact: float8 fits) */
        x = kl_f8_decode(L, x, from);
        from = KN_F32;
        if (to == KN_F32) return x;
    }
    if (kn_dtype_is_f8(to)) return kl_f8_encode(L, x, to, saturate);
    if (kn_dtype_is_4bit(to)) return kl_to_4bit(L, x, to);
    if (from == KN_F32 && to == KN_BF16) return bf16_trunc(L, x);
    if (is_float_t(from) && ti->is_int) {
        x = tmp(L, x);
        kn_kx *via = kx_cast(L, to, kx_cast(L, KN_I64, x));
        if (to != KN_U64) return via;
        return kx_select(L, kx_bin(L, KX_LT, x, k(L, x, 0x1p63)), via, kx_cast(L, KN_U64, x));
    }
    return kx_cast(L, to, x);
}

static kn_status lower_cast(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    if (in[0]->dtype == out[0]->dtype) {
        kl_copy(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), kx_int(L, in[0]->numel));
        return KN_OK;
    }
    if (in[0]->dtype == KN_STRING || out[0]->dtype == KN_STRING)
        return kl_cast_string(L, n, in, out);
    bool saturate = kn_attr_int(kl_ctx(L), n, "saturate", 1) != 0;
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kl_store(L, out[0], i,
             convert(L, load_b(L, in[0], out[0], v), in[0]->dtype, out[0]->dtype, saturate));
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

/* ---- Clip, Identity, Dropout ---- */

/* Opset < 11: float attributes min/max; opset >= 11: optional scalar inputs 1 and 2
 * (read at run time). An absent bound is not compared; NaN passes through. */
static kn_status lower_clip(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_dtype ct = kx_compute_dtype(out[0]->dtype);
    kn_kx *lo = NULL, *hi = NULL;
    if (n->opset < 11) {
        double fl = kn_attr_num(cx, n, "min", -INFINITY), fh = kn_attr_num(cx, n, "max", INFINITY);
        if (kn_failed(cx)) return cx->status;
        if (!isinf(fl) || fl > 0) lo = kx_const(L, ct, fl);
        if (!isinf(fh) || fh < 0) hi = kx_const(L, ct, fh);
    } else {
        if (n->nin > 1 && in[1] && in[1]->numel > 0) lo = kx_load(L, in[1], kx_int(L, 0));
        if (n->nin > 2 && in[2] && in[2]->numel > 0) hi = kx_load(L, in[2], kx_int(L, 0));
    }
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *x = load_b(L, in[0], out[0], v);
    if (lo) x = tmp(L, kx_select(L, kx_bin(L, KX_LT, x, lo), lo, x));
    if (hi) x = kx_select(L, kx_bin(L, KX_GT, x, hi), hi, x);
    kl_store(L, out[0], i, x);
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

static kn_status lower_identity(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    (void)n;
    kl_copy(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), kx_int(L, in[0]->numel));
    return KN_OK;
}

/* Inference mode: output = input, mask all true. Training mode (opset >= 12 input 2)
 * with a ratio above 0 drops at random, which compiled code does not do: a constant
 * mode and ratio that ask for it are refused; run-time ones are checked when the
 * model runs, and NAME_run returns KN_STATUS_RANDOM if they ask for it. */
static kn_status lower_dropout(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                               kn_kbuf *const *out) {
    if (n->opset >= 12 && n->nin > 2 && in[2]) {
        const kn_tensor *tr = kl_const(L, n, 2),
                        *r = n->nin > 1 && in[1] ? kl_const(L, n, 1) : NULL;
        bool zero = r && kn_load_f64(r->data, r->type.dtype, 0) == 0;
        bool off = tr && kn_load_i64(tr->data, tr->type.dtype, 0) == 0;
        if (!zero && !off && tr && (r || n->nin < 2 || !in[1])) /* both known: random */
            return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED,
                           "training-mode Dropout with a ratio above 0 is random: code generation "
                           "supports inference mode only");
        if (!zero && !off) { /* decided by run-time inputs */
            kn_warn(kl_ctx(L), n,
                    "training mode is a run-time input: the compiled code runs inference and "
                    "NAME_run returns 3 when the inputs ask for random dropping");
            kn_kx *train = tr ? kx_const(L, KN_BOOL, 1)
                              : kx_bin(L, KX_NE, kx_load(L, in[2], kx_int(L, 0)),
                                       kx_const(L, in[2]->dtype, 0));
            kn_kx *ratio = r || n->nin < 2 || !in[1]
                               ? kx_const(L, KN_BOOL, 1) /* default 0.5 */
                               : kx_bin(L, KX_NE, kx_load(L, in[1], kx_int(L, 0)),
                                        kx_const(L, in[1]->dtype, 0));
            kl_if(L, kx_bin(L, KX_LAND, train, ratio));
            kl_fail(L, KN_STATUS_RANDOM);
            kl_end(L);
        }
    }
    if (out[0]) kl_copy(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), kx_int(L, in[0]->numel));
    if (n->nout > 1 && out[1]) {
        int v[KN_MAX_RANK];
        kn_kx *i = open_loops(L, out[1], v);
        kl_store(L, out[1], i, kx_const(L, out[1]->dtype, 1));
        kl_end_n(L, out[1]->rank);
    }
    return KN_OK;
}

/* ---- binary and variadic ops ---- */

/* Builds a op b (a in the arithmetic dtype of the op, b as loaded). */
typedef kn_kx *(*bin_build)(kn_lower *L, kn_kx *a, kn_kx *b);

/* Mod, fmod=0: the result takes the divisor's sign (Python, numpy.mod). Integer
 * x % 0 and x % -1 are 0 (the emitter's remainder helper). */
static kn_kx *b_mod(kn_lower *L, kn_kx *a, kn_kx *b) {
    bool fl = is_float_t(a->dtype);
    kn_kx *r = tmp(L, kx_bin(L, fl ? KX_FMOD : KX_MOD, a, b));
    if (is_unsigned_t(a->dtype)) return r;
    kn_kx *z = k(L, r, 0);
    kn_kx *fix = kx_bin(L, KX_LAND, kx_bin(L, KX_NE, r, z),
                        kx_bin(L, KX_NE, kx_bin(L, KX_LT, r, z), kx_bin(L, KX_LT, b, z)));
    return kx_select(L, fix, kx_bin(L, KX_ADD, r, b), r);
}
/* Mod, fmod=1: the dividend's sign (C fmod and %). */
static kn_kx *b_fmod(kn_lower *L, kn_kx *a, kn_kx *b) {
    return kx_bin(L, is_float_t(a->dtype) ? KX_FMOD : KX_MOD, a, b);
}

/* Whether x loads a constant with a single value (a scalar, or one element), *v. */
static bool const_scalar(const kn_kx *x, double *v) {
    if (x->op != KX_LOAD || x->buf->kind != KB_CONST || !x->buf->data || !x->buf->data->data ||
        x->buf->numel != 1)
        return false;
    *v = kn_load_f64(x->buf->data->data, x->buf->dtype, 0);
    return true;
}

/* Pow. A float base: pow in its dtype (a constant exponent 1, 2 or 3: products); an integer base
 * with a float exponent: pow in f64; integers: exact powers by repeated squaring in u64 (wrapping),
 * and for signed negative exponents 1, +-1 or 0 as integer division gives. */
static kn_kx *b_pow(kn_lower *L, kn_kx *a, kn_kx *b) {
    kn_dtype at = a->dtype;
    double c;
    if (is_float_t(at) && const_scalar(b, &c) && (c == 1 || c == 2 || c == 3)) {
        /* x^2 (LayerNorm's variance written out) and x^3 (GELU's tanh form) as
         * products, as the epilogue step Pow does: x*x is pow(x, 2) correctly rounded */
        if (c == 1) return a;
        a = tmp(L, a);
        return c == 2 ? kx_mul(L, a, a) : kx_mul(L, kx_mul(L, a, a), a);
    }
    if (is_float_t(at)) return kx_bin(L, KX_POW, a, kx_cast(L, at, b));
    if (is_float_t(b->dtype))
        return kx_bin(L, KX_POW, kx_cast(L, KN_F64, a), kx_cast(L, KN_F64, b));
    bool sg = !is_unsigned_t(at);
    a = tmp(L, a);
    int e = kl_decl(L, sg ? KN_I64 : KN_U64, b);
    int r = kl_decl(L, KN_U64, kx_const(L, KN_U64, 1));
    int m = kl_decl(L, KN_U64, a);
    kn_kx *ev = kx_var(L, e);
    kl_while(L, sg ? kx_bin(L, KX_GT, ev, k(L, ev, 0)) : kx_bin(L, KX_NE, ev, k(L, ev, 0)));
    kl_if(L, kx_bin(L, KX_NE, kx_bin(L, KX_AND, ev, k(L, ev, 1)), k(L, ev, 0)));
    kl_set(L, r, kx_bin(L, KX_MUL, kx_var(L, r), kx_var(L, m)));
    kl_end(L);
    kl_set(L, m, kx_bin(L, KX_MUL, kx_var(L, m), kx_var(L, m)));
    kl_set(L, e, kx_bin(L, KX_SHR, ev, k(L, ev, 1)));
    kl_end(L);
    kn_kx *pos = kx_cast(L, at, kx_var(L, r));
    if (!sg) return pos;
    /* e is still the (negative) exponent when it is below 0 */
    kn_kx *odd = kx_bin(L, KX_NE, kx_bin(L, KX_AND, ev, k(L, ev, 1)), k(L, ev, 0));
    kn_kx *neg = kx_select(L, kx_bin(L, KX_EQ, a, k(L, a, 1)), k(L, a, 1),
                           kx_select(L, kx_bin(L, KX_EQ, a, k(L, a, -1)),
                                     kx_select(L, odd, k(L, a, -1), k(L, a, 1)), k(L, a, 0)));
    return kx_select(L, kx_bin(L, KX_LT, ev, k(L, ev, 0)), neg, pos);
}

/* PRelu: b is the slope; unsigned inputs are never negative. */
static kn_kx *b_prelu(kn_lower *L, kn_kx *a, kn_kx *b) {
    if (is_unsigned_t(a->dtype)) return a;
    return kx_select(L, kx_bin(L, KX_LT, a, k(L, a, 0)), kx_bin(L, KX_MUL, a, b), a);
}

typedef struct bin_def {
    kn_op op;
    int variant;     /* Mod: fmod; BitShift: 1 for RIGHT; else 0 */
    kn_kx_op kx;     /* the kernel-IR operator, or KX_OP_COUNT: build */
    bin_build build; /* or NULL */
    bool logic;      /* operands are truth values (And, Or, Xor) */
} bin_def;

#define O(id, kx)                                                                                  \
    { KN_OP_##id, 0, KX_##kx, NULL, false }
static const bin_def bin_defs[] = {
    O(ADD, ADD),
    O(SUB, SUB),
    O(MUL, MUL),
    O(DIV, DIV), /* integers: truncating, x / 0 = 0 (the emitter's helper) */
    {KN_OP_POW, 0, KX_OP_COUNT, b_pow, false},
    {KN_OP_MOD, 0, KX_OP_COUNT, b_mod, false},
    {KN_OP_MOD, 1, KX_OP_COUNT, b_fmod, false},
    {KN_OP_BITSHIFT, 0, KX_SHL, NULL, false},
    {KN_OP_BITSHIFT, 1, KX_SHR, NULL, false},
    O(MAX, MAX), /* NaN-propagating, as the interpreter's */
    O(MIN, MIN),
    O(SUM, ADD),
    O(MEAN, ADD), /* then divided by the input count */
    {KN_OP_PRELU, 0, KX_OP_COUNT, b_prelu, false},
    {KN_OP_AND, 0, KX_LAND, NULL, true},
    {KN_OP_OR, 0, KX_LOR, NULL, true},
    {KN_OP_XOR, 0, KX_NE, NULL, true},
    {KN_OP_BITWISEAND, 0, KX_AND, NULL, false},
    {KN_OP_BITWISEOR, 0, KX_OR, NULL, false},
    {KN_OP_BITWISEXOR, 0, KX_XOR, NULL, false},
    O(EQUAL, EQ),
    O(GREATER, GT),
    O(GREATEROREQUAL, GE),
    O(LESS, LT),
    O(LESSOREQUAL, LE),
};
#undef O

/* The row for n, after reading the attribute that picks its variant. */
static const bin_def *bin_find(kn_ctx *cx, const kn_node *n) {
    int variant;
    if (kn_binary_variant(cx, n, &variant)) return NULL;
    for (size_t r = 0; r < sizeof bin_defs / sizeof *bin_defs; r++)
        if (bin_defs[r].op == n->op && bin_defs[r].variant == variant) return &bin_defs[r];
    KN_ASSERT(!"op registered without a bin_defs row");
    return NULL;
}

/* *v = b as it broadcasts against a (only its shape is used): b itself, or for the
 * opset <= 6 forms b with 1-dims added so that it starts at the legacy axis of a. */
static kn_status legacy_view(kn_lower *L, const kn_node *n, const kn_kbuf *a, const kn_kbuf *b,
                             kn_kbuf *v) {
    kn_type ta = kn_type_make(a->dtype, a->rank, a->dims);
    kn_type tb = kn_type_make(b->dtype, b->rank, b->dims), tv;
    if (kn_binary_legacy_view(kl_ctx(L), n, &ta, &tb, &tv)) return kl_ctx(L)->status;
    *v = *b;
    v->rank = tv.rank;
    memcpy(v->dims, tv.dims, sizeof v->dims);
    return KN_OK;
}

/* Folds the row's operator over the inputs at each output element. The arithmetic
 * dtype is input 0's compute dtype (Pow's exponent keeps its own). */
static kn_status lower_binary(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    if (n->op == KN_OP_EQUAL && in[0]->dtype == KN_STRING) return kl_equal_string(L, n, in, out);
    const bin_def *d = bin_find(kl_ctx(L), n);
    if (!d) return kl_ctx(L)->status;
    int nin = kn_node_op_inputs(n); /* the op's own inputs; epilogue operands follow */
    kn_epilogue epi;
    if (kn_epilogue_of(kl_ctx(L), n, &epi)) return kl_ctx(L)->status;
    kn_kbuf view1;
    if (nin == 2 && legacy_view(L, n, in[0], in[1], &view1)) return kl_ctx(L)->status;
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *acc = load_b(L, in[0], out[0], v);
    if (d->logic) acc = kx_cast(L, KN_BOOL, acc);
    for (int j = 1; j < nin; j++) {
        kn_kx *b = load_view(L, in[j], nin == 2 ? &view1 : in[j], out[0], v);
        if (d->logic) b = kx_cast(L, KN_BOOL, b);
        acc = d->build ? d->build(L, acc, b) : kx_bin(L, d->kx, acc, b);
        if (j + 1 < nin) acc = tmp(L, acc);
    }
    if (n->op == KN_OP_MEAN) acc = kx_bin(L, KX_DIV, acc, k(L, acc, nin));
    if (epi.n) {
        kn_kx *opnd[KN_EPI_MAX] = {0};
        for (int s = 0; s < epi.n; s++)
            if (epi.s[s].operand >= 0) opnd[s] = load_b(L, in[epi.s[s].operand], out[0], v);
        acc = kl_epilogue(L, &epi, acc, opnd);
    }
    kl_store(L, out[0], i, acc);
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

static kn_status lower_where(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    (void)n;
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *c = kx_cast(L, KN_BOOL, load_b(L, in[0], out[0], v));
    kl_store(L, out[0], i,
             kx_select(L, c, load_b(L, in[1], out[0], v), load_b(L, in[2], out[0], v)));
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

#define U(id)                                                                                      \
    { KN_OP_##id, lower_unary }
#define BIN(id)                                                                                    \
    { KN_OP_##id, lower_binary }
/* clang-format off */
const kn_oplower kn_lower_elementwise[] = {
    KN_UNARY_MATH_OPS(U),
    {KN_OP_CAST, lower_cast},
    {KN_OP_CASTLIKE, lower_cast},
    {KN_OP_CLIP, lower_clip},
    {KN_OP_IDENTITY, lower_identity},
    {KN_OP_DROPOUT, lower_dropout},
    KN_BINARY_OPS(BIN),
    {KN_OP_WHERE, lower_where},
    {KN_OP_COUNT, 0},
};
/* clang-format on */
#undef U
#undef BIN
