/* The depthwise pass: depthwise convolutions rebuilt as row tiles, padding handled
 * inside the kernel. requires: kir (kernels with kn_contract descriptors); breaks: plan
 * (adds a packed constant).
 *
 * A depthwise convolution (group == C == M: one input channel per output channel,
 * MobileNet's 3x3 layers) has a single column per group, so the tile pass's blocks of
 * output channels do not fit it. On register-tile targets (CPUs, microcontrollers)
 * this pass rebuilds the depthwise Conv kernels whose weights are constant f32:
 *
 *   for bc in [0, N*C):                          parallel; channel c = bc % C
 *     bias, w[0..kh*kw) = packed[c]              locals for the whole channel
 *     for oy in each of top border, interior, bottom border rows:
 *       left border columns: one output at a time, each tap tested against the input
 *       interior columns:    tiles of `rows` x `lanes` outputs with no test
 *         acc[r] = 0
 *         for ky (unrolled), if the row is a border row: if 0 <= iy < H
 *           xin[o] = x[row iy, first column + o]  each distinct offset o of the tile's
 *                                                 taps loaded once (vectors of lanes)
 *           acc[r] = fma(xin[r*step + kx*dw], w[ky*kw + kx], acc[r])   kx unrolled
 *         y[.., ox + r*lanes ..] = epilogue(acc[r] + bias)   the bias after the sum
 *       right border columns: as the left
 *
 * The tile is vectorized along the output row (stride 1: consecutive outputs read
 * consecutive inputs, so the taps are vector loads) in the target's vector width, or
 * half of it (down to 4 lanes) while the interior of a row is narrower than that, with
 * one vector of half the lanes and then scalar tiles for the row's tail; strided convolutions and
 * targets without SIMD use scalar tiles, whose overlapping taps (x[ox + kx] for neighbouring ox)
 * are loaded once. Channels cannot be vectors here: NCHW puts them H*W apart. Tile sizes come from
 * the target's register count (the accumulators, the weights and one row of inputs). Weights are
 * packed at compile time, bias first, per channel. There is no padded copy of the input: only
 * outputs whose window leaves the input (kt_interior) test bounds, rows once per kernel row and
 * columns once per tap, so no arena buffer is added (issue 13: the padded copy set the peak of
 * firmware models). Integer depthwise convolutions (QLinearConv, ConvInteger) run in the same
 * tiles in f32 on exact integers and requantize in the store (passes/tile_int.c); on
 * microcontrollers with SMLAD, rows of 3 taps at stride 1 or 2 run in i32 row-word tiles
 * instead (dw_wtile: 4 bytes of an input row a load, split into even and odd bytes).
 *
 * Except where that leaves most of the work scalar: on CPU targets with vectors (not
 * microcontrollers), an undilated convolution with a stride (2: MobileNet's and
 * EfficientNet's downsampling layers) or with border columns over an eighth of its row
 * (5x5 kernels on 14x14 and 7x7 rows) is *staged*: at the start of each channel's
 * iteration the window its outputs read is copied into scratch, zero-padded, each row's
 * columns split into sw phases (column j*sw + p at phase p's start + j), so output ox's
 * tap kx is element ox + kx/sw of phase kx%sw and every output is an interior vector tile
 * (kn_sched.pad = 2). The scratch holds every channel (the channel loop stays parallel).
 *
 * Staged integer convolutions on targets with an integer dot product (the target's
 * int8_dot or the schedule's dot=, kt_int_dot_kind) stage words instead of f32: word row
 * q at column j packs the `parts` padded rows q*rstep + [0, parts) (4 bytes for
 * vpdpbusd / sdot, two 16-bit halves for pmaddwd), each the input plus the offset the
 * instruction's signedness needs (padding: the zero point), so a tile's kernel rows go
 * `parts` at a time: one KX_DOT of a vector of words and a broadcast word of the
 * weights w - wz of those rows at one tap column (3x3 with vpdpbusd: 3 dots per vector
 * of outputs, where f32 took 9 multiply-adds). The accumulators start at bias - (xz +
 * offset) * sum (w - wz), and the i32 sums wrap exactly to the reference's (dw_geom.dot).
 *
 * On microcontrollers the output may be written over the input (docs/firmware.md, "Layers
 * written over their input"): where it has the input's bytes (stride 1, same padding),
 * each channel's plane is copied into a one-channel scratch at the start of its iteration
 * and the tiles read the copy (dw_plane_suits; channels-last, dwc_plane_suits: the scalar
 * tiles go one channel at a time, whose values are gathered), and the kernel states so
 * (kn_kernel.staged_in) for the plan.
 *
 * A GlobalAveragePool reading only this kernel's output (squeeze-and-excite's squeeze)
 * is computed here too: each stored tile is added to a running sum of its width, the
 * channel's mean is stored at the end of its iteration, and the pool's kernel is left
 * empty, so the output is not read a second time. */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/ops/nn_attrs.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "passes/tile.h"
#include "passes/tile_int.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

enum {
    DW_MAX_ROWS = 8,
    DW_MAX_TAPS = 64,
    DW_MAX_OFFS = DW_MAX_ROWS * DW_MAX_TAPS,
    DW_MIN_LANES = 4,
    DW_MAX_STRIDE = 4,     /* column phases a staged channel may be split into */
    DW_MAX_PARTS = 5,      /* accumulators of a tile: partial sums of its kernel rows */
    DW_MAX_YR = 4,         /* output rows of a tile (dw_geom.yr) */
    DW_YROWS_INPLACE = 3,  /* output rows of Helium's in-place vector tiles (dw_geom.yrows) */
    DW_PH_CHUNK = 16,      /* column pairs of the phases' copy a chunk (dw_pad_phases) */
    DW_WORDS_NU = 2,       /* words of a row-word tile at stride 1 (4 outputs; 4 at stride 2) */
    DW_WORDS_NU8_MIN = 8,  /* stride-2 rows of more than this and fewer than ... */
    DW_WORDS_NU8_MAX = 16, /* ... outputs: tiles of DW_MAX_ROWS words (dw_geom.nu) */
    DW_BAND_PIXELS = 196,  /* channels-last inputs split in bands of rows: 14x14 and up */
    DW_BAND_ROWS = 8       /* at most, a band */
};

typedef struct dw_geom {
    const kn_contract *d;
    int64_t c, h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t ylo, yhi, xlo, xhi; /* interior rows and columns (kt_interior) */
    int lanes;                  /* the interior's vector width: 1 without SIMD or stride 1 */
    int rows;                   /* groups of lanes outputs per interior tile */
    int srows;                  /* outputs per scalar tile */
    bool hold;                  /* weights in locals for the whole channel */
    kn_kbuf *pk;                /* packed [c][1 + kh*kw]: bias, then the weights */
    int vbc, vpk;               /* the (batch, channel) loop; the channel's offset in pk */
    int wv[DW_MAX_TAPS + 1];    /* weight locals when held; wv[0] is the bias */
    /* integer depthwise convolutions (passes/tile_int.h): the same tiles in f32 on
     * exact integers, inputs less their zero point xz, requantized in the store */
    bool integer;
    double xz;
    kt_rq rq; /* kt_int_tables */
    /* staged: the channel is first copied into scratch, zero-padded, its columns split
     * into sw phases (column j*sw + p of the padded row at poff[p] + j), so every output
     * is interior and every tap a contiguous vector load (stride 2 and narrow rows) */
    bool stage;
    kn_kbuf *xs;                 /* scratch [n*c][hs][rs] */
    int64_t hs, rs;              /* padded rows a channel reads; elements per row */
    int64_t pwid[DW_MAX_STRIDE]; /* columns of each phase */
    int64_t poff[DW_MAX_STRIDE]; /* each phase's first element in a row */
    /* staged integer convolutions on targets with an integer dot product (KX_DOT kind
     * `dot`, kn_dot): the scratch holds i32 words, word row q at column j packing the
     * `parts` padded rows q*rstep + [0, parts) at that column (8 or 16 bits each: the
     * input + xoff, padding xz + xoff), so one dot of a word vector and a broadcast
     * weight word adds `parts` kernel rows of one tap; pk holds the accumulators' init
     * (bias - xzc * sum (w - wz)) and per group of rows g and tap column kx the word of
     * w - wz of kernel rows g*parts + [0, parts) (0 past kh) */
    int dot, parts, bits;
    int64_t xoff, xzc; /* kt_int_xoff; xz + xoff */
    int64_t rstep, hq; /* padded row of word row q: q * rstep; word rows per channel */
    int64_t ngr;       /* groups of kernel rows: ceil(kh / parts) */
    kn_dtype at;       /* accumulators, inputs and packed entries: i32 (dot) or f32 */
    /* pooled: a GlobalAveragePool of y (squeeze-and-excite's squeeze) computed here: each
     * stored tile is added to a running sum of its width, the channel's mean stored at the
     * end of the channel, and the pool's own kernel emptied */
    kn_kbuf *pool; /* [n*c] means, or NULL */
    /* in place on microcontrollers (dw_plane_suits): each channel's input plane is
     * copied here at the start of its iteration and the tiles read the copy, so y may
     * be written over x (kn_kernel.staged_in) */
    kn_kbuf *plane;             /* [h][w] of x's dtype, or NULL */
    int nsum, sumw[4], sumv[4]; /* widths of the tiles (lanes ... 4, 1) and their sums */
    /* row words (integer 3-tap rows at stride 1 or 2 on microcontrollers with SMLAD,
     * dw_words_suits): interior outputs in i32 tiles of `nu` words, each word 4 bytes of
     * an input row (kx_load_word) split into its even and odd bytes (kx_unpack16); pkw
     * holds per channel the init bias - xz * sum (w - wz), then per kernel row the weight
     * words (w0, w2), (w1, 0); xw: the end of the outputs whose words stay in
     * the row; wrows: kernel rows outside x may be left out (xz == 0); wedge: the
     * border columns in words too (rows of 4 bytes or more): a word reaching past the
     * row's left or right end is the row's first or last 4 bytes shifted, zero-point
     * bytes shifted in, and a kernel row outside x is the word of 4 zero points */
    bool words, wrows, wedge;
    /* Helium vectors (dw_mvec_suits): the tiles in i32 (at = KN_I32) on 4-lane vectors of
     * the input less its zero point (VLDRB.U32/S32 widening 4 bytes, VSUB), a VMLA by the
     * scalar weight w - wz per tap, and the high-word requantization of the whole vector
     * in the store (codegen/c/cprint.c mve_int) */
    bool mvec;
    /* with mvec: each channel copied into pad ([phs][prs] of x's dtype, every row and
     * column the outputs read, the padding filled with the zero point once a run), so
     * every output is a vector tile with no test and the inputs are not less xz (the
     * accumulators start at bias - xz * sum (w - wz)) */
    kn_kbuf *pad;
    int64_t phs, prs;
    /* with pad at stride 2: each padded row held as its two phases of columns (column
     * 2j + p at poff[p] + j, kt_phases), so the 4 outputs of a tap read 4 consecutive
     * bytes; the copy into them is a de-interleaving loop (VLD20/VLD21 on MVE) */
    bool pph;
    /* with mvec: the outputs of tile group r start at ox + r * gstep (0: r * lanes); a row
     * of 5-7 outputs is one tile of two overlapping groups (dw_cols), which share loads */
    int64_t gstep;
    /* with mvec at stride 2 on targets with byte gathers: the plane holds the padded rows
     * as they are and a tap of 4 outputs is one strided load (kx_vload_strided, step sw:
     * MVE's VLDRB.U32 gather), so any row of 4 outputs or more is in vectors */
    bool sload;
    /* with mvec: output rows a tile of the interior (yrows), sharing the loads of the
     * input rows their kernel rows have in common (3 x 3 at stride 1: 4 input rows for 2
     * output rows, not 6); yr: the rows of the tile being built (dw_rows sets it on a
     * copy), 0 or 1 for one */
    int yrows, yr;
    int nu;
    kn_kbuf *pkw;
    int vpkw;
    int64_t xw;
} dw_geom;

static kn_kx *var(kn_lower *L, int v) {
    return kx_var(L, v);
}

/* `lanes` inputs of the tile from x[at] (one: a scalar), as f32: x itself, or x - xz
 * for integer convolutions. */
static kn_kx *dw_in(kn_lower *L, const dw_geom *G, kn_kbuf *src, kn_kx *at, int lanes) {
    kn_kx *v = lanes > 1 && G->sload ? kx_vload_strided(L, src, at, lanes, (int)G->sw)
               : lanes > 1           ? kx_vload(L, src, at, lanes)
                                     : kx_load(L, src, at);
    if (!G->integer || src == G->xs) return v;                  /* staged: converted in the copy */
    if (G->mvec && src == G->pad) return kx_cast(L, KN_I32, v); /* xz is in the init */
    if (G->mvec) {                                              /* exact in i32: x - xz */
        v = kx_cast(L, KN_I32, v);
        return G->xz ? kx_sub(L, v, kx_const(L, KN_I32, G->xz)) : v;
    }
    v = kx_cast(L, KN_F32, v);
    return G->xz ? kx_sub(L, v, kx_const(L, KN_F32, G->xz)) : v;
}

/* Packed entry k of the channel (0: bias, 1 + tap: weight). */
static kn_kx *packed(kn_lower *L, const dw_geom *G, int k) {
    if (G->hold || k == 0) return var(L, G->wv[k]);
    return kx_load(L, G->pk, kx_add(L, var(L, G->vpk), kx_int(L, k)));
}

/* a + x * w: an fma in f32, a multiply and an add in i32 (MVE VMLA by a scalar). */
static kn_kx *dw_mac(kn_lower *L, const dw_geom *G, kn_kx *x, kn_kx *w, kn_kx *a) {
    return G->at == KN_I32 && !G->dot ? kx_add(L, a, kx_mul(L, x, w)) : kx_fma(L, x, w, a);
}

/* Offset of tap kx of group r (of `lanes` outputs) from the tile's first tap. */
static int64_t tap_off(const dw_geom *G, int r, int lanes, int64_t kx) {
    if (G->stage || G->pph) return (int64_t)r * lanes + G->poff[kx % G->sw] + kx / G->sw;
    return (int64_t)r * (G->gstep ? G->gstep : lanes) * G->sw + kx * G->dw;
}

/* One tile of output row oy: `rows` groups of `lanes` outputs from column ox on (group
 * r at ox + r*lanes). crow: test each kernel row against the input's rows; ccol (one
 * scalar output): test each tap's column. skip: the first lanes of a one-vector tile
 * were stored by the tile before (an overlapping tail tile): stored again with the same
 * values, but left out of the pooled sum. */
