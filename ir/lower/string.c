/* Lowerings of group 'string': Cast/CastLike to and from strings, Equal on strings,
 * StringConcat, StringNormalizer, RegexFullMatch (and StringSplit's empty case).
 *
 * String elements are `const char *` (ir/kir.h, "Strings"). New strings are written
 * into character storage in the arena (kl_string_storage), one fixed-size slot per
 * element, so the iterations of the element loop stay independent and the storage
 * size is known at compile time:
 *
 * - f32 -> string: numpy's str() as the interpreter prints it (ir/ops/unary.c): the
 *   fewest significant digits (1..9) that read back to the same f32, positional for
 *   1e-4 <= |v| < 1e16, else d.ddde+XX; "nan", "inf", "-inf", "0.0", "-0.0". Digits
 *   come from double arithmetic: v * 10^k rounded half to even, checked by reading
 *   D / 10^k back. For |k| <= 22 (|v| in about [1e-13, 1e22]) every step is one
 *   correctly rounded double operation, as the interpreter's printf/strtod; beyond,
 *   10^k is inexact and a last digit may differ in rare cases. 32 bytes a slot.
 * - string -> float: strtod's grammar without hex floats: leading white space, a
 *   sign, "inf"/"infinity"/"nan" in any case, decimal digits with a point and an
 *   exponent; the longest valid prefix counts and no digits give 0. Up to 18
 *   significant digits are kept; the value is mantissa * 10^exp in double (correctly
 *   rounded when |exp| <= 22), then converted to the output type as the interpreter
 *   converts strtod's double.
 * - StringNormalizer without stopwords: NONE passes the input pointers through;
 *   LOWER/UPPER map ASCII letters (as the interpreter) into slots of
 *   kl_max_string_bytes bytes; a longer string is cut and the run fails with
 *   KN_STATUS_STRING_TOO_LONG. With stopwords the output length depends on the data:
 *   refused (shape inference leaves the shape unknown, so lowering normally never
 *   gets here). */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/regex.h"
#include "targets/target.h"

#include <math.h>
#include <string.h>

#define F32_CHARS 32 /* "-1.23456789e-38", "-1234567900000000.0": under 24 + NUL */

/* ---- writing characters ---- */

typedef struct out_text {
    kn_kbuf *chars;
    int base, pos; /* i64 locals: slot start, next byte */
} out_text;

static void put(kn_lower *L, const out_text *o, kn_kx *c) {
    kl_store(L, o->chars, kx_add(L, kx_var(L, o->base), kx_var(L, o->pos)), kx_cast(L, KN_U8, c));
    kl_set(L, o->pos, kx_add(L, kx_var(L, o->pos), kx_int(L, 1)));
}

static void put_s(kn_lower *L, const out_text *o, const char *s) {
    for (; *s; s++) put(L, o, kx_const(L, KN_U8, (unsigned char)*s));
}

static kn_kx *i64c(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}

static kn_kx *f64c(kn_lower *L, double v) {
    return kx_const(L, KN_F64, v);
}

static kn_kx *var(kn_lower *L, int v) {
    return kx_var(L, v);
}

/* 10^e in double (e an expression of any integer or float type). */
static kn_kx *pow10x(kn_lower *L, kn_kx *e) {
    return kx_bin(L, KX_POW, f64c(L, 10.0), kx_cast(L, KN_F64, e));
}

/* ---- f32 -> text ---- */

