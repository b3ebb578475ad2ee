/* The C-family printer of kernel IR statements and expressions, shared by the C99
 * emitter (emit_c.c) and the OpenCL C emitter (codegen/opencl): the dialects differ
 * only in type names, math function names, half-precision access and memmove, which
 * this file switches on P->dialect. Helpers (f16 conversions, NaN-propagating
 * min/max, division without undefined behaviour) are collected while printing and
 * emitted only when used. */
#include "codegen/c/cprint.h"
#include "ir/regex.h"
#include "targets/target.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* H_F16/H_BF16: loads (kn_h2f, kn_b2f); H_F16_ST/H_BF16_ST: stores (kn_f2h, kn_f2b) */
enum { H_F16 = 1, H_BF16 = 2, H_F16_ST = 32, H_BF16_ST = 64 };
/* H_DOT << kind: the KX_DOT helper kn_dot<kind> (kn_dot of targets/target.h) */
enum { H_DOT = 128 };
/* H_UNPACK << i: the KX_UNPACK16 helper kn_unpack16_<i> (i = odd | unsigned << 1) */
enum { H_UNPACK = 4096 };
/* H_SAT << k: the KX_SAT helper kn_sat_<k> (k = bits / 8 - 1 | unsigned << 1) */
enum { H_SAT = 65536 };
/* H_REGEX: the KX_REGEX helper kn_regex_full (<regex.h>) */
enum { H_REGEX = 1 << 20 };
/* H_LDW: the word load helper kn_ldw (kx_load_word) */
enum { H_LDW = 1 << 21 };
/* H_STW: the word store helper kn_stw (kl_store_word) */
enum { H_STW = 1 << 23 };
/* H_RINTF: kn_rintf, KX_ROUND of a scalar f32 in C99 */
enum { H_RINTF = 1 << 22 };
/* H_RINTS: kn_rintf_small, kx_round_small of a scalar f32 in C99 */
enum { H_RINTS = 1 << 24 };
/* H_DOTX: the KX_DOT helper of KN_DOT_S16X2X (kn_dot5: SMLADX) */
enum { H_DOTX = 1 << 25 };
/* H_KEEP: kn_keep, the pointer of a kept load (kx_load_kept) */
enum { H_KEEP = 1 << 26 };
/* H_MMLA: kn_mmla, an i32 plus the high word of a 32 x 32-bit signed product (SMMLA) */
enum { H_MMLA = 1 << 27 };
/* H_PF: the prefetch hint kn_prefetch (kl_prefetch) */
enum { H_PF = 1 << 28 };
/* H_CVTRN: kn_cvtrn, KX_CVTRN of a scalar f32 (VCVTR on an Arm FPU) */
enum { H_CVTRN = 1 << 29 };
/* H_QADD: kn_qadd, KX_QADD (QADD on the Arm DSP) */
enum { H_QADD = 8 };
/* H_Q4F: the KN_Q4F macros (mve_quant) */
enum { H_Q4F = 1 << 30 };
/* H_UNROLL: KN_UNROLL(n), GCC's `#pragma GCC unroll n` before a loop marked KN_LOOP_UNROLL */
enum { H_UNROLL = 16 };

typedef kn_cprint emitter;

static bool ivvar(const emitter *E, int v);

/* Whether local v is a register block printed as scalars v<v>_<lane> (block_decl). */
static bool blk_var(const emitter *E, int v) {
    for (int i = 0; i < E->nblk && i < 64; i++)
        if (E->blk_var[i] == v) return true;
    return false;
}

static const char *ctype_ocl(kn_dtype t) {
    switch (t) {
    case KN_F32: return "float";
    case KN_F64: return "double";
    case KN_I8:
    case KN_I4: return "char";
    case KN_U8:
    case KN_U4:
    case KN_F8E4M3FN: /* codes */
    case KN_F8E4M3FNUZ:
    case KN_F8E5M2:
    case KN_F8E5M2FNUZ:
    case KN_BOOL: return "uchar";
    case KN_I16: return "short";
    case KN_U16:
    case KN_BF16: return "ushort";
    case KN_F16: return "half";
    case KN_I32: return "int";
    case KN_U32: return "uint";
    case KN_I64: return "long";
    case KN_U64: return "ulong";
    default: return "void";
    }
}

const char *kn_ctype_c99(kn_dtype t) {
    switch (t) {
    case KN_F32: return "float";
    case KN_F64: return "double";
    case KN_I8:
    case KN_I4: return "int8_t";
    case KN_U8:
    case KN_U4:
    case KN_F8E4M3FN: /* codes */
    case KN_F8E4M3FNUZ:
    case KN_F8E5M2:
    case KN_F8E5M2FNUZ: return "uint8_t";
    case KN_I16: return "int16_t";
    case KN_U16: return "uint16_t";
    case KN_I32: return "int32_t";
    case KN_U32: return "uint32_t";
    case KN_I64: return "int64_t";
    case KN_U64: return "uint64_t";
    case KN_BOOL: return "uint8_t";
    case KN_F16:
    case KN_BF16: return "uint16_t";
    case KN_STRING: return "const char *";
    default: return "void";
    }
}

const char *kn_cprint_ctype(const kn_cprint *P, kn_dtype t) {
    return P->dialect == KN_OPENCL ? ctype_ocl(t) : kn_ctype_c99(t);
}

#define CT(t) kn_cprint_ctype(E, (t))

/* The unsigned type of the same width (unsigned types map to themselves). */
static const char *unsigned_of(const emitter *E, kn_dtype t) {
    switch (kn_dtype_get(t)->size) {
    case 1: return CT(KN_U8);
    case 2: return CT(KN_U16);
    case 4: return CT(KN_U32);
    default: return CT(KN_U64);
    }
}

static bool is_float(kn_dtype t) {
    return t == KN_F32 || t == KN_F64;
}

/* A literal of value v / i in dtype t. */
void kn_cprint_const(const kn_cprint *E, kn_dtype t, double v, int64_t i) {
    FILE *f = E->f;
    bool ocl = E->dialect == KN_OPENCL;
    if (is_float(t)) {
        if (isnan(v)) {
            fprintf(f, t == KN_F32 ? "NAN" : "((double)NAN)");
            return;
        }
        if (isinf(v)) {
            fprintf(f, "%s%s", v < 0 ? "-" : "", t == KN_F32 ? "INFINITY" : "((double)INFINITY)");
            return;
        }
        char buf[64];
        snprintf(buf, sizeof buf, t == KN_F32 ? "%.9g" : "%.17g", v);
        if (!strpbrk(buf, ".e")) strcat(buf, ".0");
        fprintf(f, "%s%s", buf, t == KN_F32 ? "f" : "");
        return;
    }
    switch (t) {
    case KN_I64: /* int-sized literals convert implicitly; others need INT64_C */
        if (i == INT64_MIN)
            fprintf(f, ocl ? "(-9223372036854775807L - 1)" : "(-INT64_C(9223372036854775807) - 1)");
        else if (i > -2147483647 && i < 2147483647)
            fprintf(f, "%lld", (long long)i);
        else
            fprintf(f, ocl ? "%lldL" : "INT64_C(%lld)", (long long)i);
        return;
    case KN_U64: fprintf(f, ocl ? "%lluUL" : "UINT64_C(%llu)", (unsigned long long)i); return;
    case KN_U32: fprintf(f, "%lluu", (unsigned long long)(uint32_t)i); return;
    case KN_I32:
        if (i == INT32_MIN)
            fprintf(f, "(-2147483647 - 1)");
        else
            fprintf(f, "%lld", (long long)i);
        return;
    default: fprintf(f, "((%s)%lld)", CT(t), (long long)i); return;
    }
}

static const char *math_fn(const emitter *E, kn_kx_op op) {
    switch (op) {
    case KX_SQRT: return "sqrt";
    case KX_EXP: return "exp";
    case KX_LOG: return "log";
    case KX_TANH: return "tanh";
    case KX_ERF: return "erf";
    case KX_SIN: return "sin";
    case KX_COS: return "cos";
    case KX_TAN: return "tan";
    case KX_ASIN: return "asin";
    case KX_ACOS: return "acos";
    case KX_ATAN: return "atan";
    case KX_SINH: return "sinh";
    case KX_COSH: return "cosh";
    case KX_ASINH: return "asinh";
    case KX_ACOSH: return "acosh";
    case KX_ATANH: return "atanh";
    case KX_FLOOR: return "floor";
    case KX_CEIL: return "ceil";
    case KX_ROUND: return E->dialect == KN_OPENCL ? "rint" : "nearbyint";
    case KX_TRUNC: return "trunc";
    case KX_FMOD: return "fmod";
    case KX_POW: return "pow";
    default: return NULL;
    }
}

static const char *bin_sym(kn_kx_op op) {
    switch (op) {
    case KX_ADD: return "+";
    case KX_SUB: return "-";
    case KX_MUL: return "*";
    case KX_DIV: return "/";
    case KX_AND: return "&";
    case KX_OR: return "|";
    case KX_XOR: return "^";
    case KX_LT: return "<";
    case KX_LE: return "<=";
    case KX_GT: return ">";
    case KX_GE: return ">=";
    case KX_EQ: return "==";
    case KX_NE: return "!=";
    case KX_LAND: return "&&";
    case KX_LOR: return "||";
    default: return NULL;
    }
}

/* Narrow integer arithmetic happens in int in C: convert the result back. */
static bool narrow(kn_dtype t) {
    return kn_dtype_get(t)->size < 4 && !is_float(t);
}

/* fn(a0, a1) for x's two operands. */
static void print_call2(kn_cprint *E, const char *fn, const kn_kx *x) {
    fprintf(E->f, "%s(", fn);
    kn_cprint_expr(E, x->a[0]);
    fprintf(E->f, ", ");
    kn_cprint_expr(E, x->a[1]);
    fputc(')', E->f);
}

/* fn(a0, a1, a2) for x's three operands. */
static void print_call3(kn_cprint *E, const char *fn, const kn_kx *x) {
    fprintf(E->f, "%s(", fn);
    for (int i = 0; i < 3; i++) {
        if (i) fprintf(E->f, ", ");
        kn_cprint_expr(E, x->a[i]);
    }
    fputc(')', E->f);
}

void kn_cprint_expr(kn_cprint *E, const kn_kx *x);

static bool has_load(const kn_kx *x) {
    if (!x) return false;
    if (x->op == KX_LOAD) return true;
    return has_load(x->a[0]) || has_load(x->a[1]) || has_load(x->a[2]);
}

/* Signed overflow is undefined in C. Arithmetic on loaded i32/i64 data is printed
 * through the unsigned type (conversion back is the two's-complement wrap gcc and
 * clang define); index arithmetic, which cannot overflow, stays plain. */
static bool wraps(const kn_kx *x) {
    if (x->dtype != KN_I32 && x->dtype != KN_I64) return false;
    if (x->op != KX_ADD && x->op != KX_SUB && x->op != KX_MUL && x->op != KX_NEG) return false;
    return has_load(x->a[0]) || has_load(x->a[1]);
}

enum { F_MIN = 1, F_MAX = 2, F_ABS = 4, F_DIV = 8, F_REM = 16, F_SHL = 32, F_SHR = 64 };

static void helper_call(emitter *E, const char *fn, const kn_kx *x, unsigned bit) {
    E->types[x->dtype] |= (unsigned char)bit;
    fprintf(E->f, "kn_%s_%s(", fn, kn_dtype_name(x->dtype));
    kn_cprint_expr(E, x->a[0]);
    fprintf(E->f, ", ");
    kn_cprint_expr(E, x->a[1]);
    fputc(')', E->f);
}

/* Whether h is (i32)(((i64)a * (i64)b) >> 32) of i32 a and b, the signed high multiply
 * of the high-word requantization (ir/lower/requant32.c, kl_requant_hi32): *a and *b. */
static bool hi32_mul(const kn_kx *h, const kn_kx **a, const kn_kx **b) {
    if (h->op != KX_CAST || h->dtype != KN_I32 || h->i != 0 || kx_lanes(h) != 1) return false;
    const kn_kx *s = h->a[0], *m = s->a[0];
    if (s->op != KX_SHR || s->dtype != KN_I64 || s->a[1]->op != KX_CONST || s->a[1]->i != 32 ||
        m->op != KX_MUL || m->dtype != KN_I64)
        return false;
    for (int k = 0; k < 2; k++)
        if (m->a[k]->op != KX_CAST || m->a[k]->a[0]->dtype != KN_I32 ||
            kx_lanes(m->a[k]->a[0]) != 1)
            return false;
    *a = m->a[0]->a[0], *b = m->a[1]->a[0];
    return true;
}

/* An i32 c + (i32)(((i64)a * (i64)b) >> 32), wrapping, as kn_mmla (SMMLA where the
 * compiler targets an Arm DSP extension: GCC 12 builds SMULL and an ADD), in C99. */
static bool print_mmla(emitter *E, const kn_kx *x) {
    const kn_kx *a, *b;
    if (x->op != KX_ADD || x->dtype != KN_I32 || kx_lanes(x) != 1 || E->dialect != KN_C99)
        return false;
    int k = hi32_mul(x->a[0], &a, &b) ? 0 : hi32_mul(x->a[1], &a, &b) ? 1 : -1;
    if (k < 0 || x->a[1 - k]->dtype != KN_I32 || kx_lanes(x->a[1 - k]) != 1) return false;
    E->helpers |= H_MMLA;
    fprintf(E->f, "kn_mmla(");
    kn_cprint_expr(E, a);
    fprintf(E->f, ", ");
    kn_cprint_expr(E, b);
    fprintf(E->f, ", ");
    kn_cprint_expr(E, x->a[1 - k]);
    fputc(')', E->f);
    return true;
}

