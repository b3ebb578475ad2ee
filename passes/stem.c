/* The stem pass: convolutions over few input channels (the first layer of a CNN: 3
 * colour channels, 3x3 or 7x7 windows at stride 2) rebuilt as vector tiles along the
 * output rows. requires: kir (kernels with kn_contract descriptors); breaks: plan (adds
 * a scratch and a packed constant).
 *
 * The tile pass (passes/tile.c) makes rows of a tile output pixels and vectors output
 * channels, reducing over input channels x window. With 3 input channels the reduction
 * is 27 (3x3) or 147 (7x7) steps: too short to pay for the tile's start and its store,
 * which goes through a scratch and a transposing scalar loop because NCHW puts an
 * output's channels oh*ow apart. Here the vectors run along the output row instead,
 * where y is contiguous, and the tile is `mt` output channels x `nv` vectors of
 * `lanes` outputs:
 *
 *   staged copy:  xs[b][ci][row][phase p][j] = padded x[b][ci][row - ph][j*sw + p - pw]
 *   for oy (parallel; in a batch loop when n > 1):
 *     for block of mt output channels (then a partial block):
 *       for tiles of nv vectors along the row (then a last tile, then the tail):
 *         acc[m][v] = 0                                        vector locals
 *         for ci, ky:
 *           for kx (unrolled): in[v] = xs[.., oy*sh + ky*dh, phase (kx*dw) % sw,
 *                                         ox + (kx*dw)/sw + v*lanes ..]   vector loads
 *                              acc[m][v] = fma(in[v], wpk[mblk, ci, ky, kx, m], acc[m][v])
 *         y[b, mo + m, oy, ox + v*lanes ..] = epilogue(acc[m][v] + bias[mo + m])
 *
 * The input is copied once per run into a zero-padded scratch whose rows are split into
 * their sw column phases (padded column j*sw + p at phase p's start + j), so that the
 * taps of consecutive outputs, sw columns apart in x, are consecutive there: every tap
 * is one contiguous vector load and no output tests bounds. The copy is c*h*w elements
 * against m*oh*ow*c*kh*kw multiply-adds. Weights are packed at compile time per block
 * of mt output channels, [mblk][ci][ky][kx][mt] (zero past m), so a tap's mt weights
 * are consecutive scalars broadcast to the vectors.
 *
 * A row's outputs past its last full vector are one more vector ending at the row's
 * end, overlapping the one before (its outputs computed twice, the same values),
 * unless an epilogue operand may share y's storage (an arena temporary the memory plan
 * could run in place): then vectors of half the lanes (down to 4) and scalars. Tile
 * sizes come from the target's registers: mt*nv accumulators, nv inputs and a
 * broadcast weight; a schedule file's tile_rows (mt) and tile_vecs (nv) override them.
 *
 * Only CPUs with vectors of 4 lanes or more: on microcontrollers the staged copy would
 * be an arena buffer the size of the padded input (issue 13). Integer convolutions,
 * grouped ones, 1x1 windows (tile_pointwise's) and outputs not in NCHW keep the tile
 * pass's tiles; the input may be in any layout (the copy reads it by its strides). */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "passes/tile.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

enum {
    ST_MAX_C = 4,      /* input channels a stem may have */
    ST_MAX_MT = 8,     /* output channels a tile */
    ST_MAX_NV = 8,     /* vectors a tile */
    ST_MAX_KW = 16,    /* window columns (unrolled) */
    ST_MAX_STRIDE = 4, /* column phases */
    ST_MIN_LANES = 4,
    ST_BANDS = 8, /* bands of the staged input's rows (the parallel pass's MOVE_TASKS) */
};

typedef struct st_geom {
    const kn_contract *d;
    int64_t n, c, m, h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t xs[4];               /* x's element strides along (n, c, h, w) */
    int64_t hs, rs;              /* staged rows per channel, elements per staged row */
    int64_t pwid[ST_MAX_STRIDE]; /* columns of each phase */
    int64_t poff[ST_MAX_STRIDE]; /* each phase's first element in a staged row */
    kn_kbuf *xst;                /* the staged input [n][c][hs][rs] */
    kn_kbuf *wpk;                /* packed weights [mblk][c][kh][kw][mt] */
    int lanes, mt, nv;           /* the tile */
    bool overlap;                /* a row's tail as one vector overlapping the one before */
    kn_kx *b, *oy;               /* the batch (constant 0 when n == 1) and the output row */
} st_geom;

