/* C99 text from kernel IR. Each kernel becomes a static function taking the buffers
 * it touches; NAME_run computes buffer addresses (arena offsets from the memory
 * plan) and calls the kernels in order. Helpers (f16 conversions, NaN-propagating
 * min/max, division without undefined behaviour) are emitted only when used.
 * The expression printer is the part the OpenCL emitter will share. */
#include "codegen/c/emit_c.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* H_F16/H_BF16: loads (kn_h2f, kn_b2f); H_F16_ST/H_BF16_ST: stores (kn_f2h, kn_f2b) */
enum {
    H_F16 = 1,
    H_BF16 = 2,
    H_MINMAX = 4,
    H_IDIV = 8,
    H_SHIFT = 16,
    H_F16_ST = 32,
    H_BF16_ST = 64
};

typedef struct emitter {
    const kn_kprog *p;
    const kn_c_options *opt;
    FILE *f;
    unsigned helpers;            /* H_* used */
    unsigned char *minmax_types; /* per dtype: bit 1 min/max, bit 2 div/mod, bit 4 shifts */
} emitter;

static const char *ctype(kn_dtype t) {
    switch (t) {
    case KN_F32: return "float";
    case KN_F64: return "double";
    case KN_I8: return "int8_t";
    case KN_U8: return "uint8_t";
    case KN_I16: return "int16_t";
    case KN_U16: return "uint16_t";
    case KN_I32: return "int32_t";
    case KN_U32: return "uint32_t";
    case KN_I64: return "int64_t";
    case KN_U64: return "uint64_t";
    case KN_BOOL: return "uint8_t";
    case KN_F16:
    case KN_BF16: return "uint16_t";
    default: return "void";
    }
}

/* The unsigned type of the same width (unsigned types map to themselves). */
static const char *unsigned_of(kn_dtype t) {
    switch (kn_dtype_get(t)->size) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    default: return "uint64_t";
    }
}

static bool is_float(kn_dtype t) {
    return t == KN_F32 || t == KN_F64;
}

/* A C literal of value x->f / x->i in dtype t. */
static void print_const(FILE *f, kn_dtype t, double v, int64_t i) {
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
            fprintf(f, "(-INT64_C(9223372036854775807) - 1)");
        else if (i > -2147483647 && i < 2147483647)
            fprintf(f, "%lld", (long long)i);
        else
            fprintf(f, "INT64_C(%lld)", (long long)i);
        return;
    case KN_U64: fprintf(f, "UINT64_C(%llu)", (unsigned long long)i); return;
    case KN_U32: fprintf(f, "%lluu", (unsigned long long)(uint32_t)i); return;
    case KN_I32:
        if (i == INT32_MIN)
            fprintf(f, "(-2147483647 - 1)");
        else
            fprintf(f, "%lld", (long long)i);
        return;
    default: fprintf(f, "((%s)%lld)", ctype(t), (long long)i); return;
    }
}

static const char *math_fn(kn_kx_op op) {
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
    case KX_ROUND: return "nearbyint";
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

static void expr(emitter *E, const kn_kx *x);

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
    E->minmax_types[x->dtype] |= (unsigned char)bit;
    fprintf(E->f, "kn_%s_%s(", fn, kn_dtype_name(x->dtype));
    expr(E, x->a[0]);
    fprintf(E->f, ", ");
    expr(E, x->a[1]);
    fputc(')', E->f);
}