void kn_cprint_expr(kn_cprint *E, const kn_kx *x) {
    if (print_mmla(E, x)) return;
    FILE *f = E->f;
    kn_dtype t = x->dtype;
    switch (x->op) {
    case KX_CONST: kn_cprint_const(E, t, x->f, x->i); return;
    case KX_VAR: fprintf(f, kx_lanes(x) > 1 ? "v%d[kn_l]" : "v%d", x->var); return;
    case KX_LANE:
        fprintf(f, blk_var(E, x->a[0]->var) ? "v%d_%lld" : "v%d[%lld]", x->a[0]->var,
                (long long)x->i);
        return;
    case KX_BYTE: /* char may be signed: the byte as 0..255 */
        fprintf(f, "((%s)(", CT(KN_U8));
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, ")[");
        kn_cprint_expr(E, x->a[1]);
        fprintf(f, "])");
        return;
    case KX_STR:
        fprintf(f, "((const char *)(%s + ", x->buf->name);
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, "))");
        return;
    case KX_LOAD:
        if (x->i == 4) { /* a word load (kx_load_word) */
            E->helpers |= H_LDW;
            fprintf(f, "kn_ldw(%s + ", x->buf->name);
            kn_cprint_expr(E, x->a[0]);
            fputc(')', f);
            return;
        }
        if (x->buf->dtype == KN_F16 && E->dialect == KN_OPENCL) { /* a built-in */
            fprintf(f, "vload_half(");
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, "%s, %s)", kx_lanes(x) > 1 ? " + kn_l" : "", x->buf->name);
            return;
        }
        if (x->buf->dtype == KN_F16 || x->buf->dtype == KN_BF16) {
            E->helpers |= x->buf->dtype == KN_F16 ? H_F16 : H_BF16;
            fprintf(f, "%s(", x->buf->dtype == KN_F16 ? "kn_h2f" : "kn_b2f");
        }
        if (x->i == KX_LOAD_KEPT_BASE && E->dialect != KN_OPENCL) {
            /* kx_load_kept_base: buf through kn_keep, the whole index after it */
            E->helpers |= H_KEEP;
            fprintf(f, "((const %s *)kn_keep(%s))[", CT(x->buf->dtype), x->buf->name);
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, "]");
            return;
        }
        if (x->i == KX_LOAD_KEPT && E->dialect != KN_OPENCL) {
            /* kx_load_kept: (buf + base) through kn_keep, the constant part of the index
             * as the offset (all of it where the index is a constant: buf itself kept), so
             * that the loads of one tile share the kept pointer */
            const kn_kx *ix = x->a[0];
            bool cst = ix->op == KX_CONST && !kn_dtype_get(ix->dtype)->is_float;
            bool off = ix->op == KX_ADD && ix->a[1]->op == KX_CONST;
            E->helpers |= H_KEEP;
            fprintf(f, "((const %s *)kn_keep(%s", CT(x->buf->dtype), x->buf->name);
            if (!cst) {
                fprintf(f, " + ");
                kn_cprint_expr(E, off ? ix->a[0] : ix);
            }
            fprintf(f, "))[%lld]", cst ? (long long)ix->i : off ? (long long)ix->a[1]->i : 0LL);
            return;
        }
        fprintf(f, "%s[", x->buf->name);
        kn_cprint_expr(E, x->a[0]);
        if (x->stride > 1) /* a strided load (kx_vload_strided), lane by lane */
            fprintf(f, " + kn_l * %d]", x->stride);
        else
            fprintf(f, kx_lanes(x) > 1 ? " + kn_l]" : "]");
        if (x->buf->dtype == KN_F16 || x->buf->dtype == KN_BF16) fputc(')', f);
        return;
    case KX_CAST:
        if (t == KN_BOOL) {
            fprintf(f, "((");
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, ") != 0)");
        } else {
            fprintf(f, "((%s)(", CT(t));
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, "))");
        }
        return;
    case KX_SELECT:
        /* a scalar f32 select of load-free values: KN_SELF, branchless where the
         * compiler would branch (gcc on x86 does on `v < 0 ? 0 : v`, a mispredicted
         * branch per element in a ReLU epilogue); lane loops keep ?:, which the
         * vectorizer turns into blends */
        if (E->dialect == KN_C99 && t == KN_F32 && !E->in_lane && kx_lanes(x) == 1 &&
            !has_load(x->a[1]) && !has_load(x->a[2])) {
            E->self_used = true;
            print_call3(E, "KN_SELF", x);
            return;
        }
        fputc('(', f);
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, " ? ");
        kn_cprint_expr(E, x->a[1]);
        fprintf(f, " : ");
        kn_cprint_expr(E, x->a[2]);
        fputc(')', f);
        return;
    case KX_DOT:
        if (x->i == KN_DOT_S8X16 && x->a[1]->op == KX_VAR && x->a[2]->op == KX_VAR) {
            /* a reduction of two 4-lane words: KN_DOT16 (Helium VMLADAVA.S8) on kn_v4i,
             * the helper kn_dot4 on the lane arrays of scalar C */
            bool v = ivvar(E, x->a[1]->var) && ivvar(E, x->a[2]->var);
            if (v)
                E->mve_used = true;
            else
                E->helpers |= (unsigned)H_DOT << x->i;
            fprintf(f, "%s(", v ? "KN_DOT16" : "kn_dot4");
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, ", v%d, v%d)", x->a[1]->var, x->a[2]->var);
            return;
        }
        E->helpers |= x->i == KN_DOT_S16X2X ? (unsigned)H_DOTX : (unsigned)H_DOT << x->i;
        char dot[16];
        snprintf(dot, sizeof dot, "kn_dot%d", (int)x->i);
        print_call3(E, dot, x);
        return;
    case KX_UNPACK16:
        E->helpers |= (unsigned)H_UNPACK << x->i;
        fprintf(f, "kn_unpack16_%d(", (int)x->i);
        kn_cprint_expr(E, x->a[0]);
        fputc(')', f);
        return;
    case KX_REGEX: /* the pattern as a C string literal: octal escapes for what is not
                      printable ASCII, and for '?' (no trigraphs) */
        E->helpers |= H_REGEX;
        if ((x->i >> 1) == KN_RX_MATCH) {
            fprintf(f, "kn_regex_match(%s, ", x->buf->name);
            kn_cprint_expr(E, x->a[0]);
            fputc(')', f);
            return;
        }
        if ((x->i >> 1) == KN_RX_FREE) {
            fprintf(f, "kn_regex_free(%s)", x->buf->name);
            return;
        }
        fprintf(f, "kn_regex_compile(%s, \"", x->buf->name);
        for (const unsigned char *c = (const unsigned char *)x->text; *c; c++)
            if (*c < 32 || *c >= 127 || *c == '"' || *c == '\\' || *c == '?')
                fprintf(f, "\\%03o", *c);
            else
                fputc(*c, f);
        fprintf(f, "\", %d)", (int)(x->i & 1));
        return;
    case KX_SAT: {
        int k = (int)((x->i & 31) / 8 - 1) | (x->i & 32 ? 2 : 0);
        if (E->dialect == KN_OPENCL) { /* OpenCL C's built-in clamp of an int */
            int bits = (int)(x->i & 31);
            long lo = x->i & 32 ? 0 : -(1L << (bits - 1));
            long hi = x->i & 32 ? (1L << bits) - 1 : (1L << (bits - 1)) - 1;
            fputs("clamp(", f);
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, ", %ld, %ld)", lo, hi);
            return;
        }
        E->helpers |= (unsigned)H_SAT << k;
        fprintf(f, "kn_sat_%d(", k);
        kn_cprint_expr(E, x->a[0]);
        fputc(')', f);
        return;
    }
    case KX_QADD:
        if (E->dialect == KN_OPENCL) {
            print_call2(E, "add_sat", x);
            return;
        }
        E->helpers |= H_QADD;
        print_call2(E, "kn_qadd", x);
        return;
    case KX_CVTRN:
        if (E->dialect == KN_OPENCL) { /* OpenCL C's conversion: NaN 0, saturated, rte */
            fputs("convert_int_sat_rte(", f);
        } else {
            E->helpers |= H_CVTRN;
            fputs("kn_cvtrn(", f);
        }
        kn_cprint_expr(E, x->a[0]);
        fputc(')', f);
        return;
    case KX_FMA: /* f32/f64: KN_FMAF/KN_FMAD (fused where the target has FMA), OpenCL's
                    fma (fused, as the LLVM backend's on FMA hardware); else a*b + c */
        if (E->dialect == KN_C99 && is_float(t) && x->i) { /* kx_fma_exact: always fused */
            print_call3(E, t == KN_F32 ? "fmaf" : "fma", x);
            return;
        }
        if (E->dialect == KN_C99 && is_float(t)) {
            E->fma_used = true;
            print_call3(E, t == KN_F32 ? "KN_FMAF" : "KN_FMAD", x);
            return;
        }
        if (E->dialect == KN_OPENCL && is_float(t)) {
            print_call3(E, "fma", x);
            return;
        }
        fprintf(f, "(");
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, " * ");
        kn_cprint_expr(E, x->a[1]);
        fprintf(f, " + ");
        kn_cprint_expr(E, x->a[2]);
        fputc(')', f);
        return;
    case KX_NEG:
        if (wraps(x)) {
            fprintf(f, "((%s)(0u - (%s)", CT(t), CT(t == KN_I64 ? KN_U64 : KN_U32));
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, "))");
            return;
        }
        /* fall through */
    case KX_BNOT:
    case KX_NOT:
        fprintf(f, narrow(t) && x->op != KX_NOT ? "((%s)(%s" : "(%.0s%s", CT(t),
                x->op == KX_NEG    ? "-"
                : x->op == KX_BNOT ? "~"
                                   : "!");
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, narrow(t) && x->op != KX_NOT ? "))" : ")");
        return;
    case KX_ABS:
        if (is_float(t)) {
            fprintf(f, "fabs%s(", t == KN_F32 && E->dialect == KN_C99 ? "f" : "");
            kn_cprint_expr(E, x->a[0]);
            fputc(')', f);
        } else {
            helper_call(E, "abs", &(kn_kx){.op = KX_ABS, .dtype = t, .a = {x->a[0], x->a[0]}},
                        F_ABS);
        }
        return;
    case KX_ISNAN:
    case KX_ISINF:
        fprintf(f, "(%s(", x->op == KX_ISNAN ? "isnan" : "isinf"); /* nonzero, not 1 */
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, ") != 0)");
        return;
    case KX_LDEXP: /* a * 2^b, b integral */
        fprintf(f, "ldexp%s(", t == KN_F32 && E->dialect == KN_C99 ? "f" : "");
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, ", (int)(");
        kn_cprint_expr(E, x->a[1]);
        fprintf(f, "))");
        return;
    case KX_MIN:
    case KX_MAX:
        helper_call(E, x->op == KX_MIN ? "min" : "max", x, x->op == KX_MIN ? F_MIN : F_MAX);
        return;
    case KX_MOD:
        if (!is_float(t)) {
            helper_call(E, "rem", x, F_REM);
            return;
        }
        break;
    case KX_DIV:
        if (!is_float(t)) {
            helper_call(E, "div", x, F_DIV);
            return;
        }
        break;
    case KX_SHL:
    case KX_SHR:
        if (x->op == KX_SHR && x->i == 1) { /* kx_shr_inrange: no guard */
            fprintf(f, "((%s)(", CT(t));
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, " >> ");
            kn_cprint_expr(E, x->a[1]);
            fprintf(f, "))");
            return;
        }
        helper_call(E, x->op == KX_SHL ? "shl" : "shr", x, x->op == KX_SHL ? F_SHL : F_SHR);
        return;
    default: break;
    }
    if (x->op == KX_ROUND && t == KN_F32 && E->dialect == KN_C99) { /* no libm call */
        E->helpers |= x->i ? H_RINTS : H_RINTF;
        fprintf(f, x->i ? "kn_rintf_small(" : "kn_rintf(");
        kn_cprint_expr(E, x->a[0]);
        fputc(')', f);
        return;
    }
    const char *fn = math_fn(E, x->op == KX_MOD ? KX_FMOD : x->op);
    if (fn) {
        bool fl = is_float(t);
        if (!fl) fprintf(f, "((%s)", CT(t));
        fprintf(f, "%s%s(", fn, t == KN_F32 && E->dialect == KN_C99 ? "f" : "");
        for (int i = 0; i < 2 && x->a[i]; i++) {
            if (i) fprintf(f, ", ");
            if (!fl) fprintf(f, "(double)");
            kn_cprint_expr(E, x->a[i]);
        }
        fprintf(f, fl ? ")" : "))");
        return;
    }
    const char *sym = bin_sym(x->op);
    KN_ASSERT(sym);
    if (wraps(x)) { /* data arithmetic on i32/i64 wraps, as the interpreter does */
        const char *u = CT(t == KN_I64 ? KN_U64 : KN_U32);
        fprintf(f, "((%s)((%s)", CT(t), u);
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, " %s (%s)", sym, u);
        kn_cprint_expr(E, x->a[1]);
        fprintf(f, "))");
        return;
    }
    bool wrap = narrow(t) && !(x->op >= KX_LT && x->op <= KX_LOR);
    if (wrap) fprintf(f, "((%s)", CT(t));
    fputc('(', f);
    kn_cprint_expr(E, x->a[0]);
    fprintf(f, " %s ", sym);
    kn_cprint_expr(E, x->a[1]);
    fputc(')', f);
    if (wrap) fputc(')', f);
}

/* ---- vector extensions (vec_ext) ---- */

enum { MAX_TEMPS = (int)(sizeof(((kn_cprint *)0)->map_t) / sizeof(int)) };

static bool pow2_lanes(int l) {
    return l >= 2 && l <= 64 && !(l & (l - 1));
}

static int lg2(int l) {
    int k = 0;
    while ((1 << k) < l) k++;
    return k;
}

/* Whether local v is held in an f32 vector type. */
static bool vvar(const emitter *E, int v) {
    return E->vec_ext && E->p->var_dtype[v] == KN_F32 && pow2_lanes(E->p->var_lanes[v]) &&
           (E->dialect != KN_OPENCL || E->p->var_lanes[v] <= 16); /* OpenCL's widest */
}

/* Whether local v is an i32 vector of 4 lanes held in kn_v4i (mve_int). */
static bool ivvar(const emitter *E, int v) {
    return E->vec_ext && E->mve_int && E->p->var_dtype[v] == KN_I32 && E->p->var_lanes[v] == 4;
}

/* The constant c (a KX_CONST, scalar) in *v. */
static bool const_i(const kn_kx *c, int64_t *v) {
    if (c->op != KX_CONST || kx_lanes(c) != 1) return false;
    *v = kn_dtype_get(c->dtype)->is_float ? (int64_t)c->f : c->i;
    return true;
}

/* An operand of KN_RQ4B / KN_RQ4BV: an ivvar, a 4-lane load of i32 (a table read at 4
 * columns) or a scalar i32 (cast to i32 allowed around the last two). */
static bool rq_operand(const emitter *E, const kn_kx *x, bool *vec) {
    if (x->op == KX_CAST && x->dtype == KN_I32 && x->a[0]->dtype == KN_I32) x = x->a[0];
    *vec = kx_lanes(x) == 4;
    if (x->op == KX_VAR && ivvar(E, x->var)) return true;
    if (x->op == KX_LOAD && x->buf->dtype == KN_I32 && kx_lanes(x) == 4) return true;
    return kx_lanes(x) == 1 && x->dtype == KN_I32;
}

static void rq_print(emitter *E, const kn_kx *x, bool vec) {
    if (x->op == KX_CAST && x->dtype == KN_I32 && x->a[0]->dtype == KN_I32) x = x->a[0];
    if (x->op == KX_VAR && kx_lanes(x) == 4) {
        fprintf(E->f, "v%d", x->var);
    } else if (x->op == KX_LOAD && kx_lanes(x) == 4) {
        for (int i = 0; i < E->nrq; i++)
            if (kn_kx_equal(E->rq_x[i], x)) {
                fprintf(E->f, "kn_rq%d", E->rq_id[i]);
                return;
            }
        fprintf(E->f, "KN_LD4I(%s + ", x->buf->name);
        kn_cprint_expr(E, x->a[0]);
        fputc(')', E->f);
    } else {
        fprintf(E->f, vec ? "KN_DUP4I(" : "(");
        kn_cprint_expr(E, x);
        fputc(')', E->f);
    }
}

/* mve_int: a 4-lane store to 8-bit y of kl_requant_hi32's vector form,
 * (y)min(max(((i32)((i64)acc * (i64)mult >> 32) + round) >> (t & 31), lo), hi) with acc
 * an ivvar, mult an ivvar or 4 columns of its table, round and t scalars (KN_RQ4B: one
 * output channel, the depthwise tiles) or 4 columns of their tables (KN_RQ4BV: 4 output
 * channels, the 1x1 tiles), as Helium's VMULH.S32, VADD, VSHL by -t, VMAX, VMIN and a
 * narrowing VSTRB.32 (KN_RQ4I / KN_RQ4IV clamp to the whole u8 or i8 range by KN_CLAMP4's
 * saturating shifts instead): the same bits as the scalar form, lane by lane (t is in
 * [1, 30], kn_qmul_hi32); false otherwise. */
typedef struct rq_form {
    const kn_kx *acc, *mult, *round, *t;
    int64_t lo, hi;
    bool vec;  /* round and t vectors (KN_RQ4*V) */
    bool tneg; /* t is 0 - (*t), a 4-lane table load of the negated shift (kt_rq.vrec):
                  KN_RQ4*VN, VSHL by it as it is */
} rq_form;

/* x = min(max(((i32)((i64)acc * (i64)mult >> 32) + round) >> (t & 31), lo), hi), the i32
 * clamp of kl_requant_hi32's vector form, in *q. */
static bool rq_match(const emitter *E, const kn_kx *x, rq_form *q) {
    const kn_kx *mx, *sh, *ad, *h, *p, *tm, *acc, *mul;
    int64_t c32, m31;
    bool mv, rv, tv;
    if (kx_lanes(x) != 4 || x->op != KX_MIN || !const_i(x->a[1], &q->hi)) return false;
    mx = x->a[0];
    if (mx->op != KX_MAX || !const_i(mx->a[1], &q->lo)) return false;
    sh = mx->a[0];
    if (sh->op != KX_SHR || sh->dtype != KN_I32) return false;
    ad = sh->a[0], tm = sh->a[1];
    if (tm->op != KX_AND || !const_i(tm->a[1], &m31) || m31 != 31) return false;
    const kn_kx *tx = tm->a[0];
    int64_t z0;
    q->tneg = tx->op == KX_SUB && const_i(tx->a[0], &z0) && z0 == 0 && tx->a[1]->op == KX_LOAD &&
              tx->a[1]->buf->dtype == KN_I32 && kx_lanes(tx->a[1]) == 4;
    if (q->tneg) tx = tx->a[1];
    if (!rq_operand(E, tx, &tv)) return false;
    if (ad->op != KX_ADD || ad->dtype != KN_I32 || !rq_operand(E, ad->a[1], &rv)) return false;
    h = ad->a[0];
    if (h->op != KX_CAST || h->dtype != KN_I32 || h->a[0]->op != KX_SHR) return false;
    p = h->a[0];
    if (!const_i(p->a[1], &c32) || c32 != 32 || p->a[0]->op != KX_MUL) return false;
    mul = p->a[0];
    acc = mul->a[0], h = mul->a[1];
    if (acc->op != KX_CAST || acc->dtype != KN_I64 || acc->a[0]->op != KX_VAR ||
        !ivvar(E, acc->a[0]->var) || h->op != KX_CAST || h->dtype != KN_I64 ||
        !rq_operand(E, h->a[0], &mv) || !mv)
        return false;
    q->acc = acc->a[0], q->mult = h->a[0], q->round = ad->a[1], q->t = tx;
    q->vec = rv || tv;
    return !q->tneg || q->vec;
}

/* The arguments of KN_RQ4B(V) / KN_RQ4I(V) after the first: acc, mult, round, t, lo, hi. */
static void rq_args(emitter *E, const rq_form *q) {
    fprintf(E->f, "v%d, ", q->acc->var);
    rq_print(E, q->mult, true);
    fprintf(E->f, ", ");
    rq_print(E, q->round, q->vec);
    fprintf(E->f, ", ");
    rq_print(E, q->t, q->vec);
    fprintf(E->f, ", %lld, %lld)", (long long)q->lo, (long long)q->hi);
}

static bool mve_rq_store(emitter *E, const kn_ks *s, int ind) {
    const kn_kx *x = s->value;
    rq_form q;
    if (kx_lanes(x) != 4 || (s->buf->dtype != KN_U8 && s->buf->dtype != KN_I8) ||
        x->op != KX_CAST || x->dtype != s->buf->dtype || !rq_match(E, x->a[0], &q))
        return false;
    FILE *f = E->f;
    fprintf(f, "%*sKN_RQ4B%s(%s + ", ind, "", q.vec ? q.tneg ? "VN" : "V" : "", s->buf->name);
    kn_cprint_expr(E, s->index);
    fprintf(f, ", ");
    rq_args(E, &q);
    fprintf(f, ";\n");
    E->mve_used = true;
    E->vec_widths |= 1u << 2;
    return true;
}