static kn_kx *var(kn_lower *L, int v) {
    return kx_var(L, v);
}

/* Offset of tap kx within a staged row, from the output column's element. */
static int64_t st_tap(const st_geom *G, int64_t kx) {
    int64_t col = kx * G->dw;
    return G->poff[col % G->sw] + col / G->sw;
}

/* One tile: output channels mblk*mt + [0, mt) x nv groups of `lanes` outputs from
 * column ox of row oy. */
static void st_tile(kn_lower *L, const st_geom *G, kn_kx *mblk, int mt, kn_kx *ox, int nv,
                    int lanes) {
    const kn_contract *d = G->d;
    int acc[ST_MAX_MT][ST_MAX_NV];
    int vmo = kl_decl(L, KN_I64, kx_mul(L, mblk, kx_int(L, G->mt)));
    for (int m = 0; m < mt; m++) /* from 0: the bias is added after the sum */
        for (int v = 0; v < nv; v++)
            acc[m][v] = kl_decl_vec(L, KN_F32, lanes, kx_const(L, KN_F32, 0.0));
    int vc = kl_for(L, G->c), vky = kl_for(L, G->kh);
    /* xs[b, ci, oy*sh + ky*dh, ox]: the staged row's element of output column ox */
    kn_kx *plane = kt_mad(L, G->b, G->c, var(L, vc));
    kn_kx *row = kt_mad(L, G->oy, G->sh, kx_mul(L, var(L, vky), kx_int(L, G->dh)));
    int vx = kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, plane, G->hs, row), G->rs, ox));
    /* wpk[mblk, ci, ky, 0, 0] */
    kn_kx *wr = kt_mad(L, kt_mad(L, mblk, G->c, var(L, vc)), G->kh, var(L, vky));
    int vw = kl_decl(L, KN_I64, kx_mul(L, wr, kx_int(L, G->kw * G->mt)));
    for (int64_t kx = 0; kx < G->kw; kx++) {
        int in[ST_MAX_NV];
        for (int v = 0; v < nv; v++) {
            kn_kx *at = kt_plus(L, var(L, vx), st_tap(G, kx) + (int64_t)v * lanes);
            in[v] =
                kl_decl_vec(L, KN_F32, lanes,
                            lanes > 1 ? kx_vload(L, G->xst, at, lanes) : kx_load(L, G->xst, at));
        }
        for (int m = 0; m < mt; m++) {
            int wv = kl_decl(L, KN_F32, kx_load(L, G->wpk, kt_plus(L, var(L, vw), kx * G->mt + m)));
            for (int v = 0; v < nv; v++)
                kl_set(L, acc[m][v], kx_fma(L, var(L, in[v]), var(L, wv), var(L, acc[m][v])));
        }
    }
    kl_end_n(L, 2);
    /* y[b, mo + m, oy, ox + v*lanes ..] = epilogue(acc[m][v] + bias[mo + m]): the bias after
     * the sum, as ONNX's reference and ONNX Runtime's MLAS order it (lower_conv) */
    for (int m = 0; m < mt; m++) {
        kn_kx *mo = kt_plus(L, var(L, vmo), m);
        kn_kx *bias = d->bias ? var(L, kl_decl(L, KN_F32, kx_load(L, d->bias, mo))) : NULL;
        int vy = kl_decl(L, KN_I64,
                         kt_mad(L, kt_mad(L, kt_mad(L, G->b, G->m, mo), G->oh, G->oy), G->ow, ox));
        for (int v = 0; v < nv; v++) {
            kn_kx *oxv = kt_plus(L, ox, (int64_t)v * lanes), *val = var(L, acc[m][v]);
            if (bias) val = kx_add(L, val, bias);
            if (d->epi) {
                kn_kx *coord[4] = {G->b, mo, G->oy, oxv}, *opnd[KN_EPI_MAX] = {0};
                if (d->nsp == 1) coord[2] = oxv;
                kt_epi_operands(L, d, coord, lanes, opnd);
                val = kl_epilogue(L, d->epi, val, opnd);
            }
            kl_store(L, d->y, kt_plus(L, var(L, vy), (int64_t)v * lanes), val);
        }
    }
}

/* Outputs [ox0, ox0 + ncols) of the row for one block of channels: tiles of up to nv
 * vectors of `lanes`, balanced so the last is not much narrower than the others, then
 * the columns left over (st_tile's header comment: overlap, or narrower vectors). */