static void expr(emitter *E, const kn_kx *x) {
    FILE *f = E->f;
    kn_dtype t = x->dtype;
    switch (x->op) {
    case KX_CONST: print_const(f, t, x->f, x->i); return;
    case KX_VAR: fprintf(f, "v%d", x->var); return;
    case KX_LOAD:
        if (x->buf->dtype == KN_F16 || x->buf->dtype == KN_BF16) {
            E->helpers |= x->buf->dtype == KN_F16 ? H_F16 : H_BF16;
            fprintf(f, "%s(", x->buf->dtype == KN_F16 ? "kn_h2f" : "kn_b2f");
        }
        fprintf(f, "%s[", x->buf->name);
        expr(E, x->a[0]);
        fputc(']', f);
        if (x->buf->dtype == KN_F16 || x->buf->dtype == KN_BF16) fputc(')', f);
        return;
    case KX_CAST:
        if (t == KN_BOOL) {
            fprintf(f, "((");
            expr(E, x->a[0]);
            fprintf(f, ") != 0)");
        } else {
            fprintf(f, "((%s)(", ctype(t));
            expr(E, x->a[0]);
            fprintf(f, "))");
        }
        return;
    case KX_SELECT:
        fputc('(', f);
        expr(E, x->a[0]);
        fprintf(f, " ? ");
        expr(E, x->a[1]);
        fprintf(f, " : ");
        expr(E, x->a[2]);
        fputc(')', f);
        return;
    case KX_FMA: /* a*b + c; the compiler may contract it */
        fprintf(f, "(");
        expr(E, x->a[0]);
        fprintf(f, " * ");
        expr(E, x->a[1]);
        fprintf(f, " + ");
        expr(E, x->a[2]);
        fputc(')', f);
        return;
    case KX_NEG:
        if (wraps(x)) {
            fprintf(f, "((%s)(0u - (%s)", ctype(t), t == KN_I64 ? "uint64_t" : "uint32_t");
            expr(E, x->a[0]);
            fprintf(f, "))");
            return;
        }
        /* fall through */
    case KX_BNOT:
    case KX_NOT:
        fprintf(f, narrow(t) && x->op != KX_NOT ? "((%s)(%s" : "(%.0s%s", ctype(t),
                x->op == KX_NEG    ? "-"
                : x->op == KX_BNOT ? "~"
                                   : "!");
        expr(E, x->a[0]);
        fprintf(f, narrow(t) && x->op != KX_NOT ? "))" : ")");
        return;
    case KX_ABS:
        if (is_float(t)) {
            fprintf(f, "fabs%s(", t == KN_F32 ? "f" : "");
            expr(E, x->a[0]);
            fputc(')', f);
        } else {
            helper_call(E, "abs", &(kn_kx){.op = KX_ABS, .dtype = t, .a = {x->a[0], x->a[0]}},
                        F_ABS);
        }
        return;
    case KX_ISNAN:
    case KX_ISINF:
        fprintf(f, "(%s(", x->op == KX_ISNAN ? "isnan" : "isinf"); /* nonzero, not 1 */
        expr(E, x->a[0]);
        fprintf(f, ") != 0)");
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
        helper_call(E, x->op == KX_SHL ? "shl" : "shr", x, x->op == KX_SHL ? F_SHL : F_SHR);
        return;
    default: break;
    }
    const char *fn = math_fn(x->op == KX_MOD ? KX_FMOD : x->op);
    if (fn) {
        bool fl = is_float(t);
        if (!fl) fprintf(f, "((%s)", ctype(t));
        fprintf(f, "%s%s(", fn, t == KN_F32 ? "f" : "");
        for (int i = 0; i < 2 && x->a[i]; i++) {
            if (i) fprintf(f, ", ");
            if (!fl) fprintf(f, "(double)");
            expr(E, x->a[i]);
        }
        fprintf(f, fl ? ")" : "))");
        return;
    }
    const char *sym = bin_sym(x->op);
    KN_ASSERT(sym);
    if (wraps(x)) { /* data arithmetic on i32/i64 wraps, as the interpreter does */
        const char *u = t == KN_I64 ? "uint64_t" : "uint32_t";
        fprintf(f, "((%s)((%s)", ctype(t), u);
        expr(E, x->a[0]);
        fprintf(f, " %s (%s)", sym, u);
        expr(E, x->a[1]);
        fprintf(f, "))");
        return;
    }
    bool wrap = narrow(t) && !(x->op >= KX_LT && x->op <= KX_LOR);
    if (wrap) fprintf(f, "((%s)", ctype(t));
    fputc('(', f);
    expr(E, x->a[0]);
    fprintf(f, " %s ", sym);
    expr(E, x->a[1]);
    fputc(')', f);
    if (wrap) fputc(')', f);
}

