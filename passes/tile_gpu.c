/* The tile pass's schedule for OpenCL devices: work-item tiles.
 *
 * On an OpenCL device each iteration of the outermost parallel loops is a work-item
 * (codegen/opencl maps up to three of them to the NDRange, the innermost to dimension
 * 0). A work-item keeps a small tile of accumulators:
 *
 *   Conv:   work-item (batch, block of output channels, oh, block of R pixels along ow);
 *           per reduction step (ci, kh, kw) R input elements times the block's packed
 *           weights (the same for every work-item of the group).
 *   MatMul/Gemm: work-item (block of R rows, block of columns); per step k R elements of
 *           A times the block's columns of packed B (B itself when known only at run
 *           time).
 *
 * On a device with vectors (the target's vector_bits > 0; PoCL on this CPU), the
 * channel or column block is nv vectors of VL lanes held in vector accumulators. The
 * device compilers do not vectorize across work-items whose body has a loop (PoCL 3
 * leaves the reduction loop scalar and at best packs a work-item's accumulators with
 * its SLP vectorizer, which gives up on the long expression trees of an epilogue such
 * as GELU), so vectors inside the work-item are what gives SIMD code, as the CPU's
 * register tiles do. Without vectors (VL 1) the accumulators are scalars.
 *
 * Padding is read in place, never through a padded copy, which would need a second
 * kernel: the load at the column clamped into the row, then a select of 0 outside it
 * (no branch, so one reduction step is one basic block for the device compiler). A
 * Conv tile whose pixels read contiguous columns unrolls the kw taps of a kernel row
 * and reads each column of the row's window once (conv_row_reuse). The last block of channels or
 * rows is guarded at its stores. The fused epilogue runs on each accumulator (or vector) as it is
 * stored. The kernel's schedule records the tile: tile_rows = R, tile_vecs = the block in vectors
 * (in columns when lanes = 1), lanes = VL; a schedule file's lanes=1 asks for scalar work-items. */
#include "ir/epilogue.h"
#include "passes/tile.h"

#include <stdlib.h>
#include <string.h>

enum {
    GPU_MAX_ROWS = 8,
    GPU_MAX_COLS = 64,
    GPU_CONV_ROWS = 1,
    GPU_CONV_CB = 64,
    GPU_MM_ROWS = 1,
    GPU_MM_CB = 64,
    GPU_VEC_ROWS = 4, /* vector work-items: 4 rows x 4 vectors, 16 accumulators */
    GPU_VEC_VECS = 4,
    GPU_CVEC_ACC = 16, /* convolutions: up to 16 vector accumulators, */
    GPU_CVEC_VECS = 4, /* at most 4 vectors of channels */
    GPU_MAX_KW = 16,   /* conv_row_reuse: the taps of a kernel row unrolled, */
    GPU_MAX_SPAN = 32  /* the input columns one tile's row reads */
};

/* a * s + b, index arithmetic */
static kn_kx *mad(kn_lower *L, kn_kx *a, int64_t s, kn_kx *b) {
    return kx_add(L, kx_mul(L, a, kx_int(L, s)), b);
}

static kn_kx *in_range(kn_lower *L, kn_kx *i, int64_t n) {
    return kx_bin(L, KX_LAND, kx_bin(L, KX_GE, i, kx_int(L, 0)), kx_bin(L, KX_LT, i, kx_int(L, n)));
}

static int clamp_tile(int v, int max) {
    return v < 1 ? 1 : v > max ? max : v;
}

/* ---- Conv ---- */

/* What the reduction step of a Conv work-item tile reads and accumulates into. */
typedef struct conv_taps {
    kn_lower *L;
    const kn_contract *d;
    kn_kbuf *wpk; /* packed weights [group][block][red][cb] */
    bool xdense;  /* x is NCHW */
    int vrow;     /* the input row's first element (NCHW) or offset (strided) */
    int rows, nv, VL, cb;
} conv_taps;

/* x at column col of the tile's input row, declared: with padding read at the column
 * clamped into the row and selected to 0 outside it. A select, not a branch around
 * the load: the step stays one basic block and the device compiler interleaves the
 * loads with the multiply-adds (with a branch per pixel, PoCL's LLVM kept every row's
 * value live at once and spilled accumulators). inside: col is within the row for
 * every tile (known at compile time), so neither clamp nor select. */