static void st_cols(kn_lower *L, const st_geom *G, kn_kx *mblk, int mt, int64_t ox0, int64_t ncols,
                    int lanes) {
    int64_t fv = ncols / lanes, rem = ncols % lanes;
    if (fv) {
        int64_t ntiles = (fv + G->nv - 1) / G->nv, per = (fv + ntiles - 1) / ntiles;
        int64_t nfull = fv / per, last = fv % per, span = per * lanes;
        if (nfull > 1) {
            int vt = kl_for(L, nfull);
            st_tile(L, G, mblk, mt, kt_mad(L, var(L, vt), span, kx_int(L, ox0)), (int)per, lanes);
            kl_end(L);
        } else {
            st_tile(L, G, mblk, mt, kx_int(L, ox0), (int)per, lanes);
        }
        if (last) st_tile(L, G, mblk, mt, kx_int(L, ox0 + nfull * span), (int)last, lanes);
    }
    if (!rem) return;
    if (fv && G->overlap) { /* one vector ending at the row's end */
        st_tile(L, G, mblk, mt, kx_int(L, ox0 + ncols - lanes), 1, lanes);
        return;
    }
    int half = lanes / 2 >= ST_MIN_LANES ? lanes / 2 : 1;
    st_cols(L, G, mblk, mt, ox0 + fv * lanes, rem, half);
}

/* One output row: every full block of mt output channels, then the partial block. */
static void st_row(kn_lower *L, const st_geom *G) {
    int64_t full = G->m / G->mt, tail = G->m % G->mt;
    if (full > 1) {
        int vm = kl_for(L, full);
        st_cols(L, G, var(L, vm), G->mt, 0, G->ow, G->lanes);
        kl_end(L);
    } else if (full) {
        st_cols(L, G, kx_int(L, 0), G->mt, 0, G->ow, G->lanes);
    }
    if (tail) st_cols(L, G, kx_int(L, full), (int)tail, 0, G->ow, G->lanes);
}

/* One staged row: at `row` (its first element in xst), from the input row starting at
 * element `xr` of x: each phase's left padding, its input columns (x[.., j*sw + p - pw])
 * and right padding. */
static void st_stage_row(kn_lower *L, const st_geom *G, int row, int xr) {
    for (int64_t p = 0; p < G->sw; p++) {
        int64_t nc = G->pwid[p], jlo, jhi;
        kt_phase_inside(p, G->sw, G->pw, G->w, nc, &jlo, &jhi);
        kn_kx *at = kt_plus(L, var(L, row), G->poff[p]);
        kt_zero(L, G->xst, at, jlo);
        int64_t from = p + jlo * G->sw - G->pw; /* input column of the first copied */
        if (jhi > jlo && G->sw == 1 && G->xs[3] == 1) {
            kl_copy(L, G->xst, kt_plus(L, at, jlo), G->d->x, kt_plus(L, var(L, xr), from),
                    kx_int(L, jhi - jlo));
        } else if (jhi > jlo) {
            int j = kl_for(L, jhi - jlo);
            kn_kx *src =
                kt_mad(L, var(L, j), G->sw * G->xs[3], kt_plus(L, var(L, xr), from * G->xs[3]));
            kl_store(L, G->xst, kx_add(L, kt_plus(L, at, jlo), var(L, j)),
                     kx_load(L, G->d->x, src));
            kl_end(L);
        }
        kt_zero(L, G->xst, kt_plus(L, at, jhi), nc - jhi);
    }
}

/* The staged input of a batch of several images: for each (batch, channel) plane, the
 * rows above and below the input zero, and the input rows between them. */
static void st_stage_planes(kn_lower *L, const st_geom *G) {
    int vp = kl_for(L, G->n * G->c);
    kn_kx *b = kx_bin(L, KX_DIV, var(L, vp), kx_int(L, G->c));
    kn_kx *ci = kx_bin(L, KX_MOD, var(L, vp), kx_int(L, G->c));
    int vbase = kl_decl(L, KN_I64, kx_mul(L, var(L, vp), kx_int(L, G->hs * G->rs)));
    int64_t top = kt_clamp(G->ph, 0, G->hs), rows = kt_clamp(G->hs - top, 0, G->h);
    kt_zero(L, G->xst, var(L, vbase), top * G->rs);
    if (rows) {
        int vr = kl_for(L, rows);
        int row = kl_decl(L, KN_I64, kt_mad(L, kt_plus(L, var(L, vr), top), G->rs, var(L, vbase)));
        kn_kx *xrow = kx_add(L, kx_mul(L, b, kx_int(L, G->xs[0])),
                             kt_mad(L, ci, G->xs[1], kx_mul(L, var(L, vr), kx_int(L, G->xs[2]))));
        st_stage_row(L, G, row, kl_decl(L, KN_I64, xrow));
        kl_end(L);
    }
    kt_zero(L, G->xst, kt_plus(L, var(L, vbase), (top + rows) * G->rs),
            (G->hs - top - rows) * G->rs);
    kl_end(L);
}