/* mve_int: an ivvar set to the clamped i32 values of the same form (the lanes then
 * stored one at a time): KN_RQ4I / KN_RQ4IV. */
static bool mve_rq_decl(emitter *E, const kn_ks *s, int ind) {
    rq_form q;
    if ((s->kind != KS_DECL && s->kind != KS_SET) || !ivvar(E, s->var) ||
        !rq_match(E, s->value, &q))
        return false;
    /* The 1x1 tiles requantize 3 pixels x 2 vectors of channels, each vector from the
     * same 3 table vectors as the pixels beside it; the byte stores between them may
     * alias the tables for GCC, which reloaded them for every output vector (18 VLDRW a
     * tile). A table vector of a weight table is loaded into a local the first time in
     * a block (kn_cprint_stmt's KS_BLOCK) and read from it by the next statements of
     * that block (the cache is dropped at any statement but a declaration or a store). */
    if (q.vec && E->depth == E->rq_depth) {
        const kn_kx *tab[3] = {q.mult, q.round, q.t};
        for (int k = 0; k < 3; k++) {
            const kn_kx *x = tab[k];
            bool have = false;
            if (x->op != KX_LOAD || kx_lanes(x) != 4 || !kn_kbuf_is_weight(x->buf) ||
                x->buf->dtype != KN_I32 || E->nrq == 6)
                continue;
            for (int i = 0; i < E->nrq; i++) have |= kn_kx_equal(E->rq_x[i], x);
            if (have) continue;
            fprintf(E->f, "%*skn_v4i kn_rq%d = ", ind, "", E->rq_next);
            rq_print(E, x, true);
            fprintf(E->f, ";\n");
            E->rq_x[E->nrq] = x, E->rq_id[E->nrq++] = E->rq_next++;
        }
    }
    E->rq_printed = true;
    fprintf(E->f, "%*s%sv%d = KN_RQ4I%s(", ind, "", s->kind == KS_DECL ? "kn_v4i " : "", s->var,
            q.vec ? q.tneg ? "VN" : "V" : "");
    rq_args(E, &q);
    fprintf(E->f, ";\n");
    E->mve_used = true;
    E->vec_widths |= 1u << 2;
    return true;
}

/* One byte of a word of KN_GW4: (u32)(u8)x or (u32)x of a strided 4-lane load of 8-bit x
 * (the gather reads the raw bytes, zero-extended: the same bits), in *ld. */
static bool gw_byte(const kn_kx *x, const kn_kx **ld) {
    if (x->op != KX_CAST || x->dtype != KN_U32) return false;
    x = x->a[0];
    if (x->op == KX_CAST && x->dtype == KN_U8) x = x->a[0];
    if (x->op != KX_LOAD || x->stride < 2 || kx_lanes(x) != 4 || x->i == 4 ||
        (x->buf->dtype != KN_U8 && x->buf->dtype != KN_I8))
        return false;
    *ld = x;
    return true;
}

/* mve_int: a 4-lane store to i32 of words of 4 bytes gathered at one stride,
 * (i32)((b0 | b1 << 8 | b2 << 16 | b3 << 24) [^ c]) with each bk a strided 4-lane load of
 * 8-bit x (passes/tile.c conv_words_wide), as KN_GW4: on Helium 4 VLDRB.U32 gathers
 * (offsets 0, s, 2s, 3s), 3 VSLI, a VEOR and a VSTRW; false otherwise. */
static bool mve_gather_words(emitter *E, const kn_ks *s, int ind) {
    const kn_kx *x = s->value, *ld[4], *t;
    int64_t c = 0, sh;
    if (s->kind != KS_STORE || s->word || s->buf->dtype != KN_I32 || kx_lanes(x) != 4 ||
        x->op != KX_CAST || x->a[0]->dtype != KN_U32)
        return false;
    x = x->a[0];
    if (x->op == KX_XOR) {
        if (!const_i(x->a[1], &c)) return false;
        x = x->a[0];
    }
    for (int k = 3; k >= 1; k--) { /* ((b0 | b1 << 8) | b2 << 16) | b3 << 24 */
        if (x->op != KX_OR) return false;
        t = x->a[1];
        if (t->op != KX_SHL || !const_i(t->a[1], &sh) || sh != 8 * k || !gw_byte(t->a[0], &ld[k]))
            return false;
        x = x->a[0];
    }
    if (!gw_byte(x, &ld[0])) return false;
    for (int k = 1; k < 4; k++)
        if (ld[k]->stride != ld[0]->stride || ld[k]->buf != ld[0]->buf) return false;
    FILE *f = E->f;
    fprintf(f, "%*sKN_GW4(%s + ", ind, "", s->buf->name);
    kn_cprint_expr(E, s->index);
    for (int k = 0; k < 4; k++) {
        fprintf(f, ", %s + ", ld[k]->buf->name);
        kn_cprint_expr(E, ld[k]->a[0]);
    }
    fprintf(f, ", %d, %lluu);\n", ld[0]->stride, (unsigned long long)(uint32_t)c);
    E->mve_used = true;
    E->vec_widths |= 1u << 2;
    return true;
}

/* The start of a KN_DQ4F/KN_Q4F call, "MACRO{U|S}(y + index, x + index, ": U or S by
 * dt (the 8-bit side's type), y the store s's buffer, x the 4-lane load l's. */
static void mve_conv_open(emitter *E, int ind, const char *macro, kn_dtype dt, const kn_ks *s,
                          const kn_kx *l) {
    fprintf(E->f, "%*s%s%s(%s + ", ind, "", macro, dt == KN_U8 ? "U" : "S", s->buf->name);
    kn_cprint_expr(E, s->index);
    fprintf(E->f, ", %s + ", l->buf->name);
    kn_cprint_expr(E, l->a[0]);
    fprintf(E->f, ", ");
}

/* x, or 0 where it is absent (a zero point the pattern did not find). */
static void print_or0(emitter *E, const kn_kx *x) {
    if (x)
        kn_cprint_expr(E, x);
    else
        fputc('0', E->f);
}

/* mve_int: a 4-lane store to f32 of (f32)(i32)x [- z] * s, x a 4-lane load of 8-bit values,
 * z an i32 and s an f32 scalar (ir/lower/quant.c: DequantizeLinear on microcontrollers), as
 * KN_DQ4F: VLDRB.U32/.S32, VSUB, VCVT.F32.S32, VMUL by a scalar and a VSTRW (the same
 * operations lane by lane: the conversion of 9-bit integers is exact); false otherwise. */
static bool mve_dequant(emitter *E, const kn_ks *s, int ind) {
    const kn_kx *x = s->value, *d, *z = NULL, *l;
    if (!E->mve_int || s->kind != KS_STORE || s->stride || s->buf->dtype != KN_F32 ||
        kx_lanes(x) != 4 || x->op != KX_MUL || kx_lanes(x->a[1]) != 1 || x->a[1]->dtype != KN_F32 ||
        x->a[0]->op != KX_CAST || x->a[0]->dtype != KN_F32)
        return false;
    d = x->a[0]->a[0];
    if (d->op == KX_SUB && kx_lanes(d->a[1]) == 1 && d->a[1]->dtype == KN_I32)
        z = d->a[1], d = d->a[0];
    if (d->op != KX_CAST || d->dtype != KN_I32) return false;
    l = d->a[0];
    if (l->op != KX_LOAD || kx_lanes(l) != 4 || l->stride || l->i == 4 ||
        (l->buf->dtype != KN_U8 && l->buf->dtype != KN_I8))
        return false;
    FILE *f = E->f;
    mve_conv_open(E, ind, "KN_DQ4F", l->buf->dtype, s, l);
    print_or0(E, z);
    fprintf(f, ", ");
    kn_cprint_expr(E, x->a[1]);
    fprintf(f, ");\n");
    E->mve_used = true;
    E->vec_widths |= 1u << 2;
    return true;
}

/* An exact fma (kx_fma_exact) of 4 lanes, or NULL. */
static const kn_kx *fma_x(const kn_kx *x) {
    return x && x->op == KX_FMA && x->i == 1 && kx_lanes(x) == 4 && x->dtype == KN_F32 ? x : NULL;
}

/* Whether x is select(a < b, a, b) or select(b < a, a, b) with a an f32 constant (lo: the
 * second): the bound in *k, the other operand in *o. */
static bool clamp_f(const kn_kx *x, bool lo, double *k, const kn_kx **o) {
    if (!x || x->op != KX_SELECT || x->a[0]->op != KX_LT || x->a[1]->op != KX_CONST ||
        x->a[1]->dtype != KN_F32)
        return false;
    const kn_kx *c = x->a[0];
    *k = x->a[1]->f;
    *o = x->a[2];
    return lo ? kn_kx_equal(c->a[0], x->a[2]) && kn_kx_equal(c->a[1], x->a[1])
              : kn_kx_equal(c->a[0], x->a[1]) && kn_kx_equal(c->a[1], x->a[2]);
}

/* mve_int: a 4-lane store to 8-bit y of ir/lower/quant.c's quantize_mcu vector form,
 * (y)[select(nan, 0,] min(max(cvtrn(q2) [+ zp], lo), hi)[)] with q2 the
 * kn_vmath_div_const expansion of c = clamp(v, -b, b), v a 4-lane f32 load, as KN_Q4F:
 * VLDRW, VMAXNM and VMINNM (the clamp; a NaN becomes -b, which the VPSEL replaces), VMUL
 * by r, VFMS and VFMA twice, VCVTN, VADD, VMAX, VMIN, VCMP, VPSEL and a narrowing VSTRB:
 * the same values lane by lane as the kernel IR (NaN lanes 0, as cvtrn's 0 gives without
 * a zero point); false otherwise. */
static bool mve_quant(emitter *E, const kn_ks *s, int ind) {
    const kn_kx *x = s->value, *zp = NULL, *q2, *e1, *c, *t, *v, *mn, *mx, *a;
    double b, mb;
    int64_t lo, hi;
    if (!E->mve_int || s->kind != KS_STORE || s->word || s->stride > 1 || kx_lanes(x) != 4 ||
        (s->buf->dtype != KN_I8 && s->buf->dtype != KN_U8) || x->op != KX_CAST)
        return false;
    x = x->a[0];
    if (x->op == KX_SELECT && x->a[1]->op == KX_CONST) x = x->a[2]; /* the NaN lanes' 0 */
    mn = x;
    if (mn->op != KX_MIN || !const_i(mn->a[1], &hi)) return false;
    mx = mn->a[0];
    if (mx->op != KX_MAX || !const_i(mx->a[1], &lo)) return false;
    a = mx->a[0];
    if (a->op == KX_ADD && kx_lanes(a->a[1]) == 1 && a->a[1]->dtype == KN_I32)
        zp = a->a[1], a = a->a[0];
    if (a->op != KX_CVTRN || !(q2 = fma_x(a->a[0])) || !(e1 = fma_x(q2->a[0])) ||
        q2->a[1]->op != KX_CONST || e1->a[1]->op != KX_CONST)
        return false;
    c = e1->a[2];
    if (!clamp_f(c, true, &mb, &t) || !clamp_f(t, false, &b, &v) || mb != -b) return false;
    if (v->op != KX_LOAD || kx_lanes(v) != 4 || v->stride || v->i || v->buf->dtype != KN_F32)
        return false;
    FILE *f = E->f;
    mve_conv_open(E, ind, "KN_Q4F", s->buf->dtype, s, v);
    kn_cprint_expr(E, q2->a[1]);
    fprintf(f, ", ");
    kn_cprint_expr(E, e1->a[1]);
    fprintf(f, ", ");
    kn_cprint_expr(E, t->a[1]);
    fprintf(f, ", ");
    print_or0(E, zp);
    fprintf(f, ", %lld, %lld);\n", (long long)lo, (long long)hi);
    E->helpers |= H_Q4F | H_CVTRN;
    E->vec_widths |= 1u << 2;
    return true;
}

/* mve_int: statement s of an ivvar as one vector statement where its value is a 4-lane
 * load of i32 (KN_LD4I) or of i16 widened to i32 (KN_LD4S16), or acc + x * w of itself,
 * an ivvar w and a scalar i32 x (KN_MLA4I: MVE VMLA.S32 Qd, Qn, Rm); false otherwise. */
static bool mve_stmt(emitter *E, const kn_ks *s, int ind) {
    const kn_kx *x = s->value;
    FILE *f = E->f;
    if ((s->kind == KS_SET || s->kind == KS_DECL) && ivvar(E, s->var) && x->op == KX_LOAD &&
        x->buf->dtype == KN_I32 && kx_lanes(x) == 4) { /* one vector load */
        fprintf(f, "%*s%sv%d = KN_LD4I(%s + ", ind, "", s->kind == KS_DECL ? "kn_v4i " : "", s->var,
                x->buf->name);
        kn_cprint_expr(E, x->a[0]);
        fprintf(f, ");\n");
        E->mve_used = true;
        E->vec_widths |= 1u << 2;
        return true;
    }
    if ((s->kind == KS_SET || s->kind == KS_DECL) && ivvar(E, s->var) && x->op == KX_CAST &&
        x->dtype == KN_I32 && x->a[0]->op == KX_LOAD && x->a[0]->buf->dtype == KN_I16 &&
        kx_lanes(x->a[0]) == 4) { /* 16-bit weights: one widening load */
        fprintf(f, "%*s%sv%d = KN_LD4S16(%s + ", ind, "", s->kind == KS_DECL ? "kn_v4i " : "",
                s->var, x->a[0]->buf->name);
        kn_cprint_expr(E, x->a[0]->a[0]);
        fprintf(f, ");\n");
        E->mve_used = true;
        E->vec_widths |= 1u << 2;
        return true;
    }
    if ((s->kind == KS_SET || s->kind == KS_DECL) && ivvar(E, s->var) && kx_lanes(x) == 1 &&
        x->dtype == KN_I32) { /* a scalar in every lane: one VDUP */
        fprintf(f, "%*s%sv%d = KN_DUP4I(", ind, "", s->kind == KS_DECL ? "kn_v4i " : "", s->var);
        kn_cprint_expr(E, x);
        fprintf(f, ");\n");
        E->mve_used = true;
        E->vec_widths |= 1u << 2;
        return true;
    }
    if ((s->kind == KS_SET || s->kind == KS_DECL) && ivvar(E, s->var)) {
        /* 8-bit input widened (VLDRB.U32 / VLDRB.S32), less a constant (VSUB) */
        const kn_kx *l = x, *z = NULL;
        if (l->op == KX_SUB && l->a[1]->op == KX_CONST && kx_lanes(l->a[1]) == 1)
            z = l->a[1], l = l->a[0];
        /* strided (kx_vload_strided, a step of 2, 4 or 8): a gather with offsets from
         * VIDUP (KN_LD4BUS / KN_LD4BSS) */
        int st = l->op == KX_CAST && l->a[0]->op == KX_LOAD ? l->a[0]->stride : 0;
        if (l->op == KX_CAST && l->dtype == KN_I32 && l->a[0]->op == KX_LOAD &&
            (l->a[0]->buf->dtype == KN_U8 || l->a[0]->buf->dtype == KN_I8) &&
            kx_lanes(l->a[0]) == 4 && (st <= 1 || st == 2 || st == 4 || st == 8)) {
            fprintf(f, "%*s%sv%d = KN_LD4B%s%s%s(%s + ", ind, "",
                    s->kind == KS_DECL ? "kn_v4i " : "", s->var,
                    l->a[0]->buf->dtype == KN_U8 ? "U" : "S", st > 1 ? "S" : "", z ? "Z" : "",
                    l->a[0]->buf->name);
            kn_cprint_expr(E, l->a[0]->a[0]);
            if (st > 1) fprintf(f, ", %d", st);
            if (z) {
                fprintf(f, ", ");
                kn_cprint_expr(E, z);
            }
            fprintf(f, ");\n");
            E->mve_used = true;
            E->vec_widths |= 1u << 2;
            return true;
        }
    }
    if (s->kind == KS_STORE && s->stride > 1 && kx_lanes(x) == 4 &&
        (s->buf->dtype == KN_U8 || s->buf->dtype == KN_I8)) {
        /* a strided store of an ivvar's lanes narrowed to 8 bits: one scatter store
         * (VSTRB.32 with an offset vector) */
        const kn_kx *v = x;
        while (v->op == KX_CAST && (v->dtype == KN_U8 || v->dtype == KN_I8)) v = v->a[0];
        if (v->op == KX_VAR && ivvar(E, v->var)) {
            fprintf(f, "%*sKN_ST4BSS(%s + ", ind, "", s->buf->name);
            kn_cprint_expr(E, s->index);
            fprintf(f, ", v%d, %d);\n", v->var, s->stride);
            E->mve_used = true;
            E->vec_widths |= 1u << 2;
            return true;
        }
    }
    if (s->kind == KS_STORE && s->stride <= 1 && mve_rq_store(E, s, ind)) return true;
    if (mve_gather_words(E, s, ind)) return true;
    if (mve_dequant(E, s, ind)) return true;
    if (mve_quant(E, s, ind)) return true;
    if (mve_rq_decl(E, s, ind)) return true;
    if (s->kind == KS_SET && ivvar(E, s->var) && x->op == KX_ADD) { /* acc + x * w */
        const kn_kx *m = x->a[0], *acc = x->a[1];
        if (m->op != KX_MUL) m = x->a[1], acc = x->a[0];
        if (m->op == KX_MUL && acc->op == KX_VAR && acc->var == s->var) {
            const kn_kx *sc = kx_lanes(m->a[0]) == 1 ? m->a[0] : m->a[1];
            const kn_kx *w = sc == m->a[0] ? m->a[1] : m->a[0];
            if (kx_lanes(sc) == 1 && sc->dtype == KN_I32 && w->op == KX_VAR && ivvar(E, w->var)) {
                fprintf(f, "%*sv%d = KN_MLA4I(v%d, v%d, ", ind, "", s->var, s->var, w->var);
                kn_cprint_expr(E, sc);
                fprintf(f, ");\n");
                E->mve_used = true;
                E->vec_widths |= 1u << 2;
                return true;
            }
        }
    }
    return false;
}