static int conv_x(conv_taps *t, kn_kx *col, bool inside) {
    kn_lower *L = t->L;
    const kn_contract *d = t->d;
    int64_t w = d->w_, xs[4], ys[4];
    kn_contract_strides(d, xs, ys);
    bool wpad = (d->pw || d->pew) && !inside;
    int vcol = kl_decl(L, KN_I64, col);
    kn_kx *cw = kx_var(L, vcol);
    if (wpad) cw = kx_bin(L, KX_MAX, kx_bin(L, KX_MIN, cw, kx_int(L, w - 1)), kx_int(L, 0));
    kn_kx *xi =
        t->xdense ? mad(L, kx_var(L, t->vrow), w, cw) : mad(L, cw, xs[3], kx_var(L, t->vrow));
    int xv = kl_decl(L, KN_F32, kx_load(L, d->x, xi));
    if (wpad)
        xv = kl_decl(
            L, KN_F32,
            kx_select(L, in_range(L, kx_var(L, vcol), w), kx_var(L, xv), kx_const(L, KN_F32, 0)));
    return xv;
}

/* One tap: the block's nv weight vectors at reduction step red (in units of cb), then
 * row by row each row's input value (at column col[r]) times them: nv + 1 registers
 * besides the accumulators, not nv + rows. */
static void conv_tap(conv_taps *t, kn_kx *red, kn_kx **col, int acc[][GPU_MAX_COLS]) {
    kn_lower *L = t->L;
    int vw = kl_decl(L, KN_I64, kx_mul(L, red, kx_int(L, t->cb)));
    int wv[GPU_MAX_COLS];
    for (int v = 0; v < t->nv; v++)
        wv[v] =
            kl_decl_vec(L, KN_F32, t->VL,
                        kx_vload(L, t->wpk, kx_add(L, kx_var(L, vw), kx_int(L, v * t->VL)), t->VL));
    for (int r = 0; r < t->rows; r++) {
        int xv = conv_x(t, col[r], false);
        for (int v = 0; v < t->nv; v++)
            kl_set(L, acc[r][v], kx_fma(L, kx_var(L, xv), kx_var(L, wv[v]), kx_var(L, acc[r][v])));
    }
}

/* All kw taps of one (ci, kh), unrolled, for a tile whose pixels read contiguous
 * columns from vcol0 on: row r at tap j reads column vcol0 + r*sw + j*dw, so each of
 * the span's columns is read once (where it is first used) and kept for the taps that
 * share it (a 3x3 stride-1 tile of 8 pixels reads 10 values, not 24). red0: the
 * reduction step of tap 0. vcol0 runs over [lo, hi] (the first and the last tile):
 * a column offset that stays inside the row for both reads without the padding's
 * clamp and select (3x3, pad 1, 8-pixel tiles: 8 of the 10 columns). */
static void conv_row_reuse(conv_taps *t, int vcol0, int64_t lo, int64_t hi, kn_kx *red0,
                           int acc[][GPU_MAX_COLS]) {
    kn_lower *L = t->L;
    const kn_contract *d = t->d;
    int xo[GPU_MAX_SPAN];
    for (int o = 0; o < GPU_MAX_SPAN; o++) xo[o] = -1;
    int vw = kl_decl(L, KN_I64, kx_mul(L, red0, kx_int(L, t->cb)));
    for (int64_t j = 0; j < d->kw; j++) {
        int wv[GPU_MAX_COLS];
        for (int v = 0; v < t->nv; v++)
            wv[v] = kl_decl_vec(L, KN_F32, t->VL,
                                kx_vload(L, t->wpk,
                                         kx_add(L, kx_var(L, vw), kx_int(L, j * t->cb + v * t->VL)),
                                         t->VL));
        for (int r = 0; r < t->rows; r++) {
            int64_t o = r * d->sw + j * d->dw;
            if (xo[o] < 0)
                xo[o] = conv_x(t, kx_add(L, kx_var(L, vcol0), kx_int(L, o)),
                               lo + o >= 0 && hi + o < d->w_);
            for (int v = 0; v < t->nv; v++)
                kl_set(L, acc[r][v],
                       kx_fma(L, kx_var(L, xo[o]), kx_var(L, wv[v]), kx_var(L, acc[r][v])));
        }
    }
}

/* Each work-item computes R pixels along ow by nv vectors of VL output channels (VL 1:
 * scalar work-items, the form for a device without vectors; VL > 1 on a device with
 * them, the target's vector_bits, as vector accumulators), one reduction step reading R
 * input elements and nv contiguous vectors of the packed weights. Output channels are
 * ys[1] apart in y (oh*ow in NCHW; x and y may be NHWC, kn_contract_strides), so
 * results are stored lane by lane, the epilogue applied per element. kg is a multiple of VL. The
 * schedule records tile_rows = R, tile_vecs = nv, lanes = VL. */