/* Writes the text of f32 value x at o (o->pos advanced; no NUL). */
static void format_f32(kn_lower *L, const out_text *o, kn_kx *x, kn_kbuf *p10) {
    int d = kl_decl(L, KN_F64, kx_cast(L, KN_F64, x));
    kl_if(L, kx_un(L, KX_ISNAN, var(L, d)));
    put_s(L, o, "nan");
    kl_else(L);
    /* the sign: negative values and -0.0 (1/-0.0 is -inf) */
    kl_if(L,
          kx_bin(L, KX_LOR, kx_bin(L, KX_LT, var(L, d), f64c(L, 0)),
                 kx_bin(L, KX_LAND, kx_bin(L, KX_EQ, var(L, d), f64c(L, 0)),
                        kx_bin(L, KX_LT, kx_bin(L, KX_DIV, f64c(L, 1), var(L, d)), f64c(L, 0)))));
    put_s(L, o, "-");
    kl_end(L);
    int a = kl_decl(L, KN_F64, kx_un(L, KX_ABS, var(L, d)));
    int fa = kl_decl(L, KN_F32, var(L, a));
    kl_if(L, kx_un(L, KX_ISINF, var(L, a)));
    put_s(L, o, "inf");
    kl_else(L);
    kl_if(L, kx_bin(L, KX_EQ, var(L, a), f64c(L, 0)));
    put_s(L, o, "0.0");
    kl_else(L);
    /* decimal exponent e: 10^e <= a < 10^(e+1) */
    /* floor(ln a / ln 10), then corrected against pow */
    int e = kl_decl(L, KN_I64,
                    kx_cast(L, KN_I64,
                            kx_un(L, KX_FLOOR,
                                  kx_bin(L, KX_DIV, kx_un(L, KX_LOG, var(L, a)),
                                         f64c(L, 2.302585092994045684)))));
    kl_if(L, kx_bin(L, KX_LT, var(L, a), pow10x(L, var(L, e))));
    kl_set(L, e, kx_sub(L, var(L, e), i64c(L, 1)));
    kl_end(L);
    kl_if(L, kx_bin(L, KX_GE, var(L, a), pow10x(L, kx_add(L, var(L, e), i64c(L, 1)))));
    kl_set(L, e, kx_add(L, var(L, e), i64c(L, 1)));
    kl_end(L);
    /* the fewest digits P whose rounding D * 10^(E-P+1) reads back to the same f32 */
    int P = kl_decl(L, KN_I64, i64c(L, 1)), found = kl_decl(L, KN_I64, i64c(L, 0));
    int D = kl_decl(L, KN_I64, i64c(L, 0)), E = kl_decl(L, KN_I64, i64c(L, 0));
    kl_while(L, kx_bin(L, KX_LAND, kx_bin(L, KX_EQ, var(L, found), i64c(L, 0)),
                       kx_bin(L, KX_LE, var(L, P), i64c(L, 17))));
    {
        int k = kl_decl(L, KN_I64, kx_sub(L, kx_sub(L, var(L, P), i64c(L, 1)), var(L, e)));
        int sc = kl_decl(
            L, KN_F64,
            kx_select(L, kx_bin(L, KX_GE, var(L, k), i64c(L, 0)),
                      kx_mul(L, var(L, a), pow10x(L, var(L, k))),
                      kx_bin(L, KX_DIV, var(L, a), pow10x(L, kx_sub(L, i64c(L, 0), var(L, k))))));
        int dd = kl_decl(L, KN_F64, kx_un(L, KX_ROUND, var(L, sc)));
        int ec = kl_decl(L, KN_I64, var(L, e));
        kl_if(L, kx_bin(L, KX_GE, var(L, dd), pow10x(L, var(L, P)))); /* 9.99 -> 10.0 */
        kl_set(L, dd, kx_bin(L, KX_DIV, var(L, dd), f64c(L, 10)));
        kl_set(L, ec, kx_add(L, var(L, ec), i64c(L, 1)));
        kl_end(L);
        int k2 = kl_decl(L, KN_I64, kx_sub(L, kx_sub(L, var(L, P), i64c(L, 1)), var(L, ec)));
        kn_kx *back =
            kx_select(L, kx_bin(L, KX_GE, var(L, k2), i64c(L, 0)),
                      kx_bin(L, KX_DIV, var(L, dd), pow10x(L, var(L, k2))),
                      kx_mul(L, var(L, dd), pow10x(L, kx_sub(L, i64c(L, 0), var(L, k2)))));
        kl_if(L, kx_bin(L, KX_EQ, kx_cast(L, KN_F32, back), var(L, fa)));
        kl_set(L, found, i64c(L, 1));
        kl_set(L, D, kx_cast(L, KN_I64, var(L, dd)));
        kl_set(L, E, var(L, ec));
        kl_else(L);
        kl_set(L, P, kx_add(L, var(L, P), i64c(L, 1)));
        kl_end(L);
    }
    kl_end(L);
    /* drop trailing zeros: nd digits of D */
    int nd = kl_decl(L, KN_I64, var(L, P));
    kl_while(L, kx_bin(L, KX_LAND, kx_bin(L, KX_GT, var(L, nd), i64c(L, 1)),
                       kx_bin(L, KX_EQ, kx_bin(L, KX_MOD, var(L, D), i64c(L, 10)), i64c(L, 0))));
    kl_set(L, D, kx_bin(L, KX_DIV, var(L, D), i64c(L, 10)));
    kl_set(L, nd, kx_sub(L, var(L, nd), i64c(L, 1)));
    kl_end(L);
/* digit k of D (from the most significant), k an i64 expression; never indexes p10
 * out of bounds, even for k >= nd (callers select '0' there) */
#define DIGIT(kx)                                                                                  \
    kx_add(L, i64c(L, '0'),                                                                        \
           kx_bin(L, KX_MOD,                                                                       \
                  kx_bin(L, KX_DIV, var(L, D),                                                     \
                         kx_load(L, p10,                                                           \
                                 kx_bin(L, KX_MAX,                                                 \
                                        kx_sub(L, kx_sub(L, var(L, nd), i64c(L, 1)), (kx)),        \
                                        i64c(L, 0)))),                                             \
                  i64c(L, 10)))
    kl_if(L, kx_bin(L, KX_LAND, kx_bin(L, KX_GE, var(L, a), f64c(L, 1e-4)),
                    kx_bin(L, KX_LT, var(L, a), f64c(L, 1e16))));
    {
        kl_if(L, kx_bin(L, KX_LT, var(L, E), i64c(L, 0))); /* 0.000ddd */
        put_s(L, o, "0.");
        int z = kl_for_x(L, kx_sub(L, kx_sub(L, i64c(L, 0), var(L, E)), i64c(L, 1)));
        (void)z;
        put_s(L, o, "0");
        kl_end(L);
        int k = kl_for_x(L, var(L, nd));
        put(L, o, DIGIT(var(L, k)));
        kl_end(L);
        kl_else(L); /* ddd.ddd, ddd00.0 */
        int k1 = kl_for_x(L, kx_add(L, var(L, E), i64c(L, 1)));
        put(L, o,
            kx_select(L, kx_bin(L, KX_LT, var(L, k1), var(L, nd)), DIGIT(var(L, k1)),
                      i64c(L, '0')));
        kl_end(L);
        put_s(L, o, ".");
        kl_if(L, kx_bin(L, KX_GT, var(L, nd), kx_add(L, var(L, E), i64c(L, 1))));
        int k2 = kl_for_x(L, kx_sub(L, kx_sub(L, var(L, nd), var(L, E)), i64c(L, 1)));
        put(L, o, DIGIT(kx_add(L, kx_add(L, var(L, k2), var(L, E)), i64c(L, 1))));
        kl_end(L);
        kl_else(L);
        put_s(L, o, "0");
        kl_end(L);
        kl_end(L);
    }
    kl_else(L); /* d.ddde+XX */
    {
        put(L, o, DIGIT(i64c(L, 0)));
        kl_if(L, kx_bin(L, KX_GT, var(L, nd), i64c(L, 1)));
        put_s(L, o, ".");
        int k = kl_for_x(L, kx_sub(L, var(L, nd), i64c(L, 1)));
        put(L, o, DIGIT(kx_add(L, var(L, k), i64c(L, 1))));
        kl_end(L);
        kl_end(L);
        put_s(L, o, "e");
        put(L, o,
            kx_select(L, kx_bin(L, KX_LT, var(L, E), i64c(L, 0)), i64c(L, '-'), i64c(L, '+')));
        int ae = kl_decl(L, KN_I64, kx_un(L, KX_ABS, var(L, E)));
        kl_if(L, kx_bin(L, KX_GE, var(L, ae), i64c(L, 100)));
        put(L, o, kx_add(L, i64c(L, '0'), kx_bin(L, KX_DIV, var(L, ae), i64c(L, 100))));
        kl_end(L);
        put(L, o,
            kx_add(L, i64c(L, '0'),
                   kx_bin(L, KX_MOD, kx_bin(L, KX_DIV, var(L, ae), i64c(L, 10)), i64c(L, 10))));
        put(L, o, kx_add(L, i64c(L, '0'), kx_bin(L, KX_MOD, var(L, ae), i64c(L, 10))));
    }
    kl_end(L);
#undef DIGIT
    kl_end(L); /* a == 0 */
    kl_end(L); /* inf */
    kl_end(L); /* nan */
}