/* The comparison's name in the KN_SELC macros (KN_CMP_lt, MVE vcmpltq_f32). */
static const char *cmp_name(kn_kx_op op) {
    switch (op) {
    case KX_LT: return "lt";
    case KX_LE: return "le";
    case KX_GT: return "gt";
    case KX_GE: return "ge";
    case KX_EQ: return "eq";
    default: return "ne";
    }
}

static bool is_cmp(kn_kx_op op) {
    return op == KX_LT || op == KX_LE || op == KX_GT || op == KX_GE || op == KX_EQ || op == KX_NE;
}

/* Operands a vector macro may repeat: printed as they are (scalars splatted). */
static bool simple(const kn_kx *x) {
    return x->op == KX_VAR || x->op == KX_CONST || x->op == KX_LANE;
}

/* Whether x, an operand of an f32 vector statement of L lanes, prints as a vector
 * expression (scalars of f32 are broadcast); *temps counts the operands that go to
 * temporaries (fma, min, max repeat theirs). */
static bool vx_ok(const emitter *E, const kn_kx *x, int L, int *temps) {
    if (kx_lanes(x) == 1) return x->dtype == KN_F32;
    if (kx_lanes(x) != L || x->dtype != KN_F32) return false;
    switch (x->op) {
    case KX_VAR: return vvar(E, x->var);
    case KX_LOAD: /* OpenCL widens half vectors itself (vload_halfN); strided loads go
                     lane by lane, but f32 ones of 4 lanes on Helium (one gather, KN_LD4FG) */
        if (x->stride > 1) return E->mve_int && L == 4 && x->buf->dtype == KN_F32;
        return x->buf->dtype == KN_F32 || (x->buf->dtype == KN_F16 && E->dialect == KN_OPENCL);
    case KX_NEG:
    case KX_ABS: return vx_ok(E, x->a[0], L, temps);
    case KX_CAST: return x->a[0]->dtype == KN_F32 && vx_ok(E, x->a[0], L, temps);
    case KX_ADD:
    case KX_SUB:
    case KX_MUL:
    case KX_DIV: return vx_ok(E, x->a[0], L, temps) && vx_ok(E, x->a[1], L, temps);
    case KX_FMA:
        if (x->i) return false; /* kx_fma_exact: lane by lane, fmaf */
        /* fall through */
    case KX_MIN:
    case KX_MAX:
    case KX_FLOOR: /* f32 lanes: KN_FLOOR, KN_LDEXP (the vmath exp) */
    case KX_LDEXP:
        for (int i = 0; i < 3 && x->a[i]; i++) {
            if (!vx_ok(E, x->a[i], L, temps)) return false;
            *temps += !simple(x->a[i]);
        }
        return true;
    case KX_SELECT: { /* both sides are computed: only where they read no memory */
        const kn_kx *c = x->a[0];
        if (has_load(x->a[1]) || has_load(x->a[2])) return false;
        if (!vx_ok(E, x->a[1], L, temps) || !vx_ok(E, x->a[2], L, temps)) return false;
        if (kx_lanes(c) == 1) return true; /* a scalar condition: C's ?: */
        return is_cmp(c->op) && kx_lanes(c) == L && vx_ok(E, c->a[0], L, temps) &&
               vx_ok(E, c->a[1], L, temps);
    }
    default: return false;
    }
}

static int mapped(const emitter *E, const kn_kx *x) {
    for (int i = 0; i < E->nmap; i++)
        if (E->map_x[i] == x) return E->map_t[i];
    return -1;
}

static void vprint(emitter *E, const kn_kx *x, int L);

/* x as a vector of L lanes: scalars splatted. */
static void vprint_vec(emitter *E, const kn_kx *x, int L) {
    if (kx_lanes(x) > 1) {
        vprint(E, x, L);
        return;
    }
    fprintf(E->f, "KN_SPLAT%dF(", L);
    vprint(E, x, L);
    fputc(')', E->f);
}

/* Whether the vector macro of op repeats its operands. */
static bool repeats(kn_kx_op op) {
    return op == KX_FMA || op == KX_MIN || op == KX_MAX || op == KX_FLOOR || op == KX_LDEXP;
}

/* Prints, before the statement, a temporary for each operand of fma, min and max that
 * is not simple (innermost first), so the macros repeat names, not expressions. */
static void vhoist(emitter *E, const kn_kx *x, int L, int ind) {
    if (kx_lanes(x) == 1 || mapped(E, x) >= 0) return;
    for (int i = 0; i < 3 && x->a[i]; i++) vhoist(E, x->a[i], L, ind);
    if (!repeats(x->op)) return;
    for (int i = 0; i < 3 && x->a[i]; i++) {
        const kn_kx *a = x->a[i];
        if (simple(a) || mapped(E, a) >= 0) continue;
        KN_ASSERT(E->nmap < MAX_TEMPS);
        int t = E->ntemps++;
        if (kx_lanes(a) > 1)
            fprintf(E->f, "%*skn_v%df kn_t%d = ", ind, "", L, t);
        else
            fprintf(E->f, "%*sfloat kn_t%d = ", ind, "", t);
        vprint(E, a, L);
        fprintf(E->f, ";\n");
        E->map_x[E->nmap] = a;
        E->map_t[E->nmap++] = t;
    }
}

/* x (vx_ok) as a vector expression of L lanes, or as a scalar where x is one. */
static void vprint(emitter *E, const kn_kx *x, int L) {
    FILE *f = E->f;
    int t = mapped(E, x);
    if (t >= 0) {
        fprintf(f, "kn_t%d", t);
        return;
    }
    if (kx_lanes(x) == 1) {
        kn_cprint_expr(E, x);
        return;
    }
    switch (x->op) {
    case KX_VAR: fprintf(f, "v%d", x->var); return;
    case KX_LOAD:
        if (x->buf->dtype == KN_F16) { /* OpenCL only (vx_ok) */
            fprintf(f, "vload_half%d(0, %s + ", L, x->buf->name);
            kn_cprint_expr(E, x->a[0]);
            fputc(')', f);
            return;
        }
        if (x->stride > 1) { /* vx_ok: mve_int, 4 lanes of f32 */
            fprintf(f, "KN_LD4FG(%s + ", x->buf->name);
            kn_cprint_expr(E, x->a[0]);
            fprintf(f, ", %d)", x->stride);
            E->gather4f = true;
            return;
        }
        fprintf(f, "KN_LD%dF(%s + ", L, x->buf->name);
        kn_cprint_expr(E, x->a[0]);
        fputc(')', f);
        return;
    case KX_CAST: vprint(E, x->a[0], L); return;
    case KX_NEG:
        fprintf(f, "(-");
        vprint(E, x->a[0], L);
        fputc(')', f);
        return;
    case KX_ABS:
        fprintf(f, "KN_ABS%dF(", L);
        vprint_vec(E, x->a[0], L);
        fputc(')', f);
        return;
    case KX_FMA:
        if (kx_lanes(x->a[0]) == 1) { /* a scalar times a vector: KN_FMA<L>FS, one
                                         instruction on MVE (VFMA Qd, Qn, Rm) */
            fprintf(f, "KN_FMA%dFS(", L);
            vprint(E, x->a[0], L);
            for (int i = 1; i < 3; i++) {
                fprintf(f, ", ");
                vprint_vec(E, x->a[i], L);
            }
            fputc(')', f);
            return;
        }
        /* fall through */
    case KX_MIN:
    case KX_MAX:
    case KX_FLOOR:
    case KX_LDEXP:
        fprintf(f, "KN_%s%dF(",
                x->op == KX_MIN     ? "MIN"
                : x->op == KX_MAX   ? "MAX"
                : x->op == KX_FLOOR ? "FLOOR"
                : x->op == KX_LDEXP ? "LDEXP"
                                    : "FMA",
                L);
        for (int i = 0; i < 3 && x->a[i]; i++) {
            if (i) fprintf(f, ", ");
            vprint_vec(E, x->a[i], L);
        }
        fputc(')', f);
        return;
    case KX_SELECT: {
        const kn_kx *c = x->a[0];
        if (kx_lanes(c) == 1) {
            fputc('(', f);
            kn_cprint_expr(E, c);
            fprintf(f, " ? ");
            vprint_vec(E, x->a[1], L);
            fprintf(f, " : ");
            vprint_vec(E, x->a[2], L);
            fputc(')', f);
            return;
        }
        /* KN_SELC<L>F(x, lt, y, a, b): (x < y) ? a : b per lane (a macro, so that Helium
         * can compare into a predicate) */
        fprintf(f, "KN_SELC%dF(", L);
        vprint_vec(E, c->a[0], L);
        fprintf(f, ", %s, ", cmp_name(c->op));
        vprint_vec(E, c->a[1], L);
        fprintf(f, ", ");
        vprint_vec(E, x->a[1], L);
        fprintf(f, ", ");
        vprint_vec(E, x->a[2], L);
        fputc(')', f);
        return;
    }
    default: break;
    }
    const char *sym = bin_sym(x->op);
    KN_ASSERT(sym);
    fputc('(', f);
    vprint(E, x->a[0], L);
    fprintf(f, " %s ", sym);
    vprint(E, x->a[1], L);
    fputc(')', f);
}

/* vec_ext: prints vector statement s of `lanes` lanes as one vector statement and
 * returns true, or returns false (it then goes lane by lane). */
static bool vstmt(emitter *E, const kn_ks *s, int lanes, int ind) {
    FILE *f = E->f;
    int temps = 0;
    if (!E->vec_ext || !pow2_lanes(lanes) || (E->dialect == KN_OPENCL && lanes > 16)) return false;
    if (mve_stmt(E, s, ind)) return true;
    if (s->kind == KS_STORE ? s->buf->dtype != KN_F32 || s->stride > 1 : !vvar(E, s->var))
        return false;
    if (!vx_ok(E, s->value, lanes, &temps) || temps > MAX_TEMPS) return false;
    E->nmap = 0;
    vhoist(E, s->value, lanes, ind);
    fprintf(f, "%*s", ind, "");
    if (s->kind == KS_STORE) {
        fprintf(f, "KN_ST%dF(%s + ", lanes, s->buf->name);
        kn_cprint_expr(E, s->index);
        fprintf(f, ", ");
    } else if (s->kind == KS_DECL) {
        fprintf(f, "kn_v%df v%d = ", lanes, s->var);
    } else {
        fprintf(f, "v%d = ", s->var);
    }
    vprint_vec(E, s->value, lanes);
    fprintf(f, s->kind == KS_STORE ? ");\n" : ";\n");
    E->nmap = 0;
    E->vec_widths |= 1u << lg2(lanes);
    return true;
}

/* The lanes of a statement's value (1: scalar). */
static int stmt_lanes(const kn_cprint *E, const kn_ks *s) {
    if (s->kind == KS_DECL || s->kind == KS_SET) return E->p->var_lanes[s->var];
    return s->kind == KS_STORE ? kx_lanes(s->value) : 1;
}

/* C99: a register block (kl_decl_block) as `register float` scalars bound to its FPU
 * registers and loaded by KN_LDM<lanes>F (one VLDM with GCC on Arm; plain loads
 * elsewhere, see kn_cprint_vector_prelude), the same text in the portable and the
 * vector-extension forms (no vector types); false when s is not one. */
static bool block_decl(emitter *E, const kn_ks *s, int ind) {
    int lanes = s->width, r0 = (int)s->annot - 1;
    const kn_kx *x = s->value;
    if (E->dialect != KN_C99 || s->kind != KS_DECL || !s->annot || (lanes != 8 && lanes != 16) ||
        x->op != KX_LOAD || x->dtype != KN_F32 || x->buf->dtype != KN_F32 || kx_lanes(x) != lanes)
        return false;
    FILE *f = E->f;
    fprintf(f, "%*sregister float", ind, "");
    for (int l = 0; l < lanes; l++)
        fprintf(f, "%s v%d_%d KN_SREG(%d)", l ? "," : "", s->var, l, r0 + l);
    fprintf(f, ";\n%*sKN_LDM%dF(%s + ", ind, "", lanes, x->buf->name);
    kn_cprint_expr(E, x->a[0]);
    fprintf(f, ", %d, %d", r0, r0 + lanes - 1);
    for (int l = 0; l < lanes; l++) fprintf(f, ", v%d_%d", s->var, l);
    fprintf(f, ");\n");
    E->blk_var[E->nblk++ % 64] = s->var;
    E->blk_widths |= 1u << lg2(lanes);
    return true;
}

static void cprint_stmt(kn_cprint *E, const kn_ks *s, int ind);

void kn_cprint_stmt(kn_cprint *E, const kn_ks *s, int ind) {
    E->depth++;
    cprint_stmt(E, s, ind);
    E->depth--;
}