static bool gpu_conv(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out, int VL) {
    int64_t n = d->n, c = d->c, m = d->m, group = d->group, cg = c / group, kg = m / group;
    int64_t h = d->h, w = d->w_, oh = d->oh, ow = d->ow, kh = d->kh, kw = d->kw;
    int64_t red = cg * kh * kw, xs[4], ys[4]; /* strides along (n, c, h, w): NCHW or NHWC */
    kn_contract_strides(d, xs, ys);
    int rows = VL > 1 ? GPU_MAX_ROWS : GPU_CONV_ROWS;
    /* vectors: a tile row count that divides ow (a partial tile's clamped pixels and
     * guarded stores hide from the parallel analysis that tiles write disjoint pixels),
     * as many as fit in GPU_CVEC_ACC accumulators */
    while (VL > 1 && ow % rows) rows--;
    int nv = VL > 1 ? GPU_CVEC_ACC / rows : GPU_CONV_CB;
    if (VL > 1 && nv > GPU_CVEC_VECS) nv = GPU_CVEC_VECS;
    if (ov && ov->tile_rows) rows = ov->tile_rows;
    if (ov && ov->tile_vecs) nv = ov->tile_vecs;
    nv = clamp_tile(nv, GPU_MAX_COLS / VL);
    rows = clamp_tile(rows, GPU_MAX_ROWS);
    if ((kg + VL - 1) / VL < nv) nv = (int)((kg + VL - 1) / VL);
    while (VL > 1 && !(ov && ov->tile_vecs) && (kg / VL) % nv) nv--; /* no partial block */
    if (ow < rows) rows = (int)ow;
    int cb = nv * VL;
    int64_t nb = (kg + cb - 1) / cb, nt = (ow + rows - 1) / rows;

    /* packed weights [group][block][red][cb], bias [group][block][cb]; zero past kg */
    const float *wt = d->w->data->data, *bias = d->bias ? d->bias->data->data : NULL;
    float *wp = calloc((size_t)(group * nb * red * cb), sizeof *wp);
    float *bp = calloc((size_t)(group * nb * cb), sizeof *bp);
    KN_ASSERT(wp && bp);
    for (int64_t g = 0; g < group; g++)
        for (int64_t col = 0; col < kg; col++) {
            int64_t blk = col / cb, j = col % cb, oc = g * kg + col;
            for (int64_t r = 0; r < red; r++)
                wp[((g * nb + blk) * red + r) * cb + j] = wt[oc * red + r];
            if (bias) bp[(g * nb + blk) * cb + j] = bias[oc];
        }
    kn_kbuf *wpk = kl_table(L, KN_F32, group * nb * red * cb, wp);
    kn_kbuf *bpk = bias ? kl_table(L, KN_F32, group * nb * cb, bp) : NULL;
    free(wp);
    free(bp);

    int vb = kl_for(L, n), vg = kl_for(L, group), vk = kl_for(L, nb);
    int voh = kl_for(L, oh), vt = kl_for(L, nt);
    kn_kx *gb = mad(L, kx_var(L, vg), nb, kx_var(L, vk)); /* block over all groups */
    int acc[GPU_MAX_ROWS][GPU_MAX_COLS], px[GPU_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
        kn_kx *p = mad(L, kx_var(L, vt), rows, kx_int(L, r));
        if (ow % rows) p = kx_bin(L, KX_MIN, p, kx_int(L, ow - 1));
        px[r] = kl_decl(L, KN_I64, p);
        for (int v = 0; v < nv; v++) /* from 0: the bias is added after the sum */
            acc[r][v] = kl_decl_vec(L, KN_F32, VL, kx_const(L, KN_F32, 0));
    }
    /* the tile's pixels read contiguous input columns (no clamped last tile): each
     * column of the window is read once per (ci, kh) and used by every tap that needs
     * it, the kw taps unrolled (conv_row_reuse) */
    int64_t span = (rows - 1) * d->sw + (kw - 1) * d->dw + 1;
    bool reuse = ow % rows == 0 && kw <= GPU_MAX_KW && span <= GPU_MAX_SPAN;
    int vcol0 =
        reuse ? kl_decl(L, KN_I64, mad(L, kx_var(L, vt), rows * d->sw, kx_int(L, -d->pw))) : -1;
    int vc = kl_for(L, cg), vi = kl_for(L, kh);
    int vih = kl_decl(L, KN_I64,
                      kx_add(L, kx_mul(L, kx_var(L, voh), kx_int(L, d->sh)),
                             mad(L, kx_var(L, vi), d->dh, kx_int(L, -d->ph))));
    bool hpad = d->ph || d->peh;
    if (hpad) kl_if(L, in_range(L, kx_var(L, vih), h));
    kn_kx *ch = mad(L, kx_var(L, vg), cg, kx_var(L, vc));
    bool xdense = xs[3] == 1 && xs[2] == w && xs[1] == h * w; /* x NCHW */
    int vrow =
        kl_decl(L, KN_I64,
                xdense ? mad(L, mad(L, kx_var(L, vb), c, ch), h, kx_var(L, vih))
                       : mad(L, kx_var(L, vb), xs[0],
                             mad(L, ch, xs[1], mad(L, kx_var(L, vih), xs[2], kx_int(L, 0)))));
    conv_taps t = {L, d, wpk, xdense, vrow, rows, nv, VL, cb};
    if (reuse) {
        conv_row_reuse(
            &t, vcol0, -d->pw, (nt - 1) * rows * d->sw - d->pw,
            mad(L, gb, red, mad(L, mad(L, kx_var(L, vc), kh, kx_var(L, vi)), kw, kx_int(L, 0))),
            acc);
    } else {
        int vj = kl_for(L, kw);
        kn_kx *col[GPU_MAX_ROWS];
        for (int r = 0; r < rows; r++)
            col[r] = kx_add(L, kx_mul(L, kx_var(L, px[r]), kx_int(L, d->sw)),
                            mad(L, kx_var(L, vj), d->dw, kx_int(L, -d->pw)));
        kn_kx *red_i = mad(L, mad(L, kx_var(L, vc), kh, kx_var(L, vi)), kw, kx_var(L, vj));
        conv_tap(&t, mad(L, gb, red, red_i), col, acc);
        kl_end(L); /* kw */
    }
    if (hpad) kl_end(L);
    kl_end_n(L, 2); /* kh, ci */
    /* the bias after the sum, before the epilogue: ONNX's reference order and ONNX
     * Runtime's (the CPU tiles: passes/tile.c kt_add_init) */
    for (int r = 0; bpk && r < rows; r++)
        for (int v = 0; v < nv; v++)
            kl_set(L, acc[r][v],
                   kx_add(L, kx_var(L, acc[r][v]),
                          kx_vload(L, bpk, mad(L, gb, cb, kx_int(L, v * VL)), VL)));

    /* y[b, g*kg + blk*cb + j, oh, t*rows + r], lane by lane */
    kn_kx *mo = mad(L, kx_var(L, vg), kg, kx_mul(L, kx_var(L, vk), kx_int(L, cb)));
    bool ydense = ys[3] == 1 && ys[2] == ow && ys[1] == oh * ow; /* y NCHW */
    kn_kx *y0 = ydense ? mad(L, mad(L, mad(L, kx_var(L, vb), m, mo), oh, kx_var(L, voh)), ow,
                             kx_mul(L, kx_var(L, vt), kx_int(L, rows)))
                       : mad(L, kx_var(L, vb), ys[0],
                             mad(L, mo, ys[1],
                                 mad(L, kx_var(L, voh), ys[2],
                                     kx_mul(L, kx_var(L, vt), kx_int(L, rows * ys[3])))));
    int vy = kl_decl(L, KN_I64, y0);
    int64_t tail = kg % cb; /* a multiple of VL: whole vectors are in or out */
    for (int r = 0; r < rows; r++) {
        kn_kx *p = mad(L, kx_var(L, vt), rows, kx_int(L, r));
        if (ow % rows && r) kl_if(L, kx_bin(L, KX_LT, p, kx_int(L, ow)));
        for (int v = 0; v < nv; v++) {
            bool guard = tail && v * VL >= tail;
            if (guard)
                kl_if(L, kx_bin(L, KX_LT, mad(L, kx_var(L, vk), cb, kx_int(L, v * VL)),
                                kx_int(L, kg)));
            for (int l = 0; l < VL; l++) {
                int j = v * VL + l;
                kn_kx *val = VL > 1 ? kx_lane(L, acc[r][v], l) : kx_var(L, acc[r][v]);
                if (d->epi) {
                    kn_kx *coord[4] = {kx_var(L, vb), kx_add(L, mo, kx_int(L, j)), kx_var(L, voh),
                                       NULL};
                    coord[d->nsp == 2 ? 3 : 2] = mad(L, kx_var(L, vt), rows, kx_int(L, r));
                    kn_kx *opnd[KN_EPI_MAX] = {0};
                    for (int k = 0; k < d->epi->n; k++)
                        if (d->operand[k]) opnd[k] = kl_bcast_load(L, d->operand[k], d->y, coord);
                    val = kl_epilogue(L, d->epi, val, opnd);
                }
                kl_store(L, d->y, kx_add(L, kx_var(L, vy), kx_int(L, j * ys[1] + r * ys[3])), val);
            }
            if (guard) kl_end(L);
        }
        if (ow % rows && r) kl_end(L);
    }
    kl_end_n(L, 5);
    memset(out, 0, sizeof *out);
    out->tile_rows = rows;
    out->tile_vecs = nv;
    out->lanes = VL;
    out->pad = 1;
    return true;
}

