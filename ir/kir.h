/* The kernel IR: loop nests over buffers, the level every code generator reads.
 *
 * A kn_kprog is what a model compiles to: buffers (graph inputs and outputs,
 * constant weights, arena temporaries with planned offsets) and a sequence of
 * kernels, one per lowered node, each a statement tree:
 *
 *   for i0 in [0, 16):           KS_FOR, with annotations (vectorize, unroll, parallel)
 *     acc = 0.0f                  KS_DECL of a scalar local
 *     for i1 in [0, 64):
 *       acc = fma(x[i1], w[i0*64 + i1], acc)      KS_SET, loads, expression tree
 *     y[i0] = max(acc + b[i0], 0.0f)              KS_STORE
 *
 * Expressions are typed trees (kn_kx): constants, variables (loop indices and scalar
 * locals share one id space), loads, arithmetic, math functions, comparisons,
 * select, casts and fused multiply-add. Index expressions are i64. Buffers are flat
 * (row-major element offsets); shapes are kept for printing and for passes.
 *
 * Vectors: an expression or scalar local may have `lanes` > 1. A vector load reads
 * buf[index .. index+lanes) and a vector store writes that range; a scalar operand of
 * a vector operation is broadcast to every lane; KX_LANE reads one lane of a vector
 * local. A vector KS_SET must not read other lanes of the variable it assigns (the C
 * emitter assigns lane by lane). Lowerings choose vector widths from the target
 * (kl_lanes); the emitters map them to SIMD types (LLVM) or to per-lane loops (C).
 *
 * Strings: a KN_STRING buffer holds one `const char *` (NUL-terminated UTF-8) per
 * element; loading one gives a string value, which scalar locals may hold and stores
 * may write (the pointer, not the characters). KX_BYTE reads a byte through a string
 * value (only up to and including its NUL); KX_STR makes a string value pointing
 * into a u8 buffer of character storage (kl_string_storage), which lowerings fill
 * with byte stores. String work (parsing, formatting, case mapping) is ordinary loops
 * over these, so every emitter gets it from one lowering. A kernel that cannot
 * finish (a string longer than its storage) sets the program's status word
 * (kl_fail): NAME_run returns it after the last kernel. OpenCL runs the kernels that
 * touch strings on the host (codegen/opencl, kn_opencl_on_host).
 *
 * Everything lives in the program's arena. Optimizations to come (split, reorder,
 * fuse, unroll, vectorize, register tiles) are rewrites of this tree driven by the
 * target, not emitter code; the emitters (codegen/c, later llvm and opencl) print
 * or build exactly what the tree says.
 *
 * Lowering: each op's `lower` function (ir/lower/GROUP.c, registered like the op's
 * interpreter functions) appends statements through the builder below, which keeps
 * a stack of open blocks so lowering code reads like the C it produces. */
#ifndef KN_KIR_H
#define KN_KIR_H

#include "ir/ops.h"

struct kn_target;

/* ---- expressions ---- */

/* clang-format off */
#define KN_KX_UNARY(X)                                                                             \
    X(NEG, "neg") X(ABS, "abs") X(NOT, "not") X(BNOT, "bnot") X(SQRT, "sqrt") X(EXP, "exp")       \
    X(LOG, "log") X(TANH, "tanh") X(ERF, "erf") X(SIN, "sin") X(COS, "cos") X(TAN, "tan")         \
    X(ASIN, "asin") X(ACOS, "acos") X(ATAN, "atan") X(SINH, "sinh") X(COSH, "cosh")               \
    X(ASINH, "asinh") X(ACOSH, "acosh") X(ATANH, "atanh") X(FLOOR, "floor") X(CEIL, "ceil")       \
    X(ROUND, "round") /* half to even */ X(TRUNC, "trunc") X(ISNAN, "isnan") X(ISINF, "isinf")

#define KN_KX_BINARY(X)                                                                            \
    X(ADD, "+") X(SUB, "-") X(MUL, "*") X(DIV, "/") X(MOD, "%") /* C remainder */                \
    X(FMOD, "fmod") X(POW, "pow") X(MIN, "min") X(MAX, "max") X(AND, "&") X(OR, "|") X(XOR, "^") \
    X(SHL, "<<") X(SHR, ">>") X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=") X(EQ, "==")           \
    X(NE, "!=") X(LAND, "&&") X(LOR, "||") X(LDEXP, "ldexp") /* a * 2^b, b integral float */
/* clang-format on */

typedef enum kn_kx_op {
    KX_CONST, /* i (integer dtypes, bool) or f (floats) */
    KX_VAR,   /* loop index or scalar local `var` */
    KX_LOAD,  /* buf[a[0]] */
#define X(id, s) KX_##id,
    KN_KX_UNARY(X) KN_KX_BINARY(X)
#undef X
        KX_SELECT, /* a[0] ? a[1] : a[2] */
    KX_CAST,       /* a[0] converted to dtype (float->int truncates, as C); i = 1: a float
                      known to lie in the integer dtype's range (kx_cast_inrange) */
    KX_FMA,        /* a[0] * a[1] + a[2] */
    KX_LANE,       /* lane i of vector variable a[0] (a KX_VAR) */
    KX_BYTE,       /* byte a[1] of string a[0], as u8 (see "Strings" below) */
    KX_STR,        /* the string starting at buf[a[0]] (buf: u8 character storage) */
    KX_DOT,        /* integer dot product of packed words (kn_dot i, below) */
    KX_UNPACK16,   /* two bytes of an i32 word widened into its 16-bit halves (below) */
    KX_SAT,        /* an i32 saturated to the range of a narrower integer (below) */
    KX_CVTRN,      /* an f32 rounded half to even into a saturated i32, NaN 0 (below) */
    KX_QADD,       /* the saturating sum of two i32 (below) */
    KX_REGEX,      /* a POSIX ERE compiled into, matched with or freed from buf (below) */
    KX_OP_COUNT
} kn_kx_op;

typedef struct kn_kx {
    kn_kx_op op;
    kn_dtype dtype; /* of the result; comparisons give KN_BOOL; never f16/bf16 (loads
                       of those widen to f32, stores narrow), never a narrow type (a
                       float8 load is its u8 code, a 4-bit one an i8/u8: see
                       kx_compute_dtype and ir/lower/narrow.c) */
    int lanes;      /* > 1: a vector of that many lanes (see "Vectors" below), else scalar */
    int stride;     /* KX_LOAD of lanes > 1: > 1 for a strided (deinterleaving) load of
                       buf[a[0] + k * stride], k in [0, lanes) (kx_vload_strided); else 0 */
    struct kn_kx *a[3];
    int64_t i;
    double f;
    int var;
    kn_kbuf *buf;
    const char *text; /* KX_REGEX: the pattern (in the program's arena), else NULL */
} kn_kx;

/* KX_DOT: a[0] + the dot product of the narrow integers packed in the 32-bit words
 * a[1] and a[2], lane by lane, all i32 (a scalar operand broadcasts). The kind, in i
 * (kn_dot of targets/target.h), says how the words are split, low part first:
 *
 *   KN_DOT_S16X2:  a[0] + lo16s(a1)*lo16s(a2) + hi16s(a1)*hi16s(a2)    (pmaddwd, SMLAD)
 *   KN_DOT_U8S8X4: a[0] + sum_k byte_k(a1) as u8 * byte_k(a2) as s8     (vpdpbusd)
 *   KN_DOT_S8S8X4: a[0] + sum_k byte_k(a1) as s8 * byte_k(a2) as s8     (sdot)
 *   KN_DOT_S16X2X: a[0] + lo16s(a1)*hi16s(a2) + hi16s(a1)*lo16s(a2)    (SMLADX)
 *   KN_DOT_S8X16:  a reduction, not lane by lane: a[0] (one i32) + the sum over the 16
 *                  bytes of a1 and a2, 4-lane i32 vectors, as s8 x s8; one lane
 *                                                                      (vmladava.s8)
 *
 * with the sums wrapping modulo 2^32. These are exactly the target instructions, which
 * the emitters use where the target has them and expand otherwise (the C emitter's
 * scalar helper, LLVM's widening multiplies), so every expansion gives the same bits. */
