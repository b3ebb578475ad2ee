/* Kernel IR -> LLVM IR with the LLVM C API.
 *
 * Each kernel becomes an internal function taking one pointer per buffer it touches
 * (the same split as the C emitter); NAME_run computes arena addresses from the
 * memory plan and calls them. Scalars (loop indices, locals) are allocas in the
 * entry block, promoted to registers by the optimizer. Semantics follow the C
 * emitter exactly: integer x/0 = 0 and MIN/-1 wraps (the divisor is made safe before
 * the division, which LLVM would otherwise treat as undefined), shifts past the
 * width give 0, Min/Max propagate NaN, signed arithmetic wraps, f16/bf16 are stored
 * as bits and computed in f32. */
#include "codegen/llvm/llvm_impl.h"
#include "ir/regex.h"
#include "runtime/kn_pool.h"
#include "targets/target.h"

#include <locale.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct emit {
    kn_ctx *cx;
    const kn_kprog *p;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn;            /* function being built */
    LLVMValueRef *vars;         /* alloca of each kernel-IR variable (per function) */
    LLVMValueRef *bufs;         /* pointer value of each buffer inside the current function */
    LLVMValueRef *globals;      /* constant global of each KB_CONST buffer */
    const void *const *weights; /* or NULL; else the address of each KB_CONST buffer */
    kn_par_for par_for;         /* or NULL: parallel loops run as plain loops */
    const kn_profile *prof;     /* or NULL: no timing hooks around kernels */
    kn_kprog *release;          /* p, to free weight data once LLVM holds it (a file), or NULL */
    const size_t *blob_off;     /* a file: each weight's offset from blob_symbol (SIZE_MAX: an
                                   LLVM constant), or NULL: all are LLVM constants */
    const char *blob_symbol;
    bool in_task;      /* building a parallel loop's task function */
    LLVMValueRef *kfn; /* the function each kernel calls */
    int *kfn_of;       /* the kernel whose function that is (kernels that are the same
                          up to their buffers share one function) */
    LLVMTypeRef ptr;
    bool jit; /* built for this process (the host's CPU), not for p->target's triple */
    const char *jit_features; /* the JIT's target's LLVM features; NULL: this CPU's (native) */
} emit;

static LLVMTypeRef ty(emit *E, kn_dtype t) {
    switch (t) {
    case KN_F32: return LLVMFloatTypeInContext(E->ctx);
    case KN_F64: return LLVMDoubleTypeInContext(E->ctx);
    case KN_I8:
    case KN_U8:
    case KN_I4: /* one element a byte */
    case KN_U4:
    case KN_F8E4M3FN: /* codes */
    case KN_F8E4M3FNUZ:
    case KN_F8E5M2:
    case KN_F8E5M2FNUZ:
    case KN_BOOL: return LLVMInt8TypeInContext(E->ctx);
    case KN_I16:
    case KN_U16:
    case KN_F16:
    case KN_BF16: return LLVMInt16TypeInContext(E->ctx);
    case KN_I32:
    case KN_U32: return LLVMInt32TypeInContext(E->ctx);
    case KN_STRING: return E->ptr; /* const char * */
    default: return LLVMInt64TypeInContext(E->ctx);
    }
}

/* A vector type of n lanes of t, or t when n is 1. */
static LLVMTypeRef vec(LLVMTypeRef t, int n) {
    return n > 1 ? LLVMVectorType(t, (unsigned)n) : t;
}

/* Lanes of an LLVM value: its vector length, 1 for scalars. */
static unsigned lanes_of(LLVMValueRef v) {
    LLVMTypeRef t = LLVMTypeOf(v);
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
}

/* The type of dtype t with as many lanes as `like` has. */
static LLVMTypeRef ty_like(emit *E, kn_dtype t, LLVMValueRef like) {
    unsigned n = lanes_of(like);
    return n > 1 ? LLVMVectorType(ty(E, t), n) : ty(E, t);
}

/* v broadcast to `lanes` lanes (v itself when scalar lanes are asked or v is a vector). */
static LLVMValueRef splat(emit *E, LLVMValueRef v, int lanes) {
    if (lanes <= 1 || lanes_of(v) > 1) return v;
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx);
    LLVMValueRef one = LLVMBuildInsertElement(E->b, LLVMGetUndef(vt), v, LLVMConstNull(i32), "");
    return LLVMBuildShuffleVector(E->b, one, LLVMGetUndef(vt),
                                  LLVMConstNull(LLVMVectorType(i32, (unsigned)lanes)), "");
}

/* The intrinsic type suffix of v's type: f32, f64, v16f32, i32, v8i32, ... */
static void type_suffix(LLVMValueRef v, char *buf, size_t n) {
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned lanes = lanes_of(v);
    if (lanes > 1) t = LLVMGetElementType(t);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    char e[16];
    if (k == LLVMFloatTypeKind)
        snprintf(e, sizeof e, "f32");
    else if (k == LLVMDoubleTypeKind)
        snprintf(e, sizeof e, "f64");
    else
        snprintf(e, sizeof e, "i%u", LLVMGetIntTypeWidth(t));
    if (lanes > 1)
        snprintf(buf, n, "v%u%s", lanes, e);
    else
        snprintf(buf, n, "%s", e);
}

static bool fl(kn_dtype t) {
    return t == KN_F32 || t == KN_F64;
}

static bool sgn(kn_dtype t) {
    return kn_dtype_get(t)->is_signed;
}

static LLVMValueRef call_fn(emit *E, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n) {
    LLVMTypeRef params[5];
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef ft = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(E->mod, name);
    if (!f) f = LLVMAddFunction(E->mod, name, ft);
    return LLVMBuildCall2(E->b, ft, f, args, (unsigned)n, "");
}

/* llvm.NAME.f32/f64 intrinsic, or the libm function for ops without one. */
static LLVMValueRef math1(emit *E, const char *intr, const char *libm, kn_dtype t,
                          LLVMValueRef *args, int n) {
    char name[96], sfx[32];
    LLVMTypeRef rt = LLVMTypeOf(args[0]);
    if (intr) {
        type_suffix(args[0], sfx, sizeof sfx);
        snprintf(name, sizeof name, "llvm.%s.%s", intr, sfx);
        return call_fn(E, name, rt, args, n);
    }
    snprintf(name, sizeof name, "%s%s", libm, t == KN_F32 ? "f" : "");
    unsigned lanes = lanes_of(args[0]);
    if (lanes == 1) return call_fn(E, name, rt, args, n);
    /* libm has no vector forms: one call per lane (a vectorized tile's epilogue, e.g.
     * Gemm + Tanh; found by tests/diff) */
    LLVMTypeRef st = LLVMGetElementType(rt), i32 = LLVMInt32TypeInContext(E->ctx);
    LLVMValueRef r = LLVMGetUndef(rt);
    for (unsigned l = 0; l < lanes; l++) {
        LLVMValueRef idx = LLVMConstInt(i32, l, 0), sa[3];
        for (int i = 0; i < n; i++)
            sa[i] =
                lanes_of(args[i]) == 1 ? args[i] : LLVMBuildExtractElement(E->b, args[i], idx, "");
        r = LLVMBuildInsertElement(E->b, r, call_fn(E, name, st, sa, n), idx, "");
    }
    return r;
}

static LLVMValueRef cnst(emit *E, kn_dtype t, double f, int64_t i) {
    if (fl(t)) return LLVMConstReal(ty(E, t), f);
    return LLVMConstInt(ty(E, t), (unsigned long long)i, sgn(t));
}

/* Converts v of kernel dtype from to dtype to (C conversion rules). */
static LLVMValueRef convert(emit *E, LLVMValueRef v, kn_dtype from, kn_dtype to) {
    if (from == to) return v;
    LLVMBuilderRef b = E->b;
    LLVMTypeRef tt = ty_like(E, to, v);
    if (to == KN_BOOL) {
        LLVMValueRef nz = fl(from)
                              ? LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "")
                              : LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
        return LLVMBuildZExt(b, nz, tt, "");
    }
    if (fl(from) && fl(to))
        return from == KN_F32 ? LLVMBuildFPExt(b, v, tt, "") : LLVMBuildFPTrunc(b, v, tt, "");
    if (fl(from)) {
        /* saturating (NaN to 0): fpto[su]i and selects, the values of llvm.fpto[su]i.sat,
         * which LLVM 19 lowers lane by lane on x86 (a vcvttss2si and branches per lane,
         * also in loops its vectorizer widens); this becomes vcvttps2dq and compares.
         * fpto[su]i is poison outside (lo - 1, hi + 1); those lanes, and NaN, take the
         * selected constant instead. */
        unsigned n = lanes_of(v);
        int bits = (int)kn_dtype_get(to)->size * 8;
        double top = ldexp(1.0, sgn(to) ? bits - 1 : bits);  /* hi + 1, exact */
        int64_t hi = bits == 64 ? (sgn(to) ? INT64_MAX : -1) /* all ones */
                                : (int64_t)(((uint64_t)1 << (sgn(to) ? bits - 1 : bits)) - 1);
        int64_t lo = sgn(to) ? -hi - 1 : 0;
        LLVMValueRef r = sgn(to) ? LLVMBuildFPToSI(b, v, tt, "") : LLVMBuildFPToUI(b, v, tt, "");
        LLVMValueRef below = LLVMBuildFCmp(
            b, LLVMRealOLE, v, splat(E, cnst(E, from, sgn(to) ? -top - 1 : -1.0, 0), (int)n), "");
        LLVMValueRef above =
            LLVMBuildFCmp(b, LLVMRealOGE, v, splat(E, cnst(E, from, top, 0), (int)n), "");
        r = LLVMBuildSelect(b, below, splat(E, cnst(E, to, 0, lo), (int)n), r, "");
        r = LLVMBuildSelect(b, above, splat(E, cnst(E, to, 0, hi), (int)n), r, "");
        return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), LLVMConstNull(tt), r,
                               "");
    }
    if (fl(to)) return sgn(from) ? LLVMBuildSIToFP(b, v, tt, "") : LLVMBuildUIToFP(b, v, tt, "");
    size_t fs = kn_dtype_get(from)->size, ts = kn_dtype_get(to)->size;
    if (ts == fs) return v;
    if (ts < fs) return LLVMBuildTrunc(b, v, tt, "");
    return sgn(from) ? LLVMBuildSExt(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
}

static LLVMValueRef expr(emit *E, const kn_kx *x);

/* The LLVM type of kernel-IR variable v (a vector for vector locals). */
static LLVMTypeRef var_type(emit *E, int v) {
    return vec(ty(E, E->p->var_dtype[v]), E->p->var_lanes[v]);
}

static LLVMValueRef address(emit *E, const kn_kbuf *buf, LLVMValueRef index) {
    LLVMValueRef idx = index;
    return LLVMBuildGEP2(E->b, ty(E, buf->dtype), E->bufs[buf->id], &idx, 1, "");
}

/* Alignment of an element: its size; string pointers 4 (the smallest pointer size
 * among the targets, so the same IR is right on 32-bit ones). */
static unsigned elem_align(kn_dtype t) {
    return t == KN_STRING ? 4 : (unsigned)kn_dtype_get(t)->size;
}

/* bfloat16 <-> f32 in integer arithmetic, as kn_bf16_to_f32 / kn_f32_to_bf16 (ir/dtype.c)
 * and the C printer do: LLVM's bfloat conversions become libcalls (__truncsfbf2) on
 * targets without native bf16, which the JIT cannot resolve and firmware may not have. */
static LLVMValueRef bf16_to_f32(emit *E, LLVMValueRef v) {
    int n = (int)lanes_of(v);
    LLVMTypeRef i32 = vec(ty(E, KN_I32), n);
    LLVMValueRef x = LLVMBuildShl(E->b, LLVMBuildZExt(E->b, v, i32, ""),
                                  splat(E, LLVMConstInt(ty(E, KN_I32), 16, 0), n), "");
    return LLVMBuildBitCast(E->b, x, vec(ty(E, KN_F32), n), "");
}

static LLVMValueRef f32_to_bf16(emit *E, LLVMValueRef v) {
    LLVMBuilderRef B = E->b;
    int n = (int)lanes_of(v);
    LLVMTypeRef i32 = vec(ty(E, KN_I32), n);
#define K(c) splat(E, LLVMConstInt(ty(E, KN_I32), (c), 0), n)
    LLVMValueRef x = LLVMBuildBitCast(B, v, i32, "");
    LLVMValueRef hi = LLVMBuildLShr(B, x, K(16), "");
    LLVMValueRef rounded = LLVMBuildLShr(
        B, LLVMBuildAdd(B, LLVMBuildAdd(B, x, K(0x7fff), ""), LLVMBuildAnd(B, hi, K(1), ""), ""),
        K(16), "");
    LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, v, v, "");
    LLVMValueRef r = LLVMBuildSelect(B, nan, LLVMBuildOr(B, hi, K(0x40), ""), rounded, "");