bool kt_gpu_conv(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out) {
    if (d->x->dtype != KN_F32 || d->y->dtype != KN_F32 || !kt_f32_const(d->w) ||
        (d->bias && !kt_f32_const(d->bias)) || d->ph < 0 || d->pw < 0 || d->peh < 0 || d->pew < 0 ||
        !kt_operands_ok(d))
        return false;
    int64_t kg = d->m / d->group;
    if (kg < 2) return false; /* depthwise: one channel per group, the plain nest is it */
    int VL = kl_lanes(L, KN_F32);
    if (VL < 2 || kg % VL || (ov && ov->lanes == 1)) VL = 1; /* scalar work-items */
    return gpu_conv(L, d, ov, out, VL);
}

/* ---- MatMul, Gemm ----
 *
 * A constant B is packed at compile time. A B known only at run time (attention's
 * products, batched or not) is read where it is: packing it would need a second
 * NDRange, since every work-item uses all of its block. A batched product adds the
 * batch as the outermost NDRange dimension; each work-item finds its batch's A and B
 * from the batch index. */

/* The loops of a GPU matrix tile: [batch,] column blocks (nb, *vk), row blocks (mb, *vm);
 * batched, the batch's offsets into x, w (kt_batch_off) and y (mn a batch) declared inside
 * the innermost loop, so the three stay perfectly nested. kl_end_n(L, batched ? 3 : 2)
 * closes them. */