kn_kx *kx_dot(kn_lower *L, int kind, kn_kx *acc, kn_kx *a, kn_kx *b);

/* KX_UNPACK16: bytes `odd` and 2 + `odd` of the i32 word a (four 8-bit values, low
 * byte first), each sign-extended (unsig false) or zero-extended to 16 bits, in the low
 * and high halves of an i32 word: a word of two 16-bit parts for KN_DOT_S16X2. i holds
 * odd | unsig << 1. Arm's SXTB16/UXTB16 (with ROR #8 for the odd bytes), which the
 * emitters use where the target has the DSP extension, and expand otherwise. */
kn_kx *kx_unpack16(kn_lower *L, kn_kx *a, bool odd, bool unsig);

/* KX_SAT: the scalar i32 a clamped to the range of a signed (unsig false) or unsigned
 * integer of `bits` bits (8 or 16): [-2^(bits-1), 2^(bits-1) - 1] or [0, 2^bits - 1], an
 * i32. i holds bits | unsig << 5. Arm's SSAT/USAT (Armv6 and the M4's DSP cores), which
 * the emitters use where the target has them and expand otherwise (a compare and select
 * for each bound); the clamp of min/max is 7 instructions on the M4, which GCC 12 does
 * not turn into SSAT itself. */
kn_kx *kx_sat(kn_lower *L, kn_kx *a, int bits, bool unsig);

/* KX_CVTRN: the f32 a (scalar or vector) rounded to the nearest integer, ties to even,
 * as an i32 of a's lanes, saturated: INT32_MIN below the range, INT32_MAX above it (and
 * for +inf), 0 for NaN. Exactly the conversion of the Arm FPU's VCVTR.S32.F32 under the
 * default FPSCR (round to nearest even) and of Helium's VCVTN.S32.F32, which the emitters
 * use where the target has them (kn_target.cvt_rne) and expand otherwise (a compare for
 * NaN and each bound around a rounding and a conversion). */
kn_kx *kx_cvtrn(kn_lower *L, kn_kx *a);

/* KX_QADD: the scalar i32 a + b saturated to int32's range (computed exactly, then clamped).
 * Arm's QADD (the M4's DSP cores), which the emitters use where the target has it
 * (__ARM_FEATURE_DSP in C, llvm.sadd.sat, OpenCL's add_sat) and expand otherwise. */
kn_kx *kx_qadd(kn_lower *L, kn_kx *a, kn_kx *b);

/* KX_REGEX: the C library's <regex.h> on a regex_t held in u8 buffer `re` (at least
 * KN_REGEX_T_BYTES bytes of arena; a hosted target: refused on microcontrollers), an
 * i32, with the kind in i >> 1:
 *   KN_RX_COMPILE: regcomp(re, posix, REG_EXTENDED | REG_NOSUB, REG_ICASE if i & 1):
 *                  0, or -1 if it fails (out of memory); `posix` in text;
 *   KN_RX_MATCH:   1 if string a[0] matches the compiled pattern (regexec), else 0;
 *   KN_RX_FREE:    regfree(re), 0.
 * The pattern is compiled twice: in the C locale into the regex_t at byte 0 of `re`,
 * which matches the strings that are all ASCII (glibc's byte matcher: several times
 * faster), and with LC_CTYPE KN_REGEX_LOCALE (ir/regex.h) into the one at byte
 * KN_REGEX_UTF8_AT, which matches the others with the thread's locale set to that one
 * (uselocale) for the call. The compile makes the locale (newlocale; NULL where it does
 * not exist, which keeps the thread's) and keeps it at byte KN_REGEX_LOCALE_AT; the
 * free frees all three.
 * RegexFullMatch compiles once per run, matches each element, then frees. */
enum { KN_RX_COMPILE, KN_RX_MATCH, KN_RX_FREE };
#define KN_REGEX_T_BYTES 256
#define KN_REGEX_UTF8_AT 120
#define KN_REGEX_LOCALE_AT 248
kn_kx *kx_regex(kn_lower *L, int kind, kn_kbuf *re, kn_kx *s, const char *posix, int flags);

/* ---- statements ---- */

typedef enum kn_ks_kind {
    KS_BLOCK,    /* body[0..n) in order */
    KS_FOR,      /* for var in [0, extent): body */
    KS_STORE,    /* buf[index] = value */
    KS_DECL,     /* dtype var = value (a scalar local, visible to the rest of the block) */
    KS_SET,      /* var = value */
    KS_IF,       /* if (cond) body[0] else body[1] (body[1] may be NULL) */
    KS_WHILE,    /* while (cond) body[0] */
    KS_COPY,     /* memcpy(buf + index, src + src_index, count elements) */
    KS_PREFETCH, /* a hint: buf[index] (one element) is read soon; no effect on any value */
} kn_ks_kind;

/* Loop annotations, set by schedule passes and read by emitters. */
enum {
    KN_LOOP_PARALLEL = 1 << 0,  /* iterations are independent */
    KN_LOOP_VECTORIZE = 1 << 1, /* `width` lanes */
    KN_LOOP_UNROLL = 1 << 2,    /* by `width` */
    KN_LOOP_WHOLE = 1 << 3,     /* parallel: split across threads as it stands, no loop inside
                                   it collapsed into it (the lowering chose which iterations,
                                   and so which data, each thread gets) */
};

typedef struct kn_ks kn_ks;
struct kn_ks {
    kn_ks_kind kind;
    int var;        /* FOR, DECL, SET */
    kn_dtype dtype; /* DECL */
    int64_t extent; /* FOR: trip count (static) */
    kn_kx *ext;     /* FOR: trip count as an expression when not static, else NULL */
    unsigned annot; /* FOR: KN_LOOP_*; DECL: 1 + the first of the consecutive FPU registers
                       a register block is held in (kl_decl_block), 0: none */
    int width;      /* FOR: vector width or unroll factor; DECL: lanes of the local */
    int tasks;      /* FOR marked KN_LOOP_PARALLEL: tasks a CPU splits it into (passes/
                       parallel.c; <= 1: run it on the calling thread) */
    kn_kbuf *buf;   /* STORE, COPY */
    kn_kbuf *src;   /* COPY */
    bool word;      /* STORE: a word store (kl_store_word): value a scalar i32, buf 8-bit */
    int stride;     /* STORE of a vector value: > 1 for a strided (scattering) store of lane k
                       to buf[index + k * stride] (kl_store_strided); else 0 */
    kn_kx *index, *value, *cond, *src_index, *count;
    int n, cap; /* BLOCK, IF (2), WHILE (1) */
    kn_ks **body;
};

/* ---- buffers and programs ---- */

typedef enum kn_kbuf_kind {
    KB_INPUT,   /* graph input: a parameter of the entry point */
    KB_OUTPUT,  /* graph output: a parameter of the entry point */
    KB_CONST,   /* weights: static const data */
    KB_TEMP,    /* intermediate tensor in the arena, at `offset` */
    KB_SCRATCH, /* a kernel's private temporary in the arena, live only in that kernel;
                   per_thread: one copy per thread (below) */
} kn_kbuf_kind;