/* ---- text -> double ---- */

static kn_kx *byte_at(kn_lower *L, int s, int j) {
    return kx_byte(L, var(L, s), var(L, j));
}

/* c = s[++j] */
static void advance(kn_lower *L, int s, int j, int c) {
    kl_set(L, j, kx_add(L, var(L, j), i64c(L, 1)));
    kl_set(L, c, byte_at(L, s, j));
}

static kn_kx *is_digit(kn_lower *L, int c) {
    return kx_bin(L, KX_LAND, kx_bin(L, KX_GE, var(L, c), kx_const(L, KN_U8, '0')),
                  kx_bin(L, KX_LE, var(L, c), kx_const(L, KN_U8, '9')));
}

static kn_kx *digit_val(kn_lower *L, int c) {
    return kx_sub(L, kx_cast(L, KN_I64, var(L, c)), i64c(L, '0'));
}

/* ok = s[j .. j+len) equals word (ASCII case-insensitive), read no further than the
 * first mismatch (so never past the NUL). */
static int match_word(kn_lower *L, int s, int j, const char *word) {
    int ok = kl_decl(L, KN_I64, i64c(L, 1));
    for (int k = 0; word[k]; k++) {
        kl_if(L, kx_bin(L, KX_NE, var(L, ok), i64c(L, 0)));
        kn_kx *b = kx_bin(
            L, KX_OR, kx_cast(L, KN_I64, kx_byte(L, var(L, s), kx_add(L, var(L, j), i64c(L, k)))),
            i64c(L, 0x20));
        kl_set(L, ok, kx_cast(L, KN_I64, kx_bin(L, KX_EQ, b, i64c(L, word[k]))));
        kl_end(L);
    }
    return ok;
}