static void stmt(emitter *E, const kn_ks *s, int ind) {
    FILE *f = E->f;
    switch (s->kind) {
    case KS_BLOCK:
        for (int i = 0; i < s->n; i++) stmt(E, s->body[i], ind);
        return;
    case KS_FOR:
        fprintf(f, "%*sfor (int64_t v%d = 0; v%d < ", ind, "", s->var, s->var);
        if (s->ext)
            expr(E, s->ext);
        else
            fprintf(f, "%lld", (long long)s->extent);
        fprintf(f, "; v%d++) {\n", s->var);
        stmt(E, s->body[0], ind + 4);
        fprintf(f, "%*s}\n", ind, "");
        return;
    case KS_STORE: {
        kn_dtype bt = s->buf->dtype;
        fprintf(f, "%*s%s[", ind, "", s->buf->name);
        expr(E, s->index);
        fprintf(f, "] = ");
        if (bt == KN_F16 || bt == KN_BF16) {
            E->helpers |= bt == KN_F16 ? H_F16_ST : H_BF16_ST;
            fprintf(f, "%s(", bt == KN_F16 ? "kn_f2h" : "kn_f2b");
            expr(E, s->value);
            fputc(')', f);
        } else {
            expr(E, s->value);
        }
        fprintf(f, ";\n");
        return;
    }
    case KS_DECL:
    case KS_SET:
        fprintf(f, "%*s", ind, "");
        if (s->kind == KS_DECL) fprintf(f, "%s ", ctype(s->dtype));
        fprintf(f, "v%d = ", s->var);
        expr(E, s->value);
        fprintf(f, ";\n");
        return;
    case KS_IF:
    case KS_WHILE:
        /* `if ((a == b))` trips clang's -Wparentheses-equality: print `if (!!(a == b))` */
        fprintf(f, "%*s%s (%s", ind, "", s->kind == KS_IF ? "if" : "while",
                s->cond->op == KX_EQ ? "!!" : "");
        expr(E, s->cond);
        fprintf(f, ") {\n");
        stmt(E, s->body[0], ind + 4);
        if (s->kind == KS_IF && s->body[1]) {
            fprintf(f, "%*s} else {\n", ind, "");
            stmt(E, s->body[1], ind + 4);
        }
        fprintf(f, "%*s}\n", ind, "");
        return;
    case KS_COPY:
        fprintf(f, "%*smemmove(%s + ", ind, "", s->buf->name);
        expr(E, s->index);
        fprintf(f, ", %s + ", s->src->name);
        expr(E, s->src_index);
        fprintf(f, ", (size_t)(");
        expr(E, s->count);
        fprintf(f, ") * sizeof(%s));\n", ctype(s->buf->dtype));
        return;
    }
}

/* ---- buffers each kernel touches ---- */

static void mark_x(const kn_kx *x, unsigned char *r) {
    if (!x) return;
    if (x->op == KX_LOAD) r[x->buf->id] |= 1;
    for (int i = 0; i < 3; i++) mark_x(x->a[i], r);
}

static void mark_s(const kn_ks *s, unsigned char *r) {
    if (!s) return;
    if (s->kind == KS_STORE || s->kind == KS_COPY) r[s->buf->id] |= 2;
    if (s->kind == KS_COPY) r[s->src->id] |= 1;
    mark_x(s->index, r);
    mark_x(s->value, r);
    mark_x(s->cond, r);
    mark_x(s->src_index, r);
    mark_x(s->count, r);
    mark_x(s->ext, r);
    for (int i = 0; i < s->n; i++) mark_s(s->body[i], r);
}

/* ---- helpers ---- */

