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
 *         acc[r] = bias
 *         for ky (unrolled), if the row is a border row: if 0 <= iy < H
 *           xin[o] = x[row iy, first column + o]  each distinct offset o of the tile's
 *                                                 taps loaded once (vectors of lanes)
 *           acc[r] = fma(xin[r*step + kx*dw], w[ky*kw + kx], acc[r])   kx unrolled
 *         y[.., ox + r*lanes ..] = epilogue(acc[r])
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
 * tiles in f32 on exact integers and requantize in the store (passes/tile_int.c). */
#include "ir/epilogue.h"
#include "ir/kir.h"
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
    DW_MIN_LANES = 4
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
    kn_kbuf *mult, *shift; /* kt_int_tables */
} dw_geom;

static kn_kx *var(kn_lower *L, int v) {
    return kx_var(L, v);
}

/* `lanes` inputs of the tile from x[at] (one: a scalar), as f32: x itself, or x - xz
 * for integer convolutions. */
static kn_kx *dw_in(kn_lower *L, const dw_geom *G, kn_kx *at, int lanes) {
    kn_kx *v = lanes > 1 ? kx_vload(L, G->d->x, at, lanes) : kx_load(L, G->d->x, at);
    if (!G->integer) return v;
    v = kx_cast(L, KN_F32, v);
    return G->xz ? kx_sub(L, v, kx_const(L, KN_F32, G->xz)) : v;
}

/* Packed entry k of the channel (0: bias, 1 + tap: weight). */
static kn_kx *packed(kn_lower *L, const dw_geom *G, int k) {
    if (G->hold || k == 0) return var(L, G->wv[k]);
    return kx_load(L, G->pk, kx_add(L, var(L, G->vpk), kx_int(L, k)));
}

/* One tile of output row oy: `rows` groups of `lanes` outputs from column ox on (group
 * r at ox + r*lanes). crow: test each kernel row against the input's rows; ccol (one
 * scalar output): test each tap's column. */
static void dw_tile(kn_lower *L, const dw_geom *G, kn_kx *oy, kn_kx *ox, int rows, int lanes,
                    bool crow, bool ccol) {
    int acc[DW_MAX_ROWS];
    for (int r = 0; r < rows; r++) acc[r] = kl_decl_vec(L, KN_F32, lanes, packed(L, G, 0));
    int64_t istep = (int64_t)lanes * G->sw; /* input columns between groups */
    kn_kx *col0 = kt_plus(L, kx_mul(L, ox, kx_int(L, G->sw)), -G->pw);
    for (int64_t ky = 0; ky < G->kh; ky++) {
        kn_kx *iy = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), ky * G->dh - G->ph);
        /* x[bc, iy, col0]: the tile's first tap of this kernel row */
        int vx = kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, var(L, G->vbc), G->h, iy), G->w, col0));
        if (crow) kl_if(L, kt_inside(L, iy, G->h));
        if (ccol) {
            for (int64_t kx = 0; kx < G->kw; kx++) {
                kl_if(L, kt_inside(L, kt_plus(L, col0, kx * G->dw), G->w));
                kn_kx *xv = dw_in(L, G, kx_add(L, var(L, vx), kx_int(L, kx * G->dw)), 1);
                kl_set(L, acc[0],
                       kx_fma(L, xv, packed(L, G, (int)(1 + ky * G->kw + kx)), var(L, acc[0])));
                kl_end(L);
            }
        } else {
            /* each distinct input offset of the tile's taps, loaded once */
            int64_t off[DW_MAX_OFFS];
            int xin[DW_MAX_OFFS], noff = 0;
            for (int64_t kx = 0; kx < G->kw; kx++)
                for (int r = 0; r < rows; r++) {
                    int64_t o = r * istep + kx * G->dw;
                    int i = 0;
                    while (i < noff && off[i] != o) i++;
                    if (i < noff) continue;
                    kn_kx *at = kx_add(L, var(L, vx), kx_int(L, o));
                    off[noff] = o;
                    xin[noff++] = kl_decl_vec(L, KN_F32, lanes, dw_in(L, G, at, lanes));
                }
            for (int64_t kx = 0; kx < G->kw; kx++) {
                kn_kx *wk = packed(L, G, (int)(1 + ky * G->kw + kx));
                for (int r = 0; r < rows; r++) {
                    int i = 0;
                    while (off[i] != r * istep + kx * G->dw) i++;
                    kl_set(L, acc[r], kx_fma(L, var(L, xin[i]), wk, var(L, acc[r])));
                }
            }
        }
        if (crow) kl_end(L);
    }
    /* y[b, c, oy, ox + r*lanes ..] = epilogue(acc[r]) */
    const kn_contract *d = G->d;
    kn_kx *bc = var(L, G->vbc);
    kn_kx *b = kx_bin(L, KX_DIV, bc, kx_int(L, G->c)), *c = kx_bin(L, KX_MOD, bc, kx_int(L, G->c));
    for (int r = 0; r < rows; r++) {
        kn_kx *oxr = kx_add(L, ox, kx_int(L, (int64_t)r * lanes));
        kn_kx *yi = kt_mad(L, kt_mad(L, bc, G->oh, oy), G->ow, oxr), *val = var(L, acc[r]);
        if (d->epi) {
            kn_kx *coord[4] = {b, c, oy, oxr}, *opnd[KN_EPI_MAX] = {0};
            if (d->nsp == 1) coord[2] = oxr;
            kt_epi_operands(L, d, coord, lanes, opnd);
            val = kl_epilogue(L, d->epi, val, opnd);
        }
        if (G->integer) val = kt_int_store(L, d, G->mult, G->shift, kx_cast(L, KN_I32, val), c);
        kl_store(L, d->y, yi, val);
    }
}