/* The double value of string local s (strtod's decimal grammar). */

/* An optional sign at c: skips it; the result is a new i64 local, 1 after a '-'. */
static int parse_sign(kn_lower *L, int s, int j, int c) {
    int neg = kl_decl(L, KN_I64, i64c(L, 0));
    kl_if(L, kx_bin(L, KX_EQ, var(L, c), kx_const(L, KN_U8, '-')));
    kl_set(L, neg, i64c(L, 1));
    advance(L, s, j, c);
    kl_else(L);
    kl_if(L, kx_bin(L, KX_EQ, var(L, c), kx_const(L, KN_U8, '+')));
    advance(L, s, j, c);
    kl_end(L);
    kl_end(L);
    return neg;
}

static int parse_f64(kn_lower *L, int s) {
    int val = kl_decl(L, KN_F64, f64c(L, 0));
    int j = kl_decl(L, KN_I64, i64c(L, 0));
    int c = kl_decl(L, KN_U8, byte_at(L, s, j));
    kl_while(L, kx_bin(L, KX_LOR, kx_bin(L, KX_EQ, var(L, c), kx_const(L, KN_U8, ' ')),
                       kx_bin(L, KX_LAND, kx_bin(L, KX_GE, var(L, c), kx_const(L, KN_U8, 9)),
                              kx_bin(L, KX_LE, var(L, c), kx_const(L, KN_U8, 13)))));
    advance(L, s, j, c);
    kl_end(L);
    int neg = parse_sign(L, s, j, c);
    int inf = match_word(L, s, j, "inf");
    kl_if(L, kx_bin(L, KX_NE, var(L, inf), i64c(L, 0)));
    kl_set(L, val, f64c(L, INFINITY));
    kl_else(L);
    int nan = match_word(L, s, j, "nan");
    kl_if(L, kx_bin(L, KX_NE, var(L, nan), i64c(L, 0)));
    kl_set(L, val, f64c(L, NAN));
    kl_else(L);
    {
        int mant = kl_decl(L, KN_I64, i64c(L, 0)), nd = kl_decl(L, KN_I64, i64c(L, 0));
        int ex = kl_decl(L, KN_I64, i64c(L, 0));
        for (int frac = 0; frac < 2; frac++) {
            if (frac) {
                kl_if(L, kx_bin(L, KX_EQ, var(L, c), kx_const(L, KN_U8, '.')));
                advance(L, s, j, c);
            }
            kl_while(L, is_digit(L, c));
            kl_if(L, kx_bin(L, KX_LT, var(L, nd), i64c(L, 18))); /* kept */
            kl_set(L, mant, kx_add(L, kx_mul(L, var(L, mant), i64c(L, 10)), digit_val(L, c)));
            kl_if(L, kx_bin(L, KX_NE, var(L, mant), i64c(L, 0)));
            kl_set(L, nd, kx_add(L, var(L, nd), i64c(L, 1)));
            kl_end(L);
            if (frac) kl_set(L, ex, kx_sub(L, var(L, ex), i64c(L, 1)));
            if (!frac) {
                kl_else(L); /* dropped integer digit: scale up */
                kl_set(L, ex, kx_add(L, var(L, ex), i64c(L, 1)));
            }
            kl_end(L);
            advance(L, s, j, c);
            kl_end(L);
            if (frac) kl_end(L);
        }
        kl_if(L, kx_bin(L, KX_EQ, kx_bin(L, KX_OR, var(L, c), kx_const(L, KN_U8, 0x20)),
                        kx_const(L, KN_U8, 'e')));
        {
            advance(L, s, j, c);
            int eneg = parse_sign(L, s, j, c), ev = kl_decl(L, KN_I64, i64c(L, 0));
            kl_while(L, is_digit(L, c));
            kl_if(L, kx_bin(L, KX_LT, var(L, ev), i64c(L, 100000)));
            kl_set(L, ev, kx_add(L, kx_mul(L, var(L, ev), i64c(L, 10)), digit_val(L, c)));
            kl_end(L);
            advance(L, s, j, c);
            kl_end(L);
            kl_set(L, ex,
                   kx_add(L, var(L, ex),
                          kx_select(L, kx_bin(L, KX_NE, var(L, eneg), i64c(L, 0)),
                                    kx_sub(L, i64c(L, 0), var(L, ev)), var(L, ev))));
        }
        kl_end(L);
        /* mant * 10^ex, each step one rounding while 10^|ex| is exact (|ex| <= 22) */
        int m = kl_decl(L, KN_F64, kx_cast(L, KN_F64, var(L, mant)));
        kl_if(L, kx_bin(L, KX_EQ, var(L, mant), i64c(L, 0)));
        kl_set(L, val, f64c(L, 0));
        kl_else(L);
        kl_if(L, kx_bin(L, KX_GE, var(L, ex), i64c(L, 0)));
        kl_set(L, val,
               kx_mul(L, var(L, m), pow10x(L, kx_bin(L, KX_MIN, var(L, ex), i64c(L, 400)))));
        kl_else(L);
        kl_if(L, kx_bin(L, KX_GE, var(L, ex), i64c(L, -308)));
        kl_set(L, val, kx_bin(L, KX_DIV, var(L, m), pow10x(L, kx_sub(L, i64c(L, 0), var(L, ex)))));
        kl_else(L); /* below 1e-308: two steps, so denormals survive */
        kl_set(L, val,
               kx_bin(L, KX_DIV, kx_bin(L, KX_DIV, var(L, m), f64c(L, 1e308)),
                      pow10x(L, kx_bin(L, KX_MIN, kx_sub(L, i64c(L, -308), var(L, ex)),
                                       i64c(L, 400)))));
        kl_end(L);
        kl_end(L);
        kl_end(L);
    }
    kl_end(L); /* nan */
    kl_end(L); /* inf */
    kl_if(L, kx_bin(L, KX_NE, var(L, neg), i64c(L, 0)));
    kl_set(L, val, kx_un(L, KX_NEG, var(L, val)));
    kl_end(L);
    return val;
}