#undef K
    return LLVMBuildTrunc(B, r, vec(ty(E, KN_BF16), n), "");
}

/* A strided load (kx_vload_strided) of n lanes with step s: ceil(span / n) loads of n
 * consecutive elements covering the span (n - 1) * s + 1, the last one ending at the
 * span's end (so nothing past it is read), merged lane by lane with shufflevectors
 * (x86 AVX-512 VBMI: vpermt2b for bytes); from s >= n, where no chunk would hold two
 * lanes, one element load a lane. */
static LLVMValueRef load_strided(emit *E, const kn_kx *x) {
    const kn_kbuf *buf = x->buf;
    int n = kx_lanes(x), s = x->stride, span = (n - 1) * s + 1;
    LLVMTypeRef V = vec(ty(E, buf->dtype), n), I32 = LLVMInt32TypeInContext(E->ctx);
    LLVMValueRef base = expr(E, x->a[0]), r = NULL;
    if (s >= n) { /* lanes far apart (a gather: passes/tile.c conv_words_wide): each lane
                     its own element load, where the chunks would read the whole span */
        r = LLVMGetUndef(V);
        for (int k = 0; k < n; k++) {
            LLVMValueRef a =
                k ? LLVMBuildAdd(
                        E->b, base,
                        LLVMConstInt(LLVMTypeOf(base), (unsigned long long)k * (unsigned)s, 1), "")
                  : base;
            LLVMValueRef e = LLVMBuildLoad2(E->b, ty(E, buf->dtype), address(E, buf, a), "");
            LLVMSetAlignment(e, elem_align(buf->dtype));
            r = LLVMBuildInsertElement(E->b, r, e, LLVMConstInt(I32, (unsigned)k, 0), "");
        }
        return r;
    }
    int got = 0; /* lanes of r filled: 0 .. got - 1 */
    LLVMValueRef mask[256];
    KN_ASSERT(n <= 128);
    for (int at = 0; got < n; at += n) {
        int from = at + n > span ? span - n : at; /* the chunk's first element */
        LLVMValueRef a = base;
        if (from) a = LLVMBuildAdd(E->b, base, LLVMConstInt(LLVMTypeOf(base), from, 1), "");
        LLVMValueRef c = LLVMBuildLoad2(E->b, V, address(E, buf, a), "");
        LLVMSetAlignment(c, elem_align(buf->dtype));
        int last = got; /* lanes whose element lies in [from, from + n) */
        while (last < n && (int64_t)last * s < from + n) last++;
        for (int k = 0; k < n; k++) {
            int m = k < got ? k : k < last ? n + k * s - from : -1;
            mask[k] = m < 0 ? LLVMGetUndef(I32) : LLVMConstInt(I32, (unsigned)m, 0);
        }
        LLVMValueRef sel = LLVMConstVector(mask, (unsigned)n);
        r = LLVMBuildShuffleVector(E->b, r ? r : LLVMGetUndef(V), c, sel, "");
        got = last;
    }
    return r;
}

static LLVMValueRef load(emit *E, const kn_kx *x) {
    const kn_kbuf *buf = x->buf;
    int n = kx_lanes(x);
    if (x->i == 4) { /* a word load (kx_load_word): i32 at byte alignment; kiln's LLVM
                        targets are little-endian, so its first byte is the low one */
        LLVMValueRef w = LLVMBuildLoad2(E->b, ty(E, KN_I32), address(E, buf, expr(E, x->a[0])), "");
        LLVMSetAlignment(w, 1);
        return w;
    }
    LLVMValueRef v = x->stride > 1 ? load_strided(E, x)
                                   : LLVMBuildLoad2(E->b, vec(ty(E, buf->dtype), n),
                                                    address(E, buf, expr(E, x->a[0])), "");
    if (x->stride <= 1) LLVMSetAlignment(v, elem_align(buf->dtype)); /* elements, not vectors */
    if (buf->dtype == KN_F16)
        v = LLVMBuildFPExt(E->b,
                           LLVMBuildBitCast(E->b, v, vec(LLVMHalfTypeInContext(E->ctx), n), ""),
                           vec(ty(E, KN_F32), n), "");
    else if (buf->dtype == KN_BF16)
        v = bf16_to_f32(E, v);
    return v;
}

/* b == 0 ? 0 : b == -1 (signed) ? 0 - a : a op b, without ever dividing by 0 or -1 */
static LLVMValueRef safe_div(emit *E, kn_kx_op op, kn_dtype t, LLVMValueRef a, LLVMValueRef b) {
    LLVMBuilderRef B = E->b;
    LLVMTypeRef T = ty(E, t);
    LLVMValueRef zero = LLVMConstNull(T), one = LLVMConstInt(T, 1, 0);
    LLVMValueRef isz = LLVMBuildICmp(B, LLVMIntEQ, b, zero, "");
    LLVMValueRef bad = isz;
    LLVMValueRef ism1 = NULL;
    if (sgn(t)) {
        ism1 = LLVMBuildICmp(B, LLVMIntEQ, b, LLVMConstAllOnes(T), "");
        bad = LLVMBuildOr(B, isz, ism1, "");
    }
    LLVMValueRef d = LLVMBuildSelect(B, bad, one, b, "");
    LLVMValueRef q = op == KX_DIV
                         ? (sgn(t) ? LLVMBuildSDiv(B, a, d, "") : LLVMBuildUDiv(B, a, d, ""))
                         : (sgn(t) ? LLVMBuildSRem(B, a, d, "") : LLVMBuildURem(B, a, d, ""));
    if (ism1)
        q = LLVMBuildSelect(B, ism1, op == KX_DIV ? LLVMBuildSub(B, zero, a, "") : zero, q, "");
    return LLVMBuildSelect(B, isz, zero, q, "");
}

static LLVMValueRef minmax(emit *E, bool is_max, kn_dtype t, LLVMValueRef a, LLVMValueRef b) {
    LLVMBuilderRef B = E->b;
    if (fl(t)) { /* a != a ? a : b != b ? b : a < b ? a : b */
        LLVMValueRef pick = LLVMBuildFCmp(B, is_max ? LLVMRealOGT : LLVMRealOLT, a, b, "");
        LLVMValueRef r = LLVMBuildSelect(B, pick, a, b, "");
        r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, b, b, ""), b, r, "");
        return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, a, a, ""), a, r, "");
    }
    LLVMIntPredicate p =
        is_max ? (sgn(t) ? LLVMIntSGT : LLVMIntUGT) : (sgn(t) ? LLVMIntSLT : LLVMIntULT);
    return LLVMBuildSelect(B, LLVMBuildICmp(B, p, a, b, ""), a, b, "");
}

static LLVMValueRef bool_val(emit *E, LLVMValueRef i1) {
    return LLVMBuildZExt(E->b, i1, ty_like(E, KN_BOOL, i1), "");
}

static LLVMValueRef truth(emit *E, LLVMValueRef v, kn_dtype t) {
    return fl(t) ? LLVMBuildFCmp(E->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "")
                 : LLVMBuildICmp(E->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

/* Operand i of x, broadcast to x's lanes. */
static LLVMValueRef operand(emit *E, const kn_kx *x, int i) {
    return splat(E, expr(E, x->a[i]), kx_lanes(x));
}

static LLVMValueRef unary(emit *E, const kn_kx *x) {
    kn_dtype t = x->a[0]->dtype;
    LLVMValueRef a = operand(E, x, 0);
    LLVMBuilderRef B = E->b;
    static const struct {
        kn_kx_op op;
        const char *intr, *libm;
    } fns[] = {
        {KX_SQRT, "sqrt", 0},   {KX_EXP, "exp", 0},         {KX_LOG, "log", 0},
        {KX_SIN, "sin", 0},     {KX_COS, "cos", 0},         {KX_FLOOR, "floor", 0},
        {KX_CEIL, "ceil", 0},   {KX_ROUND, "nearbyint", 0}, {KX_TRUNC, "trunc", 0},
        {KX_TANH, 0, "tanh"},   {KX_ERF, 0, "erf"},         {KX_TAN, 0, "tan"},
        {KX_ASIN, 0, "asin"},   {KX_ACOS, 0, "acos"},       {KX_ATAN, 0, "atan"},
        {KX_SINH, 0, "sinh"},   {KX_COSH, 0, "cosh"},       {KX_ASINH, 0, "asinh"},
        {KX_ACOSH, 0, "acosh"}, {KX_ATANH, 0, "atanh"},
    };
    switch (x->op) {
    case KX_NEG:
        return fl(t) ? LLVMBuildFNeg(B, a, "")
                     : LLVMBuildSub(B, LLVMConstNull(LLVMTypeOf(a)), a, "");
    case KX_ABS:
        if (fl(t)) return math1(E, "fabs", NULL, t, &a, 1);
        if (!sgn(t)) return a;
        return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, LLVMConstNull(LLVMTypeOf(a)), ""),
                               LLVMBuildSub(B, LLVMConstNull(LLVMTypeOf(a)), a, ""), a, "");
    case KX_NOT: return bool_val(E, LLVMBuildNot(B, truth(E, a, t), ""));
    case KX_BNOT: return LLVMBuildNot(B, a, "");
    case KX_ISNAN: return bool_val(E, LLVMBuildFCmp(B, LLVMRealUNO, a, a, ""));
    case KX_ISINF: {
        LLVMValueRef ab = math1(E, "fabs", NULL, t, &a, 1);
        return bool_val(
            E, LLVMBuildFCmp(B, LLVMRealOEQ, ab,
                             splat(E, LLVMConstReal(ty(E, t), INFINITY), (int)lanes_of(ab)), ""));
    }
    default: break;
    }
    if (!fl(t)) { /* integer math through double, as the C emitter does */
        LLVMValueRef d = convert(E, a, t, KN_F64);
        for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
            if (fns[i].op == x->op)
                return convert(E, math1(E, fns[i].intr, fns[i].libm, KN_F64, &d, 1), KN_F64,
                               x->dtype);
    }
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (fns[i].op == x->op) return math1(E, fns[i].intr, fns[i].libm, t, &a, 1);
    KN_ASSERT(!"unhandled unary op");
    return NULL;
}

/* a * 2^n (n an integral float in [-252, 254], as the vmath pass guarantees) by two
 * multiplications with powers of two built in the exponent bits, so that results
 * overflowing to infinity or underflowing to subnormals come out as libm's. */
static bool x86_scalef(const emit *E, kn_dtype t, LLVMValueRef a);

static LLVMValueRef ldexp_(emit *E, kn_dtype t, LLVMValueRef a, LLVMValueRef n) {
    LLVMBuilderRef B = E->b;
    if (x86_scalef(E, t, a)) { /* vscalefps: a * 2^floor(n), one instruction */
        LLVMValueRef args[5] = {a, n, LLVMGetUndef(LLVMTypeOf(a)),
                                LLVMConstInt(LLVMInt16TypeInContext(E->ctx), 0xffff, 0),
                                LLVMConstInt(LLVMInt32TypeInContext(E->ctx), 4, 0)};
        return call_fn(E, "llvm.x86.avx512.mask.scalef.ps.512", LLVMTypeOf(a), args, 5);
    }
    bool f64 = t == KN_F64;
    LLVMTypeRef it = ty_like(E, f64 ? KN_I64 : KN_I32, a);
    unsigned lanes = lanes_of(a);
    LLVMValueRef ni = LLVMBuildFPToSI(B, n, it, "");
    LLVMValueRef one = splat(E, LLVMConstInt(ty(E, f64 ? KN_I64 : KN_I32), 1, 0), (int)lanes);
    LLVMValueRef bias =
        splat(E, LLVMConstInt(ty(E, f64 ? KN_I64 : KN_I32), f64 ? 1023 : 127, 0), (int)lanes);
    LLVMValueRef sh =
        splat(E, LLVMConstInt(ty(E, f64 ? KN_I64 : KN_I32), f64 ? 52 : 23, 0), (int)lanes);
    LLVMValueRef n1 = LLVMBuildAShr(B, ni, one, ""), n2 = LLVMBuildSub(B, ni, n1, "");
    LLVMValueRef p1 = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildAdd(B, n1, bias, ""), sh, ""),
                                       LLVMTypeOf(a), "");
    LLVMValueRef p2 = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildAdd(B, n2, bias, ""), sh, ""),
                                       LLVMTypeOf(a), "");
    return LLVMBuildFMul(B, LLVMBuildFMul(B, a, p1, ""), p2, "");
}

