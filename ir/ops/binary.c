/* Elementwise binary and variadic operators with numpy broadcasting: arithmetic,
 * Pow, Mod, BitShift, logic, comparisons, Max/Min/Mean/Sum, PRelu and Where. See
 * ir/ops.h for the infer/eval contract.
 *
 * Each op (or op variant: Mod's fmod, BitShift's direction) is a row of
 * `binary_defs`, giving its function in three arithmetics: double for floats, int64
 * for signed integers and uint64 for unsigned integers and bool, so every dtype is
 * computed exactly (integer arithmetic wraps like C unsigned, as numpy does). One
 * infer and one eval fold a row's function over any number of inputs.
 *
 * Opset <= 6 forms: a `broadcast`=1 binary op with an `axis` attribute aligns the
 * second input with the first starting at that axis, and PRelu aligns a 1-D slope
 * with the channel axis 1. Both are expressed as a view of the second input's type
 * with 1-dims added, which leaves its row-major data layout unchanged. */
#include "ir/epilogue.h"
#include "ir/ops/binary_attrs.h"

#include <math.h>
#include <string.h>

/* Inputs of a variadic op at most (ops.def's 255). */
#define MAX_IN 255

/* ---- The function table ---- */

typedef double (*bin_f)(double a, double b);
typedef int64_t (*bin_i)(int64_t a, int64_t b);
typedef uint64_t (*bin_u)(uint64_t a, uint64_t b);

typedef struct binary_def {
    kn_op op;
    int variant;   /* Mod: fmod; BitShift: 1 for RIGHT; else 0 */
    unsigned mask; /* accepted dtypes of the inputs */
    bool out_bool; /* output is bool (comparisons, logic); else input 0's dtype */
    bin_f f;       /* float arithmetic, or NULL if no float types in mask */
    bin_i i;       /* signed integer arithmetic, or NULL */
    bin_u u;       /* unsigned integer and bool arithmetic, or NULL */
} binary_def;

/* Wrapping signed arithmetic without C's undefined behavior. */
static int64_t wrap_add(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static double f_add(double a, double b) {
    return a + b;
}
static int64_t i_add(int64_t a, int64_t b) {
    return wrap_add(a, b);
}
static uint64_t u_add(uint64_t a, uint64_t b) {
    return a + b;
}
static double f_sub(double a, double b) {
    return a - b;
}
static int64_t i_sub(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a - (uint64_t)b);
}
static uint64_t u_sub(uint64_t a, uint64_t b) {
    return a - b;
}
static double f_mul(double a, double b) {
    return a * b;
}
static int64_t i_mul(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a * (uint64_t)b);
}
static uint64_t u_mul(uint64_t a, uint64_t b) {
    return a * b;
}
static double f_div(double a, double b) {
    return a / b;
}
/* Integer division truncates toward zero; x/0 is 0 (numpy's result, without the UB). */
static int64_t i_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    return a / b;
}
static uint64_t u_div(uint64_t a, uint64_t b) {
    return b ? a / b : 0;
}

/* Mod, fmod=0: the result has the divisor's sign (Python, numpy.mod). */
static double f_mod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && (r < 0) != (b < 0)) r += b;
    return r;
}
static int64_t i_mod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && (r < 0) != (b < 0)) r += b;
    return r;
}
static uint64_t u_mod(uint64_t a, uint64_t b) {
    return b ? a % b : 0;
}
/* Mod, fmod=1: the result has the dividend's sign (C fmod and %). */
static double f_fmod(double a, double b) {
    return fmod(a, b);
}
static int64_t i_fmod(int64_t a, int64_t b) {
    return b == 0 || b == -1 ? 0 : a % b;
}

/* Pow: integer powers by repeated squaring, wrapping; negative exponents truncate. */
static double f_pow(double a, double b) {
    return pow(a, b);
}
static int64_t i_pow(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
    }
    return (int64_t)r;
}
static uint64_t u_pow(uint64_t a, uint64_t b) {
    uint64_t r = 1;
    for (; b; b >>= 1) {
        if (b & 1) r *= a;
        a *= a;
    }
    return r;
}