static void cprint_stmt(kn_cprint *E, const kn_ks *s, int ind) {
    FILE *f = E->f;
    int lanes = stmt_lanes(E, s);
    if (lanes > 1 && !E->in_lane && block_decl(E, s, ind)) return;
    if (lanes > 1 && !E->in_lane) { /* one vector statement, or one lane at a time */
        if (vstmt(E, s, lanes, ind)) return;
        if (s->kind == KS_DECL && vvar(E, s->var)) {
            fprintf(f, "%*skn_v%df v%d = KN_SPLAT%dF(0.0f);\n", ind, "", lanes, s->var, lanes);
            E->vec_widths |= 1u << lg2(lanes);
        } else if (s->kind == KS_DECL && ivvar(E, s->var)) { /* lanes read as v[kn_l] */
            fprintf(f, "%*skn_v4i v%d;\n", ind, "", s->var);
            E->vec_widths |= 1u << 2;
        } else if (s->kind == KS_DECL) {
            fprintf(f, "%*s%s v%d[%d];\n", ind, "", CT(s->dtype), s->var, lanes);
        }
        fprintf(f, "%*sfor (int kn_l = 0; kn_l < %d; kn_l++) ", ind, "", lanes);
        E->in_lane = true;
        kn_cprint_stmt(E, s, 0);
        E->in_lane = false;
        return;
    }
    switch (s->kind) {
    case KS_BLOCK: {
        int nrq = E->nrq, rq_depth = E->rq_depth; /* mve_rq_decl's table vectors */
        E->nrq = 0, E->rq_depth = E->depth + 1;
        for (int i = 0; i < s->n; i++) {
            E->rq_printed = false;
            kn_cprint_stmt(E, s->body[i], ind);
            if (!E->rq_printed && s->body[i]->kind != KS_STORE && s->body[i]->kind != KS_DECL)
                E->nrq = 0;
        }
        E->nrq = nrq, E->rq_depth = rq_depth;
        return;
    }
    case KS_FOR: {
        /* loop indices: 32-bit where pass 'index' found every index value fits */
        const char *IT = E->p->index_bits == 32 ? CT(KN_I32) : CT(KN_I64);
        for (int d = 0; d < E->ngid; d++)
            if (E->gid[d] == s) { /* a work-item dimension of the NDRange */
                fprintf(f, "%*s%s v%d = (%s)get_global_id(%d);\n%*sif (v%d < %lld) {\n", ind, "",
                        IT, s->var, IT, d, ind, "", s->var, (long long)s->extent);
                kn_cprint_stmt(E, s->body[0], ind + 4);
                fprintf(f, "%*s}\n", ind, "");
                return;
            }
        if (E->loop_hook && E->loop_hook(E, s, ind)) return;
        if ((s->annot & KN_LOOP_PARALLEL) && E->reverse_parallel && !s->ext) {
            /* test mode: independent iterations may run in any order */
            fprintf(f, "%*sfor (%s v%d = %lld; v%d >= 0; v%d--) { /* parallel */\n", ind, "", IT,
                    s->var, (long long)s->extent - 1, s->var, s->var);
            kn_cprint_stmt(E, s->body[0], ind + 4);
            fprintf(f, "%*s}\n", ind, "");
            return;
        }
        if ((s->annot & KN_LOOP_UNROLL) && s->width > 1 && E->dialect == KN_C99 && !s->ext) {
            fprintf(f, "%*sKN_UNROLL(%d)\n", ind, "", s->width);
            E->helpers |= H_UNROLL;
        }
        fprintf(f, "%*sfor (%s v%d = 0; v%d < ", ind, "", IT, s->var, s->var);
        if (s->ext)
            kn_cprint_expr(E, s->ext);
        else
            fprintf(f, "%lld", (long long)s->extent);
        fprintf(f, "; v%d++) {\n", s->var);
        kn_cprint_stmt(E, s->body[0], ind + 4);
        fprintf(f, "%*s}\n", ind, "");
        return;
    }
    case KS_STORE: {
        kn_dtype bt = s->buf->dtype;
        if (s->word && E->dialect == KN_OPENCL) { /* no memcpy: the four bytes, low first */
            fprintf(f, "%*s{\n%*suint kn_w = (uint)(", ind, "", ind + 4, "");
            kn_cprint_expr(E, s->value);
            fprintf(f, ");\n");
            for (int k = 0; k < 4; k++) {
                fprintf(f, "%*s%s[", ind + 4, "", s->buf->name);
                kn_cprint_expr(E, s->index);
                fprintf(f, " + %d] = (%s)(kn_w >> %d);\n", k, CT(bt), 8 * k);
            }
            fprintf(f, "%*s}\n", ind, "");
            return;
        }
        if (s->word) { /* a word store (kl_store_word) */
            E->helpers |= H_STW;
            fprintf(f, "%*skn_stw(%s + ", ind, "", s->buf->name);
            kn_cprint_expr(E, s->index);
            fprintf(f, ", ");
            kn_cprint_expr(E, s->value);
            fprintf(f, ");\n");
            return;
        }
        if (bt == KN_F16 && E->dialect == KN_OPENCL) { /* round to nearest even */
            fprintf(f, "%*svstore_half_rte(", ind, "");
            kn_cprint_expr(E, s->value);
            fprintf(f, ", ");
            kn_cprint_expr(E, s->index);
            if (E->in_lane && s->stride) fprintf(f, " + kn_l * %d", s->stride);
            fprintf(f, "%s, %s);\n", E->in_lane && !s->stride ? " + kn_l" : "", s->buf->name);
            return;
        }
        fprintf(f, "%*s%s[", ind, "", s->buf->name);
        kn_cprint_expr(E, s->index);
        if (E->in_lane && s->stride > 1) /* a strided store (kl_store_strided) */
            fprintf(f, " + kn_l * %d] = ", s->stride);
        else
            fprintf(f, E->in_lane ? " + kn_l] = " : "] = ");
        if (bt == KN_F16 || bt == KN_BF16) {
            E->helpers |= bt == KN_F16 ? H_F16_ST : H_BF16_ST;
            fprintf(f, "%s(", bt == KN_F16 ? "kn_f2h" : "kn_f2b");
            kn_cprint_expr(E, s->value);
            fputc(')', f);
        } else {
            kn_cprint_expr(E, s->value);
        }
        fprintf(f, ";\n");
        return;
    }
    case KS_DECL:
    case KS_SET:
        fprintf(f, "%*s", ind, "");
        if (s->kind == KS_DECL && !E->in_lane) fprintf(f, "%s ", CT(s->dtype));
        fprintf(f, E->in_lane ? "v%d[kn_l] = " : "v%d = ", s->var);
        kn_cprint_expr(E, s->value);
        fprintf(f, ";\n");
        return;
    case KS_IF:
    case KS_WHILE:
        /* `if ((a == b))` trips clang's -Wparentheses-equality: print `if (!!(a == b))` */
        fprintf(f, "%*s%s (%s", ind, "", s->kind == KS_IF ? "if" : "while",
                s->cond->op == KX_EQ ? "!!" : "");
        kn_cprint_expr(E, s->cond);
        fprintf(f, ") {\n");
        kn_cprint_stmt(E, s->body[0], ind + 4);
        if (s->kind == KS_IF && s->body[1]) {
            fprintf(f, "%*s} else {\n", ind, "");
            kn_cprint_stmt(E, s->body[1], ind + 4);
        }
        fprintf(f, "%*s}\n", ind, "");
        return;
    case KS_PREFETCH: /* a hint: nothing in OpenCL C (the tile pass makes none there) */
        if (E->dialect == KN_OPENCL) return;
        E->helpers |= H_PF;
        fprintf(f, "%*skn_prefetch(%s + ", ind, "", s->buf->name);
        kn_cprint_expr(E, s->index);
        fprintf(f, ");\n");
        return;
    case KS_COPY:
        if (E->dialect == KN_OPENCL) { /* no memmove: forward element copy (in-place
                                          aliases copy a region onto itself) */
            /* half elements move as their bits: a half lvalue needs cl_khr_fp16 */
            bool h = s->buf->dtype == KN_F16;
            const char *dq = s->buf->kind == KB_INPUT || s->buf->kind == KB_CONST ? "const " : "";
            const char *sq = s->src->kind == KB_INPUT || s->src->kind == KB_CONST ? "const " : "";
            fprintf(f, "%*sfor (long kn_i = 0; kn_i < ", ind, "");
            kn_cprint_expr(E, s->count);
            if (h)
                fprintf(f, "; kn_i++) ((__global %sushort *)%s)[", dq, s->buf->name);
            else
                fprintf(f, "; kn_i++) %s[", s->buf->name);
            kn_cprint_expr(E, s->index);
            if (h)
                fprintf(f, " + kn_i] = ((__global %sushort *)%s)[", sq, s->src->name);
            else
                fprintf(f, " + kn_i] = %s[", s->src->name);
            kn_cprint_expr(E, s->src_index);
            fprintf(f, " + kn_i];\n");
            return;
        }
        fprintf(f, "%*smemmove(%s + ", ind, "", s->buf->name);
        kn_cprint_expr(E, s->index);
        fprintf(f, ", %s + ", s->src->name);
        kn_cprint_expr(E, s->src_index);
        fprintf(f, ", (size_t)(");
        kn_cprint_expr(E, s->count);
        fprintf(f, ") * sizeof(%s));\n", CT(s->buf->dtype));
        return;
    }
}

/* ---- helpers ---- */

/* kn_h2f / kn_f2h: _Float16 where the compiler has it (GCC, Clang: one F16C instruction
 * on x86-64, VCVTB on Arm; -DKN_NO_FLOAT16 turns it off), else portable C99 bit
 * arithmetic; both exact, and round to nearest even. */
static const char *f16_have =
    "#if !defined(KN_NO_FLOAT16) && defined(__GNUC__) && defined(__FLT16_MAX__)\n"
    "#define KN_FLOAT16 1\n"
    "#else\n"
    "#define KN_FLOAT16 0\n"
    "#endif\n";
static const char *f16_helpers[2] = {
    "static float kn_h2f(uint16_t h) {\n"
    "#if KN_FLOAT16\n"
    "    __extension__ _Float16 v;\n"
    "    memcpy(&v, &h, 2);\n"
    "    return (float)v;\n"
    "#else\n"
    "    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u, x;\n"
    "    float f;\n"
    "    if (!e) { /* zero or subnormal: m * 2^-24, exact */\n"
    "        f = (float)m * 5.9604644775390625e-08f;\n"
    "        return s ? -f : f;\n"
    "    }\n"
    "    x = s | (e == 31 ? 0x7f800000u : (e + 112u) << 23) | (m << 13);\n"
    "    memcpy(&f, &x, 4);\n"
    "    return f;\n"
    "#endif\n"
    "}\n",
    "static uint16_t kn_f2h(float f) {\n"
    "#if KN_FLOAT16\n"
    "    __extension__ _Float16 v = (_Float16)f;\n"
    "    uint16_t h;\n"
    "    memcpy(&h, &v, 2);\n"
    "    return h;\n"
    "#else\n"
    "    uint16_t s = signbit(f) ? 0x8000 : 0;\n"
    "    float a = fabsf(f);\n"
    "    int e;\n"
    "    float m, q;\n"
    "    if (isnan(f)) return (uint16_t)(s | 0x7e00);\n"
    "    if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);\n"
    "    if (a < 6.103515625e-05f) return (uint16_t)(s | (uint16_t)nearbyintf(a * 16777216.0f));\n"
    "    m = frexpf(a, &e);\n"
    "    q = nearbyintf((m * 2.0f - 1.0f) * 1024.0f);\n"
    "    if (q >= 1024.0f) {\n"
    "        q = 0.0f;\n"
    "        e++;\n"
    "    }\n"
    "    return (uint16_t)(s | (uint16_t)((e + 14) << 10) | (uint16_t)q);\n"
    "#endif\n"
    "}\n"};

static const char *bf16_helpers[2] = {"static float kn_b2f(uint16_t h) {\n"
                                      "    uint32_t x = (uint32_t)h << 16;\n"
                                      "    float f;\n"
                                      "    memcpy(&f, &x, 4);\n"
                                      "    return f;\n"
                                      "}\n",
                                      "static uint16_t kn_f2b(float f) {\n"
                                      "    uint32_t x;\n"
                                      "    memcpy(&x, &f, 4);\n"
                                      "    if (isnan(f)) return (uint16_t)((x >> 16) | 0x40);\n"
                                      "    x += 0x7fffu + ((x >> 16) & 1u);\n"
                                      "    return (uint16_t)(x >> 16);\n"
                                      "}\n"};

static const char *bf16_helpers_ocl[2] = {
    "static float kn_b2f(ushort h) { return as_float((uint)h << 16); }\n",
    "static ushort kn_f2b(float f) {\n"
    "    uint x = as_uint(f);\n"
    "    if (isnan(f)) return (ushort)((x >> 16) | 0x40);\n"
    "    x += 0x7fffu + ((x >> 16) & 1u);\n"
    "    return (ushort)(x >> 16);\n"
    "}\n"};

/* The KX_DOT helpers (ir/kir.h), by kind: the words' parts as signed or unsigned values
 * without implementation-defined conversions, products exact in int32, sums wrapping
 * through uint32. SMLAD where the compiler targets an Arm DSP extension (Cortex-M4/M7:
 * it is the same sum; its Q flag is not read). */
static const char *dot_helpers[5] = {
    NULL,
    "static int32_t kn_dot1(int32_t acc, int32_t a, int32_t b) {\n"
    "#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)\n"
    "    int32_t r;\n"
    "    __asm__(\"smlad %0, %1, %2, %3\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(acc));\n"
    "    return r;\n"
    "#else\n"
    "    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;\n"
    "    int32_t a0 = (int32_t)(ua & 0xffffu) - (int32_t)((ua & 0x8000u) << 1);\n"
    "    int32_t b0 = (int32_t)(ub & 0xffffu) - (int32_t)((ub & 0x8000u) << 1);\n"
    "    int32_t a1 = (int32_t)(ua >> 16) - (int32_t)((ua >> 15) & 0x10000u);\n"
    "    int32_t b1 = (int32_t)(ub >> 16) - (int32_t)((ub >> 15) & 0x10000u);\n"
    "    return (int32_t)((uint32_t)acc + (uint32_t)(a0 * b0) + (uint32_t)(a1 * b1));\n"
    "#endif\n"
    "}\n",
    "static int32_t kn_dot2(int32_t acc, int32_t a, int32_t b) {\n"
    "    uint32_t ua = (uint32_t)a, ub = (uint32_t)b, s = (uint32_t)acc;\n"
    "    for (int k = 0; k < 32; k += 8) {\n"
    "        int32_t x = (int32_t)((ua >> k) & 0xffu), y = (int32_t)((ub >> k) & 0xffu);\n"
    "        s += (uint32_t)(x * (y - ((y & 0x80) << 1)));\n"
    "    }\n"
    "    return (int32_t)s;\n"
    "}\n",
    "static int32_t kn_dot3(int32_t acc, int32_t a, int32_t b) {\n"
    "    uint32_t ua = (uint32_t)a, ub = (uint32_t)b, s = (uint32_t)acc;\n"
    "    for (int k = 0; k < 32; k += 8) {\n"
    "        int32_t x = (int32_t)((ua >> k) & 0xffu), y = (int32_t)((ub >> k) & 0xffu);\n"
    "        s += (uint32_t)((x - ((x & 0x80) << 1)) * (y - ((y & 0x80) << 1)));\n"
    "    }\n"
    "    return (int32_t)s;\n"
    "}\n",
    "static int32_t kn_dot4(int32_t acc, const int32_t *a, const int32_t *b) {\n"
    "    uint32_t s = (uint32_t)acc;\n"
    "    for (int k = 0; k < 128; k += 8) {\n"
    "        uint32_t ua = (uint32_t)a[k / 32] >> k % 32, ub = (uint32_t)b[k / 32] >> k % 32;\n"
    "        int32_t x = (int32_t)(ua & 0xffu), y = (int32_t)(ub & 0xffu);\n"
    "        s += (uint32_t)((x - ((x & 0x80) << 1)) * (y - ((y & 0x80) << 1)));\n"
    "    }\n"
    "    return (int32_t)s;\n"
    "}\n",
};

/* KN_DOT_S16X2X: kn_dot1 with b's halves exchanged (SMLADX). */
static const char dotx_helper[] =
    "static int32_t kn_dot5(int32_t acc, int32_t a, int32_t b) {\n"
    "#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)\n"
    "    int32_t r;\n"
    "    __asm__(\"smladx %0, %1, %2, %3\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(acc));\n"
    "    return r;\n"
    "#else\n"
    "    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;\n"
    "    int32_t a0 = (int32_t)(ua & 0xffffu) - (int32_t)((ua & 0x8000u) << 1);\n"
    "    int32_t b0 = (int32_t)(ub & 0xffffu) - (int32_t)((ub & 0x8000u) << 1);\n"
    "    int32_t a1 = (int32_t)(ua >> 16) - (int32_t)((ua >> 15) & 0x10000u);\n"
    "    int32_t b1 = (int32_t)(ub >> 16) - (int32_t)((ub >> 15) & 0x10000u);\n"
    "    return (int32_t)((uint32_t)acc + (uint32_t)(a0 * b1) + (uint32_t)(a1 * b0));\n"
    "#endif\n"
    "}\n";

/* kx_load_kept: the buffer's pointer through an empty asm, which the compiler cannot see
 * through, so the load stays in its loop instead of being hoisted out (and spilled). */
static const char keep_helper[] = "static const void *kn_keep(const void *p) {\n"
                                  "#if defined(__GNUC__)\n"
                                  "    __asm__(\"\" : \"+r\"(p));\n"
                                  "#endif\n"
                                  "    return p;\n"
                                  "}\n";

/* print_mmla: c + the high word of a * b (signed), wrapping. SMMLA's exact sum (it
 * truncates: no R suffix), where the compiler targets an Arm DSP extension. */
static const char mmla_helper[] =
    "static int32_t kn_mmla(int32_t a, int32_t b, int32_t c) {\n"
    "#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)\n"
    "    int32_t r;\n"
    "    __asm__(\"smmla %0, %1, %2, %3\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c));\n"
    "    return r;\n"
    "#else\n"
    "    int64_t p = (int64_t)a * (int64_t)b;\n"
    "    return (int32_t)((uint32_t)(int32_t)(p >> 32) + (uint32_t)c);\n"
    "#endif\n"
    "}\n";

/* The KX_UNPACK16 helper of kind i (ir/kir.h): SXTB16/UXTB16 (ROR #8 for the odd
 * bytes) where the compiler targets an Arm DSP extension, else the two bytes extended
 * by shifts and masks through uint32. */
static void unpack_helper(FILE *f, int i) {
    bool odd = i & 1, u = i & 2;
    fprintf(f,
            "static int32_t kn_unpack16_%d(int32_t a) {\n"
            "#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)\n"
            "    int32_t r;\n"
            "    __asm__(\"%s %%0, %%1%s\" : \"=r\"(r) : \"r\"(a));\n"
            "    return r;\n"
            "#else\n"
            "    uint32_t ua = (uint32_t)a >> %d, lo = ua & 0xffu, hi = (ua >> 16) & 0xffu;\n",
            i, u ? "uxtb16" : "sxtb16", odd ? ", ror #8" : "", odd ? 8 : 0);
    if (!u)
        fprintf(f, "    lo = (lo ^ 0x80u) - 0x80u;\n"
                   "    hi = (hi ^ 0x80u) - 0x80u;\n");
    fprintf(f, "    return (int32_t)((lo & 0xffffu) | (hi << 16));\n"
               "#endif\n"
               "}\n");
}

/* The KX_SAT helper of kind k (k & 1: 16 bits, else 8; k & 2: unsigned): SSAT/USAT where
 * the compiler targets an Arm core that has them, else two compares (OpenCL C: on int). */
static void sat_helper(FILE *f, int k, bool ocl) {
    int bits = k & 1 ? 16 : 8;
    bool u = k & 2;
    long lo = u ? 0 : -(1L << (bits - 1)), hi = u ? (1L << bits) - 1 : (1L << (bits - 1)) - 1;
    const char *i32 = ocl ? "int" : "int32_t";
    fprintf(f,
            "static %s kn_sat_%d(%s a) {\n"
            "#if defined(__ARM_FEATURE_SAT) && defined(__GNUC__)\n"
            "    %s r;\n"
            "    __asm__(\"%s %%0, #%d, %%1\" : \"=r\"(r) : \"r\"(a));\n"
            "    return r;\n"
            "#else\n"
            "    return a < %ld ? %ld : a > %ld ? %ld : a;\n"
            "#endif\n"
            "}\n",
            i32, k, i32, i32, u ? "usat" : "ssat", bits, lo, lo, hi, hi);
}