static LLVMValueRef binary(emit *E, const kn_kx *x) {
    kn_dtype t = x->a[0]->dtype;
    LLVMValueRef a = operand(E, x, 0), b = operand(E, x, 1);
    LLVMBuilderRef B = E->b;
    bool f = fl(t), s = sgn(t);
    switch (x->op) {
    case KX_ADD: return f ? LLVMBuildFAdd(B, a, b, "") : LLVMBuildAdd(B, a, b, "");
    case KX_SUB: return f ? LLVMBuildFSub(B, a, b, "") : LLVMBuildSub(B, a, b, "");
    case KX_MUL: return f ? LLVMBuildFMul(B, a, b, "") : LLVMBuildMul(B, a, b, "");
    case KX_DIV:
        if (f) return LLVMBuildFDiv(B, a, b, "");
        return safe_div(E, KX_DIV, t, a, b);
    case KX_MOD:
        if (f) return LLVMBuildFRem(B, a, b, "");
        return safe_div(E, KX_MOD, t, a, b);
    case KX_FMOD:
        if (f) return LLVMBuildFRem(B, a, b, "");
        return safe_div(E, KX_MOD, t, a, b);
    case KX_POW: {
        LLVMValueRef args[2] = {a, b};
        if (f) return math1(E, "pow", NULL, t, args, 2);
        args[0] = convert(E, a, t, KN_F64);
        args[1] = convert(E, b, t, KN_F64);
        return convert(E, math1(E, "pow", NULL, KN_F64, args, 2), KN_F64, x->dtype);
    }
    case KX_MIN: return minmax(E, false, t, a, b);
    case KX_MAX: return minmax(E, true, t, a, b);
    case KX_AND: return LLVMBuildAnd(B, a, b, "");
    case KX_OR: return LLVMBuildOr(B, a, b, "");
    case KX_XOR: return LLVMBuildXor(B, a, b, "");
    case KX_SHL:
    case KX_SHR: {
        if (x->op == KX_SHR && x->i == 1) /* kx_shr_inrange: b < bits, no guard */
            return s ? LLVMBuildAShr(B, a, b, "") : LLVMBuildLShr(B, a, b, "");
        unsigned bits = (unsigned)kn_dtype_get(t)->size * 8;
        LLVMValueRef big = LLVMBuildICmp(
            B, LLVMIntUGE, b, splat(E, LLVMConstInt(ty(E, t), bits, 0), kx_lanes(x)), "");
        LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a)); /* vectors: a's lanes */
        LLVMValueRef sb = LLVMBuildSelect(B, big, zero, b, "");
        LLVMValueRef r = x->op == KX_SHL ? LLVMBuildShl(B, a, sb, "")
                         : s             ? LLVMBuildAShr(B, a, sb, "")
                                         : LLVMBuildLShr(B, a, sb, "");
        return LLVMBuildSelect(B, big, zero, r, "");
    }
    case KX_LAND:
        return bool_val(E, LLVMBuildAnd(B, truth(E, a, t), truth(E, b, x->a[1]->dtype), ""));
    case KX_LOR:
        return bool_val(E, LLVMBuildOr(B, truth(E, a, t), truth(E, b, x->a[1]->dtype), ""));
    case KX_LDEXP: return ldexp_(E, t, a, b);
    default: break;
    }
    /* comparisons: C semantics (ordered, false with NaN; != true with NaN) */
    LLVMRealPredicate rp;
    LLVMIntPredicate ip;
    switch (x->op) {
    case KX_LT: rp = LLVMRealOLT, ip = s ? LLVMIntSLT : LLVMIntULT; break;
    case KX_LE: rp = LLVMRealOLE, ip = s ? LLVMIntSLE : LLVMIntULE; break;
    case KX_GT: rp = LLVMRealOGT, ip = s ? LLVMIntSGT : LLVMIntUGT; break;
    case KX_GE: rp = LLVMRealOGE, ip = s ? LLVMIntSGE : LLVMIntUGE; break;
    case KX_EQ: rp = LLVMRealOEQ, ip = LLVMIntEQ; break;
    case KX_NE: rp = LLVMRealUNE, ip = LLVMIntNE; break;
    default: KN_ASSERT(!"unhandled binary op"); return NULL;
    }
    return bool_val(E, f ? LLVMBuildFCmp(B, rp, a, b, "") : LLVMBuildICmp(B, ip, a, b, ""));
}

/* The target's architecture, for the instructions a KX_DOT expands to. */
typedef enum { ARCH_OTHER, ARCH_X86, ARCH_ARM, ARCH_AARCH64 } arch;

static arch target_arch(const kn_target *t) {
    const char *tr = t ? t->triple : NULL;
    if (!tr) {
#if defined(__x86_64__)
        return ARCH_X86;
#elif defined(__aarch64__)
        return ARCH_AARCH64;
#else
        return ARCH_OTHER;
#endif
    }
    if (!strncmp(tr, "x86_64", 6)) return ARCH_X86;
    if (!strncmp(tr, "thumb", 5) || !strncmp(tr, "arm", 3)) return ARCH_ARM;
    if (!strncmp(tr, "aarch64", 7)) return ARCH_AARCH64;
    return ARCH_OTHER;
}

/* KX_DOT (ir/kir.h) in portable IR: the words as vectors of their parts, widened to
 * i32, multiplied, and the parts of each word added to the accumulator. */
static LLVMValueRef dot_generic(emit *E, int kind, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b,
                                int lanes) {
    LLVMBuilderRef B = E->b;
    int parts = kind == KN_DOT_S16X2 ? 2 : 4;
    LLVMTypeRef pt =
        kind == KN_DOT_S16X2 ? LLVMInt16TypeInContext(E->ctx) : LLVMInt8TypeInContext(E->ctx);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx),
                wide = LLVMVectorType(i32, (unsigned)(lanes * parts));
    LLVMTypeRef nt = LLVMVectorType(pt, (unsigned)(lanes * parts));
    LLVMValueRef pa = LLVMBuildBitCast(B, a, nt, ""), pb = LLVMBuildBitCast(B, b, nt, "");
    pa = kind == KN_DOT_U8S8X4 ? LLVMBuildZExt(B, pa, wide, "") : LLVMBuildSExt(B, pa, wide, "");
    pb = LLVMBuildSExt(B, pb, wide, "");
    LLVMValueRef prod = LLVMBuildMul(B, pa, pb, ""), r = acc;
    LLVMValueRef idx[16];
    for (int k = 0; k < parts; k++) { /* part k of every word (little-endian: low first) */
        for (int l = 0; l < lanes; l++) idx[l] = LLVMConstInt(i32, (unsigned)(l * parts + k), 0);
        LLVMValueRef pk = lanes > 1
                              ? LLVMBuildShuffleVector(B, prod, LLVMGetUndef(wide),
                                                       LLVMConstVector(idx, (unsigned)lanes), "")
                              : LLVMBuildExtractElement(B, prod, idx[0], "");
        r = LLVMBuildAdd(B, r, pk, "");
    }
    return r;
}

/* Whether LLVM feature string f ("+avx2,+fma") enables feature `name`. */
static bool has_feature(const char *f, const char *name) {
    size_t n = strlen(name);
    for (const char *s = strstr(f, name); s; s = strstr(s + 1, name))
        if (s > f && s[-1] == '+' && (s[n] == ',' || !s[n])) return true;
    return false;
}

/* Whether the code may use the x86 instruction of `lanes` lanes needing feature
 * `need` ("avx2", "avx512f", "avx512bw", "avx512vnni"; NULL: SSE2): code for the target trusts
 * the target description (its vector width and dot product chose them); the JIT, which
 * builds for this machine whatever target the program was tiled for, asks the CPU, or
 * the features of the target it was given when that one names them (`kiln tune
 * --target x86-64-avx2` on an AVX-512 host: LLVM cannot select an AVX-512 intrinsic
 * for a machine without it). */
static bool x86_has(const emit *E, const char *need) {
    if (!E->jit || !need) return true;
    if (E->jit_features) /* a JIT for a named target: its features, not this CPU's */
        return has_feature(E->jit_features, need) &&
               (strcmp(need, "avx512vnni") || has_feature(E->jit_features, "avx512vl"));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (!strcmp(need, "avx2")) return __builtin_cpu_supports("avx2");
    if (!strcmp(need, "avx512f")) return __builtin_cpu_supports("avx512f");
    if (!strcmp(need, "avx512bw")) return __builtin_cpu_supports("avx512bw");
    return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

/* Whether KX_LDEXP of f32 vector a may be AVX-512's vscalefps (a * 2^floor(n): ldexp for
 * the integral n it is given, subnormal and overflowing results included): 16 lanes on
 * x86 where the target (or, for the JIT, this CPU) has AVX-512. Else the portable form,
 * two multiplies by powers of two built from n's bits. */
static bool x86_scalef(const emit *E, kn_dtype t, LLVMValueRef a) {
    if (t != KN_F32 || LLVMGetTypeKind(LLVMTypeOf(a)) != LLVMVectorTypeKind || lanes_of(a) != 16 ||
        target_arch(E->jit ? NULL : E->p->target) != ARCH_X86)
        return false;
    if (!E->jit) return E->p->target && E->p->target->vector_bits >= 512;
    return x86_has(E, "avx512f");
}

/* KX_DOT: the target's instruction where it has one for these lanes (the pass chose
 * the kind from the target description), else the portable form. Both wrap. */
static LLVMValueRef dot(emit *E, const kn_kx *x) {
    int lanes = kx_lanes(x), kind = (int)x->i;
    if (kind == KN_DOT_S8X16) { /* acc + the sum of 16 s8 products: MVE selects VMLADAVA.S8 */
        LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx),
                    bt = LLVMVectorType(LLVMInt8TypeInContext(E->ctx), 16),
                    wt = LLVMVectorType(i32, 16);
        LLVMValueRef a =
            LLVMBuildSExt(E->b, LLVMBuildBitCast(E->b, expr(E, x->a[1]), bt, ""), wt, "");
        LLVMValueRef b =
            LLVMBuildSExt(E->b, LLVMBuildBitCast(E->b, expr(E, x->a[2]), bt, ""), wt, "");
        LLVMValueRef prod = LLVMBuildMul(E->b, a, b, "");
        LLVMValueRef sum = call_fn(E, "llvm.vector.reduce.add.v16i32", i32, &prod, 1);
        return LLVMBuildAdd(E->b, expr(E, x->a[0]), sum, "");
    }
    LLVMValueRef acc = splat(E, expr(E, x->a[0]), lanes), a = splat(E, expr(E, x->a[1]), lanes),
                 b = splat(E, expr(E, x->a[2]), lanes);
    arch ar = target_arch(E->jit ? NULL : E->p->target);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx);
    if (kind == KN_DOT_S16X2X) { /* SMLADX; elsewhere b's halves exchanged, then s16x2 */
        if (ar == ARCH_ARM && lanes == 1) {
            LLVMValueRef args[3] = {a, b, acc};
            return call_fn(E, "llvm.arm.smladx", i32, args, 3);
        }
        LLVMValueRef s16 = splat(E, LLVMConstInt(i32, 16, 0), lanes);
        b = LLVMBuildOr(E->b, LLVMBuildLShr(E->b, b, s16, ""), LLVMBuildShl(E->b, b, s16, ""), "");
        kind = KN_DOT_S16X2;
    }
    if (ar == ARCH_X86 && kind == KN_DOT_S16X2 && (lanes == 4 || lanes == 8 || lanes == 16) &&
        x86_has(E, lanes == 4   ? NULL
                   : lanes == 8 ? "avx2"
                                : "avx512bw")) {
        const char *name = lanes == 4   ? "llvm.x86.sse2.pmadd.wd"
                           : lanes == 8 ? "llvm.x86.avx2.pmadd.wd"
                                        : "llvm.x86.avx512.pmaddw.d.512";
        LLVMTypeRef ht = LLVMVectorType(LLVMInt16TypeInContext(E->ctx), (unsigned)(2 * lanes));
        LLVMValueRef args[2] = {LLVMBuildBitCast(E->b, a, ht, ""),
                                LLVMBuildBitCast(E->b, b, ht, "")};
        return LLVMBuildAdd(E->b, acc, call_fn(E, name, LLVMTypeOf(acc), args, 2), "");
    }
    if (ar == ARCH_X86 && kind == KN_DOT_U8S8X4 && (lanes == 4 || lanes == 8 || lanes == 16) &&
        x86_has(E, "avx512vnni")) {
        char name[48];
        snprintf(name, sizeof name, "llvm.x86.avx512.vpdpbusd.%d", lanes * 32);
        LLVMValueRef args[3] = {acc, a, b};
        return call_fn(E, name, LLVMTypeOf(acc), args, 3);
    }
    if (ar == ARCH_ARM && kind == KN_DOT_S16X2 && lanes == 1) {
        LLVMValueRef args[3] = {a, b, acc};
        return call_fn(E, "llvm.arm.smlad", i32, args, 3);
    }
    if (ar == ARCH_AARCH64 && kind == KN_DOT_S8S8X4 && lanes == 4) {
        LLVMTypeRef bt = LLVMVectorType(LLVMInt8TypeInContext(E->ctx), 16);
        LLVMValueRef args[3] = {acc, LLVMBuildBitCast(E->b, a, bt, ""),
                                LLVMBuildBitCast(E->b, b, bt, "")};
        return call_fn(E, "llvm.aarch64.neon.sdot.v4i32.v16i8", LLVMTypeOf(acc), args, 3);
    }
    if (lanes == 1) { /* the generic form on one-lane vectors */
        LLVMTypeRef v1 = LLVMVectorType(i32, 1);
        LLVMValueRef z = LLVMConstNull(i32);
        LLVMValueRef r =
            dot_generic(E, kind, acc, LLVMBuildInsertElement(E->b, LLVMGetUndef(v1), a, z, ""),
                        LLVMBuildInsertElement(E->b, LLVMGetUndef(v1), b, z, ""), 1);
        return r;
    }
    return dot_generic(E, kind, acc, a, b, lanes);
}