static void gpu_mm_loops(kn_lower *L, const kn_contract *d, bool batched, int64_t nb, int64_t mb,
                         int64_t mn, int *vk, int *vm, kn_kx **xoff, kn_kx **woff, kn_kx **yoff) {
    int vbt = batched ? kl_for(L, d->batch) : -1;
    *vk = kl_for(L, nb), *vm = kl_for(L, mb);
    if (!batched) return;
    kn_kx *bi = kx_var(L, vbt);
    *xoff = kx_var(L, kl_decl(L, KN_I64, kt_batch_off(L, d, bi, d->xbs)));
    *woff = kx_var(L, kl_decl(L, KN_I64, kt_batch_off(L, d, bi, d->wbs)));
    *yoff = kx_mul(L, bi, kx_int(L, mn));
}

/* A constant B on a device with vectors (the target's vector_bits): each work-item
 * computes R rows by nv vectors of VL columns, held in vector accumulators, with B
 * packed [block][K][nv*VL] so that one step k reads nv contiguous vectors of B and R
 * elements of A; the epilogue runs on whole vectors. Neither PoCL nor most device
 * compilers vectorize across work-items whose body has a loop (the reduction), so a
 * CPU device only gets SIMD code from vectors inside the work-item. The schedule
 * records tile_rows = R, tile_vecs = nv, lanes = VL. N must be a multiple of VL (a
 * vector is stored whole or not at all).
 *
 * A run-time B (rt: attention's products, batched or not) that is not transposed is
 * read in place the same way, its rows being contiguous: nv vectors of row k at the
 * block's columns, the batch (if any) the outermost NDRange dimension as in the scalar
 * work-items. */