static const char *f16_helpers[2] = {
    "static float kn_h2f(uint16_t h) {\n"
    "    int e = (h >> 10) & 31, m = h & 1023;\n"
    "    float v = e == 0 ? ldexpf((float)m, -24)\n"
    "              : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);\n"
    "    return (h & 0x8000) ? -v : v;\n"
    "}\n",
    "static uint16_t kn_f2h(float f) {\n"
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

static void emit_helpers(emitter *E, FILE *f) {
    if (E->helpers & H_F16) fputs(f16_helpers[0], f);
    if (E->helpers & H_F16_ST) fputs(f16_helpers[1], f);
    if (E->helpers & H_BF16) fputs(bf16_helpers[0], f);
    if (E->helpers & H_BF16_ST) fputs(bf16_helpers[1], f);
    for (int t = 1; t < KN_DTYPE_MAX; t++) {
        unsigned m = E->minmax_types[t];
        if (!m) continue;
        const char *c = ctype((kn_dtype)t), *n = kn_dtype_name(t);
        bool fl = is_float((kn_dtype)t), sg = kn_dtype_get(t)->is_signed;
        if (fl) { /* NaN-propagating, as ONNX Min/Max and numpy */
            if (m & F_MIN)
                fprintf(f,
                        "static %s kn_min_%s(%s a, %s b) { return a != a ? a : b != b ? b : a < b "
                        "? a : b; }\n",
                        c, n, c, c);
            if (m & F_MAX)
                fprintf(f,
                        "static %s kn_max_%s(%s a, %s b) { return a != a ? a : b != b ? b : a > b "
                        "? a : b; }\n",
                        c, n, c, c);
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
                        c, n, c, c, c, unsigned_of((kn_dtype)t), unsigned_of((kn_dtype)t));
        }
        /* no undefined behaviour: x/0 = 0, x%0 = 0, MIN/-1 wraps */
        const char *u = ctype(t == KN_I64 ? KN_U64 : t == KN_I32 ? KN_U32 : (kn_dtype)t);
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

/* ---- weights ---- */

static size_t weight_bytes(const kn_kbuf *b) {
    return (size_t)b->numel * kn_dtype_get(b->dtype)->size;
}

static void emit_weight_array(FILE *f, const kn_kbuf *b, const char *section, const char *prefix) {
    const kn_tensor *t = b->data;
    int64_t n = b->numel;
    if (section) fprintf(f, "KN_WEIGHTS_SECTION ");
    /* file-scope name N_wK: kernels take the array as parameter wK (no shadowing) */
    fprintf(f, "static const %s %s_%s[%lld] = {", ctype(b->dtype), prefix, b->name,
            (long long)(n ? n : 1));
    if (!n) fprintf(f, "0");
    for (int64_t i = 0; i < n; i++) {
        fprintf(f, "%s", i % 8 ? " " : "\n    ");
        kn_dtype dt = b->dtype;
        if (dt == KN_F16 || dt == KN_BF16 || dt == KN_BOOL)
            fprintf(f, "%u",
                    (unsigned)(dt == KN_BOOL ? ((const uint8_t *)t->data)[i]
                                             : ((const uint16_t *)t->data)[i]));
        else if (is_float(dt))
            print_const(f, dt, kn_load_f64(t->data, dt, (size_t)i), 0);
        else if (dt == KN_U64)
            fprintf(f, "UINT64_C(%llu)", (unsigned long long)((const uint64_t *)t->data)[i]);
        else
            print_const(f, dt == KN_I64 ? KN_I64 : KN_I32, 0, kn_load_i64(t->data, dt, (size_t)i));
        fputc(',', f);
    }
    fprintf(f, "\n};\n");
}

/* ---- the files ---- */

static void emit_param(FILE *f, const kn_kbuf *b, bool writes) {
    fprintf(f, "%s%s *%s", writes ? "" : "const ", ctype(b->dtype), b->name);
}

kn_status kn_emit_c(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt, FILE *h, FILE *c,
                    FILE *weights) {
    (void)cx;
    const char *N = p->name;
    kn_c_options none = {0};
    if (!opt) opt = &none;
    /* weights layout (weights-file mode): 64-byte aligned offsets in buffer order */
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff), wsize = 0;
    KN_ASSERT(woff);
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i]->kind == KB_CONST) {
            woff[i] = wsize;
            wsize += (weight_bytes(p->bufs[i]) + 63) & ~(size_t)63;
        }

    /* header */
    fprintf(h, "/* Generated by kiln from model '%s'. Do not edit. */\n", N);
    fprintf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n", N, N);
    fprintf(h, "/* Bytes of scratch memory %s_run needs, and its required alignment. */\n", N);
    fprintf(h, "#define %s_ARENA_SIZE %zu\n#define %s_ARENA_ALIGN %d\n", N, p->arena_size, N,
            KN_ARENA_ALIGN);
    size_t wraw = 0; /* bytes of weight data, without alignment padding */
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i]->kind == KB_CONST) wraw += weight_bytes(p->bufs[i]);
    fprintf(h, "/* Bytes of weights: in %s.c as static const arrays, or in %s.weights. */\n", N, N);
    fprintf(h, "#define %s_WEIGHTS_SIZE %zu\n", N, opt->weights_file ? wsize : wraw);
    fprintf(h, "\n#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", N, p->nin, N, p->nout);
    for (int io = 0; io < 2; io++) {
        int cnt = io ? p->nout : p->nin;
        for (int i = 0; i < cnt; i++) {
            const kn_kbuf *b = io ? p->outputs[i] : p->inputs[i];
            const char *IO = io ? "OUTPUT" : "INPUT";
            fprintf(h, "#define %s_%s_%d_NAME \"", N, IO, i);
            for (const char *s = b->onnx; *s; s++)
                fprintf(h, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
            fprintf(h, "\"\n#define %s_%s_%d_DTYPE \"%s\"\n", N, IO, i, kn_dtype_name(b->dtype));
            fprintf(h, "#define %s_%s_%d_RANK %d\n#define %s_%s_%d_DIMS {", N, IO, i, b->rank, N,
                    IO, i);
            for (int d = 0; d < b->rank; d++)
                fprintf(h, "%s%lld", d ? ", " : "", (long long)b->dims[d]);
            fprintf(h, "%s}\n#define %s_%s_%d_SIZE %lld\n", b->rank ? "" : "1", N, IO, i,
                    (long long)b->numel);
        }
    }
    fprintf(h,
            "\n/* Runs the model: one pointer per input, then one per output (element types\n"
            " * as the _DTYPE macros say; f16, bf16 as uint16_t bit patterns, bool as uint8_t),\n");
    if (opt->weights_file)
        fprintf(h, " * the contents of %s.weights (%s_WEIGHTS_SIZE bytes, 64-byte aligned),\n", N,
                N);
    fprintf(h,
            " * and arena: %s_ARENA_SIZE bytes aligned to %s_ARENA_ALIGN, owned by the\n"
            " * caller, used only during the call. Reentrant: no global state, so threads\n"
            " * may run at once with separate arenas. Returns 0, or 1 if the arena is\n"
            " * misaligned. */\nint %s_run(",
            N, N, N);
    for (int i = 0; i < p->nin; i++) {
        emit_param(h, p->inputs[i], false);
        fprintf(h, ", ");
    }
    for (int i = 0; i < p->nout; i++) {
        emit_param(h, p->outputs[i], true);
        fprintf(h, ", ");
    }
    fprintf(h, "%svoid *arena);\n", opt->weights_file ? "const void *weights, " : "");
    fprintf(h,
            "/* The same with arrays of pointers, for generic callers (weights may be NULL\n"
            " * unless the model was compiled with --weights-file). */\n"
            "int %s_run_array(const void *const *inputs, void *const *outputs, "
            "const void *weights, void *arena);\n\n#endif\n",
            N);

    if (!c) { /* header only: the code comes from another backend (an object file) */
        free(woff);
        return KN_OK;
    }
    /* source: helpers are known only after printing the kernels, so kernels go to a
     * buffer first */
    char *kbuf = NULL;
    size_t klen = 0;
    FILE *k = open_memstream(&kbuf, &klen);
    KN_ASSERT(k);
    emitter E = {p, opt, k, 0, calloc(KN_DTYPE_MAX, 1)};
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(E.minmax_types && use);
    for (int ki = 0; ki < p->nkernels; ki++) {
        const kn_kernel *kr = p->kernels[ki];
        memset(use, 0, (size_t)p->nbufs);
        mark_s(kr->body, use);
        fprintf(k, "\n/* %s */\nstatic void %s_k%d(", kr->name, N, ki);
        int np = 0;
        for (int i = 0; i < p->nbufs; i++)
            if (use[i]) {
                if (np++) fprintf(k, ", ");
                emit_param(k, p->bufs[i], use[i] & 2);
            }
        fprintf(k, "%s) {\n", np ? "" : "void");
        stmt(&E, kr->body, 4);
        fprintf(k, "}\n");
    }
    /* the entry point */
    fprintf(k, "\nint %s_run(", N);
    for (int i = 0; i < p->nin; i++) {
        emit_param(k, p->inputs[i], false);
        fprintf(k, ", ");
    }
    for (int i = 0; i < p->nout; i++) {
        emit_param(k, p->outputs[i], true);
        fprintf(k, ", ");
    }
    fprintf(k, "%svoid *arena) {\n", opt->weights_file ? "const void *weights, " : "");
    fprintf(k, "    unsigned char *a = (unsigned char *)arena;\n");
    fprintf(k, "    if ((uintptr_t)arena %% %d != 0) return 1;\n", KN_ARENA_ALIGN);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (b->kind == KB_TEMP || b->kind == KB_SCRATCH) {
            const kn_kbuf *r = b;
            while (r->alias) r = r->alias;
            fprintf(k, "    %s *%s = (%s *)(void *)(a + %zu);\n", ctype(b->dtype), b->name,
                    ctype(b->dtype), r->offset);
        } else if (b->kind == KB_CONST && opt->weights_file && b->first >= 0) {
            fprintf(k,
                    "    const %s *%s = (const %s *)(const void *)((const unsigned char *)weights "
                    "+ %zu);\n",
                    ctype(b->dtype), b->name, ctype(b->dtype), woff[i]);
        }
    }
    fprintf(k, "    (void)a;\n");
    for (int i = 0; i < p->nbufs; i++) { /* unread: EyeLike's input, an empty output */
        const kn_kbuf *b = p->bufs[i];
        if ((b->kind == KB_INPUT || b->kind == KB_OUTPUT) && b->first < 0)
            fprintf(k, "    (void)%s;\n", b->name);
    }
    for (int ki = 0; ki < p->nkernels; ki++) {
        memset(use, 0, (size_t)p->nbufs);
        mark_s(p->kernels[ki]->body, use);
        fprintf(k, "    %s_k%d(", N, ki);
        int np = 0;
        for (int i = 0; i < p->nbufs; i++)
            if (use[i])
                fprintf(k, "%s%s%s%s", np++ ? ", " : "",
                        p->bufs[i]->kind == KB_CONST && !opt->weights_file ? N : "",
                        p->bufs[i]->kind == KB_CONST && !opt->weights_file ? "_" : "",
                        p->bufs[i]->name);
        fprintf(k, ");\n");
    }
    fprintf(k,
            "    return 0;\n}\n\nint %s_run_array(const void *const *inputs, void *const *outputs, "
            "const void *weights, void *arena) {\n",
            N);
    if (!opt->weights_file) fprintf(k, "    (void)weights;\n");
    if (!p->nin) fprintf(k, "    (void)inputs;\n");
    fprintf(k, "    return %s_run(", N);
    for (int i = 0; i < p->nin; i++)
        fprintf(k, "(const %s *)inputs[%d], ", ctype(p->inputs[i]->dtype), i);
    for (int i = 0; i < p->nout; i++)
        fprintf(k, "(%s *)outputs[%d], ", ctype(p->outputs[i]->dtype), i);
    fprintf(k, "%sarena);\n}\n", opt->weights_file ? "weights, " : "");
    fclose(k);

    fprintf(c,
            "/* Generated by kiln from model '%s'. Do not edit.\n * Kernels in execution order, "
            "then %s_run. C99; no allocation, no mutable globals. */\n",
            N, N);
    fprintf(c,
            "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
            "#include \"%s.h\"\n\n",
            N);
    if (opt->weights_section)
        fprintf(
            c,
            "#if defined(__GNUC__)\n#define KN_WEIGHTS_SECTION __attribute__((section(\"%s\")))\n"
            "#else\n#define KN_WEIGHTS_SECTION\n#endif\n",
            opt->weights_section);
    if (!opt->weights_file)
        for (int i = 0; i < p->nbufs; i++)
            if (p->bufs[i]->kind == KB_CONST && p->bufs[i]->first >= 0) /* skip unread */
                emit_weight_array(c, p->bufs[i], opt->weights_section, N);
    if (opt->weights_file && weights) {
        static const unsigned char zero[64];
        size_t at = 0;
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if (b->kind != KB_CONST) continue;
            fwrite(zero, 1, woff[i] - at, weights);
            fwrite(b->data->data, 1, weight_bytes(b), weights);
            at = woff[i] + weight_bytes(b);
        }
        fwrite(zero, 1, wsize - at, weights);
    }
    emit_helpers(&E, c);
    fwrite(kbuf, 1, klen, c);
    free(kbuf);
    free(use);
    free(E.minmax_types);
    free(woff);
    return KN_OK;
}