static void dw_tile(kn_lower *L, const dw_geom *G, kn_kx *oy, kn_kx *ox, int rows, int lanes,
                    bool crow, bool ccol, int skip) {
    /* kernel row ky adds into partial sum ky % np of each group: a tile of one or two
     * vectors (rows of 7-28 outputs) would otherwise be one chain of kh*kw dependent
     * multiply-adds, bound by their latency */
    int acc[DW_MAX_ROWS * DW_MAX_YR], part[DW_MAX_ROWS * DW_MAX_YR][DW_MAX_PARTS];
    /* dot: kernel "rows" are the groups of parts rows, all in the staged words */
    int64_t nky = G->dot ? G->ngr : G->kh;
    int yr = G->yr > 1 ? G->yr : 1; /* output rows: accumulator t * rows + r */
    KN_ASSERT(!G->dot || (!crow && !ccol));
    KN_ASSERT(yr == 1 || (G->mvec && !crow && !ccol && yr <= DW_MAX_YR && rows <= DW_MAX_ROWS));
    int np = ccol || G->mvec ? 1 : DW_MAX_PARTS / rows; /* i32: no latency chain to cut */
    if (np > nky) np = (int)nky;
    if (np < 1) np = 1;
    /* float: from 0, the bias added after the sum (ONNX's and ONNX Runtime's order,
     * lower_conv); integer: from the init (exact) */
    bool after = !G->integer;
    for (int r = 0; r < rows * yr; r++) {
        part[r][0] =
            kl_decl_vec(L, G->at, lanes, after ? kx_const(L, G->at, 0.0) : packed(L, G, 0));
        for (int q = 1; q < np; q++)
            part[r][q] = kl_decl_vec(L, G->at, lanes, kx_const(L, G->at, 0.0));
    }
    kn_kbuf *src = G->stage ? G->xs : G->plane ? G->plane : G->pad ? G->pad : G->d->x;
    kn_kx *col0 = kt_plus(L, kx_mul(L, ox, kx_int(L, G->sw)), -G->pw);
    for (int r = 0; r < rows * yr; r++) acc[r] = part[r][0];
    /* input row q (from oy * sh - ph) of the tile: kernel row ky = q of one output row, or
     * (yr > 1) q in [0, (yr - 1) * sh + (kh - 1) * dh], read by the output rows t whose
     * kernel row ky has t * sh + ky * dh = q */
    int64_t nq = yr == 1 ? nky : (int64_t)(yr - 1) * G->sh + (G->kh - 1) * G->dh + 1;
    /* the padded plane: the rows' first taps at constant distances from the first row's
     * (one pointer a tile for GCC 12, its loads' immediate offsets; MobileNetV2's 24 x 24
     * x 48 layer on the M55 40 -> 38 instructions a vector) */
    int vx0 = -1;
    int64_t roff0 = 0;
    for (int64_t q = 0; q < nq; q++) {
        int64_t ky = q, roff = yr == 1 ? q * G->dh : q;
        int pt[DW_MAX_YR], npair = 0;
        int64_t pky[DW_MAX_YR];
        for (int t = 0; t < yr; t++) {
            int64_t dq = roff - (int64_t)t * G->sh;
            if (yr == 1 || (dq >= 0 && dq % G->dh == 0 && dq / G->dh < G->kh))
                pt[npair] = t, pky[npair++] = yr == 1 ? ky : dq / G->dh;
        }
        if (!npair) continue;
        if (yr == 1)
            for (int r = 0; r < rows; r++) acc[r] = part[r][ky % np];
        kn_kx *iy = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), roff - G->ph);
        /* x[bc, iy, col0] (staged: xs[bc, iy + ph, ox]; words: xs[bc, q, ox] with word row
         * q = (oy*sh + ky*parts) / rstep): the tile's first tap of this row */
        int vx;
        if (G->dot)
            vx = kl_decl(L, KN_I64,
                         kt_mad(L,
                                kt_mad(L, var(L, G->vbc), G->hq,
                                       kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh / G->rstep)),
                                               ky * G->parts / G->rstep)),
                                G->rs, ox));
        else if (G->stage)
            vx = kl_decl(
                L, KN_I64,
                kt_mad(L, kt_mad(L, var(L, G->vbc), G->hs, kt_plus(L, iy, G->ph)), G->rs, ox));
        else if (G->pad && vx0 >= 0)
            vx = kl_decl(L, KN_I64, kt_plus(L, var(L, vx0), (roff - roff0) * G->prs));
        else if (G->pad) {
            vx = vx0 = kl_decl(
                L, KN_I64,
                kt_mad(L, kt_plus(L, iy, G->ph), G->prs, G->pph ? ox : kt_plus(L, col0, G->pw)));
            roff0 = roff;
        } else
            vx =
                kl_decl(L, KN_I64,
                        kt_mad(L, G->plane ? iy : kt_mad(L, var(L, G->vbc), G->h, iy), G->w, col0));
        if (crow) kl_if(L, kt_inside(L, iy, G->h));
        if (ccol) {
            for (int64_t kx = 0; kx < G->kw; kx++) {
                kl_if(L, kt_inside(L, kt_plus(L, col0, kx * G->dw), G->w));
                kn_kx *xv = dw_in(L, G, src, kx_add(L, var(L, vx), kx_int(L, kx * G->dw)), 1);
                kl_set(L, acc[0],
                       dw_mac(L, G, xv, packed(L, G, (int)(1 + ky * G->kw + kx)), var(L, acc[0])));
                kl_end(L);
            }
        } else {
            /* each distinct input offset of the tile's taps, loaded once */
            int64_t off[DW_MAX_OFFS];
            int xin[DW_MAX_OFFS], noff = 0;
            for (int64_t kx = 0; kx < G->kw; kx++)
                for (int r = 0; r < rows; r++) {
                    int64_t o = tap_off(G, r, lanes, kx);
                    int i = 0;
                    while (i < noff && off[i] != o) i++;
                    if (i < noff) continue;
                    kn_kx *at = kx_add(L, var(L, vx), kx_int(L, o));
                    off[noff] = o;
                    xin[noff++] = kl_decl_vec(L, G->at, lanes, dw_in(L, G, src, at, lanes));
                }
            for (int pi = 0; pi < npair; pi++)
                for (int64_t kx = 0; kx < G->kw; kx++) {
                    kn_kx *wk = packed(L, G, (int)(1 + pky[pi] * G->kw + kx));
                    for (int r = 0; r < rows; r++) {
                        int i = 0, ai = pt[pi] * rows + r;
                        while (off[i] != tap_off(G, r, lanes, kx)) i++;
                        kn_kx *a = var(L, acc[ai]);
                        kl_set(L, acc[ai],
                               G->dot ? kx_dot(L, G->dot, a, var(L, xin[i]), wk)
                                      : dw_mac(L, G, var(L, xin[i]), wk, a));
                    }
                }
        }
        if (crow) kl_end(L);
    }
    for (int r = 0; r < rows * yr; r++) { /* pairwise: ((p0 + p1) + (p2 + p3)) + p4 */
        for (int w = 1; w < np; w *= 2)
            for (int q = 0; q + w < np; q += 2 * w)
                kl_set(L, part[r][q], kx_add(L, var(L, part[r][q]), var(L, part[r][q + w])));
        acc[r] = part[r][0];
        if (after) kl_set(L, acc[r], kx_add(L, var(L, acc[r]), packed(L, G, 0)));
    }
    /* y[b, c, oy, ox + r*lanes ..] = epilogue(acc[r]) */
    const kn_contract *d = G->d;
    kn_kx *bc = var(L, G->vbc);
    kn_kx *b = kx_bin(L, KX_DIV, bc, kx_int(L, G->c)), *c = kx_bin(L, KX_MOD, bc, kx_int(L, G->c));
    for (int ar = 0; ar < rows * yr; ar++) {
        int r = ar % rows;
        kn_kx *oyt = ar / rows ? kt_plus(L, oy, ar / rows) : oy;
        kn_kx *oxr = kx_add(L, ox, kx_int(L, (int64_t)r * (G->gstep ? G->gstep : lanes)));
        kn_kx *yi = kt_mad(L, kt_mad(L, bc, G->oh, oyt), G->ow, oxr), *val = var(L, acc[ar]);
        if (d->epi) {
            kn_kx *coord[4] = {b, c, oyt, oxr}, *opnd[KN_EPI_MAX] = {0};
            if (d->nsp == 1) coord[2] = oxr;
            kt_epi_operands(L, d, coord, lanes, opnd);
            val = kl_epilogue(L, d->epi, val, opnd);
        }
        if (G->pool && skip) { /* the new lanes only, into the scalar sum */
            int v = kl_decl_vec(L, KN_F32, lanes, val), s1 = G->sumv[G->nsum - 1];
            val = var(L, v);
            for (int l = skip; l < lanes; l++)
                kl_set(L, s1, kx_add(L, var(L, s1), kx_lane(L, v, l)));
        } else if (G->pool) {
            int i = 0, v = kl_decl_vec(L, KN_F32, lanes, val);
            while (G->sumw[i] != lanes) i++;
            val = var(L, v);
            kl_set(L, G->sumv[i], kx_add(L, var(L, G->sumv[i]), val));
        }
        if (G->integer) /* f64 requantization reads the f32 sum (exact) as it is */
            val = kt_int_store(L, d, &G->rq,
                               G->rq.shift && G->at != KN_I32 ? kx_cast(L, KN_I32, val) : val, c);
        kl_store(L, d->y, yi, val);
    }
}

/* Outputs [ox0, ox0 + n) of row oy, none reading padding along the row: tiles of
 * rows x lanes, a last tile of fewer vectors, then the tail: where the row holds a
 * whole vector, one vector ending at the row's end that overlaps the outputs before it
 * (they are interior too, and storing them again stores the same values: 7 = 4 + 4
 * outputs, 14 = 8 + 8, where halving left 4 + 3 scalars and 8 + 4 + 2 scalars, each a
 * scalar epilogue), else narrower vectors and scalar tiles. */
static void dw_cols(kn_lower *L, const dw_geom *G, kn_kx *oy, int64_t ox0, int64_t n, int lanes,
                    int rows, bool crow) {
    int64_t per = (int64_t)rows * lanes, nt = n / per, rem = n % per, at = ox0 + nt * per;
    if (G->mvec && !G->pool && lanes > 1 && n > lanes && n < 2 * lanes) {
        /* one tile of two groups, the second overlapping the first and ending at the row's
         * end: the taps both read are loaded once (DS-CNN's rows of 5 on the M55: 4 of
         * the 6 input vectors a kernel row) */
        dw_geom g2 = *G;
        g2.gstep = n - lanes;
        dw_tile(L, &g2, oy, kx_int(L, ox0), 2, lanes, crow, false, 0);
        return;
    }
    if (nt) {
        int vt = kl_for(L, nt);
        dw_tile(L, G, oy, kt_mad(L, var(L, vt), per, kx_int(L, ox0)), rows, lanes, crow, false, 0);
        kl_end(L);
    }
    if (rem / lanes) {
        dw_tile(L, G, oy, kx_int(L, at), (int)(rem / lanes), lanes, crow, false, 0);
        at += rem / lanes * lanes;
    }
    if (lanes > 1 && rem % lanes && n >= lanes) {
        int tail = (int)(rem % lanes);
        dw_tile(L, G, oy, kx_int(L, ox0 + n - lanes), 1, lanes, crow, false, lanes - tail);
    } else if (lanes > 1 &&
               rem % lanes) { /* one vector of half the lanes (at least 4), or scalars */
        int half = lanes / 2 >= DW_MIN_LANES ? lanes / 2 : 1;
        dw_cols(L, G, oy, at, rem % lanes, half, half > 1 ? 1 : G->srows, crow);
    }
}

/* Border columns [ox0, ox1) of row oy: one output at a time, every tap tested. */
static void dw_border_cols(kn_lower *L, const dw_geom *G, kn_kx *oy, int64_t ox0, int64_t ox1,
                           bool crow) {
    if (ox1 <= ox0) return;
    int v = kl_for(L, ox1 - ox0);
    dw_tile(L, G, oy, kt_plus(L, var(L, v), ox0), 1, 1, crow, true, 0);
    kl_end(L);
}

/* Outputs per word of a row-word tile: two at stride 1 (bytes b0..b3 at ox - pw: ox
 * reads b0 b1 b2, ox + 1 reads b1 b2 b3), one at stride 2 (b3 unused). */
static int dw_wout(const dw_geom *G) {
    return G->sw == 1 ? 2 : 1;
}

/* Entries of a channel in the row words' table (dw_pack_wrows): the init, then the words
 * A = (w0, w2) and B = (w1, 0) of each kernel row. */
static int64_t dw_wper(const dw_geom *G) {
    return 1 + 2 * G->kh;
}

/* Weight word k of the channel's row words, read in the tile (kx_load_kept): the
 * channel's 6 weight words, the tile's 4 accumulators, its words, the init, 3
 * requantization constants and the pointers do not fit in the M4's 14 registers for the
 * whole row, and GCC 12 hoisting the loads out of the row's loop spills them (a store and
 * a reload each); kept, they are 3 LDRD a tile. The init stays an ordinary load (kept too,
 * it measured worse: MobileNetV1's 24 x 24 layer 363 K -> 436 K instructions). */
static kn_kx *dw_wword(kn_lower *L, const dw_geom *G, int64_t k) {
    return kx_load_kept(L, G->pkw, kx_add(L, var(L, G->vpkw), kx_int(L, k)));
}

/* The word of 4 bytes of row `row` (its first element) from column c, a constant of an
 * edge tile: past the left end (c < 0) the first 4 bytes shifted up by -c bytes, past
 * the right end the last 4 shifted down, zero bytes shifted in (u32 shifts). */
static kn_kx *dw_edge_word(kn_lower *L, const dw_geom *G, kn_kx *row, int64_t c) {
    if (c >= 0 && c + 4 <= G->w) return kx_load_word(L, G->d->x, kt_plus(L, row, c));
    bool left = c < 0;
    kn_kx *w = kx_cast(L, KN_U32, kx_load_word(L, G->d->x, kt_plus(L, row, left ? 0 : G->w - 4)));
    int64_t sh = 8 * (left ? -c : c + 4 - G->w);
    w = kx_bin(L, left ? KX_SHL : KX_SHR, w, kx_const(L, KN_U32, (double)sh));
    /* the bytes shifted in hold the zero point (the padding's value) */
    uint32_t zb = (uint32_t)((int64_t)G->xz & 0xff) * 0x01010101u;
    uint32_t fill = left ? zb & ((1u << sh) - 1) : zb & ~(0xffffffffu >> sh);
    if (fill) w = kx_bin(L, KX_OR, w, kx_const(L, KN_U32, (double)fill));
    return kx_cast(L, KN_I32, w);
}

/* The i32 in [0, 255] under a u8 requantization's result (kl_requant_hi32: a cast of
 * the saturated value, KX_SAT, to u8, maybe after the bounds of a narrower clamp, which
 * stay within [0, 255]). */
static kn_kx *dw_sat_u8(kn_kx *r) {
    KN_ASSERT(r->op == KX_CAST && r->dtype == KN_U8 && r->a[0]->dtype == KN_I32);
    return r->a[0];
}

/* A row-word tile (dw_geom.words): nu words from output column ox of row oy, each
 * word the bytes x[iy, ox*sw - pw + 2u .. + 4) of kernel row ky (u = 0 .. nu), lo =
 * (b0, b2) and hi = (b1, b3) its 16-bit halves, so with the row's weight words A = (w0,
 * w2), B = (w1, 0) (SMLAD: a.lo*b.lo + a.hi*b.hi; SMLADX: a.lo*b.hi + a.hi*b.lo):
 *   output 2u     += dot(lo, A) + dot(hi, B)    (b0 w0 + b2 w2 + b1 w1)
 *   output 2u + 1 += dot(hi, A) + dotx(lo, B)   (b1 w0 + b3 w2 + b2 w1; stride 1 only)
 * At stride 2 (one output a word, word u two bytes after word u - 1) an odd word's b1 is
 * the even word's b3, so its output adds dot(lo, A) + dotx(hi', B) with hi' the word
 * before's odd half: its own odd half is not built (4 outputs: 6 unpacks, not 8).
 * The weight words are read in the tile (dw_wword).
 * The accumulators start at bias - xz * sum (w - wz) and add x * (w - wz): exact in i32.
 * crow: a kernel row outside x is left out where xz == 0, else adds the word of zero
 * points (xz, xz) in both halves, so every tap outside x adds xz * (w - wz). cox >= 0:
 * ox is that constant, an edge tile whose words may reach past the row (dw_edge_word);
 * nst: the outputs stored (the last word's second output may lie past the row). */