/* KX_REGEX (ir/kir.h): regcomp/regexec/regfree of the C library on a regex_t kept in the
 * arena (KN_REGEX_T_BYTES bytes there; the typedef fails to compile where it is larger). */
_Static_assert(KN_REGEX_T_BYTES == 256 && KN_REGEX_UTF8_AT == 120 && KN_REGEX_LOCALE_AT == 248,
               "regex_helper's layout");
static const char regex_helper[] =
    "#include <locale.h>\n"
    "#include <regex.h>\n"
    "/* at byte 0 the pattern compiled in the C locale (for ASCII strings), at 120 in\n"
    " * C.UTF-8 (for the others), at 248 that locale (NULL: the caller's) */\n"
    "typedef char kn_regex_fits[sizeof(regex_t) <= 120 && sizeof(locale_t) <= 8 ? 1 : -1];\n"
    "static int kn_regex_compile(void *re, const char *p, int icase) {\n"
    "    unsigned char *b = (unsigned char *)re;\n"
    "    int f = REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0), rc;\n"
    "    locale_t c = newlocale(LC_ALL_MASK, \"C\", (locale_t)0);\n"
    "    locale_t l = newlocale(LC_CTYPE_MASK, \"" KN_REGEX_LOCALE "\", (locale_t)0);\n"
    "    locale_t o = uselocale(c);\n"
    "    rc = regcomp((regex_t *)(void *)b, p, f) ? -1 : 0;\n"
    "    uselocale(l);\n"
    "    if (!rc && regcomp((regex_t *)(void *)(b + 120), p, f)) {\n"
    "        regfree((regex_t *)(void *)b);\n"
    "        rc = -1;\n"
    "    }\n"
    "    uselocale(o);\n"
    "    if (c) freelocale(c);\n"
    "    if (rc && l) freelocale(l);\n"
    "    if (rc) l = (locale_t)0;\n"
    "    memcpy(b + 248, &l, sizeof l);\n"
    "    return rc;\n"
    "}\n"
    "static int kn_regex_match(const void *re, const char *s) {\n"
    "    const unsigned char *b = (const unsigned char *)re, *q = (const unsigned char *)s;\n"
    "    locale_t l, o;\n"
    "    int m;\n"
    "    while (*q && *q < 0x80) q++;\n"
    "    memcpy(&l, b + 248, sizeof l);\n"
    "    o = uselocale(*q ? l : (locale_t)0);\n"
    "    m = regexec((const regex_t *)(const void *)(b + (*q ? 120 : 0)), s, 0, NULL, 0) == 0;\n"
    "    uselocale(o);\n"
    "    return m;\n"
    "}\n"
    "static int kn_regex_free(void *re) {\n"
    "    unsigned char *b = (unsigned char *)re;\n"
    "    locale_t l;\n"
    "    memcpy(&l, b + 248, sizeof l);\n"
    "    regfree((regex_t *)(void *)b);\n"
    "    regfree((regex_t *)(void *)(b + 120));\n"
    "    if (l) freelocale(l);\n"
    "    return 0;\n"
    "}\n";

/* The word load (kx_load_word): 4 bytes at any alignment, the first the low byte. A
 * memcpy where the bytes are already in that order (GCC and clang: one LDR on Armv7-M,
 * which loads unaligned words), else the bytes shifted together. */
static const char ldw_helper[] =
    "static int32_t kn_ldw(const void *p) {\n"
    "#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__\n"
    "    uint32_t w;\n"
    "    memcpy(&w, p, 4);\n"
    "    return (int32_t)w;\n"
    "#else\n"
    "    const unsigned char *b = (const unsigned char *)p;\n"
    "    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |\n"
    "                     (uint32_t)b[3] << 24);\n"
    "#endif\n"
    "}\n";

/* The prefetch hint (kl_prefetch): GCC and Clang's builtin (read, moderate locality: the
 * second-level cache on x86), nothing for other compilers. */
static const char pf_helper[] = "#if defined(__GNUC__)\n"
                                "#define kn_prefetch(p) __builtin_prefetch((p), 0, 2)\n"
                                "#else\n"
                                "#define kn_prefetch(p) ((void)(p))\n"
                                "#endif\n";

/* The word store (kl_store_word): 4 bytes at any alignment, the low byte first. A memcpy
 * where that is the byte order (one STR on Armv7-M, one MOV on x86-64), else the bytes
 * shifted out one at a time. */
static const char stw_helper[] =
    "static void kn_stw(void *p, int32_t v) {\n"
    "#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__\n"
    "    memcpy(p, &v, 4);\n"
    "#else\n"
    "    unsigned char *b = (unsigned char *)p;\n"
    "    uint32_t w = (uint32_t)v;\n"
    "    b[0] = (unsigned char)w;\n"
    "    b[1] = (unsigned char)(w >> 8);\n"
    "    b[2] = (unsigned char)(w >> 16);\n"
    "    b[3] = (unsigned char)(w >> 24);\n"
    "#endif\n"
    "}\n";

/* KX_ROUND of an f32 (half to even, as nearbyintf in the default rounding mode) without
 * the libm call, which newlib makes about 50 instructions on the M4 (no VRINT in FPv4:
 * MobileNetV1's input quantization took 1.5 M instructions): |x| < 2^23 rounds to an
 * integer when added to 2^23 (its ulp there is 1, and the addition rounds to nearest
 * even); larger, infinite and NaN values are their own rounding. Where float arithmetic
 * may be carried wider or reassociated (FLT_EVAL_METHOD != 0, -ffast-math), nearbyintf. */
static const char rintf_helper[] =
    "#include <float.h>\n"
    "static float kn_rintf(float x) {\n"
    "#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 && !defined(__FAST_MATH__)\n"
    "    float a = fabsf(x);\n"
    "    if (!(a < 8388608.0f)) return x;\n"
    "    a = (a + 8388608.0f) - 8388608.0f;\n"
    "    return copysignf(a, x);\n"
    "#else\n"
    "    return nearbyintf(x);\n"
    "#endif\n"
    "}\n";

/* kx_round_small of an f32 (ir/kir.h: NaN or |x| <= 2^22): one addition and one
 * subtraction of 1.5 * 2^23, where float arithmetic is IEEE single as written. */
static const char rints_helper[] =
    "#include <float.h>\n"
    "static float kn_rintf_small(float x) {\n"
    "#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 && !defined(__FAST_MATH__)\n"
    "    return (x + 12582912.0f) - 12582912.0f;\n"
    "#else\n"
    "    return nearbyintf(x);\n"
    "#endif\n"
    "}\n";

/* KX_CVTRN of a scalar f32 (ir/kir.h): VCVTR.S32.F32 where the compiler targets an Arm FPU
 * with single precision (FPSCR's rounding mode is the default, to nearest even: the
 * generated code never changes it), else NaN and the bounds tested around kn_rintf's
 * rounding. */
static const char cvtrn_helper[] =
    "#include <float.h>\n"
    "static inline int32_t kn_cvtrn(float x) {\n"
    "#if defined(__GNUC__) && defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4)\n"
    "    float r;\n"
    "    int32_t i;\n"
    "    __asm__(\"vcvtr.s32.f32 %0, %1\" : \"=t\"(r) : \"t\"(x));\n"
    "    memcpy(&i, &r, 4);\n"
    "    return i;\n"
    "#else\n"
    "    if (x != x) return 0;\n"
    "    if (x >= 2147483648.0f) return 2147483647;\n"
    "    if (x < -2147483648.0f) return -2147483647 - 1;\n"
    "#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 && !defined(__FAST_MATH__)\n"
    "    if (fabsf(x) < 8388608.0f) /* as kn_rintf */\n"
    "        x = copysignf((fabsf(x) + 8388608.0f) - 8388608.0f, x);\n"
    "    return (int32_t)x;\n"
    "#else\n"
    "    return (int32_t)nearbyintf(x);\n"
    "#endif\n"
    "#endif\n"
    "}\n";

/* KX_QADD (ir/kir.h): QADD where the compiler targets an Arm DSP extension, else the sum in
 * 64 bits clamped. */
static const char qadd_helper[] =
    "static inline int32_t kn_qadd(int32_t a, int32_t b) {\n"
    "#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)\n"
    "    int32_t r;\n"
    "    __asm__(\"qadd %0, %1, %2\" : \"=r\"(r) : \"r\"(a), \"r\"(b));\n"
    "    return r;\n"
    "#else\n"
    "    int64_t s = (int64_t)a + b;\n"
    "    return s > 2147483647 ? 2147483647 : s < -2147483647 - 1 ? -2147483647 - 1 : (int32_t)s;\n"
    "#endif\n"
    "}\n";

/* KN_Q4FS / KN_Q4FU (mve_quant): 4 floats at x quantized into 4 bytes at y. Helium's
 * intrinsics where the compiler targets MVE with float (GCC), else the kernel IR's
 * arithmetic lane by lane (fmaf: fused, as kx_fma_exact says). */
static const char q4f_helper[] =
    "#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(__clang__)\n"
    "#include <arm_mve.h>\n"
    "#define KN_Q4FS(y, x, r, s, b, z, lo, hi) \\\n"
    "    do { \\\n"
    "        float32x4_t kn_v = vld1q_f32(x), kn_s = vdupq_n_f32(s), kn_q, kn_e; \\\n"
    "        mve_pred16_t kn_n = vcmpneq_f32(kn_v, kn_v); \\\n"
    "        kn_v = vminnmq_f32(vmaxnmq_f32(kn_v, vdupq_n_f32(-(b))), vdupq_n_f32(b)); \\\n"
    "        kn_q = vmulq_n_f32(kn_v, r); \\\n"
    "        kn_e = vfmsq_f32(kn_v, kn_q, kn_s); \\\n"
    "        kn_q = vfmaq_n_f32(kn_q, kn_e, r); \\\n"
    "        kn_e = vfmsq_f32(kn_v, kn_q, kn_s); \\\n"
    "        kn_q = vfmaq_n_f32(kn_q, kn_e, r); \\\n"
    "        int32x4_t kn_i = vaddq_n_s32(vcvtnq_s32_f32(kn_q), z); \\\n"
    "        kn_i = vminq_s32(vmaxq_s32(kn_i, vdupq_n_s32(lo)), vdupq_n_s32(hi)); \\\n"
    "        kn_i = vpselq_s32(vdupq_n_s32(0), kn_i, kn_n); \\\n"
    "        vstrbq_s32((int8_t *)(void *)(y), kn_i); \\\n"
    "    } while (0)\n"
    "#else\n"
    "#define KN_Q4FS(y, x, r, s, b, z, lo, hi) \\\n"
    "    do { \\\n"
    "        for (int kn_l = 0; kn_l < 4; kn_l++) { \\\n"
    "            float kn_v = (x)[kn_l], kn_c = (b) < kn_v ? (b) : kn_v, kn_q, kn_e; \\\n"
    "            int32_t kn_i; \\\n"
    "            kn_c = kn_c < -(b) ? -(b) : kn_c; \\\n"
    "            kn_q = kn_c * (r); \\\n"
    "            kn_e = fmaf(-kn_q, (s), kn_c); \\\n"
    "            kn_q = fmaf(kn_e, (r), kn_q); \\\n"
    "            kn_e = fmaf(-kn_q, (s), kn_c); \\\n"
    "            kn_q = fmaf(kn_e, (r), kn_q); \\\n"
    "            kn_i = kn_cvtrn(kn_q) + (z); \\\n"
    "            kn_i = kn_i < (lo) ? (lo) : kn_i > (hi) ? (hi) : kn_i; \\\n"
    "            ((unsigned char *)(void *)(y))[kn_l] = (unsigned char)(kn_v != kn_v ? 0 : kn_i); "
    "\\\n"
    "        } \\\n"
    "    } while (0)\n"
    "#endif\n"
    "#define KN_Q4FU KN_Q4FS\n";

bool kn_cprint_uses_regex(const kn_cprint *E) {
    return (E->helpers & H_REGEX) != 0;
}

/* KN_UNROLL(n): a loop the schedule unrolls whole (KN_LOOP_UNROLL, width n) as GCC's
 * unroll pragma; other compilers choose for themselves */
static const char *unroll_helper =
    "#if defined(__GNUC__) && !defined(__clang__)\n#define KN_PRAGMA(x) _Pragma(#x)\n"
    "#define KN_UNROLL(n) KN_PRAGMA(GCC unroll n)\n#else\n#define KN_UNROLL(n)\n#endif\n";

void kn_cprint_posix_prelude(FILE *f) {
    fprintf(f, "/* newlocale/uselocale (RegexFullMatch matches in C.UTF-8) */\n"
               "#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L\n"
               "#undef _POSIX_C_SOURCE\n#define _POSIX_C_SOURCE 200809L\n#endif\n");
}

void kn_cprint_helpers(const kn_cprint *E, FILE *f) {
    if (E->helpers & H_REGEX) fputs(regex_helper, f);
    if (E->helpers & H_RINTF) fputs(rintf_helper, f);
    if (E->helpers & H_RINTS) fputs(rints_helper, f);
    if (E->helpers & H_CVTRN) fputs(cvtrn_helper, f);
    if (E->helpers & H_QADD) fputs(qadd_helper, f);
    if (E->helpers & H_Q4F) fputs(q4f_helper, f);
    if (E->helpers & H_LDW) fputs(ldw_helper, f);
    if (E->helpers & H_STW) fputs(stw_helper, f);
    if (E->helpers & H_PF) fputs(pf_helper, f);
    if (E->helpers & H_UNROLL) fputs(unroll_helper, f);
    const char **bf = E->dialect == KN_OPENCL ? bf16_helpers_ocl : bf16_helpers;
    for (int k = 1; k < 5; k++)
        if (E->helpers & ((unsigned)H_DOT << k)) fputs(dot_helpers[k], f);
    if (E->helpers & H_DOTX) fputs(dotx_helper, f);
    if (E->helpers & H_KEEP) fputs(keep_helper, f);
    if (E->helpers & H_MMLA) fputs(mmla_helper, f);
    for (int k = 0; k < 4; k++)
        if (E->helpers & ((unsigned)H_UNPACK << k)) unpack_helper(f, k);
    for (int k = 0; k < 4; k++)
        if (E->helpers & ((unsigned)H_SAT << k)) sat_helper(f, k, E->dialect == KN_OPENCL);
    if (E->helpers & (H_F16 | H_F16_ST)) fputs(f16_have, f);
    if (E->helpers & H_F16) fputs(f16_helpers[0], f);
    if (E->helpers & H_F16_ST) fputs(f16_helpers[1], f);
    if (E->helpers & H_BF16) fputs(bf[0], f);
    if (E->helpers & H_BF16_ST) fputs(bf[1], f);
    for (int t = 1; t < KN_DTYPE_MAX; t++) {
        unsigned m = E->types[t];
        if (!m) continue;
        const char *c = CT((kn_dtype)t), *n = kn_dtype_name(t);
        bool fl = is_float((kn_dtype)t), sg = kn_dtype_get(t)->is_signed;
        if (fl && E->dialect == KN_OPENCL) { /* the same, as one select: a branch per call
                                                 keeps the device compiler from vectorizing
                                                 the epilogues and clamps that use it */
            if (m & F_MIN)
                fprintf(f,
                        "static %s kn_min_%s(%s a, %s b) { return (a < b) | (a != a) ? a : b; }\n",
                        c, n, c, c);
            if (m & F_MAX)
                fprintf(f,
                        "static %s kn_max_%s(%s a, %s b) { return (a > b) | (a != a) ? a : b; }\n",
                        c, n, c, c);
        } else if (fl) {
            /* NaN-propagating, as ONNX Min/Max and numpy: a NaN b fails a < b and is
             * picked. Written so that gcc makes it minss/maxss and one well-predicted
             * NaN test: `a != a ? a : b != b ? b : a < b ? a : b` became a branch on the
             * data in a MaxPool window (6x slower on ResNet-18's pool). */
            if (m & F_MIN)
                fprintf(f,
                        "static %s kn_min_%s(%s a, %s b) { %s r = a < b ? a : b; return a != a ? a "
                        ": r; }\n",
                        c, n, c, c, c);
            if (m & F_MAX)
                fprintf(f,
                        "static %s kn_max_%s(%s a, %s b) { %s r = a > b ? a : b; return a != a ? a "
                        ": r; }\n",
                        c, n, c, c, c);
        } else {
            if (m & F_MIN)
                fprintf(f, "static %s kn_min_%s(%s a, %s b) { return a < b ? a : b; }\n", c, n, c,
                        c);
            if (m & F_MAX)
                fprintf(f, "static %s kn_max_%s(%s a, %s b) { return a > b ? a : b; }\n", c, n, c,
                        c);
            if (m & F_ABS)
                fprintf(f,
                        "static %s kn_abs_%s(%s a, %s b) { (void)b; return (%s)(a < 0 ? 0u - (%s)a "
                        ": (%s)a); }\n",
                        c, n, c, c, c, unsigned_of(E, (kn_dtype)t), unsigned_of(E, (kn_dtype)t));
        }
        /* no undefined behaviour: x/0 = 0, x%0 = 0, MIN/-1 wraps */
        const char *u = unsigned_of(E, (kn_dtype)t);
        if ((m & F_DIV) && sg)
            fprintf(f,
                    "static %s kn_div_%s(%s a, %s b) { return b == 0 ? 0 : b == -1 ? (%s)(0u - "
                    "(%s)a) : (%s)(a / b); }\n",
                    c, n, c, c, c, u, c);
        else if (m & F_DIV)
            fprintf(f, "static %s kn_div_%s(%s a, %s b) { return b == 0 ? 0 : (%s)(a / b); }\n", c,
                    n, c, c, c);
        if (m & F_REM)
            fprintf(f, "static %s kn_rem_%s(%s a, %s b) { return b == 0%s ? 0 : (%s)(a %% b); }\n",
                    c, n, c, c, sg ? " || b == -1" : "", c);
        int bits = (int)kn_dtype_get(t)->size * 8;
        if (m & F_SHL)
            fprintf(f, "static %s kn_shl_%s(%s a, %s b) { return b >= %d ? 0 : (%s)(a << b); }\n",
                    c, n, c, c, bits, c);
        if (m & F_SHR)
            fprintf(f, "static %s kn_shr_%s(%s a, %s b) { return b >= %d ? 0 : (%s)(a >> b); }\n",
                    c, n, c, c, bits, c);
    }
}