/* A signed high multiply, (i32)(((i64)a * (i64)b) >> 32) on vectors of 4, 8 or 16 i32 lanes
 * (kl_requant_hi32's form), on x86 as two products of 64-bit lanes, each of 32-bit
 * operands sign-extended within their lane (the even lanes, then the odd ones shifted
 * down), whose high halves one shuffle interleaves: `vpmuldq` twice and a `vpermt2d`
 * with AVX-512. LLVM's own match of the wide form (MULHS) needs the extensions in the
 * multiply's block; once loop-invariant code motion has hoisted the multiplier's, it
 * widens the whole vector instead (two halves extended, multiplied, shifted, narrowed
 * and joined: about 10 instructions against 5). The same bits: both take bits 32..63
 * of the exact product. NULL where x is not that form. */
static LLVMValueRef mulhi_x86(emit *E, const kn_kx *x) {
    int lanes = kx_lanes(x);
    if (x->op != KX_CAST || x->i == 1 || x->dtype != KN_I32 ||
        (lanes != 4 && lanes != 8 && lanes != 16) ||
        target_arch(E->jit ? NULL : E->p->target) != ARCH_X86)
        return NULL;
    const kn_kx *sh = x->a[0];
    if (sh->op != KX_SHR || sh->dtype != KN_I64 || sh->a[1]->op != KX_CONST || sh->a[1]->i != 32)
        return NULL;
    const kn_kx *m = sh->a[0];
    if (m->op != KX_MUL || m->dtype != KN_I64) return NULL;
    for (int i = 0; i < 2; i++)
        if (m->a[i]->op != KX_CAST || m->a[i]->a[0]->dtype != KN_I32) return NULL;
    LLVMBuilderRef B = E->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx), i64 = LLVMInt64TypeInContext(E->ctx);
    LLVMTypeRef wt = vec(i64, lanes / 2), nt = vec(i32, lanes);
    LLVMValueRef c32 = splat(E, LLVMConstInt(i64, 32, 0), lanes / 2);
    LLVMValueRef even[2], odd[2];
    for (int i = 0; i < 2; i++) {
        LLVMValueRef v = LLVMBuildBitCast(B, splat(E, expr(E, m->a[i]->a[0]), lanes), wt, "");
        even[i] = LLVMBuildAShr(B, LLVMBuildShl(B, v, c32, ""), c32, "");
        odd[i] = LLVMBuildAShr(B, v, c32, "");
    }
    LLVMValueRef pe = LLVMBuildBitCast(B, LLVMBuildMul(B, even[0], even[1], ""), nt, "");
    LLVMValueRef po = LLVMBuildBitCast(B, LLVMBuildMul(B, odd[0], odd[1], ""), nt, "");
    LLVMValueRef idx[16];
    for (int l = 0; l < lanes; l++) /* lane l: the high half of product l / 2 of its parity */
        idx[l] = LLVMConstInt(i32, (unsigned long long)((l & 1 ? lanes : 0) + (l | 1)), 0);
    return LLVMBuildShuffleVector(B, pe, po, LLVMConstVector(idx, (unsigned)lanes), "");
}

/* KX_UNPACK16 (ir/kir.h): SXTB16/UXTB16 on Arm (the odd bytes rotated into place
 * first, which the backend folds into the instruction's ROR #8), elsewhere shifts:
 * each byte moved to the top and shifted back down arithmetically (signed) or masked
 * (unsigned), the high one into the upper half. */
static LLVMValueRef unpack16(emit *E, const kn_kx *x) {
    LLVMValueRef a = expr(E, x->a[0]);
    int lanes = kx_lanes(x), odd = (int)(x->i & 1);
    bool u = x->i & 2;
    LLVMBuilderRef B = E->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx);
#define K(v) splat(E, LLVMConstInt(i32, (unsigned long long)(v), 0), lanes)
    if (lanes == 1 && target_arch(E->jit ? NULL : E->p->target) == ARCH_ARM) {
        if (odd)
            a = LLVMBuildOr(B, LLVMBuildLShr(B, a, K(8), ""), LLVMBuildShl(B, a, K(24), ""), "");
        return call_fn(E, u ? "llvm.arm.uxtb16" : "llvm.arm.sxtb16", i32, &a, 1);
    }
    LLVMValueRef lo, hi;
    if (u) {
        lo = LLVMBuildAnd(B, LLVMBuildLShr(B, a, K(8 * odd), ""), K(0xff), "");
        hi = LLVMBuildAnd(B, LLVMBuildLShr(B, a, K(16 + 8 * odd), ""), K(0xff), "");
    } else {
        lo = LLVMBuildAShr(B, LLVMBuildShl(B, a, K(24 - 8 * odd), ""), K(24), "");
        lo = LLVMBuildAnd(B, lo, K(0xffff), "");
        hi = LLVMBuildAShr(B, LLVMBuildShl(B, a, K(8 - 8 * odd), ""), K(24), "");
    }
    return LLVMBuildOr(B, lo, LLVMBuildShl(B, hi, K(16), ""), "");
#undef K
}

/* KX_SAT (ir/kir.h): a compare and select for each bound (the Arm backend selects
 * SSAT/USAT for the pattern where the core has them). */
static LLVMValueRef sat(emit *E, const kn_kx *x) {
    LLVMValueRef a = expr(E, x->a[0]);
    int bits = (int)(x->i & 31);
    bool u = x->i & 32;
    long long lo = u ? 0 : -(1LL << (bits - 1)),
              hi = u ? (1LL << bits) - 1 : (1LL << (bits - 1)) - 1;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx);
    LLVMValueRef l = LLVMConstInt(i32, (unsigned long long)lo, 1);
    LLVMValueRef h = LLVMConstInt(i32, (unsigned long long)hi, 1);
    a = LLVMBuildSelect(E->b, LLVMBuildICmp(E->b, LLVMIntSLT, a, l, ""), l, a, "");
    return LLVMBuildSelect(E->b, LLVMBuildICmp(E->b, LLVMIntSGT, a, h, ""), h, a, "");
}

/* KX_CVTRN (ir/kir.h): nearbyint (to nearest even in LLVM's default floating-point
 * environment), then the saturating conversion llvm.fptosi.sat (NaN 0). */
static LLVMValueRef cvtrn(emit *E, const kn_kx *x) {
    LLVMValueRef a = operand(E, x, 0);
    char name[96], sfx[32], rsfx[32];
    type_suffix(a, sfx, sizeof sfx);
    snprintf(name, sizeof name, "llvm.nearbyint.%s", sfx);
    a = call_fn(E, name, LLVMTypeOf(a), &a, 1);
    LLVMTypeRef rt = ty_like(E, KN_I32, a);
    type_suffix(LLVMGetUndef(rt), rsfx, sizeof rsfx);
    snprintf(name, sizeof name, "llvm.fptosi.sat.%s.%s", rsfx, sfx);
    return call_fn(E, name, rt, &a, 1);
}

/* name(arg) (void) when cond: a branch around the call (freelocale(NULL) is undefined,
 * regfree of a regex_t that failed to compile too). */
static void call_if(emit *E, LLVMValueRef cond, const char *name, LLVMValueRef arg) {
    LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "rx.call");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "rx.done");
    LLVMBuildCondBr(E->b, cond, yes, done);
    LLVMPositionBuilderAtEnd(E->b, yes);
    call_fn(E, name, LLVMVoidTypeInContext(E->ctx), &arg, 1);
    LLVMBuildBr(E->b, done);
    LLVMPositionBuilderAtEnd(E->b, done);
}

/* Whether NUL-terminated s has a byte >= 0x80: a loop to its first byte that is not a
 * positive i8. */
static LLVMValueRef has_non_ascii(emit *E, LLVMValueRef s) {
    LLVMTypeRef i8 = LLVMInt8TypeInContext(E->ctx), i64 = LLVMInt64TypeInContext(E->ctx);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(E->b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "rx.scan");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "rx.scanned");
    LLVMBuildBr(E->b, loop);
    LLVMPositionBuilderAtEnd(E->b, loop);
    LLVMValueRef i = LLVMBuildPhi(E->b, i64, "");
    LLVMValueRef c = LLVMBuildLoad2(E->b, i8, LLVMBuildGEP2(E->b, i8, s, &i, 1, ""), "");
    LLVMValueRef next = LLVMBuildAdd(E->b, i, LLVMConstInt(i64, 1, 0), "");
    LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
    LLVMAddIncoming(i, &zero, &pre, 1);
    LLVMAddIncoming(i, &next, &loop, 1);
    LLVMBuildCondBr(E->b, LLVMBuildICmp(E->b, LLVMIntSGT, c, LLVMConstInt(i8, 0, 0), ""), loop,
                    done);
    LLVMPositionBuilderAtEnd(E->b, done);
    return LLVMBuildICmp(E->b, LLVMIntNE, c, LLVMConstInt(i8, 0, 0), "");
}

/* KX_REGEX (ir/kir.h): calls of the C library's regcomp, regexec and regfree on the
 * regex_ts in buffer x->buf (the REG_ and LC_ flags the host's values: the program runs
 * in this process or on a hosted target of the same C library; microcontrollers never
 * get here, ir/lower/string.c refuses them).
 * As the C helpers do (codegen/c/cprint.c, regex_helper): the pattern compiled twice,
 * in the C locale at byte 0 of the buffer (for ASCII strings: glibc's byte matcher) and
 * in C.UTF-8 at byte KN_REGEX_UTF8_AT, that locale kept at KN_REGEX_LOCALE_AT and made
 * the thread's (uselocale) around each match of a non-ASCII string. */