struct kn_kbuf {
    int id;
    const char *name; /* C identifier chosen by the program (unique) */
    const char *onnx; /* ONNX value name, for comments; may be NULL */
    kn_kbuf_kind kind;
    kn_dtype dtype;
    int rank;
    int64_t dims[KN_MAX_RANK];
    int64_t numel;
    int io;                /* position among the inputs or outputs */
    const kn_tensor *data; /* KB_CONST */
    size_t offset;         /* KB_TEMP / KB_SCRATCH (and KB_INPUT / KB_OUTPUT when the program's
                              io_in_arena): byte offset in the arena (memory plan) */
    kn_kbuf *alias;        /* KB_TEMP sharing another buffer's storage (in-place), or NULL */
    size_t alias_at;       /* with alias: bytes from alias's start to this buffer's (a Concat
                              input placed in its part of the output, passes/plan.c); else 0 */
    bool whole_run;        /* KB_TEMP live from its first use to the end of the run (string
                              character storage, the status word): never reused */
    int first, last;       /* kernels that define and last use it (memory plan) */
    kn_kbuf *view;         /* a band view (passes/views.c): no kernel touches this buffer any
                              more; its element i is view's element (i / view_plane) *
                              view_stride + i % view_plane + view_base (a band of rows of
                              every channel), where the kernels now address it */
    int64_t view_plane, view_stride, view_base;
    int region; /* memory region of the arena storage (kn_kprog.nregions; else 0) */
    /* KB_SCRATCH only: task-private storage, one copy per thread of the program (kn_kprog.
     * threads), each kn_kbuf_thread_stride(b) bytes after the previous. Inside the task
     * of a split parallel loop the buffer's element i is element i of the copy of the
     * thread running the task (the pool's thread index, runtime/kn_pool.h); elsewhere
     * (serial code, the C backend, firmware) of copy 0. Whatever a task writes into it is
     * dead when the task ends: a task may read only what it wrote itself (kverify cannot
     * check this; the pass that builds it states it). copies: how many the plan holds,
     * kn_kprog.threads (at least 1) when the buffer was made (kl_scratch_thread). */
    bool per_thread;
    int copies;
    size_t thread_stride; /* per_thread: bytes from one thread's copy to the next's, set by
                             the plan (0: the copy's bytes, rounded up; passes/plan.c) */
};

/* A contraction kernel, described by its lowering so that schedule passes can rebuild
 * it (passes/tile.c) without reading the graph. The lowering's own loop nest computes
 * exactly this; a pass may replace it by any nest that does too.
 *
 *   conv:   y[b][mo][oy][ox] = epi(bias[mo] + sum over ci < c/group, ky, kx of
 *             x[b][g*c/group + ci][oy*sh + ky*dh - ph][ox*sw + kx*dw - pw] * w[mo][ci][ky][kx])
 *           with g = mo / (m/group), reads outside the input being 0 (1-D: h = oh = kh = 1)
 *   matmul: y[r][j] = epi(alpha * sum_k a(r, k) * b(k, j) + beta * bias[j]) over the rows r of
 *           every batch, a(r, k) = x[r*K + k] (ta: x[k*M + r]), b(k, j) = w[k*N + j]
 *           (tb: w[j*K + k])
 *   batched matmul (batch > 1: B differs between batches, as in attention): y holds
 *           `batch` matrices of M x N one after another; batch i is the product above
 *           with x and w read from xoff(i) and woff(i) on, where i written in the batch
 *           dims bdims[0..nbd) (row-major) has coordinates c_d and xoff(i) = sum c_d *
 *           xbs[d], woff(i) = sum c_d * wbs[d] (a stride 0 where that operand broadcasts).
 *           batch 0 or 1: one matrix product; A's batches, if any, are folded into M.
 *
 * epi is the kernel's fused epilogue; its operands are buffers read at y's position.
 *
 * Layout: x[b][c][iy][ix] and y[b][mo][oy][ox] above are logical; where their elements
 * are is given by element strides along (batch, channel, row, column), xs and ys. All
 * zero (every lowering but a channels-last Conv's) means dense channels-first (NCHW);
 * a Conv that reads or writes NHWC (kn.layout, passes/layout.c) sets them, e.g. x NHWC:
 * xs = {h*w*c, 1, w*c, c}. Epilogue operands still broadcast against the logical
 * (channels-first) output shape. kn_contract_strides gives the strides in force; a pass
 * that addresses only dense NCHW tests kn_contract_nchw and leaves the plain nest.
 *
 * Integer contractions (x and w of an 8-bit integer dtype: ConvInteger, MatMulInteger,
 * QLinearConv, QLinearMatMul) subtract zero points from both operands and accumulate
 * the products exactly (the reference's int64; int32 suffices while K * 255 * 255 fits):
 *
 *   acc[col] = sum (x - xz[0]) * (w - wz[col or 0])  (+ bias[col], an int32 buffer)
 *   y = acc (i32: the *Integer ops), or with yscale set (the QLinear ops)
 *   y = saturate(nearbyint(acc * ((xscale[0] * wscale[col or 0]) / yscale[0])) + yz[0])
 *
 * computed in double as the ONNX reference (ir/lower/quant.c, the interpreter) does.
 * xz, wz, yz may be NULL (zero). */
typedef enum kn_contract_kind { KN_CONTRACT_CONV = 1, KN_CONTRACT_MATMUL } kn_contract_kind;

struct kn_epilogue;
typedef struct kn_contract {
    kn_contract_kind kind;
    kn_kbuf *x, *w, *bias, *y; /* bias may be NULL */
    /* conv */
    int nsp;
    int64_t n, c, m, group;
    int64_t h, w_, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, peh, pew; /* pe: end pads */
    int64_t xs[4], ys[4]; /* element strides along (n, c, h, w); all 0: NCHW (see above) */
    /* matmul */
    int64_t M, K, N; /* M: rows of all batches */
    bool ta, tb;
    double alpha, beta;
    int nbd; /* batched matmul (see above): batch dims, their extents */
    int64_t batch, bdims[KN_MAX_RANK], xbs[KN_MAX_RANK], wbs[KN_MAX_RANK];
    const struct kn_epilogue *epi; /* NULL: none */
    kn_kbuf *operand[8];           /* epi->s[k]'s operand buffer, or NULL */
    /* integer contractions (see above); all NULL for float ones */
    kn_kbuf *xz, *wz, *xscale, *wscale, *yscale, *yz;
    bool fixed; /* requantized in fixed point (ir/requant.h), else as ONNX in double */
    bool clamp; /* fixed point: outputs clamped to [clo, chi] (KN_CLAMP_ATTR, a folded Relu) */
    int64_t clo, chi;
    /* epilogue operands of y's full NCHW size ([n][m][oh'][ow'] of the image) addressed as
       the flat pixels of this contract's oh x ow (a 1x1 convolution over the image's
       pixels regrouped into rows of another width, passes/tile.c pw_channels_last) */
    bool epi_flat;
} kn_contract;

/* Whether d is an integer contraction (8-bit operands, exact accumulation). */
static inline bool kn_contract_is_int(const kn_contract *d) {
    return d->x->dtype == KN_U8 || d->x->dtype == KN_I8;
}

/* The element strides of a conv's x and y along (batch, channel, row, column) (1-D: the
 * row stride is unused): d->xs / d->ys, or the dense NCHW ones where those are 0. */
static inline void kn_contract_strides(const kn_contract *d, int64_t *xs, int64_t *ys) {
    int64_t xd[4] = {d->c * d->h * d->w_, d->h * d->w_, d->w_, 1};
    int64_t yd[4] = {d->m * d->oh * d->ow, d->oh * d->ow, d->ow, 1};
    for (int i = 0; i < 4; i++) {
        xs[i] = d->xs[3] ? d->xs[i] : xd[i];
        ys[i] = d->ys[3] ? d->ys[i] : yd[i];
    }
}
/* Whether a conv's x and y are both dense NCHW. */
static inline bool kn_contract_nchw(const kn_contract *d) {
    int64_t xs[4], ys[4];
    kn_contract_strides(d, xs, ys);
    return xs[3] == 1 && xs[2] == d->w_ && xs[1] == d->h * d->w_ && ys[3] == 1 && ys[2] == d->ow &&
           ys[1] == d->oh * d->ow;
}

/* A kernel's schedule: the choices kernel passes made for it, written by
 * --dump-schedule and read back by --schedule (passes/schedule.c). 0: not chosen. */