/* The staged input of one image, in bands of input rows: the zero rows above the input
 * (each channel), then
 *
 *   for band (parallel, split as it stands): for channel: for row of the band: the row
 *
 * then the zero rows below. The bands are the copy's split, so each thread stages the
 * rows its own output rows read (the convolution's loop over output rows is split into
 * consecutive chunks too); by channel planes, as one nest on the calling thread, the
 * other thread read its half of the staged input from the caller's core and the caller
 * rewrote lines the other core held (passes/xcore.c; docs/benchmarks.md, "The VM's slow
 * state: what crosses"). Within a band each channel's rows follow one another, as in
 * the plane-by-plane copy: rows outermost (every channel at each row) took the 1-thread
 * stem 3-7% longer. */
static void st_stage_rows(kn_lower *L, const st_geom *G) {
    int64_t top = kt_clamp(G->ph, 0, G->hs), rows = kt_clamp(G->hs - top, 0, G->h);
    int64_t bottom = G->hs - top - rows;
    if (top) {
        int vp = kl_for(L, G->c);
        kt_zero(L, G->xst, kx_mul(L, var(L, vp), kx_int(L, G->hs * G->rs)), top * G->rs);
        kl_end(L);
    }
    if (rows) {
        int64_t band = (rows + ST_BANDS - 1) / ST_BANDS, bands = (rows + band - 1) / band;
        int vb = kl_for(L, bands);
        L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
        int vp = kl_for(L, G->c);
        int vi = kl_for(L, band);
        int vr = kl_decl(L, KN_I64, kt_mad(L, var(L, vb), band, var(L, vi)));
        if (rows % band) kl_if(L, kx_bin(L, KX_LT, var(L, vr), kx_int(L, rows)));
        int row = kl_decl(L, KN_I64,
                          kt_mad(L, var(L, vp), G->hs * G->rs,
                                 kx_mul(L, kt_plus(L, var(L, vr), top), kx_int(L, G->rs))));
        kn_kx *xrow = kt_mad(L, var(L, vp), G->xs[1], kx_mul(L, var(L, vr), kx_int(L, G->xs[2])));
        st_stage_row(L, G, row, kl_decl(L, KN_I64, xrow));
        kl_end_n(L, rows % band ? 4 : 3);
    }
    if (bottom) {
        int vp = kl_for(L, G->c);
        kt_zero(L, G->xst, kt_mad(L, var(L, vp), G->hs * G->rs, kx_int(L, (top + rows) * G->rs)),
                bottom * G->rs);
        kl_end(L);
    }
}

/* Whether convolution d is a stem this pass rebuilds. */
static bool st_suits(const kn_contract *d) {
    int64_t xs[4], ys[4];
    if (d->kind != KN_CONTRACT_CONV || kn_contract_is_int(d)) return false;
    kn_contract_strides(d, xs, ys);
    return d->group == 1 && d->c <= ST_MAX_C && d->kh * d->kw > 1 && d->kw <= ST_MAX_KW &&
           d->sw <= ST_MAX_STRIDE && d->x->dtype == KN_F32 && d->y->dtype == KN_F32 &&
           kt_f32_const(d->w) && (!d->bias || kt_f32_const(d->bias)) && d->ph >= 0 && d->pw >= 0 &&
           d->peh >= 0 && d->pew >= 0 && kt_operands_ok(d) && ys[3] == 1 && ys[2] == d->ow &&
           ys[1] == d->oh * d->ow && d->y->numel > 0;
}

/* Whether the row tails may overlap: no epilogue operand can share y's storage (only
 * constants and graph inputs, which the memory plan never runs in place of y). */
static bool st_overlap_ok(const kn_contract *d) {
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (o && o->kind != KB_CONST && o->kind != KB_INPUT) return false;
    }
    return true;
}

/* The tile: mt*nv accumulators, nv inputs and one broadcast weight in the vector
 * registers; 8 output channels where there are 32 registers, 4 where 16. */