/* ---- Cast, CastLike ---- */

kn_status kl_cast_string(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_dtype st = in[0]->dtype, dt = out[0]->dtype;
    const kn_dtype_info *di = kn_dtype_get(dt);
    int64_t numel = out[0]->numel;
    if (st == KN_STRING && di->is_float) {
        int i = kl_for(L, numel);
        int s = kl_decl(L, KN_STRING, kx_load(L, in[0], var(L, i)));
        int v = parse_f64(L, s);
        kl_store(L, out[0], var(L, i), kx_cast(L, kx_compute_dtype(dt), var(L, v)));
        kl_end(L);
        return KN_OK;
    }
    if (dt == KN_STRING && st == KN_F32) {
        static const int64_t p10v[19] = {1,
                                         10,
                                         100,
                                         1000,
                                         10000,
                                         100000,
                                         1000000,
                                         10000000,
                                         100000000,
                                         1000000000,
                                         10000000000,
                                         100000000000,
                                         1000000000000,
                                         10000000000000,
                                         100000000000000,
                                         1000000000000000,
                                         10000000000000000,
                                         100000000000000000,
                                         1000000000000000000};
        kn_kbuf *p10 = kl_table(L, KN_I64, 19, p10v);
        kn_kbuf *chars = kl_string_storage(L, (numel ? numel : 1) * F32_CHARS);
        int i = kl_for(L, numel);
        out_text o = {chars, kl_decl(L, KN_I64, kx_mul(L, var(L, i), i64c(L, F32_CHARS))),
                      kl_decl(L, KN_I64, i64c(L, 0))};
        format_f32(L, &o, kx_load(L, in[0], var(L, i)), p10);
        kl_store(L, chars, kx_add(L, var(L, o.base), var(L, o.pos)), kx_const(L, KN_U8, 0));
        kl_store(L, out[0], var(L, i), kx_str(L, chars, var(L, o.base)));
        kl_end(L);
        return KN_OK;
    }
    return kn_diag(cx, n, KN_EUNSUPPORTED,
                   "casting %s to %s is not supported by code generation (strings: f32 to "
                   "string, string to float types)",
                   kn_dtype_name(st), kn_dtype_name(dt));
}

