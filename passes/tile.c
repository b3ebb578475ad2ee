/* The tile pass: register tiles and packed weights for contraction kernels.
 * requires: kir (kernels with kn_contract descriptors); breaks: plan (adds buffers).
 *
 * A lowering describes each Conv, MatMul and Gemm it emits as a plain loop nest
 * (kn_contract). On targets with register tiles (CPUs and microcontrollers: not OpenCL
 * devices, whose parallel loops become work-items) this pass rebuilds the kernels
 * whose weights are constant f32 into the micro-kernel below, sized from the target's
 * vector width and register count, and records the tile in the kernel's schedule.
 * A MatMul/Gemm whose B is known only at run time (attention) gets the same tiles, B
 * packed by the kernel itself first (see "B known only at run time" below).
 * Kernels it does not suit keep their plain nest.
 *
 * Both are a product out[row, col] = init[col] + sum_r a[row, r] * b[r, col] where b is
 * constant. b is packed at compile time into blocks of KB = nv * lanes columns,
 * [block][r][KB] (zero past the last column), so one reduction step loads nv
 * contiguous vectors of b and broadcasts one scalar of a per row. A micro-kernel keeps
 * a tile of `rows` x nv vector accumulators in registers over the whole reduction,
 * then stores it:
 *
 *   for block:                      (full blocks; a last partial block after them)
 *     for tile of rows:             (full tiles; a last partial tile after them)
 *       acc[r][v] = 0 (integer: init[block, v])       vector locals
 *       for red...:                                    reduction loops
 *         w[v] = b_packed[block, red, v*lanes ..]      vector loads
 *         a_r = a[row r, red]; acc[r][v] = fma(a_r, w[v], acc[r][v])
 *       acc[r][v] += init[block, v]                    float: the bias after the sum
 *       out[row r, col] = acc[r][v].lane               (vector stores where contiguous)
 *
 * For Conv the rows are output pixels along the innermost spatial axis, the columns
 * output channels, and the reduction runs over input channels and the kernel window;
 * padding is materialized once into an arena scratch copy of the input, so the inner
 * loops have no bounds tests (microcontrollers read it in place instead, testing
 * bounds at the borders only: conv_pad_choice). Tile sizes come from the target's vector width and
 * register count (kl_lanes, kl_vector_registers); with one lane (no SIMD) the tile
 * is a block of scalar accumulators. */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/requant.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "passes/tile.h"
#include "passes/tile_int.h"
#include "targets/target.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* KT_MAX_ROWS bounds a schedule file's tile_rows; the pass itself chooses at most
 * KT_AUTO_ROWS (tile_conv: conv_tile_rows) */
enum {
    KT_MAX_ROWS = KN_SCHED_MAX_ROWS,
    KT_MAX_NV = KN_SCHED_MAX_NV,
    KT_AUTO_ROWS = 8,
    KT_MAX_EDGE = 4
};
/* KT_MAX_VNV bounds the vectors of a tile with lanes (KT_MAX_NV: the columns of a scalar
 * one, and of a schedule file's integer tiles); float matrix-vector tiles on
 * microcontrollers take up to vector_registers - 1 (kt_choose) */
enum { KT_MAX_VNV = KN_SCHED_MAX_VECS };

typedef struct kt_tile {
    kn_dtype t, wt;    /* accumulators (f32, or i32 for integer contractions), packed weights */
    int lanes, nv, kb; /* columns per block: kb = nv * lanes */
    int kbl;           /* columns of the last block when it is partial (kt_pack_into): kb,
                          or as many whole vectors as its columns need (mm_lower) */
    int maxrows;       /* rows of a full tile */
    int rows;          /* rows of the tile being built */
    int acc[KT_MAX_ROWS][KT_MAX_VNV];
    /* integer tiles with a dot product (int_dot): the weights are packed `parts` to an
     * i32 word along the reduction, the input likewise when it is read */
    int dot;   /* the KX_DOT kind (kn_dot), 0: multiply and add */
    int parts; /* values per word (2 or 4), each `bits` wide */
    int bits;
    int64_t xoff;  /* added to each input value so it has the signedness the dot wants */
    int64_t xzc;   /* xz + xoff: its product with the weights comes off the init */
    kn_kbuf *xzrt; /* the input zero point when it is known only at run time (then xzc is
                      xoff), or NULL */
    kn_kbuf *csum; /* with xzrt: each column's sum of w - wz, packed as the init */
    /* split words (KN_DOT_S16X2 on microcontrollers, 8-bit input, channels a multiple of
     * 4): the input is read as words of 4 channels (parts 4, bits 8: conv_words), each
     * split by KX_UNPACK16 into its even and odd channels (SXTB16, SXTB16 ROR #8), and
     * the weights are packed at compile time as two words of 16-bit pairs per 4
     * channels, (c0, c2) then (c1, c3) (conv_wsplit): one load and two unpacks give a
     * row two SMLAD operands, where building each pair from NCHW took two byte loads,
     * a mask and an OR */
    bool split;
    bool xunsigned; /* split: the input is u8 (UXTB16) */
    /* split matrix tiles (mm_lower) and split convolutions (tile_conv, conv_pack_wpair:
     * pointwise pairs and windows): a column's two words of a step, (k0, k2) and (k1, k3),
     * packed as one i64 (the even word low; [block][step][column] i64, read at a step's
     * index in i64 elements), so the C compiler loads both with one LDRD, where the split
     * tiles' two i32 words [block][step][2][column] take two LDRs */
    bool wpair;
    /* wpair tiles: the input split into i64 pairs of its two halves, even half low
     * (mm_xsplit: once per run, [rows][k / 4]; pointwise pairs: per tile of pixels,
     * pw_pairs_widen; windows at stride 1: conv_words' padded copy in such pairs, once
     * per run), so a step reads a row's two SMLAD operands with one LDRD instead of a word
     * load and two unpacks per column tile; words[r] of kt_step_words is then that i64 */
    bool xpre;
    /* wpair tiles whose blocks of output channels are unrolled (pw_pairs_unroll): the
     * weights read through their kept pointer (kx_load_kept_base), where GCC 12 would
     * otherwise read each constant block's weights as literal-pool words, one LDR a word
     * instead of one LDRD a pair */
    bool wkept;
    /* column pairs (KN_DOT_S16X2 on microcontrollers, one input channel: a first layer,
     * whose reduction over channels has nothing to pair): the reduction pairs adjacent
     * kernel columns instead, taps (i, 2q) and (i, 2q + 1) in the 16-bit halves of one
     * word. The input is read from a padded copy of such words built once per run
     * (conv_cpairs: the word at column ix holds x[ix] and x[ix + dw]), the weights are
     * packed as the same pairs (conv_wcpair; 0 for the missing tap of an odd kw), so a
     * step of two taps is one word load per row, one weight word per column and one
     * SMLAD per row and column, where the multiply-add tiles loaded, offset and
     * multiplied each tap alone */
    bool cpair;
    /* merged words (integer stems on CPUs, tile_stem_int): a kernel row's (input channel,
     * kernel column) values grouped `parts` to a word, not a word of channels a tap
     * (stem_merged, conv_wckx) */
    bool ckx;
    /* reduction words (KN_DOT_S8X16: Helium's VMLADAVA.S8, kt_red16): `wide` (4) i32
     * words of 4 channels make one 16-channel operand, read as a vector: the input from
     * conv_words' channels-last blocks ([c / 16][hp][wp][4 words]), the weights packed
     * [block][step][kb][4 words] (conv_w16); each step of 16 channels is, per row and
     * column, one VMLADAVA into a scalar accumulator. 0: one word an operand */
    int wide;
    /* register blocks (mm_fblock): inputs a block load, 0: not such a tile */
    int fblock;
    bool pf;   /* the next block's weights prefetched (conv_geom.pf, conv_pf) */
    int xpf;   /* pixels ahead each step prefetches x (conv_geom.xpf, pw_xpf; 0: not) */
    bool span; /* tiles of consecutive pixels of the output plane (conv_geom.span) */
    int pad;   /* convolutions: the padding tile_conv chose where it overrides kn_sched.pad's
                  default (3: zeroed taps, conv_ztap_suits), else 0 */
    int mc;    /* float matrix tiles: rows a block of a group of blocks (mm_groups), 0: none */
    bool serp; /* float matrix tiles: the serpentine order of the blocks' tiles (mm_serp) */
    /* float tiles: their init (the bias) is added after the reduction (kt_add_init), read
     * at binit[bidx + v*lanes ..], or one value a row at binit[bidx + r] (brow); NULL:
     * none, or an integer tile, which starts at its init (exact) */
    kn_kbuf *binit;
    kn_kx *bidx;
    bool brow;
} kt_tile;

/* Values in one i32 word of T's packed operands (parts, or parts / wide). */
static int word_parts(const kt_tile *T) {
    return T->wide ? T->parts / T->wide : T->parts;
}

/* The rows of a register tile of nv vectors: the registers left after nv weight vectors
 * and the broadcast input (unless the target's multiply-add reads it from a general
 * register), nv accumulators a row */
static int kt_reg_rows(kn_lower *L, int nv) {
    return (kl_vector_registers(L) - nv - !kl_fma_scalar(L)) / nv;
}

/* Tile geometry for `cols` output columns and `nrows` rows, or false when the columns
 * would fill less than half a vector (depthwise convolutions). ov (may be NULL): the
 * schedule file's tile_vecs and tile_rows, used where they are set. */
static bool kt_choose(kn_lower *L, int64_t cols, int64_t nrows, const kn_sched *ov, bool integer,
                      bool mve, kt_tile *T) {
    memset(T, 0, sizeof *T);
    T->t = integer ? KN_I32 : KN_F32;
    T->wt = integer ? KN_I16 : KN_F32; /* w - wz of 8-bit weights fits 16 bits */
    T->lanes = kl_lanes(L, T->t);
    if (ov && ov->lanes > 1 && ov->lanes < T->lanes) T->lanes = ov->lanes; /* narrower */
    /* integer tiles on microcontrollers are scalar (SMLAD on general registers): the C
     * of i32 vectors with their dot product runs lane by lane on Helium (DS-CNN int8 on
     * the M55: 14.6 M instructions with 4-lane tiles, fewer scalar, see docs/firmware.md),
     * except where `mve` (kt_mve): Helium's 4-lane multiply-add tiles */
    if (integer && L->target && L->target->kind == KN_TARGET_MCU && !mve) T->lanes = 1;
    if (T->lanes > 1)
        T->nv = cols >= 2 * T->lanes ? 2 : 1;
    else
        T->nv = cols >= KT_MAX_NV ? KT_MAX_NV : (int)cols;
    /* a matrix-vector product (one row) of floats on a microcontroller's vectors whose
     * multiply-add reads the input from a general register (Helium's VFMA Qd, Qn, Rm):
     * each weight vector is used once, right after its load, so one register takes them
     * in turn and the others accumulate. On the M55 (8 Q registers) 7 vectors, 28
     * columns: a step is 7 VLDRW, one LDR, 7 VFMA and the LE, 16 instructions for 28
     * multiply-adds where 2 vectors took 6 for 8 (the FC autoencoder: 203 K -> 157 K
     * instructions, docs/firmware.md). The columns past the last whole tile are an edge
     * tile of fewer vectors (mm_lower). */
    if (T->lanes > 1 && !integer && nrows == 1 && L->target && L->target->kind == KN_TARGET_MCU &&
        kl_fma_scalar(L)) {
        int64_t nv = kl_vector_registers(L) - 1, fit = cols / T->lanes;
        nv = nv < fit ? nv : fit;
        nv = nv < KT_MAX_VNV ? nv : KT_MAX_VNV;
        if (nv > T->nv) T->nv = (int)nv;
    }
    if (ov && ov->tile_vecs) {
        int cap = T->lanes > 1 && !integer ? KT_MAX_VNV : KT_MAX_NV;
        T->nv = ov->tile_vecs < cap ? ov->tile_vecs : cap;
    }
    T->kb = T->kbl = T->nv * T->lanes;
    if (T->nv < 1 || 2 * cols < T->kb) return false;
    int rows = kt_reg_rows(L, T->nv);
    rows = rows > KT_AUTO_ROWS ? KT_AUTO_ROWS : rows;
    /* scalar integer tiles on microcontrollers live in the 16 general registers, not
     * the FPU's: accumulators and weights in 16 (DS-CNN int8 on the M4, pointwise
     * 1x1 tiles of 4 columns: 3 rows 1.13 M instructions, 2 rows 1.09 M, 5 rows 1.32 M) */
    if (integer && T->lanes == 1 && L->target && L->target->kind == KN_TARGET_MCU)
        rows = (16 - T->nv) / T->nv;
    if (ov && ov->tile_rows) rows = ov->tile_rows;
    rows = rows < 1 ? 1 : rows > KT_MAX_ROWS ? KT_MAX_ROWS : rows;
    T->maxrows = nrows < rows ? (int)nrows : rows;
    return true;
}

/* Float matrix tiles on CPUs with 32 vector registers (MatMul/Gemm with a constant B,
 * pointwise convolutions): the tile of nv vectors by rows that makes the most multiply-adds
 * per load, rows * nv / (rows + nv) (a step loads nv vectors of B and broadcasts one scalar
 * of A per row), rows as kt_choose gives them for nv (the registers left after the
 * accumulators, the nv weight vectors and the broadcast; at most KT_AUTO_ROWS): 6 x 4 (24
 * multiply-adds for 10 loads) or 8 x 3 (24 for 11) where kt_choose gave 8 x 2 (16 for 10).
 * On the Intel Xeon VM (AVX-512) the 512x1024x1024 MatMul ran at 162-166 GFLOP/s in 6 x 4
 * against 146-148 in 8 x 2, and ResNet-50's 1x1 convolutions 0-19% faster each, also where
 * the packed block of pixels (K x 64 floats) no longer fits in L1 (docs/benchmarks.md,
 * "Wider matrix tiles"). A wider tile is taken only
 *  - where its vectors fit in the columns and its rows make 4 tiles or more (the 112x112
 *    32 -> 16 projections of MobileNetV2 and EfficientNet-B0, 2 tiles of 8 rows: 18%
 *    slower with 3 vectors);
 *  - where its partial block of columns and its partial tile of rows are no larger than
 *    kt_choose's, unless there are 8 full ones or more (MobileNetV2's 14x14 projections to
 *    96 channels, a block of 64 and a partial one of 32 where 8 x 2 had 3 whole blocks:
 *    16-24% slower);
 *  - `whole`: where its width divides the columns (the convolution tiles, whose partial
 *    blocks go through a transposing store: EfficientNet-B0's 14x14 projections to 80 and
 *    112 channels, 9-33% slower in 6 x 4 and 8 x 3).
 * Not with 16 registers (AVX2), where the count would pick 4 x 3 over 6 x 2, unmeasured on
 * the machines those tiles were tuned on. A schedule file's tile_rows or tile_vecs keeps
 * kt_choose's tile. */
static void kt_widen(kn_lower *L, kt_tile *T, int64_t cols, int64_t nrows, bool whole,
                     const kn_sched *ov) {
    const kn_target *tg = L->target;
    if (T->t != KN_F32 || T->lanes < 2 || !tg || tg->kind != KN_TARGET_CPU ||
        (ov && (ov->tile_rows || ov->tile_vecs)) || kl_vector_registers(L) < 32)
        return;
    int best = T->nv, brows = T->maxrows;
    double bscore = (double)brows * best / (brows + best);
    for (int nv = T->nv + 1; nv <= KT_MAX_NV; nv++) {
        int rows = kt_reg_rows(L, nv);
        rows = rows > KT_AUTO_ROWS ? KT_AUTO_ROWS : rows;
        double score = (double)rows * nv / (rows + nv);
        int64_t kb = (int64_t)nv * T->lanes, kb0 = (int64_t)T->nv * T->lanes, r0 = T->maxrows;
        if (kb > cols || 4 * rows > nrows || score <= bscore || (whole && cols % kb) ||
            (cols % kb > cols % kb0 && cols < 8 * kb) || /* a wider partial block, not small */
            ((nrows + rows - 1) / rows * rows - nrows > (nrows + r0 - 1) / r0 * r0 - nrows &&
             nrows < 8 * rows)) /* more rows past the last than kt_choose's tile, not small */
            continue;
        best = nv, brows = rows, bscore = score;
    }
    T->nv = best;
    T->kb = T->kbl = best * T->lanes;
    T->maxrows = brows;
}

/* a * s + b, index arithmetic */
static kn_kx *mad(kn_lower *L, kn_kx *a, int64_t s, kn_kx *b) {
    return kx_add(L, kx_mul(L, a, kx_int(L, s)), b);
}

/* Declares the accumulators of a tile of `rows` rows: init[idx + v*lanes ..] (a packed
 * constant) or zero; a float tile starts at zero and adds its init after the reduction
 * (kt_add_init). */
static void kt_begin(kn_lower *L, kt_tile *T, int rows, kn_kbuf *init, kn_kx *idx) {
    T->rows = rows;
    bool after = T->t == KN_F32;
    T->binit = after ? init : NULL, T->bidx = idx, T->brow = false;
    for (int r = 0; r < rows; r++)
        for (int v = 0; v < T->nv; v++) {
            kn_kx *i0 = init && !after
                            ? kx_vload(L, init, kx_add(L, idx, kx_int(L, v * T->lanes)), T->lanes)
                            : kx_const(L, T->t, 0);
            if (T->xzrt) /* - xz * sum of the column's weights, xz read at run time */
                i0 = kx_sub(L, i0,
                            kx_mul(L, kx_cast(L, KN_I32, kx_load(L, T->xzrt, kx_int(L, 0))),
                                   kx_vload(L, T->csum, kx_add(L, idx, kx_int(L, v * T->lanes)),
                                            T->lanes)));
            T->acc[r][v] = kl_decl_vec(L, T->t, T->lanes, i0);
        }
}

/* A float tile's init (a Conv's bias, a Gemm's beta * C) added to its accumulators
 * after the reduction and before the epilogue: the order of ONNX's reference and of
 * ONNX Runtime's MLAS, whose float32 rounding differs from a sum started at the bias
 * (docs/decisions.md, "Conv and Gemm add the bias after the sum"). */
static void kt_add_init(kn_lower *L, kt_tile *T) {
    for (int r = 0; T->binit && r < T->rows; r++) {
        kn_kx *rb = T->brow ? kx_load(L, T->binit, kt_plus(L, T->bidx, r)) : NULL;
        for (int v = 0; v < T->nv; v++) {
            kn_kx *b =
                rb ? rb
                   : kx_vload(L, T->binit, kx_add(L, T->bidx, kx_int(L, v * T->lanes)), T->lanes);
            kl_set(L, T->acc[r][v], kx_add(L, kx_var(L, T->acc[r][v]), b));
        }
    }
}

/* One reduction step: acc[r][v] += a[r] * bp[bidx + v*lanes ..]; rows whose a[r] is
 * NULL (a padding tap of an edge tile) are left alone. */
static void kt_step(kn_lower *L, kt_tile *T, kn_kx *const *a, kn_kbuf *bp, kn_kx *bidx) {
    int w[KT_MAX_VNV];
    for (int v = 0; v < T->nv; v++)
        w[v] = kl_decl_vec(
            L, T->t, T->lanes,
            kx_cast(L, T->t, kx_vload(L, bp, kx_add(L, bidx, kx_int(L, v * T->lanes)), T->lanes)));
    for (int r = 0; r < T->rows; r++) {
        if (!a[r]) continue;
        int ar = kl_decl(L, T->t, kx_cast(L, T->t, a[r]));
        for (int v = 0; v < T->nv; v++) /* kx_fma: a multiply and an add for integers */
            kl_set(L, T->acc[r][v],
                   kx_fma(L, kx_var(L, ar), kx_var(L, w[v]), kx_var(L, T->acc[r][v])));
    }
}

/* One reduction step of a dot tile: acc[r][v] = dot(acc[r][v], word[r], bp[bidx + v*lanes ..])
 * (words[r]: row r's input values packed as the weights are). */
static void kt_step_dot(kn_lower *L, kt_tile *T, kn_kx *const *words, kn_kbuf *bp, kn_kx *bidx) {
    int w[KT_MAX_VNV];
    if (T->wide) { /* reduction words: vectors of `wide` words, scalar accumulators */
        for (int v = 0; v < T->nv; v++)
            w[v] = kl_decl_vec(L, KN_I32, T->wide,
                               kx_vload(L, bp, kt_plus(L, bidx, v * T->wide), T->wide));
        for (int r = 0; r < T->rows; r++) {
            int ar = kl_decl_vec(L, KN_I32, T->wide, words[r]);
            for (int v = 0; v < T->nv; v++)
                kl_set(L, T->acc[r][v],
                       kx_dot(L, T->dot, kx_var(L, T->acc[r][v]), kx_var(L, ar), kx_var(L, w[v])));
        }
        return;
    }
    for (int v = 0; v < T->nv; v++)
        w[v] = kl_decl_vec(L, KN_I32, T->lanes,
                           kx_vload(L, bp, kx_add(L, bidx, kx_int(L, v * T->lanes)), T->lanes));
    for (int r = 0; r < T->rows; r++) {
        int ar = kl_decl(L, KN_I32, words[r]);
        for (int v = 0; v < T->nv; v++)
            kl_set(L, T->acc[r][v],
                   kx_dot(L, T->dot, kx_var(L, T->acc[r][v]), kx_var(L, ar), kx_var(L, w[v])));
    }
}

/* A reduction step of a dot tile over words of its input: kt_step_dot, or for split
 * words (kt_tile.split) each row's word unpacked into its even and odd channels, which
 * step with the weight words at bidx (even) and bidx + kb (odd). Column by column, each
 * weight word loaded just before the rows use it: live are the accumulators, the rows'
 * halves and one weight word (2 rows x 4 columns: 13 of the M4's general registers). */
static void kt_step_words(kn_lower *L, kt_tile *T, kn_kx *const *words, kn_kbuf *bp, kn_kx *bidx) {
    if (!T->split && !T->cpair) {
        kt_step_dot(L, T, words, bp, bidx);
        return;
    }
    /* column pairs: the words are the operands themselves, one weight word a column */
    int half[2][KT_MAX_ROWS], nh = T->split ? 2 : 1;
    for (int r = 0; r < T->rows && T->xpre; r++) {
        int vp = kl_decl(L, KN_I64, words[r]);
        half[0][r] = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_var(L, vp)));
        half[1][r] =
            kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_bin(L, KX_SHR, kx_var(L, vp), kx_int(L, 32))));
    }
    for (int r = 0; r < T->rows && !T->xpre; r++) {
        int vw = kl_decl(L, KN_I32, words[r]);
        for (int o = 0; o < nh; o++)
            half[o][r] =
                T->split ? kl_decl(L, KN_I32, kx_unpack16(L, kx_var(L, vw), o, T->xunsigned)) : vw;
    }
    if (T->wpair) { /* a column's two words as one i64 (one LDRD), then its SMLADs */
        for (int v = 0; v < T->nv; v++) {
            kn_kx *at = kt_plus(L, bidx, v);
            int wd =
                kl_decl(L, KN_I64, T->wkept ? kx_load_kept_base(L, bp, at) : kx_load(L, bp, at));
            int w[2];
            w[0] = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_var(L, wd)));
            w[1] = kl_decl(L, KN_I32,
                           kx_cast(L, KN_I32, kx_bin(L, KX_SHR, kx_var(L, wd), kx_int(L, 32))));
            for (int o = 0; o < 2; o++)
                for (int r = 0; r < T->rows; r++)
                    kl_set(L, T->acc[r][v],
                           kx_dot(L, T->dot, kx_var(L, T->acc[r][v]), kx_var(L, half[o][r]),
                                  kx_var(L, w[o])));
        }
        return;
    }
    for (int v = 0; v < T->nv; v++)
        for (int o = 0; o < nh; o++) {
            int64_t at = o * T->kb + v;
            int w = kl_decl(L, KN_I32, kx_load(L, bp, kt_plus(L, bidx, at)));
            for (int r = 0; r < T->rows; r++)
                kl_set(L, T->acc[r][v],
                       kx_dot(L, T->dot, kx_var(L, T->acc[r][v]), kx_var(L, half[o][r]),
                              kx_var(L, w)));
        }
}

/* n (<= parts) input values packed into a word as the dot reads them: part g holds
 * vals[g] + xoff in its low `bits` bits; parts past n are 0 (their weights are 0). */
static kn_kx *kt_word(kn_lower *L, const kt_tile *T, kn_kx *const *vals, int n) {
    return kt_dot_word(L, T->bits, T->xoff, vals, n);
}

/* Word w (4 input bytes) as KX_UNPACK16's two halves in one i64, the even half low
 * (kt_tile.xpre): lo & 0xffffffff | hi * 2^32, no shift of a negative value (undefined in
 * C). */
static kn_kx *kt_split_pair(kn_lower *L, const kt_tile *T, kn_kx *w) {
    kn_kx *lo = kx_cast(L, KN_I64, kx_unpack16(L, w, false, T->xunsigned));
    kn_kx *hi = kx_cast(L, KN_I64, kx_unpack16(L, w, true, T->xunsigned));
    return kx_bin(L, KX_OR, kx_bin(L, KX_AND, lo, kx_int(L, 0xffffffffLL)),
                  kx_mul(L, hi, kx_int(L, 4294967296LL)));
}

/* The word of `parts` copies of the input's zero point (plus xoff): a padding tap. */
static kn_kx *kt_zp_word(kn_lower *L, const kt_tile *T) {
    if (T->xzrt) {
        kn_kx *v[4];
        for (int g = 0; g < T->parts; g++) v[g] = kx_load(L, T->xzrt, kx_int(L, 0));
        return kt_word(L, T, v, T->parts);
    }
    uint32_t w = 0, mask = T->bits == 8 ? 0xffu : 0xffffu;
    for (int g = 0; g < word_parts(T); g++) w |= ((uint32_t)T->xzc & mask) << (T->bits * g);
    return kx_const(L, KN_I32, (double)(int32_t)w);
}

/* Column col of row r of the tile, a scalar. */
static kn_kx *kt_elem(kn_lower *L, const kt_tile *T, int r, int col) {
    int v = T->acc[r][col / T->lanes];
    return T->lanes > 1 ? kx_lane(L, v, col % T->lanes) : kx_var(L, v);
}

/* Packs ceil(ncols / kb) blocks of kb columns over nred reduction steps into buf (of
 * dtype dt) from element `at`: buf[blk][r][j] = get(ctx, r, blk*kb + j) for columns
 * < ncols, else 0. A partial last block is kbl columns wide (kb unless mm_lower narrows
 * it): its rows are kbl apart. */
static void kt_pack_into(const kt_tile *T, int64_t nred, int64_t ncols, kt_get get, const void *ctx,
                         void *buf, kn_dtype dt, int64_t at) {
    int64_t blocks = (ncols + T->kb - 1) / T->kb, full = ncols / T->kb;
    for (int64_t blk = 0; blk < blocks; blk++) {
        int64_t w = blk < full ? T->kb : T->kbl;
        for (int64_t r = 0; r < nred; r++)
            for (int64_t j = 0; j < w; j++) {
                size_t i = (size_t)(at + blk * nred * T->kb + r * w + j);
                double v = blk * T->kb + j < ncols ? get(ctx, r, blk * T->kb + j) : 0.0;
                if (dt == KN_F32) /* the common case, without kn_store_f64's dispatch */
                    ((float *)buf)[i] = (float)v;
                else
                    kn_store_f64(buf, dt, i, v);
            }
    }
}

typedef struct kt_pack_args {
    const kt_tile *T;
    kn_dtype dt;
    int64_t groups, nred, ncols, per;
    kt_get get;
    const void *const *ctx;
} kt_pack_args;

static void kt_pack_fill(const void *ctx, void *buf) {
    const kt_pack_args *A = ctx;
    for (int64_t g = 0; g < A->groups; g++)
        kt_pack_into(A->T, A->nred, A->ncols, A->get, A->ctx[g], buf, A->dt, g * A->per);
}

/* The packed constant of dtype dt of `groups` packings (kt_pack_into) one after
 * another, written in place (kl_table_fill). */
static kn_kbuf *kt_pack(kn_lower *L, const kt_tile *T, kn_dtype dt, int64_t groups, int64_t nred,
                        int64_t ncols, kt_get get, const void *const *ctx) {
    int64_t per = ncols / T->kb * nred * T->kb + (ncols % T->kb ? nred * T->kbl : 0);
    kt_pack_args A = {T, dt, groups, nred, ncols, per, get, ctx};
    return kl_table_fill(L, dt, groups * per, kt_pack_fill, &A);
}

/* ---- integer contractions ---- */

/* Element i of constant b as a double (0 when b is NULL). */
static double cval(const kn_kbuf *b, int64_t i) {
    return b ? kn_load_f64(b->data->data, b->dtype, (size_t)(b->numel == 1 ? 0 : i)) : 0.0;
}

static bool is_const(const kn_kbuf *b) {
    return b && b->kind == KB_CONST && b->data;
}

/* Whether integer contraction d suits the integer tiles: constant weights, weight zero
 * points, bias and scales; an int32 accumulator that cannot overflow (|x - xz| <= 255,
 * the largest |w - wz| of the weights, over `red` steps, plus the bias); and y i32
 * (no requantization) or 8-bit (QLinear). */
static bool int_ok(const kn_contract *d, int64_t red) {
    /* an epilogue only as a fused float tail (passes/dynq.c: f32 y, no requantization)
     * whose operands are scalars or vary along the columns / output channels alone */
    if (d->epi && (d->yscale || d->y->dtype != KN_F32 || !kt_int_epi_ok(d))) return false;
    if (!kn_contract_is_int(d) || !is_const(d->w) ||
        (d->w->dtype != KN_U8 && d->w->dtype != KN_I8) || (d->wz && !is_const(d->wz)) ||
        (d->bias && !is_const(d->bias)))
        return false;
    if (d->yscale ? !is_const(d->xscale) || !is_const(d->wscale) || !is_const(d->yscale) ||
                        (d->y->dtype != KN_U8 && d->y->dtype != KN_I8)
                  : d->y->dtype != (d->epi ? KN_F32 : KN_I32))
        return false;
    int64_t per = d->kind == KN_CONTRACT_CONV ? d->w->numel / d->m : 0;
    double wmax = 0, bmax = 0;
    for (int64_t i = 0; i < d->w->numel; i++) { /* weight i's column: its output channel */
        int64_t col = d->kind == KN_CONTRACT_CONV ? i / per : i % d->N;
        double v = fabs(cval(d->w, i) - cval(d->wz, col));
        wmax = v > wmax ? v : wmax;
    }
    for (int64_t i = 0; d->bias && i < d->bias->numel; i++)
        bmax = fabs(cval(d->bias, i)) > bmax ? fabs(cval(d->bias, i)) : bmax;
    return (double)red * 255.0 * wmax + bmax < 2147483647.0;
}

/* Chooses the tile's dot product (kn_sched.dot of the schedule file, else the target's)
 * for integer contraction d, or none. The input zero point must be a constant: the
 * dot multiplies the inputs themselves, and sum (x - xz) w = sum x w - xz sum w takes
 * the second term off the accumulator's init at compile time. The four-part dots need
 * every w - wz in [-128, 127] (else the pairs of 16 bits, which hold any 8-bit
 * difference) and inputs shifted by xoff to their signedness, which the same
 * correction absorbs (xzc = xz + xoff). Partial sums stay within the bound int_ok
 * checked: each is the exact one plus (xz + xoff) times weights not yet reached. */
/* Whether integer convolution d takes column pairs (kt_tile.cpair): on a microcontroller
 * whose dot is s16x2, one input channel and one group (or up to 3 channels, an RGB stem,
 * without Helium: ResNet-8's first convolution on the M4 0.983 M instructions against
 * 1.063 M as channel pairs, on the M55 0.977 M against its 4-lane tiles' 0.871 M), kernel
 * columns to pair, a constant
 * input zero point, and a word copy (4 bytes an input position, padded) no larger than
 * the output, so the arena grows by less than the output's size where it grows at all
 * (DS-CNN's first convolution: 2,832 bytes of words for an 8,000-byte output). A
 * schedule file's split other than 3 turns it off. Not with Helium, whose 4-lane tiles
 * (kt_mve) take one-channel convolutions too since they requantize as vectors (DS-CNN's
 * first convolution on the M55: 508 K instructions in column pairs, 295 K). */
static bool cpair_suits(const kn_target *tg, const kn_contract *d, const kn_sched *ov) {
    if (!tg || tg->kind != KN_TARGET_MCU || tg->int8_dot != KN_DOT_S16X2 ||
        d->kind != KN_CONTRACT_CONV || d->group != 1 || d->kw < 2 || d->c > 3 ||
        tg->vector_bits >= 128 || (ov && ov->split && ov->split != 3) ||
        (d->xz && !is_const(d->xz)) || kn_dtype_get(d->x->dtype)->size != 1 ||
        !kn_contract_is_int(d))
        return false;
    double words = (double)d->n * (d->h + d->ph + d->peh) * (d->w_ + d->pw + d->pew);
    return 4 * words <= (double)d->y->numel * kn_dtype_get(d->y->dtype)->size;
}

/* Whether integer contraction d takes 4-lane tiles on Helium (the M55: a microcontroller
 * with 128-bit vectors and the s16x2 dot), a multiply-add per value (int_dot), which the
 * C emitter prints as MVE VLDRH.S32 and VMLA.S32 (KN_LD4S16, KN_MLA4I): any input
 * channels a group (the depthwise pass has its own tiles), no schedule file's dot or
 * lanes. */
static bool kt_mve(const kn_target *tg, const kn_contract *d, const kn_sched *ov) {
    return tg && tg->kind == KN_TARGET_MCU && tg->vector_bits >= 128 &&
           tg->int8_dot == KN_DOT_S16X2 && !(ov && (ov->dot || ov->lanes)) &&
           kn_contract_is_int(d) && !cpair_suits(tg, d, ov) && (!d->xz || is_const(d->xz));
}

/* Whether integer convolution d takes reduction tiles (kt_tile.wide) on a target with
 * KN_DOT_S8X16 (Helium's VMLADAVA.S8: 16 s8 products into a scalar): input channels a
 * group a multiple of 16, or of 4 from 32 up (a last group of fewer than 16 is padded
 * with zero weights and zero-point words: the channels-last copy grows by the padding;
 * with 8 channels, doubled, MobileNetV1 and V2 int8 on the M55 took 6% and 16% fewer
 * instructions but 27.6 KB more arena, see docs/firmware.md), 8-bit input with a
 * constant zero point, every w - wz in [-128, 127], no schedule file's dot, lanes or
 * split. */
static bool kt_red16(const kn_target *tg, const kn_contract *d, const kn_sched *ov) {
    kn_sched s8 = {.dot = KN_DOT_S8S8X4}; /* kt_int_dot_kind: S16X2 where a weight needs it */
    /* (a dumped schedule's own dot=s8x16 lanes=1 reads back as the same tiles) */
    return tg && tg->int8_red == KN_DOT_S8X16 &&
           !(ov && ((ov->dot && ov->dot != KN_DOT_S8X16) || ov->lanes > 1 || ov->split)) &&
           d->kind == KN_CONTRACT_CONV && kn_contract_is_int(d) &&
           ((d->c / d->group) % 16 == 0 || ((d->c / d->group) % 4 == 0 && d->c / d->group >= 32)) &&
           kn_dtype_get(d->x->dtype)->size == 1 &&
           (!d->xz || (is_const(d->xz) && d->xz->numel == 1)) &&
           kt_int_dot_kind(tg, d, &s8) == KN_DOT_S8S8X4;
}

/* Sets up T's reduction words (kt_tile.wide) for d (kt_red16): scalar accumulators of
 * at most 2 rows x 4 columns (8 general registers; two input and four weight vectors
 * of the 8 Q registers). */
static void red16_tile(const kn_contract *d, const kn_sched *ov, kt_tile *T) {
    T->dot = KN_DOT_S8X16;
    T->parts = 16, T->bits = 8, T->wide = 4;
    T->xoff = kt_int_xoff(KN_DOT_S8S8X4, d->x->dtype); /* u8: - 128 */
    T->xzrt = NULL;
    T->xzc = (int64_t)cval(d->xz, 0) + T->xoff;
    T->wt = KN_I32;
    if (!(ov && ov->tile_rows) && T->maxrows > 2) T->maxrows = 2;
}

static void int_dot(const kn_target *tg, const kn_contract *d, const kn_sched *ov, kt_tile *T) {
    T->dot = 0;
    T->xzrt = NULL;
    if (!tg || !kn_contract_is_int(d) || (d->xz && !is_const(d->xz) && d->xz->numel != 1)) return;
    if (tg->int8_dot == KN_DOT_NONE && !(ov && ov->dot)) return;
    /* Helium's 4-lane tiles (kt_mve): a multiply-add per value, VMLA.S32 of four
     * widened 16-bit weights by a general register (DS-CNN int8 on the M55: 4.34 M
     * instructions; s16x2 words as VMULLB/VMULLT and adds, 5.18 M, the scalar SMLAD tiles
     * 5.20 M) */
    if (T->lanes > 1 && tg->kind == KN_TARGET_MCU) return;
    /* one input channel per group (a first layer, depthwise) on microcontrollers: words
     * of one value would leave half of each SMLAD idle; a multiply-add per value skips
     * padded taps and keeps 16-bit weights (DS-CNN int8 on the M4: first convolution
     * 2.15 -> 2.03 M instructions, each depthwise 0.91 -> 0.78 M) */
    if (tg->kind == KN_TARGET_MCU && !(ov && ov->dot) && d->kind == KN_CONTRACT_CONV &&
        d->c / d->group == 1 && !cpair_suits(tg, d, ov))
        return;
    int kind = kt_int_dot_kind(tg, d, ov);
    if (kind == KN_DOT_NONE) return;
    if (cpair_suits(tg, d, ov)) kind = KN_DOT_S16X2; /* 16-bit halves: column pairs */
    T->dot = kind;
    T->parts = kind == KN_DOT_S16X2 ? 2 : 4;
    T->bits = 32 / T->parts;
    T->xoff = kt_int_xoff(kind, d->x->dtype);
    T->xzrt = d->xz && !is_const(d->xz) ? d->xz : NULL; /* DynamicQuantizeLinear's */
    T->xzc = (T->xzrt ? 0 : (int64_t)cval(d->xz, 0)) + T->xoff;
    T->wt = KN_I32;
}

/* v1..vn (values of w - wz, at most 16 bits) packed into a word of T's parts, as a
 * double for kt_pack. */
static double kt_pack_word(const kt_tile *T, const double *v, int n) {
    uint32_t w = 0, mask = T->bits == 8 ? 0xffu : 0xffffu;
    for (int g = 0; g < n; g++) w |= ((uint32_t)(int32_t)v[g] & mask) << (T->bits * g);
    return (double)(int32_t)w;
}

/* An 8-bit operand element minus the zero point xz[0] (x itself for floats). */
static kn_kx *int_operand(kn_lower *L, const kn_contract *d, kn_kx *x) {
    if (!kn_contract_is_int(d)) return x;
    x = kx_cast(L, KN_I32, x);
    return d->xz ? kx_sub(L, x, kx_cast(L, KN_I32, kx_load(L, d->xz, kx_int(L, 0)))) : x;
}

/* ---- Conv ---- */

typedef struct conv_geom {
    int64_t n, c, m, group, cg, kg; /* batch, channels in/out, groups, per group */
    int64_t h, w, oh, ow, kh, kw;   /* spatial extents (1-D: h = oh = kh = 1) */
    int64_t sh, sw, dh, dw, hp, wp; /* strides, dilations, extents of the input read */
    int64_t ph, pw;                 /* begin pads */
    int64_t oph, opw;           /* subtracted from input coordinates: the pads when the kernel reads
                                   the unpadded input, 0 when it reads the padded copy */
    int64_t ylo, yhi, xlo, xhi; /* outputs read without bounds tests (all with the copy) */
    int64_t xs[4], ys[4];       /* element strides of x (or the copy) and y along (n, c, h, w) */
    kn_kbuf *x, *y, *wpk, *bpk; /* input (or its padded copy), output, packed */
    kn_kbuf *xw;    /* four-part dot tiles: the padded input as words of 4 channels, or NULL */
    bool xblk;      /* pointwise pairs (kt_tile.xpre on a 1x1 convolution): xw is one tile's
                       pixels pre-split, [c / 4][maxrows] i64, refilled per tile of pixels
                       (pw_pairs_widen) instead of a copy of the whole input */
    kt_rq rq;       /* integer contractions: requantization tables (mult NULL: none) */
    bool vq;        /* requantized as vectors into an 8-bit tile scratch */
    bool vqred;     /* reduction tiles (kt_tile.wide) requantized as vectors of their 4
                       columns (conv_store_red): tile is then one tile's i32 [rows][kb] */
    bool xzfold;    /* Helium's 4-lane tiles with no padding: x read as it is, the init
                       bias - xz * sum (w - wz) (conv_b), where x - xz took a SUB a value */
    kn_kbuf *bpkf;  /* with padding: that init, for the interior tiles (no tap tested,
                       conv_tile), which then read x as it is; the tiles that skip the
                       padding's taps keep x - xz and the bias (bpk) */
    bool direct;    /* scalar integer tiles: each accumulator requantized and stored into y
                       itself, no tile scratch (its store and the transposing loop that
                       re-read it cost about 10 instructions an output on the M4) */
    kn_kbuf *tile;  /* scratch of the tiles: [block][rows][kb], or with row_tiles
                       [block][oh][rows][kb] */
    bool row_tiles; /* each output row has its own tile scratch (conv_row_tiles) */
    const kn_contract *d; /* the kernel's description: its epilogue */
    const kt_tile *T;     /* the tile (its dot product) */
    /* bands (conv_bands_suit): x is read from a copy of a band of rows of every channel,
     * [c][rows][w], whose first row is the local vband; x above is that copy */
    bool band;
    int vband;
    bool bandx;  /* the band is of pixels of one row (channels-last, h 1): vband its first */
    bool pf;     /* prefetch the next block's packed weights while this one runs (conv_pf) */
    int64_t xpf; /* the float pointwise channel tiles: each step prefetches x this many pixels
                    ahead of the tile's first (pw_xpf; 0: not) */
    bool wxpf;   /* float windowed tiles of whole output rows over a padded copy: each step
                    prefetches the input row the next output row reads (conv_wxpf) */
    /* span tiles (float windows whose output rows are narrower than the register tile:
     * conv_plane): each tile takes maxrows consecutive pixels of the oh * ow plane, across
     * rows, p0 its first (a constant: the tiles are unrolled); conv_tile then gets oy 0
     * and ow0 p0, and reads each row's input at its own constant offset */
    bool span;
    int64_t p0;
    bool xcl; /* four-part dot tiles reading the padded channels-last copy of x
                 (conv_pad_cl): a word is 4 consecutive bytes of it */
    /* zeroed taps (kn_sched.pad 3): float windowed tiles read the unpadded x in place and
     * an edge tile (one whose window leaves the plane at the left or right) keeps the
     * interior tiles' loop over kernel columns, each of its rows that may leave the plane
     * loading at a clamped column and taking 0 there (a select), the value the padded
     * copy would hold; zow0 is such a tile's first output column (a constant), else -1 */
    bool ztap;
    int64_t zow0;
} conv_geom;

/* The 1x1 reduction tiles of the long reductions that narrow their output channels
 * (projections): 2 rows x 3 columns. The 2 x 4 tile's 8 scalar accumulators need 8
 * even registers (VMLADAVA's RdaLo is even: r0 .. r12, lr the loop's counter), so GCC 12
 * moves some through odd ones, or spills one, on every trip of the reduction loop; 6
 * accumulators fit. Where the loop is short (fewer than 6 trips of 16 channels) the 2 x 4
 * tile's input vectors, read by 4 columns, pay more; with fewer than 24 output channels
 * (8 or 16) the 3-column blocks leave a tail as wide as a block. MobileNetV2 0.35 int8 on
 * the M55 (bench/fw_profile.sh, schedule files, QEMU instructions; docs/firmware.md): its
 * 6 x 6 96/144/192 -> 24/32 projections 25.4-52.0 K -> 22.5-46.9 K each, the
 * 336 -> 112 projection 69.2 -> 59.2 K; its expands, 16/32/56 -> 96/192/336, 4.3-54.3 K
 * longer with 2 x 3 tiles. Where such a reduction expands the channels 4 times or more
 * (MobileNetV2's last 112 -> 1280 layer, 3 x 3 pixels: 333.1 K), tiles of one row and 4
 * columns (4 accumulators): 292.8 K (2 x 3: 350.0 K). A schedule file's tile_rows or
 * tile_vecs keeps the 2 x 4. Reductions of one trip (16 input channels, no loop): 1 x 4
 * tiles for 8 output channels (the 48 x 48 16 -> 8 projections of MobileNetV2's bands,
 * 28.9-36.1 K -> 27.0-33.7 K each); of one or two trips expanding 4 times or more,
 * 1 x 2 (its 12 x 12 16 -> 96 expands 110.0 -> 101.5 K each, 3 x 2 103.7 K; its 6 x 6
 * 32 -> 192 expands 87.0 -> 83.7 K). */
static void red16_narrow(const conv_geom *G, const kn_sched *ov, kt_tile *T) {
    if ((ov && (ov->tile_rows || ov->tile_vecs)) || G->kh * G->kw != 1 || T->nv != KT_MAX_NV)
        return;
    if (G->cg == 16 && G->kg <= 8) { /* one trip, 2 blocks of columns: 1 x 4 */
        T->maxrows = 1;
        return;
    }
    if (G->cg <= 32 && G->kg >= 4 * G->cg) { /* 1 or 2 trips, a wide expand: 1 x 2 */
        T->nv = 2;
        T->kb = T->kbl = T->nv * T->lanes;
        T->maxrows = 1;
        return;
    }
    if (G->cg < 6 * 16) return;
    if (G->kg >= 4 * G->cg) { /* a wide expand: 1 x 4 */
        T->maxrows = 1;
        return;
    }
    if (G->kg >= G->cg || G->kg < 24) return;
    T->nv = 3;
    T->kb = T->kbl = T->nv * T->lanes;
    if (T->maxrows > 2) T->maxrows = 2;
}

/* An input value of a tile: x - xz (int_operand), or x with xzfold. */
static kn_kx *conv_operand(kn_lower *L, const conv_geom *G, kn_kx *x) {
    return G->xzfold ? kx_cast(L, KN_I32, x) : int_operand(L, G->d, x);
}

/* One group's weights or bias for kt_pack. */
typedef struct conv_src {
    const conv_geom *G;
    int64_t g; /* the group */
} conv_src;

/* packed weights: reduction step r = (ci*kh + i)*kw + j, column = output channel in
 * the group (minus its zero point for integer contractions) */
static double conv_w(const void *ctx, int64_t r, int64_t col) {
    const conv_src *s = ctx;
    const kn_contract *d = s->G->d;
    int64_t oc = s->g * s->G->kg + col;
    return cval(d->w, oc * s->G->cg * s->G->kh * s->G->kw + r) - cval(d->wz, oc);
}

/* packed words of a dot tile: reduction group rg = (cgrp*kh + i)*kw + j holds input
 * channels cgrp*parts + [0, parts) of tap (i, j) */
static double conv_wdot(const void *ctx, int64_t rg, int64_t col) {
    const conv_src *s = ctx;
    const conv_geom *G = s->G;
    int64_t khw = G->kh * G->kw, cgrp = rg / khw, tap = rg % khw;
    double v[4];
    int n = 0;
    for (; n < G->T->parts && cgrp * G->T->parts + n < G->cg; n++)
        v[n] = conv_w(ctx, (cgrp * G->T->parts + n) * khw + tap, col);
    return kt_pack_word(G->T, v, n);
}

/* packed words of a split dot tile (kt_tile.split): reduction step r = 2 * rg + o, rg
 * = (cgrp*kh + i)*kw + j, holds channels cgrp*4 + o and cgrp*4 + o + 2 of tap (i, j) as
 * two 16-bit parts (the even or odd channels that KX_UNPACK16 takes from the input word) */
static double conv_wsplit(const void *ctx, int64_t r, int64_t col) {
    const conv_src *s = ctx;
    const conv_geom *G = s->G;
    int64_t khw = G->kh * G->kw, rg = r / 2, o = r % 2, cgrp = rg / khw, tap = rg % khw;
    uint32_t w = 0;
    for (int h = 0; h < 2; h++) {
        int64_t c = cgrp * 4 + o + 2 * h;
        int32_t v = c < G->cg ? (int32_t)conv_w(ctx, c * khw + tap, col) : 0;
        w |= ((uint32_t)v & 0xffffu) << (16 * h);
    }
    return (double)(int32_t)w;
}

/* conv_wsplit's two words of each column and step as one i64, the even word (step 2q)
 * low (kt_tile.wpair): [group][block][q][kb], q = (cgrp*kh + i)*kw + j; 0 past the
 * group's columns. As kt_pack lays out the i32 words, a step's two rows made one. */
typedef struct conv_pair_args {
    const kt_tile *T;
    int64_t groups, nq, ncols;
    const void *const *ctx;
} conv_pair_args;

static void conv_wpair_fill(const void *ctx, void *data) {
    const conv_pair_args *A = ctx;
    int64_t kb = A->T->kb, blocks = (A->ncols + kb - 1) / kb, *o = data;
    for (int64_t g = 0; g < A->groups; g++)
        for (int64_t blk = 0; blk < blocks; blk++)
            for (int64_t q = 0; q < A->nq; q++)
                for (int64_t j = 0; j < kb; j++) {
                    int64_t col = blk * kb + j;
                    uint32_t lo =
                        col < A->ncols ? (uint32_t)(int32_t)conv_wsplit(A->ctx[g], 2 * q, col) : 0;
                    uint32_t hi = col < A->ncols
                                      ? (uint32_t)(int32_t)conv_wsplit(A->ctx[g], 2 * q + 1, col)
                                      : 0;
                    *o++ = (int64_t)((uint64_t)hi << 32 | lo);
                }
}

/* The i64 weight pairs of a split tile (conv_wpair_fill) of nred i32 steps (two a pair)
 * over ncols columns a group. */
static kn_kbuf *conv_pack_wpair(kn_lower *L, const kt_tile *T, int64_t groups, int64_t nred,
                                int64_t ncols, const void *const *ctx) {
    KN_ASSERT(nred % 2 == 0 && T->kbl == T->kb);
    int64_t blocks = (ncols + T->kb - 1) / T->kb;
    conv_pair_args A = {T, groups, nred / 2, ncols, ctx};
    return kl_table_fill(L, KN_I64, groups * blocks * (nred / 2) * T->kb, conv_wpair_fill, &A);
}

/* packed words of a column-pair tile (kt_tile.cpair): reduction group rg = (ci*kh + i)*kwp
 * + q (kwp = ceil(kw / 2)) holds taps (i, 2q) and (i, 2q + 1) of input channel ci in its
 * low and high 16 bits, 0 for a tap past kw */
static double conv_wcpair(const void *ctx, int64_t rg, int64_t col) {
    const conv_src *s = ctx;
    const conv_geom *G = s->G;
    int64_t kwp = (G->kw + 1) / 2, q = rg % kwp, row = rg / kwp; /* row = ci*kh + i */
    double v[2];
    for (int h = 0; h < 2; h++)
        v[h] = 2 * q + h < G->kw ? conv_w(ctx, row * G->kw + 2 * q + h, col) : 0.0;
    return kt_pack_word(G->T, v, 2);
}

/* packed reduction words (kt_tile.wide), packed as a tile of 4 * kb columns: column c4
 * = 4 * col + q of step r = cgrp*kh*kw + tap holds input channels cgrp*16 + 4q + [0, 4)
 * of tap for output channel col, so a column's 16 channels are 4 consecutive words */
static double conv_w16(const void *ctx, int64_t r, int64_t c4) {
    const conv_src *s = ctx;
    const conv_geom *G = s->G;
    int64_t khw = G->kh * G->kw, cgrp = r / khw, tap = r % khw, col = c4 / 4, q = c4 % 4;
    double v[4];
    for (int n = 0; n < 4; n++) {
        int64_t c = cgrp * 16 + 4 * q + n;
        v[n] = c < G->cg ? conv_w(ctx, c * khw + tap, col) : 0.0;
    }
    return kt_pack_word(G->T, v, 4);
}

/* Words of a kernel row's (input channel, kernel column) values merged (stem words,
 * tile_stem_int): value t = kx * cg + c of row i, word q = t / parts of the row's
 * ceil(kw * cg / parts), part t % parts. Reduction group rg = i * nq + q; 0 past the row's
 * kw * cg values. */
static int64_t conv_ckx_words(const conv_geom *G) {
    return (G->kw * G->cg + G->T->parts - 1) / G->T->parts;
}

static double conv_wckx(const void *ctx, int64_t rg, int64_t col) {
    const conv_src *s = ctx;
    const conv_geom *G = s->G;
    int64_t nq = conv_ckx_words(G), i = rg / nq, q = rg % nq;
    double v[4];
    for (int k = 0; k < G->T->parts; k++) {
        int64_t t = q * G->T->parts + k, kx = t / G->cg, c = t % G->cg;
        v[k] = kx < G->kw ? conv_w(ctx, (c * G->kh + i) * G->kw + kx, col) : 0.0;
    }
    return kt_pack_word(G->T, v, G->T->parts);
}

/* with a run-time input zero point: the column's sum of w - wz */
static double conv_csum(const void *ctx, int64_t r, int64_t col) {
    (void)r;
    const conv_src *s = ctx;
    double sum = 0;
    for (int64_t i = 0; i < s->G->cg * s->G->kh * s->G->kw; i++) sum += conv_w(ctx, i, col);
    return sum;
}

/* the accumulators' init: the bias, minus xzc * sum of the column's weights (dots) */
static double conv_b(const void *ctx, int64_t r, int64_t col) {
    (void)r;
    const conv_src *s = ctx;
    double b = cval(s->G->d->bias, s->g * s->G->kg + col), sum = 0;
    if (s->G->T->dot || s->G->xzfold)
        for (int64_t i = 0; i < s->G->cg * s->G->kh * s->G->kw; i++) sum += conv_w(ctx, i, col);
    return b - (s->G->xzfold ? cval(s->G->d->xz, 0) : (double)s->G->T->xzc) * sum;
}

/* The weight-word table [m][n] (word g for output channel m: conv_wdot, or the stem's
 * merged words conv_wckx) and each output channel's init (conv_b) of an integer
 * convolution's word tiles, as two constants. */
static void conv_word_tables(kn_lower *L, const conv_src *src, int64_t M, int64_t n,
                             double (*word)(const void *, int64_t, int64_t), kn_kbuf **wa,
                             kn_kbuf **init) {
    int32_t *wt = malloc((size_t)(M * n + M) * sizeof *wt);
    KN_ASSERT(wt);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t g = 0; g < n; g++) wt[m * n + g] = (int32_t)word(src, g, m);
        wt[M * n + m] = (int32_t)conv_b(src, 0, m);
    }
    *wa = kl_table(L, KN_I32, M * n, wt);
    *init = kl_table(L, KN_I32, M, wt + M * n);
    free(wt);
}

kn_kx *kt_plus(kn_lower *L, kn_kx *e, int64_t k) {
    return k > 0 ? kx_add(L, e, kx_int(L, k)) : k < 0 ? kx_sub(L, e, kx_int(L, -k)) : e;
}

void kt_zero(kn_lower *L, kn_kbuf *b, kn_kx *at, int64_t n) {
    if (n <= 0) return;
    int v = kl_for(L, n);
    kl_store(L, b, kx_add(L, at, kx_var(L, v)), kx_const(L, KN_F32, 0.0));
    kl_end(L);
}

int64_t kt_phases(int64_t ws, int64_t sw, int64_t *wid, int64_t *off) {
    int64_t at = 0;
    for (int64_t p = 0; p < sw; p++) {
        wid[p] = ws > p ? (ws - p + sw - 1) / sw : 0;
        off[p] = at;
        at += wid[p];
    }
    return at;
}

void kt_phase_inside(int64_t p, int64_t sw, int64_t pw, int64_t w, int64_t n, int64_t *jlo,
                     int64_t *jhi) {
    *jlo = kt_clamp(-kt_floor_div(p - pw, sw), 0, n);
    *jhi = kt_clamp(kt_floor_div(w - 1 + pw - p, sw) + 1, *jlo, n);
}

/* The element of x (or its padded copy) at batch b, channel ch, row iy, column ix. */
static kn_kx *conv_xat(kn_lower *L, const conv_geom *G, kn_kx *b, kn_kx *ch, kn_kx *iy, kn_kx *ix) {
    if (G->xs[3] == 1 && G->xs[2] == G->wp && G->xs[1] == G->hp * G->wp) /* dense NCHW */
        return mad(L, mad(L, mad(L, b, G->c, ch), G->hp, iy), G->wp, ix);
    return mad(L, b, G->xs[0],
               mad(L, ch, G->xs[1], mad(L, iy, G->xs[2], kx_mul(L, ix, kx_int(L, G->xs[3])))));
}

/* Whether a padding tap's word (kt_zp_word) is the constant 0, so its dot adds nothing
 * and the tile skips it: an input zero point known at compile time that, with the dot's
 * offset, is 0 (a Relu's uint8 output; int8 with zero point 0 on the s16x2 dot). */
static bool kt_zp_nil(const kt_tile *T) {
    return !T->xzrt && T->xzc == 0;
}

/* Whether the tile of a dot convolution unrolls its kernel columns: on microcontrollers,
 * the s16x2 tiles (channel pairs, split words, column pairs) of at most 3 kernel
 * columns (column pairs: pairs of columns). Each tap's input offset and weight index are then
 * constants, and at stride 1 the words of a row that several taps read are built once (GCC 12 -O2
 * merges the equal loads): ResNet-8's 3x3 convolutions on the M4 kept the column loop's counter on
 * the stack and rebuilt each word per tap (docs/firmware.md). Int8 on the M4, QEMU instructions:
 * DS-CNN's first convolution (10x4: two column pairs) 0.679 -> 0.527 M, ResNet-8's 3x3 convolutions
 * as split words 21.11 -> 18.39 M (2 x 4 tiles). */
static bool conv_unroll_cols(kn_lower *L, const conv_geom *G, const kt_tile *T, int64_t kwn) {
    (void)G;
    return L->target && L->target->kind == KN_TARGET_MCU && T->dot == KN_DOT_S16X2 &&
           T->lanes == 1 && kwn > 1 && kwn <= 3;
}

/* Whether a tile's packed weights are prefetched (conv_geom.pf): on CPU targets, for
 * the plain four-part dot words over a padded copy (the channel tiles of ResNet's 3x3
 * layers) and the float windowed tiles with vectors (their direct 3x3 layers), where the
 * weights are more than half the second-level cache. Each block of output channels
 * reads its weights once per tile, so every block after the first starts by streaming
 * them from the third level or memory (ResNet-18's layer4: 147 KB a block of 32
 * channels, 2.4 MB a layer, gone from the caches since the last run); that first pass
 * ran at the memory's pace, the other tiles at the dot product's. flat: the float pointwise
 * channel tiles (pw_channel_tiles, one row of oh*ow pixels) too, where the weights are half
 * the L2 or more: ResNet-50's layer4 1x1s (2-4 MB, 8-32 blocks of 64 channels) and its
 * layer3 1024 -> 256 ones (1 MB, 4 blocks) read each block's weights from memory at its
 * first tile; Intel Xeon VM, CPU time at one thread, 5 pairs alternated each: layer4's six
 * 0.834 of main's binary (5 of 5 faster), layer3's five 0.949 (schedule files, 5 of 5;
 * docs/benchmarks.md "ResNet-50's pointwise weights prefetched"). */
static bool conv_pf_suits(const kn_target *tg, const conv_geom *G, const kt_tile *T,
                          const kn_sched *ov, bool flat) {
    if (!tg || tg->kind != KN_TARGET_CPU || G->band || (ov && ov->pf == 2)) return false;
    int64_t blk;   /* the packed weights of one block of columns, in elements */
    if (!T->dot) { /* float windows: tile_conv's vector tiles over the input or its copy */
        if (T->t != KN_F32 || T->lanes < 2 || (G->kh * G->kw < 2 && !flat)) return false;
        blk = G->cg * G->kh * G->kw * T->kb;
    } else {
        if (T->parts != 4 || (!G->xw && !G->xcl) || G->xblk || T->cpair || T->wide || T->split ||
            T->wpair || T->xpre)
            return false;
        blk = ((G->cg + 3) / 4) * G->kh * G->kw * T->kb;
    }
    if (G->wpk->numel < 2 * blk) return false;
    if (ov && ov->pf == 1) return true; /* a schedule file's pf=1: whatever their size */
    int64_t l2 = kn_target_l2(tg, 512 * 1024);
    int64_t bytes = G->wpk->numel * (int64_t)kn_dtype_get(G->wpk->dtype)->size;
    return flat && G->kh * G->kw == 1 ? bytes >= l2 / 2 : bytes > l2 / 2;
}

/* The prefetch of conv_geom.pf, once per reduction step q of a tile (a channel group, or
 * a float tile's input channel, times a kernel row: K of them): the next block's weights
 * (the last block its own), spread evenly over this block's tiles so the third level
 * serves them at a steady rate: at the tile of pixels [P, P + rows) of the oh * ow and
 * its step q of K, the line at offset (P * K + q * rows) / (oh * ow * K) of the block
 * (always inside it). ResNet-18 layer4's 147 KB over 7 tiles of 7 pixels: a prefetch
 * every 55 bytes; its 14x14 layers' 74 KB over 28 tiles: every 14. Flat tiles
 * (conv_geom.flat) pass oy 0 and their first pixel as ow0. */
static void conv_pf(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kx *gb, kn_kx *cgrp,
                    kn_kx *krow, kn_kx *oy, kn_kx *ow0) {
    int64_t ng = T->dot ? (G->cg + 3) / 4 : G->cg, K = ng * G->kh, bw = ng * G->kh * G->kw * T->kb;
    int64_t nblk = G->wpk->numel / bw;
    kn_kx *q = mad(L, cgrp, G->kh, krow);
    kn_kx *u = kx_add(L, kx_mul(L, mad(L, oy, G->ow, ow0), kx_int(L, K)),
                      kx_mul(L, q, kx_int(L, T->rows)));
    kn_kx *off = kx_bin(L, KX_DIV, kx_mul(L, u, kx_int(L, bw)), kx_int(L, G->oh * G->ow * K));
    kn_kx *next = kx_bin(L, KX_MIN, kt_plus(L, gb, 1), kx_int(L, nblk - 1));
    kl_prefetch(L, G->wpk, mad(L, next, bw, off));
    /* where a step's share passes a 64-byte line (ln elements), the next line too: span
     * tiles of 13 pixels over 7x7 spread a block over 4 tiles (102 bytes a step), so one
     * prefetch left a third of its lines to the hardware. Intel Xeon VM, CPU time at one
     * thread, 6 pairs alternated each: ResNet-18's four layer4 3x3 convolutions 0.932 (6
     * of 6 faster; the model 0.971, 6 of 6), ResNet-50's three 0.961 (5 of 6); its
     * layer3.0 conv2 (7 floats a step: one prefetch) 1.016 with the second, so not there
     * (docs/benchmarks.md "ResNet-50's pointwise weights prefetched") */
    int64_t ln = 64 / kn_dtype_get(G->wpk->dtype)->size;
    if (T->dot || T->rows * bw <= ln * G->oh * G->ow * K) /* floats: measured there */
        return;
    kl_prefetch(L, G->wpk,
                mad(L, next, bw, kx_bin(L, KX_MIN, kt_plus(L, off, ln), kx_int(L, bw - ln))));
    /* and there the tile's own block 4 KB (64 lines) ahead of step q's weights: the first
     * block of the kernel, which nothing prefetched, came from memory at its first tile's
     * pace. Same measure, with / without: ResNet-18's four 0.966 (6 of 6), ResNet-50's
     * three 0.967, 0.966 and 0.972 (5 of 6 each); 16 KB ahead 1.006, 1 KB 0.991; on the
     * pointwise channel tiles (1-2 lines a step) 1.012-1.021, so not there */
    kn_kx *own =
        kx_bin(L, KX_MIN, kt_plus(L, kx_mul(L, q, kx_int(L, bw / K)), 64 * ln), kx_int(L, bw - ln));
    kl_prefetch(L, G->wpk, mad(L, gb, bw, own));
}

/* Channel group cgrp (channels cgrp*parts + [0, nch)) over the kernel window, for a dot
 * tile: each tap packs the rows' inputs of those channels into words. A padding tap
 * (crow, ccol: tested) steps with the zero-point word, which the init's correction
 * counted on. */
static void conv_dot_taps(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg, kn_kx *gb,
                          kn_kx *cgrp, int nch, kn_kx *oy, kn_kx *ow0, bool crow, bool ccol) {
    /* column pairs: kwn = ceil(kw / 2) steps along the kernel row, 2 * dw apart, and one
     * channel a group (conv_cpairs' words) */
    int64_t kwn = T->cpair ? (G->kw + 1) / 2 : G->kw, jstep = T->cpair ? 2 * G->dw : G->dw;
    int64_t khw = G->kh * kwn, ng = T->cpair ? G->cg : (G->cg + T->parts - 1) / T->parts;
    KN_ASSERT(!T->wide || (G->xw && !crow && !ccol)); /* the padded blocks: no tests */
    int vi = kl_for(L, G->kh);
    if (G->pf) conv_pf(L, G, T, gb, cgrp, kx_var(L, vi), oy, ow0);
    kn_kx *iy = kt_plus(L, mad(L, oy, G->sh, kx_mul(L, kx_var(L, vi), kx_int(L, G->dh))), -G->oph);
    if (crow) kl_if(L, kt_inside(L, iy, G->h));
    /* the kernel columns unrolled (conv_unroll_cols): each tap's column a constant */
    bool unroll = conv_unroll_cols(L, G, T, kwn);
    kn_kx *zp[KT_MAX_ROWS];
    int vj = unroll ? -1 : kl_for(L, kwn);
    for (int64_t jc = 0; jc < (unroll ? kwn : 1); jc++) {
        kn_kx *jx = unroll ? kx_int(L, jc) : kx_var(L, vj);
        /* packed words: [group block gb][cgrp][i][j][kb] */
        /* split: two words a step; reduction words: wide words a column */
        int64_t wstride = T->wpair   ? T->kb /* i64 pairs */
                          : T->split ? 2 * T->kb
                          : T->wide  ? T->wide * T->kb
                                     : T->kb;
        kn_kx *widx =
            kx_mul(L, mad(L, gb, ng * khw, mad(L, mad(L, cgrp, G->kh, kx_var(L, vi)), kwn, jx)),
                   kx_int(L, wstride));
        int vw = kl_decl(L, KN_I64, widx);
        kn_kx *ix = kt_plus(L, mad(L, ow0, G->sw, kx_mul(L, jx, kx_int(L, jstep))), -G->opw);
        if (ccol) kl_if(L, kt_inside(L, ix, G->w));
        kn_kx *words[KT_MAX_ROWS] = {0};
        if (G->xblk) { /* the tile's pixels: [cgrp][row] */
            /* at most 4 groups (16 input channels: one trip of conv_reduce_dot, no loop)
             * the tile's widened words are kept loads (kx_load_kept), read again by every
             * block of output channels: GCC 12 otherwise holds all of them in registers
             * over the blocks and spills (MobileNetV1's banded 8 -> 16 layers 193.6 ->
             * 176.3 K each, its 16 -> 32 layer 0.419 -> 0.402 M with the 4 groups in one
             * trip; kept with a loop it went to 0.486 M, and 32 channels as one kept trip
             * took the 32 -> 32 layer 0.650 -> 0.683 M) */
            bool kept = G->cg / T->parts <= 8;
            for (int r = 0; r < T->rows; r++) {
                kn_kx *at = kt_plus(L, kx_mul(L, cgrp, kx_int(L, T->maxrows)), r);
                words[r] = kept ? kx_load_kept(L, G->xw, at) : kx_load(L, G->xw, at);
            }
        } else if (G->xw) { /* one word a row: [b][g][cgrp][iy][ix] */
            kn_kx *plane = mad(L, mad(L, kx_var(L, vb), G->group, kx_var(L, vg)), ng, cgrp);
            int vxw = kl_decl(L, KN_I64, mad(L, mad(L, plane, G->hp, iy), G->wp, ix));
            for (int r = 0; r < T->rows; r++)
                words[r] = T->wide
                               ? kx_vload(L, G->xw,
                                          kx_mul(L, kt_plus(L, kx_var(L, vxw), r * G->sw),
                                                 kx_int(L, T->wide)),
                                          T->wide)
                               : kx_load(L, G->xw, kx_add(L, kx_var(L, vxw), kx_int(L, r * G->sw)));
        }
        kn_kx *ch = mad(L, kx_var(L, vg), G->cg, kx_mul(L, cgrp, kx_int(L, T->parts)));
        int vx = G->xw ? -1 : kl_decl(L, KN_I64, conv_xat(L, G, kx_var(L, vb), ch, iy, ix));
        for (int r = 0; r < T->rows && !G->xw; r++) {
            kn_kx *vals[4];
            for (int g = 0; g < nch; g++)
                vals[g] = kx_load(
                    L, G->x,
                    kx_add(L, kx_var(L, vx), kx_int(L, g * G->xs[1] + r * G->sw * G->xs[3])));
            words[r] = kt_word(L, T, vals, nch);
        }
        kt_step_words(L, T, words, G->wpk, kx_var(L, vw));
        if (ccol && !kt_zp_nil(T)) {
            kl_else(L);
            for (int r = 0; r < T->rows; r++) zp[r] = kt_zp_word(L, T);
            kt_step_words(L, T, zp, G->wpk, kx_var(L, vw));
            kl_end(L);
        } else if (ccol) {
            kl_end(L);
        }
    }
    if (!unroll) kl_end(L); /* j */
    if (crow && !kt_zp_nil(T)) {
        int64_t wstride = T->wpair ? T->kb : T->split ? 2 * T->kb : T->kb;
        kl_else(L);
        int vj2 = kl_for(L, kwn);
        kn_kx *w2 = kx_mul(
            L,
            mad(L, gb, ng * khw, mad(L, mad(L, cgrp, G->kh, kx_var(L, vi)), kwn, kx_var(L, vj2))),
            kx_int(L, wstride));
        for (int r = 0; r < T->rows; r++) zp[r] = kt_zp_word(L, T);
        kt_step_words(L, T, zp, G->wpk, w2);
        kl_end_n(L, 2);
    } else if (crow) {
        kl_end(L);
    }
    kl_end(L); /* i */
}

/* Pointwise pairs whose reduction is two trips (conv_reduce_dot): an even number of
 * groups of 4 channels in [PW_TWO_TRIPS_MIN, PW_TWO_TRIPS_MAX]. */
enum { PW_TWO_TRIPS_MIN = 12, PW_TWO_TRIPS_MAX = 64 };

/* The reduction of a dot tile: full channel groups in a loop, then the last partial one. */
static void conv_reduce_dot(kn_lower *L, const conv_geom *G, kt_tile *T, int rows, int vb, int vg,
                            kn_kx *gb, kn_kx *oy, kn_kx *ow0, bool crow, bool ccol) {
    (void)rows;
    int64_t per = T->cpair ? 1 : T->parts; /* channels a group of the packed words */
    int64_t full = G->cg / per, tail = G->cg % per;
    if (T->xpre && full >= 2) {
        /* pointwise pairs: 2, 4, 8 or 16 groups a trip (the loop's adds, compare, branch
         * and its end reloaded from the stack once per trip), then the rest. MobileNetV1
         * int8 on the M4 (bench/fw_profile.sh, QEMU instructions): 2 a trip 12.06 M; 4 from
         * 32 channels 11.80 M; 4 from 32, 8 from 128 11.65 M; 16 from 256 as well 11.64 M;
         * but 16 channels as 4 a trip (no loop) took its 16 -> 32 layer 0.476 -> 0.531 M.
         * Since the requantization records (kt_int_tables_rec): 8 from 64 channels, its
         * 32 -> 64 layer 0.554 -> 0.541 M, 64 -> 128 0.269 -> 0.263 M; 32 channels as 8
         * a trip (no loop) took the 32 -> 32 layer 0.663 -> 0.814 M (spills). 16 channels
         * as one trip again since their widened words are kept loads (conv_dot_taps):
         * 0.419 -> 0.402 M. The 3x3 windows over pre-split pairs (!xblk, whose words are
         * loads at each tap's offset anyway) take 32 and 64 channels in one trip too:
         * ResNet-8's 32-channel layer 2.197 -> 2.108 M, its 64-channel one 2.128 -> 2.078 M.
         * Pointwise pairs of an even number of groups from 12 to 64 (48 to 256 channels):
         * two trips of half of them (PW_TWO_TRIPS), where 4 to 8 trips of 4, 8 or 16 took
         * the loop's steps and end more often: MobileNetV1 int8 on the M4 (fw_profile.sh)
         * 128 -> 128 480.96 -> 473.16 K each (5 layers), 128 -> 256 247.0 -> 241.8 K, 256 ->
         * 256 463.2 -> 457.9 K, 8.421 -> 8.372 M; MobileNetV2 14.517 -> 14.376 M (its 96,
         * 144 and 192-channel layers, 20 to 60 groups: 14.417 M; with 48 and 56 channels
         * too, 12 and 14 groups: 14.376 M); 128 channels in one trip of 32: 798 K
         * (spills). */
        int un = G->xblk && full % 2 == 0 && full >= PW_TWO_TRIPS_MIN && full <= PW_TWO_TRIPS_MAX
                     ? (int)full / 2
                 : full >= 64             ? 16
                 : full == 16 && !G->xblk ? 16
                 : full >= 16             ? 8
                 : full == 8              ? 8
                 : full >= 8 || full == 4 ? 4
                                          : 2;
        /* one trip: the groups as constants, no loop, so that the kept loads of the
         * widened words (conv_dot_taps) share one pointer */
        bool one = full / un == 1;
        int vc = one ? -1 : kl_for(L, full / un);
        for (int u = 0; u < un; u++)
            conv_dot_taps(L, G, T, vb, vg, gb,
                          one ? kx_int(L, u)
                              : kt_plus(L, kx_mul(L, kx_var(L, vc), kx_int(L, un)), u),
                          T->parts, oy, ow0, crow, ccol);
        if (!one) kl_end(L);
        for (int64_t q = full / un * un; q < full; q++)
            conv_dot_taps(L, G, T, vb, vg, gb, kx_int(L, q), T->parts, oy, ow0, crow, ccol);
        full = 0;
    }
    if (full == 1 && T->xpre) { /* pointwise pairs of 4 channels: as above */
        conv_dot_taps(L, G, T, vb, vg, gb, kx_int(L, 0), T->parts, oy, ow0, crow, ccol);
    } else if (full) {
        int vc = kl_for(L, full);
        conv_dot_taps(L, G, T, vb, vg, gb, kx_var(L, vc), T->parts, oy, ow0, crow, ccol);
        kl_end(L);
    }
    if (tail) conv_dot_taps(L, G, T, vb, vg, gb, kx_int(L, full), (int)tail, oy, ow0, crow, ccol);
}

/* Whether every epilogue operand of convolution d is one f32 value or f32 varying
 * along the output channels only (a bias-like [C,1,1]): element c at index c. */
static bool conv_epi_channelwise(const kn_contract *d) {
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o || (o->numel == 1 && o->dtype == KN_F32)) continue;
        int ca = o->rank - (d->y->rank - 1); /* y's channel axis in o */
        if (o->dtype != KN_F32 || ca < 0) return false;
        for (int i = 0; i < o->rank; i++)
            if (i != ca && o->dims[i] != 1) return false;
    }
    return true;
}

/* Whether an epilogue step is a few arithmetic operations or selects (no exp, erf, ...). */
static bool tile_step_cheap(kn_epi_op op) {
    switch (op) {
    case KN_EPI_RELU:
    case KN_EPI_CLIP:
    case KN_EPI_LEAKYRELU:
    case KN_EPI_HARDSIGMOID:
    case KN_EPI_HARDSWISH:
    case KN_EPI_ADD:
    case KN_EPI_MUL:
    case KN_EPI_SUB:
    case KN_EPI_RSUB:
    case KN_EPI_NEG:
    case KN_EPI_ABS: return true;
    default: return false;
    }
}

static void conv_wxpf_step(kn_lower *L, const conv_geom *G, int vb, int vg, kn_kx *c, kn_kx *i,
                           kn_kx *oy);

/* The reduction of an edge tile (float, first output column eow0 known here): the
 * kernel columns unrolled, each tap's column tested now, so a row whose tap reads the
 * left or right padding just skips that step (no test in the code). */
static void conv_reduce_edge(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg, kn_kx *gb,
                             kn_kx *oy, int64_t eow0, bool crow) {
    int vc = kl_for(L, G->cg), vi = kl_for(L, G->kh);
    /* the prefetches of an interior tile's steps (conv_tile): a row of 14 output pixels
     * whose window reads the left padding (pad=1: no padded copy) is one edge tile */
    if (G->pf) conv_pf(L, G, T, gb, kx_var(L, vc), kx_var(L, vi), oy, kx_int(L, eow0));
    if (G->wxpf) conv_wxpf_step(L, G, vb, vg, kx_var(L, vc), kx_var(L, vi), oy);
    kn_kx *iy = kt_plus(L, mad(L, oy, G->sh, kx_mul(L, kx_var(L, vi), kx_int(L, G->dh))), -G->oph);
    if (crow) kl_if(L, kt_inside(L, iy, G->h));
    if (G->band && !G->bandx) iy = kx_sub(L, iy, kx_var(L, G->vband)); /* the band's row */
    kn_kx *ch = mad(L, kx_var(L, vg), G->cg, kx_var(L, vc));
    int vx = kl_decl(L, KN_I64, conv_xat(L, G, kx_var(L, vb), ch, iy, kx_int(L, 0)));
    for (int64_t j = 0; j < G->kw; j++) {
        kn_kx *a[KT_MAX_ROWS] = {0};
        bool any = false;
        for (int r = 0; r < T->rows; r++) {
            int64_t ix = (eow0 + r) * G->sw + j * G->dw - G->opw;
            if (ix < 0 || ix >= G->w) continue;
            a[r] = conv_operand(L, G, kx_load(L, G->x, kt_plus(L, kx_var(L, vx), ix * G->xs[3])));
            any = true;
        }
        if (!any) continue;
        kn_kx *red = mad(L, mad(L, kx_var(L, vc), G->kh, kx_var(L, vi)), G->kw, kx_int(L, j));
        kt_step(L, T, a, G->wpk,
                kx_mul(L, mad(L, gb, G->cg * G->kh * G->kw, red), kx_int(L, T->kb)));
    }
    kl_end_n(L, 2 + crow);
}

/* The leading steps head of d's epilogue on the accumulator vector val, whose lanes are
 * output channels from ch: each operand read as one value or as the channels' vector. */
static kn_kx *head_epilogue(kn_lower *L, const kn_contract *d, const kn_epilogue *head, kn_kx *val,
                            kn_kx *ch, int lanes) {
    kn_kx *opnd[KN_EPI_MAX] = {0};
    for (int k = 0; k < head->n; k++) {
        kn_kbuf *o = d->operand[k];
        if (o) opnd[k] = o->numel == 1 ? kx_load(L, o, kx_int(L, 0)) : kx_vload(L, o, ch, lanes);
    }
    return kl_epilogue(L, head, val, opnd);
}

/* The index conv_tile's transposing loop stores column vc2, row vr of the tile at
 * (vy: the tile's first output). */
static kn_kx *conv_ystore(kn_lower *L, const conv_geom *G, int vc2, int vr, int vy, bool dense) {
    return mad(L, kx_var(L, vc2), G->ys[1],
               dense ? kx_add(L, kx_var(L, vy), kx_var(L, vr))
                     : mad(L, kx_var(L, vr), G->ys[3], kx_var(L, vy)));
}

/* Whether o is laid out as y: the same dtype, shape and dense strides. */
static bool conv_same_layout(const kn_kbuf *o, const kn_kbuf *y) {
    if (o->dtype != y->dtype || o->rank != y->rank || o->numel != y->numel) return false;
    for (int i = 0; i < o->rank; i++)
        if (o->dims[i] != y->dims[i]) return false;
    return true;
}

/* The offset in an NCHW y of output channel mo of batch vb at row oy, column ow0, as a
 * local (the 8-bit tile stores' base: conv_store_words, conv_store_lanes). */
static int conv_nchw_base(kn_lower *L, const conv_geom *G, int vb, kn_kx *mo, kn_kx *oy,
                          kn_kx *ow0) {
    return kl_decl(L, KN_I64,
                   mad(L, mad(L, mad(L, kx_var(L, vb), G->m, mo), G->oh, oy), G->ow, ow0));
}

/* The requantized tile of an 8-bit NCHW output (vq, no epilogue) stored without the tile
 * scratch: y holds an output channel's pixels of a row contiguously, a tile's vector
 * holds one pixel's channels, so 4 rows' requantized vectors are combined into one vector
 * of words (kt_dot_word: lane c holds channel c at pixels r .. r + 3, the first in the
 * low byte) and each lane goes to y as one word store (kl_store_word): 16 word stores for
 * 64 bytes where the scratch and its transposing loop took 64 byte stores, 64 byte loads
 * and 64 byte stores. Rows past the last whole 4 go in a last word of the 4 rows that end
 * the tile, which stores the rows it shares with the word before again (same bytes). */
static void conv_store_words(kn_lower *L, const conv_geom *G, const kt_tile *T, int rows, int vb,
                             kn_kx *mo, int valid, kn_kx *oy, kn_kx *ow0) {
    const kn_contract *d = G->d;
    int64_t cs = G->ys[1]; /* channel stride of y: oh * ow */
    int vy = conv_nchw_base(L, G, vb, mo, oy, ow0);
    for (int v = 0; v < T->nv && v * T->lanes < valid; v++) {
        int nc = valid - v * T->lanes < T->lanes ? valid - v * T->lanes : T->lanes;
        kn_kx *col = kt_plus(L, mo, v * T->lanes);
        kn_kx *q[KT_MAX_ROWS] = {0};
        for (int r = 0; r < rows; r++)
            q[r] = kx_var(L, kl_decl_vec(L, G->y->dtype, T->lanes,
                                         kt_int_store_vec(L, d, &G->rq, kx_var(L, T->acc[r][v]),
                                                          col, T->lanes)));
        for (int r0 = 0; r0 < rows; r0 += 4) {
            int r = r0 + 4 <= rows ? r0 : rows - 4; /* the last 4 overlap: same bytes again */
            int vw = kl_decl_vec(L, KN_I32, T->lanes, kt_dot_word(L, 8, 0, q + r, 4));
            for (int c = 0; c < nc; c++)
                kl_store_word(L, G->y, kt_plus(L, kx_var(L, vy), (v * T->lanes + c) * cs + r),
                              kx_lane(L, vw, c));
        }
    }
}

/* Helium's 4-lane tiles (kt_mve) with an 8-bit NCHW output (vq, no epilogue): each
 * accumulator vector (4 channels of one pixel) requantized as a vector of i32 (the
 * clamped values: codegen/c/cprint.c KN_RQ4IV, VMULH ... VMIN), then its lanes stored to
 * their channels' planes: one strided store (kl_store_strided: a VSTRB.32 scatter) where
 * the target has byte scatters (kn_target.byte_gather), else each lane (VMOV and STRB),
 * where the tile scratch and its transposing loop took a byte store, a byte load, a
 * byte store and the loop's 3 an output. */
static void conv_store_lanes(kn_lower *L, const conv_geom *G, const kt_tile *T, int rows, int vb,
                             kn_kx *mo, int valid, kn_kx *oy, kn_kx *ow0) {
    const kn_contract *d = G->d;
    int64_t cs = G->ys[1]; /* channel stride of y: oh * ow */
    int vy = conv_nchw_base(L, G, vb, mo, oy, ow0);
    for (int v = 0; v < T->nv && v * T->lanes < valid; v++) {
        int nc = valid - v * T->lanes < T->lanes ? valid - v * T->lanes : T->lanes;
        kn_kx *col = kt_plus(L, mo, v * T->lanes);
        for (int r = 0; r < rows; r++) {
            kn_kx *q = kt_int_store_vec(L, d, &G->rq, kx_var(L, T->acc[r][v]), col, T->lanes);
            KN_ASSERT(q->op == KX_CAST && q->a[0]->dtype == KN_I32); /* (y) clamp(...) */
            int vq = kl_decl_vec(L, KN_I32, T->lanes, q->a[0]);
            if (nc == T->lanes && L->target && L->target->byte_gather && cs > 1 &&
                G->kh * G->kw == 1) {
                /* one strided store of the 4 lanes, their channels cs apart (Helium's
                 * VSTRB.32 scatter, where the lane stores took a VMOV and a STRB each):
                 * MobileNetV2's 1x1 expansions on the M55 263 -> 247 K; not in tiles
                 * with kernel windows, where GCC 12 holds the offset vector in a Q
                 * register through the reduction loop and spills the tile's (ResNet-8's
                 * first 3x3 convolution 481 -> 490 K, MobileNetV2's stem a band 210 ->
                 * 218 K) */
                kl_store_strided(L, G->y, kt_plus(L, kx_var(L, vy), v * T->lanes * cs + r),
                                 kx_cast(L, G->y->dtype, kx_var(L, vq)), (int)cs);
                continue;
            }
            for (int c = 0; c < nc; c++)
                kl_store(L, G->y, kt_plus(L, kx_var(L, vy), (v * T->lanes + c) * cs + r),
                         kx_cast(L, G->y->dtype, kx_lane(L, vq, c)));
        }
    }
}

/* The reduction tiles (kt_tile.wide, vqred) with an 8-bit NCHW output: VMLADAVA leaves
 * each output in a general register, so a pixel's 4 columns go to the tile scratch (4
 * STR), come back as one vector (VLDRW), are requantized as a vector (KN_RQ4IV: VMULH,
 * VADD, VSHL, VMAX, VMIN) and each lane goes to its channel's plane (VMOV and STRB),
 * where the scalar high-word form took a table load or two, SMULL, ADD, ASR and USAT an
 * output (DS-CNN's 1x1 convolutions on the M55: about 85 of a 2 x 4 tile's 150
 * instructions). The same bits: KN_RQ4IV is kl_requant_hi32's form lane by lane. */
static void conv_store_red(kn_lower *L, const conv_geom *G, const kt_tile *T, int rows, int vb,
                           kn_kx *mo, int valid, kn_kx *oy, kn_kx *ow0) {
    const kn_contract *d = G->d;
    int64_t cs = G->ys[1]; /* channel stride of y: oh * ow */
    KN_ASSERT(T->lanes == 1 && T->nv <= 4);
    int vy = conv_nchw_base(L, G, vb, mo, oy, ow0);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < T->nv; c++)
            if (c < valid) kl_store(L, G->tile, kx_int(L, r * 4 + c), kx_var(L, T->acc[r][c]));
    for (int r = 0; r < rows; r++) {
        int va = kl_decl_vec(L, KN_I32, 4, kx_vload(L, G->tile, kx_int(L, r * 4), 4));
        kn_kx *q = kt_int_store_vec(L, d, &G->rq, kx_var(L, va), mo, 4);
        KN_ASSERT(q->op == KX_CAST && q->a[0]->dtype == KN_I32); /* (y) clamp(...) */
        int vq = kl_decl_vec(L, KN_I32, 4, q->a[0]);
        /* one scatter store (VSTRB.32, offsets c * cs; the stride an int) */
        if (valid == 4 && cs >= 2 && cs < INT32_MAX / 4) {
            kl_store_strided(L, G->y, kt_plus(L, kx_var(L, vy), r),
                             kx_cast(L, G->y->dtype, kx_var(L, vq)), (int)cs);
            continue;
        }
        for (int c = 0; c < valid; c++)
            kl_store(L, G->y, kt_plus(L, kx_var(L, vy), c * cs + r),
                     kx_cast(L, G->y->dtype, kx_lane(L, vq, c)));
    }
}

/* How many steps of k one iteration of a float tile's reduction loop makes (the last
 * one alone after the loop when k is odd): 2 on CPUs with 32 vector registers (where
 * kt_widen makes the 6 x 4 tiles), whose loop the LLVM backend does not unroll (its
 * unrolling is off on hosted CPUs, codegen/llvm/jit.c); else 1. The same steps in the
 * same order: each output is the same sum. The 6 x 4 tile alone with its B (a 1024 x 64
 * panel in L2) on the Intel Xeon VM, a C copy of the loop: 161-169 GFLOP/s one step an
 * iteration, 173-180 two, 166-177 four; the 512 x 1024 x 1024 MatMul 6.77-6.95 -> 6.50-6.61
 * ms of CPU time (docs/benchmarks.md "The host's caches"). */
static int kt_k_steps(kn_lower *L, const kt_tile *T, int64_t k) {
    const kn_target *tg = L->target;
    if (T->t != KN_F32 || !tg || tg->kind != KN_TARGET_CPU || kl_vector_registers(L) < 32 || k < 4)
        return 1;
    return 2;
}

/* Input channel c, kernel row i of a float (or lane-by-lane) tile over the window's columns
 * j: the rows' inputs times the packed weights of (c, i, j) into the accumulators (with the
 * prefetch of conv_pf where G->pf, issued by the caller once per (c, i)). crow / ccol test
 * the input row / column against the plane (padding taps skipped). */
static void conv_fstep_window(kn_lower *L, const conv_geom *G, kt_tile *T, int rows, int vb, int vg,
                              kn_kx *gb, kn_kx *c, kn_kx *i, kn_kx *oy, kn_kx *ow0, bool crow,
                              bool ccol) {
    if (G->span) /* the window of pixel (0, 0); each row's own offset below */
        oy = ow0 = kx_int(L, 0);
    kn_kx *iy = kt_plus(L, mad(L, oy, G->sh, kx_mul(L, i, kx_int(L, G->dh))), -G->oph);
    if (crow) kl_if(L, kt_inside(L, iy, G->h));
    if (G->band && !G->bandx) iy = kx_sub(L, iy, kx_var(L, G->vband)); /* the band's row */
    int vj = kl_for(L, G->kw);
    kn_kx *red = mad(L, mad(L, c, G->kh, i), G->kw, kx_var(L, vj));
    kn_kx *widx = kx_mul(L, mad(L, gb, G->cg * G->kh * G->kw, red), kx_int(L, T->kb));
    kn_kx *ch = mad(L, kx_var(L, vg), G->cg, c);
    kn_kx *ix = kt_plus(L, mad(L, ow0, G->sw, kx_mul(L, kx_var(L, vj), kx_int(L, G->dw))), -G->opw);
    if (ccol) kl_if(L, kt_inside(L, ix, G->w));
    if (G->bandx) ix = kx_sub(L, ix, kx_var(L, G->vband)); /* the band's pixel */
    kn_kx *xi = conv_xat(L, G, kx_var(L, vb), ch, iy, ix);
    kn_kx *a[KT_MAX_ROWS] = {0};
    int vx = kl_decl(L, KN_I64, xi);
    for (int r = 0; r < rows; r++) {
        int64_t py = G->span ? (G->p0 + r) / G->ow : 0, px = G->span ? (G->p0 + r) % G->ow : r;
        if (G->zow0 >= 0) { /* zeroed taps: does row r's window leave the plane? */
            int64_t x0 = (G->zow0 + r) * G->sw - G->opw, x1 = x0 + (G->kw - 1) * G->dw;
            if (x0 < 0 || x1 >= G->w) {
                kn_kx *xr = kt_plus(L, kx_mul(L, kx_var(L, vj), kx_int(L, G->dw)), x0);
                kn_kx *xc =
                    kx_bin(L, KX_MAX, kx_bin(L, KX_MIN, xr, kx_int(L, G->w - 1)), kx_int(L, 0));
                kn_kx *v = kx_load(L, G->x, conv_xat(L, G, kx_var(L, vb), ch, iy, xc));
                a[r] = conv_operand(
                    L, G, kx_select(L, kt_inside(L, xr, G->w), v, kx_const(L, G->x->dtype, 0)));
                continue;
            }
        }
        a[r] =
            conv_operand(L, G,
                         kx_load(L, G->x,
                                 kx_add(L, kx_var(L, vx),
                                        kx_int(L, py * G->sh * G->xs[2] + px * G->sw * G->xs[3]))));
    }
    kt_step(L, T, a, G->wpk, widx);
    kl_end_n(L, 1 + crow + ccol);
}

/* One input channel c of a 1x1 float tile, with its prefetch (conv_k_unroll's loop). */
static void conv_fstep(kn_lower *L, const conv_geom *G, kt_tile *T, int rows, int vb, int vg,
                       kn_kx *gb, kn_kx *c, kn_kx *oy, kn_kx *ow0) {
    if (G->pf) conv_pf(L, G, T, gb, c, kx_int(L, 0), oy, ow0);
    if (G->xpf) { /* pw_xpf: input channel c, xpf pixels on (the last pixel at the end) */
        kn_kx *ix = kx_bin(L, KX_MIN, kt_plus(L, ow0, G->xpf), kx_int(L, G->w - 1));
        kl_prefetch(L, G->x,
                    conv_xat(L, G, kx_var(L, vb), mad(L, kx_var(L, vg), G->cg, c), oy, ix));
    }
    conv_fstep_window(L, G, T, rows, vb, vg, gb, c, kx_int(L, 0), oy, ow0, false, false);
}

/* Whether a float tile's reduction loop makes two input channels an iteration (the last
 * alone after the loop when cg is odd) where kt_k_steps makes two steps of the matrix
 * tiles' (float, CPUs with 32 vector registers, 4 channels or more): a 1x1 window with no
 * padding test (the pointwise channel tiles, pw_channel_tiles), and tiles of at most 34
 * accumulators, vectors and rows together (6 x 4, 4 x 6, 7 x 2, 8 x 2: LLVM keeps their
 * loop in registers; 8 x 3 in two steps spilled accumulators to the stack, 2-24 moves an
 * iteration). The same steps in the same order (each output the same sum), conv_pf's
 * prefetch still once a step;
 * LLVM does not unroll the loop itself on hosted CPUs (codegen/llvm/jit.c). Intel Xeon VM,
 * CPU time at one thread against main's binary, alternated rounds: lone 1x1 convolutions
 * 1024 -> 256 on 14x14 0.93-0.97, 2048 -> 512 on 7x7 0.89-0.93, 512 -> 2048 0.93-0.96,
 * 320 -> 1280 0.93-0.96, 160 -> 960 0.94-0.97 (4 rounds each); the changed kernels of
 * ResNet-50 (5) 0.97, SqueezeNet (2) 0.96, EfficientNet-B0 (12) 0.98, MobileNetV2 (18)
 * 0.99 (medians of 8 rounds; docs/benchmarks.md "The matrix tile's instruction mix"). */
static bool conv_k_unroll(kn_lower *L, const conv_geom *G, const kt_tile *T, bool crow, bool ccol) {
    return kt_k_steps(L, T, G->cg) == 2 && !T->dot && G->kh == 1 && G->kw == 1 && !crow && !ccol &&
           T->maxrows * T->nv + T->maxrows + T->nv <= 34;
}

/* The prefetch of conv_geom.wxpf, once per reduction step (input channel c, kernel row i)
 * of a tile of output row oy: the first and last element of the padded input row that
 * output row oy + 1 reads at that step (the last output row: its own), so the next tile
 * finds its rows in cache. */
static void conv_wxpf_step(kn_lower *L, const conv_geom *G, int vb, int vg, kn_kx *c, kn_kx *i,
                           kn_kx *oy) {
    kn_kx *ny = kx_bin(L, KX_MIN, kt_plus(L, oy, 1), kx_int(L, G->oh - 1));
    kn_kx *iy = mad(L, ny, G->sh, kx_mul(L, i, kx_int(L, G->dh)));
    if (G->oph) /* the unpadded input (pad=1): the row clamped inside it */
        iy = kx_bin(L, KX_MAX, kx_bin(L, KX_MIN, kt_plus(L, iy, -G->oph), kx_int(L, G->h - 1)),
                    kx_int(L, 0));
    kn_kx *ch = mad(L, kx_var(L, vg), G->cg, c);
    int64_t last = (G->ow - 1) * G->sw + (G->kw - 1) * G->dw - G->opw;
    last = last > G->wp - 1 ? G->wp - 1 : last; /* the extent read: wp = w with no copy */
    kl_prefetch(L, G->x, conv_xat(L, G, kx_var(L, vb), ch, iy, kx_int(L, 0)));
    kl_prefetch(L, G->x, conv_xat(L, G, kx_var(L, vb), ch, iy, kx_int(L, last)));
}

/* One tile: rows output pixels from ow0 of output row oy, columns kb*KB + [0, valid).
 * crow: test each kernel row against the input's rows; ccol (rows == 1): test each
 * tap's column (padding read inside the kernel, passes/tile.h kt_interior); eow0 >= 0:
 * an edge tile at that first column (conv_reduce_edge; ow0 is then that constant). */
static void conv_tile(kn_lower *L, const conv_geom *G, kt_tile *T, int rows, int vb, int vg,
                      kn_kx *blk, int valid, kn_kx *oy, kn_kx *ow0, bool crow, bool ccol,
                      int64_t eow0) {
    int64_t kbn = (G->kg + T->kb - 1) / T->kb;
    kn_kx *gb = mad(L, kx_var(L, vg), kbn, blk); /* block index over all groups */
    conv_geom gi;
    if (G->bpkf && !crow && !ccol && eow0 < 0 && G->rq.rec != 4) {
        /* interior: the zero point in the init (not in the records' init) */
        gi = *G;
        gi.xzfold = true, gi.bpk = G->bpkf;
        G = &gi;
    }
    if (G->rq.rec == 4) { /* the init in the requantization's records (kt_int_tables_rec) */
        T->rows = rows;
        for (int r = 0; r < rows; r++)
            for (int v = 0; v < T->nv; v++)
                T->acc[r][v] = kl_decl(
                    L, T->t,
                    kt_int_rec_init(L, &G->rq, kt_plus(L, kx_mul(L, gb, kx_int(L, T->kb)), v)));
    } else {
        kt_begin(L, T, rows, G->bpk, kx_mul(L, gb, kx_int(L, T->kb)));
    }
    if (T->dot) {
        conv_reduce_dot(L, G, T, rows, vb, vg, gb, oy, ow0, crow, ccol);
        goto store;
    }
    if (eow0 >= 0) {
        conv_reduce_edge(L, G, T, vb, vg, gb, oy, eow0, crow);
        goto store;
    }
    if (conv_k_unroll(L, G, T, crow, ccol)) {
        /* a 1x1 window: two input channels an iteration, the last alone where cg is odd */
        int vc2 = kl_for(L, G->cg / 2);
        for (int u = 0; u < 2; u++)
            conv_fstep(L, G, T, rows, vb, vg, gb,
                       kt_plus(L, kx_mul(L, kx_var(L, vc2), kx_int(L, 2)), u), oy, ow0);
        kl_end(L);
        if (G->cg % 2) conv_fstep(L, G, T, rows, vb, vg, gb, kx_int(L, G->cg - 1), oy, ow0);
    } else {
        int vc = kl_for(L, G->cg), vi = kl_for(L, G->kh);
        if (G->pf) conv_pf(L, G, T, gb, kx_var(L, vc), kx_var(L, vi), oy, ow0);
        if (G->wxpf) conv_wxpf_step(L, G, vb, vg, kx_var(L, vc), kx_var(L, vi), oy);
        conv_fstep_window(L, G, T, rows, vb, vg, gb, kx_var(L, vc), kx_var(L, vi), oy, ow0, crow,
                          ccol);
        kl_end_n(L, 2);
    }
    if (G->span) oy = kx_int(L, 0), ow0 = kx_int(L, G->p0); /* y at pixel p0 of the plane */
store:
    kt_add_init(L, T);
    /* y[b, g*kg + blk*kb + col, oh, ow0 + r]: the channels are strided in y, so the
     * tile goes through a [rows][kb] scratch in vector stores, then a loop transposes;
     * each block has its own, so blocks stay independent (parallel).
     * The epilogue runs on the accumulator vectors before those stores where it can:
     * all of it when its operands vary along the channels only (a full block: the
     * operands' vectors stay inside it), else its leading steps that are cheap
     * (tile_step_cheap) and read one value at most (a ReLU6 is two vector selects, where
     * per element in the transposing loop the C compiler left them scalar). The rest (a
     * residual read at each output, a transcendental, whose code would be repeated for
     * every accumulator) runs per element in the loop. */
    const kn_contract *d = G->d;
    kn_kx *mo = mad(L, kx_var(L, vg), G->kg, kx_mul(L, blk, kx_int(L, T->kb)));
    if (G->direct) { /* scalar integer tiles: each accumulator requantized into y */
        const int64_t *ys = G->ys;
        int vy =
            kl_decl(L, KN_I64,
                    mad(L, kx_var(L, vb), ys[0],
                        mad(L, mo, ys[1], mad(L, oy, ys[2], kx_mul(L, ow0, kx_int(L, ys[3]))))));
        for (int c = 0; c < valid; c++) /* a column's tables read once for its rows */
            for (int r = 0; r < rows; r++)
                kl_store(L, G->y, kt_plus(L, kx_var(L, vy), c * ys[1] + r * ys[3]),
                         kt_int_epi(
                             L, d,
                             kt_int_store(L, d, &G->rq, kx_var(L, T->acc[r][c]), kt_plus(L, mo, c)),
                             kt_plus(L, mo, c)));
        return;
    }
    int pre = 0;
    if (d->epi && !kn_contract_is_int(d)) {
        if (valid == T->kb && conv_epi_channelwise(d))
            pre = d->epi->n;
        else
            while (pre < d->epi->n && tile_step_cheap(d->epi->s[pre].op) &&
                   (!d->operand[pre] || d->operand[pre]->numel == 1))
                pre++;
    }
    kn_epilogue head = {.n = pre};
    if (pre) memcpy(head.s, d->epi->s, (size_t)pre * sizeof *head.s);
    const int64_t *ys = G->ys;
    /* channels contiguous in y (channels-last) and the whole epilogue on the vectors:
     * each accumulator vector goes straight to y, no scratch, no transposing loop */
    bool direct =
        ys[1] == 1 && (kn_contract_is_int(d) ? G->vq && !d->epi : !d->epi || pre == d->epi->n);
    if (direct) {
        int vy = kl_decl(L, KN_I64,
                         mad(L, kx_var(L, vb), ys[0],
                             kx_add(L, mo, mad(L, oy, ys[2], kx_mul(L, ow0, kx_int(L, ys[3]))))));
        for (int r = 0; r < rows; r++)
            for (int v = 0; v < T->nv && v * T->lanes < valid; v++) {
                kn_kx *val = kx_var(L, T->acc[r][v]);
                if (pre)
                    val = head_epilogue(L, d, &head, val, kt_plus(L, mo, v * T->lanes), T->lanes);
                if (G->vq) /* requantized: a vector of y's 8-bit values */
                    val =
                        kt_int_store_vec(L, d, &G->rq, val, kt_plus(L, mo, v * T->lanes), T->lanes);
                kn_kx *yi = kt_plus(L, kx_var(L, vy), r * ys[3] + v * T->lanes);
                if ((v + 1) * T->lanes <= valid) {
                    kl_store(L, G->y, yi, val);
                    continue;
                }
                int vv = kl_decl_vec(L, G->vq ? G->y->dtype : T->t, T->lanes,
                                     val); /* the partial vector */
                for (int l = 0; l < valid - v * T->lanes; l++)
                    kl_store(L, G->y, kt_plus(L, yi, l), kx_lane(L, vv, l));
            }
        return;
    }
    bool dense = ys[3] == 1 && ys[2] == G->ow && ys[1] == G->oh * G->ow; /* NCHW */
    if (G->vqred) {
        conv_store_red(L, G, T, rows, vb, mo, valid, oy, ow0);
        return;
    }
    if (G->vq && !d->epi && dense && rows >= 4) {
        conv_store_words(L, G, T, rows, vb, mo, valid, oy, ow0);
        return;
    }
    if (G->vq && !d->epi && dense && T->t == KN_I32 && T->lanes == 4 && L->target &&
        L->target->kind == KN_TARGET_MCU) {
        conv_store_lanes(L, G, T, rows, vb, mo, valid, oy, ow0);
        return;
    }
    kn_kx *slot = G->row_tiles ? mad(L, blk, G->oh, oy) : blk;
    int vt = kl_decl(L, KN_I64, kx_mul(L, slot, kx_int(L, T->maxrows * T->kb)));
    for (int r = 0; r < rows; r++)
        for (int v = 0; v < T->nv; v++) {
            kn_kx *val = kx_var(L, T->acc[r][v]);
            if (pre) val = head_epilogue(L, d, &head, val, kt_plus(L, mo, v * T->lanes), T->lanes);
            if (G->vq) /* requantized as vectors: the scratch holds y's 8-bit values */
                val = kt_int_store_vec(L, d, &G->rq, val, kt_plus(L, mo, v * T->lanes), T->lanes);
            kl_store(L, G->tile, kx_add(L, kx_var(L, vt), kx_int(L, r * T->kb + v * T->lanes)),
                     val);
        }
    kn_kx *y0 = dense ? mad(L, mad(L, mad(L, kx_var(L, vb), G->m, mo), G->oh, oy), G->ow, ow0)
                      : mad(L, kx_var(L, vb), ys[0],
                            mad(L, mo, ys[1], mad(L, oy, ys[2], kx_mul(L, ow0, kx_int(L, ys[3])))));
    int vy = kl_decl(L, KN_I64, y0);
    /* channels innermost where they are contiguous in y (channels-last) */
    int vc2, vr;
    if (ys[1] == 1)
        vr = kl_for(L, rows), vc2 = kl_for(L, valid);
    else
        vc2 = kl_for(L, valid), vr = kl_for(L, rows);
    kn_kx *val =
        kx_load(L, G->tile, kx_add(L, kx_var(L, vt), mad(L, kx_var(L, vr), T->kb, kx_var(L, vc2))));
    if (kn_contract_is_int(d) && !G->vq)
        val = kt_int_store(L, d, &G->rq, val, kx_add(L, mo, kx_var(L, vc2)));
    if (kn_contract_is_int(d) && d->epi) /* a fused float tail: on the float accumulator */
        val = kt_int_epi(L, d, val, kx_add(L, mo, kx_var(L, vc2)));
    else if (d->epi && pre < d->epi->n) { /* y[b, mo + c, oh, ow0 + r] */
        kn_kx *coord[4] = {kx_var(L, vb), kx_add(L, mo, kx_var(L, vc2)), oy, NULL};
        kn_kx *opnd[KN_EPI_MAX] = {0};
        coord[d->nsp == 2 ? 3 : 2] = kx_add(L, ow0, kx_var(L, vr));
        kt_epi_operands(L, d, coord, 1, opnd);
        /* an operand of y's shape and layout (a residual) read at the store's own index,
         * so the plan sees that the store may go over it (passes/plan.c, in place) */
        for (int k = pre; k < d->epi->n; k++)
            if (d->operand[k] && dense && conv_same_layout(d->operand[k], G->y))
                opnd[k] = kx_load(L, d->operand[k], conv_ystore(L, G, vc2, vr, vy, dense));
        kn_epilogue tail = {.n = d->epi->n - pre};
        memcpy(tail.s, d->epi->s + pre, (size_t)tail.n * sizeof *tail.s);
        val = kl_epilogue(L, &tail, val, opnd + pre);
    }
    kl_store(L, G->y, conv_ystore(L, G, vc2, vr, vy, dense), val);
    kl_end_n(L, 2);
}

/* Edge tile t of output row oy (tiles of T->maxrows columns; its window leaves the plane
 * at the left or right): with zeroed taps (conv_geom.ztap) in the interior tiles' form,
 * its first column zow0 known, else in the edge form (conv_reduce_edge). */
static void conv_edge_tile(kn_lower *L, const conv_geom *G, kt_tile *T, int64_t t, int vb, int vg,
                           kn_kx *blk, int valid, kn_kx *oy, bool crow) {
    int64_t R = T->maxrows, x0 = t * R;
    int rows = (int)(G->ow - x0 < R ? G->ow - x0 : R);
    conv_geom gz;
    if (G->ztap) {
        gz = *G;
        gz.zow0 = x0;
    }
    conv_tile(L, G->ztap ? &gz : G, T, rows, vb, vg, blk, valid, oy, kx_int(L, x0), crow, false,
              G->ztap ? -1 : x0);
}

/* Output rows [oy0, oy1) of one block of columns; crow: the rows read padding above or
 * below. Float tiles split each row into tiles of maxrows pixels from column 0: those
 * whose windows leave the input at the left or right are edge tiles (conv_reduce_edge),
 * the others run in a loop with no test; a row of 7 is one edge tile of 7 pixels.
 * Integer dot tiles (and rows with too many edge tiles) compute the border columns one
 * pixel a tile, each tap tested, and the interior in full tiles and a partial one. */
static void conv_rows(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg, kn_kx *blk,
                      int valid, int64_t oy0, int64_t oy1, bool crow) {
    if (oy1 <= oy0) return;
    int voh = kl_for(L, oy1 - oy0);
    kn_kx *oy = kt_plus(L, kx_var(L, voh), oy0);
    if (G->band && !G->bandx) oy = kx_add(L, oy, kx_var(L, G->vband)); /* rows of the band */
    int64_t R = T->maxrows, ow = G->ow, ntl = (ow + R - 1) / R;
    /* tiles [ta, tb) are inside: start at or after xlo, end at or before xhi */
    int64_t ta = (G->xlo + R - 1) / R, tb = G->xhi >= ow ? ntl : G->xhi / R;
    tb = tb < ta ? ta : tb;
    if (!T->dot && ta + (ntl - tb) <= KT_MAX_EDGE) {
        for (int64_t t = 0; t < ta; t++) conv_edge_tile(L, G, T, t, vb, vg, blk, valid, oy, crow);
        int64_t tfull = tb * R <= ow ? tb : tb - 1; /* the inside tiles that are whole */
        if (tfull > ta) {
            int vt = kl_for(L, tfull - ta);
            if (G->tile && G->tile->per_thread && tfull - ta > 1) /* conv_tile_per_thread */
                L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
            conv_tile(L, G, T, (int)R, vb, vg, blk, valid, oy,
                      kx_mul(L, kt_plus(L, kx_var(L, vt), ta), kx_int(L, R)), crow, false, -1);
            kl_end(L);
        }
        if (tb > ta && tfull < tb) /* a partial tile inside */
            conv_tile(L, G, T, (int)(ow - tfull * R), vb, vg, blk, valid, oy, kx_int(L, tfull * R),
                      crow, false, -1);
        for (int64_t t = tb; t < ntl; t++) conv_edge_tile(L, G, T, t, vb, vg, blk, valid, oy, crow);
        kl_end(L);
        return;
    }
    if (G->xlo > 0) {
        int v = kl_for(L, G->xlo);
        conv_tile(L, G, T, 1, vb, vg, blk, valid, oy, kx_var(L, v), crow, true, -1);
        kl_end(L);
    }
    int64_t n = G->xhi - G->xlo, nt = n / T->maxrows, rem = n % T->maxrows;
    if (nt) {
        int vt = kl_for(L, nt);
        conv_tile(L, G, T, T->maxrows, vb, vg, blk, valid, oy,
                  kt_plus(L, kx_mul(L, kx_var(L, vt), kx_int(L, T->maxrows)), G->xlo), crow, false,
                  -1);
        kl_end(L);
    }
    if (rem)
        conv_tile(L, G, T, (int)rem, vb, vg, blk, valid, oy, kx_int(L, G->xlo + nt * T->maxrows),
                  crow, false, -1);
    if (G->ow > G->xhi) {
        int v = kl_for(L, G->ow - G->xhi);
        conv_tile(L, G, T, 1, vb, vg, blk, valid, oy, kt_plus(L, kx_var(L, v), G->xhi), crow, true,
                  -1);
        kl_end(L);
    }
    kl_end(L);
}

/* All output rows of one block of columns: top border, interior, bottom border. */
static void conv_block(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg, kn_kx *blk,
                       int valid) {
    conv_rows(L, G, T, vb, vg, blk, valid, 0, G->ylo, true);
    conv_rows(L, G, T, vb, vg, blk, valid, G->ylo, G->yhi, false);
    conv_rows(L, G, T, vb, vg, blk, valid, G->yhi, G->oh, true);
}

/* All output pixels of one block of columns in span tiles (conv_geom.span): maxrows
 * consecutive pixels of the oh * ow plane a tile, the last one shorter, unrolled (at most
 * KN_SPAN_MAX_TILES), each at the constant offsets of its pixels. */
static void conv_plane(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg, kn_kx *blk,
                       int valid) {
    int64_t P = G->oh * G->ow, R = T->maxrows;
    conv_geom gs = *G;
    for (int64_t p0 = 0; p0 < P; p0 += R) {
        gs.p0 = p0;
        conv_tile(L, &gs, T, (int)(P - p0 < R ? P - p0 : R), vb, vg, blk, valid, kx_int(L, 0),
                  kx_int(L, p0), false, false, -1);
    }
}

/* Pointwise pairs (G->xblk): the `rows` pixels from ow0 of every input channel, split
 * into i64 halves in the tile scratch G->xw, [c / 4][maxrows], once per tile of pixels
 * for all its blocks of output channels: a pixel's 4 channels are 4 byte loads, then for
 * u8 input the halves x0 | x2 << 16 and x1 | x3 << 16 (two ORRs with a shift), else the
 * word and its two unpacks (kt_split_pair, SXTB16), and one 8-byte store. */
/* One step q of pw_pairs_widen: input channels 4q .. 4q + 4 of the tile's rows pixels. */
static void pw_pairs_widen_step(kn_lower *L, const conv_geom *G, const kt_tile *T, int vb, int vg,
                                kn_kx *ow0, int rows, kn_kx *q) {
    kn_kx *ch = mad(L, kx_var(L, vg), G->cg, kx_mul(L, q, kx_int(L, 4)));
    int vx = kl_decl(L, KN_I64, conv_xat(L, G, kx_var(L, vb), ch, kx_int(L, 0), ow0));
    for (int r = 0; r < rows; r++) {
        kn_kx *vals[4];
        for (int k = 0; k < 4; k++)
            vals[k] = kx_load(L, G->x, kt_plus(L, kx_var(L, vx), k * G->xs[1] + r * G->xs[3]));
        kn_kx *at = kt_plus(L, kx_mul(L, q, kx_int(L, T->maxrows)), r);
        if (T->xunsigned && !T->xoff) { /* u8: the halves straight from the bytes */
            kn_kx *h[2];
            for (int o = 0; o < 2; o++)
                h[o] = kx_cast(L, KN_I64,
                               kx_bin(L, KX_OR, kx_cast(L, KN_U32, vals[o]),
                                      kx_bin(L, KX_SHL, kx_cast(L, KN_U32, vals[o + 2]),
                                             kx_const(L, KN_U32, 16.0))));
            kl_store(L, G->xw, at,
                     kx_bin(L, KX_OR, h[0], kx_mul(L, h[1], kx_int(L, 4294967296LL))));
            continue;
        }
        int vw = kl_decl(L, KN_I32, kt_word(L, T, vals, 4));
        kl_store(L, G->xw, at, kt_split_pair(L, T, kx_var(L, vw)));
    }
}

/* The tile's pixels of every input channel widened into G->xw ([c / 4][maxrows] i64),
 * two steps of 4 channels a trip (GCC 12's loop of one step: 14 instructions of loads,
 * ORs and STRDs and 4 of loop control), the odd step left over after the loop. */
static void pw_pairs_widen(kn_lower *L, const conv_geom *G, const kt_tile *T, int vb, int vg,
                           kn_kx *ow0, int rows) {
    int64_t nq = G->cg / 4;
    if (nq >= 2) {
        int vq = kl_for(L, nq / 2);
        for (int j = 0; j < 2; j++)
            pw_pairs_widen_step(L, G, T, vb, vg, ow0, rows,
                                kt_plus(L, kx_mul(L, kx_var(L, vq), kx_int(L, 2)), j));
        kl_end(L);
    }
    if (nq % 2) pw_pairs_widen_step(L, G, T, vb, vg, ow0, rows, kx_int(L, nq - 1));
}

/* Whether the blocks of output channels over a tile of pixels are unrolled whole
 * (KN_LOOP_UNROLL: GCC's unroll pragma in C): where the reduction is one trip of at most 4
 * groups (16 input channels, no loop: conv_reduce_dot) and there are at most
 * PW_UNROLL_MAX blocks, each block's weights and records are then at constant offsets
 * and the loop's compare, branch and pointer steps go. MobileNetV1 int8 on the M4
 * (QEMU instructions, fw_profile.sh): its 8 -> 16 bands 176.3 -> 169.8 K each, 16 -> 32
 * 401.5 -> 373.9 K; where the reduction is a loop (32 and 64 input channels) unrolled
 * blocks took 650 -> 902 K and 315 -> 448 K. At most 24 blocks (MobileNetV2's 8 -> 48
 * layers in 2 x 2 tiles), with the weights through their kept pointer (kt_tile.wkept):
 * MobileNetV2 14.954 -> 14.681 M, its flash +13 KB; 32 blocks no faster, +29 KB. */
enum { PW_UNROLL_MAX = 24 };

static bool pw_pairs_unroll(const conv_geom *G, const kt_tile *T, int64_t blocks) {
    return G->cg / T->parts <= 8 && blocks <= PW_UNROLL_MAX;
}

/* Pointwise pairs (G->xblk): tiles of pixels outside, each widened once (pw_pairs_widen),
 * then every block of output channels over it. A block of 4 tiles widened at once, each
 * block of channels then over its 4 tiles (a column's tables read once for them), took
 * 2.5% more instructions on MobileNetV1 (GCC 12 kept a pointer per unrolled group). */
static void pw_pairs_tiles(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg) {
    int64_t R = T->maxrows, nt = G->ow / R, rem = G->ow % R;
    int64_t full = G->kg / T->kb, tail = G->kg % T->kb;
    for (int part = 0; part < 2; part++) { /* whole tiles of pixels, then the last one */
        int rows = part ? (int)rem : (int)R;
        if (part ? !rem : !nt) continue;
        int vt = part ? -1 : kl_for(L, nt);
        kn_kx *ow0 = part ? kx_int(L, nt * R) : kx_mul(L, kx_var(L, vt), kx_int(L, R));
        pw_pairs_widen(L, G, T, vb, vg, ow0, rows);
        T->wkept = pw_pairs_unroll(G, T, full);
        if (full) {
            int vk = kl_for(L, full);
            if (T->wkept) {
                L->owner[L->depth - 1]->annot |= KN_LOOP_UNROLL;
                L->owner[L->depth - 1]->width = (int)full;
            }
            conv_tile(L, G, T, rows, vb, vg, kx_var(L, vk), T->kb, kx_int(L, 0), ow0, false, false,
                      -1);
            kl_end(L);
        }
        if (tail)
            conv_tile(L, G, T, rows, vb, vg, kx_int(L, full), (int)tail, kx_int(L, 0), ow0, false,
                      false, -1);
        T->wkept = false;
        if (!part) kl_end(L);
    }
}

/* Whether each output row gets its own tile scratch. The transposing store goes through
 * a scratch per block of output channels, so the blocks are independent and the parallel
 * pass can split them, but the rows of a block share it and run in order. A convolution
 * with few blocks (SqueezeNet's expand3x3 layers: 64 channels, 2 blocks of 32) then
 * splits into 2 tasks: on 2 threads each takes as long as the whole did on one when the
 * other core is slowed down, and on more threads the rest idle (docs/benchmarks.md,
 * "Why two threads gained little"). A scratch per (block, row) makes the rows of a block
 * independent too, and the parallel pass collapses blocks x rows into one loop of
 * balanced tasks. It costs oh times the scratch (SqueezeNet's fire2: 110 KB), so only
 * kernels that can run on several threads (not on microcontrollers), have fewer than
 * ROW_TILES_BELOW blocks and are large enough for the parallel pass to split them (at
 * least ROW_TILES_MIN_MACS multiply-adds: its threshold, MIN_SPLIT_EFFORT, is about 3 M
 * of them in these tiles) get it, and only when the rows form one loop (a padded copy
 * or no padding: no border rows in loops of their own). */
enum { ROW_TILES_BELOW = 16, ROW_TILES_MIN_MACS = 2000000 };

static bool conv_row_tiles(const conv_geom *G, const kt_tile *T, const kn_target *tg) {
    int64_t blocks = G->n * G->group * ((G->kg + T->kb - 1) / T->kb);
    double macs = (double)G->n * G->m * G->oh * G->ow * G->cg * G->kh * G->kw;
    return !(tg && tg->kind == KN_TARGET_MCU) && blocks < ROW_TILES_BELOW &&
           macs >= ROW_TILES_MIN_MACS && G->ylo == 0 && G->yhi == G->oh && G->oh > 1;
}

/* Whether the float tiles' transposing store goes through a per-thread scratch
 * (kl_scratch_thread) so that the tiles of pixels of a block split too. With one slot
 * per block of output channels shared by all the block's tiles of pixels, the parallel
 * pass can split only the blocks: SqueezeNet's 13x13 squeezes (one row of 169 pixels,
 * 64 channels in one 6 x 4 block) ran on one task at 2 threads. With a copy per thread,
 * a task writes and reads back only its own thread's slot within one tile, so the loop
 * over tiles of pixels is marked parallel by the lowering (conv_rows; the parallel pass
 * cannot prove a shared index private). Hosted CPUs with a pool of more than one thread
 * only, and not with row_tiles (already split by rows, and oh times the scratch per
 * thread): programs for one thread, and microcontrollers, keep the shared scratch and
 * their code. */
static bool conv_tile_per_thread(kn_lower *L, const conv_geom *G, bool integer) {
    const kn_target *tg = L->target;
    return !integer && !G->vq && !G->row_tiles && L->p->threads > 1 && tg &&
           tg->kind == KN_TARGET_CPU;
}

/* The value of a pad: zero, or the input's zero point for integer contractions. */
static kn_kx *conv_pad_value(kn_lower *L, const conv_geom *G, kn_dtype t) {
    kn_kbuf *xz = G->d->xz;
    return xz && kn_contract_is_int(G->d) ? kx_load(L, xz, kx_int(L, 0)) : kx_const(L, t, 0);
}

/* A dense NCHW padded copy in rows, for programs on several threads of a CPU: first the
 * pad rows above and below each plane, then one iteration per plane and input row that
 * stores the row's left pad, copies the row and stores its right pad, each element of xp
 * written once. The whole-buffer fill before the copy split by planes (channels) while
 * the convolution after it splits by output rows: ResNet-50's 3x3 stride-2 convolutions
 * then read the halves of every plane the other core had zeroed and copied (1.3-1.7 MB a
 * run, KILN_XCORE=2). Here the parallel pass can split the row loop in bands like the
 * producer's rows (passes/parallel.c, "splitting like the producer"), and each thread
 * writes the rows its part of the convolution reads. */
static void conv_pad_rows(kn_lower *L, const conv_geom *G, kn_kbuf *x, kn_kbuf *xp) {
    int64_t below = G->hp - G->ph - G->h, right = G->wp - G->pw - G->w;
    for (int part = 0; part < 2; part++) { /* the rows above, then the rows below */
        int64_t rows = part ? below : G->ph, r0 = part ? G->ph + G->h : 0;
        if (rows <= 0) continue;
        int vp = kl_for(L, G->n * G->c), vr = kl_for(L, rows * G->wp);
        kl_store(L, xp, kt_plus(L, mad(L, kx_var(L, vp), G->hp * G->wp, kx_var(L, vr)), r0 * G->wp),
                 conv_pad_value(L, G, x->dtype));
        kl_end_n(L, 2);
    }
    int vp = kl_for(L, G->n * G->c), vh = kl_for(L, G->h);
    int row = kl_decl(L, KN_I64,
                      kx_mul(L, mad(L, kx_var(L, vp), G->hp, kt_plus(L, kx_var(L, vh), G->ph)),
                             kx_int(L, G->wp)));
    if (G->pw > 0) {
        int vj = kl_for(L, G->pw);
        kl_store(L, xp, kx_add(L, kx_var(L, row), kx_var(L, vj)), conv_pad_value(L, G, x->dtype));
        kl_end(L);
    }
    kl_copy(L, xp, kt_plus(L, kx_var(L, row), G->pw), x,
            mad(L, kx_var(L, vp), G->h * G->w, kx_mul(L, kx_var(L, vh), kx_int(L, G->w))),
            kx_int(L, G->w));
    if (right > 0) {
        int vj = kl_for(L, right);
        kl_store(L, xp, kt_plus(L, kx_add(L, kx_var(L, row), kx_var(L, vj)), G->pw + G->w),
                 conv_pad_value(L, G, x->dtype));
        kl_end(L);
    }
    kl_end_n(L, 2);
}

/* The input copied into a scratch with the pads around it: zeros, or the input's zero
 * point for integer contractions (a tap there contributes nothing). */
static kn_kbuf *conv_pad(kn_lower *L, const conv_geom *G, kn_kbuf *x) {
    kn_kbuf *xp = kl_scratch(L, x->dtype, G->n * G->c * G->hp * G->wp);
    if (G->xs[3] == 1 && L->p->threads > 1 && L->target && L->target->kind == KN_TARGET_CPU) {
        conv_pad_rows(L, G, x, xp);
        return xp;
    }
    int vi = kl_for(L, xp->numel);
    kl_store(L, xp, kx_var(L, vi), conv_pad_value(L, G, x->dtype));
    kl_end(L);
    if (G->xs[3] != 1) { /* channels-last: moved to NCHW in the same copy */
        int vb = kl_for(L, G->n), vh = kl_for(L, G->h), vw = kl_for(L, G->w), vc = kl_for(L, G->c);
        kn_kx *dst = mad(L,
                         mad(L, mad(L, kx_var(L, vb), G->c, kx_var(L, vc)), G->hp,
                             kx_add(L, kx_var(L, vh), kx_int(L, G->ph))),
                         G->wp, kx_add(L, kx_var(L, vw), kx_int(L, G->pw)));
        kl_store(
            L, xp, dst,
            kx_load(L, x,
                    conv_xat(L, G, kx_var(L, vb), kx_var(L, vc), kx_var(L, vh), kx_var(L, vw))));
        kl_end_n(L, 4);
        return xp;
    }
    int vp = kl_for(L, G->n * G->c), vh = kl_for(L, G->h);
    kn_kx *dst = mad(L, mad(L, kx_var(L, vp), G->hp, kx_add(L, kx_var(L, vh), kx_int(L, G->ph))),
                     G->wp, kx_int(L, G->pw));
    kl_copy(L, xp, dst, x,
            mad(L, kx_var(L, vp), G->h * G->w, kx_mul(L, kx_var(L, vh), kx_int(L, G->w))),
            kx_int(L, G->w));
    kl_end_n(L, 2);
    return xp;
}

/* A channels-last 8-bit input copied into a scratch [n][hp][wp][c] with the pads around
 * it (the input's zero point: a tap there adds nothing), for the four-part dot tiles,
 * which then read 4 consecutive channels at a position as one word where they are (the
 * channels-last x in place: tile_conv). Only the pads are filled, as conv_words_border
 * does (per image the rows above with the first row's left pad, one run of right + left
 * pad between rows, the last row's right pad with the rows below), and each input row is
 * one copy of w * c bytes: a byte copy of the input, where a word copy of NCHW
 * ([c / 4][hp][wp] i32) would transpose it. */
static kn_kbuf *conv_pad_cl(kn_lower *L, const conv_geom *G, kn_kbuf *x) {
    int64_t c = G->c, row = G->wp * c, img = G->hp * row, right = G->wp - G->pw - G->w;
    int64_t head = (G->ph * G->wp + G->pw) * c, mid = (right + G->pw) * c;
    int64_t tail0 = ((G->ph + G->h - 1) * G->wp + G->pw + G->w) * c;
    kn_kbuf *xp = kl_scratch(L, x->dtype, G->n * img), *xz = G->d->xz;
    int vb = kl_for(L, G->n);
    int vbase = kl_decl(L, KN_I64, kx_mul(L, kx_var(L, vb), kx_int(L, img)));
    int vz = kl_decl(L, x->dtype, kx_load(L, xz, kx_int(L, 0)));
    if (head > 0) {
        int v = kl_for(L, head);
        kl_store(L, xp, kx_add(L, kx_var(L, vbase), kx_var(L, v)), kx_var(L, vz));
        kl_end(L);
    }
    if (G->h > 1 && mid > 0) {
        int vr = kl_for(L, G->h - 1), vk = kl_for(L, mid);
        kn_kx *at = mad(L, kt_plus(L, kx_var(L, vr), G->ph), row, kx_var(L, vk));
        kl_store(L, xp, kx_add(L, kx_var(L, vbase), kt_plus(L, at, (G->pw + G->w) * c)),
                 kx_var(L, vz));
        kl_end_n(L, 2);
    }
    if (img > tail0) {
        int v = kl_for(L, img - tail0);
        kl_store(L, xp, kx_add(L, kx_var(L, vbase), kt_plus(L, kx_var(L, v), tail0)),
                 kx_var(L, vz));
        kl_end(L);
    }
    int vh = kl_for(L, G->h);
    kn_kx *dst = kx_add(L, kx_var(L, vbase),
                        mad(L, kt_plus(L, kx_var(L, vh), G->ph), row, kx_int(L, G->pw * c)));
    kl_copy(L, xp, dst, x,
            mad(L, kx_var(L, vb), G->xs[0], kx_mul(L, kx_var(L, vh), kx_int(L, G->xs[2]))),
            kx_int(L, G->w * c));
    kl_end_n(L, 2);
    return xp;
}

/* The input of a four-part dot tile as the dot reads it, built once per run: words
 * [n][group][cg / 4][hp][wp] (i32), each holding four consecutive channels of the group
 * at one position of the zero-padded input (kt_word: low channel first, + xoff), the
 * padding the zero-point word. One load then feeds a row's dot, where the unpacked
 * input needs four byte loads and the packing per tap. Where cg is not a multiple of 4
 * (a first layer's 3 channels) the last word of each position holds the last cg % 4
 * channels and zeros, whose packed weights are zeros (conv_wdot): the stem reads one
 * word per row and tap instead of building it from cg byte loads at every tap. */
/* A word of 4 input bytes for the reduction tiles (kt_tile.wide), as kt_word packs it
 * with xoff 0 or -128: the bytes as they are, shifted into place and or-ed (a byte load
 * and an ORR with a shifted operand each on Arm), then for xoff -128 (u8 input, s8
 * operands) every byte's top bit flipped at once: (x - 128) mod 256 = x ^ 0x80 */
static kn_kx *wide_word(kn_lower *L, const kt_tile *T, kn_kx *const *vals) {
    KN_ASSERT(T->xoff == 0 || T->xoff == -128);
    kn_kx *w = NULL;
    for (int k = 0; k < 4; k++) {
        kn_kx *v = kx_cast(L, KN_U32, kx_cast(L, KN_U8, vals[k])); /* the byte's bits */
        if (k) v = kx_bin(L, KX_SHL, v, kx_const(L, KN_U32, 8.0 * k));
        w = w ? kx_bin(L, KX_OR, w, v) : v;
    }
    if (T->xoff) w = kx_bin(L, KX_XOR, w, kx_const(L, KN_U32, (double)0x80808080u));
    return kx_cast(L, KN_I32, w);
}

/* conv_words' reduction words (T->wide) on a microcontroller with vectors of as many i32
 * lanes, every 16-channel group whole: a position's 4 words of a group as one vector,
 * lane q the word of channels 4q .. 4q + 3, each of its 4 bytes a strided load of 4 lanes
 * (channels 4 apart: kx_vload_strided, the C emitter's KN_GW4 on Helium: 4 VLDRB.U32
 * gathers, 3 VSLI, a VEOR and one VSTRW), where each word took 4 byte loads, 3 shifts
 * and ORs, an XOR and a store (DS-CNN's 1x1 convolutions on the M55: about 13
 * instructions a word). */
static void conv_words_wide(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kbuf *x,
                            kn_kbuf *xw, int64_t nw, int64_t rows, int64_t cols) {
    int wpp = word_parts(T), lanes = T->wide;
    int vb = kl_for(L, G->n), vg = kl_for(L, G->group), vc = kl_for(L, nw / lanes);
    int vh = kl_for(L, rows);
    kn_kx *bg = mad(L, kx_var(L, vb), G->group, kx_var(L, vg));
    kn_kx *plane = mad(L, bg, nw / lanes, kx_var(L, vc));
    int vd = kl_decl(
        L, KN_I64,
        mad(L, mad(L, plane, G->hp, kt_plus(L, kx_var(L, vh), G->ph)), G->wp, kx_int(L, G->pw)));
    /* the input's own strides: channel g * cg + 16 c (+ 4 q + k in the loads) */
    kn_kx *ch = mad(L, kx_var(L, vg), G->cg, kx_mul(L, kx_var(L, vc), kx_int(L, wpp * lanes)));
    int vs = kl_decl(L, KN_I64, conv_xat(L, G, kx_var(L, vb), ch, kx_var(L, vh), kx_int(L, 0)));
    int vj = kl_for(L, cols);
    kn_kx *at = kx_add(L, kx_var(L, vs), kx_mul(L, kx_var(L, vj), kx_int(L, G->xs[3])));
    kn_kx *vals[4];
    for (int k = 0; k < wpp; k++)
        vals[k] =
            kx_vload_strided(L, x, kt_plus(L, at, k * G->xs[1]), lanes, (int)(wpp * G->xs[1]));
    kn_kx *wi = kx_mul(L, kx_add(L, kx_var(L, vd), kx_var(L, vj)), kx_int(L, lanes));
    kl_store(L, xw, wi, wide_word(L, T, vals));
    kl_end_n(L, 5);
}

/* The word conv_words stores in the pads: the zero-point word (split into its pair for
 * xpre tiles). */
static kn_kx *conv_words_pad(kn_lower *L, const kt_tile *T) {
    return T->xpre ? kt_split_pair(L, T, kt_zp_word(L, T)) : kt_zp_word(L, T);
}

/* The pads of conv_words' planes [planes][hp][wp] of one word a position (not the
 * reduction words, T->wide), each plane's interior rows [ph, ph + h)
 * x columns [pw, pw + w) being written by the copy after it: per plane the rows above and
 * the first row's left pad (one run), each row's right pad with the next one's left pad
 * (one run of pr + pw words a row), the last row's right pad and the rows below (one
 * run). The interior is not stored twice: ResNet-18's 56x56 3x3 layers stored 215 KB of
 * zero-point words each run where 15 KB are pads. */
static void conv_words_border(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kbuf *xw,
                              int64_t planes) {
    int64_t plane = G->hp * G->wp, right = G->wp - G->pw - G->w;
    int64_t head = G->ph * G->wp + G->pw, tail0 = (G->ph + G->h - 1) * G->wp + G->pw + G->w;
    int vp = kl_for(L, planes);
    kn_kx *base = kx_mul(L, kx_var(L, vp), kx_int(L, plane));
    if (head > 0) {
        int v = kl_for(L, head);
        kl_store(L, xw, kx_add(L, base, kx_var(L, v)), conv_words_pad(L, T));
        kl_end(L);
    }
    if (G->h > 1 && right + G->pw > 0) {
        int vr = kl_for(L, G->h - 1), vk = kl_for(L, right + G->pw);
        kn_kx *at = mad(L, kt_plus(L, kx_var(L, vr), G->ph), G->wp, kx_var(L, vk));
        kl_store(L, xw, kx_add(L, base, kt_plus(L, at, G->pw + G->w)), conv_words_pad(L, T));
        kl_end_n(L, 2);
    }
    if (plane > tail0) {
        int v = kl_for(L, plane - tail0);
        kl_store(L, xw, kx_add(L, base, kt_plus(L, kx_var(L, v), tail0)), conv_words_pad(L, T));
        kl_end(L);
    }
    kl_end(L);
}

static kn_kbuf *conv_words(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kbuf *x) {
    /* reduction words (T->wide, channels a multiple of 4): each position's 4 words of a
     * 16-channel group consecutive, [n][group][ceil(cg / 16)][hp][wp][4] */
    int wpp = word_parts(T);
    int64_t full = G->cg / wpp, tail = G->cg % wpp, ng = full + (tail > 0);
    KN_ASSERT(!T->wide || !tail);
    /* words a position: the reduction tiles' 16-channel groups are whole (channels past
     * cg: zero-point words, whose packed weights are 0) */
    int64_t nw = T->wide ? (ng + T->wide - 1) / T->wide * T->wide : ng;
    kn_kbuf *xw = kl_scratch(L, T->xpre ? KN_I64 : KN_I32, G->n * G->group * nw * G->hp * G->wp);
    bool padded = G->hp != G->h || G->wp != G->w;
    if (nw != ng || (T->wide && padded)) { /* the whole copy (T->wide words a position) */
        int vi = kl_for(L, xw->numel);
        kl_store(L, xw, kx_var(L, vi), conv_words_pad(L, T));
        kl_end(L);
    } else if (padded) {
        conv_words_border(L, G, T, xw, G->n * G->group * nw);
    }
    /* the input rows in vectors of words where their columns are contiguous (NCHW): of
     * the tile's lanes, or fewer (down to 4) on narrow rows, the last one ending at the
     * row's end (overlapping the one before: it stores the same words again); an
     * unpadded image with contiguous rows (1x1 convolutions) as one row of h*w */
    bool flat = G->hp == G->h && G->wp == G->w && G->xs[3] == 1 && G->xs[2] == G->w;
    int64_t rows = flat ? 1 : G->h, cols = flat ? G->h * G->w : G->w;
    if (T->wide && nw == ng && kl_lanes(L, KN_I32) == T->wide && L->target &&
        L->target->kind == KN_TARGET_MCU && G->xs[1] < INT32_MAX / (4 * wpp)) {
        conv_words_wide(L, G, T, x, xw, nw, rows, cols);
        return xw;
    }
    int64_t lanes = G->xs[3] == 1 && !T->wide ? T->lanes : 1;
    while (lanes > 4 && lanes > cols) lanes /= 2;
    if (lanes < 4 || lanes > cols) lanes = 1;
    for (int part = 0; part < 2; part++) { /* the full words, then the partial last one */
        int nch = part ? (int)tail : wpp;
        if (part ? !tail : !full) continue;
        int vb = kl_for(L, G->n), vg = kl_for(L, G->group),
            vc = part ? -1 : kl_for(L, T->wide ? nw / T->wide : full);
        int vq = T->wide && !part ? kl_for(L, T->wide) : -1; /* the word of a position */
        kn_kx *c = part      ? kx_int(L, full)
                   : vq >= 0 ? mad(L, kx_var(L, vc), T->wide, kx_var(L, vq))
                             : kx_var(L, vc);
        bool guard = vq >= 0 && nw != ng; /* the last group's words past the channels */
        if (guard) kl_if(L, kx_bin(L, KX_LT, c, kx_int(L, full)));
        int vh = kl_for(L, rows);
        kn_kx *bg = mad(L, kx_var(L, vb), G->group, kx_var(L, vg));
        kn_kx *plane = vq >= 0 ? mad(L, bg, nw / T->wide, kx_var(L, vc)) : mad(L, bg, ng, c);
        int vd = kl_decl(L, KN_I64,
                         mad(L, mad(L, plane, G->hp, kt_plus(L, kx_var(L, vh), G->ph)), G->wp,
                             kx_int(L, G->pw)));
        /* the input's own strides (any layout): channel g * cg + c * 4 + k */
        kn_kx *ch = mad(L, kx_var(L, vg), G->cg, kx_mul(L, c, kx_int(L, wpp)));
        int vs = kl_decl(L, KN_I64, conv_xat(L, G, kx_var(L, vb), ch, kx_var(L, vh), kx_int(L, 0)));
        int64_t nv = cols / lanes;
        for (int pass = 0; pass < 2; pass++) { /* whole vectors, then the overlapping one */
            if (pass ? cols % lanes == 0 : nv == 0) continue;
            int vj = pass ? -1 : kl_for(L, nv);
            kn_kx *j = pass ? kx_int(L, cols - lanes) : kx_mul(L, kx_var(L, vj), kx_int(L, lanes));
            kn_kx *at = kx_add(L, kx_var(L, vs), kx_mul(L, j, kx_int(L, G->xs[3])));
            kn_kx *vals[4];
            for (int k = 0; k < nch; k++) {
                kn_kx *xi = kt_plus(L, at, k * G->xs[1]);
                vals[k] = lanes > 1 ? kx_vload(L, x, xi, (int)lanes) : kx_load(L, x, xi);
            }
            kn_kx *wi = kx_add(L, kx_var(L, vd), j);
            if (vq >= 0) wi = mad(L, wi, T->wide, kx_var(L, vq));
            kn_kx *word = T->wide ? wide_word(L, T, vals) : kt_word(L, T, vals, nch);
            if (T->xpre) /* split once here, not at every tap that reads it */
                word = kt_split_pair(L, T, kx_var(L, kl_decl(L, KN_I32, word)));
            kl_store(L, xw, wi, word);
            if (!pass) kl_end(L);
        }
        kl_end_n(L, part ? 3 : 4 + (vq >= 0) + guard);
    }
    return xw;
}

/* The input of a column-pair tile (kt_tile.cpair) as it reads it, built once per run:
 * words [n][c][hp][wp] (i32) of the zero-padded input, the word at padded position (iy,
 * ix) holding xp[iy][ix] in its low 16 bits and xp[iy][ix + dw] in its high 16 bits
 * (sign- or zero-extended as the input's type; xp: the input, its zero point in the pads
 * and past the right edge). Pad rows are zero-point words; a row of the input splits at
 * compile time into runs of columns whose two halves are each the input or a pad, so
 * nothing is tested at run time. */
static kn_kbuf *conv_cpairs(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kbuf *x) {
    kn_kbuf *xw = kl_scratch(L, KN_I32, G->n * G->c * G->hp * G->wp);
    int vi = kl_for(L, xw->numel);
    kl_store(L, xw, kx_var(L, vi), kt_zp_word(L, T));
    kl_end(L);
    /* the columns where a half changes between input and pad: pw - dw, pw, pw + w - dw,
     * pw + w */
    int64_t cut[6] = {0, G->pw - G->dw, G->pw, G->pw + G->w - G->dw, G->pw + G->w, G->wp};
    for (int i = 1; i < 6; i++) /* sorted, within [0, wp] */
        for (int k = i; k > 0 && cut[k] < cut[k - 1]; k--) {
            int64_t t = cut[k];
            cut[k] = cut[k - 1], cut[k - 1] = t;
        }
    int vb = kl_for(L, G->n), vc = kl_for(L, G->c), vh = kl_for(L, G->h);
    kn_kx *plane = mad(L, kx_var(L, vb), G->c, kx_var(L, vc));
    int vrow = kl_decl(
        L, KN_I64,
        mad(L, mad(L, plane, G->hp, kt_plus(L, kx_var(L, vh), G->ph)), G->wp, kx_int(L, 0)));
    int vsrc = kl_decl(L, KN_I64,
                       conv_xat(L, G, kx_var(L, vb), kx_var(L, vc), kx_var(L, vh), kx_int(L, 0)));
    for (int i = 0; i < 5; i++) {
        int64_t a = cut[i] < 0 ? 0 : cut[i], b = cut[i + 1] > G->wp ? G->wp : cut[i + 1];
        if (b <= a) continue;
        bool in[2]; /* halves 0 and 1 read the input at column a - pw and a + dw - pw */
        for (int h = 0; h < 2; h++) {
            int64_t c = a + h * G->dw - G->pw;
            in[h] = c >= 0 && c < G->w;
        }
        if (!in[0] && !in[1]) continue; /* the zero-point word already */
        int vj = kl_for(L, b - a);
        kn_kx *vals[2];
        for (int h = 0; h < 2; h++) {
            kn_kx *col = kt_plus(L, kx_var(L, vj), a + h * G->dw - G->pw);
            vals[h] =
                in[h]
                    ? kx_load(L, x, kx_add(L, kx_var(L, vsrc), kx_mul(L, col, kx_int(L, G->xs[3]))))
                    : kx_const(L, x->dtype, (double)T->xzc);
        }
        kl_store(L, xw, kt_plus(L, kx_add(L, kx_var(L, vrow), kx_var(L, vj)), a),
                 kt_word(L, T, vals, 2));
        kl_end(L);
    }
    kl_end_n(L, 3);
    return xw;
}

static void conv_geometry(const kn_contract *d, conv_geom *G) {
    memset(G, 0, sizeof *G);
    G->n = d->n, G->c = d->c, G->m = d->m, G->group = d->group;
    G->cg = d->c / d->group, G->kg = d->m / d->group;
    G->h = d->h, G->oh = d->oh, G->kh = d->kh, G->sh = d->sh, G->dh = d->dh, G->ph = d->ph;
    G->hp = d->h + d->ph + d->peh;
    G->w = d->w_, G->ow = d->ow, G->kw = d->kw, G->sw = d->sw, G->dw = d->dw, G->pw = d->pw;
    G->wp = d->w_ + d->pw + d->pew;
    kn_contract_strides(d, G->xs, G->ys);
    G->d = d;
}

bool kt_f32_const(const kn_kbuf *b) {
    return b && b->kind == KB_CONST && b->dtype == KN_F32 && b->data;
}

bool kt_operands_ok(const kn_contract *d) {
    /* operands broadcast against the logical output (channels-first for a conv) */
    int64_t ld[KN_MAX_RANK];
    memcpy(ld, d->y->dims, sizeof ld);
    if (d->kind == KN_CONTRACT_CONV) {
        ld[0] = d->n, ld[1] = d->m, ld[d->y->rank - 1] = d->ow;
        if (d->nsp == 2) ld[2] = d->oh;
    }
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o) continue;
        if (o->rank > d->y->rank || kx_compute_dtype(o->dtype) != KN_F32) return false;
        for (int i = 0; i < o->rank; i++) {
            int64_t yd = ld[d->y->rank - o->rank + i];
            if (o->dims[i] != 1 && o->dims[i] != yd) return false;
        }
    }
    return true;
}

/* Float weights packed as kt_pack(conv_w) packs them, directly: without a call and a
 * conversion through double per element (ResNet-50 packs 25 M weights; compile time,
 * #16). buf[g][blk][r][j] = w[g*kg + blk*kb + j][r], 0 past the group's kg columns. */
typedef struct conv_pack_args {
    const kt_tile *T;
    const conv_geom *G;
    int64_t group;
} conv_pack_args;

static void conv_pack_fill(const void *ctx, void *data) {
    const conv_pack_args *A = ctx;
    const conv_geom *G = A->G;
    int64_t red = G->cg * G->kh * G->kw, kb = A->T->kb, blocks = (G->kg + kb - 1) / kb;
    int64_t per = blocks * red * kb;
    const float *w = G->d->w->data->data;
    float *buf = data;
    KN_ASSERT(w);
    for (int64_t g = 0; g < A->group; g++)
        for (int64_t blk = 0; blk < blocks; blk++)
            for (int64_t j = 0; j < kb; j++) {
                int64_t col = blk * kb + j;
                float *out = buf + g * per + blk * red * kb + j;
                const float *in = col < G->kg ? w + (g * G->kg + col) * red : NULL;
                for (int64_t r = 0; r < red; r++) out[r * kb] = in ? in[r] : 0.0f;
            }
}

static kn_kbuf *conv_pack_f32(kn_lower *L, const kt_tile *T, const conv_geom *G, int64_t group) {
    int64_t red = G->cg * G->kh * G->kw, kb = T->kb, blocks = (G->kg + kb - 1) / kb;
    conv_pack_args A = {T, G, group};
    return kl_table_fill(L, KN_F32, group * blocks * red * kb, conv_pack_fill, &A);
}

/* Whether integer convolution G takes split words (kt_tile.split): on a microcontroller
 * whose dot is s16x2, scalar tiles, a constant input zero point and input channels a
 * group a multiple of 4. The input is then read from conv_words' padded copy, one word
 * of 4 channels a tap and row, split by two SXTB16 into the operands of two SMLAD, where
 * the channel-pair tiles built each pair from two byte loads H x W apart and an ORR: the
 * 1x1 convolutions and, since they cost a copy of their padded input in the arena (ResNet-8
 * int8: 3x3 convolutions), the regular ones of any window. A schedule file's split=2
 * keeps the channel pairs. */
/* Three input channels over a window (an RGB stem) take them too, as words of 3 channels
 * and a 0 (whose weights are 0): the same quarter of the multiply-adds wasted as the
 * column pairs' missing fourth tap of a 3-wide window, but the split words' LDRD pairs
 * and unrolled taps (ResNet-8's stem on the M4 0.93 -> 0.68 M, MobileNetV1 int8 14.00 ->
 * 13.77 M, MobileNetV2 21.47 -> 21.01 M; a one-channel first layer keeps its column
 * pairs, which waste less there). */
static bool conv_split_suits(const conv_geom *G, const kt_tile *T, const kn_target *tg,
                             const kn_sched *ov) {
    return T->dot == KN_DOT_S16X2 && tg && tg->kind == KN_TARGET_MCU && T->lanes == 1 && !T->xzrt &&
           (G->cg % 4 == 0 || (G->cg == 3 && G->kh * G->kw > 1)) && !(ov && ov->split == 2);
}

/* The columns of a split-word tile over a window (kh x kw > 1): 3, so that with its 2
 * rows, 4 halves, a weight word and the pointers of the unrolled kernel columns
 * (conv_unroll_cols) the tile stays in the M4's general registers. ResNet-8 int8 on the
 * M4 (bench/fw_profile.sh, QEMU instructions), its 3x3 convolutions as split words with
 * unrolled columns: 2 x 4 18.39 M, 2 x 3 17.35 M, 2 x 2 18.42 M, 1 x 4 20.44 M (the
 * channel pairs: 20.64 M); the 2 x 4 tile spilled three accumulators. */
static void conv_split_window(const conv_geom *G, const kn_sched *ov, kt_tile *T) {
    if (G->kh * G->kw == 1 || (ov && ov->tile_vecs) || T->nv <= 3) return;
    T->nv = 3;
    T->kb = T->kbl = T->nv * T->lanes;
}

/* pad: 1 reads the input where it is, testing bounds only where a window leaves it; 2
 * reads a zero-padded copy. flat: d is a pointwise convolution read as one row of
 * pixels (pw_channel_tiles), whose epilogue operands the caller checked against the
 * image's shape (y-shaped or per channel: read at (b, channel, 0, pixel) they land on
 * the same element). */
/* ---- 1x1 convolutions in bands of rows, written over their input ----
 *
 * On microcontrollers a float 1x1 convolution with stride 1, one group, as many output
 * as input channels, batch 1 and x and y both NCHW or both channels-last (DS-CNN's
 * 64 -> 64 pointwise layers) runs band by band: a band of rows of every input channel is
 * copied into a scratch ([c][rows][w], one memcpy of rows * w values a channel; [rows][w][c]
 * channels-last, one memcpy), then every block of output
 * channels computes those rows from the copy. A band's outputs are at the band's own
 * positions of x (m == c), which are in the copy and read by nothing later, so y may
 * take x's storage (kn_kernel.staged_in): one activation live instead of two. The bands
 * are as even as they can be with the copy at most a quarter of x (DS-CNN's 25 rows: 5
 * bands of 5, a 6,400-byte copy of the 32,000-byte input). Scalar tiles only, as the
 * depthwise planes (passes/depthwise.c): Helium's vector tiles keep both activations of a
 * depthwise layer, so the bands would not lower the peak there (MobileNetV1 float on the
 * M55: 2.8% more instructions, the arena unchanged). Returns the rows of a band,
 * or 0 where the kernel does not suit (or would not gain: fewer than two bands). */
/* Whether x and y are both dense NCHW or both dense channels-last (NHWC): a band of rows
 * of every channel is then the same set of positions in both. */
static bool conv_bands_layout(const conv_geom *G) {
    const int64_t *xs = G->xs, *ys = G->ys;
    if (xs[3] == 1 && xs[2] == G->w && xs[1] == G->h * G->w)
        return ys[3] == 1 && ys[2] == G->ow && ys[1] == G->oh * G->ow;
    return xs[1] == 1 && xs[3] == G->c && xs[2] == G->w * G->c && ys[1] == 1 && ys[3] == G->m &&
           ys[2] == G->ow * G->m;
}

static int64_t conv_bands_suit(const kn_target *tg, const kn_contract *d, const conv_geom *G) {
    if (!tg || tg->kind != KN_TARGET_MCU || G->T->lanes != 1 || kn_contract_is_int(d) ||
        G->kh != 1 || G->kw != 1 || G->sh != 1 || G->sw != 1 || G->group != 1 || G->m != G->c ||
        G->n != 1 || d->x->kind != KB_TEMP || d->x->numel != d->y->numel || G->oh != G->h ||
        G->ow != G->w)
        return 0;
    if (!conv_bands_layout(G)) return 0;
    for (int k = 0; d->epi && k < d->epi->n; k++)
        if (d->operand[k] == d->x) return 0;
    if (G->h == 1 && G->xs[1] == 1) { /* one row, channels-last: bands of whole tiles */
        int64_t R = G->T->maxrows, k = G->w / 4 / R;
        if (k < 1) k = 1;
        return (G->w + k * R - 1) / (k * R) >= 2 ? k * R : 0;
    }
    int64_t most = G->h / 4; /* rows: c * most * w values at most a quarter of x */
    if (most < 1) most = 1;
    int64_t nb = (G->h + most - 1) / most;
    if (nb < 2) return 0;
    return (G->h + nb - 1) / nb;
}

/* One band: rows [row0, row0 + nrows) of every channel copied, then every block. */
static void conv_band(kn_lower *L, conv_geom *G, kt_tile *T, int vb, int vg, kn_kbuf *x,
                      kn_kbuf *xb, kn_kx *row0, int64_t brows, int64_t nrows) {
    G->vband = kl_decl(L, KN_I64, row0);
    if (G->bandx) { /* pixels [row0, row0 + nrows) of the one row: one run of x */
        kl_copy(L, xb, kx_int(L, 0), x, kx_mul(L, kx_var(L, G->vband), kx_int(L, G->c)),
                kx_int(L, nrows * G->c));
        int64_t full = G->kg / T->kb, tail = G->kg % T->kb, R = T->maxrows;
        int64_t nt = nrows / R, rem = nrows % R;
        for (int part = 0; part < 2; part++) { /* full blocks of columns, then the tail */
            int64_t nblk = part ? (tail > 0) : full;
            if (!nblk) continue;
            int vk = part ? -1 : kl_for(L, full);
            kn_kx *blk = part ? kx_int(L, full) : kx_var(L, vk);
            int valid = part ? (int)tail : T->kb;
            if (nt) {
                int vt = kl_for(L, nt);
                conv_tile(L, G, T, (int)R, vb, vg, blk, valid, kx_int(L, 0),
                          kx_add(L, kx_var(L, G->vband), kx_mul(L, kx_var(L, vt), kx_int(L, R))),
                          false, false, -1);
                kl_end(L);
            }
            if (rem)
                conv_tile(L, G, T, (int)rem, vb, vg, part ? kx_int(L, full) : kx_var(L, vk), valid,
                          kx_int(L, 0), kt_plus(L, kx_var(L, G->vband), nt * R), false, false, -1);
            if (!part) kl_end(L);
        }
        return;
    }
    if (G->xs[1] == 1) { /* channels-last: the band's rows are one run of x */
        kl_copy(L, xb, kx_int(L, 0), x, kx_mul(L, kx_var(L, G->vband), kx_int(L, G->w * G->c)),
                kx_int(L, nrows * G->w * G->c));
    } else {
        int vc = kl_for(L, G->c);
        kl_copy(L, xb, kx_mul(L, kx_var(L, vc), kx_int(L, brows * G->w)), x,
                mad(L, kx_var(L, vc), G->h * G->w, kx_mul(L, kx_var(L, G->vband), kx_int(L, G->w))),
                kx_int(L, nrows * G->w));
        kl_end(L);
    }
    int64_t full = G->kg / T->kb, tail = G->kg % T->kb;
    if (full) {
        int vk = kl_for(L, full);
        conv_rows(L, G, T, vb, vg, kx_var(L, vk), T->kb, 0, nrows, false);
        kl_end(L);
    }
    if (tail) conv_rows(L, G, T, vb, vg, kx_int(L, full), (int)tail, 0, nrows, false);
}

/* Every band of brows rows (conv_bands_suit), then the last, shorter one. */
static void conv_bands(kn_lower *L, conv_geom *G, kt_tile *T, int vb, int vg, int64_t brows) {
    bool px = G->h == 1 && G->xs[1] == 1; /* bands of pixels of the one row */
    kn_kbuf *x = G->x, *xb = kl_scratch(L, KN_F32, G->c * brows * (px ? 1 : G->w));
    G->x = xb;
    G->hp = px ? 1 : brows;
    G->bandx = px;
    if (px) { /* [pixels][c] */
        memcpy(G->xs, (int64_t[4]){G->c * brows, 1, G->c * brows, G->c}, sizeof G->xs);
        G->band = true;
        int64_t nb = G->w / brows, rem = G->w % brows;
        if (nb) {
            int vq = kl_for(L, nb);
            conv_band(L, G, T, vb, vg, x, xb, kx_mul(L, kx_var(L, vq), kx_int(L, brows)), brows,
                      brows);
            kl_end(L);
        }
        if (rem) conv_band(L, G, T, vb, vg, x, xb, kx_int(L, nb * brows), brows, rem);
        return;
    }
    if (G->xs[1] == 1) /* channels-last: [rows][w][c] */
        memcpy(G->xs, (int64_t[4]){G->c * brows * G->w, 1, G->w * G->c, G->c}, sizeof G->xs);
    else
        memcpy(G->xs, (int64_t[4]){G->c * brows * G->w, brows * G->w, G->w, 1}, sizeof G->xs);
    G->band = true;
    int64_t nb = G->h / brows, rem = G->h % brows;
    if (nb) {
        int vq = kl_for(L, nb);
        conv_band(L, G, T, vb, vg, x, xb, kx_mul(L, kx_var(L, vq), kx_int(L, brows)), brows, brows);
        kl_end(L);
    }
    if (rem) conv_band(L, G, T, vb, vg, x, xb, kx_int(L, nb * brows), brows, rem);
}

/* Whether a convolution's pixels are one row of whole tiles and a partial one, each tile
 * through the per-thread tile scratch (conv_tile_per_thread: a program for several threads):
 * a 1x1 at stride 1 (oh = 1), no bands, spans or dot products, no border. The lowerings
 * below split such a convolution otherwise than by its blocks of output channels. */
static bool conv_one_row(const conv_geom *G, const kt_tile *T) {
    return G->oh == 1 && !G->band && !G->span && !T->dot && G->tile && G->tile->per_thread &&
           G->ylo == 0 && G->yhi == G->oh && G->xlo == 0 && G->xhi == G->ow && G->ow >= T->maxrows;
}

/* Tiles of pixels outermost, every full block of output channels inside, in a program for
 * several threads: for a conv_one_row convolution with 2 full blocks or more and
 * PIX_OUTER_TILES whole tiles or more, whose weights fit in half of L2. Split by blocks
 * (ResNet-50's layer3 conv1s, 1024 -> 256 at 14x14: 4 blocks of 64 channels, 2 a thread), each
 * thread read all of x, half of it written by the other core (803 KB a kernel across,
 * KILN_XCORE=2), at a stride of one plane per channel that the prefetchers do not follow: they ran
 * x1.02-1.13 faster at 2 threads than at 1. Split by tiles of pixels each thread reads its pixels
 * only (459 KB across) and all 1 MB of weights from L2: 0.62-0.69 -> 0.48-0.55 ms each at 2
 * threads. With 2 MB of weights (layer4.0 conv1, 1024 -> 512) the pixel split took 25% longer, the
 * weights no longer staying in L2 beside x: see conv_pixel_groups. Both layers now read x ahead
 * (pw_xpf) and split by blocks (conv_blocks_read_ahead), which measured faster than either. */
enum { PIX_OUTER_TILES = 16 };

static int64_t weight_bytes(const kn_contract *d) {
    return d->w->numel * (int64_t)kn_dtype_get(d->w->dtype)->size;
}

static bool conv_pixels_outer(const conv_geom *G, const kt_tile *T, const kn_contract *d,
                              const kn_target *tg, int64_t full) {
    return full >= 2 && conv_one_row(G, T) && G->ow / T->maxrows >= PIX_OUTER_TILES &&
           weight_bytes(d) <= kn_target_l2(tg, 512 * 1024) / 2;
}

/* Groups of tiles of pixels outermost, one a thread (conv_groups_outer), where
 * conv_pixels_outer holds but for the weights, which are more than half of L2 (ResNet-50's
 * layer4.0 conv1, 1024 -> 512 at 14x14, 2 MB): the number of groups, or 0 where they do not
 * suit (one thread; fewer than 4 whole tiles a group). Split by its 8 blocks, each thread
 * read all of x (803 KB across a run, KILN_XCORE=2, half of x on each thread), the
 * kernel x1.53 faster at 2 threads than at 1 (docs/benchmarks.md "Two threads, kernel by
 * kernel"); in groups each thread reads its pixels of x (459 KB across) and streams every
 * block's weights once, from L2 for each of its tiles, as one thread does for all of them
 * (tiles of pixels outermost streamed all 2 MB once per tile and took 25% longer). */
static int64_t conv_pixel_groups(kn_lower *L, const conv_geom *G, const kt_tile *T,
                                 const kn_contract *d, const kn_target *tg, int64_t full) {
    int64_t th = L->p->threads, ntf = G->ow / T->maxrows;
    return th > 1 && full >= 2 && conv_one_row(G, T) && ntf >= PIX_OUTER_TILES && ntf >= 4 * th &&
                   weight_bytes(d) > kn_target_l2(tg, 512 * 1024) / 2
               ? th
               : 0;
}

/* The full blocks of a conv_pixel_groups convolution: ng groups of whole tiles of pixels
 * outermost (the loop marked parallel and split as it stands, one group a thread: each
 * tile stores and reads back its thread's scratch within one iteration), in each every
 * full block of output channels and in it the group's tiles; then the tiles left over and
 * the partial tile, block by block. */
static void conv_groups_outer(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg,
                              int64_t full, int64_t ng) {
    int64_t R = T->maxrows, ntf = G->ow / R, per = ntf / ng, done = per * ng * R;
    int vq = kl_for(L, ng);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
    int vk = kl_for(L, full);
    int vt = kl_for(L, per);
    kn_kx *tile = kx_add(L, kx_mul(L, kx_var(L, vq), kx_int(L, per)), kx_var(L, vt));
    conv_tile(L, G, T, (int)R, vb, vg, kx_var(L, vk), T->kb, kx_int(L, 0),
              kx_mul(L, tile, kx_int(L, R)), false, false, -1);
    kl_end_n(L, 3);
    if (done < G->ow) {
        int vk2 = kl_for(L, full);
        for (int64_t p0 = done; p0 < G->ow; p0 += R)
            conv_tile(L, G, T, (int)(G->ow - p0 < R ? G->ow - p0 : R), vb, vg, kx_var(L, vk2),
                      T->kb, kx_int(L, 0), kx_int(L, p0), false, false, -1);
        kl_end(L);
    }
}

/* The full blocks of conv_pixels_outer: whole tiles (the loop marked parallel: each tile
 * stores and reads back its thread's scratch within one iteration), then the partial tile
 * of each block. */
static void conv_tiles_outer(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg,
                             int64_t full) {
    int64_t R = T->maxrows, ntf = G->ow / R;
    int vt = kl_for(L, ntf);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    int vk = kl_for(L, full);
    conv_tile(L, G, T, (int)R, vb, vg, kx_var(L, vk), T->kb, kx_int(L, 0),
              kx_mul(L, kx_var(L, vt), kx_int(L, R)), false, false, -1);
    kl_end_n(L, 2);
    if (G->ow % R) {
        int vk2 = kl_for(L, full);
        conv_tile(L, G, T, (int)(G->ow % R), vb, vg, kx_var(L, vk2), T->kb, kx_int(L, 0),
                  kx_int(L, ntf * R), false, false, -1);
        kl_end(L);
    }
}

/* Whether a conv_one_row convolution in a program for several threads has too few full
 * blocks of output channels to share evenly between the threads (2 to FEW_BLOCKS - 1, not
 * a multiple of the threads) and a partial tile of pixels after its whole ones (without
 * one, the parallel pass collapses the blocks with the tiles already): conv_blocks_tiles
 * then makes the tiles, the partial one among them, one parallel loop inside the blocks,
 * which the parallel pass collapses with them. Split by blocks alone, MobileNetV2's 7x7
 * 960 -> 320 projection (5 blocks of 64) and EfficientNet-B0's 7x7 projections (3 or 5
 * blocks) ran 3 blocks of 5 or 2 of 3 on the first of two threads. */
enum { FEW_BLOCKS = 16 };

static bool conv_tiles_balance(kn_lower *L, const conv_geom *G, const kt_tile *T, int64_t full) {
    int64_t th = L->p->threads;
    return th > 1 && full >= 2 && full < FEW_BLOCKS && full % th != 0 && conv_one_row(G, T) &&
           G->ow % T->maxrows != 0;
}

/* The full blocks of a conv_tiles_balance convolution: for each block, the whole tiles of
 * pixels and the partial one as one loop (marked parallel: each iteration stores its own
 * pixels of y and reads back only what it stored in its thread's tile scratch). */
static void conv_blocks_tiles(kn_lower *L, const conv_geom *G, kt_tile *T, int vb, int vg,
                              int64_t full) {
    int64_t R = T->maxrows, ntf = G->ow / R;
    int vk = kl_for(L, full);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    int vt = kl_for(L, ntf + 1);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    kl_if(L, kx_bin(L, KX_LT, kx_var(L, vt), kx_int(L, ntf)));
    conv_tile(L, G, T, (int)R, vb, vg, kx_var(L, vk), T->kb, kx_int(L, 0),
              kx_mul(L, kx_var(L, vt), kx_int(L, R)), false, false, -1);
    kl_else(L);
    conv_tile(L, G, T, (int)(G->ow % R), vb, vg, kx_var(L, vk), T->kb, kx_int(L, 0),
              kx_int(L, ntf * R), false, false, -1);
    kl_end_n(L, 3);
}

/* Whether a conv_one_row convolution keeps one thread's order at several threads, split by
 * its blocks of output channels (or by blocks and tiles together, conv_tiles_balance): where
 * its tiles read x ahead (conv_geom.xpf, pw_xpf). Each thread then streams half the weights
 * (conv_pixels_outer and conv_pixel_groups stream all of them on each thread) and reads all of
 * x, half of it written by the other core, which the prefetch hides: what had made the blocks
 * slow was x's first reads, one line of every input plane a tile, which waited on the other
 * core's cache or L3 (ONNX Runtime's NCHWc pointwise kernels split by output channels too,
 * x2.0 at 2 threads on these layers). Intel Xeon VM, ResNet-50 at 2 threads, per-kernel wall
 * time, 4 rounds alternated (docs/benchmarks.md "ResNet-50's 1x1 convolutions at two
 * threads"): the layer3 conv1s (1024 -> 256 at 14x14, 1 MB of weights) 416-448 us in tiles of
 * pixels outermost, 312-341 split by blocks with the prefetch, 339-407 in groups with it;
 * layer4.0 conv1 (1024 -> 512, 2 MB) 711-728 in groups, 584-618 by blocks with it. */
static bool conv_blocks_read_ahead(const conv_geom *G) {
    return G->xpf > 0;
}

/* The full blocks of a conv_one_row convolution in a program for several threads, in the
 * order that shares them best between the threads: groups of tiles of pixels outermost
 * (conv_pixel_groups), tiles of pixels outermost (conv_pixels_outer), or the tiles split
 * with the blocks (conv_tiles_balance). False where none suits: the caller's loop over
 * the blocks, each with its tiles. */
static bool conv_split_blocks(kn_lower *L, const conv_geom *G, kt_tile *T, const kn_contract *d,
                              const kn_target *tg, int vb, int vg, int64_t full) {
    bool blocks = conv_blocks_read_ahead(G);
    int64_t ng = blocks ? 0 : conv_pixel_groups(L, G, T, d, tg, full);
    if (ng)
        conv_groups_outer(L, G, T, vb, vg, full, ng);
    else if (!blocks && conv_pixels_outer(G, T, d, tg, full))
        conv_tiles_outer(L, G, T, vb, vg, full);
    else if (conv_tiles_balance(L, G, T, full))
        conv_blocks_tiles(L, G, T, vb, vg, full);
    else
        return false;
    return true;
}

/* Span tiles (conv_geom.span, conv_plane) for a float windowed convolution whose output
 * rows are narrower than the register tile (rmax pixels): the rows of each tile, as equal
 * as they can be, or 0 where they do not suit. The packed weights of a block of output
 * channels stream from the L2 once per tile, so at 7x7 outputs (ResNet's layer4: 590 KB a
 * block, one tile of 7 pixels a row) 4 tiles of 13 pixels read them 4 times where the rows
 * read them 7. Only where that takes fewer tiles than the rows, at most KN_SPAN_MAX_TILES
 * (they are unrolled), where the weights are more than half the L2 (as conv_pf_suits: they
 * stream from beyond it; smaller ones were not measured), with y dense NCHW and every
 * epilogue operand one value, one a channel or y's shape (read at (b, channel, 0, pixel),
 * which lands on the same element). A schedule file's span=2 keeps the rows; span=1 asks
 * for them whatever the sizes, tile_rows (rmax then) their pixels. Intel Xeon VM, CPU time
 * a kernel in the whole model at one thread (docs/benchmarks.md "ResNet-50's layer4"):
 * ResNet-50's layer4.0 conv2 (stride 2, 7x7 outputs) 3.08-3.76 ms with rows of 7, 2.32-3.21
 * in span tiles with the prefetch (conv_pf), rows of 7 with it 2.63-3.58, spans without
 * it 3.14-3.32; 9 x 3 and 10 x 2 spans no better than 13 x 2. */
static int conv_span_rows(const kn_target *tg, const kn_contract *d, const conv_geom *G, int rmax,
                          const kn_sched *ov) {
    int64_t P = G->oh * G->ow, ntl = (P + rmax - 1) / rmax;
    if ((ov && ov->span == 2) || ntl > KN_SPAN_MAX_TILES || G->ys[3] != 1 || G->ys[2] != G->ow ||
        G->ys[1] != G->oh * G->ow)
        return 0;
    bool asked = ov && ov->span == 1;
    int64_t l2 = kn_target_l2(tg, 512 * 1024);
    if (!asked && (G->ow >= rmax || ntl >= G->oh || d->w->numel * 4 <= l2 / 2)) return 0;
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o || o->numel == 1 || conv_same_layout(o, d->y)) continue;
        int ca = o->rank - (d->y->rank - 1); /* y's channel axis in o */
        if (ca < 0) return 0;
        for (int i = 0; i < o->rank; i++)
            if (i != ca && o->dims[i] != 1) return 0;
    }
    return asked && ov->tile_rows ? rmax : (int)((P + ntl - 1) / ntl);
}

int kt_conv_span_rows(kn_lower *L, const kn_contract *d) {
    const kn_target *tg = L->target;
    int lanes = kl_lanes(L, KN_F32);
    if (!tg || tg->kind != KN_TARGET_CPU || lanes < 2 || d->kind != KN_CONTRACT_CONV ||
        d->nsp != 2 || d->kh * d->kw < 2 || kn_contract_is_int(d) || d->m / d->group < 2 * lanes)
        return 0;
    conv_geom G;
    conv_geometry(d, &G);
    int rmax = kt_reg_rows(L, 2);
    rmax = rmax > KT_MAX_ROWS ? KT_MAX_ROWS : rmax < 1 ? 1 : rmax;
    return conv_span_rows(tg, d, &G, rmax, NULL);
}

/* The float pointwise channel tiles (pw_channel_tiles: one row of oh*ow pixels, dense NCHW
 * x) read x as a column of pixels of every input plane, oh*ow floats apart: one line of each
 * of c planes a tile, which the hardware prefetchers do not follow. Where x is PW_XPF_BYTES
 * or more (ResNet-50's layer3 and layer4 1x1 reductions, 400-800 KB, written by the kernels
 * before, on either core at 2 threads; not measured below that, so not SqueezeNet's last
 * squeeze, 346 KB), each reduction
 * step prefetches its plane's line PW_XPF_PIXELS pixels on, so the tiles after the first of
 * a line find it in cache: the pixels ahead, or 0. A schedule file's xpf sets the pixels,
 * xpf=1 turns it off. CPUs only, no bands (their copy of x is small). Intel Xeon VM, thread
 * CPU time at one thread, 4 rounds alternated against main's binary (docs/benchmarks.md
 * "ResNet-50's 1x1 convolutions at two threads"): ResNet-50's five layer3 conv1s 601-666 us
 * -> 553-608 (32 pixels ahead; 16: 566-599), layer4.0 conv1 1196-1294 -> 1086-1194, the
 * layer4.1 and 4.2 conv1s 759-813 -> 700-762. At 2 threads it is what lets the blocks split
 * (conv_blocks_read_ahead). */
enum { PW_XPF_PIXELS = 32, PW_XPF_BYTES = 384 * 1024 };

/* Whether a float convolution's vector tiles may read x ahead (pw_xpf, conv_wxpf): on CPUs,
 * unless a schedule file's xpf=1 turns it off. */
static bool xpf_may(const kn_target *tg, const kt_tile *T, const kn_sched *ov) {
    return tg && tg->kind == KN_TARGET_CPU && !(ov && ov->xpf == 1) && !T->dot && T->t == KN_F32 &&
           T->lanes >= 2;
}

static int64_t pw_xpf(const kn_target *tg, const conv_geom *G, const kt_tile *T, const kn_sched *ov,
                      bool flat) {
    if (!flat || !xpf_may(tg, T, ov) || G->kh * G->kw != 1 || G->band || G->xblk || G->oh != 1 ||
        G->h != 1 || G->xs[3] != 1 || G->xs[1] != G->w || G->c * G->w * 4 < PW_XPF_BYTES)
        return 0;
    return ov && ov->xpf > 1 ? ov->xpf : PW_XPF_PIXELS;
}

/* Whether a float windowed convolution's tiles read x a row ahead (conv_geom.wxpf,
 * conv_wxpf_step): each reduction step (input channel, kernel row) prefetches the first and
 * last element of the padded input row the next output row reads at that step. Vector tiles
 * of whole output rows (no spans, no bands) over a padded dense NCHW copy, on CPUs: each
 * tile reads 3 rows of every input plane, a plane (3.6 KB at 30x30) apart, a stride the
 * hardware prefetchers do not follow. At several threads such a convolution splits by its
 * blocks of output channels (passes/parallel.c: its weights are more than its output), so
 * each thread's first block reads all of the copy, half of it written by the other core:
 * ResNet-50's layer3.0 conv2 (3x3 stride 2, 256 channels, 28x28 -> 14x14, tiles of 14
 * pixels, 2.4 MB of weights in 8 blocks) ran x1.54 faster at 2 threads than at 1. A schedule
 * file's xpf=1 turns it off; the schedule records xpf = ow (the pixels ahead: one output
 * row). Intel Xeon VM, under the CPU lock, ResNet-50, per-kernel time against main's binary,
 * 7 pairs at 2 threads (wall) and 6 at 1 (thread CPU time), order swapped for half
 * (docs/benchmarks.md "The direct 3x3 and strided 1x1 convolutions at two threads"): that
 * kernel 874-1096 us -> 798-891 at 2 threads (faster in 7 of 7), at 1 thread 1390-1556 ->
 * 1393-1491 (medians 1432 -> 1418). Only where the copy and the weights together pass the L2
 * (ResNet-50's 921 KB and 2.4 MB), so that the weights' stream evicts the copy: ResNet-18's
 * layer3.0 conv1 (128 channels, 460 KB and 1.2 MB) was mixed at 2 threads (396-792 us against
 * 458-684, the VM switching states) and 1% slower at 1 (661-702 against 655-662). */
static bool conv_wxpf(const kn_target *tg, const conv_geom *G, const kt_tile *T,
                      const kn_sched *ov) {
    return xpf_may(tg, T, ov) && G->kh * G->kw > 1 && !G->band && !G->span && T->maxrows == G->ow &&
           G->xs[3] == 1 && G->xs[2] == G->wp && G->xs[1] == G->hp * G->wp &&
           (G->n * G->c * G->hp * G->wp + G->wpk->numel) * 4 > kn_target_l2(tg, 512 * 1024);
}

/* Whether a float windowed convolution that would read a padded copy (pad 2) reads x in
 * place with zeroed taps instead (pad 3, conv_geom.ztap): on CPUs, strided, in vector tiles
 * of whole output rows (one tile a row, whose edge tile then is every tile: the
 * copy's per-tap form kept, one select a step on its first row) and at least 8 blocks of
 * output channels. With no copy there is no copy pass, and at 2 threads the convolution,
 * split by its blocks, reads the producer's output once across cores instead of the copy
 * made of it (docs/benchmarks.md "Strided 3x3 convolutions with no padded copy"). Intel
 * Xeon VM, under the CPU lock, per-kernel time against main's padded copy, alternated:
 * ResNet-50's layer3.0 conv2 (256 channels, 28x28 -> 14x14) 0.95 at one thread, 0.92 at
 * two; ResNet-18's layer3.0 conv1 (128 -> 256) 0.98 and 0.88. Not the 28x28 outputs in 2
 * tiles a row and 4 blocks (their layer2.0 conv2 / conv1: 0.92-0.93 at one thread but
 * 1.14-1.15 at two: by blocks only, where the copy's rows split like the producer's). A
 * schedule file's pad=2 keeps the copy; pad=3 asks for this where the tiles allow it. */
static bool conv_ztap_suits(const kn_target *tg, const conv_geom *G, const kt_tile *T,
                            int span_rows) {
    return tg && tg->kind == KN_TARGET_CPU && !T->dot && T->t == KN_F32 && T->lanes >= 2 &&
           !span_rows && G->kh * G->kw > 1 && (G->sh > 1 || G->sw > 1) && T->maxrows == G->ow &&
           G->n * G->group * ((G->kg + T->kb - 1) / T->kb) >= 8;
}

/* The float 1x1 convolutions of the convolution tiles that pw_odd_cols and
 * pw_strided_row3 may give another tile: on a CPU whose vectors run on units of half their
 * width or less (kn_target_fp_split), where kt_choose and kt_widen left two vectors, over
 * output rows of 4 pixels or more, and no schedule file sets tile_rows or tile_vecs. */
static bool pw_split_retile(kn_lower *L, const conv_geom *G, const kn_sched *ov, const kt_tile *T) {
    const kn_target *tg = L->target;
    return tg && tg->kind == KN_TARGET_CPU && kn_target_fp_split(tg) && T->t == KN_F32 &&
           T->lanes >= 2 && T->nv == 2 && !(ov && (ov->tile_rows || ov->tile_vecs)) && G->ow >= 4;
}

/* The rows a register tile of nv vectors holds, at most KT_AUTO_ROWS and at least 1. */
static int pw_split_rows(kn_lower *L, int nv) {
    int rows = kt_reg_rows(L, nv);
    return rows > KT_AUTO_ROWS ? KT_AUTO_ROWS : rows < 1 ? 1 : rows;
}

/* T becomes a tile of nv whole vectors of output channels by rows pixels. */
static void pw_split_tile(kt_tile *T, int nv, int rows) {
    T->nv = nv;
    T->kb = T->kbl = nv * T->lanes;
    T->maxrows = rows;
}

/* One vector of output channels a tile where kt_choose's two (kt_widen finding no wider
 * whole tile) would leave a partial block of one vector: the float 1x1 convolutions of the
 * convolution tiles (channels-last, kt_widen's `whole`) whose channels are an odd number
 * of vectors, 3 or more. The partial block goes through the transposing store that made
 * kt_widen's wider tiles 9-33% slower on these kernels; in one vector every block is
 * whole. Each output is the same sum in the same order. Rows of 4 pixels or more: one
 * vector of a one-pixel tile (the squeeze-and-excite's 1x1 products) is one chain of
 * dependent multiply-adds. EfficientNet-B0's 14x14 projections to 80 and 112 channels,
 * AMD EPYC VM (Zen 4: one 512-bit multiply-add a cycle, 32 KB L1), thread CPU time at
 * one thread against main's binary, alternated: 0.87-0.92 each (3 of 3 rounds; at two
 * threads, wall time, 0.69-0.95; docs/benchmarks.md "EfficientNet-B0 on Zen 4").
 * Only where the vectors run on units of half their width or less (kn_target_fp_split):
 * the Intel Xeon VM's two full-width multiply-adds a cycle may favour two vectors a step,
 * and was not measured (nor AVX2's 16 registers). A schedule file's tile_rows or
 * tile_vecs keeps kt_choose's tile. */
static void pw_odd_cols(kn_lower *L, const conv_geom *G, const kn_sched *ov, kt_tile *T) {
    if (!pw_split_retile(L, G, ov, T) || G->kg % T->lanes || G->kg / T->lanes % 2 == 0 ||
        G->kg < 3 * T->lanes)
        return;
    int rows = pw_split_rows(L, 1);
    pw_split_tile(T, 1, G->ow < rows ? (int)G->ow : rows);
}

/* Three vectors of output channels by one whole output row for the strided float 1x1
 * convolutions of the convolution tiles whose output rows fit in one tile of three vectors
 * (kt_widen keeps two there: its rows would make fewer than 4 tiles, and 3 vectors leave a
 * partial block). Each weight vector is used by every pixel of the row, 7 x 3 = 21
 * multiply-adds for 10 loads where 7 x 2 made 14 for 9; the last block of channels is a
 * partial one through the transposing store. ResNet-50's layer4 downsample (1024 -> 2048,
 * 14x14 -> 7x7, 42 blocks of 48 and one of 32), AMD EPYC VM (Zen 4: one 512-bit
 * multiply-add a cycle), thread CPU time against 7 x 2 (docs/benchmarks.md, branch r1).
 * Only where the vectors run on units of half their width or less (kn_target_fp_split),
 * with 32 registers and 16 or more blocks of channels; the Intel Xeon VM was not measured.
 * A schedule file's tile_rows or tile_vecs keeps kt_choose's tile. */
static void pw_strided_row3(kn_lower *L, const conv_geom *G, const kn_sched *ov, kt_tile *T) {
    if (!pw_split_retile(L, G, ov, T) || kl_vector_registers(L) < 32 || (G->sh < 2 && G->sw < 2) ||
        G->ow > pw_split_rows(L, 3) || G->kg < 16 * 3 * T->lanes)
        return;
    pw_split_tile(T, 3, (int)G->ow);
}

static bool tile_conv(kn_lower *L, const kn_contract *d, const kn_sched *ov, int pad,
                      const kn_target *tg, bool flat, kt_tile *Tp) {
    kn_kbuf *x = d->x, *y = d->y;
    bool integer = kn_contract_is_int(d);
    if (d->ph < 0 || d->pw < 0 || d->peh < 0 || d->pew < 0) return false;
    if (integer ? !int_ok(d, d->c / d->group * d->kh * d->kw)
                : x->dtype != KN_F32 || y->dtype != KN_F32 || !kt_f32_const(d->w) ||
                      (d->bias && !kt_f32_const(d->bias)) || (!flat && !kt_operands_ok(d)))
        return false;
    conv_geom G;
    kt_tile T;
    conv_geometry(d, &G);
    int64_t group = d->group;
    bool red16 = integer && kt_red16(tg, d, ov); /* Helium's VMLADAVA.S8 (kt_tile.wide) */
    if (!kt_choose(L, G.kg, G.ow, ov, integer, integer && !red16 && kt_mve(tg, d, ov), &T))
        return false;
    /* pointwise convolutions (pw_channel_tiles' rows of pixels, strided ones whose input
       fits in L2): the matrix tiles' shape */
    if (!integer && G.kh * G.kw == 1 && group == 1) {
        kt_widen(L, &T, G.kg, G.ow, true, ov);
        pw_odd_cols(L, &G, ov, &T);
        pw_strided_row3(L, &G, ov, &T);
    }
    if (red16) {
        red16_tile(d, ov, &T);
        red16_narrow(&G, ov, &T);
    }
    int span_rows = 0; /* the rows of a span tile (conv_span_rows), if one suits */
    if (!(ov && ov->tile_rows && ov->span != 1) && !flat && !integer && T.lanes > 1 && tg &&
        tg->kind == KN_TARGET_CPU && G.kh * G.kw > 1) {
        /* windowed float convolutions: as many pixels a tile as the registers hold (past
         * KT_AUTO_ROWS), each weight vector loaded once per `rows` multiply-adds: the
         * packed weights of a block of columns (Cin * 9 * KB floats, 74-590 KB for ResNet)
         * come from the L2 once per tile, and at 8 rows their stream limited the tile.
         * Intel Xeon (32 registers, 2 x 16 lanes), ResNet-18, CPU time a kernel: the
         * 14x14 3x3 convolutions 14 x 2 against 7 x 2 1.72-1.75 ms against 1.98-2.00
         * (F(2x2) 2.27-2.35), the 28x28 and 14x14 stride-2 ones 912 / 927 us against
         * 1,095 / 1,068 (docs/benchmarks.md "3x3 convolutions on the Intel Xeon"). */
        /* two vectors of columns where there are as many (the shape measured; set here,
         * not left to kt_choose, whose default serves the 1x1 and matrix products) */
        if (!(ov && ov->tile_vecs) && G.kg >= 2 * T.lanes) {
            T.nv = 2;
            T.kb = T.kbl = 2 * T.lanes;
        }
        int rmax = kt_reg_rows(L, T.nv);
        rmax = rmax > KT_MAX_ROWS ? KT_MAX_ROWS : rmax < 1 ? 1 : rmax;
        if (ov && ov->tile_rows) rmax = ov->tile_rows; /* span=1 with its tile */
        span_rows = conv_span_rows(tg, d, &G, rmax, ov);
        T.maxrows = G.ow < rmax ? (int)G.ow : rmax;
    }
    if (!(ov && ov->tile_rows)) { /* rows of equal tiles: 28 = 4 x 7, not 3 x 8 + 4 */
        int64_t ntl = (G.ow + T.maxrows - 1) / T.maxrows;
        T.maxrows = (int)((G.ow + ntl - 1) / ntl);
    }
    if (integer && !red16) int_dot(tg, d, ov, &T);
    T.cpair = T.dot == KN_DOT_S16X2 && T.lanes == 1 && !T.xzrt && cpair_suits(tg, d, ov);
    /* column pairs (one-channel first layers since RGB stems take the split words): 3
     * columns, as the split words over a window. DS-CNN int8 on the M4, its 10x4 first
     * convolution (bench/fw_profile.sh, schedule files, rows x columns): 3 x 3 0.471 M,
     * 3 x 4 0.502 M (spills), 2 x 4 0.543 M, 2 x 3 0.527 M, 4 x 2 0.553 M, 2 x 2 0.608 M */
    if (T.cpair && !(ov && ov->tile_vecs) && T.nv > 3) {
        T.nv = 3;
        T.kb = T.kbl = T.nv * T.lanes;
    }
    if (conv_split_suits(&G, &T, tg, ov)) { /* split words (kt_tile.split) */
        T.split = true;
        T.cpair = false;
        T.xunsigned = x->dtype == KN_U8;
        T.parts = 4, T.bits = 8;
        /* 2 rows (2 x 4 accumulators, 4 halves, a weight word: 13 registers) */
        if (!(ov && ov->tile_rows) && T.maxrows > 2) T.maxrows = 2;
        conv_split_window(&G, ov, &T);
        /* a window's weight words in i64 pairs (kt_tile.wpair): one LDRD for the two
           words of a column and step, where two LDRs loaded them (conv_pack_wpair); at
           stride 1 its input words pre-split too (kt_tile.xpre: each word is read by
           3 taps of a kernel row and 2 rows of a tile, so one split per run replaces
           up to 6; at stride 2 the tile's rows share fewer words and the wider copy did
           not pay). ResNet-8 int8 on the M4 (QEMU instructions): 16.62 M, 15.55 M with
           the weight pairs, 14.65 M with the pre-split input at stride 1 (14.67 M at
           both strides), its word copies' arena 67,648 -> 86,144 B. A schedule file's
           split=1 keeps the words, split=4 pre-splits them. */
        T.wpair = G.kh * G.kw > 1 && T.kbl == T.kb;
        T.xpre = T.wpair && (ov && ov->split ? ov->split == 4 : G.sw == 1);
        if (flat && pad == 0 && G.kh * G.kw == 1 && !(ov && ov->split == 1)) {
            /* pointwise pairs (schedule split=4): the input widened per tile of pixels
             * (pw_pairs_widen) and the weights at pack time, both read as i64 pairs;
             * 2 pixels x 3 output channels (6 accumulators, 4 input halves, a weight
             * pair and 2 pointers: the loop's end spilled), 2 x 2 for 8 channels or
             * fewer. MobileNetV1 int8 on the M4 (bench/fw_profile.sh, QEMU
             * instructions, all 20 such kernels by --schedule): 2 x 3 12.09 M, 2 x 2
             * 12.55 M, 2 x 4 13.09 M, 3 x 2 13.01 M, 1 x 4 13.40 M, 4 x 2 14.05 M, 3 x 3
             * 14.51 M, 1 x 2 15.37 M; its 8-channel layers 2.6% faster in 2 x 2. */
            T.xpre = T.wpair = true;
            /* 32 channels: 2 x 2 as well, their 8 groups one trip (conv_reduce_dot),
             * which 2 x 3 spills: MobileNetV1's 32 -> 32 layer 650.0 -> 644.8 K, 32 -> 64
             * 314.7 -> 296.1 K (2 x 3 in one trip: 685.2 and 382.4 K) */
            int nv = G.cg >= 16 && G.cg != 32 ? 3 : 2;
            if (!(ov && ov->tile_vecs) && T.nv > nv) T.nv = nv;
            T.kb = T.kbl = T.nv * T.lanes;
        }
    }
    /* unrolled kernel columns: 2 rows (ResNet-8 int8 on the M4, 3x3 convolutions: 2 x 4
     * 21.4 M instructions, 3 x 4 23.9 M, 3 x 3 22.6 M, 4 x 2 22.5 M; docs/firmware.md) */
    if (integer && conv_unroll_cols(L, &G, &T, G.kw) && !(ov && ov->tile_rows) && T.maxrows > 2)
        T.maxrows = 2;
    if (pad == 2 && !(ov && ov->pad) && !integer && conv_ztap_suits(tg, &G, &T, span_rows))
        pad = T.pad = 3;
    *Tp = T;
    G.T = &T;
    /* packed per group: blocks of the group's output channels; dot tiles pack words
     * of `parts` input channels (split words: two words per 4 channels) */
    int64_t red = T.cpair ? G.cg * G.kh * ((G.kw + 1) / 2)
                  : T.dot ? (G.cg + T.parts - 1) / T.parts * G.kh * G.kw * (T.split ? 2 : 1)
                          : G.cg * G.kh * G.kw;
    conv_src *ws = calloc((size_t)group, sizeof *ws);
    const void **wp = calloc((size_t)group, sizeof *wp);
    KN_ASSERT(ws && wp);
    for (int64_t g = 0; g < group; g++) {
        ws[g] = (conv_src){&G, g};
        wp[g] = &ws[g];
    }
    kt_tile T4 = T; /* reduction words: packed as 4 * kb columns of single words */
    T4.kb *= 4, T4.kbl *= 4;
    G.wpk = !integer && T.wt == KN_F32 ? conv_pack_f32(L, &T, &G, group)
            : T.wpair                  ? conv_pack_wpair(L, &T, group, red, G.kg, wp)
            : T.wide                   ? kt_pack(L, &T4, KN_I32, group, red, 4 * G.kg, conv_w16, wp)
                                       : kt_pack(L, &T, T.wt, group, red, G.kg,
                               T.split   ? conv_wsplit
                                                 : T.cpair ? conv_wcpair
                                                 : T.dot   ? conv_wdot
                                                           : conv_w,
                                                 wp);
    G.xzfold = integer && tg && tg->kind == KN_TARGET_MCU && T.lanes == 4 && T.t == KN_I32 &&
               !T.dot && d->xz && is_const(d->xz) && d->xz->numel == 1;
    if (G.xzfold && (d->ph || d->pw || d->peh || d->pew)) {
        /* padded: the folded init for the interior tiles only (MobileNetV2's stem on the
         * M55 a band 226 -> 196 K: 3 of the 19 instructions of a step of 3 channels) */
        G.bpkf = kt_pack(L, &T, T.t, group, 1, G.kg, conv_b, wp);
        G.xzfold = false;
    }
    G.bpk = kt_pack(L, &T, T.t, group, 1, G.kg, conv_b, wp);
    if (T.xzrt) T.csum = kt_pack(L, &T, T.t, group, 1, G.kg, conv_csum, wp);
    free(ws);
    free(wp);
    G.rq = (kt_rq){0};
    /* requantized as vectors (tables padded past m), or on microcontrollers one output
     * at a time in the high-word form where every column's accumulator bound allows it
     * (kt_int_tables_red: SMULL's high word, an add, a shift and SSAT; about 6
     * instructions an output fewer on the M4 than kt_int_tables' 32-bit form with its
     * parity test, same bits), else in that 32-bit form */
    G.vq = integer && d->yscale && !(tg && tg->kind == KN_TARGET_MCU);
    /* Helium's 4-lane tiles (kt_mve): requantized as vectors too where every column takes
     * the high-word form (VMULH.S32, VADD, VSHL, VMAX/VMIN and a narrowing VSTRB of 4
     * channels: codegen/c/cprint.c KN_RQ4BV), so the transposing loop only moves bytes */
    /* Their three tables as one of groups of 4 columns (kt_int_tables_vrec: one pointer,
     * the shift stored negated for VSHL) where every vector of columns starts at a
     * multiple of 4 (a block's, a group's first column) and none is read one column at a
     * time (the reduction tiles' channels-last y, conv_tile's direct stores). */
    bool vrec4 = T.kb % 4 == 0 && (group == 1 || G.kg % 4 == 0) && (T.lanes == 4 || G.ys[1] != 1);
    if (integer && d->yscale && tg && tg->kind == KN_TARGET_MCU && T.lanes == 4 && T.t == KN_I32 &&
        !T.dot &&
        (vrec4 ? kt_int_tables_vrec(L, d, T.kb, 4, &G.rq) : kt_int_tables_hi32(L, d, T.kb, &G.rq)))
        G.vq = true;
    /* and the reduction tiles' scalar outputs, 4 columns a vector (conv_store_red) */
    else if (integer && d->yscale && tg && tg->kind == KN_TARGET_MCU && T.wide && T.kb == 4 &&
             !d->epi && G.ys[3] == 1 && G.ys[2] == G.ow && G.ys[1] == G.oh * G.ow &&
             (vrec4 ? kt_int_tables_vrec(L, d, T.kb, 4, &G.rq)
                    : kt_int_tables_hi32(L, d, T.kb, &G.rq)))
        G.vq = G.vqred = true;
    else if (G.vq)
        kt_int_tables_padded(L, d, T.kb, &G.rq);
    else if (integer && d->yscale && T.xpre && G.kh * G.kw == 1 && group == 1 && !T.xzrt &&
             T.lanes == 1 && kt_int_tables_rec(L, d, G.bpk, &G.rq))
        G.bpk = NULL; /* pointwise pairs: init and tables from one pointer (conv_tile) */
    else if (integer && d->yscale && (T.wide || (tg && tg->kind == KN_TARGET_MCU)))
        kt_int_tables_red(L, d, &G.rq);
    else if (integer && d->yscale)
        kt_int_tables(L, d, &G.rq);
    if (T.cpair) { /* words of column pairs, padded */
        G.x = x;
        G.xw = conv_cpairs(L, &G, &T, x);
        G.ylo = 0, G.yhi = G.oh, G.xlo = 0, G.xhi = G.ow;
    } else if (T.dot && T.parts == 4 && !pad && G.xs[1] == 1 && G.xs[3] != 1 && !T.xoff && tg &&
               tg->kind == KN_TARGET_CPU) {
        /* channels-last x with no padding (an inverted residual block's projection,
         * pw_int_channels_last): 4 consecutive channels at a pixel are 4 consecutive
         * bytes, the word itself (the code generator loads them as one), so the tiles
         * read x in place where a word copy would transpose it */
        G.x = x;
        G.hp = G.h, G.wp = G.w, G.oph = G.ph, G.opw = G.pw;
        G.ylo = 0, G.yhi = G.oh, G.xlo = 0, G.xhi = G.ow;
    } else if (T.dot && T.parts == 4 && pad == 2 && group == 1 && G.c % 4 == 0 && G.xs[1] == 1 &&
               G.xs[3] == G.c && G.xs[2] == G.w * G.c && !T.xoff && !T.wide && !T.split &&
               !T.xpre && d->xz && kn_dtype_get(x->dtype)->size == 1 && tg &&
               tg->kind == KN_TARGET_CPU) {
        /* channels-last x with padding (ResNet's 3x3 layers, res_channels_last in
         * passes/layout.c): a padded channels-last copy read in place as above */
        G.x = conv_pad_cl(L, &G, x);
        memcpy(G.xs, (int64_t[4]){G.hp * G.wp * G.c, 1, G.wp * G.c, G.c}, sizeof G.xs);
        G.xcl = true;
        G.ylo = 0, G.yhi = G.oh, G.xlo = 0, G.xhi = G.ow;
    } else if (T.xpre && G.kh * G.kw == 1) { /* pointwise pairs: one tile's pixels at a time */
        G.x = x;
        G.xblk = true;
        G.xw = kl_scratch(L, KN_I64, G.cg / 4 * T.maxrows);
        G.hp = G.h, G.wp = G.w, G.oph = G.ph, G.opw = G.pw;
        G.ylo = 0, G.yhi = G.oh, G.xlo = 0, G.xhi = G.ow;
    } else if (T.dot && (T.wide || (T.parts == 4 && (G.cg % 4 == 0 || T.split ||
                                                     (tg && tg->kind == KN_TARGET_CPU))))) {
        /* words, padded */
        G.x = x;
        G.xw = conv_words(L, &G, &T, x);
        G.ylo = 0, G.yhi = G.oh, G.xlo = 0, G.xhi = G.ow;
    } else if (pad == 2) {
        G.x = conv_pad(L, &G, x); /* dense NCHW from here on */
        memcpy(G.xs, (int64_t[4]){G.c * G.hp * G.wp, G.hp * G.wp, G.wp, 1}, sizeof G.xs);
        G.ylo = 0, G.yhi = G.oh, G.xlo = 0, G.xhi = G.ow;
    } else {
        G.x = x;
        G.hp = G.h, G.wp = G.w, G.oph = G.ph, G.opw = G.pw;
        kt_interior(G.h, G.oh, G.kh, G.sh, G.dh, G.ph, &G.ylo, &G.yhi);
        kt_interior(G.w, G.ow, G.kw, G.sw, G.dw, G.pw, &G.xlo, &G.xhi);
        G.ztap = pad == 3 && !T.dot && !integer;
    }
    G.zow0 = -1;
    G.y = y;
    /* span tiles: over a padded copy or an input that needs none (no border tests) */
    if (span_rows && G.ylo == 0 && G.yhi == G.oh && G.xlo == 0 && G.xhi == G.ow) {
        G.span = Tp->span = true;
        T.maxrows = Tp->maxrows = span_rows;
    }
    G.row_tiles = !G.span && conv_row_tiles(&G, &T, tg);
    G.direct = integer && T.lanes == 1 && !G.vq;
    if (G.vqred)
        G.tile = kl_scratch(L, KN_I32, T.maxrows * 4);
    else if (!G.direct && conv_tile_per_thread(L, &G, integer))
        G.tile = kl_scratch_thread(L, T.t, (G.kg + T.kb - 1) / T.kb * T.maxrows * T.kb);
    else if (!G.direct)
        G.tile = kl_scratch(L, G.vq ? y->dtype : T.t,
                            (G.kg + T.kb - 1) / T.kb * (G.row_tiles ? G.oh : 1) * T.maxrows * T.kb);
    G.pf = Tp->pf = conv_pf_suits(tg, &G, &T, ov, flat);
    int vb = kl_for(L, G.n), vg = kl_for(L, group);
    int64_t full = G.kg / T.kb, tail = G.kg % T.kb;
    int64_t brows = pad || T.dot ? 0 : conv_bands_suit(tg, d, &G);
    G.xpf = Tp->xpf = brows ? 0 : pw_xpf(tg, &G, &T, ov, flat);
    G.wxpf = !brows && conv_wxpf(tg, &G, &T, ov);
    if (G.wxpf) Tp->xpf = G.ow;
    if (brows) {
        conv_bands(L, &G, &T, vb, vg, brows);
    } else if (G.xblk) {
        pw_pairs_tiles(L, &G, &T, vb, vg);
    } else {
        void (*block)(kn_lower *, const conv_geom *, kt_tile *, int, int, kn_kx *, int) =
            G.span ? conv_plane : conv_block;
        if (full && !conv_split_blocks(L, &G, &T, d, tg, vb, vg, full)) {
            int vk = kl_for(L, full);
            block(L, &G, &T, vb, vg, kx_var(L, vk), T.kb);
            kl_end(L);
        }
        if (tail) block(L, &G, &T, vb, vg, kx_int(L, full), (int)tail);
    }
    kl_end_n(L, 2);
    /* each output once: blocks of columns, rows and tiles partition y (conv_rows) */
    L->p->kernels[L->kidx]->disjoint = true;
    if (brows) L->p->kernels[L->kidx]->staged_in = x, L->p->kernels[L->kidx]->staged_out = y;
    return true;
}

void kt_interior(int64_t in, int64_t out, int64_t k, int64_t s, int64_t dl, int64_t pb, int64_t *lo,
                 int64_t *hi) {
    /* o is inside when o*s - pb >= 0 and o*s - pb + (k-1)*dl <= in - 1 */
    int64_t l = (pb + s - 1) / s, top = in - 1 + pb - (k - 1) * dl;
    int64_t h = top < 0 ? 0 : top / s + 1;
    l = l < out ? l : out;
    h = h < out ? h : out;
    *lo = l;
    *hi = h > l ? h : l;
}

kn_kx *kt_inside(kn_lower *L, kn_kx *i, int64_t n) {
    return kx_bin(L, KX_LAND, kx_bin(L, KX_GE, i, kx_int(L, 0)), kx_bin(L, KX_LT, i, kx_int(L, n)));
}

kn_kx *kt_mad(kn_lower *L, kn_kx *a, int64_t s, kn_kx *b) {
    return mad(L, a, s, b);
}

void kt_epi_operands(kn_lower *L, const kn_contract *d, kn_kx *const *coord, int lanes,
                     kn_kx **opnd) {
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        kn_kbuf *o = d->operand[k];
        opnd[k] = NULL;
        if (!o) continue;
        kn_kx *x;
        if (d->epi_flat && o->numel == d->n * d->m * d->oh * d->ow) /* (n, co, pixel) */
            x = kx_load(
                L, o,
                mad(L, mad(L, mad(L, coord[0], d->m, coord[1]), d->oh, coord[2]), d->ow, coord[3]));
        else
            x = kl_bcast_load(L, o, d->y, coord);
        /* varies along y's last axis: lanes consecutive elements there */
        if (lanes > 1 && o->rank >= 1 && o->dims[o->rank - 1] != 1)
            x = kx_vload(L, o, x->a[0], lanes);
        opnd[k] = x;
    }
}

/* ---- MatMul, Gemm ---- */

typedef struct mm_geom {
    kn_kbuf *a, *y, *bpk, *init;
    kt_rq rq;                  /* integer contractions: requantization tables (mult NULL: none) */
    int64_t m, k, n;           /* rows (all batches, or of one batch), reduction, columns */
    int ta;                    /* A is [k][m] */
    const kn_contract *d;      /* its epilogue */
    kn_kx *aoff, *yoff, *boff; /* a batch's first element in a, y and bpk (NULL: 0) */
    /* pointwise convolutions (tile_pointwise) */
    bool pw;        /* a partial block of columns in as many vectors as it needs */
    kn_kbuf *rinit; /* each row's init (a conv's bias per output channel), or NULL */
    kn_kbuf *bx;    /* microcontrollers: full blocks read B = x in place (row k at k * n,
                       from bxoff on), only the partial block is packed (into bpk) */
    kn_kx *bxoff;
    bool bone;   /* bpk holds only the block being computed, from 0 (tile_pointwise's
                    per-task packing: pw_pack_cols) */
    bool ypf;    /* each tile prefetches the next tile's lines of y (mm_prefetch_next) */
    bool apf;    /* each full tile of rows prefetches the next tile's rows of a (pw_apf) */
    bool bpf;    /* each tile prefetches its share of the next block's packed B, a line an
                    iteration of its reduction loop (mm_bpf) */
    bool bnext;  /* with bpf, batched products (kt_batched_const): the last full block
                    prefetches the next batch's first (at boff + per), the last line of
                    bpk the bound */
    kn_kbuf *xs; /* kt_tile.xpre: a's rows split into i64 pairs of halves (mm_xsplit);
                    kt_tile.wide: a's rows as i32 words of 4 s8 operands (mm_xwords) */
    /* mm_groups: full blocks of columns in groups of ng, and in a group blocks of mc rows,
       each run over every block of the group before the next (0: not) */
    int ng;
    int64_t mc;
    bool serp; /* mm_serp: the full blocks in pairs, the second's whole tiles of rows last to
                  first, the pair's partial tiles of rows after both */
} mm_geom;

/* e + off (off NULL: e) */
static kn_kx *plus(kn_lower *L, kn_kx *e, kn_kx *off) {
    return off ? kx_add(L, e, off) : e;
}

/* Operand o read at y's flat index yidx, broadcast (numpy rules) to y: y's coordinates
 * recovered by division, then `lanes` consecutive elements along y's last axis (a
 * vector when o varies along it, else a scalar that broadcasts). */
static kn_kx *mm_bcast_operand(kn_lower *L, const kn_kbuf *y, kn_kbuf *o, kn_kx *yidx, int lanes) {
    kn_kx *coord[KN_MAX_RANK];
    int64_t inner = 1;
    for (int i = y->rank - 1; i >= 0; i--) {
        kn_kx *c = inner > 1 ? kx_bin(L, KX_DIV, yidx, kx_int(L, inner)) : yidx;
        coord[i] = i > 0 ? kx_bin(L, KX_MOD, c, kx_int(L, y->dims[i])) : c;
        inner *= y->dims[i];
    }
    kn_kx *x = kl_bcast_load(L, o, y, coord);
    if (lanes > 1 && o->rank >= 1 && o->dims[o->rank - 1] != 1) x = kx_vload(L, o, x->a[0], lanes);
    return x;
}

/* The epilogue on the value at y[row, col .. col + lanes) (an index into y). Operands
 * broadcast to y (kt_operands_ok); a single value is loaded once, the y-shaped ones and
 * rows of N are read directly, the others through y's coordinates. */
static kn_kx *mm_epi(kn_lower *L, const mm_geom *G, kn_kx *val, kn_kx *yidx, kn_kx *col) {
    return kt_mm_epi(L, G->d, G->y, val, yidx, col);
}

kn_kx *kt_mm_epi(kn_lower *L, const kn_contract *d, const kn_kbuf *y, kn_kx *val, kn_kx *yidx,
                 kn_kx *col) {
    if (!d->epi) return val;
    if (kn_contract_is_int(d)) /* a fused float tail (passes/dynq.c) */
        return kt_int_epi(L, d, val, col);
    kn_kx *opnd[KN_EPI_MAX] = {0};
    int lanes = kx_lanes(val);
    for (int k = 0; k < d->epi->n; k++) {
        kn_kbuf *o = d->operand[k];
        if (!o) continue;
        if (o->numel == 1) { /* a scalar: broadcast to every lane */
            opnd[k] = kx_load(L, o, kx_int(L, 0));
            continue;
        }
        bool row = o->numel == d->N && o->rank >= 1 && o->dims[o->rank - 1] == d->N;
        if (o->numel != y->numel && !row) {
            opnd[k] = mm_bcast_operand(L, y, o, yidx, lanes);
            continue;
        }
        kn_kx *idx = row ? col : yidx;
        opnd[k] = lanes > 1 ? kx_vload(L, o, idx, lanes) : kx_load(L, o, idx);
    }
    return kl_epilogue(L, d->epi, val, opnd);
}

bool kt_mm_operands_ok(const kn_contract *d) {
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o) continue;
        if (kx_compute_dtype(o->dtype) != KN_F32 || o->dtype != KN_F32) return false;
        bool same = o->numel == d->y->numel && o->rank == d->y->rank &&
                    !memcmp(o->dims, d->y->dims, sizeof(int64_t) * (size_t)o->rank);
        bool row = o->numel == d->N && o->rank >= 1 && o->dims[o->rank - 1] == d->N &&
                   o->rank <= d->y->rank;
        if (!same && !row && o->numel != 1) return false;
    }
    return true;
}

typedef struct mm_src {
    const kn_contract *d;
    int64_t k, n;
    const kt_tile *T;
} mm_src;

/* alpha * B[r][col] (minus B's zero point for integer contractions), as f32 for floats */
static double mm_b(const void *ctx, int64_t r, int64_t col) {
    const mm_src *s = ctx;
    const kn_contract *d = s->d;
    double b = cval(d->w, d->tb ? col * s->k + r : r * s->n + col);
    if (kn_contract_is_int(d)) return b - cval(d->wz, col);
    return (float)(d->alpha * b);
}

/* packed words of a dot tile: reduction group rg holds rows rg*parts + [0, parts) */
static double mm_bdot(const void *ctx, int64_t rg, int64_t col) {
    const mm_src *s = ctx;
    double v[4];
    int n = 0;
    for (; n < s->T->parts && rg * s->T->parts + n < s->k; n++)
        v[n] = mm_b(ctx, rg * s->T->parts + n, col);
    return kt_pack_word(s->T, v, n);
}

/* packed words of a split dot tile (kt_tile.split, mm_split_suits): reduction step r =
 * 2 * q + o holds rows 4q + o and 4q + o + 2 as two 16-bit parts, the even or odd bytes
 * KX_UNPACK16 takes from the word a[m, 4q .. 4q + 4) */
static double mm_bsplit(const void *ctx, int64_t r, int64_t col) {
    int64_t q = r / 2, o = r % 2;
    uint32_t w = 0;
    for (int h = 0; h < 2; h++)
        w |= ((uint32_t)(int32_t)mm_b(ctx, 4 * q + o + 2 * h, col) & 0xffffu) << (16 * h);
    return (double)(int32_t)w;
}

/* mm_bsplit's two words of each column and step as one i64, the even word low
 * (kt_tile.wpair): [block][k / 4][kb] */
typedef struct mm_pair_args {
    const mm_src *s;
    int64_t nq, n;
} mm_pair_args;

static void mm_bsplit_pair(const void *ctx, void *data) {
    const mm_pair_args *A = ctx;
    int64_t kb = A->s->T->kb, *o = data;
    for (int64_t blk = 0; blk < A->n / kb; blk++)
        for (int64_t q = 0; q < A->nq; q++)
            for (int64_t j = 0; j < kb; j++) {
                uint32_t lo = (uint32_t)(int32_t)mm_bsplit(A->s, 2 * q, blk * kb + j);
                uint32_t hi = (uint32_t)(int32_t)mm_bsplit(A->s, 2 * q + 1, blk * kb + j);
                *o++ = (int64_t)((uint64_t)hi << 32 | lo);
            }
}

/* packed reduction words (kt_tile.wide), a tile of 4 * kb columns: column c4 = 4 * col
 * + j of step r holds rows 16r + 4j + [0, 4) of column col, so a column's 16 weights of
 * a step are 4 consecutive words (as conv_w16) */
static double mm_w16(const void *ctx, int64_t r, int64_t c4) {
    const mm_src *s = ctx;
    double v[4];
    for (int b = 0; b < 4; b++) v[b] = mm_b(ctx, 16 * r + 4 * (c4 % 4) + b, c4 / 4);
    return kt_pack_word(s->T, v, 4);
}

/* with a run-time input zero point: the column's sum of w - wz */
static double mm_csum(const void *ctx, int64_t r, int64_t col) {
    (void)r;
    const mm_src *s = ctx;
    double sum = 0;
    for (int64_t k = 0; k < s->k; k++) sum += mm_b(ctx, k, col);
    return sum;
}

static double mm_c(const void *ctx, int64_t r, int64_t col) {
    (void)r;
    const mm_src *s = ctx;
    if (kn_contract_is_int(s->d)) { /* bias minus xzc * the column's weights (dots) */
        double sum = 0;
        for (int64_t k = 0; s->T->dot && k < s->k; k++) sum += mm_b(ctx, k, col);
        return cval(s->d->bias, col) - (double)s->T->xzc * sum;
    }
    return s->d->bias ? (float)(s->d->beta * cval(s->d->bias, col)) : 0.0f;
}

/* Reduction step k of block blk in packed weights of nred steps per block: rows kb
 * apart, kbl in a narrowed partial block (T: the tile with that block's nv). */
static kn_kx *mm_bidx(kn_lower *L, const kt_tile *T, kn_kx *blk, int64_t nred, kn_kx *k) {
    if (T->kbl == T->kb || T->nv * T->lanes == T->kb)
        return kx_mul(L, mad(L, blk, nred, k), kx_int(L, T->kb));
    return kx_add(L, kx_mul(L, blk, kx_int(L, nred * T->kb)), kx_mul(L, k, kx_int(L, T->kbl)));
}

/* Reduction rows k0*parts + [0, n) of a dot tile: the rows' inputs packed into words. */
static void mm_dot_step(kn_lower *L, const mm_geom *G, kt_tile *T, kn_kx *blk, kn_kx *m0, kn_kx *kg,
                        int n) {
    int64_t ng = (G->k + T->parts - 1) / T->parts;
    kn_kx *k0 = kx_mul(L, kg, kx_int(L, T->parts));
    /* a[m0 + r, k0 + g] (transA: a[k0 + g, m0 + r]) */
    int va = kl_decl(L, KN_I64, G->ta ? mad(L, k0, G->m, m0) : mad(L, m0, G->k, k0));
    kn_kx *words[KT_MAX_ROWS] = {0};
    for (int r = 0; r < T->rows; r++) {
        kn_kx *vals[4];
        for (int g = 0; g < n; g++)
            vals[g] = kx_load(L, G->a,
                              kx_add(L, kx_var(L, va),
                                     kx_int(L, r * (G->ta ? 1 : G->k) + g * (G->ta ? G->m : 1))));
        words[r] = kt_word(L, T, vals, n);
    }
    kt_step_dot(L, T, words, G->bpk, mm_bidx(L, T, blk, ng, kg));
}

/* Reduction rows 4 * q + [0, 4) of a split dot tile (kt_tile.split, always with wpair
 * on matrices): each row's 4 inputs as their pre-split pair of halves (xpre, mm_xsplit)
 * at xs[xi + r * k/4], else as one word of a (at 4 * xi + r * k: xi = row * k/4 + q),
 * and the weights' i64 pairs at bp[wi ..] (mm_bsplit_pair, [blk][q][kb]), unpacked by
 * kt_step_words. */
static void mm_split_step(kn_lower *L, const mm_geom *G, kt_tile *T, kn_kx *xi, kn_kx *wi) {
    kn_kx *words[KT_MAX_ROWS] = {0};
    for (int r = 0; r < T->rows; r++)
        words[r] = T->xpre
                       ? kx_load(L, G->xs, kt_plus(L, xi, r * (G->k / 4)))
                       : kx_load_word(L, G->a, kt_plus(L, kx_mul(L, xi, kx_int(L, 4)), r * G->k));
    kt_step_words(L, T, words, G->bpk, wi);
}

/* Pointwise tiles (tile_pointwise's pixel blocks outermost): a prefetch of each 64-byte
 * line of y, and of the epilogue operands that vary along the pixels, that the next tile
 * of rows stores (rows m0 + rows .. m0 + 2 rows - 1, clamped to the last row) in this
 * block of columns. Each tile stores `rows` pieces of kb pixels a plane apart, too short
 * for the hardware prefetchers, so the stores' reads for ownership waited on memory. */
static void mm_prefetch_next(kn_lower *L, const mm_geom *G, const kt_tile *T, int rows, kn_kx *blk,
                             int valid, kn_kx *m0) {
    const kn_contract *d = G->d;
    for (int r = 0; r < rows; r++) {
        kn_kx *row = kx_bin(L, KX_MIN, kt_plus(L, m0, rows + r), kx_int(L, G->m - 1));
        kn_kx *base = plus(L, mad(L, row, G->n, kx_mul(L, blk, kx_int(L, T->kb))), G->yoff);
        for (int c = 0; c < valid; c += 16) {
            kl_prefetch(L, G->y, kt_plus(L, base, c));
            for (int o = 0; d->epi && o < d->epi->n; o++)
                if (d->operand[o] && d->operand[o]->numel == G->y->numel)
                    kl_prefetch(L, d->operand[o], kt_plus(L, base, c));
        }
    }
}

/* One step k of a float (or lane-by-lane integer) tile: a[m0 + r, k] (transA: a[k, m0 + r])
 * times row k of the block's B into the accumulators. */
static void mm_fstep(kn_lower *L, const mm_geom *G, kt_tile *T, int rows, kn_kx *blk, int valid,
                     kn_kx *m0, kn_kx *k) {
    kn_kx *a[KT_MAX_ROWS] = {0};
    int va =
        kl_decl(L, KN_I64, plus(L, G->ta ? mad(L, k, G->m, m0) : mad(L, m0, G->k, k), G->aoff));
    for (int r = 0; r < rows; r++)
        a[r] = int_operand(
            L, G->d, kx_load(L, G->a, kx_add(L, kx_var(L, va), kx_int(L, r * (G->ta ? 1 : G->k)))));
    if (G->bx && valid == T->kb) /* in place: x[k, blk * kb ..] */
        kt_step(L, T, a, G->bx,
                plus(L, mad(L, k, G->n, kx_mul(L, blk, kx_int(L, T->kb))), G->bxoff));
    else if (G->bx) /* the packed partial block, alone in bpk */
        kt_step(L, T, a, G->bpk, kx_mul(L, k, kx_int(L, T->kb)));
    else
        kt_step(L, T, a, G->bpk,
                plus(L, mm_bidx(L, T, G->bone ? kx_int(L, 0) : blk, G->k, k), G->boff));
}

static void mm_tile(kn_lower *L, const mm_geom *G, kt_tile *T, int rows, kn_kx *blk, int valid,
                    kn_kx *m0) {
    kt_tile Tt;
    if ((G->pw || T->kbl < T->kb) && valid < T->kb) { /* the partial block: only the
                                                         vectors it needs */
        Tt = *T;
        Tt.nv = (valid + T->lanes - 1) / T->lanes;
        T = &Tt;
    }
    if (G->rinit) { /* acc[r][v] = rinit[m0 + r] in every lane (float: after the sum) */
        T->rows = rows;
        bool after = T->t == KN_F32;
        T->binit = after ? G->rinit : NULL, T->bidx = m0, T->brow = true;
        for (int r = 0; r < rows; r++)
            for (int v = 0; v < T->nv; v++)
                T->acc[r][v] = kl_decl_vec(L, T->t, T->lanes,
                                           after ? kx_const(L, T->t, 0)
                                                 : kx_load(L, G->rinit, kt_plus(L, m0, r)));
    } else {
        kt_begin(L, T, rows, G->init, kx_mul(L, blk, kx_int(L, T->kb)));
    }
    if (T->split) { /* mm_split_suits: k a multiple of 4 */
        /* two steps an iteration where they pair up: the loop's count, compare and
           branch once per 8 inputs (GCC does not unroll it at -O2) */
        int64_t nq = G->k / 4;
        int un = nq % 2 == 0 ? 2 : 1;
        int vq = kl_for(L, nq / un);
        kn_kx *q = kx_mul(L, kx_var(L, vq), kx_int(L, un));
        /* the iteration's first step: one base index each, the steps constants from it */
        int vx = kl_decl(L, KN_I64, mad(L, m0, nq, q));
        int vw = kl_decl(L, KN_I64, kx_mul(L, mad(L, blk, nq, q), kx_int(L, T->kb)));
        for (int u = 0; u < un; u++)
            mm_split_step(L, G, T, kt_plus(L, kx_var(L, vx), u),
                          kt_plus(L, kx_var(L, vw), u * T->kb));
        kl_end(L);
        goto store;
    }
    if (T->wide) { /* 16 inputs a step: per row one vector of 4 words of xs (mm_xwords) */
        int64_t nq = G->k / 16;
        int vq = kl_for(L, nq);
        kn_kx *q = kx_var(L, vq), *words[KT_MAX_ROWS] = {0};
        int vx = kl_decl(L, KN_I64, kx_mul(L, mad(L, m0, nq, q), kx_int(L, 4)));
        for (int r = 0; r < T->rows; r++)
            words[r] = kx_vload(L, G->xs, kt_plus(L, kx_var(L, vx), r * (G->k / 4)), T->wide);
        kt_step_dot(L, T, words, G->bpk,
                    kx_mul(L, mad(L, blk, nq, q), kx_int(L, (int64_t)T->kb * T->wide)));
        kl_end(L);
        goto store;
    }
    if (T->dot) {
        int64_t full = G->k / T->parts, tail = G->k % T->parts;
        if (full) {
            int vg = kl_for(L, full);
            mm_dot_step(L, G, T, blk, m0, kx_var(L, vg), T->parts);
            kl_end(L);
        }
        if (tail) mm_dot_step(L, G, T, blk, m0, kx_int(L, full), (int)tail);
        goto store;
    }
    if (G->ypf && rows == T->maxrows) mm_prefetch_next(L, G, T, rows, blk, valid, m0);
    int un = kt_k_steps(L, T, G->k);
    /* mm_bpf: the next block's packed B from its first element at this tile's share
       (m0 / m of it), one line an iteration, not past its last line */
    int64_t bn = G->k * T->kb, nfull = G->n / T->kb;
    int vpb = -1;
    if (G->bpf && valid == T->kb) {
        kn_kx *nb = G->bnext ? kt_plus(L, blk, 1)
                             : kx_bin(L, KX_MIN, kt_plus(L, blk, 1), kx_int(L, nfull - 1));
        kn_kx *share = kx_bin(L, KX_DIV, kx_mul(L, m0, kx_int(L, bn)), kx_int(L, G->m));
        vpb = kl_decl(
            L, KN_I64,
            plus(L, kx_add(L, kx_mul(L, nb, kx_int(L, bn)), share), G->bnext ? G->boff : NULL));
    }
    int vk = kl_for(L, G->k / un);
    kn_kx *k2 = un > 1 ? kx_mul(L, kx_var(L, vk), kx_int(L, un)) : kx_var(L, vk);
    if (G->apf && rows == T->maxrows) {
        /* pw_apf: the next tile's rows of a, contiguous, a line an iteration, block blk
           from its K / un-th line on (clamped to the rows' last line) */
        int64_t span = (int64_t)rows * G->k, its = G->k / un;
        kn_kx *nx = kx_bin(L, KX_MIN, kt_plus(L, m0, rows), kx_int(L, G->m - rows));
        kn_kx *base = kx_mul(L, nx, kx_int(L, G->k));
        kn_kx *off =
            kx_mul(L, kx_add(L, kx_mul(L, blk, kx_int(L, its)), kx_var(L, vk)), kx_int(L, 16));
        kl_prefetch(L, G->a, kx_add(L, base, kx_bin(L, KX_MIN, off, kx_int(L, span - 16))));
    }
    if (vpb >= 0) {
        kn_kx *last = G->bnext
                          ? kx_int(L, G->bpk->numel - bn)
                          : kx_mul(L, kx_bin(L, KX_MIN, kt_plus(L, blk, 1), kx_int(L, nfull - 1)),
                                   kx_int(L, bn));
        kl_prefetch(L, G->bpk,
                    kx_bin(L, KX_MIN,
                           kx_add(L, kx_var(L, vpb), kx_mul(L, kx_var(L, vk), kx_int(L, 16))),
                           kt_plus(L, last, bn - 16)));
    }
    for (int u = 0; u < un; u++) mm_fstep(L, G, T, rows, blk, valid, m0, kt_plus(L, k2, u));
    kl_end(L);
    if (G->k % un) mm_fstep(L, G, T, rows, blk, valid, m0, kx_int(L, G->k - 1));
store:
    kt_add_init(L, T);
    int vy =
        kl_decl(L, KN_I64, plus(L, mad(L, m0, G->n, kx_mul(L, blk, kx_int(L, T->kb))), G->yoff));
    for (int r = 0; r < rows; r++) {
        if (G->rq.mult) /* requantized one element at a time */
            for (int col = 0; col < valid; col++) {
                kn_kx *yi = kx_add(L, kx_var(L, vy), kx_int(L, r * G->n + col));
                kn_kx *ci = mad(L, blk, T->kb, kx_int(L, col));
                kl_store(L, G->y, yi, kt_int_store(L, G->d, &G->rq, kt_elem(L, T, r, col), ci));
            }
        else if (valid == T->kb || G->pw) /* whole vectors, then single columns */
            for (int v = 0; v < T->nv; v++) {
                if ((v + 1) * T->lanes > valid) {
                    for (int col = v * T->lanes; col < valid; col++) {
                        kn_kx *yi = kx_add(L, kx_var(L, vy), kx_int(L, r * G->n + col));
                        kn_kx *ci = mad(L, blk, T->kb, kx_int(L, col));
                        kl_store(L, G->y, yi, mm_epi(L, G, kt_elem(L, T, r, col), yi, ci));
                    }
                    break;
                }
                kn_kx *yi = kx_add(L, kx_var(L, vy), kx_int(L, r * G->n + v * T->lanes));
                kn_kx *ci = mad(L, blk, T->kb, kx_int(L, v * T->lanes));
                kl_store(L, G->y, yi, mm_epi(L, G, kx_var(L, T->acc[r][v]), yi, ci));
            }
        else
            for (int col = 0; col < valid; col++) {
                kn_kx *yi = kx_add(L, kx_var(L, vy), kx_int(L, r * G->n + col));
                kn_kx *ci = mad(L, blk, T->kb, kx_int(L, col));
                kl_store(L, G->y, yi, mm_epi(L, G, kt_elem(L, T, r, col), yi, ci));
            }
    }
}

/* The tiles of rows [r0, r0 + cnt) of block blk: the full ones in a loop, then the
 * partial one. */
static void mm_rows(kn_lower *L, const mm_geom *G, kt_tile *T, kn_kx *blk, int valid, kn_kx *r0,
                    int64_t cnt) {
    int64_t nt = cnt / T->maxrows, rem = cnt % T->maxrows;
    if (nt) {
        int vt = kl_for(L, nt);
        kn_kx *m0 = kx_mul(L, kx_var(L, vt), kx_int(L, T->maxrows));
        mm_tile(L, G, T, T->maxrows, blk, valid, plus(L, m0, r0));
        kl_end(L);
    }
    if (rem)
        mm_tile(L, G, T, (int)rem, blk, valid,
                r0 ? kt_plus(L, r0, nt * T->maxrows) : kx_int(L, nt * T->maxrows));
}

static void mm_block(kn_lower *L, const mm_geom *G, kt_tile *T, kn_kx *blk, int valid) {
    mm_rows(L, G, T, blk, valid, NULL, G->m);
}

/* The pair of full blocks b0, b0 + 1 in the serpentine order (mm_serp): b0's whole tiles
 * of rows first to last, b0 + 1's last to first, then the partial tile of rows of b0 and
 * of b0 + 1. */
static void mm_pair(kn_lower *L, const mm_geom *G, kt_tile *T, kn_kx *b0) {
    int64_t nt = G->m / T->maxrows, rem = G->m % T->maxrows;
    kn_kx *b1 = kt_plus(L, b0, 1);
    int vt = kl_for(L, nt);
    mm_tile(L, G, T, T->maxrows, b0, T->kb, kx_mul(L, kx_var(L, vt), kx_int(L, T->maxrows)));
    kl_end(L);
    vt = kl_for(L, nt);
    kn_kx *back = kx_bin(L, KX_SUB, kx_int(L, nt - 1), kx_var(L, vt));
    mm_tile(L, G, T, T->maxrows, b1, T->kb, kx_mul(L, back, kx_int(L, T->maxrows)));
    kl_end(L);
    if (rem) {
        mm_tile(L, G, T, (int)rem, b0, T->kb, kx_int(L, nt * T->maxrows));
        mm_tile(L, G, T, (int)rem, b1, T->kb, kx_int(L, nt * T->maxrows));
    }
}

/* Whether a product's tiles are the plain float form on a CPU that mm_groups and mm_serp
 * reorder: vector float tiles over all of B packed, not dot-product, split or wide tiles,
 * none of tile_pointwise's forms (pw, rinit, bx, bone), not requantized. */
static bool mm_plain_float(const mm_geom *G, const kt_tile *T, const kn_target *tg) {
    return tg && tg->kind == KN_TARGET_CPU && T->t == KN_F32 && T->lanes >= 2 && !T->dot &&
           !T->split && !T->wide && !G->bx && !G->rinit && !G->pw && !G->bone && !G->rq.mult;
}

/* Group g of ng full blocks (mm_groups): each block of mc rows over every block of the
 * group, then the rows left over every block. */
static void mm_group(kn_lower *L, const mm_geom *G, kt_tile *T, kn_kx *g) {
    int64_t nm = G->m / G->mc, rest = G->m % G->mc;
    int vi = kl_for(L, nm);
    int vp = kl_for(L, G->ng);
    mm_rows(L, G, T, mad(L, g, G->ng, kx_var(L, vp)), T->kb,
            kx_mul(L, kx_var(L, vi), kx_int(L, G->mc)), G->mc);
    kl_end(L);
    kl_end(L);
    if (rest) {
        vp = kl_for(L, G->ng);
        mm_rows(L, G, T, mad(L, g, G->ng, kx_var(L, vp)), T->kb, kx_int(L, nm * G->mc), rest);
        kl_end(L);
    }
}

/* Every block of columns: the full ones in a loop (in groups, mm_groups), then the
 * partial one. */
static void mm_blocks(kn_lower *L, const mm_geom *G, kt_tile *T) {
    int64_t full = G->n / T->kb, tail = G->n % T->kb;
    if (full && G->ng > 1) { /* mm_groups: ng divides full */
        int vg = kl_for(L, full / G->ng);
        mm_group(L, G, T, kx_var(L, vg));
        kl_end(L);
    } else if (G->serp) { /* mm_serp: 2 full blocks or more */
        int vp = kl_for(L, full / 2);
        mm_pair(L, G, T, kx_mul(L, kx_var(L, vp), kx_int(L, 2)));
        kl_end(L);
        if (full % 2) mm_block(L, G, T, kx_int(L, full - 1), T->kb);
    } else if (full) {
        int vb = kl_for(L, full);
        mm_block(L, G, T, kx_var(L, vb), T->kb);
        kl_end(L);
    }
    if (tail) mm_block(L, G, T, kx_int(L, full), (int)tail);
}

/* beta * C, a row of N known only at run time, copied into a scratch of whole blocks
 * (zero past N) that the tiles' accumulators start from. */
static kn_kbuf *mm_init_rt(kn_lower *L, const kn_contract *d, const kt_tile *T) {
    int64_t n = (d->N + T->kb - 1) / T->kb * T->kb;
    kn_kbuf *ip = kl_scratch(L, KN_F32, n);
    int vj = kl_for(L, d->N);
    kn_kx *c = kx_load(L, d->bias, kx_var(L, vj));
    kl_store(L, ip, kx_var(L, vj), d->beta != 1 ? kx_mul(L, kx_const(L, KN_F32, d->beta), c) : c);
    kl_end(L);
    if (n > d->N) {
        int vz = kl_for(L, n - d->N);
        kl_store(L, ip, kt_plus(L, kx_var(L, vz), d->N), kx_const(L, KN_F32, 0));
        kl_end(L);
    }
    return ip;
}

/* kt_tile.xpre: every 4 inputs a[i, 4q .. 4q + 4) split once, before the tiles, into
 * the i64 xs[i * k/4 + q] = even half | odd half << 32 (KX_UNPACK16's two words), which
 * every column tile then reads with one load: the word load and the two unpacks were
 * made once per tile of columns (the autoencoder's 128 -> 640: 160 times per input). */
static void mm_xsplit(kn_lower *L, mm_geom *G, const kt_tile *T) {
    int64_t nw = G->m * (G->k / 4);
    G->xs = kl_scratch(L, KN_I64, nw);
    int vi = kl_for(L, nw);
    kn_kx *i = kx_var(L, vi);
    int vw = kl_decl(L, KN_I32, kx_load_word(L, G->a, kx_mul(L, i, kx_int(L, 4))));
    kl_store(L, G->xs, i, kt_split_pair(L, T, kx_var(L, vw)));
    kl_end(L);
}

/* kt_tile.wide: a's rows as words of 4 s8 operands, xw[i] = a[4i .. 4i + 4) (u8 input:
 * each byte's top bit flipped, x - 128), built once before the tiles, which read 4
 * consecutive words (16 inputs) as one vector per row and step. */
static void mm_xwords(kn_lower *L, mm_geom *G, const kt_tile *T) {
    int64_t nw = G->m * (G->k / 4);
    G->xs = kl_scratch(L, KN_I32, nw);
    int vi = kl_for(L, nw);
    kn_kx *w = kx_load_word(L, G->a, kx_mul(L, kx_var(L, vi), kx_int(L, 4)));
    if (T->xoff) w = kx_bin(L, KX_XOR, w, kx_const(L, KN_I32, (double)(int32_t)0x80808080u));
    kl_store(L, G->xs, kx_var(L, vi), w);
    kl_end(L);
}

/* Whether an integer product takes reduction tiles (kt_tile.wide) on a target with
 * KN_DOT_S8X16 (Helium's VMLADAVA.S8): 8-bit A read by rows, K a multiple of 16, whole
 * blocks of columns, a constant input zero point and every w - wz in [-128, 127]; no
 * schedule file's dot, lanes or split (as kt_red16 for convolutions). The autoencoder's
 * 640 -> 128 Gemm on the M55: 16 multiply-adds a VMLADAVA, where the 4-lane VMLA.S32
 * tiles made 4 a VMLA and a widening load. */
static bool mm_red16_suits(const mm_geom *G, const kn_target *tg, const kn_sched *ov) {
    kn_sched s8 = {.dot = KN_DOT_S8S8X4};
    const kn_contract *d = G->d;
    return tg && tg->int8_red == KN_DOT_S8X16 && kn_contract_is_int(d) &&
           !(ov && ((ov->dot && ov->dot != KN_DOT_S8X16) || ov->lanes > 1 || ov->split)) &&
           !G->ta && !G->aoff && !G->pw && !G->rinit && !G->bx && G->k > 0 && G->k % 16 == 0 &&
           G->n % KT_MAX_NV == 0 && (G->a->dtype == KN_U8 || G->a->dtype == KN_I8) &&
           (!d->xz || (is_const(d->xz) && d->xz->numel == 1)) &&
           kt_int_dot_kind(tg, d, &s8) == KN_DOT_S8S8X4;
}

/* Whether an integer product takes split words read in place (kt_tile.split): a
 * microcontroller's s16x2 dot on scalar tiles, 8-bit A read by rows (not transposed, no
 * batch offset) with its reduction a multiple of 4, so each row's 4 consecutive inputs
 * are one word load (kx_load_word) and two KX_UNPACK16 (SXTB16/UXTB16), where the channel
 * pairs were two byte loads and an OR per 2 inputs; a constant input zero point; whole
 * blocks of columns (the weights' two words a step are kb apart). A schedule file's split
 * other than 1 turns it off. */
static bool mm_split_suits(const mm_geom *G, const kt_tile *T, const kn_target *tg,
                           const kn_sched *ov) {
    return tg && tg->kind == KN_TARGET_MCU && T->dot == KN_DOT_S16X2 && T->lanes == 1 && !T->xzrt &&
           !G->ta && !G->aoff && !G->pw && !G->rinit && !G->bx &&
           (G->a->dtype == KN_U8 || G->a->dtype == KN_I8) && G->k % 4 == 0 && G->k > 0 &&
           G->n % T->kb == 0 && !(ov && ov->split && ov->split != 1);
}

/* Whether each tile of rows prefetches its share of the next block of columns' packed B
 * (mm_geom.bpf; the schedule's pf, 2 in a schedule file: not): tile m0 of m starts at
 * m0 / m of the next block and prefetches a line an iteration of its reduction loop
 * (clamped to the block's last line; the last block prefetches itself), so the next
 * block's B, which the tiles read from L3 where the weights do not stay in L2 from one
 * run to the next (BERT's 1 MB products), is on its way before its first tile. Where a
 * block has few tiles of rows (48 or fewer) its first tile's wait for B is a large part
 * of the block; with many (the 512x1024x1024 MatMul: 86) the prefetches cost more than
 * they save. Float tiles on CPUs reading a packed constant B with 2 blocks or more.
 * Intel Xeon VM, CPU time at one thread, on and off alternated (docs/benchmarks.md "The
 * GotoBLAS order"): BERT encoder -3.6% (median of 8 pairs, faster in 6), ResNet-50's fc
 * Gemm -2 to -14%, 196x2304x256 -1.8%; 512x1024x1024 +1.2% (so not there). Not for a B
 * under 256 KB, which stays in the caches from one run to the next, nor for one tile of
 * rows (a batch-1 classifier) over a B that fits in L2 (1 MB when the target does not
 * say): there a step is 2 to 4 multiply-adds, and the MLP's two Gemms (1.6 MB and 512 KB
 * of B, in L2 from run to run) took 4% more with the prefetches. */
static bool mm_bpf(const mm_geom *G, const kt_tile *T, const kn_target *tg, const kn_sched *ov) {
    int64_t l2 = kn_target_l2(tg, 1 << 20);
    return tg && tg->kind == KN_TARGET_CPU && (G->m > T->maxrows || G->k * G->n * 4 > l2) &&
           !(ov && ov->pf == 2) && T->t == KN_F32 && T->lanes >= 2 && !T->dot && !T->split &&
           !T->wide && !G->bx && !G->rinit && !G->pw && !G->bone && !G->rq.mult &&
           G->n / T->kb >= 2 && G->k >= 64 && G->k * G->n * 4 >= 256 * 1024 &&
           (G->m + T->maxrows - 1) / T->maxrows <= 48;
}

/* The GotoBLAS order of a float product's blocks, only from a schedule file (its mc):
 * the full blocks of columns in groups of ng whose packed B (contiguous, [block][k][kb])
 * fills at most half of L2, and in each group blocks of mc rows (rounded down to whole
 * tiles), each block of rows run over every block of the group before the next. Where A
 * does not stay in L2 beside a block's B (K x kb), the tiles read A from L3 again for
 * every block; grouped, once a group, and each thread keeps its group in its own L2 (the
 * parallel pass splits the groups: at least 2). The same sums in the same order (each
 * tile still runs the whole reduction): outputs bit-identical. On CPUs with a known L2
 * (l2_bytes), float tiles with A read by rows, not the integer, split or pointwise forms.
 *
 * Not chosen by the pass: on the Intel Xeon VM (L2 2 MB) the 512x1024x1024 MatMul with ng
 * 4 and mc 192 (A 768 KB a block, B 1 MB a group) took 3-5% less CPU time at one thread
 * in some interleaved rounds and 1-4% more in others, under other processes' load
 * (docs/benchmarks.md, "The GotoBLAS order"). */
static void mm_groups(mm_geom *G, const kt_tile *T, const kn_target *tg, const kn_sched *ov) {
    G->ng = 0, G->mc = 0;
    int64_t l2 = kn_target_l2(tg, 0), full = G->n / T->kb;
    int64_t panel = G->k * T->kb * 4;
    if (!ov || ov->mc < 2 || l2 <= 0 || !mm_plain_float(G, T, tg) || G->ta) return;
    int64_t ng = l2 / 2 / panel;
    if (ng > full / 2) ng = full / 2;
    while (ng > 1 && full % ng) ng--;
    int64_t mc = ov->mc / T->maxrows * T->maxrows;
    if (ng < 2 || mc < T->maxrows || mc >= G->m) return;
    G->ng = (int)ng, G->mc = mc;
}

/* Whether a float product's full blocks of columns run in the serpentine order
 * (mm_geom.serp, mm_pair; the schedule's serp: 1 in a schedule file wherever the tiles
 * allow it, 2 not): in pairs, the first block's whole tiles of rows first to last, the
 * second's last to first, then the pair's two partial tiles of rows. Where A and a block's
 * packed B do not stay in L2 together, tiles in order read all of A from beyond L2 again
 * for every block (its least recently used rows are the next ones needed); in this order
 * each block starts on the rows the block before read last, still in L2, and each new
 * block's B is first read by a whole tile whose rows of A are in the caches. The partial
 * tiles sit between the pairs, not at the turn from a block to the next: there (the
 * partial tile last in the first block and first in the second) the order measured 1-4%
 * slower than tiles in order. The same sums in the same order (each tile runs the whole
 * reduction): outputs bit-identical. On CPUs, float tiles with a constant B, not in
 * groups (mm_groups), 2 blocks of columns or more and 2 tiles of rows or more; by default
 * in programs for one thread where the L2 is known, A with a block's B fills more than
 * half of it and a block's B at most an eighth (the partial tiles read the first block's B
 * again after the second's: 196x2304x256's 590 KB blocks measured 1% slower,
 * 512x1024x1024's 256 KB 1-3% faster; at 2 threads 512x1024x1024 measured 1.5% slower).
 * Intel Xeon VM, L2 2 MB (docs/benchmarks.md, "The serpentine order of the matrix tiles"). */
static bool mm_serp(const mm_geom *G, const kt_tile *T, const kn_target *tg, const kn_sched *ov,
                    int threads) {
    int64_t l2 = kn_target_l2(tg, 0);
    int64_t abytes = G->m * G->k * 4, panel = G->k * T->kb * 4;
    bool form = mm_plain_float(G, T, tg) && !G->ng && G->n / T->kb >= 2 && G->m >= 2 * T->maxrows;
    if (!form || (ov && ov->serp == 2)) return false;
    return (ov && ov->serp == 1) ||
           (threads <= 1 && l2 > 0 && abytes + panel > l2 / 2 && panel <= l2 / 8);
}

/* A float matrix-vector product (one row) on a CPU whose constant B is larger than the L2
 * cache: every weight comes from L3 or memory once, and the tile's nv vector loads a step
 * are what the core keeps in flight. MM_MATVEC_NV vectors (64 columns at 16 lanes) where
 * kt_choose gave 2: the MLP's 784 x 512 layer (1.6 MB of weights, L2 1 MB) on the AMD EPYC
 * VM (Zen 4) ran 4% faster (docs/benchmarks.md, branch bz). B within the L2 keeps kt_choose's
 * tile (the Intel Xeon VM's L2 of 2 MB holds that layer: unmeasured there). A schedule
 * file's tile_vecs keeps its own. In a program for several threads the columns past the
 * last whole tile are a nest of their own that the parallel pass leaves on the calling
 * thread after the split tiles: the wider tile is kept only where it leaves no more such
 * columns than kt_choose's (the 1000-class classifiers: 40 columns in 64-column tiles
 * against 8 in 32-column ones; ResNet-50's fc at 2 threads on the Zen 4 VM took 0.93-0.96x
 * the time in kt_choose's 31 tiles, docs/benchmarks.md, branch p5). */
enum { MM_MATVEC_NV = 4 };

static void mm_matvec_widen(const mm_geom *G, kt_tile *T, const kn_target *tg, const kn_sched *ov,
                            int threads) {
    int64_t l2 = kn_target_l2(tg, 0);
    if (G->m != 1 || !tg || tg->kind != KN_TARGET_CPU || T->lanes < 2 || T->nv >= MM_MATVEC_NV ||
        (ov && ov->tile_vecs) || l2 <= 0 || G->k * G->n * 4 <= l2 ||
        G->n < (int64_t)MM_MATVEC_NV * T->lanes)
        return;
    if (threads > 1 &&
        G->n % ((int64_t)MM_MATVEC_NV * T->lanes) > G->n % ((int64_t)T->nv * T->lanes))
        return;
    T->nv = MM_MATVEC_NV;
    T->kb = T->kbl = T->nv * T->lanes;
}

static bool mm_lower(kn_lower *L, mm_geom *G, mm_src *S, const kn_sched *ov, const kn_target *tg,
                     kt_tile *Tp) {
    kt_tile T;
    bool integer = kn_contract_is_int(G->d);
    bool red16 = integer && mm_red16_suits(G, tg, ov); /* VMLADAVA.S8 (kt_tile.wide) */
    if (!kt_choose(L, G->n, G->m, ov, integer, integer && !red16 && kt_mve(tg, G->d, ov), &T))
        return false;
    if (!integer) kt_widen(L, &T, G->n, G->m, false, ov);
    if (!integer) mm_matvec_widen(G, &T, tg, ov, L->p->threads);
    if (red16) {
        red16_tile(G->d, ov, &T);
        if (T.kb != KT_MAX_NV) return false; /* whole blocks (mm_red16_suits) */
    } else if (integer) {
        int_dot(tg, G->d, ov, &T);
    }
    if (integer && mm_split_suits(G, &T, tg, ov)) {
        T.split = true;
        T.xunsigned = G->a->dtype == KN_U8;
        T.wpair = true;
        /* the pre-split input pays for its copy (a word load, two unpacks and a store per
           4 inputs) from 3 blocks of columns on: it saves two unpacks and a load per
           block and step (MobileNetV2's 448 -> 2 classifier, one block: 1,080 more
           instructions with it; DS-CNN's 64 -> 12, three: 160 fewer) */
        T.xpre = G->n / T.kb >= 3;
    }
    /* the last block of columns only as wide as the whole vectors it needs (a 10-class
     * classifier on 4-column scalar tiles: 10 columns of weights and multiply-adds, not 12) */
    if (G->n % T.kb) T.kbl = (int)((G->n % T.kb + T.lanes - 1) / T.lanes * T.lanes);
    *Tp = T;
    S->T = &T;
    const void *ctx = S;
    const kn_kbuf *c = G->d->bias;
    if (T.split) { /* [block][k / 4][kb] i64 pairs of words (kt_tile.wpair) */
        mm_pair_args A = {S, G->k / 4, G->n};
        G->bpk = kl_table_fill(L, KN_I64, G->n * G->k / 4, mm_bsplit_pair, &A);
    } else if (T.wide) { /* [block][k / 16][kb][4 words] */
        kt_tile T4 = T;
        T4.kb *= 4, T4.kbl *= 4;
        G->bpk = kt_pack(L, &T4, KN_I32, 1, G->k / 16, 4 * G->n, mm_w16, &ctx);
    } else if (T.dot)
        G->bpk = kt_pack(L, &T, T.wt, 1, (G->k + T.parts - 1) / T.parts, G->n, mm_bdot, &ctx);
    else
        G->bpk = kt_pack(L, &T, T.wt, 1, G->k, G->n, mm_b, &ctx);
    G->init = !c && !T.dot        ? NULL
              : !c || is_const(c) ? kt_pack(L, &T, T.t, 1, 1, G->n, mm_c, &ctx)
                                  : mm_init_rt(L, G->d, &T);
    if (T.xzrt) T.csum = kt_pack(L, &T, T.t, 1, 1, G->n, mm_csum, &ctx);
    G->rq = (kt_rq){0};
    /* microcontrollers: the high-word form where it applies (kt_int_tables_red) */
    if (integer && G->d->yscale && tg && (tg->int8_red || tg->kind == KN_TARGET_MCU))
        kt_int_tables_red(L, G->d, &G->rq);
    else if (integer && G->d->yscale)
        kt_int_tables(L, G->d, &G->rq);
    if (T.xpre) mm_xsplit(L, G, &T);
    if (T.wide) mm_xwords(L, G, &T);
    G->bpf = mm_bpf(G, &T, tg, ov);
    Tp->pf = G->bpf;
    mm_groups(G, &T, tg, ov);
    Tp->mc = (int)G->mc;
    G->serp = Tp->serp = mm_serp(G, &T, tg, ov, L->p->threads);
    mm_blocks(L, G, &T);
    return true;
}

/* ---- MatMul, Gemm: B known only at run time ----
 *
 * Attention's products (Q K^T, softmax V) and a Gemm fed by another node take B from
 * the arena. The kernel packs it there first, into the layout kt_pack gives a constant
 * B ([block][k][kb], alpha applied, zero past the last column), with a loop nest
 * before the tiles, which are then the ones above. A batched product packs each
 * batch's B inside the batch loop; each batch has its own part of the scratch when the
 * target runs threads, so the batch loop's iterations are independent and
 * passes/parallel.c splits it; elsewhere (microcontrollers, or when that would take
 * more than KT_PACK_MAX_BYTES) one part serves every batch in turn. */

enum { KT_PACK_MAX_BYTES = 64 << 20 };

/* B's elements (kk, col .. col + lanes) of the batch starting at woff, times alpha. */
static kn_kx *mm_b_rt(kn_lower *L, const kn_contract *d, kn_kx *woff, kn_kx *kk, kn_kx *col,
                      int lanes) {
    kn_kx *i = plus(L, d->tb ? mad(L, col, d->K, kk) : mad(L, kk, d->N, col), woff);
    kn_kx *v = lanes > 1 ? kx_vload(L, d->w, i, lanes) : kx_load(L, d->w, i);
    return d->alpha != 1 ? kx_mul(L, kx_const(L, KN_F32, d->alpha), v) : v;
}

/* B of one batch (from woff on in d->w) packed into G->bpk from poff on. Without tb a
 * block's row is nv vector copies; with tb the reads walk B's rows, the writes stride
 * kb. The partial block's columns past N are zero. */
static void mm_pack_rt(kn_lower *L, const mm_geom *G, const kt_tile *T, kn_kx *woff, kn_kx *poff) {
    const kn_contract *d = G->d;
    int64_t K = G->k, kb = T->kb, full = G->n / kb, tail = G->n % kb;
    kn_kbuf *bp = G->bpk;
    int64_t tfirst = G->bx ? 0 : full; /* the partial block's place: alone with bx */
    if (G->bx) {
        /* only the partial block */
    } else if (full && !d->tb) {
        int vb = kl_for(L, full), vk = kl_for(L, K);
        kn_kx *dst = kx_mul(L, mad(L, kx_var(L, vb), K, kx_var(L, vk)), kx_int(L, kb));
        for (int v = 0; v < T->nv; v++) {
            kn_kx *col = mad(L, kx_var(L, vb), kb, kx_int(L, v * T->lanes));
            kl_store(L, bp, plus(L, kt_plus(L, dst, v * T->lanes), poff),
                     mm_b_rt(L, d, woff, kx_var(L, vk), col, T->lanes));
        }
        kl_end_n(L, 2);
    } else if (full) {
        int vb = kl_for(L, full), vj = kl_for(L, kb), vk = kl_for(L, K);
        kn_kx *dst = mad(L, mad(L, kx_var(L, vb), K, kx_var(L, vk)), kb, kx_var(L, vj));
        kl_store(L, bp, plus(L, dst, poff),
                 mm_b_rt(L, d, woff, kx_var(L, vk), mad(L, kx_var(L, vb), kb, kx_var(L, vj)), 1));
        kl_end_n(L, 3);
    }
    if (tail) {
        int vk = kl_for(L, K), vj = kl_for(L, tail);
        kn_kx *row = kx_mul(L, kt_plus(L, kx_var(L, vk), tfirst * K), kx_int(L, kb));
        kl_store(L, bp, plus(L, kx_add(L, row, kx_var(L, vj)), poff),
                 mm_b_rt(L, d, woff, kx_var(L, vk), kt_plus(L, kx_var(L, vj), full * kb), 1));
        kl_end(L);
        int vz = kl_for(L, kb - tail);
        kl_store(L, bp, plus(L, kt_plus(L, kx_add(L, row, kx_var(L, vz)), tail), poff),
                 kx_const(L, KN_F32, 0));
        kl_end_n(L, 2);
    }
}

kn_kx *kt_batch_off(kn_lower *L, const kn_contract *d, kn_kx *b, const int64_t *st) {
    kn_kx *off = NULL;
    int64_t inner = 1;
    for (int i = d->nbd - 1; i >= 0; i--) {
        if (st[i]) {
            kn_kx *c = inner > 1 ? kx_bin(L, KX_DIV, b, kx_int(L, inner)) : b;
            if (i > 0) c = kx_bin(L, KX_MOD, c, kx_int(L, d->bdims[i]));
            c = kx_mul(L, c, kx_int(L, st[i]));
            off = off ? kx_add(L, off, c) : c;
        }
        inner *= d->bdims[i];
    }
    return off ? off : kx_int(L, 0);
}

/* threads: the target runs parallel loops on threads (each batch packs into its own
 * part of the scratch). */
static bool tile_matmul_rt(kn_lower *L, const kn_contract *d, const kn_sched *ov, bool threads,
                           kt_tile *Tp) {
    int64_t batch = d->batch > 1 ? d->batch : 1;
    if (batch == 1 && d->w->numel != d->K * d->N) return false;
    kt_tile T;
    if (!kt_choose(L, d->N, d->M, ov, false, false, &T)) return false;
    *Tp = T;
    mm_geom G = {.a = d->x, .y = d->y, .m = d->M, .k = d->K, .n = d->N, .ta = d->ta, .d = d};
    mm_src S = {d, d->K, d->N, NULL};
    const void *ctx = &S;
    int64_t per = (d->N + T.kb - 1) / T.kb * d->K * T.kb; /* packed elements of one B */
    bool own = batch > 1 && threads && batch * per * 4 <= KT_PACK_MAX_BYTES;
    G.bpk = kl_scratch(L, KN_F32, own ? batch * per : per);
    G.init = !d->bias            ? NULL
             : is_const(d->bias) ? kt_pack(L, &T, KN_F32, 1, 1, d->N, mm_c, &ctx)
                                 : mm_init_rt(L, d, &T);
    if (batch == 1) {
        mm_pack_rt(L, &G, &T, NULL, NULL);
        mm_blocks(L, &G, &T);
        return true;
    }
    int vb = kl_for(L, batch);
    kn_kx *b = kx_var(L, vb);
    int xo = kl_decl(L, KN_I64, kt_batch_off(L, d, b, d->xbs));
    int wo = kl_decl(L, KN_I64, kt_batch_off(L, d, b, d->wbs));
    G.aoff = kx_var(L, xo);
    G.yoff = kx_mul(L, b, kx_int(L, d->M * d->N));
    G.boff = own ? kx_mul(L, b, kx_int(L, per)) : NULL;
    mm_pack_rt(L, &G, &T, kx_var(L, wo), G.boff);
    mm_blocks(L, &G, &T);
    kl_end(L);
    return true;
}

/* ---- matrix-vector products in FPU register blocks (microcontrollers) ----
 *
 * A float product with few rows (the batch-1 fully connected layers of a
 * microcontroller model) uses each weight once: its cost is a load per weight and a
 * multiply-add, and the register tiles above load weights one VLDR at a time (about 3
 * instructions per multiply-add on the Cortex-M4). On a scalar FPU whose loads fill
 * many consecutive registers at once (kn_target.fp_block: VLDM, up to 16 S registers)
 * the tile is instead R output columns x K inputs:
 *
 *   for row m, block blk of R columns:
 *     acc[c] = 0                                       R scalar accumulators
 *     for q over k / K:
 *       xb = a[m, q*K .. q*K + K)                      one block load (K registers)
 *       for each pair p of columns:                     fp_block / K columns a load
 *         wb = packed[blk][q][p*2 .. p*2 + 2][K]        one block load (fp_block registers)
 *         acc[c] = fma(xb[i], wb[c', i], acc[c])       K multiply-adds per column
 *     y[m, blk*R + c] = epilogue(acc[c] + bias[blk*R + c])
 *
 * K = fp_block / 2 (8), two columns of K weights a load, and R = the registers left,
 * vector_registers - fp_block - K (8 on the M4's 32): one input block, one weight
 * block and the accumulators fill the FPU. The blocks are kl_decl_block locals: the
 * inputs in registers fp_block - K .. fp_block - 1 above the accumulators' range
 * (s8-s15), the weights in the top fp_block registers (s16-s31). Per step of R x K
 * multiply-adds: 1 + R/2 loads, R*K multiply-adds, and an address computation per
 * load. The weights are packed [blk][q][R][K], so one load takes two columns' K
 * consecutive weights; a partial last block of columns is packed [q][nct][K], its
 * columns rounded up to a whole weight block (zeros past the last column), and stores
 * only its valid columns. K must divide the reduction (the input block is read whole). A schedule
 * file's `fblock=1` keeps the scalar tiles. */

typedef struct mb_geom {
    const kn_contract *d;
    kn_kbuf *bpk, *init;
    int64_t m, k, n, nq;
    int K, R, cpl;  /* inputs a block, columns a tile, columns a weight block */
    int nct;        /* columns of the partial last block, rounded up to cpl (0: none) */
    int xreg, wreg; /* first register of the input and the weight blocks */
} mb_geom;

typedef struct mb_src {
    mm_src s;
    const mb_geom *B;
} mb_src;

static void mb_fill(const void *ctx, void *data) {
    const mb_src *S = ctx;
    const mb_geom *B = S->B;
    float *o = data;
    int64_t full = B->n / B->R, nblk = (B->n + B->R - 1) / B->R;
    for (int64_t blk = 0; blk < nblk; blk++) {
        int nc = blk < full ? B->R : B->nct;
        for (int64_t q = 0; q < B->nq; q++)
            for (int c = 0; c < nc; c++)
                for (int i = 0; i < B->K; i++) {
                    int64_t col = blk * B->R + c, r = q * B->K + i;
                    *o++ = col < B->n ? (float)mm_b(&S->s, r, col) : 0.0f;
                }
    }
}

/* Columns [blk*R, blk*R + nc) of row m (nc a multiple of cpl), the first `valid` stored. */
static void mb_block(kn_lower *L, const mb_geom *B, kn_kx *m, kn_kx *blk, int nc, int valid) {
    int acc[KT_MAX_ROWS];
    kn_kx *c0 = kx_mul(L, blk, kx_int(L, B->R));
    for (int c = 0; c < nc; c++) /* from 0: the bias after the sum (kt_add_init) */
        acc[c] = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    int vq = kl_for(L, B->nq);
    kn_kx *q = kx_var(L, vq);
    int xb = kl_decl_block(
        L, B->K, kx_vload(L, B->d->x, mad(L, m, B->k, kx_mul(L, q, kx_int(L, B->K))), B->K),
        B->xreg);
    /* weights of step q of block blk: [blk][q][nc][K] */
    int vw = kl_decl(L, KN_I64,
                     kx_add(L, kx_mul(L, blk, kx_int(L, B->nq * B->R * B->K)),
                            kx_mul(L, q, kx_int(L, (int64_t)nc * B->K))));
    for (int p = 0; p < nc / B->cpl; p++) {
        int wb = kl_decl_block(
            L, B->cpl * B->K,
            kx_vload(L, B->bpk, kt_plus(L, kx_var(L, vw), p * B->cpl * B->K), B->cpl * B->K),
            B->wreg);
        for (int c2 = 0; c2 < B->cpl; c2++)
            for (int i = 0; i < B->K; i++) {
                int c = p * B->cpl + c2;
                kl_set(
                    L, acc[c],
                    kx_fma(L, kx_lane(L, xb, i), kx_lane(L, wb, c2 * B->K + i), kx_var(L, acc[c])));
            }
    }
    kl_end(L);
    for (int c = 0; B->init && c < nc; c++)
        kl_set(L, acc[c], kx_add(L, kx_var(L, acc[c]), kx_load(L, B->init, kt_plus(L, c0, c))));
    int vy = kl_decl(L, KN_I64, mad(L, m, B->n, c0));
    for (int c = 0; c < valid; c++) {
        kn_kx *yi = kt_plus(L, kx_var(L, vy), c);
        kl_store(L, B->d->y, yi,
                 kt_mm_epi(L, B->d, B->d->y, kx_var(L, acc[c]), yi, kt_plus(L, c0, c)));
    }
}

/* Whether float product d takes register-block tiles, and if so builds them. */
static bool mm_fblock(kn_lower *L, const kn_contract *d, const kn_sched *ov, const kn_target *tg,
                      kt_tile *Tp) {
    if (!tg || tg->kind != KN_TARGET_MCU || tg->fp_block < 4 || kl_lanes(L, KN_F32) != 1 ||
        (ov && ov->fblock == 1) || d->ta || d->batch > 1 || (d->bias && !is_const(d->bias)))
        return false;
    mb_geom B = {.d = d, .m = d->M, .k = d->K, .n = d->N};
    B.K = tg->fp_block / 2;
    B.cpl = tg->fp_block / B.K;
    B.R = (tg->vector_registers - tg->fp_block - B.K) / B.cpl * B.cpl;
    if (B.R > KT_MAX_ROWS) B.R = KT_MAX_ROWS / B.cpl * B.cpl;
    if (B.R < B.cpl || B.k % B.K || B.n < B.cpl) return false;
    B.nq = B.k / B.K;
    B.wreg = tg->vector_registers - tg->fp_block;
    B.xreg = B.wreg - B.K;
    int64_t full = B.n / B.R, tail = B.n % B.R;
    B.nct = (int)((tail + B.cpl - 1) / B.cpl * B.cpl);
    mb_src S = {{d, d->K, d->N, NULL}, &B};
    B.bpk = kl_table_fill(L, KN_F32, (full * B.R + B.nct) * B.nq * B.K, mb_fill, &S);
    kt_tile T;
    memset(&T, 0, sizeof T);
    T.t = T.wt = KN_F32;
    T.lanes = 1;
    T.kb = B.R;
    T.kbl = B.nct ? B.nct : B.R; /* the bias table's last block as narrow as the weights' */
    T.nv = B.R;
    T.maxrows = 1;
    T.fblock = B.K;
    S.s.T = &T;
    const void *ctx = &S.s;
    if (d->bias) B.init = kt_pack(L, &T, KN_F32, 1, 1, B.n, mm_c, &ctx);
    int vm = -1;
    if (B.m > 1) vm = kl_for(L, B.m);
    kn_kx *m = vm >= 0 ? kx_var(L, vm) : kx_int(L, 0);
    if (full) {
        int vb = kl_for(L, full);
        mb_block(L, &B, m, kx_var(L, vb), B.R, B.R);
        kl_end(L);
    }
    if (tail) mb_block(L, &B, m, kx_int(L, full), B.nct, (int)tail);
    if (vm >= 0) kl_end(L);
    *Tp = T;
    return true;
}

static bool tile_matmul(kn_lower *L, const kn_contract *d, const kn_sched *ov, bool threads,
                        const kn_target *tg, kt_tile *Tp) {
    const kn_kbuf *b = d->w, *c = d->bias;
    if (kn_contract_is_int(d)) {
        if (d->batch > 1 || !int_ok(d, d->K) || b->numel != d->K * d->N || d->ta || d->tb)
            return false;
    } else {
        if (d->x->dtype != KN_F32 || d->y->dtype != KN_F32 || b->dtype != KN_F32 ||
            (c && (c->dtype != KN_F32 || c->numel != d->N)) || !kt_operands_ok(d))
            return false;
        if (d->batch > 1 || !kt_f32_const(b)) return tile_matmul_rt(L, d, ov, threads, Tp);
        if (b->numel != d->K * d->N) return false;
        if (mm_fblock(L, d, ov, tg, Tp)) return true;
    }
    mm_geom G = {.a = d->x, .y = d->y, .m = d->M, .k = d->K, .n = d->N, .ta = d->ta, .d = d};
    mm_src S = {d, d->K, d->N, NULL};
    return mm_lower(L, &G, &S, ov, tg, Tp);
}

/* ---- batched products with a constant B per batch (passes/winograd.c) ---- */

typedef struct batched_fill {
    kt_packing P;
    kt_fill_b fill;
    const void *ctx;
} batched_fill;

static void batched_fill_fn(const void *ctx, void *data) {
    const batched_fill *F = ctx;
    F->fill(F->ctx, &F->P, data);
}

/* The register tile of m x k by k x n products (B packed for it: *per floats a batch) and
 * the geometry mm_blocks reads; d is what mm_tile reads of a description (x's dtype,
 * float, and no epilogue), the caller's, which G points to. */
static bool batched_tile(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t m, int64_t k, int64_t n,
                         const kn_sched *ov, kt_tile *T, kn_contract *d, mm_geom *G, int64_t *per) {
    if (!kt_choose(L, n, m, ov, false, false, T)) return false;
    if (n % T->kb) T->kbl = (int)((n % T->kb + T->lanes - 1) / T->lanes * T->lanes);
    *d = (kn_contract){
        .kind = KN_CONTRACT_MATMUL, .x = a, .y = y, .M = m, .K = k, .N = n, .alpha = 1, .beta = 1};
    *G = (mm_geom){.a = a, .y = y, .m = m, .k = k, .n = n, .d = d};
    *per = n / T->kb * k * T->kb + (n % T->kb ? k * T->kbl : 0);
    return true;
}

/* batched_tile, with the batch's Bs packed for it into G->bpk: into *packed, made here
 * when NULL (a kernel's calls for other m share it: the packing depends on the columns
 * and the tile's width only, not on m). */
static bool batched_packed(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t k,
                           int64_t n, kt_fill_b fill, const void *ctx, const kn_sched *ov,
                           kn_kbuf **packed, kt_tile *T, kn_contract *d, mm_geom *G, int64_t *per) {
    if (!batched_tile(L, a, y, m, k, n, ov, T, d, G, per)) return false;
    if (!*packed) {
        batched_fill F = {{k, n, T->kb, T->kbl, *per}, fill, ctx};
        *packed = kl_table_fill(L, KN_F32, batch * *per, batched_fill_fn, &F);
    }
    KN_ASSERT((*packed)->numel == batch * *per);
    G->bpk = *packed;
    return true;
}

/* The register tile's shape as the schedule records it. */
static void batched_sched(const kt_tile *T, kn_sched *out) {
    out->tile_rows = T->maxrows;
    out->tile_vecs = T->nv;
    out->lanes = T->lanes;
}

/* Whether kt_batched_const splits its products by chunks of rows (*mc rows a chunk, the
 * rest by batch) rather than by batch (see there); per: floats of a batch's packed B,
 * maxrows: the tile's rows. */
static bool batched_by_rows(kn_lower *L, int64_t batch, int64_t m, int64_t per, int maxrows,
                            int64_t *mcp) {
    /* Rows outermost when every batch's B together fits in half the second-level cache
     * (512 KB when the target does not say) and the rows make 8 chunks of 2 row tiles or more: the
     * Winograd transforms around the product split by tile rows, and a product split by batch
     * (transform position) made each thread read the rows of every tile the other one transformed
     * and write rows the other one transforms back (SqueezeNet's 55x55 expand3x3: the
     * product and the output transform took 2.4x their 1-thread CPU time at two threads
     * on the VM's slow state, docs/benchmarks.md). By chunks of rows, each thread reads
     * every B (from its own cache) and keeps to its rows. Each output is computed as
     * before (the same sums in the same order). */
    int64_t mc = 2 * (int64_t)maxrows;
    const kn_target *tg = L->target;
    int64_t l2 = kn_target_l2(tg, 512 * 1024);
    bool cpu = tg && tg->kind == KN_TARGET_CPU;
    bool by_rows = cpu && (double)batch * (double)per * 4 <= l2 / 2.0 && m >= 8 * mc;
    /* Where the Bs fit in the whole L2 but not in half of it (1 MB when the target does
     * not say: the x86 machines measured have 1-2 MB a core; ResNet's 56x56 64 -> 64 and
     * SqueezeNet's 27x27 expand3x3: 590 KB), or the tiles make fewer chunks, the rows
     * still go outermost, in two halves (four chunks from 16 row tiles on), whole row
     * tiles each: each thread reads every B (its second chunk from its L2) instead of half
     * of them, and reads and writes its own rows of V and M instead of crossing for half
     * of them (passes/xcore.c: 1.9 MB a run for each of ResNet-18's and ResNet-50's 56x56
     * products at 2 threads, 0.2 MB so). Bigger Bs stay split by batch: ResNet-18's 14x14
     * 256 -> 256 (4.2 MB) in two halves took 8-10% more CPU time at one thread, reading
     * its Bs twice from the third level. */
    int64_t l2all = kn_target_l2(tg, 1024 * 1024);
    if (!by_rows && cpu && m >= 2 * mc && (double)batch * (double)per * 4 <= l2all) {
        int64_t halves = m >= 16 * (int64_t)maxrows ? 4 : 2;
        mc = m / (halves * (int64_t)maxrows) * maxrows;
        by_rows = true;
    }
    *mcp = mc;
    return by_rows;
}

bool kt_batched_by_batch(kn_lower *L, int64_t batch, int64_t m, int64_t k, int64_t n,
                         const kn_sched *ov) {
    kt_tile T;
    kn_contract d;
    mm_geom G;
    int64_t per, mc;
    return batched_tile(L, NULL, NULL, m, k, n, ov, &T, &d, &G, &per) &&
           !batched_by_rows(L, batch, m, per, T.maxrows, &mc);
}

bool kt_batched_const(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t k,
                      int64_t n, kt_fill_b fill, const void *ctx, const kn_sched *ov,
                      kn_sched *out) {
    kt_tile T;
    kn_contract d;
    mm_geom G;
    int64_t per;
    kn_kbuf *packed = NULL;
    if (!batched_packed(L, a, y, batch, m, k, n, fill, ctx, ov, &packed, &T, &d, &G, &per))
        return false;
    int64_t mc;
    bool by_rows = batched_by_rows(L, batch, m, per, T.maxrows, &mc);
    const kn_target *tg = L->target;
    if (by_rows) {
        int64_t nch = m / mc, rest = m % mc;
        int vc = kl_for(L, nch);
        L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL; /* chunk c writes its rows only */
        int vb = kl_for(L, batch);
        kn_kx *b = kx_var(L, vb), *r0 = kx_mul(L, kx_var(L, vc), kx_int(L, mc));
        G.m = mc;
        G.aoff = kx_add(L, kx_mul(L, b, kx_int(L, m * k)), kx_mul(L, r0, kx_int(L, k)));
        G.yoff = kx_add(L, kx_mul(L, b, kx_int(L, m * n)), kx_mul(L, r0, kx_int(L, n)));
        G.boff = kx_mul(L, b, kx_int(L, per));
        mm_blocks(L, &G, &T);
        kl_end(L);
        kl_end(L);
        if (rest) { /* the last rows, by batch */
            vb = kl_for(L, batch);
            L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
            b = kx_var(L, vb);
            G.m = rest;
            G.aoff = kx_add(L, kx_mul(L, b, kx_int(L, m * k)), kx_int(L, nch * mc * k));
            G.yoff = kx_add(L, kx_mul(L, b, kx_int(L, m * n)), kx_int(L, nch * mc * n));
            G.boff = kx_mul(L, b, kx_int(L, per));
            mm_blocks(L, &G, &T);
            kl_end(L);
        }
    } else {
        int vb = kl_for(L, batch);
        L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL; /* batch b writes y[b] only */
        kn_kx *b = kx_var(L, vb);
        G.aoff = kx_mul(L, b, kx_int(L, m * k));
        G.yoff = kx_mul(L, b, kx_int(L, m * n));
        G.boff = kx_mul(L, b, kx_int(L, per));
        /* mm_bpf across the batch: each block prefetches the next, the last full one
           the next batch's first, whose B follows (no partial block); mm_bpf judges the
           batch's Bs as one product of batch * n columns (its 256 KB floor on them all).
           Intel Xeon VM, CPU time at one thread, 6 pairs alternated each: ResNet-50's
           layer3 3x3 convolutions (F(2x2): 16 products of 49 x 256 x 256, U 4 MB a
           kernel, from memory once a run) 0.763 of their time without (6 of 6 faster),
           the model 0.965; ResNet-18's three 0.771, the model 0.969; with the floor on
           all the Bs (256 KB a product before), ResNet-50's layer2 ones (F(4x4): 36 of
           64 KB) 0.835 (6 of 6) and ResNet-18's three 0.815 (6 of 6). Without the step
           across batches (each product's last block prefetching itself) the layer3 ones
           read as with no prefetch (5.7-6.0 ms against 4.4-4.6); two blocks ahead 1.027
           of one (docs/benchmarks.md "ResNet-50's pointwise weights prefetched"). */
        mm_geom Gw = G;
        Gw.n = n * batch;
        if (n % T.kb == 0 && mm_bpf(&Gw, &T, tg, ov)) {
            G.bpf = G.bnext = true;
            out->pf = 1;
        }
        mm_blocks(L, &G, &T);
        kl_end(L);
    }
    batched_sched(&T, out);
    return true;
}

bool kt_batched_rows(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t ms,
                     int64_t k, int64_t n, kt_fill_b fill, const void *ctx, const kn_sched *ov,
                     kn_kbuf **packed, kn_sched *out) {
    kt_tile T;
    kn_contract d;
    mm_geom G;
    int64_t per;
    KN_ASSERT(m >= 1 && m <= ms);
    if (!batched_packed(L, a, y, batch, m, k, n, fill, ctx, ov, packed, &T, &d, &G, &per))
        return false;
    int vb = kl_for(L, batch);
    kn_kx *b = kx_var(L, vb);
    G.aoff = kx_mul(L, b, kx_int(L, ms * k));
    G.yoff = kx_mul(L, b, kx_int(L, ms * n));
    G.boff = kx_mul(L, b, kx_int(L, per));
    mm_blocks(L, &G, &T);
    kl_end(L);
    batched_sched(&T, out);
    return true;
}

int64_t kt_batched_kb(kn_lower *L, int64_t m, int64_t k, int64_t n, const kn_sched *ov) {
    kt_tile T;
    kn_contract d;
    mm_geom G;
    int64_t per;
    return batched_tile(L, NULL, NULL, m, k, n, ov, &T, &d, &G, &per) ? T.kb : 0;
}

bool kt_batched_cols(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t ms,
                     int64_t k, int64_t n, kn_kx *blk0, int64_t nc, int64_t ys, kt_fill_b fill,
                     const void *ctx, const kn_sched *ov, kn_kbuf **packed, kn_sched *out) {
    kt_tile T;
    kn_contract d;
    mm_geom G;
    int64_t per;
    KN_ASSERT(m >= 1 && m <= ms && nc >= 1 && nc <= n && nc <= ys);
    if (!batched_packed(L, a, y, batch, m, k, n, fill, ctx, ov, packed, &T, &d, &G, &per))
        return false;
    /* the block's nc columns as mm_blocks' columns over rows ys wide (mm_tile's row
     * stride G.n), B's blocks from blk0 on (whole blocks of kb packed k*kb apart; a
     * partial block only at n's end) */
    G.n = d.N = ys;
    int vb = kl_for(L, batch);
    kn_kx *b = kx_var(L, vb);
    G.aoff = kx_mul(L, b, kx_int(L, ms * k));
    G.yoff = kx_mul(L, b, kx_int(L, ms * ys));
    G.boff = kx_add(L, kx_mul(L, b, kx_int(L, per)), kx_mul(L, blk0, kx_int(L, k * T.kb)));
    int64_t full = nc / T.kb, tail = nc % T.kb;
    if (full) {
        int vk = kl_for(L, full);
        mm_block(L, &G, &T, kx_var(L, vk), T.kb);
        kl_end(L);
    }
    if (tail) mm_block(L, &G, &T, kx_int(L, full), (int)tail);
    kl_end(L);
    batched_sched(&T, out);
    return true;
}

/* ---- pointwise convolutions ----
 *
 * A 1x1 convolution with no padding and one group (f32, constant weights) is
 * a matrix product per batch over the P = oh*ow pixels (strided: x subsampled as it
 * is packed, pw_pack_strided): y[m, p] = (sum_c w[m, c] x[c, p]) + bias[m]. The convolution tiles
 * above put output channels in the vector lanes, which NCHW stores P apart, so each of their tiles
 * goes through a scratch and a scalar transposing store (with the epilogue one value at a time);
 * for a 1x1 convolution with few input channels that store costs more than the multiply-adds. Here
 * the tile's rows are output channels (A = the weights where they are, one broadcast scalar per row
 * and step) and its columns kb consecutive pixels (B = x, packed by the kernel into blocks
 * [blk][c][kb] as a run-time B is, so a block is one contiguous stream that stays in L1 across the
 * tiles of output channels; read in place, x's rows P apart defeat the prefetchers once x leaves
 * L2), so the tile is stored as vectors straight into y with the epilogue applied to vectors:
 *
 *   for blk in full blocks of kb pixels:           parallel (few channels, many pixels)
 *     xt[c][kb] = x[c, blk*kb ..]                  xt: the running thread's copy
 *     for tile of rows output channels: acc = 0; for c: acc[r][v] += w[m0+r, c] * xt[c,
 *       v*lanes ..]; acc[r][v] += bias[m0+r]
 *   the partial block (zero past P) packed into a shared scratch, in as many vectors as it
 *   needs
 *
 * Each task packs the block it computes into its thread's copy (kl_scratch_thread, K x kb
 * floats: 12 KB for 96 channels on 16 lanes, in L1 or L2) and reads only that: as MLAS's
 * per-thread working buffer, no packed pixel crosses cores, and a thread reuses the same
 * lines in every such kernel (packing all of x into the arena first had one thread's
 * packing land on lines the other core held, 0.4-0.9 MB a SqueezeNet layer). The partial
 * block runs on the calling thread after the loop; the parallel pass may split its tiles
 * of output channels, so its packing is shared. Microcontrollers read the full blocks in
 * place (below).
 *
 * With few blocks of pixels (late layers: 7x7, 14x14) the loops go the other way
 * round, tiles of output channels outermost, so the parallel loop still has work to
 * split; every task then reads every block, and x is packed once into the arena before
 * the loop ([blk][c][kb], as a run-time B). The block loop's iterations write disjoint
 * columns of y, which the parallel pass cannot see through y's row stride P (not a
 * multiple of the block when a partial block exists), so this pass marks it parallel
 * itself. */

enum { PW_COLS_OUTER = 8 }; /* full pixel blocks from which the block loop goes outermost */

/* Whether d is a pointwise convolution tile_pointwise can rebuild: its epilogue
 * operands must be constant along a tile's pixels or vary with them as y does (a
 * vector of pixels can cross a row of the image). */
static bool pw_suits(const kn_contract *d, int lanes) {
    if (d->kind != KN_CONTRACT_CONV || d->group != 1 || d->kh != 1 || d->kw != 1 || d->ph ||
        d->pw || d->peh || d->pew || d->x->dtype != KN_F32 || d->y->dtype != KN_F32 ||
        !kt_f32_const(d->w) || (d->bias && !kt_f32_const(d->bias)) || !kt_operands_ok(d) ||
        lanes < 2 || d->oh * d->ow < lanes ||
        !kn_contract_nchw(d)) /* channels-last: the conv tiles store channels contiguously */
        return false;
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o) continue;
        bool ones = true, full = true;
        for (int i = 0; i < d->nsp; i++) {
            int oi = o->rank - d->nsp + i;
            int64_t od = oi >= 0 ? o->dims[oi] : 1;
            ones = ones && od == 1;
            full = full && od == d->y->dims[2 + i];
        }
        if (!ones && !full) return false;
    }
    return true;
}

/* x of a strided 1x1 convolution (ResNet's downsample) packed as mm_pack_rt packs a
 * run-time B, [blk][c][kb], column p = output pixel oy*ow + ox reading x[c, oy*sh,
 * ox*sw] (from xoff on). Read in place instead, each tile's rows would touch one line
 * of every input channel per pixel pair and each block of output channels would
 * stream the whole input again. */
static void pw_pack_strided(kn_lower *L, const kn_contract *d, const kt_tile *T, kn_kbuf *bp,
                            kn_kx *xoff) {
    int64_t K = d->c, P = d->oh * d->ow, kb = T->kb, nblk = (P + kb - 1) / kb;
    if (P % kb) { /* the partial block's columns past P */
        int vc = kl_for(L, K), vj = kl_for(L, kb - P % kb);
        kn_kx *row = kt_plus(L, kx_var(L, vc), (nblk - 1) * K);
        kl_store(L, bp, kt_plus(L, mad(L, row, kb, kx_var(L, vj)), P % kb), kx_const(L, KN_F32, 0));
        kl_end_n(L, 2);
    }
    /* in a program for several threads of a CPU, rows of output pixels outermost, marked
     * parallel here (the parallel pass cannot see through the block's division): each
     * thread packs the rows of the input it wrote itself, the rows of output pixels its
     * blocks hold (ResNet-50's layer2.0 downsample: packed plane by plane on the calling
     * thread, it read 1.3 MB a run that the other core wrote, KILN_XCORE=2). Programs for
     * one thread keep the planes outermost. */
    bool rows = L->p->threads > 1 && L->target && L->target->kind == KN_TARGET_CPU;
    int vy = rows ? kl_for(L, d->oh) : -1;
    if (rows) L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    int vc = kl_for(L, K);
    if (!rows) vy = kl_for(L, d->oh);
    int vx = kl_for(L, d->ow);
    int vp = kl_decl(L, KN_I64, mad(L, kx_var(L, vy), d->ow, kx_var(L, vx)));
    kn_kx *blk = kx_bin(L, KX_DIV, kx_var(L, vp), kx_int(L, kb));
    kn_kx *col = kx_bin(L, KX_MOD, kx_var(L, vp), kx_int(L, kb));
    kn_kx *dst = mad(L, mad(L, blk, K, kx_var(L, vc)), kb, col);
    kn_kx *src =
        mad(L, kx_var(L, vc), d->h * d->w_,
            mad(L, kx_var(L, vy), d->sh * d->w_, kx_mul(L, kx_var(L, vx), kx_int(L, d->sw))));
    kl_store(L, bp, dst, kx_load(L, d->x, plus(L, src, xoff)));
    kl_end_n(L, 3);
}

/* Columns [col0, col0 + ncols) of x (K x P from xoff on, a convolution of stride 1)
 * packed into bp[c*kb + j], zero for j in [ncols, kb): one block of the packed B, the values
 * mm_pack_rt puts in block col0 / kb. A full block is nv vector copies a channel, and with
 * nxt (the first column of the block this task packs next) a prefetch of each 64-byte line
 * of that block's channel: a block reads only kb pixels of each of K planes, so when x is
 * not in L2 each block's loads waited on memory after the previous block's tiles
 * (MobileNetV2's 112x112 32 -> 16 projection, CPU time at one thread: 77.7 us before,
 * 74.5-94.1 packed per block, 69.6 with the prefetch; SqueezeNet's 8 kernels 297 -> 280
 * -> 281, ResNet-50's layer1 2,693 -> 2,626 -> 2,600). */
static void pw_pack_cols(kn_lower *L, const kn_contract *d, const kt_tile *T, kn_kbuf *bp,
                         kn_kx *col0, int64_t ncols, kn_kx *xoff, kn_kx *nxt) {
    int64_t K = d->c, P = d->oh * d->ow, kb = T->kb;
    if (ncols < kb) {
        int vc = kl_for(L, K), vj = kl_for(L, kb - ncols);
        kl_store(L, bp, kt_plus(L, mad(L, kx_var(L, vc), kb, kx_var(L, vj)), ncols),
                 kx_const(L, KN_F32, 0));
        kl_end_n(L, 2);
    }
    int vc = kl_for(L, K);
    kn_kx *c = kx_var(L, vc);
    if (ncols == kb) {
        for (int64_t l = 0; nxt && l < kb; l += 16) /* 64-byte lines */
            kl_prefetch(L, d->x, plus(L, mad(L, c, P, kt_plus(L, nxt, l)), xoff));
        for (int v = 0; v < T->nv; v++) {
            kn_kx *src = plus(L, mad(L, c, P, kt_plus(L, col0, v * T->lanes)), xoff);
            kl_store(L, bp, mad(L, c, kb, kx_int(L, v * T->lanes)),
                     kx_vload(L, d->x, src, T->lanes));
        }
    } else {
        int vj = kl_for(L, ncols);
        kn_kx *src = plus(L, mad(L, c, P, kx_add(L, col0, kx_var(L, vj))), xoff);
        kl_store(L, bp, mad(L, c, kb, kx_var(L, vj)), kx_load(L, d->x, src));
        kl_end(L);
    }
    kl_end(L);
}

/* Every full block of kb pixels, then the partial one, for output channels
 * [m0, m0 + rows). */
static void pw_blocks(kn_lower *L, const mm_geom *G, kt_tile *T, int rows, kn_kx *m0) {
    int64_t full = G->n / T->kb, tail = G->n % T->kb;
    if (full) {
        int vb = kl_for(L, full);
        mm_tile(L, G, T, rows, kx_var(L, vb), T->kb, m0);
        kl_end(L);
    }
    if (tail) mm_tile(L, G, T, rows, kx_int(L, full), (int)tail, m0);
}

/* A strided 1x1 convolution whose input (bytes) fits in half of L2 (512 KB when the
 * target does not say), and in 512 KB, stays with the convolution tiles: there the blocks
 * of output channels re-read it from L2, and the packing and the pixel tiles' partial
 * blocks (7x7 = 49 pixels in 4 vectors of 16) cost more than they save. At most 512 KB:
 * on the Intel Xeon VM (2 MB L2, read by "native") ResNet-50's layer4 downsample (800 KB
 * of input) took 20-30% more CPU time in the convolution tiles than packed, ResNet-18's
 * layer3 one (400 KB) 10-25% less (docs/benchmarks.md "The host's caches").
 * Nor where the target's vectors run in parts on narrower units (kn_target_fp_split) and
 * the packed form's vectors of pixels leave a fifth of their lanes or more empty (lanes
 * pixels a vector; ResNet-50's layer4 downsample, 49 pixels in 4 vectors of 16): there the
 * multiply-adds bound the kernel, and the convolution tiles (output channels in the lanes)
 * fill every lane. AMD EPYC VM (Zen 4, one 512-bit FMA a cycle, 1 MB L2), CPU time in the
 * whole model at one thread, 3 rounds alternated (docs/benchmarks.md "ResNet-50 and
 * SqueezeNet on Zen 4"): 2.69 ms packed, 2.39 in the convolution tiles. */
static bool pw_strided_packs(const kn_contract *d, const kn_target *t, int lanes) {
    int64_t l2 = kn_target_l2(t, 512 * 1024);
    int64_t fits = l2 / 2 < 512 * 1024 ? l2 / 2 : 512 * 1024;
    int64_t P = d->oh * d->ow, span = (P + lanes - 1) / lanes * lanes;
    if (kn_target_fp_split(t) && lanes > 1 && 5 * (span - P) >= span) return false;
    return d->c * d->h * d->w_ * 4 > fits;
}

/* Whether a pointwise convolution's tiles of output channels (tile_pointwise with its
 * tiles of rows outermost: fewer than PW_COLS_OUTER full blocks of pixels) prefetch the
 * next tile's rows of weights, a line an iteration of the reduction loop (mm_geom.apf; the
 * schedule's pf, 2 in a schedule file: not). The weights ([m][c], the next tile's rows one
 * run of rows x c floats) come from memory once a run, each tile's rows at its start,
 * when they are 256 KB or more (ResNet-50's 14x14 and 7x7 layers: 1-4 MB a kernel). On
 * CPUs, with 2 tiles of rows or more. Intel Xeon VM, CPU time at one thread, against
 * main's binary alternated: ResNet-50's six 14x14 256 -> 1024 kernels -6 to -19% in 3
 * rounds (its strided downsamples here too: 0 to -4%), the model within the noise;
 * SqueezeNet (its 512 -> 1000 classifier) -6.6%, 6 of 6 pairs faster (docs/benchmarks.md
 * "The GotoBLAS order"). */
static bool pw_apf(const kn_contract *d, const kt_tile *T, const kn_target *tg,
                   const kn_sched *ov) {
    return tg->kind == KN_TARGET_CPU && !(ov && ov->pf == 2) && is_const(d->w) &&
           d->m >= 2 * T->maxrows && d->m * d->c * 4 >= 256 * 1024 && d->c >= 64;
}

/* The 4 x 6 tile (96 pixels a block) in place of kt_widen's 6 x 4 for the pointwise
 * convolutions of at most 64 input channels whose pixel blocks run outermost (8 blocks of
 * 96 or more, stride 1): the two make as many multiply-adds per load (24 for 10), and each
 * output is the same sum, but with 64 steps a tile these kernels are a short reduction
 * between y's stores (and an epilogue operand's loads: a residual), and the 4 x 6 tile
 * stores 4 planes of y 384 bytes each where 6 x 4 stores 6 of 256. Intel Xeon VM, CPU time
 * at one thread, the same binary with and without (docs/benchmarks.md "ResNet-50's 1x1
 * convolutions"): ResNet-50's five 56x56 layers of 64 input channels 0.961 (geometric mean,
 * faster in 9 of 10 pairs; 12 of 15 in all); a lone 56x56 64 -> 256 layer with a residual
 * add -1.5% (3 of 3), without one no change; 28x28 128 -> 512 5-10% slower in 4 x 6 (so not
 * above 64 channels); SqueezeNet's 16-channel expansions mixed (so not at 32 or fewer). On
 * CPUs with 32 vector registers where kt_widen chose 6 x 4 and no schedule file sets the
 * tile, with 16 output channels or more (4 tiles of rows). */
static void pw_wide(kn_lower *L, const kn_contract *d, const kn_sched *ov, const kn_target *tg,
                    kt_tile *T) {
    int64_t P = d->oh * d->ow;
    /* the 6 x 4 tile over all the pixels as one partial block where kt_widen chose 8 x 3
     * because 4 vectors pass the pixels (49 to 63: ResNet-50's strided layer4 downsample,
     * 49 = 48 + 1, whose pixel of the partial block ran in a one-vector tile of 8 rows):
     * in ResNet-50 at one thread, schedule files alternated, 0.901 of 8 x 3's CPU time
     * (geometric mean, faster in 5 of 5 pairs) */
    if (tg->kind == KN_TARGET_CPU && !(ov && (ov->tile_rows || ov->tile_vecs)) && T->nv == 3 &&
        T->maxrows == 8 && kl_vector_registers(L) >= 32 && kt_reg_rows(L, 4) >= 6 &&
        P > 3 * T->lanes && P < 4 * T->lanes && d->m >= 4 * 6) {
        T->nv = 4;
        T->kb = T->kbl = 4 * T->lanes;
        T->maxrows = 6;
        return;
    }
    /* the 6 x 4 tile where kt_widen kept 8 x 2 for its smaller partial block of pixels, but
     * the pixels are few blocks (under PW_COLS_OUTER of 64, so the tiles of output channels
     * run outermost) and the output channels many (512 or more: the classifier of
     * SqueezeNet, 512 -> 1000 over 13x13 pixels, 2 blocks of 64 and one of 41 where 8 x 2
     * had 5 of 32 and one of 9): Intel Xeon VM, thread CPU time at one thread, schedule
     * files alternated, 1035-1102 us against 1211-1266 in 8 x 2 (3 of 3 rounds;
     * docs/benchmarks.md "SqueezeNet against ONNX Runtime, layer by layer") */
    if (tg->kind == KN_TARGET_CPU && !(ov && (ov->tile_rows || ov->tile_vecs)) && T->nv == 2 &&
        T->maxrows == 8 && kl_vector_registers(L) >= 32 && kt_reg_rows(L, 4) >= 6 &&
        P >= 4 * T->lanes && P < PW_COLS_OUTER * 4 * T->lanes && d->m >= 512) {
        T->nv = 4;
        T->kb = T->kbl = 4 * T->lanes;
        T->maxrows = 6;
        return;
    }
    if (tg->kind != KN_TARGET_CPU || (ov && (ov->tile_rows || ov->tile_vecs)) || T->nv != 4 ||
        T->maxrows != 6 || kl_vector_registers(L) < 32 || kt_reg_rows(L, 6) < 4 || d->c > 64 ||
        d->c <= 32 || d->sh != 1 || d->sw != 1 || P / (6 * T->lanes) < PW_COLS_OUTER || d->m < 16)
        return;
    T->nv = 6;
    T->kb = T->kbl = 6 * T->lanes;
    T->maxrows = 4;
}

static bool tile_pointwise(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                           const kn_target *tg, kt_tile *Tp) {
    bool inplace = tg->kind == KN_TARGET_MCU;
    bool strided = d->sh != 1 || d->sw != 1; /* packed by pw_pack_strided, never in place */
    if (!pw_suits(d, kl_lanes(L, KN_F32)) ||
        (strided && (inplace || !pw_strided_packs(d, tg, kl_lanes(L, KN_F32)))))
        return false;
    int64_t P = d->oh * d->ow, K = d->c, M = d->m;
    kt_tile T;
    if (!kt_choose(L, P, M, ov, false, false, &T)) return false;
    kt_widen(L, &T, P, M, false, ov);
    pw_wide(L, d, ov, tg, &T);
    *Tp = T;
    int64_t full = P / T.kb, tail = P % T.kb;
    mm_geom G = {.a = d->w, .y = d->y, .m = M, .k = K, .n = P, .d = d, .pw = true};
    /* a microcontroller has no cache for the packing to help and little RAM for its
     * copy of x: full blocks are read in place, only the partial one is packed */
    if (inplace) G.bx = d->x;
    /* pixel blocks outermost (CPUs): each task packs the block it computes into its
     * thread's copy of one block (see above). Not a strided x (ResNet's downsample): a
     * block's packing reads kb pixels of every input plane (2 rows at stride 2), and at
     * one thread that ran 7-14% slower than pw_pack_strided's pass plane by plane
     * (ResNet-50's layer2.0 downsample, CPU time 871-944 us against 813-844; with a
     * prefetch of the next block 875), though at two threads it took 1.4 MB a run off
     * the kernel's cross-core traffic (docs/benchmarks.md, "1x1 packing per task") */
    bool pertask = !inplace && !strided && full >= PW_COLS_OUTER;
    int64_t packed = inplace ? tail > 0 : full + (tail > 0);
    if (pertask) {
        G.bpk = kl_scratch_thread(L, KN_F32, K * T.kb);
        G.bone = true;
        G.ypf = M >= 2 * T.maxrows; /* a next tile of rows for most tiles */
    } else {
        G.bpk = packed ? kl_scratch(L, KN_F32, packed * K * T.kb) : NULL;
    }
    G.rinit = d->bias;
    kn_kx *b = NULL;
    if (d->n > 1) { /* one product per batch, through the same scratch */
        b = kx_var(L, kl_for(L, d->n));
        G.yoff = kx_mul(L, b, kx_int(L, M * P));
        G.bxoff = kx_mul(L, b, kx_int(L, K * P));
    }
    if (pertask) {
        kn_kx *xoff = b ? kx_mul(L, b, kx_int(L, K * P)) : NULL;
        int vb = kl_for(L, full);
        if (!b) L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL; /* see above */
        kn_kx *nxt = kx_bin(L, KX_MIN, kt_plus(L, kx_var(L, vb), 1), kx_int(L, full - 1));
        pw_pack_cols(L, d, &T, G.bpk, kx_mul(L, kx_var(L, vb), kx_int(L, T.kb)), T.kb, xoff,
                     kx_mul(L, nxt, kx_int(L, T.kb)));
        mm_block(L, &G, &T, kx_var(L, vb), T.kb);
        kl_end(L);
        if (tail) { /* on the calling thread, whose tiles of rows the parallel pass may
                       split: a shared scratch */
            mm_geom Gt = G;
            Gt.bpk = kl_scratch(L, KN_F32, K * T.kb);
            pw_pack_cols(L, d, &T, Gt.bpk, kx_int(L, full * T.kb), tail, xoff, NULL);
            mm_block(L, &Gt, &T, kx_int(L, full), (int)tail);
        }
        if (b) kl_end(L);
        return true;
    }
    /* x (a run-time B of K x P) packed as mm_pack_rt packs one */
    kn_contract bd = {.w = d->x, .K = K, .N = P, .alpha = 1};
    mm_geom Gp = G;
    Gp.d = &bd;
    if (strided)
        pw_pack_strided(L, d, &T, G.bpk, b ? kx_mul(L, b, kx_int(L, K * d->h * d->w_)) : NULL);
    else if (packed)
        mm_pack_rt(L, &Gp, &T, b ? kx_mul(L, b, kx_int(L, K * P)) : NULL, NULL);
    if (full >= PW_COLS_OUTER) {
        int vb = kl_for(L, full);
        if (!b) L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL; /* see above */
        mm_block(L, &G, &T, kx_var(L, vb), T.kb);
        kl_end(L);
        if (tail) mm_block(L, &G, &T, kx_int(L, full), (int)tail);
    } else {
        int64_t nt = M / T.maxrows, rem = M % T.maxrows;
        G.apf = Tp->pf = pw_apf(d, &T, tg, ov);
        if (nt) {
            int vt = kl_for(L, nt);
            pw_blocks(L, &G, &T, T.maxrows, kx_mul(L, kx_var(L, vt), kx_int(L, T.maxrows)));
            kl_end(L);
        }
        if (rem) pw_blocks(L, &G, &T, (int)rem, kx_int(L, nt * T.maxrows));
    }
    if (b) kl_end(L);
    return true;
}

/* The input of a strided 8-bit 1x1 convolution (ResNet's downsample) as the pixel tiles
 * read it, built once per run: words [c / 4][Pp] of 4 channels (kt_word), the word at
 * output pixel p = oy*ow + ox holding input pixel (oy*sh, ox*sw), the zero-point word past
 * P = oh*ow. conv_words would copy every input pixel, 4 for each one read at stride 2,
 * and the channel tiles' transposing store outweighed their 16 to 64 dot steps there. */
static kn_kbuf *pw_words_strided(kn_lower *L, const conv_geom *G, const kt_tile *T, int64_t Pp) {
    int64_t ng = G->c / 4, P = G->oh * G->ow;
    kn_kbuf *xw = kl_scratch(L, KN_I32, ng * Pp);
    if (Pp != P) {
        int vg = kl_for(L, ng), vj = kl_for(L, Pp - P);
        kl_store(L, xw, kt_plus(L, mad(L, kx_var(L, vg), Pp, kx_var(L, vj)), P), kt_zp_word(L, T));
        kl_end_n(L, 2);
    }
    /* on CPUs, rows of NCHW input at strides 2-4 in vectors of words, each of the 4 channels'
     * bytes one strided load (kx_vload_strided: LLVM loads the span and deinterleaves it,
     * vpermt2b), where the word took 4 byte loads and the shifts (ResNet-18's 64 -> 128
     * downsample: 12,544 words); the last vector of a row ends at its end, storing the words
     * it shares with the one before again, as conv_words does */
    int64_t lanes = T->lanes;
    while (lanes > 4 && lanes > G->ow) lanes /= 2;
    if (lanes >= 4 && lanes <= G->ow && G->sw >= 2 && G->sw <= 4 && G->xs[3] == 1 && L->target &&
        L->target->kind == KN_TARGET_CPU && kl_lanes(L, G->d->x->dtype) >= lanes) {
        int vg = kl_for(L, ng), vy = kl_for(L, G->oh);
        kn_kx *iy = kx_mul(L, kx_var(L, vy), kx_int(L, G->sh));
        int64_t nv = G->ow / lanes;
        for (int pass = 0; pass < 2; pass++) { /* whole vectors, then the overlapping one */
            if (pass && G->ow % lanes == 0) continue;
            int vj = pass ? -1 : kl_for(L, nv);
            kn_kx *ox =
                pass ? kx_int(L, G->ow - lanes) : kx_mul(L, kx_var(L, vj), kx_int(L, lanes));
            kn_kx *vals[4];
            for (int k = 0; k < 4; k++)
                vals[k] =
                    kx_vload_strided(L, G->d->x,
                                     conv_xat(L, G, kx_int(L, 0),
                                              kt_plus(L, kx_mul(L, kx_var(L, vg), kx_int(L, 4)), k),
                                              iy, kx_mul(L, ox, kx_int(L, G->sw))),
                                     (int)lanes, (int)G->sw);
            kl_store(L, xw, mad(L, kx_var(L, vg), Pp, mad(L, kx_var(L, vy), G->ow, ox)),
                     kt_word(L, T, vals, 4));
            if (!pass) kl_end(L);
        }
        kl_end_n(L, 2);
        return xw;
    }
    int vg = kl_for(L, ng), vy = kl_for(L, G->oh), vx = kl_for(L, G->ow);
    kn_kx *iy = kx_mul(L, kx_var(L, vy), kx_int(L, G->sh));
    kn_kx *ix = kx_mul(L, kx_var(L, vx), kx_int(L, G->sw));
    kn_kx *vals[4];
    for (int k = 0; k < 4; k++)
        vals[k] = kx_load(L, G->d->x,
                          conv_xat(L, G, kx_int(L, 0),
                                   kt_plus(L, kx_mul(L, kx_var(L, vg), kx_int(L, 4)), k), iy, ix));
    kl_store(L, xw, mad(L, kx_var(L, vg), Pp, mad(L, kx_var(L, vy), G->ow, kx_var(L, vx))),
             kt_word(L, T, vals, 4));
    kl_end_n(L, 3);
    return xw;
}

/* ---- integer pointwise convolutions: pixels along the lanes ----
 *
 * An 8-bit 1x1 convolution (no padding, one group) with a four-part dot product, as
 * tile_pointwise for floats: the tile's rows are output channels, its columns kb
 * consecutive pixels. The input is read as conv_words builds it ([c / 4][P] words of 4
 * channels, contiguous along the pixels; with a stride, as pw_words_strided gathers it), the
 * weights as one broadcast word of 4 channels per row and step ([m][c / 4], packed at compile
 * time), so each accumulator vector holds lanes pixels of one output channel: requantized with that
 * channel's scalar multiplier and stored as one vector of 8-bit values straight into y.
 * The channel tiles of tile_conv put 32 output channels in the lanes instead, which NCHW
 * stores P apart: their 8 x 32 tile went through a scratch and a transposing loop of
 * byte moves, which cost more than the dot products where the input has few channels
 * (MobileNetV2's expansions; docs/quantization.md). Needs at least one full block.
 * Where P is not a multiple of the lanes, the word rows are padded to whole vectors
 * (zero-point words) and the last vector of each row is stored lane by lane; that is
 * faster than the channel tiles only for expansions (m > c) on more than PW_PART_MIN
 * blocks: on MobileNetV2, 14x14 = 196 pixels 64 -> 384 and 96 -> 576 took 0.68-0.73 of
 * the channel tiles' time, while its 7x7 layers (49 pixels in 4 vectors) and the
 * projections (m < c, whose stores are fewer) ran slower. */
enum { PW_PART_MIN = 2 }; /* blocks of pixels: see tile_pointwise_int */

static bool tile_pointwise_int(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                               const kn_target *tg, kt_tile *Tp) {
    if (!tg || tg->kind != KN_TARGET_CPU || d->kind != KN_CONTRACT_CONV || d->group != 1 ||
        d->kh != 1 || d->kw != 1 || d->ph || d->pw || d->peh || d->pew || d->n != 1 ||
        !kn_contract_is_int(d) || !d->yscale || !kn_contract_nchw(d) || d->c % 4 ||
        !int_ok(d, d->c))
        return false;
    int64_t P = d->oh * d->ow, M = d->m, ng = d->c / 4;
    kt_tile T;
    if (!kt_choose(L, P, M, ov, true, false, &T) || T.lanes < 2 || P < T.kb ||
        (P % T.lanes && (M <= d->c || P <= PW_PART_MIN * T.kb)))
        return false;
    int_dot(tg, d, ov, &T);
    if (!T.dot || T.parts != 4 || T.xzrt) return false;
    *Tp = T;
    conv_geom G;
    conv_geometry(d, &G);
    G.T = &T;
    conv_src src = {&G, 0};
    /* the word rows padded to whole vectors (the zero-point word past P): the image as
     * one row of P pixels, Pp wide */
    int64_t Pp = (P + T.lanes - 1) / T.lanes * T.lanes;
    bool strided = d->sh != 1 || d->sw != 1; /* words gathered by pw_words_strided */
    if (Pp != P && !strided) {
        G.h = G.oh = G.hp = 1;
        G.w = G.ow = P;
        G.wp = Pp;
    }
    /* weights [m][g] and each output channel's init (conv_b) */
    kn_kbuf *wa, *init;
    conv_word_tables(L, &src, M, ng, conv_wdot, &wa, &init);
    kt_rq rq;
    kt_int_tables_padded(L, d, T.kb, &rq);
    kn_kbuf *xw =
        strided ? pw_words_strided(L, &G, &T, Pp) : conv_words(L, &G, &T, d->x); /* [g][Pp] */
    /* tail: whole vectors, the last one partial when Pp > P */
    int64_t full = (Pp - (Pp > P ? T.lanes : 0)) / T.kb, tail = Pp - full * T.kb;
    for (int part = 0; part < 2; part++) {
        int nv = part ? (int)(tail / T.lanes) : T.nv;
        if (part ? !tail : !full) continue;
        kn_kx *blk;
        if (part) {
            blk = kx_int(L, full);
        } else {
            int vb = kl_for(L, full);
            L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL; /* disjoint columns of y */
            blk = kx_var(L, vb);
        }
        kn_kx *p0 = kx_mul(L, blk, kx_int(L, T.kb));
        int64_t nt = M / T.maxrows, rem = M % T.maxrows;
        for (int rt = 0; rt < 2; rt++) {
            int rows = rt ? (int)rem : T.maxrows;
            if (rt ? !rem : !nt) continue;
            kn_kx *m0;
            if (rt) {
                m0 = kx_int(L, nt * T.maxrows);
            } else {
                int vt = kl_for(L, nt);
                m0 = kx_mul(L, kx_var(L, vt), kx_int(L, T.maxrows));
            }
            int acc[KT_MAX_ROWS][KT_MAX_VNV];
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < nv; v++)
                    acc[r][v] =
                        kl_decl_vec(L, KN_I32, T.lanes, kx_load(L, init, kt_plus(L, m0, r)));
            int vg = kl_for(L, ng);
            int xv[KT_MAX_VNV];
            for (int v = 0; v < nv; v++)
                xv[v] = kl_decl_vec(L, KN_I32, T.lanes,
                                    kx_vload(L, xw,
                                             kt_plus(L, mad(L, kx_var(L, vg), Pp, p0), v * T.lanes),
                                             T.lanes));
            for (int r = 0; r < rows; r++) {
                int wr = kl_decl(L, KN_I32,
                                 kx_load(L, wa, mad(L, kt_plus(L, m0, r), ng, kx_var(L, vg))));
                for (int v = 0; v < nv; v++)
                    kl_set(L, acc[r][v],
                           kx_dot(L, T.dot, kx_var(L, acc[r][v]), kx_var(L, xv[v]), kx_var(L, wr)));
            }
            kl_end(L); /* g */
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < nv; v++) {
                    kn_kx *val =
                        kt_int_store_vec(L, d, &rq, kx_var(L, acc[r][v]), kt_plus(L, m0, r), 1);
                    kn_kx *yi = kt_plus(L, mad(L, kt_plus(L, m0, r), P, p0), v * T.lanes);
                    int64_t valid = P - (full * T.kb + (int64_t)v * T.lanes); /* in the tail */
                    if (!part || valid >= T.lanes) {
                        kl_store(L, d->y, yi, val);
                        continue;
                    }
                    int vv = kl_decl_vec(L, d->y->dtype, T.lanes, val); /* the partial vector */
                    for (int l = 0; l < valid; l++)
                        kl_store(L, d->y, kt_plus(L, yi, l), kx_lane(L, vv, l));
                }
            if (!rt) kl_end(L); /* tiles of channels */
        }
        if (!part) kl_end(L); /* blocks */
    }
    return true;
}

/* ---- integer stem convolutions: pixels along the lanes ----
 *
 * An 8-bit convolution over at most 4 input channels with a window (every CNN's first
 * layer: 3 colour channels, 7x7 or 3x3, stride 2) reduces over one word of channels per
 * tap only: ResNet-18's stem has 49 dot steps a tile, where the channel tiles of
 * tile_conv spend as much again on the loop that transposes their [rows][32 channels]
 * byte scratch into NCHW (0.13 of its 0.43 ms, measured by leaving that loop out). Here
 * the lanes are output pixels along a row instead, as in tile_pointwise_int: each
 * accumulator vector holds `lanes` consecutive outputs of one channel, is requantized
 * with that channel's scalar multiplier and stored as one vector of 8-bit values
 * straight into y. The tile is R output channels x NV vectors of one output row; a step
 * (a kernel tap) loads NV vectors of input words and broadcasts one weight word per
 * channel (packed [m][tap], conv_wdot). The input is copied once per run into words of
 * its channels (kt_word, as conv_words builds them) whose padded rows are split into
 * their `sw` column phases, [hp][sw][wph] (padded column c at phase c % sw, index
 * c / sw), so the taps of consecutive outputs, sw columns apart, are consecutive words;
 * the pads, and the words past each phase's last column that the last vector of a row
 * reads, hold the zero-point word, whose products the init's correction counted on
 * (conv_b). Outputs past ow in that last vector are not stored. CPUs with vectors only;
 * one batch; dilation 1. The same contraction and dot product as the channel tiles (a
 * schedule, not a second lowering): only the loop order and the operand layouts differ.
 * Where the channels leave parts of those words empty (3 of 4), a kernel row's (channel,
 * column) values are grouped into words instead (kt_tile.ckx, stem_merged below). */
enum { STEM_INT_MAX_C = 4, STEM_INT_MAX_NV = 8 };

/* Merged words (kt_tile.ckx): the reduction of a kernel row grouped over its (input
 * channel, kernel column) values, t = kx * c + ch, in words of 4 (conv_wckx), where a word
 * of the channels a tap left a part empty: 3 channels x 7 columns are 6 words a row, not
 * 7 (ResNet-18's stem: 42 dot steps an output, not 49). Each output column needs its own
 * words (its window's columns), so they are built once per run from the phase-split
 * channel words xw ([hp][sw][wph]) into [hp][nq][owp] (owp = the vectors' columns): part
 * k of word q of output column ox is byte ch of the channel word of padded column
 * ox * sw + kx, which sits at phase kx % sw, index ox + kx / sw: for a vector of columns
 * a vector load, its bytes moved into place by a shift and a mask, runs of a word's parts
 * from one column at once. Parts past the row's kw * c values are 0 (their weights are
 * 0). The pads' bytes are the zero point's, as in the channel words. */
static kn_kbuf *stem_merged(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kbuf *xw,
                            int64_t wph, int64_t nq, int64_t owp) {
    int lanes = T->lanes;
    kn_kbuf *xm = kl_scratch(L, KN_I32, G->hp * nq * owp);
    int vr = kl_for(L, G->hp), vv = kl_for(L, owp / lanes);
    kn_kx *ox = kx_mul(L, kx_var(L, vv), kx_int(L, lanes));
    for (int64_t q = 0; q < nq; q++) {
        kn_kx *word = NULL;
        for (int k = 0; k < 4;) {
            int64_t t = q * 4 + k, kx = t / G->c, ch = t % G->c;
            if (kx >= G->kw) break;
            int run = 1; /* parts k .. k + run - 1: bytes ch .. of the same column's word */
            while (k + run < 4 && (t + run) / G->c == kx) run++;
            kn_kx *at = kx_add(L,
                               mad(L, mad(L, kx_var(L, vr), G->sw, kx_int(L, kx % G->sw)), wph,
                                   kx_int(L, kx / G->sw)),
                               ox);
            kn_kx *cw = kx_cast(L, KN_U32, kx_vload(L, xw, at, lanes));
            if (ch) cw = kx_bin(L, KX_SHR, cw, kx_const(L, KN_U32, 8.0 * (double)ch));
            if (ch + run < 4)
                cw = kx_bin(L, KX_AND, cw, kx_const(L, KN_U32, (double)((1u << (8 * run)) - 1)));
            if (k) cw = kx_bin(L, KX_SHL, cw, kx_const(L, KN_U32, 8.0 * k));
            word = word ? kx_bin(L, KX_OR, word, cw) : cw;
            k += run;
        }
        kn_kx *wi = mad(L, mad(L, kx_var(L, vr), nq, kx_int(L, q)), owp, ox);
        kl_store(L, xm, wi, kx_cast(L, KN_I32, word));
    }
    kl_end_n(L, 2);
    return xm;
}

/* One run of pad words of the stem's phase-split copy: [at, at + n). */
static void stem_pad_run(kn_lower *L, const kt_tile *T, kn_kbuf *xw, kn_kx *at, int64_t n) {
    if (n <= 0) return;
    int v = kl_for(L, n);
    kl_store(L, xw, kx_add(L, at, kx_var(L, v)), kt_zp_word(L, T));
    kl_end(L);
}

/* The pads of tile_stem_int's phase-split words [hp][sw][wph]: input row vh's phase p is
 * written at sub-row (vh + ph) * sw + p, columns [jlo_p, jhi_p) (kt_phase_inside), by the
 * copy after this; every other word is a zero-point word, stored here as the runs
 * between those interiors (the rows above, the pads between one phase's columns and the
 * next one's, the rows below), not as a fill of the whole copy that the copy then
 * overwrites (ResNet-18's conv1: 210 KB a run, 12 KB of them pads). */
static void stem_words_border(kn_lower *L, const conv_geom *G, const kt_tile *T, kn_kbuf *xw,
                              int64_t wph) {
    enum { MAX_PHASES = 16 };
    int64_t sw = G->sw, lo[MAX_PHASES], hi[MAX_PHASES], pp[MAX_PHASES], np = 0;
    for (int64_t p = 0; p < sw && sw <= MAX_PHASES; p++) {
        int64_t jlo, jhi;
        kt_phase_inside(p, sw, G->pw, G->w, wph, &jlo, &jhi);
        if (jhi > jlo) pp[np] = p, lo[np] = jlo, hi[np] = jhi, np++;
    }
    /* the i-th nonempty phase's interior in padded row `row` */
#define B(row, i) (((row)*sw + pp[i]) * wph + lo[i])
#define E(row, i) (((row)*sw + pp[i]) * wph + hi[i])
    if (!np) { /* (or more phases than kept here) the whole copy */
        stem_pad_run(L, T, xw, kx_int(L, 0), xw->numel);
        return;
    }
    stem_pad_run(L, T, xw, kx_int(L, 0), B(G->ph, 0));
    if (G->h > 1) { /* rows 0 .. h - 2: each phase's run to the next interior */
        int vh = kl_for(L, G->h - 1);
        kn_kx *row = kt_plus(L, kx_var(L, vh), G->ph);
        for (int64_t i = 0; i < np; i++) {
            int64_t e = E(0, i), b = i + 1 < np ? B(0, i + 1) : B(1, 0);
            stem_pad_run(L, T, xw, kt_plus(L, kx_mul(L, row, kx_int(L, sw * wph)), e), b - e);
        }
        kl_end(L);
    }
    int64_t last = G->ph + G->h - 1; /* the last input row: its runs, then the rows below */
    for (int64_t i = 0; i < np; i++) {
        int64_t e = E(last, i), b = i + 1 < np ? B(last, i + 1) : xw->numel;
        stem_pad_run(L, T, xw, kx_int(L, e), b - e);
    }
#undef B
#undef E
}

static bool tile_stem_int(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                          const kn_target *tg, kt_tile *Tp) {
    if (!tg || tg->kind != KN_TARGET_CPU || d->kind != KN_CONTRACT_CONV || d->group != 1 ||
        d->c > STEM_INT_MAX_C || d->kh * d->kw < 2 || d->dh != 1 || d->dw != 1 || d->n != 1 ||
        d->nsp != 2 || d->ph < 0 || d->pw < 0 || d->peh < 0 || d->pew < 0 ||
        !kn_contract_is_int(d) || !d->yscale || !kn_contract_nchw(d) ||
        !int_ok(d, d->c * d->kh * d->kw))
        return false;
    kt_tile T;
    memset(&T, 0, sizeof T);
    T.t = KN_I32;
    T.lanes = kl_lanes(L, KN_I32);
    if (T.lanes < 4 || d->ow < T.lanes) return false;
    int_dot(tg, d, ov, &T);
    if (!T.dot || T.parts != 4 || T.xzrt) return false;
    conv_geom G;
    conv_geometry(d, &G);
    G.T = &T;
    /* NV vectors of a row (balanced over its nvec), R channels: NV inputs and R x NV
     * accumulators in the vector registers, and a broadcast weight */
    int regs = kl_vector_registers(L);
    int64_t nvec = (G.ow + T.lanes - 1) / T.lanes;
    int64_t nv = (regs - 1) / 4;
    if (ov && ov->tile_vecs) nv = ov->tile_vecs;
    nv = nv < 1 ? 1 : nv > STEM_INT_MAX_NV ? STEM_INT_MAX_NV : nv;
    nv = nv > nvec ? nvec : nv;
    int64_t ngrp = (nvec + nv - 1) / nv;
    nv = (nvec + ngrp - 1) / ngrp;
    int64_t R = (regs - nv - 1) / nv;
    if (ov && ov->tile_rows) R = ov->tile_rows;
    R = R < 1 ? 1 : R > KT_MAX_ROWS ? KT_MAX_ROWS : R;
    R = R > G.m ? G.m : R;
    T.nv = (int)nv, T.kb = T.kbl = (int)nv * T.lanes, T.maxrows = (int)R;
    /* merged words (stem_merged) where they are fewer than a word of channels a tap */
    int64_t nq = conv_ckx_words(&G);
    T.ckx = nq < G.kw * ((G.c + 3) / 4) && !(ov && ov->split && ov->split != 5);
    *Tp = T;
    /* weights [m][tap] (one word of the channels a tap), or merged [m][ky][q], and each
     * channel's init */
    conv_src src = {&G, 0};
    int64_t M = G.m, taps = G.kh * (T.ckx ? nq : G.kw);
    kn_kbuf *wa, *init;
    conv_word_tables(L, &src, M, taps, T.ckx ? conv_wckx : conv_wdot, &wa, &init);
    kt_rq rq;
    kt_int_tables_padded(L, d, T.lanes, &rq);
    /* the phase-split words: [hp][sw][wph] */
    int64_t sw = G.sw, wph = nvec * T.lanes + (G.kw - 1) / sw, need = (G.wp - 1) / sw + 1;
    wph = wph > need ? wph : need;
    kn_kbuf *xw = kl_scratch(L, KN_I32, G.hp * sw * wph);
    stem_words_border(L, &G, &T, xw, wph);
    int vh = kl_for(L, G.h);
    for (int64_t p = 0; p < sw; p++) {
        int64_t jlo, jhi;
        kt_phase_inside(p, sw, G.pw, G.w, wph, &jlo, &jhi);
        if (jhi <= jlo) continue;
        int vj = kl_for(L, jhi - jlo);
        kn_kx *j = kt_plus(L, kx_var(L, vj), jlo);
        kn_kx *ix = kt_plus(L, kx_mul(L, j, kx_int(L, sw)), p - G.pw);
        kn_kx *vals[4];
        for (int k = 0; k < G.c; k++)
            vals[k] =
                kx_load(L, d->x, conv_xat(L, &G, kx_int(L, 0), kx_int(L, k), kx_var(L, vh), ix));
        kn_kx *row = kt_plus(L, kx_mul(L, kx_var(L, vh), kx_int(L, sw)), G.ph * sw + p);
        kl_store(L, xw, mad(L, row, wph, j), kt_word(L, &T, vals, (int)G.c));
        kl_end(L);
    }
    kl_end(L);
    kn_kbuf *xm = T.ckx ? stem_merged(L, &G, &T, xw, wph, nq, nvec * T.lanes) : NULL;
    /* the tiles: for each output row (parallel: rows of y are disjoint), channel tiles,
     * groups of vectors */
    int voy = kl_for(L, G.oh);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    kn_kx *oy = kx_var(L, voy);
    /* whole vectors in groups of nv; the rest (and a partial last vector) in the tail */
    int64_t full = G.ow / T.lanes / nv, vtail = nvec - full * nv, nt = M / R, rem = M % R;
    for (int rt = 0; rt < 2; rt++) {
        int rows = rt ? (int)rem : (int)R;
        if (rt ? !rem : !nt) continue;
        kn_kx *m0 = rt ? kx_int(L, nt * R) : kx_mul(L, kx_var(L, kl_for(L, nt)), kx_int(L, R));
        for (int part = 0; part < 2; part++) {
            int nvp = part ? (int)vtail : (int)nv;
            if (part ? !vtail : !full) continue;
            kn_kx *v0 =
                part ? kx_int(L, full * nv) : kx_mul(L, kx_var(L, kl_for(L, full)), kx_int(L, nv));
            kn_kx *ox0 = kx_mul(L, v0, kx_int(L, T.lanes)); /* first output column */
            int acc[KT_MAX_ROWS][STEM_INT_MAX_NV];
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < nvp; v++)
                    acc[r][v] =
                        kl_decl_vec(L, KN_I32, T.lanes, kx_load(L, init, kt_plus(L, m0, r)));
            int vky = kl_for(L, G.kh), vkx = kl_for(L, T.ckx ? nq : G.kw);
            kn_kx *kx = kx_var(L, vkx);
            int vx;
            if (T.ckx) { /* merged words [padded row oy*sh + ky][q][ox] */
                kn_kx *row = mad(L, oy, G.sh, kx_var(L, vky));
                vx = kl_decl(L, KN_I64, mad(L, mad(L, row, nq, kx), nvec * T.lanes, ox0));
            } else { /* padded row oy*sh + ky, phase kx % sw, index ox + kx / sw */
                kn_kx *row = mad(L, mad(L, oy, G.sh, kx_var(L, vky)), sw,
                                 kx_bin(L, KX_MOD, kx, kx_int(L, sw)));
                vx =
                    kl_decl(L, KN_I64,
                            kx_add(L, mad(L, row, wph, kx_bin(L, KX_DIV, kx, kx_int(L, sw))), ox0));
            }
            int xv[STEM_INT_MAX_NV];
            for (int v = 0; v < nvp; v++)
                xv[v] = kl_decl_vec(
                    L, KN_I32, T.lanes,
                    kx_vload(L, T.ckx ? xm : xw, kt_plus(L, kx_var(L, vx), v * T.lanes), T.lanes));
            kn_kx *tap = mad(L, kx_var(L, vky), T.ckx ? nq : G.kw, kx);
            for (int r = 0; r < rows; r++) {
                int wr = kl_decl(L, KN_I32, kx_load(L, wa, mad(L, kt_plus(L, m0, r), taps, tap)));
                for (int v = 0; v < nvp; v++)
                    kl_set(L, acc[r][v],
                           kx_dot(L, T.dot, kx_var(L, acc[r][v]), kx_var(L, xv[v]), kx_var(L, wr)));
            }
            kl_end_n(L, 2); /* ky, kx */
            for (int r = 0; r < rows; r++)
                for (int v = 0; v < nvp; v++) {
                    kn_kx *val =
                        kt_int_store_vec(L, d, &rq, kx_var(L, acc[r][v]), kt_plus(L, m0, r), 1);
                    kn_kx *yi = kt_plus(L, mad(L, mad(L, kt_plus(L, m0, r), G.oh, oy), G.ow, ox0),
                                        v * T.lanes);
                    /* the tail's last vector may end past the row: its outputs past ow
                     * are not stored */
                    int64_t valid = part ? G.ow - (full * nv + v) * T.lanes : T.lanes;
                    if (valid >= T.lanes) {
                        kl_store(L, d->y, yi, val);
                        continue;
                    }
                    int vv = kl_decl_vec(L, d->y->dtype, T.lanes, val); /* the partial vector */
                    for (int l = 0; l < valid; l++)
                        kl_store(L, d->y, kt_plus(L, yi, l), kx_lane(L, vv, l));
                }
            if (!part) kl_end(L); /* groups of vectors */
        }
        if (!rt) kl_end(L); /* channel tiles */
    }
    kl_end(L); /* oy */
    return true;
}

/* ---- integer stems writing channels-last: a kernel row's bytes as channels ----
 *
 * tile_stem_int's pixel tiles store rows of one channel (NCHW y only). A stem whose
 * output goes channels-last (ResNet's, res_channels_last in passes/layout.c) takes the
 * channel tiles of tile_conv with their direct stores; over its input's words of c < 4
 * channels a tap they spend kh * kw dot steps an output (ResNet-18's conv1: 49), a
 * quarter of each word empty. Here the input is first copied, transposed, into a padded
 * channels-last byte image [hp][wp][c] (+ slack), where one kernel row of a window is
 * kw * c consecutive bytes: so the convolution is run as another one over that copy,
 * whose "channels" are those bytes rounded up to words, ckw = ceil(kw * c / 4) * 4 (24),
 * with a kh x 1 kernel, no padding, the same strides, and a column stride of c bytes
 * (adjacent columns' channels overlap in memory, which a read does not mind): ResNet-18's
 * conv1 then takes 7 x 6 = 42 dot steps an output, each word one unaligned load (the
 * channel tiles' channels-last x read in place). Its packed weights are the original
 * ones reordered, t = kx * c + ch, and past kw * c the weight zero point (a product of
 * 0, so the init and its zero-point correction are unchanged). The bytes past the last
 * row's end that the last window reads are the slack's, times weight 0. Every value is
 * the same integer dot as the channel tiles', so the outputs are bit-identical. A
 * schedule's split other than 5 (merged words) keeps the channel tiles' words. */
enum { STEM_CL_MAX_C = 3 };

typedef struct stem_cl_w {
    const kn_contract *d;
    int64_t ckw;
} stem_cl_w;

static void stem_cl_wfill(const void *ctx, void *data) {
    const stem_cl_w *A = ctx;
    const kn_contract *d = A->d;
    for (int64_t oc = 0; oc < d->m; oc++)
        for (int64_t t = 0; t < A->ckw; t++)
            for (int64_t ky = 0; ky < d->kh; ky++) {
                int64_t kx = t / d->c, ch = t % d->c, at = (oc * A->ckw + t) * d->kh + ky;
                double v = kx < d->kw ? cval(d->w, ((oc * d->c + ch) * d->kh + ky) * d->kw + kx)
                                      : cval(d->wz, oc);
                kn_store_f64(data, d->w->dtype, (size_t)at, v);
            }
}

/* The model-input QuantizeLinear computed in the stem's copy (#12, r18in). Where the stem's
 * 8-bit x is made by a per-tensor QuantizeLinear (x = saturate(rint(xf / s) + z), f32 xf and
 * s, u8 z, the lowering's generic nest: lower_quantize in ir/lower/quant.c) of the same
 * shape, and nothing else reads x, the transposing copy quantizes xf itself with the same
 * expression (the float input read once, x neither written nor read: one pass over memory
 * less) and the QuantizeLinear's kernel is emptied, as the sescale pass empties the Mul it
 * folds. Its kernel index and buffers in *Q (Q->k = -1: none). xf must not be written by the
 * kernels between (a graph input never is). */
typedef struct stem_qin {
    int k;
    kn_kbuf *xf, *s, *z;
} stem_qin;

static bool stem_cl_qin(const kn_lower *L, const kn_contract *d, stem_qin *Q) {
    kn_kprog *p = L->p;
    Q->k = -1;
    if (!p || d->x->kind != KB_TEMP || d->x->rank != 4) return false;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    int k = -1;
    bool ok = true;
    for (int j = 0; j < p->nkernels && ok; j++) { /* one writer before the stem, no reader */
        if (j == L->kidx) continue;
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[j]->body, use);
        if (!use[d->x->id]) continue;
        ok = use[d->x->id] == 2 && k < 0 && j < L->kidx;
        k = j;
    }
    const kn_node *n = ok && k >= 0 ? p->kernels[k]->node : NULL;
    ok = n && n->op == KN_OP_QUANTIZELINEAR && n->nin == 3 && n->nout == 1 &&
         !kn_node_attr(n, "block_size");
    Q->xf = Q->s = Q->z = NULL;
    if (ok) { /* its buffers: reads xf, s and z, writes x only */
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[k]->body, use);
        for (int b = 0; b < p->nbufs && ok; b++) {
            kn_kbuf *B = p->bufs[b];
            if (!use[b] || B == d->x) continue;
            if (use[b] != 1)
                ok = false;
            else if (B->dtype == KN_F32 && B->rank == 4 && !Q->xf &&
                     !memcmp(B->dims, d->x->dims, sizeof(int64_t) * 4))
                Q->xf = B;
            else if (B->dtype == KN_F32 && B->numel == 1 && is_const(B) && !Q->s)
                Q->s = B;
            else if (B->dtype == KN_U8 && B->numel == 1 && is_const(B) && !Q->z)
                Q->z = B;
            else
                ok = false;
        }
        ok = ok && Q->xf && Q->s && Q->z;
    }
    for (int j = k + 1; ok && j < L->kidx; j++) { /* xf not written in between */
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[j]->body, use);
        ok = !(use[Q->xf->id] & 2);
    }
    free(use);
    if (ok) Q->k = k;
    return ok;
}

static bool tile_stem_cl(kn_lower *L, const kn_contract *d, const kn_sched *ov, const kn_target *tg,
                         kt_tile *Tp) {
    int64_t xs[4], ys[4];
    if (!tg || tg->kind != KN_TARGET_CPU || d->kind != KN_CONTRACT_CONV || d->group != 1 ||
        d->nsp != 2 || d->n != 1 || d->c > STEM_CL_MAX_C || d->kw < 2 || d->dh != 1 || d->dw != 1 ||
        d->ph < 0 || d->pw < 0 || d->peh < 0 || d->pew < 0 || !kn_contract_is_int(d) ||
        d->x->dtype != KN_U8 || !d->yscale || !d->xz || !is_const(d->xz) || d->xz->numel != 1 ||
        !is_const(d->w) || (ov && ov->split && ov->split != 5) ||
        kn_dtype_get(d->w->dtype)->size != 1 || !int_ok(d, d->c * d->kh * d->kw))
        return false;
    kn_contract_strides(d, xs, ys);
    if (xs[3] != 1 || xs[2] != d->w_ || xs[1] != d->h * d->w_ || ys[1] != 1 || ys[3] != d->m ||
        ys[2] != d->ow * d->m)
        return false; /* NCHW x, channels-last y */
    kt_tile T;
    memset(&T, 0, sizeof T);
    T.lanes = 4;
    int_dot(tg, d, ov, &T);
    if (!T.dot || T.parts != 4 || T.xoff || T.xzrt) return false;
    int64_t c = d->c, ckw = (d->kw * c + 3) / 4 * 4;
    if (ckw >= d->kw * 4) return false; /* no word saved */
    int64_t hp = d->h + d->ph + d->peh, wp = d->w_ + d->pw + d->pew, img = hp * wp * c;
    /* the copy: pads (the zero point) around the transposed input, and slack for the
     * last window's word past the image */
    kt_tile Tc; /* what tile_conv would refuse, before any statement is built */
    if (!kt_choose(L, d->m, d->ow, ov, true, false, &Tc)) return false;
    kn_kbuf *xp = kl_scratch(L, KN_U8, img + ckw - d->kw * c);
    stem_cl_w A = {d, ckw};
    kn_contract vd = *d;
    vd.x = xp;
    vd.w = kl_table_fill(L, d->w->dtype, d->m * ckw * d->kh, stem_cl_wfill, &A);
    vd.c = ckw, vd.kw = 1, vd.dw = 1;
    vd.h = hp, vd.w_ = wp - d->kw + 1;
    vd.ph = vd.pw = vd.peh = vd.pew = 0;
    memcpy(vd.xs, (int64_t[4]){img, 1, wp * c, c}, sizeof vd.xs);
    memcpy(vd.ys, ys, sizeof vd.ys);
    if (!int_ok(&vd, ckw * d->kh)) return false; /* (the bound of more steps, all 0 past kw * c) */
    int vz = kl_decl(L, KN_U8, kx_load(L, d->xz, kx_int(L, 0)));
    int64_t head = (d->ph * wp + d->pw) * c, mid = (wp - d->w_) * c;
    int64_t tail0 = ((d->ph + d->h - 1) * wp + d->pw + d->w_) * c;
    if (head > 0) {
        int v = kl_for(L, head);
        kl_store(L, xp, kx_var(L, v), kx_var(L, vz));
        kl_end(L);
    }
    if (d->h > 1 && mid > 0) {
        int vr = kl_for(L, d->h - 1), vk = kl_for(L, mid);
        kn_kx *at = mad(L, kt_plus(L, kx_var(L, vr), d->ph), wp * c, kx_var(L, vk));
        kl_store(L, xp, kt_plus(L, at, (d->pw + d->w_) * c), kx_var(L, vz));
        kl_end_n(L, 2);
    }
    if (xp->numel > tail0) {
        int v = kl_for(L, xp->numel - tail0);
        kl_store(L, xp, kt_plus(L, kx_var(L, v), tail0), kx_var(L, vz));
        kl_end(L);
    }
    stem_qin Q;
    kn_kx *sv = NULL, *zv = NULL;
    if (stem_cl_qin(L, d, &Q)) { /* as lower_quantize reads them: once, before the loops */
        sv = kx_var(L, kl_decl(L, KN_F32, kx_cast(L, KN_F32, kx_load(L, Q.s, kx_int(L, 0)))));
        zv = kx_var(L, kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, Q.z, kx_int(L, 0)))));
    }
    int vh = kl_for(L, d->h), vw = kl_for(L, d->w_);
    kn_kx *dst =
        mad(L, mad(L, kt_plus(L, kx_var(L, vh), d->ph), wp, kt_plus(L, kx_var(L, vw), d->pw)), c,
            kx_int(L, 0));
    for (int64_t ch = 0; ch < c; ch++) {
        kn_kx *at = mad(L, mad(L, kx_int(L, ch), d->h, kx_var(L, vh)), d->w_, kx_var(L, vw));
        kn_kx *v =
            Q.k < 0 ? kx_load(L, d->x, at)
                    : kl_requant(L, kx_bin(L, KX_DIV, kx_cast(L, KN_F32, kx_load(L, Q.xf, at)), sv),
                                 zv, d->x->dtype);
        kl_store(L, xp, kt_plus(L, dst, ch), v);
    }
    kl_end_n(L, 2);
    if (Q.k >= 0) kl_builder_destroy(kl_builder_rewrite(L->cx, L->p, Q.k)); /* nothing left */
    /* (what it could refuse was checked above: statements are built) */
    bool ok = tile_conv(L, &vd, ov, 0, tg, false, Tp);
    KN_ASSERT(ok);
    Tp->ckx = true; /* merged words: the schedule's split=5, as tile_stem_int's */
    return true;
}

/* ---- integer stems on SMLAD microcontrollers: merged pairs, rows built per output row ----
 *
 * The M4's stems take the split words of tile_conv (a word of 3 channels and a 0 a tap,
 * split into (c0, c2) and (c1, 0): a quarter of the SMLADs multiply the 0). Here the
 * reduction of a kernel row is grouped over its (input channel, kernel column) values
 * instead, t = kx * C + c, two to a word (the merged words of tile_stem_int with the
 * s16x2 dot's 16-bit parts): 3 channels x 3 columns are 5 SMLADs a row, not 6, and the
 * words need no unpacking. With sw * C even those pairs are the padded input row itself
 * laid out channels-last as 16-bit halves: word s holds values 2s and 2s + 1 of the row
 * (padded column p / C, channel p % C), and output column ox's word q is word
 * ox * sw * C / 2 + q. Only the kh padded rows of the output row being computed are
 * held (a scratch of kh rows, rebuilt per output row, where the split words copied the
 * whole padded input: MobileNetV1's stem 37,636 -> 1,764 bytes), each built from the
 * input's bytes in periods of lcm(C, 2) values, the pads' values the zero point (whose
 * products the init's correction counts, conv_b). Tiles of 2 output pixels x `mt`
 * output channels (weights [mblk][ky][q][mt], conv_wckx, zero past m), each accumulator
 * requantized and stored into y. */
enum { SP_UNROLL_WORDS = 16 }; /* the kernel rows unrolled up to these words a tile */

/* Whether every block of output channels is unrolled inside the tiles of pixels
 * (sp_blocks: their weights at constant offsets of one kept pointer, their input words
 * kept loads of the scratch, each tile's words read for each block) rather than each
 * block over all the tiles (whose weights, invariant in the loop over the tiles, GCC 12
 * hoists and spills to the stack: one LDR a word from there where the table is read by
 * LDRD): at most SP_BLOCKS blocks, all of the channels. The stems on the M4
 * (fw_profile.sh): MobileNetV1's (8 channels, 4 blocks of 2) 798.3 -> 771.3 K with the
 * blocks inside and kept weights (not unrolled: 854.6 K; 2 x 3 tiles 786.0 K, 3 x 2
 * 796.6 K, 4 x 2 814.7 K, 1 x 4 831.2 K, 2 x 4 893.8 K), 716.5 K with the input words
 * kept too (kx_load_kept: GCC otherwise loaded the tile's words once for the blocks and
 * spilled them, a store more a word; through a kept pointer, kx_load_kept_base: 827.0
 * K); MobileNetV2's (16 channels, 8 blocks) 281.2 -> 251.3 K for its first band, 312.4
 * -> 279.2 K for the others (with the weights kept but not the input words: 294.7 K). */
enum { SP_BLOCKS = 8 };

static bool sp_blocks_inside(const conv_geom *G, int mt) {
    return (G->m + mt - 1) / mt <= SP_BLOCKS;
}

typedef struct sp_geom {
    const conv_geom *G;
    const kt_tile *T;
    int64_t nq;        /* words a kernel row */
    int64_t rw;        /* words a built row */
    int64_t ostep;     /* words between consecutive output columns: sw * C / 2 */
    int64_t P, Cp, Wp; /* a period: values, columns, words */
    kn_kbuf *xr, *wt, *init;
    kt_rq rq;
    int mt;
    bool wkept; /* the blocks unrolled over the tiles of pixels (sp_blocks_inside) */
} sp_geom;

/* Whether consecutive output rows share kernel rows that the scratch keeps:
 * dilation 1 and a stride below kh but at least half of it, so that the rows kept and
 * the rows they move to do not overlap (one memcpy). */
static bool sp_keeps(const conv_geom *G) {
    return G->dh == 1 && G->sh < G->kh && 2 * G->sh >= G->kh;
}

/* Whether integer convolution d takes the merged pairs on target tg. */
static bool sp_suits(const kn_target *tg, const kn_contract *d, const kn_sched *ov) {
    if (!tg || tg->kind != KN_TARGET_MCU || tg->int8_dot != KN_DOT_S16X2 ||
        tg->vector_bits >= 128 || d->kind != KN_CONTRACT_CONV || d->group != 1 ||
        (d->c != 2 && d->c != 3) || d->kh * d->kw < 2 || d->dw != 1 || d->nsp != 2 ||
        (d->c * d->sw) % 2 || d->ph < 0 || d->pw < 0 || d->peh < 0 || d->pew < 0 ||
        !kn_contract_is_int(d) || !d->yscale || d->epi || !kn_contract_nchw(d) ||
        kn_dtype_get(d->x->dtype)->size != 1 ||
        (d->xz && (!is_const(d->xz) || d->xz->numel != 1)) ||
        (ov && ((ov->split && ov->split != 5) || (ov->dot && ov->dot != KN_DOT_S16X2) ||
                ov->lanes > 1)) ||
        !int_ok(d, d->c * d->kh * d->kw))
        return false;
    /* fewer SMLADs a kernel row than the split words (3 channels: 2 a tap) or the column
     * pairs (2 channels: ceil(kw / 2) a channel) */
    int64_t nq = (d->kw * d->c + 1) / 2, now = d->c == 3 ? 2 * d->kw : d->c * ((d->kw + 1) / 2);
    return nq < now;
}

/* The scratch row starting at word `at` from padded row iy (inside the input): its words
 * in periods of P values, the interior periods in a loop, the others (reading pads) one
 * by one. */
static void sp_row(kn_lower *L, const sp_geom *S, kn_kx *b, kn_kx *iy, kn_kx *at) {
    const conv_geom *G = S->G;
    int64_t nper = S->rw / S->Wp;
    int64_t jlo = (G->pw + S->Cp - 1) / S->Cp, jhi = (G->w + G->pw) / S->Cp;
    jlo = jlo > nper ? nper : jlo;
    jhi = jhi < jlo ? jlo : jhi > nper ? nper : jhi;
    int vx = kl_decl(L, KN_I64,
                     mad(L, b, G->xs[0], kx_mul(L, iy, kx_int(L, G->xs[2])))); /* x[b][0][iy][0] */
    int vr = kl_decl(L, KN_I64, at);
    for (int part = 0; part < 3; part++) { /* periods before, inside, after */
        int64_t j0 = part == 0   ? 0
                     : part == 1 ? jlo
                                 : jhi,
                j1 = part == 0   ? jlo
                     : part == 1 ? jhi
                                 : nper;
        if (j1 <= j0) continue;
        int vj = part == 1 ? kl_for(L, j1 - j0) : -1;
        for (int64_t jj = 0; jj < (part == 1 ? 1 : j1 - j0); jj++) {
            kn_kx *j = part == 1 ? kt_plus(L, kx_var(L, vj), j0) : kx_int(L, j0 + jj);
            for (int64_t u = 0; u < S->Wp; u++) {
                kn_kx *vals[2];
                for (int k = 0; k < 2; k++) {
                    int64_t o = u * 2 + k, dc = o / G->c, c = o % G->c;
                    /* input column j * Cp + dc - pw */
                    bool in = part == 1;
                    if (!in) {
                        int64_t col = (j0 + jj) * S->Cp + dc - G->pw;
                        in = col >= 0 && col < G->w;
                    }
                    kn_kx *col = kt_plus(L, kx_mul(L, j, kx_int(L, S->Cp)), dc - G->pw);
                    vals[k] = in ? kx_load(L, G->d->x,
                                           kx_add(L, kx_var(L, vx),
                                                  kt_plus(L, kx_mul(L, col, kx_int(L, G->xs[3])),
                                                          c * G->xs[1])))
                                 : kx_const(L, G->d->x->dtype, cval(G->d->xz, 0));
                }
                kn_kx *wi = kt_plus(L, mad(L, j, S->Wp, kx_var(L, vr)), u);
                kl_store(L, S->xr, wi, kt_word(L, S->T, vals, 2));
            }
        }
        if (part == 1) kl_end(L);
    }
}

/* One tile: output pixels ox0 + [0, rows) of row oy, channels mblk * mt + [0, cols). */
static void sp_tile(kn_lower *L, const sp_geom *S, kt_tile *T, kn_kx *b, kn_kx *oy, kn_kx *mblk,
                    int cols, kn_kx *ox0, int rows) {
    const conv_geom *G = S->G;
    const kn_contract *d = G->d;
    int vm0 = kl_decl(L, KN_I64, kx_mul(L, mblk, kx_int(L, S->mt)));
    for (int v = 0; v < cols; v++) {
        int vi = kl_decl(L, KN_I32, kx_load(L, S->init, kt_plus(L, kx_var(L, vm0), v)));
        for (int r = 0; r < rows; r++) T->acc[r][v] = kl_decl(L, KN_I32, kx_var(L, vi));
    }
    /* the kernel rows unrolled where their words are few (each row's offsets then
     * constants) */
    bool unroll = G->kh * S->nq <= SP_UNROLL_WORDS;
    int vky = unroll ? -1 : kl_for(L, G->kh);
    for (int64_t i = 0; i < (unroll ? G->kh : 1); i++) {
        kn_kx *ky = unroll ? kx_int(L, i) : kx_var(L, vky);
        int vxb = kl_decl(L, KN_I64, mad(L, ky, S->rw, kx_mul(L, ox0, kx_int(L, S->ostep))));
        int64_t nqp = (S->nq + 1) / 2;
        int vwb = kl_decl(L, KN_I64, kx_mul(L, mad(L, mblk, G->kh, ky), kx_int(L, nqp * S->mt)));
        for (int64_t qp = 0; qp < nqp; qp++) {
            int in[2][KT_MAX_ROWS], nh = 2 * qp + 1 < S->nq ? 2 : 1;
            for (int h = 0; h < nh; h++)
                for (int r = 0; r < rows; r++)
                    in[h][r] = kl_decl(
                        L, KN_I32,
                        (S->wkept ? kx_load_kept : kx_load)(
                            L, S->xr, kt_plus(L, kx_var(L, vxb), r * S->ostep + 2 * qp + h)));
            for (int v = 0; v < cols; v++) { /* words 2qp and 2qp + 1 of the column: one LDRD */
                int wd = kl_decl(L, KN_I64,
                                 (S->wkept ? kx_load_kept_base : kx_load)(
                                     L, S->wt, kt_plus(L, kx_var(L, vwb), qp * S->mt + v)));
                int w[2];
                w[0] = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_var(L, wd)));
                if (nh > 1)
                    w[1] = kl_decl(
                        L, KN_I32,
                        kx_cast(L, KN_I32, kx_bin(L, KX_SHR, kx_var(L, wd), kx_int(L, 32))));
                for (int h = 0; h < nh; h++)
                    for (int r = 0; r < rows; r++)
                        kl_set(L, T->acc[r][v],
                               kx_dot(L, T->dot, kx_var(L, T->acc[r][v]), kx_var(L, in[h][r]),
                                      kx_var(L, w[h])));
            }
        }
    }
    if (!unroll) kl_end(L); /* ky */
    /* y[b][m0 + v][oy][ox0 + r] */
    int vy = kl_decl(L, KN_I64,
                     mad(L, b, G->ys[0], mad(L, mad(L, kx_var(L, vm0), G->oh, oy), G->ow, ox0)));
    for (int v = 0; v < cols; v++)
        for (int r = 0; r < rows; r++)
            kl_store(
                L, d->y, kt_plus(L, kx_var(L, vy), v * G->oh * G->ow + r),
                kt_int_store(L, d, &S->rq, kx_var(L, T->acc[r][v]), kt_plus(L, kx_var(L, vm0), v)));
}

/* Blocks blk0 + [0, nb) of mt channels (and, with tailcols, a block of that many after
 * them) over one tile of pixels, the nb blocks unrolled (KN_LOOP_UNROLL; with S->wkept
 * their weights read through the kept pointer, kx_load_kept_base: at constant offsets of
 * one pointer, where GCC would read constant-index weights as literals). */
static void sp_blocks(kn_lower *L, const sp_geom *S, kt_tile *T, kn_kx *b, kn_kx *oy, kn_kx *blk0,
                      int64_t nb, int tailcols, kn_kx *ox0, int rows) {
    if (nb) {
        int vk = kl_for(L, nb);
        L->owner[L->depth - 1]->annot |= KN_LOOP_UNROLL;
        L->owner[L->depth - 1]->width = (int)nb;
        sp_tile(L, S, T, b, oy, kx_add(L, blk0, kx_var(L, vk)), S->mt, ox0, rows);
        kl_end(L);
    }
    if (tailcols) sp_tile(L, S, T, b, oy, kt_plus(L, blk0, nb), tailcols, ox0, rows);
}

/* The tiles of pixels along output row oy, each over blocks blk0 + [0, nb) (sp_blocks). */
static void sp_pixels(kn_lower *L, const sp_geom *S, kt_tile *T, kn_kx *b, kn_kx *oy, kn_kx *blk0,
                      int64_t nb, int tailcols) {
    int64_t R = T->maxrows, full = S->G->ow / R, rem = S->G->ow % R;
    if (full) {
        int vt = kl_for(L, full);
        sp_blocks(L, S, T, b, oy, blk0, nb, tailcols, kx_mul(L, kx_var(L, vt), kx_int(L, R)),
                  (int)R);
        kl_end(L);
    }
    if (rem) sp_blocks(L, S, T, b, oy, blk0, nb, tailcols, kx_int(L, full * R), (int)rem);
}

static bool tile_stem_pairs(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                            const kn_target *tg, kt_tile *Tp) {
    if (!sp_suits(tg, d, ov)) return false;
    conv_geom G;
    conv_geometry(d, &G);
    kt_tile T;
    memset(&T, 0, sizeof T);
    T.t = KN_I32, T.wt = KN_I32, T.lanes = 1;
    T.dot = KN_DOT_S16X2, T.parts = 2, T.bits = 16;
    T.xoff = 0, T.xzc = (int64_t)cval(d->xz, 0);
    T.ckx = true;
    /* 2 pixels x 2 channels: MobileNetV1's stem (3x3, 5 words a kernel row, the rows
     * unrolled) on the M4 (bench/fw_profile.sh, QEMU instructions, schedule files, pixels
     * x channels) 2 x 2 0.768 M, 2 x 3 0.787 M (0.780 M with a loop over the rows), 3 x 2
     * 0.842 M, 2 x 4 0.844 M (spills), 4 x 2 0.907 M, 3 x 3 0.908 M, 1 x 4 0.909 M */
    int mt = 2;
    if (ov && ov->tile_vecs) mt = ov->tile_vecs;
    mt = mt < 1 ? 1 : mt > KT_MAX_NV ? KT_MAX_NV : mt;
    mt = mt > d->m ? (int)d->m : mt;
    int rows = ov && ov->tile_rows ? ov->tile_rows : 2;
    rows = rows < 1 ? 1 : rows > KT_MAX_ROWS ? KT_MAX_ROWS : rows;
    T.maxrows = rows, T.nv = mt, T.kb = T.kbl = mt;
    G.T = &T;
    sp_geom S = {.G = &G, .T = &T, .mt = mt};
    S.nq = conv_ckx_words(&G);
    S.ostep = G.sw * G.c / 2;
    S.P = G.c % 2 ? 2 * G.c : G.c;
    S.Cp = S.P / G.c, S.Wp = S.P / 2;
    int64_t need = (G.ow - 1) * S.ostep + S.nq;
    S.rw = (need + S.Wp - 1) / S.Wp * S.Wp;
    /* weights [mblk][ky][q / 2][mt] as i64 pairs of words q (low) and q + 1 (one LDRD),
     * and the init of each channel (bias - xz * sum of its weights) */
    int64_t nblk = (G.m + mt - 1) / mt, nqp = (S.nq + 1) / 2, nw = nblk * G.kh * nqp * mt;
    uint64_t *wt = calloc((size_t)nw, sizeof *wt);
    int32_t *bt = calloc((size_t)G.m, sizeof *bt);
    KN_ASSERT(wt && bt);
    conv_src src = {&G, 0};
    for (int64_t oc = 0; oc < G.m; oc++) {
        for (int64_t i = 0; i < G.kh; i++)
            for (int64_t q = 0; q < S.nq; q++) {
                uint64_t v = (uint32_t)(int32_t)conv_wckx(&src, i * S.nq + q, oc);
                wt[(((oc / mt) * G.kh + i) * nqp + q / 2) * mt + oc % mt] |= v << (32 * (q % 2));
            }
        bt[oc] = (int32_t)conv_b(&src, 0, oc);
    }
    S.wt = kl_table(L, KN_I64, nw, wt);
    S.init = kl_table(L, KN_I32, G.m, bt);
    free(wt);
    free(bt);
    kt_int_tables_red(L, d, &S.rq);
    S.xr = kl_scratch(L, KN_I32, G.kh * S.rw);
    S.wkept = sp_blocks_inside(&G, mt);
    *Tp = T;
    int vb = kl_for(L, G.n), voy = kl_for(L, G.oh);
    kn_kx *b = kx_var(L, vb), *oy = kx_var(L, voy);
    /* the kh padded rows of output row oy: past the first output row, where they overlap
     * the previous row's, its last kh - sh rows moved to the front (one memcpy: rows built
     * once, not kh / sh times) and only the last sh built. MobileNetV1's 3 x 3 stride-2
     * stem on the M4 (fw_profile.sh): 818.0 -> 798.3 K instructions (the rows read at
     * (oy * sh + ky) % kh instead, a ring with nothing moved: 800.0 K, the tiles' three row
     * pointers costing GCC registers). */
    bool keep = sp_keeps(&G);
    if (keep) {
        kl_if(L, kx_bin(L, KX_GT, oy, kx_int(L, 0)));
        kl_copy(L, S.xr, kx_int(L, 0), S.xr, kx_int(L, G.sh * S.rw),
                kx_int(L, (G.kh - G.sh) * S.rw));
        kl_end(L);
    }
    int vky = kl_for(L, G.kh);
    kn_kx *ky = kx_var(L, vky);
    if (keep)
        kl_if(L, kx_bin(L, KX_LOR, kx_bin(L, KX_EQ, oy, kx_int(L, 0)),
                        kx_bin(L, KX_GE, ky, kx_int(L, G.kh - G.sh))));
    int vat = kl_decl(L, KN_I64, kx_mul(L, ky, kx_int(L, S.rw)));
    int viy =
        kl_decl(L, KN_I64, kt_plus(L, mad(L, oy, G.sh, kx_mul(L, ky, kx_int(L, G.dh))), -G.ph));
    kl_if(L, kt_inside(L, kx_var(L, viy), G.h));
    sp_row(L, &S, b, kx_var(L, viy), kx_var(L, vat));
    kl_else(L);
    {
        int vz = kl_for(L, S.rw);
        kl_store(L, S.xr, kx_add(L, kx_var(L, vat), kx_var(L, vz)), kt_zp_word(L, &T));
        kl_end(L);
    }
    kl_end_n(L, keep ? 3 : 2); /* if, (the rows to build), ky */
    int64_t full = G.m / mt, tail = G.m % mt;
    if (S.wkept) {
        sp_pixels(L, &S, &T, b, oy, kx_int(L, 0), full, (int)tail);
    } else { /* each block of channels over the tiles of pixels */
        if (full) {
            int vk = kl_for(L, full);
            sp_pixels(L, &S, &T, b, oy, kx_var(L, vk), 0, mt);
            kl_end(L);
        }
        if (tail) sp_pixels(L, &S, &T, b, oy, kx_int(L, full), 0, (int)tail);
    }
    kl_end_n(L, 2); /* oy, b */
    return true;
}

/* ---- pointwise convolutions on few pixels: channel tiles ----
 *
 * The pixel tiles above fill their vectors only where the pixels do: 7x7 = 49 pixels are
 * a block of 32 and a partial one of 17 on 16 lanes (4 vectors for 49 pixels, 77% of the
 * lanes, and the partial block's tiles cost as much as full ones). There the channel tiles
 * of tile_conv fill every lane instead (vectors of output channels, rows of pixels, stored
 * through the transposing loop), the image read as one row of oh*ow pixels (a 1x1 window
 * with no padding and stride 1 reads pixel p for output p), so the tiles' rows span image
 * rows: 49 = 7 tiles of 7. On up to PW_CH_REDUCE blocks of pixels (14x14 = 196) they are
 * used too where the convolution reduces the channels (m < c); always with at least
 * one full block of output channels (m >= 2 * lanes). Single 1x1 layers on the
 * 16-lane AVX-512 machine, min of 60 runs, pixel -> channel tiles: 7x7 512->2048 0.77,
 * 2048->512 0.93, 160->960 0.89, 960->160 0.77, 320->1280 0.83; 14x14 1024->256 0.91,
 * 576->96 0.94, but 256->1024 1.06 and 96->576 1.16 (docs/benchmarks.md). CPUs only:
 * microcontrollers read full pixel blocks in place, with no packing to save. */
enum { PW_CH_SMALL = 2, PW_CH_REDUCE = 8 }; /* blocks of pixels (2 * lanes) */

static bool pw_channel_tiles(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                             const kn_target *tg, kt_tile *T) {
    int lanes = kl_lanes(L, KN_F32);
    int64_t P = d->oh * d->ow, kb = 2 * (int64_t)lanes;
    if (tg->kind != KN_TARGET_CPU || !pw_suits(d, lanes) || d->sh != 1 || d->sw != 1 || d->m < kb ||
        !(P <= PW_CH_SMALL * kb || (P <= PW_CH_REDUCE * kb && d->m < d->c)))
        return false;
    kn_contract f = *d; /* one row of P pixels; the operands were checked by pw_suits */
    f.h = f.oh = 1;
    f.w_ = f.ow = P;
    return tile_conv(L, &f, ov, 0, tg, true, T);
}

/* ---- pointwise convolutions reading or writing channels-last ----
 *
 * The 1x1 convolutions around a channels-last depthwise one (passes/layout.c: an
 * inverted residual block's expansion writes NHWC, its projection reads it) run in the
 * channel tiles of tile_conv with the image read as one row of oh*ow pixels, as
 * pw_channel_tiles does: the expansion's vectors of output channels are stored
 * straight into y (conv_tile's direct store), the projection broadcasts x[pixel][c] and
 * transposes its tile into NCHW as before. The pixel tiles of tile_pointwise would need
 * x packed from NHWC, a transposing copy of the (larger) input. */
static bool pw_channels_last(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                             const kn_target *tg, kt_tile *T) {
    if (kn_contract_nchw(d) || d->sh != 1 || d->sw != 1 || d->nsp != 2) return false;
    kn_contract f = *d; /* pw_suits without its NCHW test: the same checks otherwise */
    f.xs[3] = f.ys[3] = 0;
    if (!pw_suits(&f, kl_lanes(L, KN_F32) > 1 ? kl_lanes(L, KN_F32) : 2)) return false;
    f = *d;
    /* the pixels as rows of W pixels (contiguous in x and y alike): one row of all of
     * them, or, where W can be a multiple of 8 of at least 64 dividing oh*ow, P / W rows,
     * so that a convolution of few channel blocks gets a tile scratch per row
     * (conv_row_tiles) and the parallel pass can split its rows. An epilogue operand of
     * more than one value a channel (a residual) is then addressed by its flat pixel
     * (epi_flat), which needs it dense NCHW ([n][m][oh][ow]); any other keeps one row. */
    int64_t P = d->oh * d->ow, W = P;
    bool whole = false;
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (o && o->numel > d->n * d->m &&
            !(o->rank == 4 && o->dims[0] == d->n && o->dims[1] == d->m && o->dims[2] == d->oh &&
              o->dims[3] == d->ow))
            whole = true;
    }
    /* On CPUs, rows that two threads can share evenly: an even number of them or 8 and
     * more, else the widest W of 16 pixels or more that makes an even number (14x14:
     * 2 rows of 98, where one row of 196 left the projections' 3 channel blocks to 3
     * tasks, 2 on one thread; 28x28: 2 rows of 392 instead of 7 of 112; docs/
     * benchmarks.md, "Two threads: bands and even rows") */
    bool even = tg && tg->kind == KN_TARGET_CPU;
    for (int64_t c = 64; c < P && !whole; c += 8)
        if (P % c == 0 && (!even || (P / c) % 2 == 0 || P / c >= 8)) {
            W = c;
            break;
        }
    for (int64_t c = P / 2; W == P && even && !whole && c >= 16; c--)
        if (P % c == 0 && (P / c) % 2 == 0) W = c;
    f.h = f.oh = P / W;
    f.w_ = f.ow = W;
    f.epi_flat = true;
    if (f.xs[3]) f.xs[2] = W * f.xs[3];
    if (f.ys[3]) f.ys[2] = W * f.ys[3];
    /* between one and three vectors of output channels, not a multiple (the 24- and
     * 40-channel projections of MobileNetV2 and EfficientNet): one block, x read once,
     * where blocks of whole vectors read it again for the rest. With 16 lanes, vectors of
     * 16 with the last one partly empty (24: 2 x 16, 40: 3 x 16): on Zen 5 (512-bit
     * FMA pipes) 56x56 144->24 0.22 -> 0.17 ms and 28x28 240->40 0.13 -> 0.10 against 3 x
     * 8 and 2 x 16 + a partial block; on Zen 4 (which splits them in two 256-bit halves)
     * 3 x 8 was the faster for 24 (mbv2, docs/benchmarks.md). So where the target's
     * vectors run on units of half their width (kn_target_fp_split: Zen 4), three
     * vectors of half the lanes where they fill them exactly (24 on 16 lanes: no lanes
     * wasted at the same rate of FLOPs; the same sums in the same order, outputs bit-
     * identical). AMD EPYC VM (Zen 4), MobileNetV2's 56x56 projections to 24 channels at
     * one thread (wall, alternated processes): 211 -> 184 us (features.2) and 298 -> 250
     * (features.3, with the residual) (docs/benchmarks.md, branch mz); 40 channels (5 x 8) not
     * measured there. Else, two vectors of half the lanes where they fill them exactly. */
    int lanes = kl_lanes(L, KN_F32);
    kn_sched two = ov ? *ov : (kn_sched){0};
    if (!two.tile_vecs && !two.lanes && kn_target_fp_split(tg) && lanes >= 16 && d->m > lanes &&
        d->m % lanes && d->m == 3 * (lanes / 2)) {
        two.lanes = lanes / 2;
        two.tile_vecs = 3;
    } else if (!two.tile_vecs && !two.lanes && lanes >= 16 && d->m > lanes && d->m < 3 * lanes &&
               d->m % lanes) {
        two.lanes = lanes;
        two.tile_vecs = (int)((d->m + lanes - 1) / lanes);
    } else if (!two.tile_vecs && !two.lanes && lanes >= 8 && d->m > lanes && d->m < 2 * lanes &&
               d->m % (lanes / 2) == 0) {
        two.lanes = lanes / 2;
        two.tile_vecs = (int)(d->m / (lanes / 2));
    }
    return tile_conv(L, &f, &two, 0, tg, true, T);
}

/* The integer 1x1 convolutions of an inverted residual block kept channels-last
 * (passes/layout.c, expanded_channels_last_int): the expansion writes NHWC, the
 * projection reads it. They run in the channel tiles of tile_conv with the image read as
 * one row of oh*ow pixels, as pw_channel_tiles runs them: the expansion's requantized
 * vectors of output channels go straight into y (conv_tile's direct store, no tile
 * scratch and no transposing loop); the projection's input words (conv_words) are 4
 * consecutive channels at one pixel, 4 consecutive bytes in NHWC. CPU targets with a
 * four-part dot product; batch 1. */
static bool pw_int_channels_last(kn_lower *L, const kn_contract *d, const kn_sched *ov,
                                 const kn_target *tg, kt_tile *T) {
    if (tg->kind != KN_TARGET_CPU || kn_contract_nchw(d) || d->kind != KN_CONTRACT_CONV ||
        !kn_contract_is_int(d) || !d->yscale || d->nsp != 2 || d->group != 1 || d->kh != 1 ||
        d->kw != 1 || d->ph || d->pw || d->peh || d->pew || d->sh != 1 || d->sw != 1 || d->n != 1 ||
        d->epi)
        return false;
    kn_contract f = *d;
    int64_t P = d->oh * d->ow;
    f.h = f.oh = 1;
    f.w_ = f.ow = P;
    if (f.xs[3]) f.xs[2] = P * f.xs[3];
    if (f.ys[3]) f.ys[2] = P * f.ys[3];
    return tile_conv(L, &f, ov, 0, tg, true, T);
}

/* ---- integer pointwise convolutions on microcontrollers: one row of pixels ----
 *
 * An integer 1x1 convolution with stride 1 and no padding runs in the channel tiles
 * of tile_conv as pw_channel_tiles runs them, the image read as one row of oh*ow
 * pixels, so the tiles' rows cross the image's rows: DS-CNN's 25 x 5 pixels are 63
 * tiles of 2 pixels (the last of 1), where rows of 5 took 75 tiles of 2, 2 and 1 (DS-CNN
 * int8 on the M4: 6.84 -> 6.74 M instructions). Only for the split-word tiles: the
 * Cortex-M3's multiply-add tiles took longer (10.33 -> 10.79 M); `split=2` in a
 * schedule file keeps the image's rows as well. */
static bool pw_int_rows(kn_lower *L, const kn_contract *d, const kn_sched *ov, const kn_target *tg,
                        kt_tile *T) {
    if (tg->kind != KN_TARGET_MCU || tg->int8_dot != KN_DOT_S16X2 || d->c % 4 ||
        (ov && ov->split == 2) || kn_dtype_get(d->x->dtype)->size != 1 ||
        d->kind != KN_CONTRACT_CONV || d->group != 1 || d->kh != 1 || d->kw != 1 || d->ph ||
        d->pw || d->peh || d->pew || d->sh != 1 || d->sw != 1 || !kn_contract_is_int(d) || d->epi ||
        !kn_contract_nchw(d))
        return false;
    kn_contract f = *d;
    f.h = f.oh = 1;
    f.w_ = f.ow = d->oh * d->ow;
    return tile_conv(L, &f, ov, 0, tg, true, T);
}

/* ---- the pass ---- */

/* Strided float windowed convolutions whose output rows are narrower than a register tile
 * (KT_AUTO_ROWS pixels: ResNet's layer4.0 3x3s, 14x14 -> 7x7) read the padding in the
 * kernel (1) where the target's vectors run on units of half their width or less
 * (kn_target_fp_split): no copy of the input (more micro-kernels to build, see below). AMD
 * EPYC VM (Zen 4), thread CPU time against the padded copy in span tiles (conv_span_rows):
 * ResNet-50's layer4.0 conv2 and ResNet-18's layer4.0 conv1 faster; the 14x14 and 28x28
 * ones slower (docs/benchmarks.md, branches rz and r1). Two kernels of the 8 models: the
 * compile time of the in-kernel form (above) is spent on them alone. */
static bool conv_pad_inplace_suits(const kn_contract *d, const kn_target *t) {
    return t->kind == KN_TARGET_CPU && kn_target_fp_split(t) && d->kind == KN_CONTRACT_CONV &&
           d->nsp == 2 && !kn_contract_is_int(d) && d->group == 1 && d->kh * d->kw > 1 &&
           (d->sh > 1 || d->sw > 1) && d->ow < KT_AUTO_ROWS && d->oh < KT_AUTO_ROWS && d->ow >= 4;
}

/* How a padded convolution reads its padding (kn_sched.pad): a schedule file's choice,
 * else on microcontrollers inside the kernel (1), which needs no arena copy of the
 * input (RAM), and elsewhere through the zero-padded copy (2). Reading in place
 * builds each block's micro-kernel up to 12 times (top, interior and bottom rows, each
 * with left and right border pixels, full tiles and a partial one) against twice with
 * the copy: on ResNet-18 that made LLVM's optimization and code generation 4x slower
 * (#16's compile-time targets missed), and the copy runs no slower on CPUs
 * (docs/benchmarks.md, compile time). A convolution without padding needs neither (0). */
static int conv_pad_choice(const kn_contract *d, const kn_target *t, const kn_sched *ov) {
    if (!d->ph && !d->pw && !d->peh && !d->pew) return 0;
    if (ov && ov->pad >= 1 && ov->pad <= 3) return ov->pad;
    if (conv_pad_inplace_suits(d, t)) return 1;
    return t->kind == KN_TARGET_MCU ? 1 : 2;
}

kn_status kn_kpass_tile(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    if (!t) return KN_OK;
    bool gpu = t->kind == KN_TARGET_GPU; /* work-item tiles, not register tiles */
    int *readers = kn_kprog_readers(p);  /* frees weights once repacked (compile memory) */
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_contract *d = kern->contract;
        if (!d || kern->sched.tile_rows) continue; /* none, or rebuilt by an earlier pass */
        if (d->y->numel <= 0) continue;            /* an empty output: the plain nest is a no-op */
        kn_ks *old = kern->body;
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        kt_tile T;
        memset(&T, 0, sizeof T);
        const kn_sched *ov = kn_schedule_for(p, k);
        if (!ov) ov = kern->tuned; /* the tuning table's entry (pass 'tuned'), or NULL */
        if (gpu) {
            bool gdone = d->kind == KN_CONTRACT_CONV ? kt_gpu_conv(L, d, ov, &kern->sched)
                                                     : kt_gpu_matmul(L, d, ov, &kern->sched);
            if (!gdone)
                kern->body = old;
            else
                kn_kprog_rewritten(p, readers, k, old);
            kl_builder_destroy(L);
            continue;
        }
        int pad = d->kind == KN_CONTRACT_CONV ? conv_pad_choice(d, t, ov) : 0;
        bool pw = d->kind == KN_CONTRACT_CONV &&
                  (tile_stem_int(L, d, ov, t, &T) || tile_stem_cl(L, d, ov, t, &T) ||
                   tile_stem_pairs(L, d, ov, t, &T) || tile_pointwise_int(L, d, ov, t, &T) ||
                   pw_int_channels_last(L, d, ov, t, &T) || pw_channels_last(L, d, ov, t, &T) ||
                   pw_channel_tiles(L, d, ov, t, &T) || pw_int_rows(L, d, ov, t, &T) ||
                   tile_pointwise(L, d, ov, t, &T));
        bool done = pw || d->kind == KN_CONTRACT_CONV
                        ? pw || tile_conv(L, d, ov, pad, t, false, &T)
                        : tile_matmul(L, d, ov, t->kind == KN_TARGET_CPU, t, &T);
        if (done) {
            kern->sched.pad = T.pad ? T.pad : pad;
            kern->sched.dot = T.dot;
            kern->sched.split = T.split && T.xpre && d->kind == KN_CONTRACT_CONV    ? 4
                                : T.split                                           ? 1
                                : T.cpair                                           ? 3
                                : T.ckx                                             ? 5
                                : T.dot == KN_DOT_S16X2 && t->kind == KN_TARGET_MCU ? 2
                                                                                    : 0;
            kern->sched.tile_rows = T.maxrows;
            kern->sched.tile_vecs = T.nv;
            kern->sched.lanes = T.lanes;
            kern->sched.fblock = T.fblock;
            kern->sched.pf = T.pf;
            kern->sched.serp = T.serp;
            kern->sched.xpf = (int)T.xpf;
            kern->sched.span = T.span;
            kern->sched.mc = T.mc;
            kn_kprog_rewritten(p, readers, k, old);
        } else {
            kern->body = old; /* not for this kernel: the plain nest stays */
        }
        kl_builder_destroy(L);
    }
    free(readers);
    return KN_OK;
}