/* ---- the C99 prelude: fma and vector types ---- */

/* Vector floor and ldexp for the vmath exp (passes/vmath.c), '@' standing for the lanes.
 * Same results as floorf and ldexpf lane by lane (the portable form), by integer
 * arithmetic on the lanes instead of a libm call per lane:
 *  - floor: lanes with |a| < 2^23 and a != 0 truncate through int and step down where
 *    that rounded up; the others (integral already, +-0, inf, NaN) are a itself;
 *  - ldexp(a, n), n integral: a * 2^(n>>1) * 2^(n - (n>>1)), each power built from its
 *    exponent bits. Exact as ldexpf for n in [-252, 254] when a * 2^(n>>1) is a normal
 *    float: the exp polynomial's y in [0.7, 1.5] and n in [-149, 128] (or NaN). */
static const char vmath_macros[] =
    "#define KN_TRUNC@F(t) __builtin_convertvector(__builtin_convertvector(t, kn_v@i), kn_v@f)\n"
    "#define KN_FLOORS@F(t) (KN_TRUNC@F(t) - \\\n"
    "    KN_SEL@F(KN_TRUNC@F(t) > (t), KN_SPLAT@F(1.0f), KN_SPLAT@F(0.0f)))\n"
    "#define KN_FLOOR@F(a) KN_SEL@F((KN_ABS@F(a) < 8388608.0f) & ((a) != 0.0f), \\\n"
    "    KN_FLOORS@F(KN_SEL@F(KN_ABS@F(a) < 8388608.0f, a, KN_SPLAT@F(0.0f))), a)\n"
    "#define KN_EXPI@I(n) __builtin_convertvector(KN_SEL@F((n) == (n), n, KN_SPLAT@F(0.0f)), "
    "kn_v@i)\n"
    "#define KN_EXPH@I(n) (KN_EXPI@I(n) >> 1)\n"
    "#define KN_POW2_@F(k) ((kn_v@f)(((k) + 127) << 23))\n"
    "#define KN_LDEXP@F(a, n) \\\n"
    "    ((a) * KN_POW2_@F(KN_EXPH@I(n)) * KN_POW2_@F(KN_EXPI@I(n) - KN_EXPH@I(n)))\n";

/* The register blocks' loads (block_decl), for each width of `blk` (bit k: 2^k). */
static void block_prelude(unsigned blk, FILE *f) {
    fprintf(f, "\n/* Register blocks (passes/tile.c, mm_fblock): floats held in consecutive FPU\n"
               " * registers s<r0>..s<r1>, loaded by one VLDM with GCC on Arm (KN_SREG binds each\n"
               " * to its register); elsewhere, or with -DKN_NO_ASM, plain loads. */\n"
               "#if defined(__GNUC__) && !defined(__clang__) && defined(__arm__) && \\\n"
               "    defined(__ARM_FP) && (__ARM_FP & 4) && !defined(KN_NO_ASM)\n"
               "#define KN_SREG(n) __asm__(\"s\" #n)\n");
    for (int asmv = 1; asmv >= 0; asmv--) {
        if (!asmv) fprintf(f, "#else\n#define KN_SREG(n)\n");
        for (int k = 3; k <= 4; k++) {
            if (!(blk & (1u << k))) continue;
            int n = 1 << k;
            fprintf(f, "#define KN_LDM%dF(p, r0, r1", n);
            for (int l = 0; l < n; l++) fprintf(f, ", a%d", l);
            if (asmv) {
                fprintf(
                    f,
                    ") \\\n    __asm__ volatile(\"vldmia %%[kn_p], {s\" #r0 \"-s\" #r1 \"}\" \\\n"
                    "                     : ");
                for (int l = 0; l < n; l++)
                    fprintf(f, "%s\"=t\"(a%d)%s", l ? ", " : "", l,
                            l % 8 == 7 && l + 1 < n ? " \\\n                       " : "");
                fprintf(f,
                        " \\\n                     : [kn_p] \"r\"(p), \"m\"(*(const "
                        "float(*)[%d])(p)))\n",
                        n);
            } else {
                fprintf(f, ") \\\n    do { \\\n        const float *kn_p = (p); \\\n       ");
                for (int l = 0; l < n; l++)
                    fprintf(f, " a%d = kn_p[%d];%s", l, l, l % 4 == 3 ? " \\\n       " : "");
                fprintf(f, " (void)0; \\\n    } while (0)\n");
            }
        }
    }
    fprintf(f, "#endif\n");
}