/* ---- StringNormalizer ---- */

static kn_status lower_strnorm(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                               kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    const char *const *stop = NULL;
    int nstop = kn_attr_strings(cx, n, "stopwords", &stop);
    const char *act = kn_attr_str(cx, n, "case_change_action", "NONE");
    if (kn_failed(cx)) return cx->status;
    if (nstop > 0) /* (-1: none) */
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "stopwords make the output length depend on the input strings; compiled "
                       "code needs static shapes");
    int64_t numel = in[0]->numel;
    if (numel == 0) { /* one empty string */
        kn_kbuf *chars = kl_string_storage(L, 1);
        kl_store(L, chars, i64c(L, 0), kx_const(L, KN_U8, 0));
        kl_store(L, out[0], i64c(L, 0), kx_str(L, chars, i64c(L, 0)));
        return KN_OK;
    }
    if (act[0] != 'L' && act[0] != 'U') {
        kl_copy(L, out[0], i64c(L, 0), in[0], i64c(L, 0), i64c(L, numel));
        return KN_OK;
    }
    int64_t M = kl_max_string_bytes(L);
    kn_warn(cx, n,
            "strings are stored in %lld bytes each (NUL included); a longer one is cut and "
            "NAME_run returns 2 (%s)",
            (long long)M, kn_hint_text(cx, KN_HINT_STRING_BYTES));
    kn_kbuf *chars = kl_string_storage(L, numel * M);
    char lo = act[0] == 'L' ? 'A' : 'a', hi = act[0] == 'L' ? 'Z' : 'z';
    int delta = act[0] == 'L' ? 'a' - 'A' : 'A' - 'a';
    int i = kl_for(L, numel);
    int s = kl_decl(L, KN_STRING, kx_load(L, in[0], var(L, i)));
    int base = kl_decl(L, KN_I64, kx_mul(L, var(L, i), i64c(L, M)));
    int j = kl_decl(L, KN_I64, i64c(L, 0));
    int c = kl_decl(L, KN_U8, byte_at(L, s, j));
    kl_while(L, kx_bin(L, KX_LAND, kx_bin(L, KX_NE, var(L, c), kx_const(L, KN_U8, 0)),
                       kx_bin(L, KX_LT, var(L, j), i64c(L, M - 1))));
    kn_kx *letter = kx_bin(L, KX_LAND, kx_bin(L, KX_GE, var(L, c), kx_const(L, KN_U8, lo)),
                           kx_bin(L, KX_LE, var(L, c), kx_const(L, KN_U8, hi)));
    kl_store(L, chars, kx_add(L, var(L, base), var(L, j)),
             kx_select(L, letter, kx_add(L, kx_cast(L, KN_I64, var(L, c)), i64c(L, delta)),
                       kx_cast(L, KN_I64, var(L, c))));
    advance(L, s, j, c);
    kl_end(L);
    kl_store(L, chars, kx_add(L, var(L, base), var(L, j)), kx_const(L, KN_U8, 0));
    kl_if(L, kx_bin(L, KX_NE, var(L, c), kx_const(L, KN_U8, 0)));
    kl_fail(L, KN_STATUS_STRING_TOO_LONG);
    kl_end(L);
    kl_store(L, out[0], var(L, i), kx_str(L, chars, var(L, base)));
    kl_end(L);
    return KN_OK;
}