static bool gpu_matmul_vec(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out,
                           int VL, bool rt) {
    int64_t M = d->M, K = d->K, N = d->N;
    bool batched = d->batch > 1;
    int nv = clamp_tile(ov && ov->tile_vecs ? ov->tile_vecs : GPU_VEC_VECS, GPU_MAX_COLS / VL);
    int rows = clamp_tile(ov && ov->tile_rows ? ov->tile_rows : GPU_VEC_ROWS, GPU_MAX_ROWS);
    if (N / VL < nv) nv = (int)(N / VL);
    /* a block that divides N: no partial block, whose guarded stores would hide from the
     * parallel analysis that blocks of columns write disjoint elements */
    while (!(ov && ov->tile_vecs) && (N / VL) % nv) nv--;
    if (M < rows) rows = (int)M;
    while (!(ov && ov->tile_rows) && M % rows) rows--; /* the same for row tiles */
    int cb = nv * VL;
    int64_t nb = (N + cb - 1) / cb, mb = (M + rows - 1) / rows;

    /* B packed [block][K][cb] with alpha applied, zero past N; beta * C packed [block][cb] */
    const float *bd = rt ? NULL : d->w->data->data, *cd = d->bias ? d->bias->data->data : NULL;
    float *bp = calloc((size_t)(rt ? 1 : nb * K * cb), sizeof *bp),
          *cp = calloc((size_t)(nb * cb), 4);
    KN_ASSERT(bp && cp);
    for (int64_t k = 0; bd && k < K; k++)
        for (int64_t j = 0; j < N; j++)
            bp[((j / cb) * K + k) * cb + j % cb] =
                (float)(d->alpha * (d->tb ? bd[j * K + k] : bd[k * N + j]));
    for (int64_t j = 0; cd && j < N; j++) cp[j] = (float)(d->beta * cd[j]);
    kn_kbuf *bpk = rt ? NULL : kl_table(L, KN_F32, nb * K * cb, bp);
    kn_kbuf *init = cd ? kl_table(L, KN_F32, nb * cb, cp) : NULL;
    free(bp);
    free(cp);

    int vk, vm;
    kn_kx *xoff = NULL, *woff = NULL, *yoff = NULL;
    gpu_mm_loops(L, d, batched, nb, mb, M * N, &vk, &vm, &xoff, &woff, &yoff);
    int acc[GPU_MAX_ROWS][GPU_MAX_COLS], arow[GPU_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
        kn_kx *row = mad(L, kx_var(L, vm), rows, kx_int(L, r));
        if (M % rows) row = kx_bin(L, KX_MIN, row, kx_int(L, M - 1));
        arow[r] = kl_decl(L, KN_I64, row);
        for (int v = 0; v < nv; v++) /* from 0: beta * C is added after the sum */
            acc[r][v] = kl_decl_vec(L, KN_F32, VL, kx_const(L, KN_F32, 0));
    }
    int vr = kl_for(L, K);
    int av[GPU_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
        kn_kx *ai = d->ta ? mad(L, kx_var(L, vr), M, kx_var(L, arow[r]))
                          : mad(L, kx_var(L, arow[r]), K, kx_var(L, vr));
        av[r] = kl_decl(L, KN_F32, kx_load(L, d->x, xoff ? kx_add(L, ai, xoff) : ai));
    }
    /* the block's first element of step k: packed [block][K][cb], or B's row k in place */
    kn_kx *w0 = rt ? mad(L, kx_var(L, vr), N, kx_mul(L, kx_var(L, vk), kx_int(L, cb)))
                   : kx_mul(L, mad(L, kx_var(L, vk), K, kx_var(L, vr)), kx_int(L, cb));
    int vw = kl_decl(L, KN_I64, woff ? kx_add(L, w0, woff) : w0);
    for (int v = 0; v < nv; v++) {
        int wv = kl_decl_vec(
            L, KN_F32, VL,
            kx_vload(L, rt ? d->w : bpk, kx_add(L, kx_var(L, vw), kx_int(L, v * VL)), VL));
        for (int r = 0; r < rows; r++)
            kl_set(L, acc[r][v], kx_fma(L, kx_var(L, av[r]), kx_var(L, wv), kx_var(L, acc[r][v])));
    }
    kl_end(L);
    for (int r = 0; init && r < rows; r++)
        for (int v = 0; v < nv; v++)
            kl_set(L, acc[r][v],
                   kx_add(L, kx_var(L, acc[r][v]),
                          kx_vload(L, init, mad(L, kx_var(L, vk), cb, kx_int(L, v * VL)), VL)));
    for (int r = 0; r < rows; r++) {
        kn_kx *row = mad(L, kx_var(L, vm), rows, kx_int(L, r));
        if (M % rows && r) kl_if(L, kx_bin(L, KX_LT, row, kx_int(L, M)));
        kn_kx *y0 = mad(L, row, N, kx_mul(L, kx_var(L, vk), kx_int(L, cb)));
        int vy = kl_decl(L, KN_I64, yoff ? kx_add(L, y0, yoff) : y0);
        for (int v = 0; v < nv; v++) {
            kn_kx *col = mad(L, kx_var(L, vk), cb, kx_int(L, v * VL));
            bool guard = N % cb && v * VL >= N % cb; /* only the last block reaches past N */
            if (guard) kl_if(L, kx_bin(L, KX_LT, col, kx_int(L, N)));
            kn_kx *yi = kx_add(L, kx_var(L, vy), kx_int(L, v * VL));
            kl_store(L, d->y, yi, kt_mm_epi(L, d, d->y, kx_var(L, acc[r][v]), yi, col));
            if (guard) kl_end(L);
        }
        if (M % rows && r) kl_end(L);
    }
    kl_end_n(L, batched ? 3 : 2);
    memset(out, 0, sizeof *out);
    out->tile_rows = rows;
    out->tile_vecs = nv;
    out->lanes = VL;
    return true;
}