static LLVMValueRef regex(emit *E, const kn_kx *x) {
    LLVMTypeRef i8 = LLVMInt8TypeInContext(E->ctx), i32 = LLVMInt32TypeInContext(E->ctx),
                i64 = LLVMInt64TypeInContext(E->ctx);
    LLVMTypeRef p = E->ptr;
    LLVMValueRef re = E->bufs[x->buf->id], zero = LLVMConstInt(i32, 0, 0), null = LLVMConstNull(p);
    LLVMValueRef at = LLVMConstInt(i64, KN_REGEX_LOCALE_AT, 0);
    LLVMValueRef slot = LLVMBuildGEP2(E->b, i8, re, &at, 1, "rx.locale");
    LLVMValueRef uat = LLVMConstInt(i64, KN_REGEX_UTF8_AT, 0);
    LLVMValueRef ure = LLVMBuildGEP2(E->b, i8, re, &uat, 1, "rx.utf8");
    int kind = (int)(x->i >> 1);
    if (kind == KN_RX_COMPILE) {
        LLVMValueRef nc[3] = {LLVMConstInt(i32, LC_ALL_MASK, 0),
                              LLVMBuildGlobalString(E->b, "C", "regex.c_locale"), null};
        LLVMValueRef cl = call_fn(E, "newlocale", p, nc, 3);
        LLVMValueRef nu[3] = {LLVMConstInt(i32, LC_CTYPE_MASK, 0),
                              LLVMBuildGlobalString(E->b, KN_REGEX_LOCALE, "regex.locale"), null};
        LLVMValueRef l = call_fn(E, "newlocale", p, nu, 3);
        LLVMValueRef old = call_fn(E, "uselocale", p, &cl, 1);
        int flags = REG_EXTENDED | REG_NOSUB | (x->i & 1 ? REG_ICASE : 0);
        LLVMValueRef pat = LLVMBuildGlobalString(E->b, x->text, "regex");
        LLVMValueRef fl = LLVMConstInt(i32, (unsigned long long)flags, 0);
        LLVMValueRef a1[3] = {re, pat, fl}, a2[3] = {ure, pat, fl};
        LLVMValueRef ok1 =
            LLVMBuildICmp(E->b, LLVMIntEQ, call_fn(E, "regcomp", i32, a1, 3), zero, "");
        call_fn(E, "uselocale", p, &l, 1);
        LLVMValueRef ok2 =
            LLVMBuildICmp(E->b, LLVMIntEQ, call_fn(E, "regcomp", i32, a2, 3), zero, "");
        call_fn(E, "uselocale", p, &old, 1);
        call_if(E, LLVMBuildIsNotNull(E->b, cl, ""), "freelocale", cl);
        LLVMValueRef ok = LLVMBuildAnd(E->b, ok1, ok2, "");
        LLVMValueRef bad = LLVMBuildNot(E->b, ok, "");
        call_if(E, LLVMBuildAnd(E->b, bad, ok1, ""), "regfree", re);
        call_if(E, LLVMBuildAnd(E->b, bad, ok2, ""), "regfree", ure);
        call_if(E, LLVMBuildAnd(E->b, bad, LLVMBuildIsNotNull(E->b, l, ""), ""), "freelocale", l);
        LLVMBuildStore(E->b, LLVMBuildSelect(E->b, ok, l, null, ""), slot);
        return LLVMBuildSelect(E->b, ok, zero, LLVMConstInt(i32, (unsigned long long)-1, 1), "");
    }
    LLVMValueRef l = LLVMBuildLoad2(E->b, p, slot, "");
    if (kind == KN_RX_MATCH) {
        LLVMValueRef s = expr(E, x->a[0]);
        LLVMValueRef wide = has_non_ascii(E, s);
        LLVMValueRef loc = LLVMBuildSelect(E->b, wide, l, null, ""); /* NULL: no change */
        LLVMValueRef old = call_fn(E, "uselocale", p, &loc, 1);
        LLVMValueRef args[5] = {LLVMBuildSelect(E->b, wide, ure, re, ""), s,
                                LLVMConstInt(i64, 0, 0), null, zero};
        LLVMValueRef m = call_fn(E, "regexec", i32, args, 5);
        call_fn(E, "uselocale", p, &old, 1);
        return LLVMBuildZExt(E->b, LLVMBuildICmp(E->b, LLVMIntEQ, m, zero, ""), i32, "");
    }
    call_fn(E, "regfree", LLVMVoidTypeInContext(E->ctx), &re, 1);
    call_fn(E, "regfree", LLVMVoidTypeInContext(E->ctx), &ure, 1);
    call_if(E, LLVMBuildIsNotNull(E->b, l, ""), "freelocale", l);
    return zero;
}

static LLVMValueRef expr(emit *E, const kn_kx *x) {
    switch (x->op) {
    case KX_REGEX: return regex(E, x);
    case KX_DOT: return dot(E, x);
    case KX_UNPACK16: return unpack16(E, x);
    case KX_SAT: return sat(E, x);
    case KX_CVTRN: return cvtrn(E, x);
    case KX_QADD: { /* KX_QADD: the saturating add (QADD on Arm's DSP) */
        LLVMValueRef args[2] = {operand(E, x, 0), operand(E, x, 1)};
        return call_fn(E, "llvm.sadd.sat.i32", LLVMTypeOf(args[0]), args, 2);
    }
    case KX_CONST: return cnst(E, x->dtype, x->f, x->i);
    case KX_VAR: return LLVMBuildLoad2(E->b, var_type(E, x->var), E->vars[x->var], "");
    case KX_LANE:
        return LLVMBuildExtractElement(
            E->b, expr(E, x->a[0]),
            LLVMConstInt(LLVMInt32TypeInContext(E->ctx), (unsigned long long)x->i, 0), "");
    case KX_LOAD: return load(E, x);
    case KX_BYTE: { /* ((const uint8_t *)s)[i] */
        LLVMTypeRef i8 = LLVMInt8TypeInContext(E->ctx);
        LLVMValueRef idx = expr(E, x->a[1]);
        return LLVMBuildLoad2(E->b, i8, LLVMBuildGEP2(E->b, i8, expr(E, x->a[0]), &idx, 1, ""), "");
    }
    case KX_STR: { /* chars + i */
        LLVMValueRef idx = expr(E, x->a[0]);
        return LLVMBuildGEP2(E->b, LLVMInt8TypeInContext(E->ctx), E->bufs[x->buf->id], &idx, 1, "");
    }
    case KX_CAST: {
        LLVMValueRef hi = mulhi_x86(E, x);
        if (hi) return hi;
        if (x->i == 1) { /* kx_cast_inrange: the lowering bounded the operand */
            LLVMValueRef v = operand(E, x, 0);
            LLVMTypeRef tt = ty_like(E, x->dtype, v);
            return sgn(x->dtype) ? LLVMBuildFPToSI(E->b, v, tt, "")
                                 : LLVMBuildFPToUI(E->b, v, tt, "");
        }
        return convert(E, operand(E, x, 0), x->a[0]->dtype, x->dtype);
    }
    case KX_SELECT: {
        LLVMValueRef c = truth(E, operand(E, x, 0), x->a[0]->dtype);
        return LLVMBuildSelect(E->b, c, operand(E, x, 1), operand(E, x, 2), "");
    }
    case KX_FMA: { /* a*b + c, contractable like the C emitter's expression */
        LLVMValueRef args[3] = {operand(E, x, 0), operand(E, x, 1), operand(E, x, 2)};
        char name[64], sfx[32];
        type_suffix(args[0], sfx, sizeof sfx);
        /* kx_fma_exact: always fused */
        snprintf(name, sizeof name, x->i ? "llvm.fma.%s" : "llvm.fmuladd.%s", sfx);
        return call_fn(E, name, LLVMTypeOf(args[0]), args, 3);
    }
    default: break;
    }
    if (x->op >= KX_NEG && x->op <= KX_ISINF) return unary(E, x);
    return binary(E, x);
}

static void store(emit *E, const kn_kbuf *buf, LLVMValueRef index, LLVMValueRef v) {
    int n = (int)lanes_of(v);
    if (buf->dtype == KN_F16)
        v = LLVMBuildBitCast(E->b,
                             LLVMBuildFPTrunc(E->b, v, vec(LLVMHalfTypeInContext(E->ctx), n), ""),
                             vec(ty(E, buf->dtype), n), "");
    else if (buf->dtype == KN_BF16)
        v = f32_to_bf16(E, v);
    LLVMValueRef st = LLVMBuildStore(E->b, v, address(E, buf, index));
    LLVMSetAlignment(st, elem_align(buf->dtype));
}

/* The clamped i32 vector X of an 8-bit store `buf[i] = t8(min(max(X, lo), hi))` of 16 lanes
 * (kl_requant_hi32's vector form: the requantized outputs of a channel tile, stored
 * channels-last), with its bounds in *lo and *hi; NULL where s is not one. */
static const kn_kx *store_clamp8(const kn_ks *s, int64_t *lo, int64_t *hi) {
    if (s->kind != KS_STORE || s->word || s->stride > 1) return NULL;
    const kn_kx *v = s->value;
    if (v->op != KX_CAST || v->i == 1 || kx_lanes(v) != 16 || s->buf->dtype != v->dtype ||
        (v->dtype != KN_U8 && v->dtype != KN_I8))
        return NULL;
    const kn_kx *mn = v->a[0];
    if (mn->op != KX_MIN || mn->dtype != KN_I32 || mn->a[1]->op != KX_CONST) return NULL;
    const kn_kx *mx = mn->a[0];
    if (mx->op != KX_MAX || mx->a[1]->op != KX_CONST || kx_lanes(mx->a[0]) != 16) return NULL;
    *lo = mx->a[1]->i, *hi = mn->a[1]->i;
    bool u = v->dtype == KN_U8;
    if (*lo < (u ? 0 : -128) || *hi > (u ? 255 : 127) || *lo > *hi) return NULL;
    return mx->a[0];
}

/* b - a where index b is index a plus a constant (both var + constant, or the var alone),
 * else 0. */
static int64_t index_step(const kn_kx *a, const kn_kx *b) {
    int64_t ca = 0, cb = 0;
    if (a->op == KX_ADD && a->a[1]->op == KX_CONST) ca = a->a[1]->i, a = a->a[0];
    if (b->op == KX_ADD && b->a[1]->op == KX_CONST) cb = b->a[1]->i, b = b->a[0];
    if (a->op != KX_VAR || b->op != KX_VAR || a->var != b->var) return 0;
    return cb - ca;
}

/* Whether expression x loads from a buffer that is not constant (one that a store may
 * change, under its own name or another sharing its arena storage). */
static bool reads_mutable(const kn_kx *x) {
    if (!x) return false;
    if (x->op == KX_LOAD && x->buf->kind != KB_CONST) return true;
    for (int i = 0; i < 3; i++)
        if (reads_mutable(x->a[i])) return true;
    return false;
}

/* Four consecutive 8-bit stores of clamped i32 vectors of 16 lanes (store_clamp8, the same
 * buffer, type and bounds; the last three computed from registers and constant tables
 * only, so computing all four before the first store changes nothing: the channel tiles'
 * accumulators and requantization tables) on x86 with AVX-512BW, as one
 * saturating pack chain: vpackssdw of the first two and of the last two (i32 to i16,
 * saturated), vpackuswb / vpacksswb of those (i16 to 8 bits, saturated), one vpermd putting
 * the 64 bytes back in order (the packs interleave 4-lane groups per 128-bit lane), then
 * the bounds as byte maxima and minima (64 lanes an instruction; none where they are the
 * type's), and the four 16-byte quarters stored. The same bytes as clamping each vector
 * and truncating: the saturations are monotonic and the bounds inside the 8-bit range, so
 * clamp(sat(X)) = clamp(X). Where each vector took a vpmaxsd (the lower bound) and a
 * saturating vpmovusdb / vpmovsdb store, four take 3 packs, a permute and the stores
 * (docs/quantization.md, r18ep). Returns how many statements it emitted (4), else 0. */