/* ---- Equal on strings ---- */

kn_status kl_equal_string(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    (void)n;
    kn_kbuf *y = out[0];
    if (!y->numel) return KN_OK;
    int v[KN_MAX_RANK];
    int64_t st[KN_MAX_RANK];
    kn_strides(y->rank, y->dims, st);
    kl_for_shape(L, y->rank, y->dims, v);
    int s[2], c[2];
    int j = kl_decl(L, KN_I64, i64c(L, 0));
    for (int k = 0; k < 2; k++) {
        s[k] = kl_decl(L, KN_STRING,
                       kx_load(L, in[k], kx_bcast_offset(L, in[k], y->rank, y->dims, v)));
        c[k] = kl_decl(L, KN_U8, byte_at(L, s[k], j));
    }
    /* up to the first difference or the common end */
    kl_while(L, kx_bin(L, KX_LAND, kx_bin(L, KX_EQ, var(L, c[0]), var(L, c[1])),
                       kx_bin(L, KX_NE, var(L, c[0]), kx_const(L, KN_U8, 0))));
    kl_set(L, j, kx_add(L, var(L, j), i64c(L, 1)));
    for (int k = 0; k < 2; k++) kl_set(L, c[k], byte_at(L, s[k], j));
    kl_end(L);
    kl_store(L, y, kx_offset(L, y->rank, v, st), kx_bin(L, KX_EQ, var(L, c[0]), var(L, c[1])));
    kl_end_n(L, y->rank);
    return KN_OK;
}

/* ---- StringConcat ---- */

/* Each output element's slot of kl_max_string_bytes bytes holds x's characters, then y's
 * (both broadcast), then NUL; a longer result is cut and the run fails with
 * KN_STATUS_STRING_TOO_LONG, as StringNormalizer's. */
static kn_status lower_strconcat(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_kbuf *y = out[0];
    if (!y->numel) return KN_OK;
    int64_t M = kl_max_string_bytes(L);
    kn_warn(cx, n,
            "strings are stored in %lld bytes each (NUL included); a longer one is cut and "
            "NAME_run returns 2 (%s)",
            (long long)M, kn_hint_text(cx, KN_HINT_STRING_BYTES));
    kn_kbuf *chars = kl_string_storage(L, y->numel * M);
    int v[KN_MAX_RANK];
    int64_t st[KN_MAX_RANK];
    kn_strides(y->rank, y->dims, st);
    kl_for_shape(L, y->rank, y->dims, v);
    int i = kl_decl(L, KN_I64, kx_offset(L, y->rank, v, st));
    int base = kl_decl(L, KN_I64, kx_mul(L, var(L, i), i64c(L, M)));
    int j = kl_decl(L, KN_I64, i64c(L, 0));
    for (int k = 0; k < 2; k++) {
        int s = kl_decl(L, KN_STRING,
                        kx_load(L, in[k], kx_bcast_offset(L, in[k], y->rank, y->dims, v)));
        int p = kl_decl(L, KN_I64, i64c(L, 0));
        int c = kl_decl(L, KN_U8, byte_at(L, s, p));
        kl_while(L, kx_bin(L, KX_LAND, kx_bin(L, KX_NE, var(L, c), kx_const(L, KN_U8, 0)),
                           kx_bin(L, KX_LT, var(L, j), i64c(L, M - 1))));
        kl_store(L, chars, kx_add(L, var(L, base), var(L, j)), var(L, c));
        kl_set(L, j, kx_add(L, var(L, j), i64c(L, 1)));
        advance(L, s, p, c);
        kl_end(L);
        kl_if(L, kx_bin(L, KX_NE, var(L, c), kx_const(L, KN_U8, 0)));
        kl_fail(L, KN_STATUS_STRING_TOO_LONG);
        kl_end(L);
    }
    kl_store(L, chars, kx_add(L, var(L, base), var(L, j)), kx_const(L, KN_U8, 0));
    kl_store(L, y, var(L, i), kx_str(L, chars, var(L, base)));
    kl_end_n(L, y->rank);
    return KN_OK;
}