static void dw_wtile(kn_lower *L, const dw_geom *G, kn_kx *oy, kn_kx *ox, int nu, bool crow,
                     int64_t cox, int nst) {
    int per = dw_wout(G), n = nu * per, acc[2 * DW_MAX_ROWS];
    bool unsig = G->d->x->dtype == KN_U8;
    int init = kl_decl(L, KN_I32, kx_load(L, G->pkw, var(L, G->vpkw)));
    for (int j = 0; j < n; j++) acc[j] = kl_decl(L, KN_I32, var(L, init));
    /* the first kernel row's first byte (an edge tile: its row's first byte); kernel row ky
     * at a constant distance from it, so GCC 12 keeps one pointer for the tile's rows (with
     * an index of its own each, it kept three: MobileNetV1's 24 x 24 layer 350 K -> 339 K) */
    kn_kx *iy0 = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), -G->ph);
    int vx0 = kl_decl(L, KN_I64,
                      cox >= 0 ? kx_mul(L, kt_mad(L, var(L, G->vbc), G->h, iy0), kx_int(L, G->w))
                               : kt_mad(L, kt_mad(L, var(L, G->vbc), G->h, iy0), G->w,
                                        kt_plus(L, kx_mul(L, ox, kx_int(L, G->sw)), -G->pw)));
    for (int64_t ky = 0; ky < G->kh; ky++) {
        kn_kx *iy = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), ky * G->dh - G->ph);
        if (crow) kl_if(L, kt_inside(L, iy, G->h));
        int vx = kl_decl(L, KN_I64, kt_plus(L, var(L, vx0), ky * G->dh * G->w));
        int wk[2];
        for (int k = 0; k < 2; k++) wk[k] = kl_decl(L, KN_I32, dw_wword(L, G, 1 + 2 * ky + k));
        int hprev = -1; /* stride 2: the even word's odd half (dw_wtile) */
        for (int u = 0; u < nu; u++) {
            int wd = kl_decl(
                L, KN_I32,
                cox >= 0 ? dw_edge_word(L, G, var(L, vx), cox * G->sw - G->pw + 2 * u)
                         : kx_load_word(L, G->d->x, kx_add(L, var(L, vx), kx_int(L, 2 * u))));
            int lo = kl_decl(L, KN_I32, kx_unpack16(L, var(L, wd), false, unsig));
            int a0 = acc[u * per];
            kl_set(L, a0, kx_dot(L, KN_DOT_S16X2, var(L, a0), var(L, lo), var(L, wk[0])));
            if (per == 1 && (u & 1)) {
                /* b1 of this word is b3 of the word before (2 bytes back): hprev's high
                 * half, so b1 w1 = dotx(hprev, B) and this word's odd half is not built */
                kl_set(L, a0, kx_dot(L, KN_DOT_S16X2X, var(L, a0), var(L, hprev), var(L, wk[1])));
                continue;
            }
            int hi = kl_decl(L, KN_I32, kx_unpack16(L, var(L, wd), true, unsig));
            hprev = hi;
            kl_set(L, a0, kx_dot(L, KN_DOT_S16X2, var(L, a0), var(L, hi), var(L, wk[1])));
            if (per == 2) {
                int a1 = acc[u * per + 1];
                kl_set(L, a1, kx_dot(L, KN_DOT_S16X2, var(L, a1), var(L, hi), var(L, wk[0])));
                kl_set(L, a1, kx_dot(L, KN_DOT_S16X2X, var(L, a1), var(L, lo), var(L, wk[1])));
            }
        }
        if (crow && G->xz != 0) { /* a row of padding: every byte the zero point */
            kl_else(L);
            int64_t z16 = (int64_t)G->xz & 0xffff;
            kn_kx *zw = kx_const(L, KN_I32, (double)(int32_t)(uint32_t)(z16 | z16 << 16));
            int wz[2]; /* zw has xz in both halves: dot(zw, B) = xz w1 */
            for (int k = 0; k < 2; k++) wz[k] = kl_decl(L, KN_I32, dw_wword(L, G, 1 + 2 * ky + k));
            for (int j = 0; j < n; j++) {
                int a = acc[j];
                kl_set(L, a, kx_dot(L, KN_DOT_S16X2, var(L, a), zw, var(L, wz[0])));
                kl_set(L, a, kx_dot(L, KN_DOT_S16X2, var(L, a), zw, var(L, wz[1])));
            }
        }
        if (crow) kl_end(L);
    }
    kn_kx *bc = var(L, G->vbc), *c = kx_bin(L, KX_MOD, bc, kx_int(L, G->c));
    /* u8 outputs 4 at a time as one word store (kl_store_word): the requantized values'
     * saturation (KX_SAT, USAT) leaves each in [0, 255], so the word is 3 ORs of shifted
     * values and one STR, where GCC 12 merged the 4 byte stores as a MOV, 4 BFI and an STR;
     * joined last first, (word << 8) | r, where r0 | r1 << 8 | r2 << 16 | r3 << 24 took GCC
     * an LSL more (MobileNetV1 int8 on the M4, its 14 row-word kernels 1.633 -> 1.614 M) */
    int nw = G->d->y->dtype == KN_U8 && G->rq.round ? nst / 4 : 0;
    for (int q = 0; q < nw; q++) {
        kn_kx *word = NULL;
        for (int k = 3; k >= 0; k--) { /* the last first: (word << 8) | r, one ORR each */
            kn_kx *r = dw_sat_u8(kt_int_store(L, G->d, &G->rq, var(L, acc[4 * q + k]), c));
            r = kx_cast(L, KN_U32, r);
            word = word ? kx_bin(L, KX_OR, kx_bin(L, KX_SHL, word, kx_const(L, KN_U32, 8)), r) : r;
        }
        kl_store_word(L, G->d->y, kt_mad(L, kt_mad(L, bc, G->oh, oy), G->ow, kt_plus(L, ox, 4 * q)),
                      kx_cast(L, KN_I32, word));
    }
    for (int j = 4 * nw; j < nst; j++) {
        kn_kx *yi = kt_mad(L, kt_mad(L, bc, G->oh, oy), G->ow, kt_plus(L, ox, j));
        kn_kx *val = var(L, acc[j]);
        if (!G->rq.shift) val = kx_cast(L, KN_F32, val); /* exact: below 2^24 */
        kl_store(L, G->d->y, yi, kt_int_store(L, G->d, &G->rq, val, c));
    }
}

/* Interior outputs [xlo, xhi) of row oy with row words: tiles of nu words up to xw,
 * a last tile of fewer, then the outputs left (an odd one at stride 1, those whose
 * words would leave the row) in the f32 scalar tiles. */
static void dw_wcols(kn_lower *L, const dw_geom *G, kn_kx *oy, bool crow) {
    int64_t per = (int64_t)G->nu * dw_wout(G), n = G->xw - G->xlo, nt = n / per;
    int64_t at = G->xlo + nt * per;
    if (nt) {
        int vt = kl_for(L, nt);
        dw_wtile(L, G, oy, kt_mad(L, var(L, vt), per, kx_int(L, G->xlo)), G->nu, crow, -1,
                 (int)per);
        kl_end(L);
    }
    int rest = (int)((n % per) / dw_wout(G));
    if (rest) {
        dw_wtile(L, G, oy, kx_int(L, at), rest, crow, -1, rest * dw_wout(G));
        at += rest * dw_wout(G);
    }
    if (G->xhi > at) dw_cols(L, G, oy, at, G->xhi - at, 1, G->srows, crow);
}

/* Whether the words of nw words from output o stay inside the row (no edge word). */
static bool dw_winside(const dw_geom *G, int64_t o, int nw) {
    int64_t c0 = o * G->sw - G->pw, c1 = (o + (int64_t)(nw - 1) * dw_wout(G)) * G->sw - G->pw;
    return c0 >= 0 && c1 + 4 <= G->w;
}

/* Every output of row oy in row words (dw_geom.wedge): constant edge tiles at the left
 * until the tiles' words are inside the row, a loop of such tiles, then constant edge
 * tiles to the row's end (the last may compute an output past it, not stored). */
static void dw_wrow(kn_lower *L, const dw_geom *G, kn_kx *oy, bool crow) {
    int64_t opw = dw_wout(G), per = G->nu * opw, o = 0;
    while (o < G->ow && !dw_winside(G, o, G->nu)) {
        int64_t nw = (G->ow - o + opw - 1) / opw;
        if (nw > G->nu) nw = G->nu;
        int64_t nst = nw * opw < G->ow - o ? nw * opw : G->ow - o;
        dw_wtile(L, G, oy, kx_int(L, o), (int)nw, crow, o, (int)nst);
        o += nw * opw;
    }
    int64_t nt = 0;
    while (o + (nt + 1) * per <= G->ow && dw_winside(G, o + nt * per, G->nu)) nt++;
    if (nt) {
        int vt = kl_for(L, nt);
        dw_wtile(L, G, oy, kt_mad(L, var(L, vt), per, kx_int(L, o)), G->nu, crow, -1, (int)per);
        kl_end(L);
        o += nt * per;
    }
    while (o < G->ow) {
        int64_t nw = (G->ow - o + opw - 1) / opw;
        if (nw > G->nu) nw = G->nu;
        int64_t nst = nw * opw < G->ow - o ? nw * opw : G->ow - o;
        dw_wtile(L, G, oy, kx_int(L, o), (int)nw, crow, o, (int)nst);
        o += nw * opw;
    }
}

/* Output rows [oy0, oy1); crow: they read padding above or below. */
static void dw_rows(kn_lower *L, const dw_geom *G, int64_t oy0, int64_t oy1, bool crow) {
    if (oy1 <= oy0) return;
    if (G->mvec && !crow && G->yrows > 1 && oy1 - oy0 >= G->yrows) {
        /* tiles of yrows output rows (dw_geom.yrows); the border columns row by row, the
         * rows left over one at a time below */
        int64_t nt = (oy1 - oy0) / G->yrows;
        int vt = kl_for(L, nt);
        kn_kx *oy = kt_mad(L, var(L, vt), G->yrows, kx_int(L, oy0));
        dw_geom g = *G;
        g.yr = G->yrows;
        for (int t = 0; t < G->yrows; t++) dw_border_cols(L, G, kt_plus(L, oy, t), 0, G->xlo, crow);
        if (G->xhi > G->xlo) dw_cols(L, &g, oy, G->xlo, G->xhi - G->xlo, G->lanes, G->rows, crow);
        for (int t = 0; t < G->yrows; t++)
            dw_border_cols(L, G, kt_plus(L, oy, t), G->xhi, G->ow, crow);
        kl_end(L);
        oy0 += nt * G->yrows;
        if (oy1 <= oy0) return;
    }
    int v = kl_for(L, oy1 - oy0);
    kn_kx *oy = kt_plus(L, var(L, v), oy0);
    if (G->wedge) {
        dw_wrow(L, G, oy, crow);
        kl_end(L);
        return;
    }
    dw_border_cols(L, G, oy, 0, G->xlo, crow);
    if (G->words && (!crow || G->wrows))
        dw_wcols(L, G, oy, crow);
    else if (G->xhi > G->xlo)
        dw_cols(L, G, oy, G->xlo, G->xhi - G->xlo, G->lanes, G->rows, crow);
    dw_border_cols(L, G, oy, G->xhi, G->ow, crow);
    kl_end(L);
}

/* Distinct input offsets a scalar tile of r outputs reads in one kernel row. */
static int distinct_taps(const dw_geom *G, int r) {
    int64_t n = 0, off[DW_MAX_OFFS];
    for (int64_t kx = 0; kx < G->kw; kx++)
        for (int i = 0; i < r; i++) {
            int64_t o = tap_off(G, i, 1, kx), j = 0;
            while (j < n && off[j] != o) j++;
            if (j == n) off[n++] = o;
        }
    return (int)n;
}

/* Tile sizes from the register count: the vector tile keeps `rows` accumulators and
 * the weights (the inputs are operands of the multiply-adds); the scalar tile also
 * holds one kernel row of inputs. Weights stay in locals when they fit beside them. */
static void dw_choose(kn_lower *L, dw_geom *G, const kn_sched *ov) {
    int regs = kl_vector_registers(L), taps = (int)(G->kh * G->kw);
    int lanes = kl_lanes(L, KN_F32);
    G->lanes = lanes > 1 && (G->sw == 1 || G->stage) ? lanes : 1;
    /* rows narrower than the target's vectors (MobileNet's and EfficientNet's 14x14 and
     * 7x7 layers): narrower vectors, down to DW_MIN_LANES */
    while (G->lanes > DW_MIN_LANES && G->lanes > G->xhi - G->xlo) G->lanes /= 2;
    G->srows = 1;
    G->hold = false;
    for (int r = DW_MAX_ROWS; r >= 1 && G->srows == 1; r--)
        if (taps + r + distinct_taps(G, r) + 1 <= regs) G->srows = r, G->hold = true;
    if (G->srows < 2)
        for (int r = DW_MAX_ROWS; r >= 1; r--)
            if (r + distinct_taps(G, r) + 2 <= regs) {
                G->srows = r;
                G->hold = false;
                break;
            }
    if (G->lanes > 1) {
        G->rows = 4;
        G->hold = taps + (G->rows > DW_MAX_PARTS ? G->rows : DW_MAX_PARTS) + 2 <= regs;
    } else {
        G->rows = G->srows;
    }
    if (ov && ov->tile_rows) {
        int r = ov->tile_rows < DW_MAX_ROWS ? ov->tile_rows : DW_MAX_ROWS;
        G->rows = r;
        if (G->lanes == 1) G->srows = r;
    }
}

/* Whether to stage the channels (pad: the schedule's choice, 0 none): on CPUs with
 * vectors, for undilated convolutions whose rows cannot be vector tiles in place:
 * strided ones, and those whose border columns (scalar, a test per tap) are more than
 * an eighth of the row (5x5 kernels on 14x14 and 7x7 rows). Not on microcontrollers:
 * the staged copy is an arena buffer the size of the padded input. */
static bool dw_stage_suits(kn_lower *L, const dw_geom *G, bool cpu, int pad) {
    if (!cpu || kl_lanes(L, KN_F32) < DW_MIN_LANES || G->dh != 1 || G->dw != 1 ||
        G->sw > DW_MAX_STRIDE)
        return false;
    if (pad) return pad == 2;
    int64_t inner = G->xhi > G->xlo ? G->xhi - G->xlo : 0;
    /* integer: the copy converts each input once (x - xz in f32), where the tiles would
     * convert it at every load of every kernel row */
    return G->integer || G->sw > 1 || 8 * (G->ow - inner) > G->ow;
}

/* The staged channel's shape: the hs x ws padded window the outputs read, each row
 * split into sw column phases. */
static void dw_stage_geom(dw_geom *G) {
    int64_t ws = (G->ow - 1) * G->sw + G->kw;
    G->hs = (G->oh - 1) * G->sh + G->kh;
    G->rs = kt_phases(ws, G->sw, G->pwid, G->poff);
    G->ylo = 0, G->yhi = G->oh, G->xlo = 0, G->xhi = G->ow;
}

/* xs[bc] = the padded window of channel bc, columns in phases: rows above and below the
 * input zero, and in each input row each phase's left padding, its input columns
 * (x[.., p + j*sw - pw]) and right padding. */