void kn_cprint_vector_prelude(const kn_cprint *E, const kn_cprint *V, bool target_fma, FILE *f) {
    unsigned widths = E->vec_widths | (V ? V->vec_widths : 0);
    if (E->blk_widths || (V && V->blk_widths))
        block_prelude(E->blk_widths | (V ? V->blk_widths : 0), f);
    if (E->self_used || (V && V->self_used))
        fprintf(f,
                "\n/* KN_SELF(c, a, b): c ? a : b on floats without a branch (as a bit select on\n"
                " * x86, where gcc would branch on data); a and b are both computed. */\n"
                "#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))\n"
                "__attribute__((unused)) static inline float kn_self(int c, float a, float b) {\n"
                "    uint32_t x, y, m = 0u - (uint32_t)(c != 0);\n"
                "    memcpy(&x, &a, 4);\n    memcpy(&y, &b, 4);\n"
                "    x = (x & m) | (y & ~m);\n    memcpy(&a, &x, 4);\n    return a;\n}\n"
                "#define KN_SELF(c, a, b) kn_self(c, a, b)\n"
                "#else\n#define KN_SELF(c, a, b) ((c) ? (a) : (b))\n#endif\n");
    if (!widths && !E->fma_used && !(V && V->fma_used)) return;
    fprintf(f,
            "\n/* Multiply-add: the kernel IR's fma is fused (one rounding, as the LLVM backend\n"
            " * does) where the target has FMA (KN_TARGET_FMA, from --target) and this\n"
            " * compiler a fast fmaf; otherwise it is a*b + c. -DKN_FMA_FUSED=0 or 1 overrides.\n"
            " * Nothing else is contracted: Clang is told so; give GCC -std=c99 (or\n"
            " * -ffp-contract=off) for results identical to kiln's other backends. */\n"
            "#ifndef KN_TARGET_FMA\n#define KN_TARGET_FMA %d\n#endif\n"
            "#ifndef KN_FMA_FUSED\n"
            "#if KN_TARGET_FMA && (defined(FP_FAST_FMAF) || defined(__FMA__) || "
            "defined(__ARM_FEATURE_FMA))\n"
            "#define KN_FMA_FUSED 1\n#else\n#define KN_FMA_FUSED 0\n#endif\n#endif\n"
            "#if KN_FMA_FUSED && defined(__GNUC__)\n"
            "#define KN_FMAF(a, b, c) __builtin_fmaf(a, b, c)\n"
            "#elif KN_FMA_FUSED\n#define KN_FMAF(a, b, c) fmaf(a, b, c)\n"
            "#else\n#define KN_FMAF(a, b, c) ((a) * (b) + (c))\n#endif\n"
            "#if KN_FMA_FUSED && (defined(FP_FAST_FMA) || defined(__FMA__) || "
            "defined(__aarch64__))\n"
            "#define KN_FMAD(a, b, c) fma(a, b, c)\n"
            "#else\n#define KN_FMAD(a, b, c) ((a) * (b) + (c))\n#endif\n",
            target_fma ? 1 : 0);
    if (!widths) return;
    fprintf(f, "\n/* Vectors: GCC/Clang vector extensions; with another compiler, or with\n"
               " * -DKN_NO_VECTOR_EXT, each kernel's portable C99 form (loops over the lanes),\n"
               " * which computes the same operations in the same order. Loads and stores go\n"
               " * through unaligned, may_alias types; min/max propagate NaN as ONNX does. */\n"
               "#if defined(__GNUC__) && !defined(KN_NO_VECTOR_EXT)\n#define KN_VECTOR_EXT 1\n"
               "#else\n#define KN_VECTOR_EXT 0\n#endif\n#if KN_VECTOR_EXT\n"
               "#define KN_CMP_lt(x, y) ((x) < (y))\n#define KN_CMP_le(x, y) ((x) <= (y))\n"
               "#define KN_CMP_gt(x, y) ((x) > (y))\n#define KN_CMP_ge(x, y) ((x) >= (y))\n"
               "#define KN_CMP_eq(x, y) ((x) == (y))\n#define KN_CMP_ne(x, y) ((x) != (y))\n");
    for (int k = 1; k <= 6; k++) {
        if (!(widths & (1u << k))) continue;
        int L = 1 << k, B = 4 * L;
        fprintf(f,
                "typedef float kn_v%df __attribute__((vector_size(%d)));\n"
                "typedef float kn_v%dfu __attribute__((vector_size(%d), aligned(4), may_alias));\n"
                "typedef int kn_v%di __attribute__((vector_size(%d)));\n"
                "#define KN_LD%dF(p) (*(const kn_v%dfu *)(const void *)(p))\n"
                "#define KN_ST%dF(p, v) (*(kn_v%dfu *)(void *)(p) = (v))\n"
                "#define KN_SPLAT%dF(x) ((x) - (kn_v%df){0})\n"
                "#define KN_SEL%dF(m, a, b) \\\n"
                "    ((kn_v%df)(((kn_v%di)(a) & (kn_v%di)(m)) | ((kn_v%di)(b) & ~(kn_v%di)(m))))\n"
                "#define KN_MIN%dF(a, b) KN_SEL%dF(((a) != (a)) | ((a) < (b)), a, b)\n"
                "#define KN_MAX%dF(a, b) KN_SEL%dF(((a) != (a)) | ((a) > (b)), a, b)\n"
                "#define KN_ABS%dF(a) ((kn_v%df)((kn_v%di)(a) & 0x7fffffff))\n"
                "#if KN_FMA_FUSED\n#define KN_FMA%dF(a, b, c) \\\n    ((kn_v%df){",
                L, B, L, B, L, B, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L);
        for (int i = 0; i < L; i++)
            fprintf(f, "%sKN_FMAF((a)[%d], (b)[%d], (c)[%d])",
                    i == 0  ? ""
                    : i % 2 ? ", "
                            : ", \\\n      ",
                    i, i, i);
        fprintf(f,
                "})\n#else\n#define KN_FMA%dF(a, b, c) ((a) * (b) + (c))\n#endif\n"
                "#define KN_FMA%dFS(s, b, c) KN_FMA%dF(KN_SPLAT%dF(s), b, c)\n"
                "#define KN_SELC%dF(x, op, y, a, b) KN_SEL%dF(KN_CMP_##op(x, y), a, b)\n",
                L, L, L, L, L, L);
        if (L == 8 || L == 16) /* x86: GCC 12 builds the per-lane fmaf of 8 or 16 lanes
                       partly lane by lane (scalar vfmadd231ss, on AVX-512 all 16: ResNet-18
                       at -O2 20x the JIT); the intrinsic is one instruction, as exact */
            fprintf(f,
                    "#if KN_FMA_FUSED && defined(%s)\n#include <immintrin.h>\n#undef KN_FMA%dF\n"
                    "#define KN_FMA%dF(a, b, c) \\\n"
                    "    ((kn_v%df)_mm%s_fmadd_ps((__m%d)(a), (__m%d)(b), (__m%d)(c)))\n#endif\n",
                    L == 16 ? "__AVX512F__" : "__FMA__", L, L, L, L == 16 ? "512" : "256", B * 8,
                    B * 8, B * 8);
        if (L == 4) /* Helium (MVE with float): GCC 12 builds the per-lane fmaf of vectors,
                       and vector comparisons, lane by lane; its intrinsics are single
                       instructions (comparisons into a predicate, then VPSEL) */
            fprintf(
                f,
                "#if KN_FMA_FUSED && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && \\\n"
                "    !defined(__clang__)\n"
                "#include <arm_mve.h>\n"
                "#undef KN_FMA4F\n#undef KN_FMA4FS\n#undef KN_SELC4F\n#undef KN_MIN4F\n"
                "#undef KN_MAX4F\n"
                "#define KN_FMA4F(a, b, c) vfmaq_f32(c, a, b)\n"
                "#define KN_FMA4FS(s, b, c) vfmaq_n_f32(c, b, s)\n"
                "#define KN_SELC4F(x, op, y, a, b) vpselq_f32(a, b, vcmp##op##q_f32(x, y))\n"
                "#define KN_MIN4F(a, b) vpselq_f32(a, b, vcmpneq_f32(a, a) | vcmpltq_f32(a, b))\n"
                "#define KN_MAX4F(a, b) vpselq_f32(a, b, vcmpneq_f32(a, a) | vcmpgtq_f32(a, b))\n"
                "#endif\n");
        if (L == 4 && ((V && V->gather4f) || E->gather4f)) /* strided f32 loads (vprint):
                       Helium's gather VLDRW.U32 with offsets 0, s, 2s, 3s words */
            fprintf(f, "#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && "
                       "!defined(__clang__)\n"
                       "#include <arm_mve.h>\n"
                       "#define KN_LD4FG(p, s) \\\n"
                       "    ((kn_v4f)vldrwq_gather_shifted_offset_f32((const float *)(p), \\\n"
                       "        vmulq_n_u32(vidupq_n_u32(0u, 1), (uint32_t)(s))))\n"
                       "#else\n"
                       "#define KN_LD4FG(p, s) ((kn_v4f){(p)[0], (p)[(s)], (p)[2 * (s)], (p)[3 * "
                       "(s)]})\n"
                       "#endif\n");
        if (L == 4 && ((V && V->mve_used) || E->mve_used)) {
            /* Helium's integer tiles (mve_int): GCC 12 builds the i32 lanes' loops one
             * lane at a time; the intrinsics are single instructions. Elsewhere the same
             * sums in vector extensions, wrapping as the lane loops' uint32 sums */
            fprintf(
                f,
                "typedef int kn_v4iu __attribute__((vector_size(16), aligned(4), may_alias));\n"
                "#define KN_LD4I(p) ((kn_v4i)(*(const kn_v4iu *)(const void *)(p)))\n"
                "typedef short kn_v4hu __attribute__((vector_size(8), aligned(2), may_alias));\n"
                "typedef unsigned kn_v4u __attribute__((vector_size(16)));\n"
                "#if defined(__ARM_FEATURE_MVE) && !defined(__clang__)\n"
                "#include <arm_mve.h>\n"
                "#define KN_LD4S16(p) ((kn_v4i)vldrhq_s32((const int16_t *)(const void *)(p)))\n"
                "#define KN_MLA4I(a, w, x) ((kn_v4i)vmlaq_n_s32((int32x4_t)(a), (int32x4_t)(w), "
                "x))\n"
                "#define KN_DOT16(acc, x, w) \\\n"
                "    vmladavaq_s8(acc, vreinterpretq_s8_s32((int32x4_t)(x)), "
                "vreinterpretq_s8_s32((int32x4_t)(w)))\n"
                "#define KN_DUP4I(x) ((kn_v4i)vdupq_n_s32(x))\n"
                "#define KN_LD4BU(p) ((kn_v4i)vldrbq_u32((const uint8_t *)(const void *)(p)))\n"
                "#define KN_LD4BS(p) ((kn_v4i)vldrbq_s32((const int8_t *)(const void *)(p)))\n"
                "#define KN_LD4BUZ(p, z) ((kn_v4i)vsubq_n_s32((int32x4_t)KN_LD4BU(p), z))\n"
                "#define KN_LD4BSZ(p, z) ((kn_v4i)vsubq_n_s32((int32x4_t)KN_LD4BS(p), z))\n"
                "#define KN_LD4BUS(p, s) \\\n"
                "    ((kn_v4i)vldrbq_gather_offset_u32((const uint8_t *)(const void *)(p), "
                "vidupq_n_u32(0, s)))\n"
                "#define KN_LD4BSS(p, s) \\\n"
                "    ((kn_v4i)vldrbq_gather_offset_s32((const int8_t *)(const void *)(p), "
                "vidupq_n_u32(0, s)))\n"
                "#define KN_LD4BUSZ(p, s, z) ((kn_v4i)vsubq_n_s32((int32x4_t)KN_LD4BUS(p, s), z))\n"
                "#define KN_ST4BSS(p, v, s) \\\n"
                "    vstrbq_scatter_offset_s32((int8_t *)(void *)(p), \\\n"
                "                              vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)(s)), "
                "(int32x4_t)(v))\n"
                "#define KN_LD4BSSZ(p, s, z) ((kn_v4i)vsubq_n_s32((int32x4_t)KN_LD4BSS(p, s), z))\n"
                /* the clamp to the whole u8 or i8 range by a saturating shift left by 24
                 * and back (two instructions with immediates): VMAX/VMIN hold their
                 * bounds in two of the eight Q registers, which the 1x1 tiles' epilogues
                 * reloaded from the stack (MobileNetV2 int8 on the M55: 7.741 -> 7.622 M
                 * instructions; KN_RQ4B, the depthwise tiles: 7.567 -> 7.516 M, though
                 * the in-place tiles of 3 rows take 3-4 K more each: 68 -> 71 K at 6 x 6 x
                 * 144, 90 -> 94 K at 6 x 6 x 192) */
                "#define KN_CLAMP4(x, lo, hi) \\\n"
                "    ((lo) == 0 && (hi) == 255 \\\n"
                "         ? vreinterpretq_s32_u32(vshrq_n_u32(vqshluq_n_s32((x), 24), 24)) \\\n"
                "     : (lo) == -128 && (hi) == 127 ? vshrq_n_s32(vqshlq_n_s32((x), 24), 24) \\\n"
                "                                   : vminq_s32(vmaxq_s32((x), vdupq_n_s32(lo)), "
                "vdupq_n_s32(hi)))\n"
                "#define KN_RQ4I(acc, m, r, t, lo, hi) \\\n"
                "    ((kn_v4i)KN_CLAMP4(vshlq_r_s32(vaddq_n_s32(vmulhq_s32((int32x4_t)(acc), "
                "\\\n"
                "        (int32x4_t)(m)), r), -(t)), lo, hi))\n"
                "#define KN_RQ4IV(acc, m, r, t, lo, hi) \\\n"
                "    ((kn_v4i)KN_CLAMP4(vshlq_s32(vaddq_s32(vmulhq_s32((int32x4_t)(acc), "
                "\\\n"
                "        (int32x4_t)(m)), (int32x4_t)(r)), vnegq_s32((int32x4_t)(t))), lo, hi))\n");
            fprintf(
                f,
                "#define KN_RQ4B(p, acc, m, r, t, lo, hi) \\\n"
                "    do { \\\n"
                "        int32x4_t kn_h = vmulhq_s32((int32x4_t)(acc), (int32x4_t)(m)); \\\n"
                "        kn_h = vshlq_r_s32(vaddq_n_s32(kn_h, r), -(t)); \\\n"
                "        kn_h = KN_CLAMP4(kn_h, lo, hi); \\\n"
                "        vstrbq_s32((int8_t *)(void *)(p), kn_h); \\\n"
                "    } while (0)\n"
                "#define KN_RQ4BV(p, acc, m, r, t, lo, hi) \\\n"
                "    do { \\\n"
                "        int32x4_t kn_h = vmulhq_s32((int32x4_t)(acc), (int32x4_t)(m)); \\\n"
                "        kn_h = vshlq_s32(vaddq_s32(kn_h, (int32x4_t)(r)), "
                "vnegq_s32((int32x4_t)(t))); \\\n"
                "        kn_h = vminq_s32(vmaxq_s32(kn_h, vdupq_n_s32(lo)), vdupq_n_s32(hi)); \\\n"
                "        vstrbq_s32((int8_t *)(void *)(p), kn_h); \\\n"
                "    } while (0)\n"
                /* the shift's table negated (kt_rq.vrec): VSHL takes it as it is, one VNEG
                 * less an output vector */
                "#define KN_RQ4BVN(p, acc, m, r, tn, lo, hi) \\\n"
                "    do { \\\n"
                "        int32x4_t kn_h = vmulhq_s32((int32x4_t)(acc), (int32x4_t)(m)); \\\n"
                "        kn_h = vshlq_s32(vaddq_s32(kn_h, (int32x4_t)(r)), (int32x4_t)(tn)); \\\n"
                "        kn_h = KN_CLAMP4(kn_h, lo, hi); \\\n"
                "        vstrbq_s32((int8_t *)(void *)(p), kn_h); \\\n"
                "    } while (0)\n"
                "#define KN_RQ4IVN(acc, m, r, tn, lo, hi) \\\n"
                "    ((kn_v4i)KN_CLAMP4(vshlq_s32(vaddq_s32(vmulhq_s32((int32x4_t)(acc), "
                "\\\n"
                "        (int32x4_t)(m)), (int32x4_t)(r)), (int32x4_t)(tn)), lo, hi))\n"
                "#define KN_DQ4FU(d, p, z, s) \\\n"
                "    vstrwq_f32((float *)(void *)(d), \\\n"
                "               vmulq_n_f32(vcvtq_f32_s32(vsubq_n_s32(vreinterpretq_s32_u32( \\\n"
                "                               vldrbq_u32((const uint8_t *)(const void *)(p))), "
                "(z))), (s)))\n"
                "#define KN_DQ4FS(d, p, z, s) \\\n"
                "    vstrwq_f32((float *)(void *)(d), \\\n"
                "               vmulq_n_f32(vcvtq_f32_s32(vsubq_n_s32( \\\n"
                "                               vldrbq_s32((const int8_t *)(const void *)(p)), "
                "(z))), (s)))\n"
                "#define KN_GW4(d, p0, p1, p2, p3, s, c) \\\n"
                "    do { \\\n"
                "        uint32x4_t kn_o = {0u, (s), 2u * (s), 3u * (s)}; \\\n"
                "        uint32x4_t kn_w = vldrbq_gather_offset_u32((const uint8_t *)(const void "
                "*)(p3), "
                "kn_o); \\\n"
                "        kn_w = vsliq_n_u32( \\\n"
                "            vldrbq_gather_offset_u32((const uint8_t *)(const void *)(p2), kn_o), "
                "kn_w, 8); \\\n"
                "        kn_w = vsliq_n_u32( \\\n"
                "            vldrbq_gather_offset_u32((const uint8_t *)(const void *)(p1), kn_o), "
                "kn_w, 8); \\\n"
                "        kn_w = vsliq_n_u32( \\\n"
                "            vldrbq_gather_offset_u32((const uint8_t *)(const void *)(p0), kn_o), "
                "kn_w, 8); \\\n"
                "        if (c) kn_w = veorq_u32(kn_w, vdupq_n_u32(c)); \\\n"
                "        vstrwq_u32((uint32_t *)(void *)(d), kn_w); \\\n"
                "    } while (0)\n"
                "#else\n");
            fprintf(
                f,
                "__attribute__((unused)) static inline int32_t kn_dot16(int32_t acc, kn_v4i x, "
                "kn_v4i w) {\n"
                "    unsigned char a[16], b[16];\n"
                "    uint32_t s = (uint32_t)acc;\n"
                "    memcpy(a, &x, 16);\n    memcpy(b, &w, 16);\n"
                "    for (int k = 0; k < 16; k++)\n"
                "        s += (uint32_t)(((int32_t)a[k] - ((a[k] & 0x80) << 1)) *\n"
                "                        ((int32_t)b[k] - ((b[k] & 0x80) << 1)));\n"
                "    return (int32_t)s;\n}\n"
                "#define KN_DOT16(acc, x, w) kn_dot16(acc, x, w)\n"
                "#define KN_LD4S16(p) \\\n"
                "    __builtin_convertvector(*(const kn_v4hu *)(const void *)(p), kn_v4i)\n"
                "#define KN_MLA4I(a, w, x) \\\n"
                "    ((kn_v4i)((kn_v4u)(a) + (kn_v4u)(w) * (unsigned)(x)))\n"
                "#define KN_DUP4I(x) ((kn_v4i){0, 0, 0, 0} + (int)(x))\n"
                "typedef unsigned char kn_v4bu __attribute__((vector_size(4), aligned(1), "
                "may_alias));\n"
                "typedef signed char kn_v4bs __attribute__((vector_size(4), aligned(1), "
                "may_alias));\n"
                "#define KN_LD4BU(p) \\\n"
                "    __builtin_convertvector(*(const kn_v4bu *)(const void *)(p), kn_v4i)\n"
                "#define KN_LD4BS(p) \\\n"
                "    __builtin_convertvector(*(const kn_v4bs *)(const void *)(p), kn_v4i)\n"
                "#define KN_LD4BUZ(p, z) ((kn_v4i)((kn_v4u)KN_LD4BU(p) - (unsigned)(z)))\n"
                "#define KN_LD4BSZ(p, z) ((kn_v4i)((kn_v4u)KN_LD4BS(p) - (unsigned)(z)))\n"
                "#define KN_LD4BUS(p, s) \\\n"
                "    ((kn_v4i){((const uint8_t *)(const void *)(p))[0], \\\n"
                "              ((const uint8_t *)(const void *)(p))[(s)], \\\n"
                "              ((const uint8_t *)(const void *)(p))[2 * (s)], \\\n"
                "              ((const uint8_t *)(const void *)(p))[3 * (s)]})\n"
                "#define KN_LD4BSS(p, s) \\\n"
                "    ((kn_v4i){((const int8_t *)(const void *)(p))[0], \\\n"
                "              ((const int8_t *)(const void *)(p))[(s)], \\\n"
                "              ((const int8_t *)(const void *)(p))[2 * (s)], \\\n"
                "              ((const int8_t *)(const void *)(p))[3 * (s)]})\n"
                "#define KN_LD4BUSZ(p, s, z) ((kn_v4i)((kn_v4u)KN_LD4BUS(p, s) - (unsigned)(z)))\n"
                "#define KN_ST4BSS(p, v, s) \\\n"
                "    do { \\\n"
                "        for (int kn_l = 0; kn_l < 4; kn_l++) \\\n"
                "            ((unsigned char *)(void *)(p))[kn_l * (s)] = (unsigned "
                "char)(v)[kn_l]; \\\n"
                "    } while (0)\n"
                "#define KN_LD4BSSZ(p, s, z) ((kn_v4i)((kn_v4u)KN_LD4BSS(p, s) - "
                "(unsigned)(z)))\n");
            fputs(
                "__attribute__((unused)) static inline kn_v4i kn_rq4i(kn_v4i acc, kn_v4i m, kn_v4i "
                "r, "
                "kn_v4i t, int lo,\n"
                "                                                    int hi) {\n"
                "    kn_v4i q;\n"
                "    for (int l = 0; l < 4; l++) {\n"
                "        int32_t h = (int32_t)(((int64_t)acc[l] * m[l]) >> 32);\n"
                "        h = (int32_t)((uint32_t)h + (uint32_t)r[l]) >> (t[l] & 31);\n"
                "        q[l] = h < lo ? lo : h > hi ? hi : h;\n"
                "    }\n"
                "    return q;\n}\n"
                "#define KN_RQ4I(acc, m, r, t, lo, hi) \\\n"
                "    kn_rq4i(acc, m, KN_DUP4I(r), KN_DUP4I(t), lo, hi)\n"
                "#define KN_RQ4IV(acc, m, r, t, lo, hi) kn_rq4i(acc, m, r, t, lo, hi)\n"
                "#define KN_RQ4IVN(acc, m, r, tn, lo, hi) kn_rq4i(acc, m, r, -(tn), lo, hi)\n"
                "#define KN_RQ4BVN(p, acc, m, r, tn, lo, hi) KN_RQ4BV(p, acc, m, r, -(tn), lo, "
                "hi)\n"
                "#define KN_RQ4B(p, acc, m, r, t, lo, hi) \\\n"
                "    do { \\\n"
                "        for (int kn_l = 0; kn_l < 4; kn_l++) { \\\n"
                "            int32_t kn_h = (int32_t)(((int64_t)(acc)[kn_l] * (m)[kn_l]) >> 32); "
                "\\\n"
                "            kn_h = (int32_t)((uint32_t)kn_h + (uint32_t)(r)) >> ((t) & 31); \\\n"
                "            kn_h = kn_h < (lo) ? (lo) : kn_h > (hi) ? (hi) : kn_h; \\\n"
                "            ((unsigned char *)(void *)(p))[kn_l] = (unsigned char)kn_h; \\\n"
                "        } \\\n"
                "    } while (0)\n"
                "#define KN_RQ4BV(p, acc, m, r, t, lo, hi) \\\n"
                "    do { \\\n"
                "        for (int kn_l = 0; kn_l < 4; kn_l++) { \\\n"
                "            int32_t kn_h = (int32_t)(((int64_t)(acc)[kn_l] * (m)[kn_l]) >> 32); "
                "\\\n"
                "            kn_h = (int32_t)((uint32_t)kn_h + (uint32_t)(r)[kn_l]) >> ((t)[kn_l] "
                "& 31); \\\n"
                "            kn_h = kn_h < (lo) ? (lo) : kn_h > (hi) ? (hi) : kn_h; \\\n"
                "            ((unsigned char *)(void *)(p))[kn_l] = (unsigned char)kn_h; \\\n"
                "        } \\\n"
                "    } while (0)\n"
                "#define KN_DQ4FU(d, p, z, s) \\\n"
                "    do { \\\n"
                "        for (int kn_l = 0; kn_l < 4; kn_l++) \\\n"
                "            ((float *)(void *)(d))[kn_l] = \\\n"
                "                (float)((int32_t)((const uint8_t *)(const void *)(p))[kn_l] - "
                "(z)) * (s); \\\n"
                "    } while (0)\n"
                "#define KN_DQ4FS(d, p, z, s) \\\n"
                "    do { \\\n"
                "        for (int kn_l = 0; kn_l < 4; kn_l++) \\\n"
                "            ((float *)(void *)(d))[kn_l] = \\\n"
                "                (float)((int32_t)((const int8_t *)(const void *)(p))[kn_l] - (z)) "
                "* (s); \\\n"
                "    } while (0)\n"
                "#define KN_GW4(d, p0, p1, p2, p3, s, c) \\\n"
                "    do { \\\n"
                "        for (int kn_l = 0; kn_l < 4; kn_l++) { \\\n"
                "            uint32_t kn_w = (uint32_t)((const uint8_t *)(const void *)(p0))[kn_l "
                "* (s)] | \\\n"
                "                (uint32_t)((const uint8_t *)(const void *)(p1))[kn_l * (s)] << 8 "
                "| \\\n"
                "                (uint32_t)((const uint8_t *)(const void *)(p2))[kn_l * (s)] << 16 "
                "| \\\n"
                "                (uint32_t)((const uint8_t *)(const void *)(p3))[kn_l * (s)] << "
                "24; \\\n"
                "            kn_w ^= (uint32_t)(c); \\\n"
                "            memcpy((int32_t *)(void *)(d) + kn_l, &kn_w, 4); \\\n"
                "        } \\\n"
                "    } while (0)\n"
                "#endif\n",
                f);
        }
        for (const char *c = vmath_macros; *c; c++) /* '@': the lanes */
            if (*c == '@')
                fprintf(f, "%d", L);
            else
                fputc(*c, f);
    }
    fprintf(f, "#endif\n");
}

/* ---- OpenCL: the same macros over the built-in vector types ---- */

void kn_cprint_ocl_vectors(const kn_cprint *E, FILE *f) {
    if (E->vec_widths)
        fputs("#define KN_CMP_lt(x, y) ((x) < (y))\n#define KN_CMP_le(x, y) ((x) <= (y))\n"
              "#define KN_CMP_gt(x, y) ((x) > (y))\n#define KN_CMP_ge(x, y) ((x) >= (y))\n"
              "#define KN_CMP_eq(x, y) ((x) == (y))\n#define KN_CMP_ne(x, y) ((x) != (y))\n",
              f);
    for (int k = 1; k <= 4; k++) {
        if (!(E->vec_widths & (1u << k))) continue;
        int L = 1 << k;
        fprintf(f,
                "typedef float%d kn_v%df;\n"
                "#define KN_LD%dF(p) vload%d(0, p)\n"
                "#define KN_ST%dF(p, v) vstore%d(v, 0, p)\n"
                "#define KN_SPLAT%dF(x) ((float%d)(x))\n"
                "#define KN_SEL%dF(m, a, b) select(b, a, m)\n"
                "#define KN_MIN%dF(a, b) select(b, a, ((a) != (a)) | ((a) < (b)))\n"
                "#define KN_MAX%dF(a, b) select(b, a, ((a) != (a)) | ((a) > (b)))\n"
                "#define KN_ABS%dF(a) fabs(a)\n"
                "#define KN_FMA%dF(a, b, c) fma(a, b, c)\n"
                "#define KN_FMA%dFS(s, b, c) fma((float%d)(s), b, c)\n"
                "#define KN_SELC%dF(x, op, y, a, b) select(b, a, KN_CMP_##op(x, y))\n"
                "#define KN_FLOOR%dF(a) floor(a)\n"
                "#define KN_LDEXP%dF(a, n) ldexp(a, convert_int%d(n))\n",
                L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L);
    }
}

void kn_cprint_init(kn_cprint *P, const kn_kprog *p, FILE *f, kn_dialect d) {
    memset(P, 0, sizeof *P);
    P->p = p;
    P->f = f;
    P->dialect = d;
}