/* ---- RegexFullMatch, StringSplit ---- */

/* y[i] = the C library's regexec of the translated pattern (ir/regex.h) on x[i], the
 * pattern compiled once per run into a regex_t in the arena; a failed regcomp (out of
 * memory) fails the run with KN_STATUS_REGEX. Hosted targets only: a microcontroller's
 * C library has no <regex.h>. */
static kn_status lower_regex(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    if (L->target && L->target->kind == KN_TARGET_MCU)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "RegexFullMatch calls the C library's <regex.h> (regcomp/regexec), which "
                       "target '%s' (a microcontroller) does not have; only a constant input "
                       "(folded at compile time) compiles for it",
                       L->target->name);
    char posix[KN_REGEX_MAX], why[200];
    int flags;
    const char *re2 = kn_attr_str(cx, n, "pattern", "");
    if (kn_failed(cx)) return cx->status;
    if (kn_regex_translate(re2, posix, sizeof posix, &flags, why, sizeof why))
        return kn_diag(cx, n, KN_EUNSUPPORTED, "pattern '%s': %s", re2, why);
    kn_kbuf *y = out[0];
    if (!y->numel) return KN_OK;
    /* the compiled pattern lives in the arena for this kernel: compile, match each
     * element, free */
    int64_t bytes = KN_REGEX_T_BYTES;
    kn_kbuf *re = kl_buffer(L->p, KB_TEMP, KN_U8, 1, &bytes, "re");
    kn_kx *zero = kx_const(L, KN_I32, 0);
    kl_if(L, kx_bin(L, KX_LT, kx_regex(L, KN_RX_COMPILE, re, NULL, posix, flags), zero));
    kl_fail(L, KN_STATUS_REGEX);
    kl_else(L);
    int i = kl_for(L, y->numel);
    kl_store(L, y, var(L, i),
             kx_bin(L, KX_GT, kx_regex(L, KN_RX_MATCH, re, kx_load(L, in[0], var(L, i)), NULL, 0),
                    zero));
    kl_end(L);
    kl_if(L, kx_bin(L, KX_NE, kx_regex(L, KN_RX_FREE, re, NULL, NULL, 0), zero)); /* never */
    kl_fail(L, KN_STATUS_REGEX);
    kl_end(L);
    kl_end(L);
    return KN_OK;
}

/* StringSplit reaches lowering with a static output only when its input has no
 * elements (a constant input is folded): nothing to compute. */
static kn_status lower_strsplit(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    (void)out;
    if (!in[0]->numel) return KN_OK;
    return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED,
                   "the width of StringSplit's output is the most pieces any input string "
                   "splits into, known only from the strings; compiled code needs it at "
                   "compile time (a constant input is folded)");
}

const kn_oplower kn_lower_string[] = {
    {KN_OP_REGEXFULLMATCH, lower_regex},
    {KN_OP_STRINGSPLIT, lower_strsplit},
    {KN_OP_STRINGCONCAT, lower_strconcat},
    {KN_OP_STRINGNORMALIZER, lower_strnorm},
    {KN_OP_COUNT, 0},
};