/* Outputs [ox0, ox0 + n) of row oy, none reading padding along the row: tiles of
 * rows x lanes, a last tile of fewer vectors, then the tail in scalar tiles. */
static void dw_cols(kn_lower *L, const dw_geom *G, kn_kx *oy, int64_t ox0, int64_t n, int lanes,
                    int rows, bool crow) {
    int64_t per = (int64_t)rows * lanes, nt = n / per, rem = n % per, at = ox0 + nt * per;
    if (nt) {
        int vt = kl_for(L, nt);
        dw_tile(L, G, oy, kt_mad(L, var(L, vt), per, kx_int(L, ox0)), rows, lanes, crow, false);
        kl_end(L);
    }
    if (rem / lanes) {
        dw_tile(L, G, oy, kx_int(L, at), (int)(rem / lanes), lanes, crow, false);
        at += rem / lanes * lanes;
    }
    if (lanes > 1 && rem % lanes) { /* one vector of half the lanes (at least 4), or scalars */
        int half = lanes / 2 >= DW_MIN_LANES ? lanes / 2 : 1;
        dw_cols(L, G, oy, at, rem % lanes, half, half > 1 ? 1 : G->srows, crow);
    }
}

/* Border columns [ox0, ox1) of row oy: one output at a time, every tap tested. */
static void dw_border_cols(kn_lower *L, const dw_geom *G, kn_kx *oy, int64_t ox0, int64_t ox1,
                           bool crow) {
    if (ox1 <= ox0) return;
    int v = kl_for(L, ox1 - ox0);
    dw_tile(L, G, oy, kt_plus(L, var(L, v), ox0), 1, 1, crow, true);
    kl_end(L);
}

/* Output rows [oy0, oy1); crow: they read padding above or below. */
static void dw_rows(kn_lower *L, const dw_geom *G, int64_t oy0, int64_t oy1, bool crow) {
    if (oy1 <= oy0) return;
    int v = kl_for(L, oy1 - oy0);
    kn_kx *oy = kt_plus(L, var(L, v), oy0);
    dw_border_cols(L, G, oy, 0, G->xlo, crow);
    if (G->xhi > G->xlo) dw_cols(L, G, oy, G->xlo, G->xhi - G->xlo, G->lanes, G->rows, crow);
    dw_border_cols(L, G, oy, G->xhi, G->ow, crow);
    kl_end(L);
}