static void dw_stage_copy(kn_lower *L, const dw_geom *G) {
    int vb = kl_decl(L, KN_I64, kx_mul(L, var(L, G->vbc), kx_int(L, G->hs * G->rs)));
    int64_t top = kt_clamp(G->ph, 0, G->hs), rows = kt_clamp(G->hs - top, 0, G->h);
    kt_zero(L, G->xs, var(L, vb), top * G->rs);
    if (rows) {
        int v = kl_for(L, rows);
        int row = kl_decl(L, KN_I64, kt_mad(L, kt_plus(L, var(L, v), top), G->rs, var(L, vb)));
        int xr = kl_decl(L, KN_I64,
                         kt_mad(L, kt_mad(L, var(L, G->vbc), G->h, var(L, v)), G->w, kx_int(L, 0)));
        for (int64_t p = 0; p < G->sw; p++) {
            int64_t n = G->pwid[p], jlo, jhi;
            kt_phase_inside(p, G->sw, G->pw, G->w, n, &jlo, &jhi);
            kn_kx *at = kt_plus(L, var(L, row), G->poff[p]);
            kt_zero(L, G->xs, at, jlo);
            int64_t from = p + jlo * G->sw - G->pw; /* input column of the first copied */
            if (jhi > jlo && G->sw == 1 && !G->integer) {
                kl_copy(L, G->xs, kt_plus(L, at, jlo), G->d->x, kt_plus(L, var(L, xr), from),
                        kx_int(L, jhi - jlo));
            } else if (jhi > jlo) {
                int j = kl_for(L, jhi - jlo);
                kn_kx *xi = kt_mad(L, var(L, j), G->sw, kt_plus(L, var(L, xr), from));
                kl_store(L, G->xs, kx_add(L, kt_plus(L, at, jlo), var(L, j)),
                         dw_in(L, G, G->d->x, xi, 1));
                kl_end(L);
            }
            kt_zero(L, G->xs, kt_plus(L, at, jhi), n - jhi);
        }
        kl_end(L);
    }
    kt_zero(L, G->xs, kt_plus(L, var(L, vb), (top + rows) * G->rs), (G->hs - top - rows) * G->rs);
}

/* The staged words' geometry (dw_geom.dot): word rows step by the stride where it
 * divides `parts` (every row a tile reads is then a multiple of it: stride 2 stages half
 * the rows), and run to the last one an output reads. */
static void dw_words_geom(dw_geom *G) {
    G->parts = G->dot == KN_DOT_S16X2 ? 2 : 4;
    G->bits = 32 / G->parts;
    G->ngr = (G->kh + G->parts - 1) / G->parts;
    G->rstep = G->parts % G->sh == 0 ? G->sh : 1;
    G->hq = ((G->oh - 1) * G->sh + (G->ngr - 1) * G->parts) / G->rstep + 1;
}

/* xs[bc, q, at .. at + n) = the padding word (xz + xoff in every part) */
static void dw_fill_pad(kn_lower *L, const dw_geom *G, kn_kx *at, int64_t n) {
    if (n <= 0) return;
    kn_kx *z[4];
    for (int k = 0; k < G->parts; k++) z[k] = kx_const(L, KN_I32, (double)(G->xzc - G->xoff));
    int v = kl_for(L, n);
    kl_store(L, G->xs, kx_add(L, at, var(L, v)), kt_dot_word(L, G->bits, G->xoff, z, G->parts));
    kl_end(L);
}

/* Word row q of channel bc (row: its first element in xs), its parts k whose padded row
 * q*rstep + k is an input row marked in `inside` (bit k; iy0: the input row of part 0),
 * the others padding: each phase's padding columns, then its input columns, in vectors
 * of the target's lanes: contiguous loads at stride 1, strided (deinterleaving) loads of
 * every sw-th byte at strides 2-4 (kx_vload_strided: LLVM loads the span in whole vectors
 * and shuffles, where one word at a time took sw byte loads per word and part). */
static void dw_word_row(kn_lower *L, const dw_geom *G, kn_kx *row, kn_kx *iy0, unsigned inside) {
    if (!inside) { /* every part padding */
        dw_fill_pad(L, G, row, G->rs);
        return;
    }
    int xr =
        kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, var(L, G->vbc), G->h, iy0), G->w, kx_int(L, 0)));
    for (int64_t p = 0; p < G->sw; p++) {
        int64_t n = G->pwid[p], jlo, jhi;
        kt_phase_inside(p, G->sw, G->pw, G->w, n, &jlo, &jhi);
        kn_kx *at = kt_plus(L, row, G->poff[p]);
        dw_fill_pad(L, G, at, jlo);
        int64_t from = p + jlo * G->sw - G->pw; /* input column of the first copied */
        /* vectors of the target's lanes, or fewer (down to DW_MIN_LANES) on narrow rows,
         * the last one ending at the row's end (overlapping the one before: it stores the
         * same words again); a strided vector reads only the columns it converts */
        int64_t cols = jhi - jlo, lanes = kl_lanes(L, KN_I32);
        while (lanes > DW_MIN_LANES && lanes > cols) lanes /= 2;
        if (lanes < DW_MIN_LANES || lanes > cols) lanes = 1;
        int64_t nv = cols / lanes;
        for (int pass = 0; pass < 2; pass++) { /* whole vectors, then the overlapping one */
            if (pass ? cols % lanes == 0 : nv == 0) continue;
            int j = pass ? -1 : kl_for(L, nv);
            kn_kx *jj = pass ? kx_int(L, cols - lanes) : kx_mul(L, var(L, j), kx_int(L, lanes));
            kn_kx *vals[4];
            for (int k = 0; k < G->parts; k++) {
                if (!(inside >> k & 1)) {
                    vals[k] = kx_const(L, KN_I32, (double)(G->xzc - G->xoff));
                    continue;
                }
                kn_kx *xi = kt_mad(L, jj, G->sw, kt_plus(L, var(L, xr), k * G->w + from));
                vals[k] = lanes == 1   ? kx_load(L, G->d->x, xi)
                          : G->sw == 1 ? kx_vload(L, G->d->x, xi, (int)lanes)
                                       : kx_vload_strided(L, G->d->x, xi, (int)lanes, (int)G->sw);
            }
            kl_store(L, G->xs, kx_add(L, kt_plus(L, at, jlo), jj),
                     kt_dot_word(L, G->bits, G->xoff, vals, G->parts));
            if (!pass) kl_end(L);
        }
        dw_fill_pad(L, G, kt_plus(L, at, jhi), n - jhi);
    }
}

/* xs[bc] = channel bc as words of `parts` padded rows (dw_geom.dot): the word rows whose
 * parts are all input rows in one loop, the others (padding above and below) one by
 * one with their parts' rows known. */
static void dw_stage_words(kn_lower *L, const dw_geom *G) {
    int vb = kl_decl(L, KN_I64, kx_mul(L, var(L, G->vbc), kx_int(L, G->hq * G->rs)));
    /* word rows with parts [0, parts) all inside: ph <= q*rstep, q*rstep + parts <= ph + h */
    int64_t qlo = kt_clamp(-kt_floor_div(-G->ph, G->rstep), 0, G->hq);
    int64_t qhi = kt_clamp(kt_floor_div(G->ph + G->h - G->parts, G->rstep) + 1, qlo, G->hq);
    for (int64_t q = 0; q < G->hq; q++) {
        if (q == qlo && qhi > qlo) {
            int v = kl_for(L, qhi - qlo);
            kn_kx *qq = kt_plus(L, var(L, v), qlo);
            int row = kl_decl(L, KN_I64, kt_mad(L, qq, G->rs, var(L, vb)));
            dw_word_row(L, G, var(L, row), kt_plus(L, kx_mul(L, qq, kx_int(L, G->rstep)), -G->ph),
                        (1u << G->parts) - 1);
            kl_end(L);
            q = qhi - 1;
            continue;
        }
        unsigned inside = 0;
        for (int k = 0; k < G->parts; k++) {
            int64_t iy = q * G->rstep + k - G->ph;
            if (iy >= 0 && iy < G->h) inside |= 1u << k;
        }
        int64_t iy0 = q * G->rstep - G->ph;
        dw_word_row(L, G, kt_plus(L, var(L, vb), q * G->rs), kx_int(L, iy0), inside);
    }
}

/* The running sums of a pooled channel, one per tile width dw_cols can use. */
static void dw_pool_begin(kn_lower *L, dw_geom *G) {
    G->nsum = 0;
    for (int w = G->lanes; w > 1; w = w / 2 >= DW_MIN_LANES ? w / 2 : 1) G->sumw[G->nsum++] = w;
    G->sumw[G->nsum++] = 1;
    for (int i = 0; i < G->nsum; i++)
        G->sumv[i] = kl_decl_vec(L, KN_F32, G->sumw[i], kx_const(L, KN_F32, 0.0));
}

/* pool[bc] = (every lane of every sum) / (oh*ow); with part, part[at] = that sum */
static void dw_pool_end(kn_lower *L, const dw_geom *G, kn_kbuf *part, kn_kx *at) {
    kn_kx *t = NULL;
    for (int i = 0; i < G->nsum; i++)
        for (int l = 0; l < G->sumw[i]; l++) {
            kn_kx *e = G->sumw[i] > 1 ? kx_lane(L, G->sumv[i], l) : var(L, G->sumv[i]);
            t = t ? kx_add(L, t, e) : e;
        }
    if (part) { /* the band form: the band's sums, divided after every band */
        kl_store(L, part, at, t);
        return;
    }
    kl_store(L, G->pool, var(L, G->vbc),
             kx_bin(L, KX_DIV, t, kx_const(L, KN_F32, (double)(G->oh * G->ow))));
}

/* ---- channels-last: vectors along the channels ----
 *
 * A depthwise convolution whose x and y are both dense NHWC (kn.layout, passes/layout.c
 * keeps an inverted residual block's expanded tensors so) has its channels contiguous:
 * a vector of `lanes` consecutive channels at one pixel is one load, whatever the stride,
 * and the weights of a tap over those channels are one vector too. The tile is R
 * neighbouring outputs of one row, one vector of channels each:
 *
 *   for (b, channel block cb):                   parallel
 *     wv[k] = packed[cb][k][0..lanes)            bias and kh*kw weight vectors, held
 *     for oy in each of top border, interior, bottom border rows:
 *       for tiles of R outputs along the row (edge tiles at constant columns):
 *         acc[r] = 0
 *         for ky (a border row: if 0 <= iy < h), kx (unrolled):
 *           acc[r] = fma(x[b, iy, (ox + r)*sw + kx*dw - pw, cb*lanes ..], wv[1 + ky*kw + kx],
 *                        acc[r])           an edge tile leaves out the taps outside x
 *         y[b, oy, ox + r, cb*lanes ..] = epilogue(acc[r] + wv[0])   the bias after the sum
 *
 * Every output row fills every lane (7x7 and 14x14 rows lost lanes or went scalar in
 * NCHW) and no copy is staged for a stride. Channels past the last full block run in
 * vectors of half the lanes (down to DW_MIN_LANES), then one at a time. Weights are
 * packed at compile time per block, bias first: [c0 * (1 + taps) + k * width + l].
 * A GlobalAveragePool of y alone (squeeze-and-excite's squeeze, kn.layout [1, 0]) is
 * computed here: each tile's outputs summed pairwise into the block's running vector,
 * stored divided by oh*ow after the block's last row, and the pool's kernel emptied.
 *
 * Band form (dwc_by_bands), on CPUs for inputs of 14x14 and up: the parallel loop runs
 * over bands of rb output rows instead of channel blocks,
 *
 *   for (b, band):                               parallel, split as it stands
 *     for channel block cb:
 *       wv[k] = packed[cb][k][0..lanes)
 *       for oy in band*rb + [0, rb): the row's tiles as above (a border row: row tests)
 *       part[b][band][cb*lanes ..] = the block's sum over its band (with a squeeze)
 *   pool[b][c] = (part[b][0][c] + part[b][1][c] + ...) / (oh*ow)    with a squeeze
 *
 * so that each thread reads the rows of x that it wrote: the expansions before these
 * kernels split by pixel rows (passes/tile.c, passes/parallel.c), as do the projections
 * after them, while split by channel blocks each thread read half of its input from the
 * other core and left half of its output there (MobileNetV2's 56x56 kernel took twice
 * its 1-thread CPU time at 2 threads in the VM's slow state, docs/benchmarks.md). Each
 * output is computed by the same operations in the same order: the same bits. A squeeze
 * computed here sums each band's rows into its own partial sums, added after the bands'
 * loop (the means round differently from the channel-block form's one running sum): split
 * by channel blocks, EfficientNet-B0's 112x112 -> 56x56 stride-2 kernel read each pixel's
 * 96 channels (384 bytes) once per block of 16, 6 passes over 4.8 MB, and took 0.72 ms of
 * thread CPU time against 0.46 ms in bands (Intel Xeon, docs/benchmarks.md). */

/* The band forms' squeeze (dwc_by_bands, dw_build): part[b][band][c] holds each band's
 * sums, nb bands; pool[b*c + ch] = (the bands' sums added in band order) / count, after
 * every band. */
static void dw_pool_bands(kn_lower *L, kn_kbuf *pool, kn_kbuf *part, int64_t n, int64_t c,
                          int64_t nb, int64_t count) {
    int vp = kl_for(L, n * c);
    kn_kx *pb = n > 1 ? kx_bin(L, KX_DIV, var(L, vp), kx_int(L, c)) : kx_int(L, 0);
    kn_kx *pc = n > 1 ? kx_bin(L, KX_MOD, var(L, vp), kx_int(L, c)) : var(L, vp);
    kn_kx *base = kx_add(L, kx_mul(L, pb, kx_int(L, nb * c)), pc);
    int s = kl_decl(L, KN_F32, kx_load(L, part, base));
    for (int64_t j = 1; j < nb; j++)
        kl_set(L, s, kx_add(L, var(L, s), kx_load(L, part, kt_plus(L, base, j * c))));
    kl_store(L, pool, var(L, vp), kx_bin(L, KX_DIV, var(L, s), kx_const(L, KN_F32, (double)count)));
    kl_end(L);
}

typedef struct dwc_geom {
    const kn_contract *d;
    int64_t c, h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t ylo, yhi, xlo, xhi;
    int R;       /* outputs of a full tile */
    bool hold;   /* weights held in vector locals */
    kn_kbuf *pk; /* packed bias and weights */
    int wv[DW_MAX_TAPS + 1];
    kn_kbuf *pool; /* [n*c] means of y (a GlobalAveragePool computed here), or NULL */
    int psum;      /* the block's running sum of its outputs (pool) */
    kn_kbuf *part; /* band form with a pool: [n][bands][c] each band's sums, or NULL */
    /* bands of one row with a pool (dwc_tile stores them): [n][oh][tiles a row][c] each tile's
     * sum, added in the 1-thread order after every band (dwc_pool_tiles), or NULL */
    kn_kbuf *tpart;
    /* integer (8-bit) convolutions: f32 on exact integers as the NCHW tiles compute
     * them (passes/tile_int.c): each input converted less its zero point, pk holds the
     * bias and w - wz, the sum converted to i32 (exact) and requantized as a vector */
    bool integer;
    double xz;
    kt_rq rq; /* tables padded past c to whole vectors */
    /* in place on scalar microcontrollers (dwc_plane_suits): one channel at a time, its
     * h x w values gathered here first and the tiles read them, so y may be written
     * over x (kn_kernel.staged_in) */
    kn_kbuf *plane;  /* [h][w] of x's dtype, or NULL */
    bool rows_outer; /* band form: rows outside the channel blocks (dwc_by_bands) */
} dwc_geom;

static kn_kx *dwc_ld(kn_lower *L, kn_kbuf *b, kn_kx *at, int width) {
    return width > 1 ? kx_vload(L, b, at, width) : kx_load(L, b, at);
}

/* Entry k (0: bias, 1 + tap: weight) of the block of `width` channels from c0. */
static kn_kx *dwc_w(kn_lower *L, const dwc_geom *G, kn_kx *c0, int width, int k) {
    if (G->hold && G->wv[k] >= 0) return var(L, G->wv[k]);
    return dwc_ld(L, G->pk, kt_plus(L, kx_mul(L, c0, kx_int(L, 1 + G->kh * G->kw)), k * width),
                  width);
}