static uint64_t u_shl(uint64_t a, uint64_t b) {
    return b < 64 ? a << b : 0;
}
static uint64_t u_shr(uint64_t a, uint64_t b) {
    return b < 64 ? a >> b : 0;
}

static uint64_t u_and(uint64_t a, uint64_t b) {
    return a && b;
}
static uint64_t u_or(uint64_t a, uint64_t b) {
    return a || b;
}
static uint64_t u_xor(uint64_t a, uint64_t b) {
    return !a != !b;
}

static uint64_t u_band(uint64_t a, uint64_t b) {
    return a & b;
}
static uint64_t u_bor(uint64_t a, uint64_t b) {
    return a | b;
}
static uint64_t u_bxor(uint64_t a, uint64_t b) {
    return a ^ b;
}
static int64_t i_band(int64_t a, int64_t b) {
    return a & b;
}
static int64_t i_bor(int64_t a, int64_t b) {
    return a | b;
}
static int64_t i_bxor(int64_t a, int64_t b) {
    return a ^ b;
}

static double f_eq(double a, double b) {
    return a == b;
}
static int64_t i_eq(int64_t a, int64_t b) {
    return a == b;
}
static uint64_t u_eq(uint64_t a, uint64_t b) {
    return a == b;
}
static double f_gt(double a, double b) {
    return a > b;
}
static int64_t i_gt(int64_t a, int64_t b) {
    return a > b;
}
static uint64_t u_gt(uint64_t a, uint64_t b) {
    return a > b;
}
static double f_ge(double a, double b) {
    return a >= b;
}
static int64_t i_ge(int64_t a, int64_t b) {
    return a >= b;
}
static uint64_t u_ge(uint64_t a, uint64_t b) {
    return a >= b;
}
static double f_lt(double a, double b) {
    return a < b;
}
static int64_t i_lt(int64_t a, int64_t b) {
    return a < b;
}
static uint64_t u_lt(uint64_t a, uint64_t b) {
    return a < b;
}
static double f_le(double a, double b) {
    return a <= b;
}
static int64_t i_le(int64_t a, int64_t b) {
    return a <= b;
}
static uint64_t u_le(uint64_t a, uint64_t b) {
    return a <= b;
}