static int store_packs_x86(emit *E, const kn_ks *const *ss, int n) {
    if (n < 4 || target_arch(E->jit ? NULL : E->p->target) != ARCH_X86) return 0;
    const kn_kx *X[4];
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < 4; k++) {
        int64_t l, h;
        X[k] = store_clamp8(ss[k], &l, &h);
        if (!X[k]) return 0;
        if (k && (ss[k]->buf != ss[0]->buf || ss[k]->value->dtype != ss[0]->value->dtype ||
                  l != lo || h != hi))
            return 0;
        if (k && (reads_mutable(ss[k]->value) || reads_mutable(ss[k]->index))) return 0;
        lo = l, hi = h;
    }
    if (!x86_has(E, "avx512bw") || (!E->jit && (!E->p->target || E->p->target->vector_bits < 512)))
        return 0;
    LLVMBuilderRef B = E->b;
    bool u = ss[0]->value->dtype == KN_U8;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx), i16 = LLVMInt16TypeInContext(E->ctx),
                i8 = LLVMInt8TypeInContext(E->ctx);
    LLVMValueRef v[4], idx[16];
    for (int k = 0; k < 4; k++) v[k] = splat(E, expr(E, X[k]), 16);
    LLVMValueRef w[2];
    for (int k = 0; k < 2; k++)
        w[k] = call_fn(E, "llvm.x86.avx512.packssdw.512", vec(i16, 32), v + 2 * k, 2);
    LLVMValueRef b = call_fn(E, u ? "llvm.x86.avx512.packuswb.512" : "llvm.x86.avx512.packsswb.512",
                             vec(i8, 64), w, 2);
    /* dword 4j + g of the result: group g (lanes 4g..4g+3) of vector j, which the packs
     * left in dword 4g + j */
    for (int j = 0; j < 4; j++)
        for (int g = 0; g < 4; g++) idx[4 * j + g] = LLVMConstInt(i32, (unsigned)(4 * g + j), 0);
    b = LLVMBuildBitCast(B, b, vec(i32, 16), "");
    b = LLVMBuildShuffleVector(B, b, LLVMGetUndef(vec(i32, 16)), LLVMConstVector(idx, 16), "");
    b = LLVMBuildBitCast(B, b, vec(i8, 64), "");
    if (lo > (u ? 0 : -128)) {
        LLVMValueRef c = splat(E, LLVMConstInt(i8, (unsigned long long)lo, 1), 64);
        b = LLVMBuildSelect(B, LLVMBuildICmp(B, u ? LLVMIntULT : LLVMIntSLT, b, c, ""), c, b, "");
    }
    if (hi < (u ? 255 : 127)) {
        LLVMValueRef c = splat(E, LLVMConstInt(i8, (unsigned long long)hi, 1), 64);
        b = LLVMBuildSelect(B, LLVMBuildICmp(B, u ? LLVMIntUGT : LLVMIntSGT, b, c, ""), c, b, "");
    }
    for (int k = 0; k < 4;) { /* quarters at consecutive indices stored as one */
        int m = 1;
        while (k + m < 4 && index_step(ss[k + m - 1]->index, ss[k + m]->index) == 16) m++;
        if (m == 3) m = 2; /* 32 bytes and 16, not 48 */
        LLVMValueRef sel[64];
        for (int l = 0; l < 16 * m; l++) sel[l] = LLVMConstInt(i32, (unsigned)(16 * k + l), 0);
        LLVMValueRef q = m == 4
                             ? b
                             : LLVMBuildShuffleVector(B, b, LLVMGetUndef(vec(i8, 64)),
                                                      LLVMConstVector(sel, (unsigned)(16 * m)), "");
        store(E, ss[k]->buf, expr(E, ss[k]->index), q);
        k += m;
    }
    return 4;
}

static void par_loop(emit *E, const kn_ks *s);

static void stmt(emit *E, const kn_ks *s) {
    LLVMBuilderRef B = E->b;
    if (E->par_for && !E->in_task && kn_ks_task_loop(s)) {
        par_loop(E, s);
        return;
    }
    switch (s->kind) {
    case KS_BLOCK:
        for (int i = 0; i < s->n; i++) {
            int k = store_packs_x86(E, (const kn_ks *const *)s->body + i, s->n - i);
            if (k)
                i += k - 1;
            else
                stmt(E, s->body[i]);
        }
        return;
    case KS_FOR: {
        LLVMTypeRef i64 = ty(E, KN_I64);
        LLVMValueRef var = E->vars[s->var];
        LLVMValueRef ext =
            s->ext ? expr(E, s->ext) : LLVMConstInt(i64, (unsigned long long)s->extent, 1);
        LLVMBuildStore(B, LLVMConstInt(i64, 0, 0), var);
        LLVMBasicBlockRef cond = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "for.cond");
        LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "for.body");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "for.end");
        LLVMBuildBr(B, cond);
        LLVMPositionBuilderAtEnd(B, cond);
        LLVMValueRef iv = LLVMBuildLoad2(B, i64, var, "");
        LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, iv, ext, ""), body, done);
        LLVMPositionBuilderAtEnd(B, body);
        stmt(E, s->body[0]);
        LLVMValueRef nv =
            LLVMBuildAdd(B, LLVMBuildLoad2(B, i64, var, ""), LLVMConstInt(i64, 1, 0), "");
        LLVMBuildStore(B, nv, var);
        LLVMBuildBr(B, cond);
        LLVMPositionBuilderAtEnd(B, done);
        return;
    }
    case KS_STORE:
        if (s->word) { /* a word store (kl_store_word): i32 at byte alignment, little-endian */
            LLVMValueRef st =
                LLVMBuildStore(B, expr(E, s->value), address(E, s->buf, expr(E, s->index)));
            LLVMSetAlignment(st, 1);
            return;
        }
        if (s->stride > 1) { /* a strided store (kl_store_strided): one store a lane */
            LLVMValueRef v = expr(E, s->value), at = expr(E, s->index);
            for (int k = 0; k < kx_lanes(s->value); k++)
                store(E, s->buf,
                      LLVMBuildAdd(B, at, LLVMConstInt(LLVMTypeOf(at), (uint64_t)k * s->stride, 1),
                                   ""),
                      LLVMBuildExtractElement(
                          B, v, LLVMConstInt(LLVMInt32TypeInContext(E->ctx), (unsigned)k, 0), ""));
            return;
        }
        store(E, s->buf, expr(E, s->index), expr(E, s->value));
        return;
    case KS_DECL:
    case KS_SET:
        LLVMBuildStore(B, splat(E, expr(E, s->value), E->p->var_lanes[s->var]), E->vars[s->var]);
        return;
    case KS_IF: {
        LLVMValueRef c = truth(E, expr(E, s->cond), s->cond->dtype);
        LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "if.then");
        LLVMBasicBlockRef els = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "if.else");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "if.end");
        LLVMBuildCondBr(B, c, then, els);
        LLVMPositionBuilderAtEnd(B, then);
        stmt(E, s->body[0]);
        LLVMBuildBr(B, done);
        LLVMPositionBuilderAtEnd(B, els);
        if (s->body[1]) stmt(E, s->body[1]);
        LLVMBuildBr(B, done);
        LLVMPositionBuilderAtEnd(B, done);
        return;
    }
    case KS_WHILE: {
        LLVMBasicBlockRef cond = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "while.cond");
        LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "while.body");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "while.end");
        LLVMBuildBr(B, cond);
        LLVMPositionBuilderAtEnd(B, cond);
        LLVMBuildCondBr(B, truth(E, expr(E, s->cond), s->cond->dtype), body, done);
        LLVMPositionBuilderAtEnd(B, body);
        stmt(E, s->body[0]);
        LLVMBuildBr(B, cond);
        LLVMPositionBuilderAtEnd(B, done);
        return;
    }
    case KS_COPY: {
        size_t es = kn_dtype_get(s->buf->dtype)->size;
        LLVMTypeRef i64 = ty(E, KN_I64);
        LLVMValueRef esv = s->buf->dtype == KN_STRING ? LLVMSizeOf(E->ptr) /* the target's */
                                                      : LLVMConstInt(i64, es, 0);
        LLVMValueRef n = LLVMBuildMul(B, expr(E, s->count), esv, "");
        LLVMBuildMemMove(B, address(E, s->buf, expr(E, s->index)), 1,
                         address(E, s->src, expr(E, s->src_index)), 1, n);
        return;
    }
    case KS_PREFETCH: { /* llvm.prefetch(p, read, locality 2 (the L2 on x86), data) */
        LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx);
        LLVMValueRef args[4] = {address(E, s->buf, expr(E, s->index)), LLVMConstInt(i32, 0, 0),
                                LLVMConstInt(i32, 2, 0), LLVMConstInt(i32, 1, 0)};
        call_fn(E, "llvm.prefetch.p0", LLVMVoidTypeInContext(E->ctx), args, 4);
        return;
    }
    }
}

/* ---- functions ---- */

/* For each parameter of a kernel using `use`: whether no other parameter of the call
 * shares its storage (noalias). Returns the parameter count. */
static int param_noalias(emit *E, const unsigned char *use, unsigned char *flags) {
    const kn_kprog *p = E->p;
    int np = 0;
    for (int i = 0; i < p->nbufs; i++) {
        if (!use[i]) continue;
        const kn_kbuf *bi = p->bufs[i];
        bool unique = bi->kind != KB_INPUT && bi->kind != KB_OUTPUT;
        for (int j = 0; j < p->nbufs && unique; j++)
            if (j != i && use[j]) {
                const kn_kbuf *bj = p->bufs[j];
                if ((bj->kind == KB_TEMP || bj->kind == KB_SCRATCH) &&
                    (bi->kind == KB_TEMP || bi->kind == KB_SCRATCH) &&
                    kn_kbuf_storage(bi) == kn_kbuf_storage(bj))
                    unique = false;
            }
        flags[np++] = unique;
    }
    return np;
}

/* For each parameter of a kernel using `use`: the first parameter sharing its storage
 * (itself where none does). Buffers that share storage within one kernel are the same
 * address (an in-place kernel's input and output, passes/plan.c), and the kernel reads
 * and writes both through the first one's pointer: LLVM then sees one base pointer and
 * vectorizes the in-place loop, where two pointers that may overlap made it add a
 * runtime overlap check that fails (they are equal) and run the scalar loop. */
static void param_slots(emit *E, const unsigned char *use, int *slot) {
    const kn_kprog *p = E->p;
    int np = 0, *first = malloc(((size_t)p->nbufs + 1) * sizeof *first);
    KN_ASSERT(first);
    for (int i = 0; i < p->nbufs; i++) {
        first[i] = -1;
        if (!use[i]) continue;
        const kn_kbuf *bi = p->bufs[i];
        slot[np] = np;
        if (bi->kind == KB_TEMP || bi->kind == KB_SCRATCH) {
            const kn_kbuf *r = kn_kbuf_storage(bi);
            size_t at = kn_kbuf_view_at(bi); /* Concat inputs share storage at other offsets */
            for (int j = 0; j < i; j++)
                if (first[j] >= 0 && kn_kbuf_storage(p->bufs[j]) == r &&
                    kn_kbuf_view_at(p->bufs[j]) == at) {
                    slot[np] = first[j];
                    break;
                }
        }
        first[i] = slot[np] == np ? np : -1;
        np++;
    }
    free(first);
}

/* Marks in v the variables s reads or assigns. */
static void vector_width_attr(emit *E, LLVMValueRef fn) {
    /* kernels use the vector widths the target description gave the passes; without
     * this x86 may split 512-bit vectors on CPUs that prefer 256-bit ones */
    int bits = E->p->target ? E->p->target->vector_bits : 0;
    if (bits <= 0) return;
    char v[16];
    int n = snprintf(v, sizeof v, "%d", bits);
    LLVMAddAttributeAtIndex(
        fn, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(E->ctx, "min-legal-vector-width", 22, v, (unsigned)n));
}

/* A parallel loop: its body becomes a task function `i32 task(ptr, i32 t, ptr closure)`
 * running a chunk of the iterations, and the loop a call of par_for over the tasks. The closure
 * holds the buffers the loop uses and the values of the outer variables it reads. The task
 * loads the buffers' addresses from the closure and calls the chunk's loop, a function of
 * its own (`..._body`, always inlined) whose buffer parameters carry noalias where no other
 * buffer of the loop shares their storage (param_noalias) and share one parameter where
 * they are the same address (param_slots), as a kernel function's do: the inliner turns
 * noalias into scoped alias metadata. Pointers loaded from the closure carried no such
 * facts, and LLVM then kept loads and stores in order and left loops scalar that it
 * vectorized in the 1-thread code (SqueezeNet's 13x13 MaxPool: its 2 halves took as long
 * as the whole loop on 1 thread; docs/benchmarks.md). */