/* Distinct input offsets a scalar tile of r outputs reads in one kernel row. */
static int distinct_taps(const dw_geom *G, int r) {
    int64_t n = 0, off[DW_MAX_OFFS];
    for (int64_t kx = 0; kx < G->kw; kx++)
        for (int64_t i = 0; i < r; i++) {
            int64_t o = i * G->sw + kx * G->dw, j = 0;
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
    G->lanes = lanes > 1 && G->sw == 1 ? lanes : 1;
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
        G->hold = taps + G->rows + 2 <= regs;
    } else {
        G->rows = G->srows;
    }
    if (ov && ov->tile_rows) {
        int r = ov->tile_rows < DW_MAX_ROWS ? ov->tile_rows : DW_MAX_ROWS;
        G->rows = r;
        if (G->lanes == 1) G->srows = r;
    }
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

static void dw_build(kn_lower *L, const kn_contract *d, const kn_sched *ov, dw_geom *G) {
    memset(G, 0, sizeof *G);
    G->d = d;
    G->c = d->c, G->h = d->h, G->w = d->w_, G->oh = d->oh, G->ow = d->ow;
    G->kh = d->kh, G->kw = d->kw, G->sh = d->sh, G->sw = d->sw, G->dh = d->dh, G->dw = d->dw;
    G->ph = d->ph, G->pw = d->pw;
    kt_interior(G->h, G->oh, G->kh, G->sh, G->dh, G->ph, &G->ylo, &G->yhi);
    kt_interior(G->w, G->ow, G->kw, G->sw, G->dw, G->pw, &G->xlo, &G->xhi);
    dw_choose(L, G, ov);
    /* packed per channel: bias, then the kh*kw weights */
    int64_t taps = G->kh * G->kw, per = 1 + taps;
    float *pk = malloc((size_t)(G->c * per) * sizeof *pk);
    KN_ASSERT(pk);
    G->integer = kn_contract_is_int(d);
    if (G->integer) {
        kt_dw_int_pack(d, pk);
        G->xz = kt_int_xz(d);
        kt_int_tables(L, d, &G->mult, &G->shift);
    }
    const float *wt = G->integer ? NULL : (const float *)d->w->data->data;
    const float *bs = d->bias && !G->integer ? (const float *)d->bias->data->data : NULL;
    for (int64_t ch = 0; ch < G->c && !G->integer; ch++) {
        pk[ch * per] = bs ? bs[ch] : 0.0f;
        memcpy(pk + ch * per + 1, wt + ch * taps, (size_t)taps * sizeof *pk);
    }
    G->pk = kl_table(L, KN_F32, G->c * per, pk);
    free(pk);
    G->vbc = kl_for(L, d->n * G->c);
    G->vpk = kl_decl(L, KN_I64,
                     kx_mul(L, kx_bin(L, KX_MOD, var(L, G->vbc), kx_int(L, G->c)), kx_int(L, per)));
    for (int64_t k = 0; k <= (G->hold ? taps : 0); k++)
        G->wv[k] = kl_decl(L, KN_F32, kx_load(L, G->pk, kx_add(L, var(L, G->vpk), kx_int(L, k))));
    dw_rows(L, G, 0, G->ylo, true);
    dw_rows(L, G, G->ylo, G->yhi, false);
    dw_rows(L, G, G->yhi > G->ylo ? G->yhi : G->ylo, G->oh, true);
    kl_end(L);
}

kn_status kn_kpass_depthwise(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    if (!t || t->kind == KN_TARGET_GPU) return KN_OK; /* work-items, not register tiles */
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_contract *d = kern->contract;
        if (!d || !dw_suits(d)) continue;
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        dw_geom G;
        dw_build(L, d, kn_schedule_for(p, k), &G);
        kern->sched.tile_rows = G.lanes > 1 ? G.rows : G.srows;
        kern->sched.tile_vecs = 1;
        kern->sched.lanes = G.lanes;
        kern->sched.pad = 1;
        kl_builder_destroy(L);
    }
    return KN_OK;
}