/* Max and Min propagate NaN, as numpy.maximum/minimum. */
static double f_max(double a, double b) {
    return isnan(a) || a > b ? a : b;
}
static int64_t i_max(int64_t a, int64_t b) {
    return a > b ? a : b;
}
static uint64_t u_max(uint64_t a, uint64_t b) {
    return a > b ? a : b;
}
static double f_min(double a, double b) {
    return isnan(a) || a < b ? a : b;
}
static int64_t i_min(int64_t a, int64_t b) {
    return a < b ? a : b;
}
static uint64_t u_min(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* PRelu: b is the slope. */
static double f_prelu(double a, double b) {
    return a < 0 ? a * b : a;
}
static int64_t i_prelu(int64_t a, int64_t b) {
    return a < 0 ? i_mul(a, b) : a;
}
static uint64_t u_prelu(uint64_t a, uint64_t b) {
    (void)b;
    return a;
}

#define FL KN_DT_FLOAT
#define NUM KN_DT_NUM
#define B KN_DT(BOOL)
#define ARITH(id, v, mask, f, i, u)                                                                \
    { KN_OP_##id, v, mask, false, f, i, u }
#define CMP(id, mask, f, i, u)                                                                     \
    { KN_OP_##id, 0, mask, true, f, i, u }
/* Mean is Sum followed by a division (float types only). */
static const binary_def binary_defs[] = {
    ARITH(ADD, 0, NUM, f_add, i_add, u_add),
    ARITH(SUB, 0, NUM, f_sub, i_sub, u_sub),
    ARITH(MUL, 0, NUM, f_mul, i_mul, u_mul),
    ARITH(DIV, 0, NUM, f_div, i_div, u_div),
    ARITH(POW, 0, NUM, f_pow, i_pow, u_pow),
    ARITH(MOD, 0, NUM, f_mod, i_mod, u_mod),
    ARITH(MOD, 1, NUM, f_fmod, i_fmod, u_mod),
    ARITH(BITSHIFT, 0, KN_DT_UINT, NULL, NULL, u_shl),
    ARITH(BITSHIFT, 1, KN_DT_UINT, NULL, NULL, u_shr),
    ARITH(MAX, 0, NUM, f_max, i_max, u_max),
    ARITH(MIN, 0, NUM, f_min, i_min, u_min),
    ARITH(SUM, 0, NUM, f_add, i_add, u_add),
    ARITH(MEAN, 0, FL, f_add, NULL, NULL),
    ARITH(PRELU, 0, NUM, f_prelu, i_prelu, u_prelu),
    CMP(AND, B, NULL, NULL, u_and),
    CMP(OR, B, NULL, NULL, u_or),
    CMP(XOR, B, NULL, NULL, u_xor),
    ARITH(BITWISEAND, 0, KN_DT_INT, NULL, i_band, u_band),
    ARITH(BITWISEOR, 0, KN_DT_INT, NULL, i_bor, u_bor),
    ARITH(BITWISEXOR, 0, KN_DT_INT, NULL, i_bxor, u_bxor),
    CMP(EQUAL, NUM | B | KN_DT(STRING), f_eq, i_eq, u_eq),
    CMP(GREATER, NUM, f_gt, i_gt, u_gt),
    CMP(GREATEROREQUAL, NUM, f_ge, i_ge, u_ge),
    CMP(LESS, NUM, f_lt, i_lt, u_lt),
    CMP(LESSOREQUAL, NUM, f_le, i_le, u_le),
};
#undef FL
#undef NUM
#undef B
#undef ARITH
#undef CMP

kn_status kn_binary_variant(kn_ctx *cx, const kn_node *n, int *variant) {
    *variant = 0;
    if (n->op == KN_OP_MOD) {
        int64_t fm = kn_attr_int(cx, n, "fmod", 0);
        if (kn_failed(cx)) return cx->status;
        if (fm != 0 && fm != 1)
            return kn_diag(cx, n, KN_EINVAL, "fmod must be 0 or 1, not %lld", (long long)fm);
        *variant = (int)fm;
    } else if (n->op == KN_OP_BITSHIFT) {
        const char *dir = kn_attr_str(cx, n, "direction", NULL);
        if (kn_failed(cx)) return cx->status;
        if (!dir || (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT")))
            return kn_diag(cx, n, KN_EINVAL, "direction must be \"LEFT\" or \"RIGHT\"");
        *variant = !strcmp(dir, "RIGHT");
    }
    return KN_OK;
}

/* The row for n, after checking the attribute that picks its variant. */
static const binary_def *binary_find(kn_ctx *cx, const kn_node *n) {
    int variant;
    if (kn_binary_variant(cx, n, &variant)) return NULL;
    for (size_t k = 0; k < sizeof binary_defs / sizeof *binary_defs; k++)
        if (binary_defs[k].op == n->op && binary_defs[k].variant == variant) return &binary_defs[k];
    KN_ASSERT(!"op registered without a binary_defs row");
    return NULL;
}

kn_status kn_binary_legacy_view(kn_ctx *cx, const kn_node *n, const kn_type *a, const kn_type *b,
                                kn_type *v) {
    *v = *b;
    bool legacy = false;
    int64_t axis = 0;
    if (n->opset < 7 && n->op == KN_OP_PRELU) {
        /* PRelu-6: a 1-D slope of C values is per channel (axis 1) */
        legacy = b->rank == 1 && b->dims[0] != 1 && a->rank >= 2 &&
                 (a->dims[1] < 0 || a->dims[1] == b->dims[0]);
        axis = 1;
    } else if (n->opset < 7 && kn_attr_int(cx, n, "broadcast", 0) == 1 && kn_node_attr(n, "axis")) {
        legacy = true;
        axis = kn_attr_int(cx, n, "axis", 0);
    }
    if (kn_failed(cx)) return cx->status;
    if (!legacy) return KN_OK;
    if (a->rank < 0 || b->rank < 0) {
        v->rank = -1;
        return KN_OK;
    }
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis + b->rank > a->rank)
        return kn_diag(cx, n, KN_EINVAL, "legacy broadcast axis %lld does not fit rank %d in %d",
                       (long long)axis, b->rank, a->rank);
    v->rank = a->rank;
    for (int d = 0; d < a->rank; d++) {
        int k = d - (int)axis;
        bool in_b = k >= 0 && k < b->rank;
        v->dims[d] = in_b ? b->dims[k] : 1;
        v->sym[d] = in_b ? b->sym[k] : NULL;
    }
    return KN_OK;
}

/* Checks the inputs and computes the output type of n. Sets vp[0..nin) to the
 * types the inputs broadcast as (vp[1] may point at *view1, a legacy view). */
static kn_status binary_type(kn_ctx *cx, const kn_node *n, const binary_def *d,
                             kn_tensor *const *in, kn_type *view1, const kn_type **vp,
                             kn_type *out) {
    int nin = kn_node_op_inputs(n); /* fused epilogue operands follow (ir/epilogue.h) */
    KN_ASSERT(nin >= 1 && nin <= MAX_IN);
    kn_dtype t = in[0] ? in[0]->type.dtype : KN_UNDEF;
    for (int j = 0; j < nin; j++) {
        bool mixed = n->op == KN_OP_POW && j == 1; /* Pow's exponent has its own type */
        if (kn_check_dtype(cx, n, in[j], j, mixed ? KN_DT_NUM : d->mask)) return cx->status;
        if (!mixed && in[j]->type.dtype != t)
            return kn_diag(cx, n, KN_EINVAL, "input %d is %s, input 0 is %s", j,
                           kn_dtype_name(in[j]->type.dtype), kn_dtype_name(t));
        vp[j] = &in[j]->type;
    }
    if (nin == 2) {
        if (kn_binary_legacy_view(cx, n, &in[0]->type, &in[1]->type, view1)) return cx->status;
        vp[1] = view1;
    }
    kn_dtype ot = d->out_bool ? KN_BOOL : t;
    *out = kn_type_unknown(ot);
    for (int j = 0; j < nin; j++)
        if (vp[j]->rank < 0) return KN_OK;
    if (kn_broadcast(cx, n, nin, vp, out)) return cx->status;
    out->dtype = ot;
    if (n->op == KN_OP_PRELU && kn_type_static(out) && kn_type_static(&in[0]->type) &&
        !kn_type_equal(out, &in[0]->type))
        return kn_diag(cx, n, KN_EINVAL, "slope does not broadcast to the input's shape");
    return KN_OK;
}

static kn_status infer_binary(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const binary_def *d = binary_find(cx, n);
    if (!d) return cx->status;
    kn_type view1;
    const kn_type *vp[MAX_IN];
    return binary_type(cx, n, d, in, &view1, vp, &out[0]);
}

static kn_status eval_binary(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const binary_def *d = binary_find(cx, n);
    if (!d) return cx->status;
    int k = kn_node_op_inputs(n); /* not the epilogue operands, which follow */
    kn_type view1, ot;
    const kn_type *vp[MAX_IN];
    if (binary_type(cx, n, d, in, &view1, vp, &ot)) return cx->status;
    if (!out[0]) out[0] = kn_exec_tensor(ex, n, ot.dtype, ot.rank, ot.dims);
    kn_tensor *y = out[0];
    if (!y) return cx->status;
    int64_t *strides = kn_arena_array(kn_exec_arena(ex), (size_t)k * KN_MAX_RANK, sizeof *strides);
    KN_ASSERT(strides);
    for (int j = 0; j < k; j++)
        kn_bcast_strides(vp[j], ot.rank, ot.dims, strides + j * KN_MAX_RANK);

    kn_dtype t0 = in[0]->type.dtype, yt = ot.dtype;
    const kn_dtype_info *info = kn_dtype_get(t0);
    /* The arithmetic: a float input (Pow's exponent may differ from the base) makes it
     * float; else signed or unsigned by input 0. */
    bool flt = info->is_float || kn_dtype_get(in[k - 1]->type.dtype)->is_float;
    int64_t numel = kn_type_numel(&ot);
    for (int64_t i = 0; i < numel; i++) {
        size_t idx = (size_t)i;
#define OFF(j) ((size_t)kn_bcast_offset(i, ot.rank, ot.dims, strides + (j)*KN_MAX_RANK))
        if (t0 == KN_STRING) { /* Equal on strings */
            const char *a = ((char *const *)in[0]->data)[OFF(0)];
            const char *b = ((char *const *)in[1]->data)[OFF(1)];
            kn_store_i64(y->data, yt, idx, !strcmp(a, b));
        } else if (flt) {
            double acc = kn_load_f64(in[0]->data, t0, OFF(0));
            for (int j = 1; j < k; j++)
                acc = d->f(acc, kn_load_f64(in[j]->data, in[j]->type.dtype, OFF(j)));
            if (n->op == KN_OP_MEAN) acc /= k;
            kn_store_f64(y->data, yt, idx, acc);
        } else if (info->is_signed) {
            int64_t acc = kn_load_i64(in[0]->data, t0, OFF(0));
            for (int j = 1; j < k; j++)
                acc = d->i(acc, kn_load_i64(in[j]->data, in[j]->type.dtype, OFF(j)));
            kn_store_i64(y->data, yt, idx, acc);
        } else {
            uint64_t acc = kn_load_u64(in[0]->data, t0, OFF(0));
            for (int j = 1; j < k; j++)
                acc = d->u(acc, kn_load_u64(in[j]->data, in[j]->type.dtype, OFF(j)));
            kn_store_u64(y->data, yt, idx, acc);
        }
#undef OFF
    }
    return KN_OK;
}

/* ---- Where ---- */

static kn_status where_type(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT(BOOL)) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT_ANY) || kn_check_dtype(cx, n, in[2], 2, KN_DT_ANY))
        return cx->status;
    kn_dtype t = in[1]->type.dtype;
    if (in[2]->type.dtype != t)
        return kn_diag(cx, n, KN_EINVAL, "inputs 1 and 2 differ in type: %s and %s",
                       kn_dtype_name(t), kn_dtype_name(in[2]->type.dtype));
    const kn_type *ts[3] = {&in[0]->type, &in[1]->type, &in[2]->type};
    *out = kn_type_unknown(t);
    if (kn_broadcast(cx, n, 3, ts, out)) return cx->status;
    out->dtype = t;
    return KN_OK;
}

static kn_status infer_where(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    return where_type(cx, n, in, &out[0]);
}

static kn_status eval_where(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type ot;
    if (where_type(cx, n, in, &ot)) return cx->status;
    if (!out[0]) out[0] = kn_exec_tensor(ex, n, ot.dtype, ot.rank, ot.dims);
    kn_tensor *y = out[0];
    if (!y) return cx->status;
    int64_t st[3][KN_MAX_RANK];
    for (int j = 0; j < 3; j++) kn_bcast_strides(&in[j]->type, ot.rank, ot.dims, st[j]);
    size_t size = kn_dtype_get(ot.dtype)->size;
    int64_t numel = kn_type_numel(&ot);
    for (int64_t i = 0; i < numel; i++) {
        int64_t c = kn_bcast_offset(i, ot.rank, ot.dims, st[0]);
        int j = ((const uint8_t *)in[0]->data)[c] ? 1 : 2;
        int64_t o = kn_bcast_offset(i, ot.rank, ot.dims, st[j]);
        if (ot.dtype == KN_STRING)
            ((char **)y->data)[i] =
                kn_arena_strdup(kn_exec_arena(ex), ((char *const *)in[j]->data)[o]);
        else
            memcpy((char *)y->data + (size_t)i * size, (const char *)in[j]->data + (size_t)o * size,
                   size);
    }
    return KN_OK;
}

#define BIN(id)                                                                                    \
    { KN_OP_##id, infer_binary, eval_binary }
const kn_opimpl kn_ops_binary[] = {
    KN_BINARY_OPS(BIN),
    {KN_OP_WHERE, infer_where, eval_where},
    {KN_OP_COUNT, 0, 0},
};
#undef BIN