/* Whether every epilogue operand of d is one value or one per channel (numel c). */
static bool dwc_operands_ok(const kn_contract *d) {
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o) continue;
        if (o->dtype != KN_F32 || (o->numel != 1 && o->numel != d->c)) return false;
        int ca = o->rank - 3; /* the channel axis of the logical NCHW output in o */
        for (int i = 0; i < o->rank && o->numel != 1; i++)
            if (i != ca && o->dims[i] != 1) return false;
    }
    return true;
}

static bool dwc_suits(const kn_contract *d) {
    int64_t xs[4], ys[4];
    kn_contract_strides(d, xs, ys);
    bool integer = kn_contract_is_int(d) && kt_dw_int_exact(d);
    return d->kind == KN_CONTRACT_CONV && d->nsp == 2 && d->group == d->c && d->m == d->c &&
           (integer || (d->x->dtype == KN_F32 && d->y->dtype == KN_F32 && kt_f32_const(d->w) &&
                        (!d->bias || kt_f32_const(d->bias)))) &&
           d->kh * d->kw <= DW_MAX_TAPS && d->ph >= 0 && d->pw >= 0 && d->peh >= 0 && d->pew >= 0 &&
           xs[1] == 1 && xs[3] == d->c && xs[2] == d->w_ * d->c && xs[0] == d->h * d->w_ * d->c &&
           ys[1] == 1 && ys[3] == d->c && ys[2] == d->ow * d->c && ys[0] == d->oh * d->ow * d->c &&
           dwc_operands_ok(d);
}

/* One tile: n outputs of row oy from column ox, channels [c0, c0 + width). edge >= 0:
 * ox is that constant and taps outside the input's columns are left out; crow: each
 * kernel row tested against the input's rows. */
static void dwc_tile(kn_lower *L, const dwc_geom *G, kn_kx *b, kn_kx *c0, int width, kn_kx *oy,
                     kn_kx *ox, int n, int64_t edge, bool crow) {
    const kn_contract *d = G->d;
    int acc[DW_MAX_ROWS * 2];
    /* float: from 0, the bias added after the sum (lower_conv); integer: from the init */
    for (int r = 0; r < n; r++)
        acc[r] = kl_decl_vec(L, KN_F32, width,
                             G->integer ? dwc_w(L, G, c0, width, 0) : kx_const(L, KN_F32, 0.0));
    /* integer: the init holds bias - xz * sum (w - wz) over every tap, so a tap inside x
     * adds x * (w - wz) and one outside adds xz * (w - wz) back (a padding tap
     * contributes nothing): exact, every partial sum bounded by kt_dw_int_exact's bound */
    kn_kx *xzv = G->integer && G->xz ? kx_const(L, KN_F32, G->xz) : NULL;
    for (int64_t ky = 0; ky < G->kh; ky++) {
        kn_kx *iy = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), ky * G->dh - G->ph);
        if (crow) kl_if(L, kt_inside(L, iy, G->h));
        /* x[b, iy, ox*sw - pw, c0] (plane: plane[iy, ox*sw - pw]) */
        int64_t cs = G->plane ? 1 : G->c; /* elements between columns */
        int vx =
            G->plane
                ? kl_decl(L, KN_I64,
                          kt_plus(L, kt_mad(L, iy, G->w, kx_mul(L, ox, kx_int(L, G->sw))), -G->pw))
                : kl_decl(L, KN_I64,
                          kx_add(L,
                                 kt_mad(L,
                                        kt_plus(L,
                                                kt_mad(L, kt_mad(L, b, G->h, iy), G->w,
                                                       kx_mul(L, ox, kx_int(L, G->sw))),
                                                -G->pw),
                                        G->c, kx_int(L, 0)),
                                 c0));
        for (int64_t kx = 0; kx < G->kw; kx++) {
            kn_kx *wk = dwc_w(L, G, c0, width, (int)(1 + ky * G->kw + kx));
            for (int r = 0; r < n; r++) {
                int64_t col = r * G->sw + kx * G->dw; /* from ox*sw - pw */
                if (edge >= 0) {
                    int64_t ix = (edge + r) * G->sw + kx * G->dw - G->pw;
                    if (ix < 0 || ix >= G->w) {
                        if (xzv) kl_set(L, acc[r], kx_fma(L, xzv, wk, var(L, acc[r])));
                        continue;
                    }
                }
                kn_kx *xv =
                    dwc_ld(L, G->plane ? G->plane : d->x, kt_plus(L, var(L, vx), col * cs), width);
                if (G->integer) xv = kx_cast(L, KN_F32, xv); /* an exact f32 integer */
                kl_set(L, acc[r], kx_fma(L, xv, wk, var(L, acc[r])));
            }
        }
        if (crow && xzv) { /* a row outside x: each tap adds xz * (w - wz) back */
            kl_else(L);
            for (int64_t kx = 0; kx < G->kw; kx++) {
                kn_kx *wk = dwc_w(L, G, c0, width, (int)(1 + ky * G->kw + kx));
                for (int r = 0; r < n; r++) kl_set(L, acc[r], kx_fma(L, xzv, wk, var(L, acc[r])));
            }
        }
        if (crow) kl_end(L);
    }
    kn_kx *out[DW_MAX_ROWS * 2];
    for (int r = 0; r < n; r++) {
        kn_kx *oxr = kt_plus(L, ox, r), *val = var(L, acc[r]);
        if (!G->integer) val = kx_add(L, val, dwc_w(L, G, c0, width, 0));
        if (G->integer) /* exact: the sum is an integer below 2^24 */
            val = kt_int_store_vec(L, d, &G->rq, kx_cast_inrange(L, KN_I32, val), c0, width);
        if (d->epi) {
            kn_kx *opnd[KN_EPI_MAX] = {0};
            for (int k = 0; k < d->epi->n; k++) {
                kn_kbuf *o = d->operand[k];
                if (o)
                    opnd[k] = o->numel == 1 ? kx_load(L, o, kx_int(L, 0)) : dwc_ld(L, o, c0, width);
            }
            val = kl_epilogue(L, d->epi, val, opnd);
        }
        if (G->pool) { /* the value is read twice: held in the accumulator */
            kl_set(L, acc[r], val);
            val = var(L, acc[r]);
        }
        out[r] = val;
        kn_kx *yi = kx_add(
            L, kt_mad(L, kt_mad(L, kt_mad(L, b, G->oh, oy), G->ow, oxr), G->c, kx_int(L, 0)), c0);
        kl_store(L, d->y, yi, val);
    }
    if (G->pool) { /* the tile's outputs summed pairwise, then into the block's sum */
        for (int step = 1; step < n; step *= 2)
            for (int r = 0; r + step < n; r += 2 * step) out[r] = kx_add(L, out[r], out[r + step]);
        if (G->tpart) { /* tpart[b][oy][ox / R][c0 ..]: the sum made after the bands */
            int64_t ntl = (G->ow + G->R - 1) / G->R;
            kn_kx *tix = kx_bin(L, KX_DIV, ox, kx_int(L, G->R));
            kl_store(
                L, G->tpart,
                kx_add(L,
                       kt_mad(L, kt_mad(L, kt_mad(L, b, G->oh, oy), ntl, tix), G->c, kx_int(L, 0)),
                       c0),
                out[0]);
        } else {
            kl_set(L, G->psum, kx_add(L, var(L, G->psum), out[0]));
        }
    }
}

/* The tiles of output row oy of one channel block, from column 0; those reaching
 * outside [xlo, xhi) are edge tiles at constant columns, the others one loop with no
 * test. */
static void dwc_row(kn_lower *L, const dwc_geom *G, kn_kx *b, kn_kx *c0, int width, kn_kx *oy,
                    bool crow) {
    int64_t R = G->R, ntl = (G->ow + R - 1) / R;
    /* tiles [ta, tb) are whole and inside */
    int64_t ta = (G->xlo + R - 1) / R, tb = G->xhi / R;
    if (tb > ntl) tb = ntl;
    if (tb < ta) tb = ta;
    for (int64_t t = 0; t < ntl; t++) {
        int64_t n = G->ow - t * R < R ? G->ow - t * R : R;
        if (t >= ta && t < tb) {
            if (t == ta) {
                int vt = kl_for(L, tb - ta);
                dwc_tile(L, G, b, c0, width, oy,
                         kx_mul(L, kt_plus(L, var(L, vt), ta), kx_int(L, R)), (int)R, -1, crow);
                kl_end(L);
            }
            continue;
        }
        dwc_tile(L, G, b, c0, width, oy, kx_int(L, t * R), (int)n, t * R, crow);
    }
}

/* Output rows [oy0, oy1) of one channel block (dwc_row). */
static void dwc_rows(kn_lower *L, const dwc_geom *G, kn_kx *b, kn_kx *c0, int width, int64_t oy0,
                     int64_t oy1, bool crow) {
    if (oy1 <= oy0) return;
    int v = kl_for(L, oy1 - oy0);
    dwc_row(L, G, b, c0, width, kt_plus(L, var(L, v), oy0), crow);
    kl_end(L);
}

/* Whether kernel offset t along an axis (output extent o, input extent n, stride st,
 * dilation dl, leading pad p) falls inside the input for some output. */
static bool dwc_tap_used(int64_t o, int64_t n, int64_t st, int64_t dl, int64_t p, int64_t t) {
    for (int64_t i = 0; i < o; i++) {
        int64_t at = i * st + t * dl - p;
        if (at >= 0 && at < n) return true;
    }
    return false;
}

/* The bias and weights of the channel block [c0, c0 + width) declared as vector locals
 * (dwc_geom.wv), when they fit beside a tile's accumulators. */
static void dwc_hold(kn_lower *L, dwc_geom *G, kn_kx *c0, int width) {
    int64_t taps = G->kh * G->kw;
    bool hold = G->R + taps + 2 <= kl_vector_registers(L);
    G->hold = false; /* dwc_w reads the table while the locals are declared */
    for (int64_t k = 0; hold && k <= taps; k++) /* not the taps no output reaches */
        if (!k || (dwc_tap_used(G->oh, G->h, G->sh, G->dh, G->ph, (k - 1) / G->kw) &&
                   dwc_tap_used(G->ow, G->w, G->sw, G->dw, G->pw, (k - 1) % G->kw)))
            G->wv[k] = kl_decl_vec(L, KN_F32, width, dwc_w(L, G, c0, width, (int)k));
        else
            G->wv[k] = -1; /* its taps (under a row test that never holds) load it */
    G->hold = hold;
}

/* Every output of the channel block [c0, c0 + width) of batch b. */
static void dwc_block(kn_lower *L, dwc_geom *G, kn_kx *b, kn_kx *c0, int width) {
    dwc_hold(L, G, c0, width);
    if (G->plane) { /* plane[p] = x[b, p, c0], a row's columns unrolled when few */
        KN_ASSERT(width == 1);
        int64_t un = G->w <= DW_MAX_ROWS ? G->w : 1;
        int vp = kl_for(L, G->h * G->w / un);
        for (int64_t j = 0; j < un; j++) {
            kn_kx *p = kt_mad(L, var(L, vp), un, kx_int(L, j));
            kl_store(L, G->plane, p,
                     kx_load(L, G->d->x,
                             kx_add(L, kt_mad(L, kt_mad(L, b, G->h * G->w, p), G->c, kx_int(L, 0)),
                                    c0)));
        }
        kl_end(L);
    }
    if (G->pool)
        G->psum = width > 1 ? kl_decl_vec(L, KN_F32, width, kx_const(L, KN_F32, 0.0))
                            : kl_decl(L, KN_F32, kx_const(L, KN_F32, 0.0));
    dwc_rows(L, G, b, c0, width, 0, G->ylo, true);
    dwc_rows(L, G, b, c0, width, G->ylo, G->yhi, false);
    dwc_rows(L, G, b, c0, width, G->yhi > G->ylo ? G->yhi : G->ylo, G->oh, true);
    if (G->pool) /* pool[b*c + c0 ..] = the block's sums / (oh*ow) */
        kl_store(L, G->pool, kt_mad(L, b, G->c, c0),
                 kx_bin(L, KX_DIV, var(L, G->psum), kx_const(L, KN_F32, (double)(G->oh * G->ow))));
}

/* Whether to gather each channel into dwc_geom.plane so that y can take x's storage: on
 * microcontrollers, where the tiles are scalar and go one channel at a time (their
 * outputs of a channel are x's positions of that channel, gathered before the first is
 * written), for an output with x's bytes (stride 1, same padding) whose x is an arena
 * temporary not also read by the epilogue (dw_plane_suits for NCHW). */
static bool dwc_plane_suits(kn_lower *L, const kn_contract *d) {
    if (!L->target || L->target->kind != KN_TARGET_MCU || kn_contract_is_int(d) ||
        d->x->kind != KB_TEMP || d->x->numel != d->y->numel ||
        kn_dtype_get(d->x->dtype)->size != kn_dtype_get(d->y->dtype)->size)
        return false;
    for (int k = 0; d->epi && k < d->epi->n; k++)
        if (d->operand[k] == d->x) return false;
    return true;
}

/* Output row oy of batch b in the channel block [c0, c0 + width): a row inside x's rows
 * with no row test, the others with one. */
static void dwc_band_row(kn_lower *L, const dwc_geom *G, kn_kx *b, kn_kx *c0, int width,
                         kn_kx *oy) {
    if (G->yhi > G->ylo) {
        kl_if(L, kx_bin(L, KX_LAND, kx_bin(L, KX_GE, oy, kx_int(L, G->ylo)),
                        kx_bin(L, KX_LT, oy, kx_int(L, G->yhi))));
        dwc_row(L, G, b, c0, width, oy, false);
        kl_else(L);
    }
    dwc_row(L, G, b, c0, width, oy, true);
    if (G->yhi > G->ylo) kl_end(L);
}

/* The rows [band * rb, band * rb + rb) of batch b in the channel block [c0, c0 + width),
 * its weights held. */
static void dwc_band_block(kn_lower *L, dwc_geom *G, kn_kx *b, kn_kx *band, int64_t rb, kn_kx *c0,
                           int width) {
    dwc_hold(L, G, c0, width);
    if (G->part)
        G->psum = width > 1 ? kl_decl_vec(L, KN_F32, width, kx_const(L, KN_F32, 0.0))
                            : kl_decl(L, KN_F32, kx_const(L, KN_F32, 0.0));
    int vr = kl_for(L, rb);
    dwc_band_row(L, G, b, c0, width, kx_add(L, kx_mul(L, band, kx_int(L, rb)), var(L, vr)));
    kl_end(L);
    if (G->part) /* part[b][band][c0 ..] = the band's sums */
        kl_store(L, G->part,
                 kx_add(L, kt_mad(L, kt_mad(L, b, G->oh / rb, band), G->c, kx_int(L, 0)), c0),
                 var(L, G->psum));
}

/* Whether the band form runs its rows outside the channel blocks (dwc_geom.rows_outer):
 * in a program for several threads, for bands of several rows over an input under
 * DW_ROWS_OUTER_PIXELS (MobileNetV2's 14x14 kernels: two bands of 7 rows, 384 or 576
 * channels), with no squeeze summed here (its running sum per channel block would have
 * to go through memory). Each output row then reads three input rows of all channels
 * (21.5 KB each at 384 channels, contiguous in NHWC) one channel block after the other,
 * instead of one channel block's 64 bytes of every pixel of the band (a 1536-byte
 * stride) per pass: the same taps in the same order for each output, so the same bits.
 * At 2 threads MobileNetV2's 14x14 kernels took 11-12 us against 13-15 (features.12's
 * 26-29 against 44-47; --profile-file, 3 rounds of 300 runs); the model's latency 0.982
 * of main's (5 ABBA quads of 500 runs, lower in 8 of 10; docs/benchmarks.md "MobileNetV2's
 * 14x14 depthwise bands row by row"). A block alone at one thread took the same time
 * either way, and the 1-thread program keeps its order; with the 28x28 kernels too the
 * model read 0.985 (5 of 7 pairs) against 0.970 (6 of 7) for the 14x14 ones alone.
 * EfficientNet-B0's 14x14 kernels, whose squeeze sums would go through memory row by row
 * (the same additions in the same order), were faster in 3 of 5 (4.1, 4.2, 5.1: 94-99 ->
 * 74-80 us) and slower in 2, the model 1.012 (5 ABBA quads, lower in 4 of 10): left out. */