static void st_choose(kn_lower *L, st_geom *G, const kn_sched *ov) {
    int regs = kl_vector_registers(L);
    int mt = regs >= 32 ? 8 : 4;
    if (ov && ov->tile_rows) mt = ov->tile_rows;
    mt = mt < 1 ? 1 : mt > ST_MAX_MT ? ST_MAX_MT : mt;
    if (mt > G->m) mt = (int)G->m;
    int nv = (regs - 1) / (mt + 1);
    if (ov && ov->tile_vecs) nv = ov->tile_vecs;
    nv = nv < 1 ? 1 : nv > ST_MAX_NV ? ST_MAX_NV : nv;
    G->mt = mt, G->nv = nv;
}

static void st_geometry(const kn_contract *d, st_geom *G) {
    int64_t ys[4];
    memset(G, 0, sizeof *G);
    G->d = d;
    G->n = d->n, G->c = d->c, G->m = d->m, G->h = d->h, G->w = d->w_, G->oh = d->oh;
    G->ow = d->ow, G->kh = d->kh, G->kw = d->kw, G->sh = d->sh, G->sw = d->sw, G->dh = d->dh;
    G->dw = d->dw, G->ph = d->ph, G->pw = d->pw;
    kn_contract_strides(d, G->xs, ys);
    /* the padded window the outputs read: hs rows of ws columns, in sw phases */
    int64_t ws = (G->ow - 1) * G->sw + (G->kw - 1) * G->dw + 1;
    G->hs = (G->oh - 1) * G->sh + (G->kh - 1) * G->dh + 1;
    G->rs = kt_phases(ws, G->sw, G->pwid, G->poff);
}

/* packed weights [mblk][ci][ky][kx][mt], zero past m */
static kn_kbuf *st_pack(kn_lower *L, const st_geom *G) {
    int64_t nblk = (G->m + G->mt - 1) / G->mt, taps = G->c * G->kh * G->kw;
    float *pk = calloc((size_t)(nblk * taps * G->mt), sizeof *pk);
    KN_ASSERT(pk);
    const float *wt = (const float *)G->d->w->data->data;
    for (int64_t oc = 0; oc < G->m; oc++)
        for (int64_t t = 0; t < taps; t++)
            pk[((oc / G->mt) * taps + t) * G->mt + oc % G->mt] = wt[oc * taps + t];
    kn_kbuf *b = kl_table(L, KN_F32, nblk * taps * G->mt, pk);
    free(pk);
    return b;
}

static void st_build(kn_lower *L, const kn_contract *d, const kn_sched *ov, st_geom *G) {
    st_geometry(d, G);
    G->lanes = kl_lanes(L, KN_F32);
    G->overlap = st_overlap_ok(d);
    st_choose(L, G, ov);
    G->wpk = st_pack(L, G);
    G->xst = kl_scratch(L, KN_F32, G->n * G->c * G->hs * G->rs);
    if (G->n > 1)
        st_stage_planes(L, G);
    else
        st_stage_rows(L, G);
    /* rows are independent (each writes its own outputs, reading the staged input): the
     * parallel pass cannot see it through y's channel stride, so they are marked here */
    if (G->n > 1) {
        G->b = var(L, kl_for(L, G->n));
        L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    } else {
        G->b = kx_int(L, 0);
    }
    G->oy = var(L, kl_for(L, G->oh));
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
    st_row(L, G);
    kl_end_n(L, G->n > 1 ? 2 : 1);
}

kn_status kn_kpass_stem(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    if (!t || t->kind != KN_TARGET_CPU) return KN_OK;
    int *readers = kn_kprog_readers(p); /* frees weights once repacked (compile memory) */
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_contract *d = kern->contract;
        if (!d || kern->sched.tile_rows || !st_suits(d)) continue;
        kn_ks *old = kern->body;
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        if (kl_lanes(L, KN_F32) < ST_MIN_LANES) {
            kern->body = old;
            kl_builder_destroy(L);
            continue;
        }
        st_geom G;
        st_build(L, d, kn_schedule_for(p, k), &G);
        kern->sched.tile_rows = G.mt;
        kern->sched.tile_vecs = G.nv;
        kern->sched.lanes = G.lanes;
        kern->sched.pad = 2;
        kn_kprog_rewritten(p, readers, k, old);
        kl_builder_destroy(L);
    }
    free(readers);
    return KN_OK;
}