bool kt_gpu_matmul(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out) {
    const kn_kbuf *b = d->w, *c = d->bias;
    if (d->x->dtype != KN_F32 || d->y->dtype != KN_F32 || b->dtype != KN_F32 ||
        (c && (c->dtype != KN_F32 || c->numel != d->N)) || !kt_mm_operands_ok(d))
        return false;
    bool batched = d->batch > 1, rt = batched || !kt_f32_const(b); /* rt: B read in place */
    if (!batched && b->numel != d->K * d->N) return false;
    int VL = kl_lanes(L, KN_F32);
    if ((!c || kt_f32_const(c)) && VL > 1 && d->N % VL == 0 && (!ov || ov->lanes != 1) &&
        (!rt || (!d->tb && d->alpha == 1)))
        return gpu_matmul_vec(L, d, ov, out, VL, rt);
    int64_t M = d->M, K = d->K, N = d->N;
    int cb = clamp_tile(ov && ov->tile_vecs ? ov->tile_vecs : GPU_MM_CB, GPU_MAX_COLS);
    int rows = clamp_tile(ov && ov->tile_rows ? ov->tile_rows : GPU_MM_ROWS, GPU_MAX_ROWS);
    if (N < cb) cb = (int)N;
    if (M < rows) rows = (int)M;
    int64_t nb = (N + cb - 1) / cb, mb = (M + rows - 1) / rows, tail = N % cb;

    /* constant B packed [block][K][cb] with alpha applied (and transposed if tb), zero
     * past N; a constant beta * C packed [block][cb] */
    kn_kbuf *bpk = NULL, *init = NULL;
    bool cconst = c && kt_f32_const(c);
    if (!rt || cconst) {
        const float *bd = rt ? NULL : b->data->data, *cd = cconst ? c->data->data : NULL;
        float *bp = calloc((size_t)(rt ? 1 : nb * K * cb), sizeof *bp),
              *cp = calloc((size_t)(nb * cb), 4);
        KN_ASSERT(bp && cp);
        for (int64_t k = 0; bd && k < K; k++)
            for (int64_t j = 0; j < N; j++)
                bp[((j / cb) * K + k) * cb + j % cb] =
                    (float)(d->alpha * (d->tb ? bd[j * K + k] : bd[k * N + j]));
        for (int64_t j = 0; cd && j < N; j++) cp[j] = (float)(d->beta * cd[j]);
        bpk = rt ? NULL : kl_table(L, KN_F32, nb * K * cb, bp);
        init = cd ? kl_table(L, KN_F32, nb * cb, cp) : NULL;
        free(bp);
        free(cp);
    }

    int vk, vm;
    kn_kx *xoff = NULL, *woff = NULL, *yoff = NULL;
    gpu_mm_loops(L, d, batched, nb, mb, M * N, &vk, &vm, &xoff, &woff, &yoff);
    /* column j of the block, clamped to N-1 past N (rt reads of B and C stay in bounds;
     * those columns are not stored) */
    kn_kx *bcol[GPU_MAX_COLS];
    for (int j = 0; j < cb; j++) {
        bcol[j] = mad(L, kx_var(L, vk), cb, kx_int(L, j));
        if (tail && j >= tail) bcol[j] = kx_bin(L, KX_MIN, bcol[j], kx_int(L, N - 1));
    }
    int acc[GPU_MAX_ROWS][GPU_MAX_COLS], arow[GPU_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
        /* the row this tile row reads; the last block's rows past M read row M-1 */
        kn_kx *row = mad(L, kx_var(L, vm), rows, kx_int(L, r));
        if (M % rows) row = kx_bin(L, KX_MIN, row, kx_int(L, M - 1));
        arow[r] = kl_decl(L, KN_I64, row);
        for (int j = 0; j < cb; j++) /* from 0: beta * C is added after the sum */
            acc[r][j] = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    }
    int vr = kl_for(L, K);
    int av[GPU_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
        kn_kx *ai = d->ta ? mad(L, kx_var(L, vr), M, kx_var(L, arow[r]))
                          : mad(L, kx_var(L, arow[r]), K, kx_var(L, vr));
        av[r] = kl_decl(L, KN_F32, kx_load(L, d->x, xoff ? kx_add(L, ai, xoff) : ai));
    }
    int vw =
        bpk ? kl_decl(L, KN_I64, kx_mul(L, mad(L, kx_var(L, vk), K, kx_var(L, vr)), kx_int(L, cb)))
            : -1;
    for (int j = 0; j < cb; j++) {
        kn_kx *w;
        if (bpk) {
            w = kx_load(L, bpk, kx_add(L, kx_var(L, vw), kx_int(L, j)));
        } else {
            kn_kx *bi =
                d->tb ? mad(L, bcol[j], K, kx_var(L, vr)) : mad(L, kx_var(L, vr), N, bcol[j]);
            w = kx_load(L, d->w, woff ? kx_add(L, bi, woff) : bi);
            if (d->alpha != 1) w = kx_mul(L, kx_const(L, KN_F32, d->alpha), w);
        }
        int wj = kl_decl(L, KN_F32, w);
        for (int r = 0; r < rows; r++)
            kl_set(L, acc[r][j], kx_fma(L, kx_var(L, av[r]), kx_var(L, wj), kx_var(L, acc[r][j])));
    }
    kl_end(L);
    for (int j = 0; (init || c) && j < cb; j++) {
        kn_kx *i0;
        if (init) {
            i0 = kx_load(L, init, mad(L, kx_var(L, vk), cb, kx_int(L, j)));
        } else {
            i0 = kx_load(L, d->bias, bcol[j]);
            if (d->beta != 1) i0 = kx_mul(L, kx_const(L, KN_F32, d->beta), i0);
        }
        int vi = kl_decl(L, KN_F32, i0);
        for (int r = 0; r < rows; r++)
            kl_set(L, acc[r][j], kx_add(L, kx_var(L, acc[r][j]), kx_var(L, vi)));
    }
    for (int r = 0; r < rows; r++) {
        kn_kx *row = mad(L, kx_var(L, vm), rows, kx_int(L, r));
        if (M % rows && r) kl_if(L, kx_bin(L, KX_LT, row, kx_int(L, M)));
        kn_kx *y0 = mad(L, row, N, kx_mul(L, kx_var(L, vk), kx_int(L, cb)));
        int vy = kl_decl(L, KN_I64, yoff ? kx_add(L, y0, yoff) : y0);
        for (int j = 0; j < cb; j++) {
            kn_kx *col = mad(L, kx_var(L, vk), cb, kx_int(L, j));
            if (tail && j >= tail) kl_if(L, kx_bin(L, KX_LT, col, kx_int(L, N)));
            kn_kx *yi = kx_add(L, kx_var(L, vy), kx_int(L, j)), *val = kx_var(L, acc[r][j]);
            if (d->epi) {
                kn_kx *opnd[KN_EPI_MAX] = {0};
                for (int k = 0; k < d->epi->n; k++) {
                    kn_kbuf *o = d->operand[k];
                    if (o)
                        opnd[k] = kx_load(L, o,
                                          o->numel == d->y->numel ? yi
                                          : o->numel == 1         ? kx_int(L, 0)
                                                                  : col);
                }
                val = kl_epilogue(L, d->epi, val, opnd);
            }
            kl_store(L, d->y, yi, val);
            if (tail && j >= tail) kl_end(L);
        }
        if (M % rows && r) kl_end(L);
    }
    kl_end_n(L, batched ? 3 : 2);
    memset(out, 0, sizeof *out);
    out->tile_rows = rows;
    out->tile_vecs = cb;
    out->lanes = 1;
    return true;
}