static FILE *open_tmp(kn_ctx *cx, const char *dir, const char *N, const char *ext, char *path,
                      size_t cap) {
    snprintf(path, cap, "%s/.%s%s.tmp%ld", dir, N, ext, (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) kn_diag(cx, NULL, KN_EIO, "cannot write in '%s': %s", dir, strerror(errno));
    return f;
}

kn_status kn_emit_c_files(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt, const char *dir) {
    static const char *ext[3] = {".h", ".c", ".weights"};
    char tmp[3][4096], final[3][4096];
    FILE *f[3] = {0};
    int nf = opt && opt->header_only ? 1 : opt && opt->weights_file ? 3 : 2;
    kn_status st = KN_OK;
    for (int i = 0; i < nf && !st; i++) {
        snprintf(final[i], sizeof final[i], "%s/%s%s", dir, p->name, ext[i]);
        if (!(f[i] = open_tmp(cx, dir, p->name, ext[i], tmp[i], sizeof tmp[i]))) st = cx->status;
    }
    if (!st) st = kn_emit_c(cx, p, opt, f[0], f[1], f[2]);
    for (int i = 0; i < nf; i++)
        if (f[i] && fclose(f[i]) != 0 && !st)
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", final[i]);
    for (int i = 0; i < nf && !st; i++)
        if (rename(tmp[i], final[i]) != 0)
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", final[i]);
    if (st)
        for (int i = 0; i < nf; i++)
            if (f[i]) remove(tmp[i]);
    return st;
}