static void par_loop(emit *E, const kn_ks *s) {
    const kn_kprog *p = E->p;
    LLVMBuilderRef B = E->b;
    size_t nb = (size_t)p->nbufs + 1, nv = (size_t)p->nvars + 1;
    unsigned char *use = calloc(nb, 1), *inner = calloc(nv, 1), *ref = calloc(nv, 1);
    LLVMTypeRef *ft = calloc(nb + nv, sizeof *ft);
    LLVMValueRef *saved_bufs = malloc(nb * sizeof *saved_bufs),
                 *saved_vars = malloc(nv * sizeof *saved_vars);
    KN_ASSERT(use && inner && ref && ft && saved_bufs && saved_vars);
    kn_kernel_uses(s, use);
    kn_ks_declared_vars(s, inner);
    kn_ks_used_vars(s, ref);
    unsigned nf = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (use[i]) ft[nf++] = E->ptr;
    unsigned nbp = nf; /* buffer fields first, one per buffer used */
    for (int v = 0; v < p->nvars; v++)
        if (ref[v] && !inner[v]) ft[nf++] = var_type(E, v);
    LLVMTypeRef ct = LLVMStructTypeInContext(E->ctx, ft, nf, 0);
    /* the closure, allocated once in the kernel's entry block, filled here */
    LLVMBuilderRef eb = LLVMCreateBuilderInContext(E->ctx);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(E->fn);
    LLVMPositionBuilderBefore(eb, LLVMGetFirstInstruction(entry));
    LLVMValueRef clo = LLVMBuildAlloca(eb, ct, "closure");
    LLVMDisposeBuilder(eb);
    unsigned f = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (use[i]) LLVMBuildStore(B, E->bufs[i], LLVMBuildStructGEP2(B, ct, clo, f++, ""));
    for (int v = 0; v < p->nvars; v++)
        if (ref[v] && !inner[v])
            LLVMBuildStore(B, LLVMBuildLoad2(B, var_type(E, v), E->vars[v], ""),
                           LLVMBuildStructGEP2(B, ct, clo, f++, ""));
    /* the chunk's loop: body(buffers..., i64 lo, i64 hi, ptr closure) */
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx), i64 = ty(E, KN_I64);
    LLVMTypeRef *bpt = calloc((size_t)nbp + 3, sizeof *bpt);
    unsigned char *flags = calloc((size_t)nbp + 1, 1);
    int *slot = calloc((size_t)nbp + 1, sizeof *slot);
    KN_ASSERT(bpt && flags && slot);
    for (unsigned i = 0; i < nbp; i++) bpt[i] = E->ptr;
    bpt[nbp] = i64, bpt[nbp + 1] = i64, bpt[nbp + 2] = E->ptr;
    param_noalias(E, use, flags);
    param_slots(E, use, slot);
    char name[160];
    snprintf(name, sizeof name, "%s_task%d_body", LLVMGetValueName(E->fn), s->var);
    LLVMTypeRef bt = LLVMFunctionType(LLVMVoidTypeInContext(E->ctx), bpt, nbp + 3, 0);
    LLVMValueRef bfn = LLVMAddFunction(E->mod, name, bt);
    LLVMSetLinkage(bfn, LLVMInternalLinkage);
    vector_width_attr(E, bfn);
    LLVMAddAttributeAtIndex(
        bfn, LLVMAttributeFunctionIndex,
        LLVMCreateEnumAttribute(E->ctx, LLVMGetEnumAttributeKindForName("alwaysinline", 12), 0));
    for (unsigned pi = 0; pi < nbp; pi++)
        if (flags[pi])
            LLVMAddAttributeAtIndex(
                bfn, pi + 1,
                LLVMCreateEnumAttribute(E->ctx, LLVMGetEnumAttributeKindForName("noalias", 7), 0));
    LLVMBasicBlockRef resume = LLVMGetInsertBlock(B);
    LLVMValueRef fn = E->fn;
    memcpy(saved_bufs, E->bufs, nb * sizeof *saved_bufs);
    memcpy(saved_vars, E->vars, nv * sizeof *saved_vars);
    E->fn = bfn;
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(E->ctx, bfn, "entry"));
    LLVMValueRef tc = LLVMGetParam(bfn, nbp + 2);
    unsigned pi = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (use[i]) E->bufs[i] = LLVMGetParam(bfn, (unsigned)slot[pi++]);
    f = nbp;
    for (int v = 0; v < p->nvars; v++) {
        if (!ref[v] && !inner[v]) continue;
        E->vars[v] = LLVMBuildAlloca(B, var_type(E, v), "");
        if (!inner[v])
            LLVMBuildStore(
                B, LLVMBuildLoad2(B, var_type(E, v), LLVMBuildStructGEP2(B, ct, tc, f++, ""), ""),
                E->vars[v]);
    }
    LLVMValueRef var = E->vars[s->var];
    LLVMBuildStore(B, LLVMGetParam(bfn, nbp), var);
    LLVMBasicBlockRef cond = LLVMAppendBasicBlockInContext(E->ctx, bfn, "task.cond");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(E->ctx, bfn, "task.body");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, bfn, "task.end");
    LLVMBuildBr(B, cond);
    LLVMPositionBuilderAtEnd(B, cond);
    LLVMBuildCondBr(B,
                    LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildLoad2(B, i64, var, ""),
                                  LLVMGetParam(bfn, nbp + 1), ""),
                    body, done);
    LLVMPositionBuilderAtEnd(B, body);
    E->in_task = true;
    stmt(E, s->body[0]);
    E->in_task = false;
    LLVMBuildStore(B, LLVMBuildAdd(B, LLVMBuildLoad2(B, i64, var, ""), LLVMConstInt(i64, 1, 0), ""),
                   var);
    LLVMBuildBr(B, cond);
    LLVMPositionBuilderAtEnd(B, done);
    LLVMBuildRetVoid(B);
    /* the task: task t runs iterations [t*chunk, min((t+1)*chunk, extent)), as many tasks
     * as passes/parallel.c chose */
    LLVMTypeRef tparams[3] = {E->ptr, i32, E->ptr};
    LLVMTypeRef tt = LLVMFunctionType(i32, tparams, 3, 0);
    snprintf(name, sizeof name, "%s_task%d", LLVMGetValueName(fn), s->var);
    LLVMValueRef task = LLVMAddFunction(E->mod, name, tt);
    LLVMSetLinkage(task, LLVMInternalLinkage);
    vector_width_attr(E, task);
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(E->ctx, task, "entry"));
    int64_t ntasks, chunk = kn_ks_task_chunk(s, &ntasks);
    LLVMValueRef lo = LLVMBuildMul(B, LLVMBuildSExt(B, LLVMGetParam(task, 1), i64, ""),
                                   LLVMConstInt(i64, (unsigned long long)chunk, 0), "");
    LLVMValueRef hi = LLVMBuildAdd(B, lo, LLVMConstInt(i64, (unsigned long long)chunk, 0), "");
    LLVMValueRef ext = LLVMConstInt(i64, (unsigned long long)s->extent, 0);
    hi = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, hi, ext, ""), hi, ext, "");
    LLVMValueRef *bargs = calloc((size_t)nbp + 3, sizeof *bargs);
    KN_ASSERT(bargs);
    LLVMValueRef tcl = LLVMGetParam(task, 2);
    for (unsigned i = 0; i < nbp; i++)
        bargs[i] = LLVMBuildLoad2(B, E->ptr, LLVMBuildStructGEP2(B, ct, tcl, i, ""), "");
    /* per-thread scratch (kn_kbuf.per_thread): the running thread's copy, the pool's thread
     * index (runtime/kn_pool.h) times the copies' stride past the first */
    LLVMValueRef tidx = NULL;
    for (int i = 0, j = 0; i < p->nbufs; i++) {
        if (!use[i]) continue;
        const kn_kbuf *b = p->bufs[i];
        if (b->per_thread && b->copies > 1) {
            if (!tidx) {
                LLVMTypeRef it = LLVMFunctionType(i32, NULL, 0, 0);
                LLVMValueRef fi = LLVMConstIntToPtr(
                    LLVMConstInt(i64, (unsigned long long)(uintptr_t)kn_pool_thread_index, 0),
                    E->ptr);
                tidx = LLVMBuildSExt(B, LLVMBuildCall2(B, it, fi, NULL, 0, "thread"), i64, "");
            }
            LLVMValueRef off = LLVMBuildMul(
                B, tidx, LLVMConstInt(i64, (unsigned long long)kn_kbuf_thread_stride(b), 0), "");
            LLVMTypeRef i8 = LLVMInt8TypeInContext(E->ctx);
            bargs[j] = LLVMBuildGEP2(B, i8, bargs[j], &off, 1, "");
        }
        j++;
    }
    bargs[nbp] = lo, bargs[nbp + 1] = hi, bargs[nbp + 2] = tcl;
    LLVMBuildCall2(B, bt, bfn, bargs, nbp + 3, "");
    LLVMBuildRet(B, LLVMConstInt(i32, 0, 0));
    free(bargs);
    free(bpt);
    free(flags);
    free(slot);
    E->fn = fn;
    memcpy(E->bufs, saved_bufs, nb * sizeof *saved_bufs);
    memcpy(E->vars, saved_vars, nv * sizeof *saved_vars);
    LLVMPositionBuilderAtEnd(B, resume);
    /* par_for(NULL, task, 0, extent, closure) */
    LLVMTypeRef pp[5] = {E->ptr, E->ptr, i32, i32, E->ptr};
    LLVMTypeRef pft = LLVMFunctionType(i32, pp, 5, 0);
    LLVMValueRef pf = LLVMConstIntToPtr(
        LLVMConstInt(ty(E, KN_I64), (unsigned long long)(uintptr_t)E->par_for, 0), E->ptr);
    LLVMValueRef args[5] = {LLVMConstNull(E->ptr), task, LLVMConstInt(i32, 0, 0),
                            LLVMConstInt(i32, (unsigned long long)ntasks, 0), clo};
    LLVMBuildCall2(B, pft, pf, args, 5, "");
    free(use);
    free(inner);
    free(ref);
    free(ft);
    free(saved_bufs);
    free(saved_vars);
}

static LLVMValueRef kernel_fn(emit *E, int k, const unsigned char *use, int *nparams) {
    const kn_kprog *p = E->p;
    LLVMTypeRef params[4096];
    int np = 0;
    for (int i = 0; i < p->nbufs && np < 4096; i++)
        if (use[i]) params[np++] = E->ptr;
    char name[128];
    snprintf(name, sizeof name, "%s_k%d", p->name, k);
    LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(E->ctx), params, (unsigned)np, 0);
    LLVMValueRef fn = LLVMAddFunction(E->mod, name, ft);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    vector_width_attr(E, fn);
    /* never inlined into NAME_run: each kernel is optimized as a function of its own
     * instead of NAME_run growing into one function of every kernel's loops, which the
     * inliner and the loop passes after it then process again (compile time, #16) */
    LLVMAddAttributeAtIndex(
        fn, LLVMAttributeFunctionIndex,
        LLVMCreateEnumAttribute(E->ctx, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
    /* noalias where no other parameter of this call shares the storage */
    unsigned char *flags = calloc((size_t)np + 1, 1);
    KN_ASSERT(flags);
    param_noalias(E, use, flags);
    for (int pi = 0; pi < np; pi++)
        if (flags[pi]) {
            unsigned kind = LLVMGetEnumAttributeKindForName("noalias", 7);
            LLVMAddAttributeAtIndex(fn, (unsigned)(pi + 1),
                                    LLVMCreateEnumAttribute(E->ctx, kind, 0));
        }
    free(flags);
    *nparams = np;
    return fn;
}

/* An earlier kernel whose function kernel k can call (kn_kernel_same, and the same
 * noalias parameters), or -1. */
static int same_as_earlier(emit *E, int k) {
    const kn_kprog *p = E->p;
    size_t nb = (size_t)p->nbufs + 1;
    unsigned char *uk = calloc(nb, 1), *uj = calloc(nb, 1), *fk = calloc(nb, 1),
                  *fj = calloc(nb, 1);
    KN_ASSERT(uk && uj && fk && fj);
    kn_kernel_uses(p->kernels[k]->body, uk);
    int *sk = malloc(nb * sizeof *sk), *sj = malloc(nb * sizeof *sj);
    KN_ASSERT(sk && sj);
    int nk = param_noalias(E, uk, fk), found = -1;
    param_slots(E, uk, sk);
    for (int j = 0; j < k && found < 0; j++) {
        if (E->kfn_of[j] != j) continue; /* compare with the functions actually built */
        memset(uj, 0, nb);
        kn_kernel_uses(p->kernels[j]->body, uj);
        if (param_noalias(E, uj, fj) != nk || memcmp(fk, fj, (size_t)nk)) continue;
        param_slots(E, uj, sj);
        if (!memcmp(sk, sj, (size_t)nk * sizeof *sk) &&
            kn_kernel_same(p, p->kernels[j], p->kernels[k]))
            found = j;
    }
    free(sk);
    free(sj);
    free(uk);
    free(uj);
    free(fk);
    free(fj);
    return found;
}

static kn_status build_kernel(emit *E, int k) {
    const kn_kprog *p = E->p;
    const kn_kernel *kr = p->kernels[k];
    int j = same_as_earlier(E, k);
    E->kfn_of[k] = j >= 0 ? j : k;
    if (j >= 0) {
        E->kfn[k] = E->kfn[j];
        return KN_OK;
    }
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1), *vars = calloc((size_t)p->nvars + 1, 1);
    KN_ASSERT(use && vars);
    kn_kernel_uses(kr->body, use);
    kn_ks_declared_vars(kr->body, vars);
    int np;
    E->fn = E->kfn[k] = kernel_fn(E, k, use, &np);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "entry");
    LLVMPositionBuilderAtEnd(E->b, entry);
    int pi = 0, *slot = malloc(((size_t)np + 1) * sizeof *slot);
    KN_ASSERT(slot);
    param_slots(E, use, slot);
    for (int i = 0; i < p->nbufs; i++)
        if (use[i]) E->bufs[i] = LLVMGetParam(E->fn, (unsigned)slot[pi++]);
    free(slot);
    for (int v = 0; v < p->nvars; v++)
        if (vars[v]) E->vars[v] = LLVMBuildAlloca(E->b, var_type(E, v), "");
    stmt(E, kr->body);
    LLVMBuildRetVoid(E->b);
    free(use);
    free(vars);
    return KN_OK;
}