typedef struct kn_sched {
    int tile_rows, tile_vecs, lanes; /* register tile: rows x vectors of lanes */
    int tasks;  /* tasks the outermost parallel loop is split into (1: run it sequentially) */
    int wg;     /* OpenCL work-group size along the innermost dimension */
    int pad;    /* convolution padding: 1 inside the kernel, 2 through a padded copy, 3 float
                   tiles over x in place with zeroed taps (passes/tile.c ztap); Winograd
                   chunks: 1 each chunk pads the rows it reads (passes/winograd.c) */
    int dot;    /* integer tiles: the KX_DOT kind they use (kn_dot, targets/target.h) */
    int split;  /* s16x2 dot tiles on microcontrollers: 1 input words split by KX_UNPACK16
                   (passes/tile.c, kt_tile.split), 2 channel pairs built per step, 3 pairs
                   of kernel columns (kt_tile.cpair), 4 input words pre-split into i64
                   pairs of halves with i64 weight pairs (kt_tile.xpre, wpair): pointwise per
                   tile of pixels, a windowed convolution's once per run; an integer stem's
                   pixel tiles on CPUs, or its pair tiles on SMLAD microcontrollers
                   (tile_stem_pairs): 5 words of a kernel row's merged (channel, column)
                   values (kt_tile.ckx), another value the words of channels a tap */
    int fblock; /* float matrix-vector tiles in FPU register blocks (passes/tile.c,
                   mm_fblock): inputs a block load; 1 in a schedule file: the scalar tiles */
    int wino;   /* 3x3 convolutions: Winograd output tile m (2, 4: F(m x m, 3 x 3), passes/
                   winograd.c), or 1 in a schedule file: the direct convolution */
    int wchunk; /* Winograd: tiles in a chunk of the one-loop form over per-thread scratch
                   (passes/winograd.c, its biggest chunk), or 1 in a schedule file: the
                   three-pass form over arena scratch; another value there: at most that
                   many tiles a chunk */
    int wcob;   /* Winograd's chunked form: output channels in a block of a chunk's
                   products and output transforms (passes/winograd.c; rounded down to a
                   multiple of the product tile's columns), 1 in a schedule file: blocks
                   sized from the L2; 0: every channel in one block (the default) */
    int pf;     /* dot tiles over a padded copy and float windowed tiles: 1 the next block of
                   output channels' packed weights prefetched (passes/tile.c, conv_pf), or 2 in
                   a schedule file: not */
    int span;   /* float windowed tiles: 1 each tile takes tile_rows consecutive pixels of
                   the output plane, spanning rows (passes/tile.c, conv_plane), or 2 in a
                   schedule file: tiles of one output row */
    int mc;     /* float matrix tiles with a constant B: rows a block, run over every block
                   of columns of a group before the next (passes/tile.c, mm_groups; only
                   from a schedule file); 0: not grouped */
    int serp;   /* float matrix tiles with a constant B: 1 the full blocks of columns in pairs,
                   the second's tiles of rows last to first (passes/tile.c, mm_serp; 1 in a
                   schedule file: wherever the tiles allow it), or 2 in a schedule file: in
                   order */
    int xpf;    /* float pointwise channel tiles: each reduction step prefetches x this many
                   pixels ahead (passes/tile.c, pw_xpf), or 1 in a schedule file: not */
    int tblock; /* Transposes whose output's last axis reads the input across rows (and
                   another output axis its contiguous one): blocks of this many output
                   columns, that contiguous axis inside each block (ir/lower/tensor.c,
                   chosen by passes/rows.c), or 1 (also in a schedule file): the plain nest;
                   0: not such a Transpose */
    int smrows; /* Softmax row kernels (ir/lower/rows.c, chosen by passes/rows.c): rows a
                   step, 1 to KN_SOFTMAX_MAX_ROWS dividing the rows; 0: not a row kernel */
} kn_sched;

/* The most rows a step a Softmax row kernel takes (kn_sched.smrows). */
enum { KN_SOFTMAX_MAX_ROWS = 8 };

/* The defaults of kn_sched.tblock and smrows: what passes/rows.c chooses without a
 * schedule file, and what the lowerings build first (ir/lower/tensor.c, rows.c) so that
 * a program keeps its variable numbers where the pass changes nothing.
 * tblock: 16 output columns (one 64-byte line of f32) where the rows a block reads lie
 * 256 bytes apart or more and the blocks divide the cols in two or more, else 1 (the
 * plain nest); smrows: where the kernel has register tiles (not OpenCL), the most of 4,
 * 2 dividing the rows, else 1. */
static inline int kn_tblock_default(int64_t row_bytes, int64_t cols) {
    return row_bytes >= 256 && cols > 16 && cols % 16 == 0 ? 16 : 1;
}
static inline int kn_smrows_default(bool register_tiles, int64_t rows) {
    return !register_tiles ? 1 : rows % 4 == 0 ? 4 : rows % 2 == 0 ? 2 : 1;
}

typedef struct kn_kernel {
    const char *name; /* for comments: "node 'conv_3' (Conv)" */
    const kn_node *node;
    kn_ks *body;                 /* a BLOCK */
    const kn_contract *contract; /* what the kernel computes, if a contraction; else NULL */
    kn_sched sched;
    /* What the pass that built the kernel states about its accesses, for the plan's
     * in-place step (passes/plan.c); both false/NULL unless set:
     * disjoint: every element of each buffer the kernel stores into is stored by one
     *   statement in one iteration (no two stores, and no two iterations of one, write
     *   the same element);
     * staged_in/staged_out: staged_in is read only by copies into the kernel's scratch,
     *   and each such copy runs before any store to staged_out touches the elements it
     *   copied, at the same positions (a channel's plane, a band of rows of every
     *   channel), so staged_out may be written over staged_in's storage. */
    bool disjoint;
    kn_kbuf *staged_in, *staged_out;
    /* rows_out: a tensor the kernel's KN_LOOP_WHOLE loop writes in order of its rows (the
     * first task the first rows), through indices the parallel pass cannot follow (tile t's
     * row t / TW: Winograd's chunks of tiles); passes/parallel.c records that its split
     * advanced along y's rows, so a pooling after it is split into bands of rows. Or NULL. */
    kn_kbuf *rows_out;
    /* pass 'tuned' (passes/tuned.c): the kernel's workload key in the tuning table (a
     * contraction no earlier pass tiled), or NULL; and the table's entry for it, which pass
     * 'tile' reads where no schedule file gives the kernel, or NULL. Both in p->arena. */
    const char *workload;
    const kn_sched *tuned;
} kn_kernel;

typedef struct kn_kprog {
    kn_arena *arena;
    kn_arena *const_arena;          /* the graph's, holding the constants KB_CONST buffers borrow */
    bool release_constants;         /* free weights once nothing reads them (kn_kprog_rewritten):
                                       the graph is then used for its shapes only */
    const char *name;               /* entry point prefix, a C identifier */
    const struct kn_target *target; /* what the program is compiled for (resolved) */
    const struct kn_schedule *schedule; /* per-kernel schedule overrides, or NULL */
    const struct kn_tuned *tuning;      /* --tuning FILE: searched before the shipped table
                                           (passes/tuned.c), or NULL; borrowed */
    int nbufs, cap_bufs;
    kn_kbuf **bufs;
    int nin, nout;
    kn_kbuf **inputs, **outputs;
    int nkernels, cap_kernels;
    kn_kernel **kernels;
    int nvars;           /* variable ids are [0, nvars) */
    kn_dtype *var_dtype; /* dtype of each variable (loop indices are i64) */
    int *var_lanes;      /* lanes of each variable: 1 for scalars */
    int cap_vars;
    bool io_in_arena; /* --arena-in-place-io: the plan gives inputs and outputs arena
                         ranges too (input live from the start, output to the end); the
                         caller passes pointers into the arena at their offsets */
    /* --memory: the arena split into regions, fastest first (0: one arena). The plan puts
       each buffer in the first region it fits in, smallest buffers first. */
    int nregions;
    const char *region_name[KN_MAX_REGIONS];   /* C identifiers */
    size_t region_cap[KN_MAX_REGIONS];         /* bytes available */
    size_t region_size[KN_MAX_REGIONS];        /* bytes used (64-byte multiple), from the plan */
    size_t region_lower_bound[KN_MAX_REGIONS]; /* the region's largest total of live bytes */
    double region_traffic[KN_MAX_REGIONS]; /* estimated bytes its buffers' accesses move a run */
    double arena_traffic;                  /* the same over the whole arena */
    size_t arena_size;        /* bytes, from the memory plan (with regions: their sum) */
    size_t arena_lower_bound; /* largest total of simultaneously live bytes */
    kn_kbuf *status;          /* i32 status word (KB_TEMP, whole_run) or NULL: emitters
                                 zero it on entry and NAME_run returns it (kl_fail) */
    int ngroups;              /* sequence/optional inputs and outputs (kn_graph's) */
    kn_dtype weights;         /* kn_graph.weights: the format pass 'lowp' stores float32
                                 constants in (KN_F16, KN_BF16), or KN_UNDEF */
    const kn_iogroup *groups;
    int threads;    /* threads the program runs on (kn_compile_opts.threads; 0 or 1: one): the
                       copies of each per-thread scratch (kn_kbuf.per_thread) in the plan */
    int index_bits; /* 32: every loop index and every index expression built from loop
                       indices and int-sized constants stays within int32 (pass 'index',
                       for targets whose index_bits is 32): emitters may declare loop
                       indices as 32-bit integers. 0: they are i64. */
} kn_kprog;