enum { DW_ROWS_OUTER_PIXELS = 4 * DW_BAND_PIXELS }; /* inputs under 28x28 */

static bool dwc_rows_outer(const kn_lower *L, const dwc_geom *G, int64_t rb) {
    return L->p->threads > 1 && rb > 1 && !G->pool && G->h * G->w < DW_ROWS_OUTER_PIXELS;
}

/* The channel block [c0, c0 + width) of batch b in the band form: over the band's rb rows
 * (dwc_band_block), or over its row oy alone (rows_outer), its weights held. */
static void dwc_band_unit(kn_lower *L, dwc_geom *G, kn_kx *b, kn_kx *band, int64_t rb, kn_kx *oy,
                          kn_kx *c0, int width) {
    if (!oy) {
        dwc_band_block(L, G, b, band, rb, c0, width);
        return;
    }
    dwc_hold(L, G, c0, width);
    dwc_band_row(L, G, b, c0, width, oy);
}

/* The squeeze of bands of one row (dwc_geom.tpart), after every band: pool[b*c + ch] =
 * (0 + each tile's sum, the rows in order and each row's tiles in order) / (oh*ow), the
 * additions of dwc_block's running sum in its order, so the same bits as the channel
 * blocks of the 1-thread program. Vectors of `lanes` channels, then one at a time. */
static void dwc_pool_tiles(kn_lower *L, const dwc_geom *G, int lanes) {
    int64_t nt = G->oh * ((G->ow + G->R - 1) / G->R), full = lanes > 1 ? G->c / lanes : 0;
    int vb = kl_for(L, G->d->n);
    for (int one = 0; one < 2; one++) {
        int64_t cnt = one ? G->c - full * lanes : full;
        int width = one ? 1 : lanes;
        if (!cnt) continue;
        int vc = kl_for(L, cnt);
        kn_kx *c0 =
            one ? kt_plus(L, var(L, vc), full * lanes) : kx_mul(L, var(L, vc), kx_int(L, lanes));
        int s = width > 1 ? kl_decl_vec(L, KN_F32, width, kx_const(L, KN_F32, 0.0))
                          : kl_decl(L, KN_F32, kx_const(L, KN_F32, 0.0));
        int vt = kl_for(L, nt);
        kn_kx *at =
            kx_add(L, kt_mad(L, kt_mad(L, var(L, vb), nt, var(L, vt)), G->c, kx_int(L, 0)), c0);
        kl_set(L, s, kx_add(L, var(L, s), dwc_ld(L, G->tpart, at, width)));
        kl_end(L);
        kl_store(L, G->pool, kt_mad(L, var(L, vb), G->c, c0),
                 kx_bin(L, KX_DIV, var(L, s), kx_const(L, KN_F32, (double)(G->oh * G->ow))));
        kl_end(L);
    }
    kl_end(L);
}

/* The band form: one parallel loop over (batch, band of rb output rows), each iteration
 * every channel block of its band (rows_outer: each row of its band, every channel block
 * of the row). */
static void dwc_by_bands(kn_lower *L, dwc_geom *G, int64_t rb, int64_t full, int lanes,
                         const int *wid, int nw, int64_t ones) {
    const kn_contract *d = G->d;
    int64_t nb = G->oh / rb;
    if (G->pool && rb == 1) /* each tile's sum: dwc_pool_tiles */
        G->tpart = kl_scratch(L, KN_F32, d->n * G->oh * ((G->ow + G->R - 1) / G->R) * G->c);
    else if (G->pool)
        G->part = kl_scratch(L, KN_F32, d->n * nb * G->c);
    int v = kl_for(L, d->n * nb);
    /* each iteration writes its rows; split as it stands (a task gets whole bands) */
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
    kn_kx *b = d->n > 1 ? kx_bin(L, KX_DIV, var(L, v), kx_int(L, nb)) : kx_int(L, 0);
    kn_kx *band = d->n > 1 ? kx_bin(L, KX_MOD, var(L, v), kx_int(L, nb)) : var(L, v);
    kn_kx *oy = NULL; /* rows_outer: the band's row, every channel block of it */
    if (G->rows_outer) {
        int vr = kl_for(L, rb);
        oy = kx_add(L, kx_mul(L, band, kx_int(L, rb)), var(L, vr));
    }
    if (full) {
        int vc = kl_for(L, full);
        dwc_band_unit(L, G, b, band, rb, oy, kx_mul(L, var(L, vc), kx_int(L, lanes)), lanes);
        kl_end(L);
    }
    int64_t at = full * lanes;
    for (int j = 0; j < nw; j++) {
        dwc_band_unit(L, G, b, band, rb, oy, kx_int(L, at), wid[j]);
        at += wid[j];
    }
    if (ones) {
        int vc = kl_for(L, ones);
        dwc_band_unit(L, G, b, band, rb, oy, kt_plus(L, var(L, vc), at), 1);
        kl_end(L);
    }
    if (G->rows_outer) kl_end(L);
    kl_end(L);
    if (G->part) dw_pool_bands(L, G->pool, G->part, d->n, G->c, nb, G->oh * G->ow);
    if (G->tpart) dwc_pool_tiles(L, G, lanes);
}

/* Whether a kernel whose output rows make no even bands (14x14 -> 7x7 at stride 2, and
 * 7x7 inputs, DW_ROW_BAND_PIXELS) runs in bands of one row: in a program for several
 * threads; with a squeeze summed here only over inputs of DW_BAND_PIXELS or more, each
 * tile's sum kept and the sums added after the bands in the channel blocks' order
 * (dwc_pool_tiles: the same bits as the 1-thread program). EfficientNet-B0's features.6.0
 * (14x14 -> 7x7, 5x5, 672 channels) took 28-30 us at 2 threads against 49-56 by channel
 * blocks, reading 129 KB a run across instead of 263 KB; its 7x7 kernels (features.6.1-7.0),
 * whose expansions are split by channel blocks, read 0 across by channel blocks and 159-205
 * KB in rows (33-37 us against 32-35; --profile-file, 2 rounds of 300 runs; docs/benchmarks.md
 * "EfficientNet-B0's stride-2 depthwise kernel with its squeeze in rows"). Its
 * input comes from an expansion split by pixel rows (two rows of 98 pixels at 14x14);
 * split by channel blocks, each thread read every input row of its channels, half of them
 * written by the other core (MobileNetV2's features.14: 226 KB a run read across,
 * KILN_XCORE=2; 11 us at one thread, 29 at two). In rows, a thread reads the input rows
 * the expansion left on its core but for one. With features.14 alone in rows, the 7x7
 * kernel of features.17 after it took 19-26 us at 2 threads against 15 (KILN_POOL_TRACE,
 * 3 rounds); with the three 7x7 kernels in rows too, 13 us (docs/benchmarks.md). */
enum { DW_ROW_BAND_PIXELS = 49 }; /* bands of one row at several threads: 7x7 and up */

static bool dwc_odd_rows_banded(const kn_lower *L, const dwc_geom *G) {
    return L->p->threads > 1 && G->oh >= 2 && (!G->pool || G->h * G->w >= DW_BAND_PIXELS);
}

/* Rows a band of the band form (dwc_by_bands), or 0 to keep the parallel loop over
 * channel blocks: f32 on CPUs, inputs of DW_BAND_PIXELS or more (the expansions before
 * them split by pixel rows, passes/tile.c pw_channels_last, and the parallel pass's
 * collapse), a squeeze computed here summed per band (dwc_geom.part), up to
 * DW_BAND_ROWS rows a band (the input rows a band reads stay in L1 between its rows:
 * with bands of one row MobileNetV2's 56x56 kernel took 1.5x as long on one thread),
 * the bands an even number or 8 or more (two threads get equal work). At 14x14 (two
 * bands of 7 rows, the two rows of 98 pixels that the 1x1 convolutions around them split
 * by) MobileNetV2's stride-1 kernels took 15 us of task CPU time and 9 us wall at 2
 * threads against 18.5 and 12 us split by channel blocks (docs/benchmarks.md, "14x14
 * bands"); 14x14 -> 7x7 at stride 2 has 7 output rows, no even bands: one row a band at
 * several threads (dwc_odd_rows_banded, also on 7x7 inputs), else the channel blocks. */
static int64_t dwc_band_rows(kn_lower *L, const dwc_geom *G) {
    if (!L->target || L->target->kind != KN_TARGET_CPU || G->plane || G->integer) return 0;
    if (G->h * G->w >= DW_BAND_PIXELS)
        for (int64_t rb = DW_BAND_ROWS; rb >= 2; rb--)
            if (G->oh % rb == 0 && ((G->oh / rb) % 2 == 0 || G->oh / rb >= 8)) return rb;
    return G->h * G->w >= DW_ROW_BAND_PIXELS && dwc_odd_rows_banded(L, G) ? 1 : 0;
}

static void dwc_build(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_kbuf *pool,
                      dwc_geom *G) {
    memset(G, 0, sizeof *G);
    G->d = d;
    G->pool = pool;
    G->c = d->c, G->h = d->h, G->w = d->w_, G->oh = d->oh, G->ow = d->ow;
    G->kh = d->kh, G->kw = d->kw, G->sh = d->sh, G->sw = d->sw, G->dh = d->dh, G->dw = d->dw;
    G->ph = d->ph, G->pw = d->pw;
    kt_interior(G->h, G->oh, G->kh, G->sh, G->dh, G->ph, &G->ylo, &G->yhi);
    kt_interior(G->w, G->ow, G->kw, G->sw, G->dw, G->pw, &G->xlo, &G->xhi);
    int lanes = kl_lanes(L, KN_F32);
    int64_t taps = G->kh * G->kw, per = 1 + taps;
    /* outputs per tile: accumulators beside the held weights, rows of equal tiles */
    int64_t R = kl_vector_registers(L) - taps - 2;
    R = R > DW_MAX_ROWS ? DW_MAX_ROWS : R < 1 ? 1 : R;
    if (ov && ov->tile_rows) R = ov->tile_rows < DW_MAX_ROWS ? ov->tile_rows : DW_MAX_ROWS;
    int64_t ntl = (G->ow + R - 1) / R;
    G->R = (int)((G->ow + ntl - 1) / ntl);
    /* the channel blocks in order: full ones of `lanes`, then halves down to
     * DW_MIN_LANES, then single channels */
    int64_t full = lanes > 1 ? G->c / lanes : 0, at = full * lanes;
    int wid[8], nw = 0;
    for (int wdt = lanes / 2; lanes > 1 && wdt >= DW_MIN_LANES; wdt /= 2)
        if (G->c - at >= wdt) wid[nw++] = wdt, at += wdt;
    int64_t ones = G->c - at;
    if (!full && !nw && dwc_plane_suits(L, d)) G->plane = kl_scratch(L, d->x->dtype, G->h * G->w);
    float *pk = malloc((size_t)(G->c * per) * sizeof *pk);
    KN_ASSERT(pk);
    G->integer = kn_contract_is_int(d);
    /* integer: [c][1 + taps] bias and w - wz (kt_dw_int_pack), read as wt and bs are */
    float *ipk = G->integer ? malloc((size_t)(G->c * per) * sizeof *ipk) : NULL;
    if (G->integer) {
        KN_ASSERT(ipk);
        kt_dw_int_pack(d, ipk);
        G->xz = kt_int_xz(d);
        kt_int_tables_padded(L, d, lanes > 1 ? lanes : 1, &G->rq);
    }
    const float *wt = G->integer ? NULL : (const float *)d->w->data->data;
    const float *bs = G->integer ? NULL : d->bias ? (const float *)d->bias->data->data : NULL;
    for (int64_t c0 = 0, j = 0; c0 < G->c;) {
        int64_t width = c0 < full * lanes ? lanes : j < nw ? wid[j++] : 1;
        for (int64_t l = 0; l < width; l++) {
            double b0 = ipk ? ipk[(c0 + l) * per] : bs ? bs[c0 + l] : 0.0;
            for (int64_t k = 0; ipk && k < taps; k++) /* - xz * sum (w - wz): dwc_tile */
                b0 -= G->xz * ipk[(c0 + l) * per + 1 + k];
            pk[c0 * per + l] = (float)b0;
            for (int64_t k = 0; k < taps; k++)
                pk[c0 * per + (1 + k) * width + l] =
                    ipk ? ipk[(c0 + l) * per + 1 + k] : wt[(c0 + l) * taps + k];
        }
        c0 += width;
    }
    free(ipk);
    G->pk = kl_table(L, KN_F32, G->c * per, pk);
    free(pk);
    int64_t rb = dwc_band_rows(L, G);
    if (rb) {
        G->rows_outer = dwc_rows_outer(L, G, rb);
        dwc_by_bands(L, G, rb, full, lanes, wid, nw, ones);
        return;
    }
    if (full) { /* (batch, block) in one loop, whose iterations write disjoint channel
                   blocks: marked parallel here, as the parallel pass cannot see through
                   the division and remainder of y's index */
        int v = kl_for(L, d->n * full);
        L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
        kn_kx *b = d->n > 1 ? kx_bin(L, KX_DIV, var(L, v), kx_int(L, full)) : kx_int(L, 0);
        kn_kx *c0 = kx_mul(L, d->n > 1 ? kx_bin(L, KX_MOD, var(L, v), kx_int(L, full)) : var(L, v),
                           kx_int(L, lanes));
        dwc_block(L, G, b, c0, lanes);
        kl_end(L);
    }
    if (!nw && !ones) return;
    at = full * lanes;
    int vb = kl_for(L, d->n);
    for (int j = 0; j < nw; j++) {
        dwc_block(L, G, var(L, vb), kx_int(L, at), wid[j]);
        at += wid[j];
    }
    if (ones) {
        int vc = kl_for(L, ones);
        dwc_block(L, G, var(L, vb), kt_plus(L, var(L, vc), at), 1);
        kl_end(L);
    }
    kl_end(L);
}

/* The kernel after k that is a GlobalAveragePool of depthwise kernel k's output y alone
 * (f32, [n*c] means written, nothing else touched), or -1. cl: y is NHWC (the pool's
 * kn.layout [1, 0], passes/layout.c), else NCHW (no kn.layout). */
static int dw_pool_kernel(const kn_kprog *p, int k, const kn_contract *d, bool cl) {
    unsigned char *use = calloc((size_t)p->nbufs, 1);
    KN_ASSERT(use);
    int found = -1;
    for (int j = k + 1; j < p->nkernels && found < 0; j++) {
        const kn_kernel *g = p->kernels[j];
        bool xcl = false, ycl = false;
        if (!g->node || g->node->op != KN_OP_GLOBALAVERAGEPOOL ||
            (cl ? !kn_conv_layout(g->node, &xcl, &ycl) || !xcl || ycl
                : kn_node_attr(g->node, KN_ATTR_LAYOUT) != NULL))
            continue;
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(g->body, use);
        if (use[d->y->id] != 1) continue;
        int nw = 0, nr = 0, w = -1;
        for (int b = 0; b < p->nbufs; b++) {
            if (use[b] & 2)
                nw++, w = b;
            else if (use[b] & 1)
                nr++;
        }
        /* y read; the means written (the channels-last pool sums into them: also read) */
        const kn_kbuf *o = w >= 0 ? p->bufs[w] : NULL;
        if (nr == 1 && nw == 1 && (use[w] == 2 || (cl && use[w] == 3)) && o->dtype == KN_F32 &&
            o->numel == d->n * d->c && !kn_node_attr(g->node, KN_ATTR_EPILOGUE))
            found = j;
    }
    free(use);
    return found;
}