static void build_weights(emit *E) {
    const kn_kprog *p = E->p;
    LLVMTypeRef i8 = LLVMInt8TypeInContext(E->ctx), i64 = LLVMInt64TypeInContext(E->ctx);
    LLVMValueRef blob = NULL;
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (!kn_kbuf_is_weight(b)) continue;
        if (E->weights) { /* an address in this process */
            LLVMValueRef a = LLVMConstInt(i64, (unsigned long long)(uintptr_t)E->weights[i], 0);
            E->globals[i] = LLVMConstIntToPtr(a, E->ptr);
            continue;
        }
        if (E->blob_off && E->blob_off[i] != SIZE_MAX) { /* in the section kiln writes */
            if (!blob) {
                blob = LLVMAddGlobal(E->mod, LLVMArrayType2(i8, 0), E->blob_symbol);
                LLVMSetVisibility(blob, LLVMHiddenVisibility); /* direct, PC-relative access */
                LLVMSetGlobalConstant(blob, 1);
                LLVMSetAlignment(blob, KN_ARENA_ALIGN);
            }
            LLVMValueRef off = LLVMConstInt(i64, E->blob_off[i], 0);
            E->globals[i] = LLVMConstInBoundsGEP2(i8, blob, &off, 1);
            continue;
        }
        size_t bytes = kn_kbuf_bytes(b);
        LLVMTypeRef at = LLVMArrayType2(LLVMInt8TypeInContext(E->ctx), bytes ? bytes : 1);
        char name[128];
        snprintf(name, sizeof name, "%s_%s", p->name, b->name);
        LLVMValueRef g = LLVMAddGlobal(E->mod, at, name);
        LLVMValueRef init =
            bytes ? LLVMConstStringInContext2(E->ctx, b->data->data, bytes, 1) : LLVMConstNull(at);
        LLVMSetInitializer(g, init);
        /* LLVM copied the bytes: the program's weights (its own, or the graph's it
         * borrows) can go now, so an object file's weights are held twice at most (in
         * LLVM's constants, then in the object writer). */
        if (E->release && bytes) kn_kprog_release_data(E->release, E->release->bufs[i]);
        LLVMSetGlobalConstant(g, 1);
        LLVMSetLinkage(g, LLVMPrivateLinkage);
        LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
        LLVMSetAlignment(g, 64);
        E->globals[i] = g;
    }
}

/* hook(user, k, phase) through the addresses in E->prof (codegen/profile.h). */
static void profile_call(emit *E, int k, int phase) {
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx), i64 = LLVMInt64TypeInContext(E->ctx);
    LLVMTypeRef pt[3] = {E->ptr, i32, i32};
    LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(E->ctx), pt, 3, 0);
    LLVMValueRef fn = LLVMConstIntToPtr(
        LLVMConstInt(i64, (unsigned long long)(uintptr_t)E->prof->hook, 0), E->ptr);
    LLVMValueRef args[3] = {
        LLVMConstIntToPtr(LLVMConstInt(i64, (unsigned long long)(uintptr_t)E->prof->user, 0),
                          E->ptr),
        LLVMConstInt(i32, (unsigned long long)k, 0), LLVMConstInt(i32, (unsigned)phase, 0)};
    LLVMBuildCall2(E->b, ft, fn, args, 3, "");
}

/* NAME_run(in..., out..., arena) and NAME_run_array(inputs, outputs, weights, arena). */
static void build_entries(emit *E) {
    const kn_kprog *p = E->p;
    LLVMBuilderRef B = E->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(E->ctx), i64 = LLVMInt64TypeInContext(E->ctx);
    int n = p->nin + p->nout + 1;
    LLVMTypeRef *params = calloc((size_t)n + 1, sizeof *params);
    KN_ASSERT(params);
    for (int i = 0; i < n; i++) params[i] = E->ptr;
    char name[128];
    snprintf(name, sizeof name, "%s_run", p->name);
    LLVMTypeRef rft = LLVMFunctionType(i32, params, (unsigned)n, 0);
    LLVMValueRef run = LLVMAddFunction(E->mod, name, rft);
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(E->ctx, run, "entry"));
    LLVMValueRef arena = LLVMGetParam(run, (unsigned)(n - 1));
    /* misaligned arena: return 1 */
    LLVMValueRef mis = LLVMBuildICmp(B, LLVMIntNE,
                                     LLVMBuildAnd(B, LLVMBuildPtrToInt(B, arena, i64, ""),
                                                  LLVMConstInt(i64, KN_ARENA_ALIGN - 1, 0), ""),
                                     LLVMConstInt(i64, 0, 0), "");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(E->ctx, run, "misaligned");
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(E->ctx, run, "run");
    LLVMBuildCondBr(B, mis, bad, go);
    LLVMPositionBuilderAtEnd(B, bad);
    LLVMBuildRet(B, LLVMConstInt(i32, 1, 0));
    LLVMPositionBuilderAtEnd(B, go);
    LLVMValueRef *addr = calloc((size_t)p->nbufs + 1, sizeof *addr);
    KN_ASSERT(addr);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (b->kind == KB_INPUT)
            addr[i] = LLVMGetParam(run, (unsigned)b->io);
        else if (b->kind == KB_OUTPUT)
            addr[i] = LLVMGetParam(run, (unsigned)(p->nin + b->io));
        else if (b->kind == KB_CONST)
            addr[i] = E->globals[i];
        else {
            LLVMValueRef off = LLVMConstInt(i64, kn_kbuf_arena_offset(b), 0);
            addr[i] = LLVMBuildGEP2(B, LLVMInt8TypeInContext(E->ctx), arena, &off, 1, "");
        }
    }
    LLVMValueRef status = p->status ? addr[p->status->id] : NULL; /* kl_fail: cleared, returned */
    if (status) LLVMBuildStore(B, LLVMConstInt(i32, 0, 0), status);
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    for (int k = 0; k < p->nkernels; k++) {
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[k]->body, use);
        LLVMValueRef args[4096];
        LLVMTypeRef targs[4096];
        int na = 0;
        for (int i = 0; i < p->nbufs && na < 4096; i++)
            if (use[i]) {
                targs[na] = E->ptr;
                args[na++] = addr[i];
            }
        LLVMTypeRef kt = LLVMFunctionType(LLVMVoidTypeInContext(E->ctx), targs, (unsigned)na, 0);
        if (E->prof) profile_call(E, k, 0);
        LLVMBuildCall2(B, kt, E->kfn[k], args, (unsigned)na, "");
        if (E->prof) profile_call(E, k, 1);
    }
    LLVMBuildRet(B, status ? LLVMBuildLoad2(B, i32, status, "") : LLVMConstInt(i32, 0, 0));

    /* NAME_run_array */
    LLVMTypeRef aparams[4] = {E->ptr, E->ptr, E->ptr, E->ptr};
    snprintf(name, sizeof name, "%s_run_array", p->name);
    LLVMValueRef arr = LLVMAddFunction(E->mod, name, LLVMFunctionType(i32, aparams, 4, 0));
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(E->ctx, arr, "entry"));
    LLVMValueRef *cargs = calloc((size_t)n + 1, sizeof *cargs);
    KN_ASSERT(cargs);
    for (int i = 0; i < p->nin + p->nout; i++) {
        bool isin = i < p->nin;
        LLVMValueRef base = LLVMGetParam(arr, isin ? 0 : 1);
        LLVMValueRef idx = LLVMConstInt(i64, (unsigned long long)(isin ? i : i - p->nin), 0);
        cargs[i] = LLVMBuildLoad2(B, E->ptr, LLVMBuildGEP2(B, E->ptr, base, &idx, 1, ""), "");
    }
    cargs[n - 1] = LLVMGetParam(arr, 3);
    LLVMBuildRet(B, LLVMBuildCall2(B, rft, run, cargs, (unsigned)n, ""));
    free(cargs);
    free(params);
    free(addr);
    free(use);
}

kn_status kn_llvm_build_module(kn_ctx *cx, const kn_kprog *p, LLVMContextRef ctx,
                               const void *const *weights, kn_par_for par_for, LLVMModuleRef *out) {
    return kn_llvm_build_module_profiled(cx, p, ctx, weights, par_for, NULL, NULL, out);
}

static kn_status build_module(emit *E0, kn_ctx *cx, const kn_kprog *p, LLVMContextRef ctx,
                              const void *const *weights, kn_par_for par_for,
                              const kn_profile *prof, LLVMModuleRef *out);

kn_status kn_llvm_build_module_profiled(kn_ctx *cx, const kn_kprog *p, LLVMContextRef ctx,
                                        const void *const *weights, kn_par_for par_for,
                                        const kn_profile *prof, const char *jit_features,
                                        LLVMModuleRef *out) {
    emit E = {.jit_features = jit_features};
    return build_module(&E, cx, p, ctx, weights, par_for, prof, out);
}

kn_status kn_llvm_build_module_releasing(kn_ctx *cx, kn_kprog *p, LLVMContextRef ctx,
                                         const size_t *blob_off, const char *blob_symbol,
                                         LLVMModuleRef *out) {
    emit E = {.release = p, .blob_off = blob_off, .blob_symbol = blob_symbol};
    return build_module(&E, cx, p, ctx, NULL, NULL, NULL, out);
}

static kn_status build_module(emit *E0, kn_ctx *cx, const kn_kprog *p, LLVMContextRef ctx,
                              const void *const *weights, kn_par_for par_for,
                              const kn_profile *prof, LLVMModuleRef *out) {
    if (p->nregions) /* the entry point takes one arena */
        return kn_diag(cx, NULL, KN_EINVAL,
                       "--memory (several arena regions) is for the C backend only, not LLVM");
    emit E = *E0;
    E.cx = cx;
    E.p = p;
    E.weights = weights;
    E.jit = weights != NULL;
    E.par_for = par_for;
    E.prof = prof && prof->hook ? prof : NULL;
    E.ctx = ctx;
    E.mod = LLVMModuleCreateWithNameInContext(p->name, ctx);
    E.b = LLVMCreateBuilderInContext(ctx);
    E.ptr = LLVMPointerTypeInContext(ctx, 0);
    E.vars = calloc((size_t)p->nvars + 1, sizeof *E.vars);
    E.bufs = calloc((size_t)p->nbufs + 1, sizeof *E.bufs);
    E.globals = calloc((size_t)p->nbufs + 1, sizeof *E.globals);
    E.kfn = calloc((size_t)p->nkernels + 1, sizeof *E.kfn);
    E.kfn_of = calloc((size_t)p->nkernels + 1, sizeof *E.kfn_of);
    KN_ASSERT(E.vars && E.bufs && E.globals && E.kfn && E.kfn_of);
    build_weights(&E);
    for (int k = 0; k < p->nkernels; k++) {
        build_kernel(&E, k);
        kn_event_emit(cx, &(kn_event){.kind = KN_EVENT_KERNEL,
                                      .name = "building LLVM IR",
                                      .done = k + 1,
                                      .total = p->nkernels});
    }
    build_entries(&E);
    LLVMDisposeBuilder(E.b);
    free(E.vars);
    free(E.bufs);
    free(E.globals);
    free(E.kfn);
    free(E.kfn_of);
    char *msg = NULL;
    if (LLVMVerifyModule(E.mod, LLVMReturnStatusAction, &msg)) {
        kn_diag(cx, NULL, KN_EINTERNAL, "generated LLVM IR does not verify: %.300s",
                msg ? msg : "");
        LLVMDisposeMessage(msg);
        LLVMDisposeModule(E.mod);
        return cx->status;
    }
    LLVMDisposeMessage(msg);
    *out = E.mod;
    return KN_OK;
}