#define KN_ARENA_ALIGN 64

/* ---- lowering ---- */

/* Lowers every node of g (which must have static shapes; shape,fold run first) into
 * a new program named `name`. Ops without a lowering, or values whose shape is not
 * static, are reported with the node and reason. Free with kn_kprog_destroy(). */
kn_status kn_lower_graph(kn_ctx *cx, const kn_graph *g, const char *name,
                         const struct kn_target *target, kn_kprog **out);
void kn_kprog_destroy(kn_kprog *p);
/* Whether b is constant data some kernel reads: what code generators emit (a constant
 * no kernel reads, such as weights a lowering repacked, is left out). */
static inline bool kn_kbuf_is_weight(const kn_kbuf *b) {
    return b->kind == KB_CONST && b->first >= 0;
}
/* Bytes of b's elements. */
static inline size_t kn_kbuf_bytes(const kn_kbuf *b) {
    return (size_t)b->numel * kn_dtype_get(b->dtype)->size;
}
/* A per-thread scratch's distance in bytes between the copies of two threads: the plan's
 * thread_stride, else its bytes rounded up to KN_ARENA_ALIGN (each copy on cache lines of
 * its own). */
static inline size_t kn_kbuf_thread_stride(const kn_kbuf *b) {
    if (b->thread_stride) return b->thread_stride;
    return (kn_kbuf_bytes(b) + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
}
/* Bytes of arena storage b takes in the plan: all its copies for a per-thread scratch. */
static inline size_t kn_kbuf_plan_bytes(const kn_kbuf *b) {
    return b->per_thread ? kn_kbuf_thread_stride(b) * (size_t)(b->copies > 1 ? b->copies : 1)
                         : kn_kbuf_bytes(b);
}
/* Bytes of the weights p's code carries (kn_kbuf_is_weight), without padding. */
size_t kn_kprog_weight_bytes(const kn_kprog *p);
/* The weights as one blob (a weights file, the JIT's copy, the OpenCL buffer): each
 * at a KN_ARENA_ALIGN-aligned offset, in buffer order. Sets offsets[buffer id] (0 for
 * the other buffers; p->nbufs entries) and returns the blob's size. */
size_t kn_kprog_weight_layout(const kn_kprog *p, size_t *offsets);
/* The buffer whose arena storage b uses: b itself, or the buffer it runs in place of. */
kn_kbuf *kn_kbuf_storage(const kn_kbuf *b);
/* Bytes from the start of b's storage (kn_kbuf_storage) to b: 0 but for a buffer placed
 * inside another (alias_at along the alias chain). */
size_t kn_kbuf_view_at(const kn_kbuf *b);
/* The arena offset of b's first byte (memory plan): its storage's offset plus
 * kn_kbuf_view_at(b). What emitters address a KB_TEMP or KB_SCRATCH buffer at. */
size_t kn_kbuf_arena_offset(const kn_kbuf *b);
/* Marks in use[buffer id] the buffers statement s touches: bit 1 read, bit 2 written. */
void kn_kernel_uses(const kn_ks *s, unsigned char *use);
/* Marks in v[var] the variables s declares (1: a loop index, 2: a local), and those it
 * reads or sets (kn_ks_used_vars, 1): a statement moved into a function of its own (a
 * parallel loop's task) takes the used ones it does not declare from outside. */
void kn_ks_declared_vars(const kn_ks *s, unsigned char *v);
void kn_ks_used_vars(const kn_ks *s, unsigned char *v);
/* Whether loop s runs as tasks on a pool of threads (the JIT's par_for, the generated C's
 * NAME_run_parallel): marked parallel, split by passes/parallel.c into more than one task,
 * of a constant extent above 1 that fits an i32. */
bool kn_ks_task_loop(const kn_ks *s);
/* The iterations of each task of such a loop, *ntasks how many tasks they make: as many as
 * the loop's tasks (at most its extent), none of them empty. */
int64_t kn_ks_task_chunk(const kn_ks *s, int64_t *ntasks);
/* Sets every buffer's first/last kernel from the statements that touch it (-1: none):
 * the lifetimes the memory plan places buffers by. String storage and the status
 * word live from their first use (the status word from the start) to the end. */
void kn_kprog_lifetimes(kn_kprog *p);
/* How many kernels read each of p's current buffers (p->nbufs counts, malloc'd), for
 * kn_kprog_rewritten; NULL unless p->release_constants. */
int *kn_kprog_readers(const kn_kprog *p);
/* After kernel k's body `old` was replaced by a pass (repacking its weights): the
 * buffers old read and the new body does not lose a reader, and a constant left with
 * none has its data freed (kn_kprog_release_data) so big weights are not held twice
 * while compiling. readers from kn_kprog_readers; NULL does nothing. */
void kn_kprog_rewritten(kn_kprog *p, int *readers, int k, const kn_ks *old);
/* Frees b's constant data if its arena holds it in a chunk of its own (p's arena, or
 * the graph's it borrows from, p->const_arena); b->data->data becomes NULL. The graph
 * then keeps that constant's shape, not its values. */
void kn_kprog_release_data(kn_kprog *p, kn_kbuf *b);
/* Like kn_kprog_release_data, but b's data is handed to the caller instead of freed:
 * returns its block (free with kn_arena_block_free(); the data stays at the address
 * b->data->data had, 64-byte aligned), or NULL where the data has no chunk of its own
 * (small constants), is gone, or b is no constant; b->data->data becomes NULL. */
void *kn_kprog_take_data(kn_kprog *p, kn_kbuf *b);

/* ---- walking and rewriting (ir/kwalk.c) ---- */

/* A visitor: enter is called on each statement before its children (return false to
 * skip them), leave after them, expr on every expression node of the statement (its
 * extent, index, value, condition, source index and count), children first. Any
 * callback may be NULL. Embed it as the first member of a larger context. */
typedef struct kn_kwalker kn_kwalker;
struct kn_kwalker {
    bool (*enter)(kn_kwalker *w, kn_ks *s);
    void (*leave)(kn_kwalker *w, kn_ks *s);
    void (*expr)(kn_kwalker *w, kn_kx *x);
};
void kn_kwalk(kn_kwalker *w, kn_ks *s);
/* The buffers a kernel body s moves data between, for passes that rebuild a plain kernel:
 * *y the one buffer it stores, *x the first buffer it loads and *x2 a second one (either
 * may be y itself), NULL where there is none. False where s stores two buffers, loads a
 * third or copies (KS_COPY). */
bool kn_kernel_io(kn_ks *s, kn_kbuf **x, kn_kbuf **x2, kn_kbuf **y);
/* x rebuilt bottom-up: each node (with its children already mapped) is passed to fn,
 * which returns its replacement or the node itself (fn NULL: identity). Nodes are
 * copied only where something below them changed; x itself is never modified. */
kn_kx *kn_kx_map(kn_kprog *p, kn_kx *x, kn_kx *(*fn)(void *user, kn_kx *x), void *user);
/* A deep copy of s in which every loop index and local declared inside s is a new
 * variable (references to variables declared outside s are kept). */
kn_ks *kn_ks_clone(kn_kprog *p, const kn_ks *s);
/* A new variable of dtype t (lanes wide) in p. */
int kn_kprog_new_var(kn_kprog *p, kn_dtype t, int lanes);
/* A new statement declaring local var = value (its dtype and lanes are var's). */
kn_ks *kn_ks_decl(kn_kprog *p, int var, kn_kx *value);
/* Inserts s into block at position at (0: first). */
void kn_block_insert(kn_kprog *p, kn_ks *block, int at, kn_ks *s);
/* Structural equality of two expressions (same variables, buffers and constants). */
bool kn_kx_equal(const kn_kx *a, const kn_kx *b);
/* Whether kernels a and b of p compute the same thing on their own buffers: equal
 * trees up to renaming variables and buffers, where the i-th buffer each touches (in
 * buffer id order, as kn_kernel_uses lists them) correspond and have equal dtypes.
 * Code generators emit one function for such kernels. */
bool kn_kernel_same(const kn_kprog *p, const kn_kernel *a, const kn_kernel *b);
/* Text form, for golden tests and --dump. */
void kn_kprog_print(const kn_kprog *p, void *file /* FILE * */);
/* Checks the program's invariants (ir/kverify.c): every variable read is a loop index
 * or a local in scope, every buffer belongs to p, constant indices are in bounds,
 * vector lanes and dtypes agree, loop extents are not negative. Reports the first
 * violation as KN_EINTERNAL naming the kernel. */
kn_status kn_kprog_verify(kn_ctx *cx, const kn_kprog *p);

/* An op's lower function (kn_lower_fn in ir/ops.h) gets in[i] / out[j] buffers,
 * NULL for omitted values; constant inputs are KB_CONST buffers whose data can be
 * read at lowering time (kl_const). */

kn_ctx *kl_ctx(kn_lower *L);
/* Constant data of input i at lowering time, or NULL if it is not a constant. */
const kn_tensor *kl_const(kn_lower *L, const kn_node *n, int i);
/* The target's vector width in lanes of dtype t (1: no SIMD, or no target), and how
 * many vector registers it has (an estimate when the target does not say). */
int kl_lanes(kn_lower *L, kn_dtype t);
int kl_vector_registers(kn_lower *L);
/* Whether the target's vector multiply-add reads a broadcast scalar from a general
 * register (kn_target.fma_scalar). */
bool kl_fma_scalar(kn_lower *L);
/* Whether to block loops into register tiles: true for CPU targets, false without a
 * target (OpenCL, where the parallel loops become work-items instead). */
bool kl_register_tiles(kn_lower *L);
/* A kernel-private temporary of numel elements (planned in the arena). */
kn_kbuf *kl_scratch(kn_lower *L, kn_dtype t, int64_t numel);
/* A per-thread scratch of numel elements (kn_kbuf.per_thread): each thread running a task
 * of one of the kernel's split parallel loops has a copy of its own, so tasks on different
 * threads never share its lines. For staging that a task fills and consumes itself. */
kn_kbuf *kl_scratch_thread(kn_lower *L, kn_dtype t, int64_t numel);
/* A constant table computed at lowering time (emitted as static const data): numel
 * elements of dtype t copied from data. A table with the same dtype and bytes as an
 * earlier one of the program is that one (weights shared by several nodes, packed the
 * same way, are emitted once); callers must not write to a table's data. */
kn_kbuf *kl_table(kn_lower *L, kn_dtype t, int64_t numel, const void *data);
/* kl_table for data computed in place: fill(ctx, data) writes the numel elements into
 * the table's own memory (zeroed before), so packed weights are written once and never
 * copied (compile time and memory of big models, #16). Shared as kl_table shares. */
typedef void (*kl_fill_fn)(const void *ctx, void *data);
kn_kbuf *kl_table_fill(kn_lower *L, kn_dtype t, int64_t numel, kl_fill_fn fill, const void *ctx);

/* Describes the kernel being built as a contraction (copied); ignored for a node lowered
 * inline into another's kernel (a subgraph's nodes), whose kernel holds more than it. */
void kl_contract(kn_lower *L, const kn_contract *c);
/* A builder on kernel k of p for a kernel pass that rebuilds it: the kernel's body is
 * replaced by an empty block the builder appends to. Free with kl_builder_destroy. */
kn_lower *kl_builder_rewrite(kn_ctx *cx, kn_kprog *p, int k);
/* The schedule a kernel pass asks a lowering for when it runs the op's lowering again on
 * a kl_builder_rewrite builder (passes/rows.c: kn_sched.tblock, smrows; borrowed, NULL:
 * the lowering's own provisional form), and the record of the kernel being built, where
 * the lowering writes what it built: NULL for a node lowered inline into another's
 * kernel (a subgraph's). */
void kl_want_sched(kn_lower *L, const kn_sched *s);
const kn_sched *kl_wanted_sched(kn_lower *L);
kn_sched *kl_sched_record(kn_lower *L);
/* A builder for expressions only (kx_*: no statements), for passes that rewrite
 * statements themselves. Free with kl_builder_destroy. */
kn_lower *kl_builder(kn_ctx *cx, kn_kprog *p);
void kl_builder_destroy(kn_lower *L);

/* Strings (see "Strings" above). Character storage of `bytes` bytes in the arena,
 * kept until the end of the run (the strings a run returns point into it). */
kn_kbuf *kl_string_storage(kn_lower *L, int64_t bytes);
/* Bytes of storage per new string element (NUL included) that lowerings may use when
 * a length is known only at run time: the graph's max_string_bytes, default
 * KN_MAX_STRING_BYTES. */
int64_t kl_max_string_bytes(kn_lower *L);
#define KN_MAX_STRING_BYTES 256
/* Status NAME_run returns when a string did not fit its storage. */
#define KN_STATUS_STRING_TOO_LONG 2
/* Status NAME_run returns when the inputs ask for a random op (training-mode Dropout
 * with a ratio above 0): compiled code keeps no random state. */
#define KN_STATUS_RANDOM 3
/* Status NAME_run returns when an If takes a branch that cannot run for the compiled
 * input shapes (kn_graph.invalid; the compiler warned about it). */
#define KN_STATUS_INVALID_BRANCH 4
/* Status NAME_run returns when RegexFullMatch's pattern could not be compiled at run
 * time (regcomp failed: out of memory). */
#define KN_STATUS_REGEX 5
/* Sets the program's status word to `status` (nonzero): NAME_run returns it. The
 * kernel goes on; what it writes afterwards is unspecified but in bounds. */
void kl_fail(kn_lower *L, int status);
/* saturate(nearbyint(v) + zp) in integer dtype t (NaN giving 0), computed in double as
 * the ONNX reference requantizes; zp may be NULL. Declares a local in the current
 * block. ir/lower/quant.c. */
kn_kx *kl_requant(kn_lower *L, kn_kx *v, kn_kx *zp, kn_dtype t);
/* The narrow types (ir/lower/narrow.c): the f32 value of float8 code `code` (a u8) of
 * dtype t; the u8 code of float8 dtype t for x (any float or integer), rounded to
 * nearest even, saturating or not as Cast's `saturate`; x clamped to 4-bit dtype t's
 * range and rounded half to even (NaN: 0), as t's compute dtype (i8/u8). The last two
 * declare locals in the current block. */
kn_kx *kl_f8_decode(kn_lower *L, kn_kx *code, kn_dtype t);
kn_kx *kl_f8_encode(kn_lower *L, kn_kx *x, kn_dtype t, bool saturate);
kn_kx *kl_to_4bit(kn_lower *L, kn_kx *x, kn_dtype t);
/* The fixed-point requantization of ir/requant.h: saturate(round_half_even(sat32(acc) *
 * mult / 2^shift) + zp) in integer dtype t, all in int64; acc is any integer, mult
 * and shift (kn_qmul's fields, e.g. loaded from tables) integers, zp may be NULL.
 * acc may be a vector (then mult, shift and zp scalars or vectors of its lanes; so
 * may kl_requant's v). Declares locals in the current block. ir/lower/quant.c. */
/* The fixed-point multipliers of ir/requant.h for the ncols columns of a contraction,
 * kn_qmul_scales(xs[0], ws[c or 0], ys[0]), as two i32 tables (*mult, *shift); false
 * (tables NULL) unless the three scales are constants. ir/lower/quant.c. */
bool kl_qmul_tables(kn_lower *L, const kn_kbuf *xs, const kn_kbuf *ws, const kn_kbuf *ys,
                    int64_t ncols, kn_kbuf **mult, kn_kbuf **shift);
kn_kx *kl_requant_fixed(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *shift, kn_kx *zp, kn_dtype t);
/* kl_requant_fixed saturating to [lo, hi] (within t's range) instead of t's range. */
kn_kx *kl_requant_fixed_range(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *shift, kn_kx *zp,
                              kn_dtype t, int64_t lo, int64_t hi);
/* The same for an i32 acc and shifts in [33, 62] (ir/requant.h kn_qmul_32bit), in 32-bit
 * arithmetic after one 32 x 32 -> 64 multiply; t32 is the shift minus 32.
 * ir/lower/requant32.c. */
kn_kx *kl_requant_fixed32(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *t32, kn_kx *zp, kn_dtype t);
/* For kl_requant_fixed32: on microcontrollers (32-bit), when every one of the ncols
 * columns' shifts is in [33, 62], the shifts minus 32 as an i8 table, which selects it;
 * else shift itself. ir/lower/requant32.c. */
kn_kbuf *kl_qmul_shift32(kn_lower *L, const kn_kbuf *mult, kn_kbuf *shift, int64_t ncols);
/* The high-word form of ir/requant.h (kn_qmul_hi32): min(max((hi + round) >> t, lo), hi_)
 * in integer dtype ty, hi the high word of the 64-bit product of acc (i32) and mult (the
 * zero point is in round); acc may be a vector, mult, round and t scalars or vectors of
 * its lanes. ir/lower/requant32.c. */
kn_kx *kl_requant_hi32(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *round, kn_kx *t, int64_t lo,
                       int64_t hi_, kn_dtype ty);
/* Fused epilogue e (ir/epilogue.h) applied to value v (scalar or vector);
 * operands[k] is step k's operand already loaded at v's position (NULL for steps
 * without one). ir/lower/epilogue.c. */
struct kn_epilogue;
kn_kx *kl_epilogue(kn_lower *L, const struct kn_epilogue *e, kn_kx *v, kn_kx *const *operands);
/* Softmax / LayerNormalization over the last axis as vector row kernels on CPU targets
 * (ir/lower/rows.c); false (nothing built) when the general lowering must do it. */
bool kl_softmax_rows(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out);
bool kl_layernorm_rows(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out);
/* x[...] broadcast (numpy rules) to output y's position given by one coordinate
 * expression per axis of y. */
kn_kx *kl_bcast_load(kn_lower *L, kn_kbuf *x, const kn_kbuf *y, kn_kx *const *coord);
/* Cast/CastLike with a string on one side (ir/lower/string.c). */
kn_status kl_cast_string(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out);
/* Equal on two string tensors (opset 19): their characters compared (ir/lower/string.c). */
kn_status kl_equal_string(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out);

/* Lowers the nodes of subgraph `body` (an If branch, a Loop body) inline into the
 * innermost open block: body input i reads buffer in[i]; afterwards body output j is
 * copied into out[j] (NULL entries skipped). Outer values stay visible. */
kn_status kl_subgraph(kn_lower *L, const kn_graph *body, kn_kbuf *const *in, kn_kbuf *const *out);

/* Statements: appended to the innermost open block. */
int kl_for(kn_lower *L, int64_t extent);  /* opens a loop; returns its index var */
int kl_for_x(kn_lower *L, kn_kx *extent); /* loop with a computed trip count */
void kl_end(kn_lower *L);                 /* closes the innermost loop/if/else/while */
void kl_if(kn_lower *L, kn_kx *cond);
void kl_else(kn_lower *L);
void kl_while(kn_lower *L, kn_kx *cond);
void kl_store(kn_lower *L, kn_kbuf *b, kn_kx *index, kn_kx *value);
/* A word store, the mirror of kx_load_word: the scalar i32 `word` into the 4 elements
 * b[index .. index + 4) of an 8-bit buffer b (u8 or i8), its low byte into b[index]
 * (little-endian), at any alignment. A KS_STORE with `word` set, so every walker that
 * follows a buffer's stores sees it; kn_ks_store_elems gives the elements it writes. The
 * C emitter prints a memcpy of 4 bytes on little-endian hosts (else the bytes shifted
 * out), LLVM an i32 store of alignment 1, OpenCL C the four bytes. */
void kl_store_word(kn_lower *L, kn_kbuf *b, kn_kx *index, kn_kx *word);
/* A strided store, the mirror of kx_vload_strided: lane k of the vector `value` into
 * b[index + k * stride] (stride >= 2). A KS_STORE with `stride` set; kn_ks_store_elems
 * gives its span. The C emitter prints it lane by lane, or as one scatter store where the
 * target has one (Helium: VSTRB.32 with an offset vector, KN_ST4BSS); LLVM one store a
 * lane. */
void kl_store_strided(kn_lower *L, kn_kbuf *b, kn_kx *index, kn_kx *value, int stride);
int kl_decl(kn_lower *L, kn_dtype t, kn_kx *init); /* new scalar local; returns its var */
/* A new vector local of `lanes` lanes (init may be scalar: broadcast). */
int kl_decl_vec(kn_lower *L, kn_dtype t, int lanes, kn_kx *init);
/* A register block: a vector local of `lanes` f32 lanes loaded by init (a vector load of
 * `lanes` consecutive elements) into the consecutive FPU registers reg .. reg + lanes - 1
 * with one instruction where the C compiler can be told so (VLDM; kn_target.fp_block).
 * Only its lanes are read (kx_lane). Blocks of one register range must not be live at
 * once: a later one overwrites an earlier one's registers. */
int kl_decl_block(kn_lower *L, int lanes, kn_kx *init, int reg);
void kl_set(kn_lower *L, int var, kn_kx *value);
void kl_copy(kn_lower *L, kn_kbuf *dst, kn_kx *dst_index, kn_kbuf *src, kn_kx *src_index,
             kn_kx *count);
/* A prefetch hint (KS_PREFETCH): the cache line holding b[index] will be read soon, so
 * start moving it towards the core (the second-level cache: a line a few thousand
 * instructions ahead). It reads no value and writes nothing; index must lie inside b
 * (the verifier checks it as a load's). C prints kn_prefetch (GCC/Clang's
 * __builtin_prefetch, nothing elsewhere and in OpenCL C), LLVM llvm.prefetch. */
void kl_prefetch(kn_lower *L, kn_kbuf *b, kn_kx *index);
/* Opens `rank` nested loops over dims; vars[d] receives each index var. */
void kl_for_shape(kn_lower *L, int rank, const int64_t *dims, int *vars);
/* Closes n loops. */
void kl_end_n(kn_lower *L, int n);

/* Expressions. Binary ops convert operands to a common dtype first (the wider float,
 * else the wider integer) except shifts and comparisons, which compare in that
 * common dtype and give bool. */
kn_kx *kx_int(kn_lower *L, int64_t v);              /* i64 constant */
kn_kx *kx_const(kn_lower *L, kn_dtype t, double v); /* of dtype t (float8: v's code) */
kn_kx *kx_var(kn_lower *L, int var);
kn_kx *kx_load(kn_lower *L, kn_kbuf *b, kn_kx *index);
kn_kx *kx_vload(kn_lower *L, kn_kbuf *b, kn_kx *index, int lanes); /* b[index .. +lanes) */
/* A strided (deinterleaving) vector load: lane k is b[index + k * stride], stride >= 2,
 * lanes >= 2. It reads only inside [index, index + (lanes - 1) * stride] (kx_load_elems).
 * LLVM builds it from full-width loads inside that span and shufflevectors; C and OpenCL
 * print it lane by lane. A stride-2 pool's interior (passes/pool.c). */
kn_kx *kx_vload_strided(kn_lower *L, kn_kbuf *b, kn_kx *index, int lanes, int stride);
/* A word load: the 4 elements b[index .. index + 4) of an 8-bit buffer b (u8 or i8) as one
 * i32, b[index] in its low byte (little-endian), at any alignment. A KX_LOAD with i = 4
 * (an element load has i = 0), so every walker that follows a buffer's loads sees it;
 * kx_load_elems gives the elements it reads. Arm's unaligned LDR (the M4's SMLAD operands
 * read 4 bytes at once, then KX_UNPACK16); the C emitter prints a memcpy of 4 bytes
 * (one LDR on Armv7-M) on little-endian hosts, else the bytes shifted together. */
kn_kx *kx_load_word(kn_lower *L, kn_kbuf *b, kn_kx *index);
/* A kept load: the scalar element b[index], a KX_LOAD with i = KX_LOAD_KEPT, to stay in the
 * loop it is written in although its value does not change there. A register tile reads
 * the few constants of its channel this way where holding them for the whole loop would
 * take more registers than the target has (passes/depthwise.c, the row words): a compiler
 * hoists invariant loads out of the loop and then spills them to the stack, a store and
 * a load where this is one load. The C emitter reads b through an empty asm (kn_keep),
 * which a compiler cannot see through; LLVM (which rematerializes loads itself) and
 * OpenCL print an ordinary load. The same value either way. */
enum { KX_LOAD_KEPT = 8 };
kn_kx *kx_load_kept(kn_lower *L, kn_kbuf *b, kn_kx *index);
/* A kept load of b[index] whose buffer pointer alone is kept (the C emitter: kn_keep(b) then
 * the whole index), so that the compiler, which cannot see b's contents through it, still
 * folds constant indices into the offsets of one pointer: the weights of a loop the C
 * compiler unrolls (passes/tile.c, kt_tile.wkept), whose constant values it would
 * otherwise read as literals, one word a load. Other emitters: an ordinary load. */
enum { KX_LOAD_KEPT_BASE = 16 };
kn_kx *kx_load_kept_base(kn_lower *L, kn_kbuf *b, kn_kx *index);
kn_kx *kx_lane(kn_lower *L, int var, int lane); /* one lane of a vector local */
kn_kx *kx_un(kn_lower *L, kn_kx_op op, kn_kx *a);
/* KX_ROUND of a whose value is known to be NaN or within [-2^22, 2^22] (i = 1): an
 * emitter may round an f32 by adding and subtracting 1.5 * 2^23 (exact there: the sum
 * lies in [2^23, 2^24), where float32's ulp is 1, and rounds half to even since 1.5 * 2^23
 * is even; the subtraction is exact). The value is the same as KX_ROUND's. */
kn_kx *kx_round_small(kn_lower *L, kn_kx *a);
kn_kx *kx_bin(kn_lower *L, kn_kx_op op, kn_kx *a, kn_kx *b);
/* a >> b (KX_SHR) where the lowering has proved b within [0, bits of a's dtype) (a
 * requantization's shift, kl_requant_hi32: [1, 30]): i = 1, printed `(a >>! b)`. KX_SHR
 * gives 0 for a shift of the width or more, so the emitters guard it (C's kn_shr_<t>
 * helper, LLVM's selects) and a caller that knows better masked it (b & 31, one AND on
 * the M4 where its shift register ignores nothing); with i = 1 C prints a plain `>>` and
 * LLVM a bare ashr/lshr. The same value where b is in range. */
kn_kx *kx_shr_inrange(kn_lower *L, kn_kx *a, kn_kx *b);
kn_kx *kx_select(kn_lower *L, kn_kx *c, kn_kx *a, kn_kx *b);
kn_kx *kx_cast(kn_lower *L, kn_dtype t, kn_kx *a);
/* A float a converted to integer dtype t where the lowering has proved a finite, not NaN
 * and inside t's range (a value it clamped itself, a bounded sum of small integers):
 * KX_CAST with i = 1, printed `t!(a)`. C and OpenCL print the plain C conversion (as
 * for every cast); LLVM then builds a bare fpto[su]i instead of the saturating
 * compares and selects it adds to other float casts (whose operand it cannot bound).
 * Where a is not a float or t not an integer, the plain kx_cast. */
kn_kx *kx_cast_inrange(kn_lower *L, kn_dtype t, kn_kx *a);
kn_kx *kx_fma(kn_lower *L, kn_kx *a, kn_kx *b, kn_kx *c);
/* A KX_FMA that every emitter computes fused, with one rounding (i = 1): C's fmaf/fma,
 * LLVM's llvm.fma, OpenCL's fma. kx_fma's may be a multiply and an add where the target
 * has no FMA; this one is for arithmetic whose exactness rests on the single rounding (an
 * exact residual a - q * b, passes/vmath.c). */
kn_kx *kx_fma_exact(kn_lower *L, kn_kx *a, kn_kx *b, kn_kx *c);
kn_kx *kx_byte(kn_lower *L, kn_kx *s, kn_kx *index);      /* KX_BYTE: u8 */
kn_kx *kx_str(kn_lower *L, kn_kbuf *chars, kn_kx *index); /* KX_STR: a string value */
/* Shorthands for the index arithmetic lowerings write most. */
static inline kn_kx *kx_add(kn_lower *L, kn_kx *a, kn_kx *b) {
    return kx_bin(L, KX_ADD, a, b);
}
static inline kn_kx *kx_sub(kn_lower *L, kn_kx *a, kn_kx *b) {
    return kx_bin(L, KX_SUB, a, b);
}
static inline kn_kx *kx_mul(kn_lower *L, kn_kx *a, kn_kx *b) {
    return kx_bin(L, KX_MUL, a, b);
}
/* sum_d vars[d] * strides[d] as an i64 expression (stride 0 terms are dropped). */
kn_kx *kx_offset(kn_lower *L, int rank, const int *vars, const int64_t *strides);
/* The element offset into buffer b for output index vars (rank orank, dims odims),
 * with numpy broadcasting of b's shape against the output shape. */
kn_kx *kx_bcast_offset(kn_lower *L, const kn_kbuf *b, int orank, const int64_t *odims,
                       const int *vars);
/* The dtype arithmetic on elements of t happens in: f16/bf16 widen to f32, the rest
 * stay (bool stays bool). */
kn_dtype kx_compute_dtype(kn_dtype t);
static inline int kx_lanes(const kn_kx *x) {
    return x->lanes > 1 ? x->lanes : 1;
}
/* The elements of its buffer store s (KS_STORE) writes, from its index on: its value's
 * lanes, 4 for a word store, the span (lanes - 1) * stride + 1 for a strided store (a
 * range that holds every element written, not all of them written). */
static inline int kn_ks_store_elems(const kn_ks *s) {
    if (s->word) return 4;
    return s->stride > 1 ? (kx_lanes(s->value) - 1) * s->stride + 1 : kx_lanes(s->value);
}
/* The elements of its buffer load x reads, from its index on: its lanes, 4 for a word
 * load, the span (lanes - 1) * stride + 1 for a strided load (a range that holds every
 * element read, not all of them read). */
static inline int kx_load_elems(const kn_kx *x) {
    if (x->op == KX_LOAD && x->stride > 1) return (kx_lanes(x) - 1) * x->stride + 1;
    return x->op == KX_LOAD && x->i == 4 ? 4 : kx_lanes(x);
}

#endif