/* The output of pool kernel gk (>= 0), whose kernel is left empty (the depthwise kernel
 * writes it instead), or NULL for -1. */
static kn_kbuf *dw_pool_take(kn_ctx *cx, kn_kprog *p, int gk) {
    if (gk < 0) return NULL;
    kn_kbuf *pool = NULL;
    unsigned char *use = calloc((size_t)p->nbufs, 1);
    KN_ASSERT(use);
    kn_kernel_uses(p->kernels[gk]->body, use);
    for (int b = 0; b < p->nbufs; b++)
        if (use[b] & 2) pool = p->bufs[b];
    free(use);
    kl_builder_destroy(kl_builder_rewrite(cx, p, gk));
    return pool;
}

/* Whether kernel d is a depthwise convolution this pass can rebuild. */
static bool dw_suits(const kn_contract *d) {
    if (kn_contract_is_int(d)) return d->kh * d->kw <= DW_MAX_TAPS && kt_dw_int_suits(d);
    return d->kind == KN_CONTRACT_CONV && d->group == d->c && d->m == d->c &&
           d->x->dtype == KN_F32 && d->y->dtype == KN_F32 && kt_f32_const(d->w) &&
           (!d->bias || kt_f32_const(d->bias)) && d->kh * d->kw <= DW_MAX_TAPS && d->ph >= 0 &&
           d->pw >= 0 && d->peh >= 0 && d->pew >= 0 && kt_operands_ok(d) &&
           kn_contract_nchw(d); /* rows of NCHW (passes/layout.c folds no depthwise) */
}

/* The dot tiles' packed constants from kt_dw_int_pack's pk ([c][1 + kh*kw] f32: bias,
 * w - wz): per channel the init bias - xzc * sum (w - wz), then for each group of rows g
 * and column kx the word of w - wz at rows g*parts + k (0 past the kernel). */
static void dw_pack_words(const dw_geom *G, const float *pk, int32_t *wk) {
    int64_t taps = G->kh * G->kw, per = 1 + G->ngr * G->kw;
    uint32_t mask = G->bits == 8 ? 0xffu : 0xffffu;
    for (int64_t ch = 0; ch < G->c; ch++) {
        const float *src = pk + ch * (1 + taps);
        int64_t sum = 0;
        for (int64_t t = 0; t < taps; t++) sum += (int64_t)src[1 + t];
        wk[ch * per] = (int32_t)((int64_t)src[0] - G->xzc * sum);
        for (int64_t g = 0; g < G->ngr; g++)
            for (int64_t kx = 0; kx < G->kw; kx++) {
                uint32_t w = 0;
                for (int k = 0; k < G->parts; k++) {
                    int64_t ky = g * G->parts + k;
                    int32_t v = ky < G->kh ? (int32_t)src[1 + ky * G->kw + kx] : 0;
                    w |= ((uint32_t)v & mask) << (G->bits * k);
                }
                wk[ch * per + 1 + g * G->kw + kx] = (int32_t)w;
            }
    }
}

/* Whether integer convolution G takes row words (dw_geom.words): on microcontrollers
 * whose dot is SMLAD (s16x2), unstaged, 8-bit input, rows of 3 undilated taps at stride
 * 1 or 2, and at least one word tile in a row; `split=2` in a schedule file keeps the
 * f32 tiles. Sets xw, the end of the interior outputs whose words stay in the row. */
static bool dw_words_suits(const dw_geom *G, const kn_target *tg, const kn_sched *ov) {
    const kn_contract *d = G->d;
    if (!G->integer || G->stage || tg->kind != KN_TARGET_MCU || tg->int8_dot != KN_DOT_S16X2 ||
        (ov && ov->split == 2) || G->kw != 3 || G->dw != 1 || (G->sw != 1 && G->sw != 2) ||
        (d->x->dtype != KN_I8 && d->x->dtype != KN_U8) || d->epi || G->xhi <= G->xlo)
        return false;
    return true;
}

/* Whether integer convolution G takes Helium's i32 vector tiles (dw_geom.mvec): on
 * microcontrollers with 128-bit vectors (MVE), unstaged, 8-bit input, stride 1 (a tap of
 * 4 neighbouring outputs is 4 consecutive bytes) or 2 undilated (through the padded
 * plane's two phases, dw_geom.pph, or its rows' strided loads, dw_geom.sload), no
 * epilogue and at least one vector of outputs a row (two at stride 2 without byte
 * gathers: rows of 6 outputs cost more in the plane's byte-by-byte copy than in row
 * words, MobileNetV2's 12 x 12 -> 6 x 6 layer on the M55 95 K in words, 104 K in the
 * plane; with gathers 62 K); `split=2` in a schedule file keeps the f32 tiles, `split=1`
 * the row words. */
static bool dw_mvec_suits(kn_lower *L, const dw_geom *G, const kn_target *tg, const kn_sched *ov) {
    const kn_contract *d = G->d;
    return G->integer && !G->stage && tg->kind == KN_TARGET_MCU && tg->vector_bits >= 128 &&
           kl_lanes(L, KN_I32) == 4 && !(ov && ov->split) &&
           (G->sw == 1 || (G->sw == 2 && G->dw == 1)) &&
           (d->x->dtype == KN_I8 || d->x->dtype == KN_U8) && !d->epi &&
           (G->lanes == 4 || (G->sw == 2 && kl_lanes(L, KN_F32) == 4)) &&
           G->ow >= (G->sw == 2 && !tg->byte_gather ? 8 : 4);
}

/* The end of the interior outputs from xlo whose words (4 bytes from ox*sw - pw, whole
 * pairs of outputs at stride 1) stay inside the row. */
static int64_t dw_words_end(const dw_geom *G) {
    int64_t last = kt_floor_div(G->w - 4 + G->pw, G->sw); /* last output a word may start */
    if (G->sw == 1) {
        int64_t pairs = (G->xhi - G->xlo) / 2, fit = (last - G->xlo) / 2 + 1;
        if (last < G->xlo) fit = 0;
        return G->xlo + 2 * (pairs < fit ? pairs : fit);
    }
    int64_t e = last + 1 < G->xhi ? last + 1 : G->xhi;
    return e > G->xlo ? e : G->xlo;
}

/* The row words' packed constants from kt_dw_int_pack's pk ([c][1 + kh*3] f32: bias,
 * w - wz): per channel the init bias - xz * sum (w - wz), then per kernel row the words
 * (w0, w2), (w1, 0), 16-bit halves, the first in the low half (dw_wper entries). */
static void dw_pack_wrows(const dw_geom *G, const float *pk, int32_t *wk) {
    int64_t taps = G->kh * 3, per = dw_wper(G);
    for (int64_t ch = 0; ch < G->c; ch++) {
        const float *src = pk + ch * (1 + taps);
        int64_t sum = 0;
        for (int64_t t = 0; t < taps; t++) sum += (int64_t)src[1 + t];
        wk[ch * per] = (int32_t)((int64_t)src[0] - (int64_t)G->xz * sum);
        for (int64_t ky = 0; ky < G->kh; ky++) {
            uint32_t w0 = (uint32_t)(int32_t)src[1 + ky * 3] & 0xffffu;
            uint32_t w1 = (uint32_t)(int32_t)src[2 + ky * 3] & 0xffffu;
            uint32_t w2 = (uint32_t)(int32_t)src[3 + ky * 3] & 0xffffu;
            wk[ch * per + 1 + 2 * ky] = (int32_t)(w0 | w2 << 16);
            wk[ch * per + 2 + 2 * ky] = (int32_t)w1;
        }
    }
}

/* Whether to read each channel from a copy of its plane (dw_geom.plane) so that y can
 * take x's storage: on microcontrollers, where RAM sets the limit and a channel's plane
 * is small (one memcpy of h*w values a channel: DS-CNN's 25 x 5), for an unstaged
 * convolution whose output has x's bytes (stride 1, same padding) and whose x is an
 * arena temporary not also read by the epilogue. Float only: no int8 arena of the
 * benchmark models went down with it (their peaks are at the word copies of the 1x1
 * convolutions), and the copies cost the firmware's int8 DS-CNN 2% more instructions. */
static bool dw_plane_suits(const dw_geom *G, const kn_contract *d, const kn_target *tg) {
    if (tg->kind != KN_TARGET_MCU || G->stage || G->dot || G->integer || d->x->kind != KB_TEMP ||
        d->x->numel != d->y->numel ||
        kn_dtype_get(d->x->dtype)->size != kn_dtype_get(d->y->dtype)->size)
        return false;
    for (int k = 0; d->epi && k < d->epi->n; k++)
        if (d->operand[k] == d->x) return false;
    return true;
}

/* x[b, c, iy, j*2 + p - pw] into phase p of the padded plane's row iy + ph (dw_geom.pph),
 * for the rows and columns inside x: where both phases hold an input column, pairs in
 * chunks of 16 (a constant trip count that GCC builds as VLD20/VLD21 and two VSTRB.8), the
 * last chunk overlapping the one before (the same values stored again), the rest one byte
 * at a time. */
static void dw_pad_phases(kn_lower *L, const dw_geom *G) {
    enum { CH = DW_PH_CHUNK };
    int64_t r0 = G->ph < 0 ? -G->ph : 0, r1 = G->phs - G->ph < G->h ? G->phs - G->ph : G->h;
    int64_t lo[2], hi[2];
    for (int p = 0; p < 2; p++) kt_phase_inside(p, 2, G->pw, G->w, G->pwid[p], &lo[p], &hi[p]);
    int64_t plo = lo[0] > lo[1] ? lo[0] : lo[1], phi = hi[0] < hi[1] ? hi[0] : hi[1];
    if (phi < plo) phi = plo;
    if (r1 <= r0) return;
    int vr = kl_for(L, r1 - r0);
    kn_kx *iy = kt_plus(L, var(L, vr), r0);
    int prow = kl_decl(L, KN_I64, kx_mul(L, kt_plus(L, iy, G->ph), kx_int(L, G->prs)));
    int xrow =
        kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, var(L, G->vbc), G->h, iy), G->w, kx_int(L, 0)));
    /* phase p's column j */
#define DW_PH_COPY(p, j)                                                                           \
    kl_store(                                                                                      \
        L, G->pad, kx_add(L, kt_plus(L, var(L, prow), G->poff[p]), (j)),                           \
        kx_load(L, G->d->x,                                                                        \
                kx_add(L, kt_plus(L, var(L, xrow), (p)-G->pw), kx_mul(L, (j), kx_int(L, 2)))))
    int64_t np = phi - plo;
    if (np >= CH) {
        int vc = kl_for(L, np / CH); /* chunk k at plo + CH*k */
        int vu = kl_for(L, CH);
        kn_kx *j = kx_add(L, kt_plus(L, kx_mul(L, var(L, vc), kx_int(L, CH)), plo), var(L, vu));
        DW_PH_COPY(0, j);
        DW_PH_COPY(1, j);
        kl_end(L);
        kl_end(L);
        if (np % CH) { /* the last chunk ends at phi */
            vu = kl_for(L, CH);
            j = kt_plus(L, var(L, vu), phi - CH);
            DW_PH_COPY(0, j);
            DW_PH_COPY(1, j);
            kl_end(L);
        }
    } else if (np > 0) {
        int vu = kl_for(L, np);
        kn_kx *j = kt_plus(L, var(L, vu), plo);
        DW_PH_COPY(0, j);
        DW_PH_COPY(1, j);
        kl_end(L);
    }
    for (int p = 0; p < 2; p++) { /* the single columns at the two ends */
        for (int64_t j = lo[p]; j < hi[p] && j < plo; j++) DW_PH_COPY(p, kx_int(L, j));
        for (int64_t j = phi > lo[p] ? phi : lo[p]; j < hi[p]; j++) DW_PH_COPY(p, kx_int(L, j));
    }
#undef DW_PH_COPY
    kl_end(L);
}

/* Rows a band of the NCHW band form, or 0 for the parallel loop over (batch, channel):
 * f32 on CPUs, tiles that read x in place (not staged, no plane, no row words), inputs
 * of DW_BAND_PIXELS or more; the fewest bands that are an even number and at least the
 * program's threads (2 at one thread): a channel's rows share nothing with the next
 * channel's, and each band restarts every channel's stream (bands of 8 rows took
 * MobileNetV2's 112x112 layer from 0.117-0.149 to 0.146-0.157 ms of thread CPU time at
 * one thread, two bands 0.122-0.153; Intel Xeon). Split by channels, each
 * thread read half of its input from the other core and left half of its output there,
 * where the convolutions around it split by pixel rows (MobileNetV2's and
 * EfficientNet-B0's 112x112 layer of 32 channels after the stem: 0.8 MB of cross-core
 * reads in the depthwise kernel and 0.8 MB in the projection after it, KILN_XCORE=2). */
static int64_t dw_band_rows(kn_lower *L, const dw_geom *G) {
    if (!L->target || L->target->kind != KN_TARGET_CPU || G->integer || G->stage || G->plane ||
        G->mvec || G->words || G->pad || G->h * G->w < DW_BAND_PIXELS)
        return 0;
    int64_t t = L->p->threads > 2 ? L->p->threads : 2;
    for (int64_t nb = t; nb < G->oh; nb++)
        if (G->oh % nb == 0 && nb % 2 == 0) return G->oh / nb;
    return 0;
}

/* Output row oy (an expression) of the band form: with a row test where it reads
 * padding above or below. */
static void dw_band_row(kn_lower *L, const dw_geom *G, kn_kx *oy) {
    for (int inner = G->yhi > G->ylo ? 1 : 0; inner >= 0; inner--) {
        if (inner)
            kl_if(L, kx_bin(L, KX_LAND, kx_bin(L, KX_GE, oy, kx_int(L, G->ylo)),
                            kx_bin(L, KX_LT, oy, kx_int(L, G->yhi))));
        dw_border_cols(L, G, oy, 0, G->xlo, !inner);
        if (G->xhi > G->xlo) dw_cols(L, G, oy, G->xlo, G->xhi - G->xlo, G->lanes, G->rows, !inner);
        dw_border_cols(L, G, oy, G->xhi, G->ow, !inner);
        if (inner) kl_else(L);
    }
    if (G->yhi > G->ylo) kl_end(L);
}

static void dw_build(kn_lower *L, const kn_contract *d, const kn_sched *ov, const kn_target *tg,
                     kn_kbuf *pool, dw_geom *G) {
    bool cpu = tg->kind == KN_TARGET_CPU;
    memset(G, 0, sizeof *G);
    G->d = d;
    G->pool = pool;
    G->c = d->c, G->h = d->h, G->w = d->w_, G->oh = d->oh, G->ow = d->ow;
    G->kh = d->kh, G->kw = d->kw, G->sh = d->sh, G->sw = d->sw, G->dh = d->dh, G->dw = d->dw;
    G->ph = d->ph, G->pw = d->pw;
    kt_interior(G->h, G->oh, G->kh, G->sh, G->dh, G->ph, &G->ylo, &G->yhi);
    kt_interior(G->w, G->ow, G->kw, G->sw, G->dw, G->pw, &G->xlo, &G->xhi);
    G->integer = kn_contract_is_int(d);
    G->stage = dw_stage_suits(L, G, cpu, ov ? ov->pad : 0);
    G->at = KN_F32;
    /* staged integer convolutions: words of rows for the target's dot product */
    if (G->integer && G->stage && kl_lanes(L, KN_I32) > 1) {
        G->dot = kt_int_dot_kind(tg, d, ov);
        /* stride 2 where the target has vpdpbusd: pairs of rows (pmaddwd, which x86 has
         * with it), so each input row is in one word row (rstep = parts = 2) where four
         * rows stepping by 2 copy each twice (MobileNetV2 int8, thread CPU, when the
         * strided copy went one word at a time: 112x112 -> 56x56 0.171-0.173 -> 0.153-0.156
         * ms, 28x28 -> 14x14 0.061 -> 0.032, 14x14 -> 7x7 0.041 -> 0.035; with strided
         * vector loads, its two NCHW stride-2 layers 0.136-0.147 with four rows against
         * 0.124-0.137 with pairs) */
        if (G->dot == KN_DOT_U8S8X4 && G->sh == 2 && !(ov && ov->dot)) G->dot = KN_DOT_S16X2;
    }
    if (G->stage) {
        dw_stage_geom(G);
        if (G->dot) {
            dw_words_geom(G);
            G->at = KN_I32;
            G->xoff = kt_int_xoff(G->dot, d->x->dtype);
            G->xzc = (int64_t)kt_int_xz(d) + G->xoff;
        }
        G->xs = kl_scratch(L, G->at, d->n * G->c * (G->dot ? G->hq : G->hs) * G->rs);
    }
    dw_choose(L, G, ov);
    G->mvec = dw_mvec_suits(L, G, tg, ov);
    if (G->mvec) {
        G->at = KN_I32;
        /* one vector a tile: 4 accumulators of 4 outputs and their 12 input vectors
         * spill from the 8 Q registers (MobileNetV1's 24 x 24 x 32 layer on the M55:
         * 290 K instructions with 4 vectors a tile, 269 K with 3, 272 K with 2, 227 K
         * with 1) */
        if (!(ov && ov->tile_rows)) G->rows = 1;
        /* the weights are scalars (VMLA's general-register operand): held in locals for
         * the channel, where the f32 tiles count them against the vector registers */
        G->hold = G->kh * G->kw <= 25;
        /* the padded plane: every output interior, where the in-place tiles' interior
         * is narrower than a vector or needs as many vectors as the whole row (the
         * borders then cost the scalar tiles and the plane nothing more): 24 x 24 x 32
         * on the M55 227 -> 208 K, 12 x 12 x 64 140 -> 114 K, DS-CNN's rows of 5 191 ->
         * 142 K (row words before); not 6 x 6 x 128 (67 K in place, 80 K) */
        int64_t in = G->xhi - G->xlo;
        if (in < 4 || (G->ow + 3) / 4 <= (in + 3) / 4 || G->sw == 2) {
            G->phs = (G->oh - 1) * G->sh + (G->kh - 1) * G->dh + 1;
            G->prs = (G->ow - 1) * G->sw + (G->kw - 1) * G->dw + 1;
            /* stride 2: strided loads from the rows as they are where the target has
             * byte gathers and the rows are short (the phases' copy would go byte by
             * byte: MobileNetV2's 24 x 24 -> 12 x 12 on the M55 159 -> 104 K, 12 x 12 ->
             * 6 x 6 95 K in row words -> 62 K), else the two phases (rows of 16 column
             * pairs or more: the 48 x 48 -> 24 x 24 bands 74 K, 94 K with gathers, each
             * gather's base one more add) */
            G->sload = G->sw == 2 && tg->byte_gather && G->ow < DW_PH_CHUNK;
            G->pph = G->sw == 2 && !G->sload;
            G->lanes = 4; /* dw_choose: 1 at stride 2, which the row words take */
            if (G->pph) G->prs = kt_phases(G->prs, 2, G->pwid, G->poff);
            G->pad = kl_scratch(L, d->x->dtype, G->phs * G->prs);
            G->ylo = 0, G->yhi = G->oh, G->xlo = 0, G->xhi = G->ow;
        }
        /* output rows a tile (dw_geom.yrows): 3 where the tiles read x in place (its
         * interior rows share 5 input rows for 3 output rows: MobileNetV2's 6 x 6 x 144
         * layers on the M55 76 -> 70 K, 6 x 6 x 192 101 -> 93 K), else 1 (GCC 12 then
         * reloads the scalar weights at every use: 24 x 24 x 48 in the plane 312 K with
         * 1 row, 327 K with 2, 307 K with 3; 12 x 12 x 96 171, 175, 173 K; the stride-2
         * layers and the 48 x 48 bands up 4-15 K with 2 or 3); tile_vecs in a schedule
         * file sets it */
        G->yrows = ov && ov->tile_vecs ? ov->tile_vecs : G->pad ? 1 : DW_YROWS_INPLACE;
        if (G->yrows > DW_MAX_YR) G->yrows = DW_MAX_YR;
    }
    G->words = !G->mvec && dw_words_suits(G, tg, ov);
    if (G->words) {
        G->xw = dw_words_end(G);
        G->words = G->xw > G->xlo;
        G->nu = ov && ov->tile_rows ? (ov->tile_rows < DW_MAX_ROWS ? ov->tile_rows : DW_MAX_ROWS)
                                    : DW_WORDS_NU;
        /* at stride 2, 4 words (4 outputs); 8 on rows of 9 to 15 outputs (one tile of 8
         * and the rest where tiles of 4 took three or more): MobileNetV1 int8 on the M4
         * (fw_profile.sh) 24 -> 12 x 32 109.4 -> 96.4 K, MobileNetV2's 24 -> 12 x 48 164.1
         * -> 144.5 K; but 48 -> 24 rows 66.8 -> 73.9 K a band (6 tiles of 4 against 3 of
         * 8), 12 -> 6 rows 49.8 -> 52.3 K */
        if (G->sw == 2 && !(ov && ov->tile_rows))
            G->nu = G->ow > DW_WORDS_NU8_MIN && G->ow < DW_WORDS_NU8_MAX ? DW_MAX_ROWS
                                                                         : 2 * DW_WORDS_NU;
    }
    if (dw_plane_suits(G, d, tg)) G->plane = kl_scratch(L, d->x->dtype, G->h * G->w);
    /* packed per channel: bias, then the kh*kw weights (dot: the init, then the words) */
    int64_t taps = G->dot ? G->ngr * G->kw : G->kh * G->kw, per = 1 + taps;
    float *pk = malloc((size_t)(G->c * (1 + G->kh * G->kw)) * sizeof *pk);
    KN_ASSERT(pk);
    if (G->integer) {
        kt_dw_int_pack(d, pk);
        G->xz = kt_int_xz(d);
        /* row words over whole rows where the padding is the zero byte: every output in
         * words, the f32 tiles and their table not needed (at most 3 bytes shifted in) */
        G->wrows = G->words && G->xz == 0;
        G->wedge = G->words && G->w >= 4 && G->pw <= 3 && d->pew <= 2;
        /* the high-word form where it applies (kt_int_tables), else f64 where that is
         * exact (vector tiles), else int64; on microcontrollers the high-word form's
         * scalar store (kt_int_tables_red: SMULL's high word, an add, a shift, SSAT) */
        if (L->target && (L->target->int8_red || L->target->kind == KN_TARGET_MCU))
            kt_int_tables_red(L, d, &G->rq);
        else if (!kt_int_tables_hi32(L, d, 0, &G->rq) &&
                 (G->lanes == 1 || !kt_int_tables_f64(L, d, 0, &G->rq)))
            kt_int_tables(L, d, &G->rq);
    }
    const float *wt = G->integer ? NULL : (const float *)d->w->data->data;
    const float *bs = d->bias && !G->integer ? (const float *)d->bias->data->data : NULL;
    for (int64_t ch = 0; ch < G->c && !G->integer; ch++) {
        pk[ch * per] = bs ? bs[ch] : 0.0f;
        memcpy(pk + ch * per + 1, wt + ch * taps, (size_t)taps * sizeof *pk);
    }
    if (G->dot) {
        int32_t *wk = malloc((size_t)(G->c * per) * sizeof *wk);
        KN_ASSERT(wk);
        dw_pack_words(G, pk, wk);
        G->pk = kl_table(L, KN_I32, G->c * per, wk);
        free(wk);
    } else if (G->mvec) { /* bias and w - wz: exact integers */
        int32_t *wk = malloc((size_t)(G->c * per) * sizeof *wk);
        KN_ASSERT(wk);
        for (int64_t k = 0; k < G->c * per; k++) wk[k] = (int32_t)pk[k];
        for (int64_t ch = 0; ch < G->c && G->pad; ch++) { /* the plane holds x, not x - xz */
            int64_t sum = 0;
            for (int64_t t = 1; t < per; t++) sum += wk[ch * per + t];
            wk[ch * per] = (int32_t)((int64_t)wk[ch * per] - (int64_t)G->xz * sum);
        }
        G->pk = kl_table(L, KN_I32, G->c * per, wk);
        free(wk);
    } else if (!G->wedge) {
        G->pk = kl_table(L, KN_F32, G->c * per, pk);
    }
    if (G->words) {
        int64_t wper = dw_wper(G);
        int32_t *wk = malloc((size_t)(G->c * wper) * sizeof *wk);
        KN_ASSERT(wk);
        dw_pack_wrows(G, pk, wk);
        G->pkw = kl_table(L, KN_I32, G->c * wper, wk);
        free(wk);
    }
    free(pk);
    if (G->pad) { /* the padding: the zero point, once a run */
        int vf = kl_for(L, G->phs * G->prs);
        kl_store(L, G->pad, var(L, vf), kx_const(L, d->x->dtype, G->xz));
        kl_end(L);
    }
    /* the band form: (batch, band) parallel, split as it stands, channels inside it */
    int64_t rb = dw_band_rows(L, G), nb = rb ? G->oh / rb : 0;
    kn_kbuf *part = rb && G->pool ? kl_scratch(L, KN_F32, d->n * nb * G->c) : NULL;
    int vband = -1, vch = -1;
    if (rb) {
        vband = kl_for(L, d->n * nb);
        L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
        kn_kx *b = d->n > 1 ? kx_bin(L, KX_DIV, var(L, vband), kx_int(L, nb)) : kx_int(L, 0);
        vch = kl_for(L, G->c);
        G->vbc = kl_decl(L, KN_I64, kt_mad(L, b, G->c, var(L, vch)));
    } else {
        G->vbc = kl_for(L, d->n * G->c);
    }
    if (G->pk) {
        G->vpk =
            kl_decl(L, KN_I64,
                    kx_mul(L, kx_bin(L, KX_MOD, var(L, G->vbc), kx_int(L, G->c)), kx_int(L, per)));
        for (int64_t k = 0; k <= (G->hold ? taps : 0); k++)
            G->wv[k] =
                kl_decl(L, G->at, kx_load(L, G->pk, kx_add(L, var(L, G->vpk), kx_int(L, k))));
    }
    if (G->words) {
        G->vpkw = kl_decl(
            L, KN_I64,
            kx_mul(L, kx_bin(L, KX_MOD, var(L, G->vbc), kx_int(L, G->c)), kx_int(L, dw_wper(G))));
    }
    if (G->pph) {
        dw_pad_phases(L, G);
    } else if (G->pad) { /* the channel's rows and columns the outputs read, into the plane */
        int64_t r0 = G->ph < 0 ? -G->ph : 0, r1 = G->phs - G->ph < G->h ? G->phs - G->ph : G->h;
        int64_t c0 = G->pw < 0 ? -G->pw : 0, c1 = G->prs - G->pw < G->w ? G->prs - G->pw : G->w;
        if (r1 > r0 && c1 > c0) {
            int vr = kl_for(L, r1 - r0);
            kn_kx *iy = kt_plus(L, var(L, vr), r0);
            kl_copy(L, G->pad,
                    kt_plus(L, kx_mul(L, kt_plus(L, iy, G->ph), kx_int(L, G->prs)), c0 + G->pw),
                    d->x,
                    kt_plus(L, kx_mul(L, kt_mad(L, var(L, G->vbc), G->h, iy), kx_int(L, G->w)), c0),
                    kx_int(L, c1 - c0));
            kl_end(L);
        }
    }
    if (G->dot)
        dw_stage_words(L, G);
    else if (G->stage)
        dw_stage_copy(L, G);
    else if (G->plane)
        kl_copy(L, G->plane, kx_int(L, 0), d->x, kx_mul(L, var(L, G->vbc), kx_int(L, G->h * G->w)),
                kx_int(L, G->h * G->w));
    if (G->pool) dw_pool_begin(L, G);
    if (rb) {
        kn_kx *band = d->n > 1 ? kx_bin(L, KX_MOD, var(L, vband), kx_int(L, nb)) : var(L, vband);
        int vr = kl_for(L, rb);
        dw_band_row(L, G, kx_add(L, kx_mul(L, band, kx_int(L, rb)), var(L, vr)));
        kl_end(L);
        /* part[(b*nb + band)*c + ch] */
        if (G->pool) dw_pool_end(L, G, part, kt_mad(L, var(L, vband), G->c, var(L, vch)));
        kl_end(L);
        kl_end(L);
        if (G->pool) dw_pool_bands(L, G->pool, part, d->n, G->c, nb, G->oh * G->ow);
        return;
    }
    dw_rows(L, G, 0, G->ylo, true);
    dw_rows(L, G, G->ylo, G->yhi, false);
    dw_rows(L, G, G->yhi > G->ylo ? G->yhi : G->ylo, G->oh, true);
    if (G->pool) dw_pool_end(L, G, NULL, NULL);
    kl_end(L);
}

kn_status kn_kpass_depthwise(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    if (!t || t->kind == KN_TARGET_GPU) return KN_OK; /* work-items, not register tiles */
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_contract *d = kern->contract;
        /* integer tiles in f32: not on cores without an FPU (a libgcc call per operation;
         * DS-CNN int8 on the Cortex-M3: 37.8 M instructions against 13.2 M) */
        if (d && dwc_suits(d) && !(kn_contract_is_int(d) && t->float_abi == KN_FLOAT_ABI_SOFT)) {
            kn_kbuf *pool =
                kn_contract_is_int(d) ? NULL : dw_pool_take(cx, p, dw_pool_kernel(p, k, d, true));
            kn_lower *L = kl_builder_rewrite(cx, p, k);
            dwc_geom G;
            dwc_build(L, d, kn_schedule_for(p, k), pool, &G);
            kern->sched.tile_rows = G.R;
            kern->sched.tile_vecs = 1;
            kern->sched.lanes = kl_lanes(L, KN_F32);
            kern->sched.pad = 1;
            if (G.plane) kern->staged_in = d->x, kern->staged_out = d->y;
            kl_builder_destroy(L);
            continue;
        }
        if (!d || !dw_suits(d) || (kn_contract_is_int(d) && t->float_abi == KN_FLOAT_ABI_SOFT))
            continue;
        /* the pool's output, written here instead; its kernel left empty */
        kn_kbuf *pool =
            dw_pool_take(cx, p, kn_contract_is_int(d) ? -1 : dw_pool_kernel(p, k, d, false));
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        dw_geom G;
        dw_build(L, d, kn_schedule_for(p, k), t, pool, &G);
        kern->sched.tile_rows = G.lanes > 1 ? G.rows : G.srows;
        kern->sched.tile_vecs = G.mvec && G.yrows > 1 ? G.yrows : 1;
        kern->sched.lanes = G.lanes;
        kern->sched.pad = G.stage ? 2 : 1;
        kern->sched.dot = G.dot;
        if (G.words) { /* row words: SMLAD tiles of nu words */
            kern->sched.tile_rows = G.nu;
            kern->sched.dot = KN_DOT_S16X2;
            kern->sched.split = 1;
        }
        if (G.plane) kern->staged_in = (kn_kbuf *)d->x, kern->staged_out = (kn_kbuf *)d->y;
        kl_builder_destroy(L);
    }
    return KN_OK;
}
