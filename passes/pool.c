/* The pool pass: 2-D MaxPool kernels rebuilt as row walks with the bounds tests only at
 * the borders. requires: kir; breaks: nothing the plan depends on (same buffers).
 *
 * The lowering (ir/lower/nn.c, pool_body) writes a pool as a plain nest that tests every
 * tap of every window against the input (padding, ceil_mode's overhang). On register-tile
 * targets (CPUs, microcontrollers) this pass rebuilds the f32, uint8 and int8 MaxPool
 * kernels (8-bit: a QDQ ResNet's pool, passes/qdq.c) over dense NCHW tensors whose
 * Indices output is unused:
 *
 *   for bc in [0, N*C):                       parallel (passes/parallel.c)
 *     for oy in each of top border, interior, bottom border rows:
 *       left border columns:  one output at a time, each tap's column tested
 *       interior columns:     stride 1: vectors of `lanes` outputs, each tap one vector load
 *                             stride 2-4, CPU targets with 8 lanes or more of the type:
 *                             vectors of `lanes` outputs (the target's lanes, halved to
 *                             fit the interior), each tap one strided load
 *                             (kx_vload_strided); a remainder is one
 *                             more vector ending at the interior's end, which recomputes
 *                             (and stores again, the same values) a few outputs
 *                             otherwise: one output at a time, taps unrolled, no test
 *                             (consecutive outputs read interleaved inputs, which LLVM's
 *                             loop vectorizer turns into vector code)
 *       right border columns: as the left
 *     border rows test each kernel row once; the interior (kt_interior) tests nothing.
 *     Strided interiors whose windows share a kernel row with the next output row (3x3 at
 *     stride 2: ResNet's and SqueezeNet's pools) keep that row's max of each vector column
 *     (at most POOL_MAX_KEPT a row) in a local for the next row: 6 strided loads and 6 max
 *     a vector, not 9 and 8 (pool_rows_kept). Float ones in programs for several threads
 *     split in bands of rows like their producer (SqueezeNet's first pool kept its rows and
 *     was split by channels: 445 KB a run read across the cores, KILN_XCORE=2,
 *     tests/models/pool_bands.sh): with 16 interior rows or more, bands of several rows
 *     each kept within the band (pool_bands_kept); fewer, rows apart (the 13-row pool of
 *     SqueezeNet took 43-49 us at 2 threads kept in 2-7 bands, 35 us apart in the
 *     parallel pass's 7 bands). Float stride-2 interiors were
 *     one output at a time, left to LLVM's loop vectorizer: SqueezeNet's three MaxPools
 *     took 0.64 ms of thread CPU time a run on the Intel Xeon, 0.25 ms strided
 *     (docs/benchmarks.md "SqueezeNet against ONNX Runtime, layer by layer"). The kept
 *     row max is exact for floats too: the max below keeps the first of equal values and
 *     the last NaN, whichever way the taps are grouped, as long as they are taken in order
 *     (each row's taps, rows in order).
 *
 * An 8-bit MaxPool channels-last on both sides (kn.layout [1, 1]: ResNet's on x86 VNNI,
 * passes/layout.c res_channels_last) is rebuilt on CPUs as vectors of channels, each
 * output position's window max in registers, the same border split (pool_cl_rows).
 *
 * On OpenCL devices the same kernels become one output a work-item with the taps
 * unrolled and no branch (pool_items), or for float ones with row stride 1, 2 or 4, tiles
 * of outputs along the row a work-item, each tap one contiguous vector load of the
 * target's f32 lanes (pool_items_vec).
 *
 * The max is taken in the lowering's order (max(x, acc), acc starting at -inf, or the
 * 8-bit type's minimum in its compute type), so NaNs and out-of-window -inf results are
 * those of the plain nest and of the interpreter.
 *
 * On CPU targets a float32 NCHW GlobalAveragePool (a classifier's tail) is rebuilt too, as
 * GAP_CHANNELS channels a step, each channel's sum its own chain in the plain nest's order
 * (gap_rebuild): the same bits, the chains' adds overlapping. On microcontrollers a float32
 * GlobalAveragePool, or an AveragePool whose one window is the whole input, becomes one
 * unrolled sum a channel, 4 channels a vector gather where the target has one (gap_rewrite). */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/ops/nn_attrs.h"
#include "passes/pass.h"
#include "passes/tile.h"
#include "targets/target.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* POOL_BAND_ROWS: interior rows a band (pool_bands) */
/* POOL_KEPT_BAND_MIN: interior rows of a pool for pool_bands_kept */
enum { POOL_MAX_TAPS = 64, POOL_BAND_ROWS = 2, POOL_KEPT_BAND_MIN = 16 };

typedef struct pool_geom {
    kn_kbuf *x, *y;
    int64_t h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t ylo, yhi, xlo, xhi; /* interior rows and columns (kt_interior) */
    int lanes;                  /* interior vector width (stride 1, or strided), else 1 */
    bool strided;               /* the vectors' taps are strided loads (step sw) */
    int vbc;                    /* the (batch, channel) loop */
    bool cl;                    /* 8-bit, channels-last x and y (pool_cl_rows) */
    int64_t c;                  /* channels */
} pool_geom;

/* The buffers of a plain pool kernel (kn_kernel_io): x and y, and x2 a second buffer
 * loaded (a channels-last pool's: y itself), or NULL. */
typedef struct pool_io {
    kn_kbuf *x, *x2, *y;
    bool ok;
} pool_io;

/* One output tile: `lanes` consecutive outputs of row oy from column ox, or (c0, a
 * channels-last pool) the `lanes` channels from c0 of pixel (oy, ox), each tap one vector
 * load of consecutive channels. crow: test each kernel row against the input's rows; ccol
 * (lanes 1, or channels-last): test each tap's column. */
static void pool_tile(kn_lower *L, const pool_geom *G, kn_kx *oy, kn_kx *ox, kn_kx *c0, int lanes,
                      bool crow, bool ccol) {
    kn_dtype t = kx_compute_dtype(G->x->dtype);
    double lowest = G->x->dtype == KN_F32 ? -INFINITY : G->x->dtype == KN_I8 ? -128 : 0;
    int acc = kl_decl_vec(L, t, lanes, kx_const(L, t, lowest));
    kn_kx *col0 = kt_plus(L, kx_mul(L, ox, kx_int(L, G->sw)), -G->pw);
    for (int64_t ky = 0; ky < G->kh; ky++) {
        kn_kx *iy = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), ky * G->dh - G->ph);
        if (crow) kl_if(L, kt_inside(L, iy, G->h));
        int vx = kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, kx_var(L, G->vbc), G->h, iy), G->w, col0));
        for (int64_t kx = 0; kx < G->kw; kx++) {
            if (ccol) kl_if(L, kt_inside(L, kt_plus(L, col0, kx * G->dw), G->w));
            kn_kx *at = kt_plus(L, kx_var(L, vx), kx * G->dw);
            if (c0) at = kx_add(L, kx_mul(L, at, kx_int(L, G->c)), c0);
            kn_kx *v = lanes == 1          ? kx_load(L, G->x, at)
                       : !c0 && G->strided ? kx_vload_strided(L, G->x, at, lanes, (int)G->sw)
                                           : kx_vload(L, G->x, at, lanes);
            kl_set(L, acc, kx_bin(L, KX_MAX, kx_cast(L, t, v), kx_var(L, acc)));
            if (ccol) kl_end(L);
        }
        if (crow) kl_end(L);
    }
    kn_kx *yi = kt_mad(L, kt_mad(L, kx_var(L, G->vbc), G->oh, oy), G->ow, ox);
    if (c0) yi = kx_add(L, kx_mul(L, yi, kx_int(L, G->c)), c0);
    kl_store(L, G->y, yi, kx_cast(L, G->y->dtype, kx_var(L, acc)));
}

/* Outputs [ox0, ox1) of row oy one at a time; ccol: they read padding along the row. */
static void pool_scalar_cols(kn_lower *L, const pool_geom *G, kn_kx *oy, int64_t ox0, int64_t ox1,
                             bool crow, bool ccol) {
    if (ox1 <= ox0) return;
    int v = kl_for(L, ox1 - ox0);
    pool_tile(L, G, oy, kt_plus(L, kx_var(L, v), ox0), NULL, 1, crow, ccol);
    kl_end(L);
}

/* Output row oy; crow: it reads padding above or below. */
static void pool_row(kn_lower *L, const pool_geom *G, kn_kx *oy, bool crow) {
    pool_scalar_cols(L, G, oy, 0, G->xlo, crow, true);
    int64_t n = G->xhi - G->xlo, at = G->xlo;
    if (G->lanes > 1 && n / G->lanes) {
        int vt = kl_for(L, n / G->lanes);
        pool_tile(L, G, oy, kt_mad(L, kx_var(L, vt), G->lanes, kx_int(L, G->xlo)), NULL, G->lanes,
                  crow, false);
        kl_end(L);
        at += n / G->lanes * G->lanes;
        if (G->strided && at < G->xhi) { /* the remainder: one vector ending at xhi */
            pool_tile(L, G, oy, kx_int(L, G->xhi - G->lanes), NULL, G->lanes, crow, false);
            at = G->xhi;
        }
    }
    pool_scalar_cols(L, G, oy, at, G->xhi, crow, false);
    pool_scalar_cols(L, G, oy, G->xhi > G->xlo ? G->xhi : G->xlo, G->ow, crow, true);
}

/* Output rows [oy0, oy1); crow: they read padding above or below. */
static void pool_rows(kn_lower *L, const pool_geom *G, int64_t oy0, int64_t oy1, bool crow) {
    if (oy1 <= oy0) return;
    int v = kl_for(L, oy1 - oy0);
    pool_row(L, G, kt_plus(L, kx_var(L, v), oy0), crow);
    kl_end(L);
}

/* Whether a float pool in a program for several threads is built in bands of rows
 * (pool_bands): with padding above (ResNet's 3x3 stride-2 pool after the stem), the top
 * border row is a nest of its own beside the interior rows' loop, so the parallel pass
 * cannot band the channel loop by rows as the convolution before it split (passes/
 * parallel.c, "splitting like the producer") and split it by channels: each thread read
 * every row of its channels, half of them written by the other core (ResNet-50: 1.6 MB a
 * run of cross-core reads, KILN_XCORE=2, of its 3.2 MB input). */
static bool pool_banded(const kn_kprog *p, const pool_geom *G) {
    return p->threads > 1 && p->target && p->target->kind == KN_TARGET_CPU && G->ylo > 0 &&
           G->yhi - G->ylo >= POOL_BAND_ROWS * 2;
}

static void pool_rows_kept_at(kn_lower *L, const pool_geom *G, kn_kx *oy0, int64_t n, int64_t lim);

/* The pool in bands of POOL_BAND_ROWS interior rows (pool_banded), band outermost, each
 * band's rows of every channel in turn (a channel's rows one after another, as before):
 *
 *   for b in [0, nb):            parallel, split as it stands (KN_LOOP_WHOLE)
 *     for bc in [0, N*C):
 *       b == 0: the top border rows
 *       the band's rows oy in [ylo + b*B, min(ylo + (b+1)*B, yhi))
 *       b == nb - 1: the bottom border rows
 *
 * Every output is computed as in the unbanded nest (the same taps in the same order), so
 * the values are the same; band b writes only its rows (and the first and last the
 * border rows), so the bands are independent. kept: each band's rows built as
 * pool_rows_kept (pool_bands_kept), bands of B rows; otherwise row by row, B =
 * POOL_BAND_ROWS. */
static void pool_bands_of(kn_lower *L, pool_geom *G, int64_t B, bool kept) {
    int64_t n = G->yhi - G->ylo, nb = (n + B - 1) / B;
    int vb = kl_for(L, nb);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
    G->vbc = kl_for(L, G->x->dims[0] * G->x->dims[1]);
    if (G->ylo > 0) {
        kl_if(L, kx_bin(L, KX_EQ, kx_var(L, vb), kx_int(L, 0)));
        pool_rows(L, G, 0, G->ylo, true);
        kl_end(L);
    }
    if (kept) {
        int voy = kl_decl(L, KN_I64, kt_mad(L, kx_var(L, vb), B, kx_int(L, G->ylo)));
        pool_rows_kept_at(L, G, kx_var(L, voy), B, n % B ? G->yhi : -1);
    } else {
        int v = kl_for(L, B);
        int voy = kl_decl(L, KN_I64, kt_plus(L, kt_mad(L, kx_var(L, vb), B, kx_var(L, v)), G->ylo));
        if (n % B) kl_if(L, kx_bin(L, KX_LT, kx_var(L, voy), kx_int(L, G->yhi)));
        pool_row(L, G, kx_var(L, voy), false);
        if (n % B) kl_end(L);
        kl_end(L);
    }
    if (G->yhi < G->oh) {
        kl_if(L, kx_bin(L, KX_EQ, kx_var(L, vb), kx_int(L, nb - 1)));
        pool_rows(L, G, G->yhi, G->oh, true);
        kl_end(L);
    }
    kl_end_n(L, 2);
}

static void pool_bands(kn_lower *L, pool_geom *G) {
    pool_bands_of(L, G, POOL_BAND_ROWS, false);
}

/* The max of kernel row iy's taps for `lanes` outputs from column ox, each tap one
 * strided load; returns the local holding it. */
static int pool_hrow(kn_lower *L, const pool_geom *G, kn_kx *iy, kn_kx *ox) {
    kn_dtype t = kx_compute_dtype(G->x->dtype);
    kn_kx *col0 = kt_plus(L, kx_mul(L, ox, kx_int(L, G->sw)), -G->pw);
    int vx = kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, kx_var(L, G->vbc), G->h, iy), G->w, col0));
    int h = -1;
    for (int64_t kx = 0; kx < G->kw; kx++) {
        kn_kx *v = kx_cast(
            L, t,
            kx_vload_strided(L, G->x, kt_plus(L, kx_var(L, vx), kx * G->dw), G->lanes, (int)G->sw));
        if (h < 0)
            h = kl_decl_vec(L, t, G->lanes, v);
        else
            kl_set(L, h, kx_bin(L, KX_MAX, v, kx_var(L, h)));
    }
    return h;
}

enum { POOL_MAX_KEPT = 4 }; /* vector columns a row whose shared kernel row is kept */

/* The vector columns of the interior rows: n / lanes from xlo, and one more ending at xhi
 * when lanes does not divide n (it recomputes a few outputs, as pool_rows does). */
static int pool_vcols(const pool_geom *G) {
    int64_t n = G->xhi - G->xlo;
    return (int)(n / G->lanes + (n % G->lanes != 0));
}

static kn_kx *pool_vcol_x(kn_lower *L, const pool_geom *G, int c) {
    int64_t n = G->xhi - G->xlo;
    return kx_int(L, c < n / G->lanes ? G->xlo + c * G->lanes : G->xhi - G->lanes);
}

/* Whether the interior rows share a kernel row with the next output row (the last kernel
 * row of output oy is the first of oy + 1: 3x3 at stride 2) and are built by
 * pool_rows_kept: strided vectors only, a few vectors a row (each one's kept row max is a
 * register). The taps stay in the window's order (row max after row max), so float
 * results keep their bits (see the top of the file). */
static bool pool_keeps_rows(const pool_geom *G) {
    return G->strided && G->lanes > 1 && G->kh >= 2 && G->sh == (G->kh - 1) * G->dh &&
           G->yhi - G->ylo >= 2 && G->xhi - G->xlo >= G->lanes && pool_vcols(G) <= POOL_MAX_KEPT;
}

/* Interior rows [oy0, oy1) as pool_rows builds them, but each vector column's row max
 * (pool_hrow) of an output's last kernel row is kept in a local across the row loop and
 * is the first kernel row of the next output: a 3x3 stride-2 window takes 6 strided
 * loads and 6 max a vector, not 9 and 8. The rows stay in order (the input is read as
 * pool_rows reads it, row after row). */
static void pool_rows_kept(kn_lower *L, const pool_geom *G, int64_t oy0, int64_t oy1) {
    pool_rows_kept_at(L, G, kx_int(L, oy0), oy1 - oy0, -1);
}

/* pool_rows_kept for the n rows from oy0 (an expression: a band's first row), the rows at
 * or past lim (when lim >= 0) left out. */
static void pool_rows_kept_at(kn_lower *L, const pool_geom *G, kn_kx *oy0, int64_t n, int64_t lim) {
    kn_dtype t = kx_compute_dtype(G->x->dtype);
    int nc = pool_vcols(G), kept[POOL_MAX_KEPT];
    for (int c = 0; c < nc; c++)
        kept[c] = pool_hrow(L, G, kt_plus(L, kx_mul(L, oy0, kx_int(L, G->sh)), -G->ph),
                            pool_vcol_x(L, G, c));
    int v = kl_for(L, n);
    kn_kx *oy = kx_add(L, kx_var(L, v), oy0);
    if (lim >= 0) kl_if(L, kx_bin(L, KX_LT, oy, kx_int(L, lim)));
    pool_scalar_cols(L, G, oy, 0, G->xlo, false, true);
    for (int c = 0; c < nc; c++) {
        kn_kx *ox = pool_vcol_x(L, G, c);
        int acc = kl_decl_vec(L, t, G->lanes, kx_var(L, kept[c]));
        for (int64_t ky = 1; ky < G->kh; ky++) {
            kn_kx *iy = kt_plus(L, kx_mul(L, oy, kx_int(L, G->sh)), ky * G->dh - G->ph);
            int h = pool_hrow(L, G, iy, ox);
            kl_set(L, acc, kx_bin(L, KX_MAX, kx_var(L, h), kx_var(L, acc)));
            if (ky == G->kh - 1) kl_set(L, kept[c], kx_var(L, h));
        }
        kn_kx *yi = kt_mad(L, kt_mad(L, kx_var(L, G->vbc), G->oh, oy), G->ow, ox);
        kl_store(L, G->y, yi, kx_cast(L, G->y->dtype, kx_var(L, acc)));
    }
    pool_scalar_cols(L, G, oy, G->xhi, G->ow, false, true);
    if (lim >= 0) kl_end(L);
    kl_end(L);
}

/* Interior rows a band of pool_bands_kept for n interior rows: at least 3 and at most half
 * of them (rounded up), the first half of the bands (what the first of two threads runs)
 * ending as near the middle row as it can, where the producer's split between two threads
 * fell too (as passes/parallel.c band_count); ties go to the count nearest 4 bands (few
 * enough that the parallel pass gives each its own task, as many as leave a slowed thread
 * some to hand over), then to more bands. */
static int64_t pool_kept_band_rows(int64_t n) {
    int64_t best = (n + 1) / 2, err = -1;
    for (int64_t B = 3; B <= (n + 1) / 2; B++) {
        int64_t nb = (n + B - 1) / B, first = (nb + 1) / 2 * B;
        int64_t e = 2 * first > n ? 2 * first - n : n - 2 * first;
        int64_t d = nb > 4 ? nb - 4 : 4 - nb, bd = (n + best - 1) / best;
        bd = bd > 4 ? bd - 4 : 4 - bd;
        if (err < 0 || e < err || (e == err && d < bd)) err = e, best = B;
    }
    return best;
}

/* A float pool whose rows share a kernel row (pool_keeps_rows) in a program for several
 * threads: pool_bands_of's nest, each band's interior rows built as pool_rows_kept, the
 * kept row max starting again at each band's first row (which reads its first kernel row
 * anew; every other row's taps are those of pool_rows_kept, in the same order: the same
 * bits). Bands of several rows (pool_kept_band_rows), so that the kept row saves loads:
 * SqueezeNet's three pools were split by the parallel pass in bands of 2-3 rows, each
 * output row's 9 strided loads a vector, and took as long or longer at 2 threads as at 1
 * (docs/benchmarks.md "SqueezeNet's MaxPools at two threads"). */
static void pool_bands_kept(kn_lower *L, pool_geom *G) {
    pool_bands_of(L, G, pool_kept_band_rows(G->yhi - G->ylo), true);
}

/* An 8-bit channels-last MaxPool (ResNet's, passes/layout.c res_channels_last): for each
 * output position and each vector of `lanes` channels, the max over the window's taps,
 * each tap one vector load of consecutive channels (pool_tile with c0), in registers, then
 * one store. Rows and columns whose windows stay inside the input test nothing
 * (kt_interior); the others test each kernel row, and each tap's column. The lowering's
 * nest read and wrote y at every tap. Exact in any order (8-bit values, no NaN). */

/* Columns [ox0, ox1) of row oy, every channel vector; ccol: they read padding. */
static void pool_cl_cols(kn_lower *L, const pool_geom *G, kn_kx *oy, int64_t ox0, int64_t ox1,
                         bool crow, bool ccol) {
    if (ox1 <= ox0) return;
    int v = kl_for(L, ox1 - ox0), vc = kl_for(L, G->c / G->lanes);
    pool_tile(L, G, oy, kt_plus(L, kx_var(L, v), ox0),
              kx_mul(L, kx_var(L, vc), kx_int(L, G->lanes)), G->lanes, crow, ccol);
    kl_end_n(L, 2);
}

/* Output rows [oy0, oy1) of a channels-last pool; crow: they read padding. */
static void pool_cl_rows(kn_lower *L, const pool_geom *G, int64_t oy0, int64_t oy1, bool crow) {
    if (oy1 <= oy0) return;
    int v = kl_for(L, oy1 - oy0);
    kn_kx *oy = kt_plus(L, kx_var(L, v), oy0);
    pool_cl_cols(L, G, oy, 0, G->xlo, crow, true);
    pool_cl_cols(L, G, oy, G->xlo, G->xhi, crow, false);
    pool_cl_cols(L, G, oy, G->xhi > G->xlo ? G->xhi : G->xlo, G->ow, crow, true);
    kl_end(L);
}

/* Whether kernel k is a MaxPool this pass rebuilds; fills G's geometry. */
static bool pool_suits(kn_ctx *cx, kn_kprog *p, int k, pool_geom *G) {
    const kn_kernel *kern = p->kernels[k];
    const kn_node *n = kern->node;
    bool xcl = false, ycl = false;
    if (!n || n->op != KN_OP_MAXPOOL || kern->contract) return false;
    /* a channels-last pool (kn.layout) keeps the lowering's channel loops, but for an
     * 8-bit one channels-last on both sides on CPUs (pool_cl_rows) */
    if (kn_node_attr(n, KN_ATTR_LAYOUT) && (!kn_conv_layout(n, &xcl, &ycl) || !xcl || !ycl ||
                                            !p->target || p->target->kind != KN_TARGET_CPU))
        return false;
    /* the one buffer it loads and the one it stores (not where it stores two: MaxPool's
     * Indices used) */
    pool_io W;
    W.ok = kn_kernel_io(kern->body, &W.x, &W.x2, &W.y);
    if (xcl && W.x == W.y) /* the lowering's channel rows accumulate in y */
        W.x = W.x2, W.x2 = NULL;
    else if (xcl && W.x2 != W.y)
        W.ok = false;
    if (W.x2 && !xcl) W.ok = false;
    if (!W.ok || !W.x || !W.y || W.x == W.y || W.y->dtype != W.x->dtype ||
        (W.x->dtype != KN_F32 && W.x->dtype != KN_U8 && W.x->dtype != KN_I8) || W.x->rank != 4 ||
        W.y->rank != 4)
        return false;
    if (xcl && W.x->dtype == KN_F32) return false;
    int64_t xd[4] = {W.x->dims[0], W.x->dims[1], W.x->dims[2], W.x->dims[3]};
    int64_t yd[4] = {W.y->dims[0], W.y->dims[1], W.y->dims[2], W.y->dims[3]};
    if (xcl) { /* N H W C: the window over H and W */
        xd[1] = W.x->dims[3], xd[2] = W.x->dims[1], xd[3] = W.x->dims[2];
        yd[1] = W.y->dims[3], yd[2] = W.y->dims[1], yd[3] = W.y->dims[2];
    }
    kn_type xt = kn_type_make(W.x->dtype, W.x->rank, xd);
    int64_t ceil_mode = kn_attr_int(cx, n, "ceil_mode", 0);
    kn_window w;
    if (kn_failed(cx) || kn_window_make(cx, n, &xt, NULL, (int)ceil_mode, &w)) return false;
    if (w.nsp != 2 || w.transposed || w.k[0] * w.k[1] > POOL_MAX_TAPS || w.pb[0] < 0 ||
        w.pb[1] < 0 || w.out[0] != yd[2] || w.out[1] != yd[3] || yd[0] != xd[0] || yd[1] != xd[1])
        return false;
    memset(G, 0, sizeof *G);
    G->x = W.x, G->y = W.y;
    G->cl = xcl, G->c = xd[1];
    G->h = w.in[0], G->w = w.in[1], G->oh = w.out[0], G->ow = w.out[1];
    G->kh = w.k[0], G->kw = w.k[1], G->sh = w.s[0], G->sw = w.s[1];
    G->dh = w.d[0], G->dw = w.d[1], G->ph = w.pb[0], G->pw = w.pb[1];
    kt_interior(G->h, G->oh, G->kh, G->sh, G->dh, G->ph, &G->ylo, &G->yhi);
    kt_interior(G->w, G->ow, G->kw, G->sw, G->dw, G->pw, &G->xlo, &G->xhi);
    return true;
}

/* i clamped into [0, n) */
static kn_kx *clamp_into(kn_lower *L, kn_kx *i, int64_t n) {
    return kx_bin(L, KX_MAX, kx_bin(L, KX_MIN, i, kx_int(L, n - 1)), kx_int(L, 0));
}

/* On an OpenCL device: one output a work-item (the plain nest's three parallel loops),
 * the taps unrolled, each read at its index clamped into the input and kept by a select
 * where it may fall outside (static: the first and last output row or column's range),
 * so the work-item has neither loop nor branch and the device compiler may vectorize
 * across work-items (PoCL does not across a body with a loop). */
static void pool_item(kn_lower *L, const pool_geom *G, kn_kx *bc, kn_kx *oy, kn_kx *ox) {
    kn_dtype t = kx_compute_dtype(G->x->dtype);
    double lowest = G->x->dtype == KN_F32 ? -INFINITY : G->x->dtype == KN_I8 ? -128 : 0;
    int acc = kl_decl(L, t, kx_const(L, t, lowest));
    for (int64_t ky = 0; ky < G->kh; ky++) {
        int64_t ylo = ky * G->dh - G->ph, yhi = (G->oh - 1) * G->sh + ylo;
        bool yin = ylo >= 0 && yhi < G->h;
        int viy = kl_decl(L, KN_I64, kt_mad(L, oy, G->sh, kx_int(L, ylo)));
        kn_kx *iy = yin ? kx_var(L, viy) : clamp_into(L, kx_var(L, viy), G->h);
        int vrow = kl_decl(L, KN_I64, kt_mad(L, kt_mad(L, bc, G->h, iy), G->w, kx_int(L, 0)));
        for (int64_t kx = 0; kx < G->kw; kx++) {
            int64_t xlo = kx * G->dw - G->pw, xhi = (G->ow - 1) * G->sw + xlo;
            bool xin = xlo >= 0 && xhi < G->w;
            int vix = kl_decl(L, KN_I64, kt_mad(L, ox, G->sw, kx_int(L, xlo)));
            kn_kx *ix = xin ? kx_var(L, vix) : clamp_into(L, kx_var(L, vix), G->w);
            kn_kx *v = kx_cast(L, t, kx_load(L, G->x, kx_add(L, kx_var(L, vrow), ix)));
            kn_kx *m = kx_bin(L, KX_MAX, v, kx_var(L, acc));
            kn_kx *in = yin ? NULL : kt_inside(L, kx_var(L, viy), G->h);
            if (!xin) {
                kn_kx *cin = kt_inside(L, kx_var(L, vix), G->w);
                in = in ? kx_bin(L, KX_LAND, in, cin) : cin;
            }
            kl_set(L, acc, in ? kx_select(L, in, m, kx_var(L, acc)) : m);
        }
    }
    kn_kx *yi = kt_mad(L, kt_mad(L, bc, G->oh, oy), G->ow, ox);
    kl_store(L, G->y, yi, kx_cast(L, G->y->dtype, kx_var(L, acc)));
}

static void pool_items(kn_lower *L, const pool_geom *G) {
    int vbc = kl_for(L, G->x->dims[0] * G->x->dims[1]), voy = kl_for(L, G->oh),
        vox = kl_for(L, G->ow);
    pool_item(L, G, kx_var(L, vbc), kx_var(L, voy), kx_var(L, vox));
    kl_end_n(L, 3);
}

/* On an OpenCL device with vectors (the target's vector_bits), a float pool whose stride
 * along the row is 1, 2 or 4 and whose taps along it are adjacent (no dilation): each
 * work-item VO consecutive outputs of a row (VO divides ow), read as vectors of V = VO * sw
 * consecutive input columns, one vector load a tap. Per kernel row, h = the max over its kw
 * taps of each of the V columns (contiguous loads, no gather); output o is lane o * sw of
 * the rows' max, stored lane by lane (sw 1: one vector store). PoCL had made each tap of
 * the one-output work-items (pool_items) an 8-lane gather across work-items, the stride-2
 * columns not being contiguous. The max is exact: each row's taps in order, then the rows
 * in order, keeps the first of equal values and the last NaN, as the plain nest's one
 * chain does.
 *
 * A tile whose V + kw - 1 columns would reach outside the row (the padded borders, or the
 * last lane's read past the last output's window) reads them shifted by whole outputs
 * into the row (pool_vec_tile's shift) and takes its outputs that then fall outside the
 * vector from pool_item's clamped and selected taps; at most POOL_VEC_BORDER such tiles
 * a side, each its own branch on the tile index (the body holds vector code, which the
 * device compiler does not vectorize across work-items), the rest all pool_item. */
enum { POOL_VEC_BORDER = 2 };

/* Tile vt of VO outputs, its vectors read from column vt * VO * sw - pw + shift * sw:
 * outputs [o0, o1) from lanes (o - shift) * sw, the others one at a time (pool_item). */
static void pool_vec_tile(kn_lower *L, const pool_geom *G, int vbc, int voy, int vt, int V,
                          int64_t vo, int64_t shift) {
    int64_t o0 = shift > 0 ? shift : 0, o1 = vo + (shift < 0 ? shift : 0);
    for (int64_t o = 0; o < vo; o++) {
        if (o >= o0 && o < o1) continue;
        int vox = kl_decl(L, KN_I64, kt_mad(L, kx_var(L, vt), vo, kx_int(L, o)));
        pool_item(L, G, kx_var(L, vbc), kx_var(L, voy), kx_var(L, vox));
    }
    if (o1 <= o0) return;
    int acc = kl_decl_vec(L, KN_F32, V, kx_const(L, KN_F32, -INFINITY));
    for (int64_t ky = 0; ky < G->kh; ky++) {
        int64_t ylo = ky * G->dh - G->ph, yhi = (G->oh - 1) * G->sh + ylo;
        bool yin = ylo >= 0 && yhi < G->h;
        int viy = kl_decl(L, KN_I64, kt_mad(L, kx_var(L, voy), G->sh, kx_int(L, ylo)));
        kn_kx *iy = yin ? kx_var(L, viy) : clamp_into(L, kx_var(L, viy), G->h);
        int vrow =
            kl_decl(L, KN_I64,
                    kt_mad(L, kt_mad(L, kx_var(L, vbc), G->h, iy), G->w,
                           kt_mad(L, kx_var(L, vt), vo * G->sw, kx_int(L, shift * G->sw - G->pw))));
        int h = kl_decl_vec(L, KN_F32, V, kx_vload(L, G->x, kx_var(L, vrow), V));
        for (int64_t kx = 1; kx < G->kw; kx++)
            kl_set(L, h,
                   kx_bin(L, KX_MAX, kx_vload(L, G->x, kt_plus(L, kx_var(L, vrow), kx), V),
                          kx_var(L, h)));
        kn_kx *m = kx_bin(L, KX_MAX, kx_var(L, h), kx_var(L, acc));
        kl_set(L, acc,
               yin ? m : kx_select(L, kt_inside(L, kx_var(L, viy), G->h), m, kx_var(L, acc)));
    }
    int vy = kl_decl(L, KN_I64,
                     kt_mad(L, kt_mad(L, kx_var(L, vbc), G->oh, kx_var(L, voy)), G->ow,
                            kx_mul(L, kx_var(L, vt), kx_int(L, vo))));
    if (G->sw == 1 && o0 == 0 && o1 == vo)
        kl_store(L, G->y, kx_var(L, vy), kx_var(L, acc));
    else
        for (int64_t o = o0; o < o1; o++)
            kl_store(L, G->y, kt_plus(L, kx_var(L, vy), o),
                     kx_lane(L, acc, (int)((o - shift) * G->sw)));
}

/* Returns V (the schedule's lanes), or 0 where the vector work-items do not apply. */
static int pool_items_vec(kn_lower *L, const pool_geom *G, int lanes) {
    if (G->x->dtype != KN_F32 || G->dw != 1 || (G->sw != 1 && G->sw != 2 && G->sw != 4) ||
        lanes < 2)
        return 0;
    int64_t vo = lanes / G->sw;
    while (vo > 1 && G->ow % vo) vo /= 2;
    if (vo < 2) return 0;
    int V = (int)(vo * G->sw);
    int64_t nt = G->ow / vo, step = vo * G->sw, reach = G->kw + V - 2;
    if (reach >= G->w) return 0; /* no tile's vectors fit in the row */
    /* tiles [tlo, thi] read columns c0 .. c0 + reach, c0 = t * step - pw, inside the row */
    int64_t tlo = (G->pw + step - 1) / step, top = G->w - 1 - reach + G->pw;
    int64_t thi = top < 0 ? -1 : top / step;
    if (thi > nt - 1) thi = nt - 1;
    if (tlo > thi) return 0;
    int vbc = kl_for(L, G->x->dims[0] * G->x->dims[1]), voy = kl_for(L, G->oh), vt = kl_for(L, nt);
    kn_kx *inner = NULL;
    if (tlo > 0) inner = kx_bin(L, KX_GE, kx_var(L, vt), kx_int(L, tlo));
    if (thi < nt - 1) {
        kn_kx *c = kx_bin(L, KX_LE, kx_var(L, vt), kx_int(L, thi));
        inner = inner ? kx_bin(L, KX_LAND, inner, c) : c;
    }
    if (inner) kl_if(L, inner);
    pool_vec_tile(L, G, vbc, voy, vt, V, vo, 0);
    if (inner) {
        /* the border tiles: each its shift into the row where there are few */
        int64_t bt[2 * POOL_VEC_BORDER], nb = 0;
        bool few = tlo <= POOL_VEC_BORDER && nt - 1 - thi <= POOL_VEC_BORDER;
        for (int64_t t = 0; few && t < nt; t++)
            if (t < tlo || t > thi) bt[nb++] = t;
        int open = 0;
        for (int64_t b = 0; b < nb; b++) {
            int64_t c0 = bt[b] * step - G->pw, shift = 0;
            if (c0 < 0) shift = (-c0 + G->sw - 1) / G->sw;
            if (c0 + reach > G->w - 1) shift = -((c0 + reach - (G->w - 1) + G->sw - 1) / G->sw);
            if (c0 + shift * G->sw < 0 || c0 + shift * G->sw + reach > G->w - 1)
                shift = vo; /* no shift fits: every output one at a time */
            kl_else(L);
            if (b < nb - 1) {
                kl_if(L, kx_bin(L, KX_EQ, kx_var(L, vt), kx_int(L, bt[b])));
                open++;
            }
            pool_vec_tile(L, G, vbc, voy, vt, V, vo, shift);
        }
        if (!nb) {
            kl_else(L);
            pool_vec_tile(L, G, vbc, voy, vt, V, vo, vo); /* every output one at a time */
        }
        kl_end_n(L, 1 + open);
    }
    kl_end_n(L, 3);
    return V;
}

/* A float GlobalAveragePool, or an AveragePool whose one window is the whole input (no
 * padding: DS-CNN's), over a dense NCHW x on a microcontroller: one sum a channel
 * in one loop over its h * w elements (in the lowering's order, so the same sums), unrolled
 * by up to GAP_UNROLL (GCC's pragma), and a division by the constant h * w (the count the
 * lowering converts, exactly). The lowering's window loops of 3 x 3 (MobileNetV2's 1280
 * channels) took 6 instructions an element and 60 a channel on the M55. */
enum { GAP_UNROLL = 16 };

/* GlobalAveragePool over f32 NCHW on CPUs: the plain nest sums each channel's h*w values
 * in one chain (an add's latency each), one channel after another. Rebuilt as GAP_CHANNELS
 * channels a step, each its own chain in the same order (0, then + x[0], + x[1], ...,
 * then / f32(h*w), the plain nest's count), so the adds of different channels overlap
 * and every sum keeps its bits. */
enum { GAP_CHANNELS = 16 };

/* Whether kernel k is a pool this pass rebuilds as sums: x [n, c, h, w] -> y [n, c, 1, 1],
 * both f32, channels-first; a whole-window AveragePool on microcontrollers only. */
static bool gap_suits(kn_ctx *cx, const kn_kprog *p, int k, kn_kbuf **x, kn_kbuf **y) {
    const kn_kernel *kern = p->kernels[k];
    const kn_node *n = kern->node;
    if (!n || (n->op != KN_OP_GLOBALAVERAGEPOOL && n->op != KN_OP_AVERAGEPOOL) || kern->contract ||
        kn_node_attr(n, KN_ATTR_LAYOUT) || !p->target ||
        (p->target->kind != KN_TARGET_MCU &&
         (p->target->kind != KN_TARGET_CPU || n->op != KN_OP_GLOBALAVERAGEPOOL)))
        return false;
    pool_io W;
    W.ok = kn_kernel_io(kern->body, &W.x, &W.x2, &W.y);
    if (!W.ok || !W.x || !W.y || W.x == W.y || W.x->dtype != KN_F32 || W.y->dtype != KN_F32 ||
        W.x->rank != 4 || W.y->rank != 4 || W.y->dims[0] != W.x->dims[0] ||
        W.y->dims[1] != W.x->dims[1] || W.y->dims[2] != 1 || W.y->dims[3] != 1 ||
        W.x->dims[2] * W.x->dims[3] < 1 || W.x->dims[2] * W.x->dims[3] >= (1 << 24))
        return false;
    if (n->op == KN_OP_AVERAGEPOOL) { /* one window, the input's extents, no padding */
        kn_type xt = kn_type_make(W.x->dtype, W.x->rank, W.x->dims);
        int64_t ceil_mode = kn_attr_int(cx, n, "ceil_mode", 0);
        kn_window w;
        if (kn_failed(cx) || kn_window_make(cx, n, &xt, NULL, (int)ceil_mode, &w) || w.nsp != 2 ||
            w.transposed)
            return false;
        for (int i = 0; i < 2; i++)
            if (w.k[i] != w.in[i] || w.out[i] != 1 || w.pb[i] || w.pe[i] || w.d[i] != 1)
                return false;
    }
    *x = W.x, *y = W.y;
    return true;
}

/* The loop over a channel's hw elements, unrolled by up to GAP_UNROLL; returns its var. */
static int gap_loop(kn_lower *L, int64_t hw) {
    int vs = kl_for(L, hw);
    if (hw > 1) {
        L->owner[L->depth - 1]->annot |= KN_LOOP_UNROLL;
        L->owner[L->depth - 1]->width = hw < GAP_UNROLL ? (int)hw : GAP_UNROLL;
    }
    return vs;
}

/* Channels [c0, c1) one at a time. */
static void gap_scalar(kn_lower *L, kn_kbuf *x, kn_kbuf *y, int64_t c0, int64_t c1) {
    int64_t hw = x->dims[2] * x->dims[3];
    if (c1 <= c0) return;
    int vc = kl_for(L, c1 - c0);
    kn_kx *c = c0 ? kx_add(L, kx_var(L, vc), kx_int(L, c0)) : kx_var(L, vc);
    int acc = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    int vs = gap_loop(L, hw);
    kl_set(L, acc, kx_add(L, kx_var(L, acc), kx_load(L, x, kt_mad(L, c, hw, kx_var(L, vs)))));
    kl_end(L);
    kl_store(L, y, c, kx_bin(L, KX_DIV, kx_var(L, acc), kx_cast(L, KN_F32, kx_int(L, hw))));
    kl_end(L);
}

/* With a word gather (Helium) and 4 f32 lanes: 4 channels a vector, lane l the sum of
 * channel c + l, each step one gather of their elements hw apart (KN_LD4FG), the 4
 * quotients one vector store; each lane adds its channel's elements in the same order as
 * the scalar loop, so the same bits. The last channels past a multiple of 4 one at a
 * time. */
static void gap_rewrite(kn_lower *L, kn_kbuf *x, kn_kbuf *y) {
    int64_t hw = x->dims[2] * x->dims[3], nc = x->dims[0] * x->dims[1];
    int64_t nv = L->target && L->target->word_gather && kl_lanes(L, KN_F32) == 4 && hw >= 2 &&
                         hw < INT32_MAX / 4
                     ? nc / 4
                     : 0;
    if (nv) {
        int vv = kl_for(L, nv);
        int acc = kl_decl_vec(L, KN_F32, 4, kx_const(L, KN_F32, 0));
        int vs = gap_loop(L, hw);
        kn_kx *xi = kt_mad(L, kx_var(L, vv), 4 * hw, kx_var(L, vs));
        kl_set(L, acc, kx_add(L, kx_var(L, acc), kx_vload_strided(L, x, xi, 4, (int)hw)));
        kl_end(L);
        kl_store(L, y, kx_mul(L, kx_var(L, vv), kx_int(L, 4)),
                 kx_bin(L, KX_DIV, kx_var(L, acc), kx_cast(L, KN_F32, kx_int(L, hw))));
        kl_end(L);
    }
    gap_scalar(L, x, y, 4 * nv, nc);
}

/* Channels [c0, c0 + nch) of the pool, one sum each (nch <= GAP_CHANNELS). */
static void gap_channels(kn_lower *L, kn_kbuf *x, kn_kbuf *y, kn_kx *c0, int nch) {
    int64_t hw = x->dims[2] * x->dims[3];
    int acc[GAP_CHANNELS];
    for (int j = 0; j < nch; j++) acc[j] = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    int vk = kl_for(L, hw);
    for (int j = 0; j < nch; j++) {
        kn_kx *at = kx_add(L, kx_mul(L, kt_plus(L, c0, j), kx_int(L, hw)), kx_var(L, vk));
        kl_set(L, acc[j], kx_add(L, kx_var(L, acc[j]), kx_load(L, x, at)));
    }
    kl_end(L);
    for (int j = 0; j < nch; j++)
        kl_store(L, y, kt_plus(L, c0, j),
                 kx_bin(L, KX_DIV, kx_var(L, acc[j]), kx_const(L, KN_F32, (double)hw)));
}

static void gap_rebuild(kn_lower *L, kn_kbuf *x, kn_kbuf *y) {
    int64_t nc = x->dims[0] * x->dims[1], full = nc / GAP_CHANNELS;
    if (full) {
        int vb = kl_for(L, full);
        gap_channels(L, x, y, kx_mul(L, kx_var(L, vb), kx_int(L, GAP_CHANNELS)), GAP_CHANNELS);
        kl_end(L);
    }
    if (nc % GAP_CHANNELS)
        gap_channels(L, x, y, kx_int(L, full * GAP_CHANNELS), (int)(nc % GAP_CHANNELS));
}

kn_status kn_kpass_pool(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    if (!t) return KN_OK;
    for (int k = 0; k < p->nkernels; k++) {
        kn_kbuf *gx, *gy;
        if (gap_suits(cx, p, k, &gx, &gy)) {
            kn_lower *L = kl_builder_rewrite(cx, p, k);
            if (t->kind == KN_TARGET_CPU)
                gap_rebuild(L, gx, gy);
            else
                gap_rewrite(L, gx, gy);
            kl_builder_destroy(L);
            continue;
        }
        pool_geom G;
        if (!pool_suits(cx, p, k, &G)) {
            if (kn_failed(cx)) return cx->status;
            continue;
        }
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        if (t->kind == KN_TARGET_GPU) { /* work-items, not row walks */
            int V = pool_items_vec(L, &G, kl_lanes(L, KN_F32));
            if (V)
                p->kernels[k]->sched.lanes = V;
            else
                pool_items(L, &G);
            kl_builder_destroy(L);
            continue;
        }
        if (G.cl) { /* 8-bit channels-last: vectors of channels */
            int lanes = kl_lanes(L, G.x->dtype);
            while (lanes > 1 && G.c % lanes) lanes /= 2;
            G.lanes = lanes;
            G.vbc = kl_for(L, G.x->dims[0]);
            pool_cl_rows(L, &G, 0, G.ylo, true);
            pool_cl_rows(L, &G, G.ylo, G.yhi, false);
            pool_cl_rows(L, &G, G.yhi > G.ylo ? G.yhi : G.ylo, G.oh, true);
            kl_end(L);
            p->kernels[k]->sched.lanes = G.lanes;
            kl_builder_destroy(L);
            continue;
        }
        int lanes = kl_lanes(L, KN_F32);
        G.lanes = lanes > 1 && G.sw == 1 ? lanes : 1;
        if (G.sw >= 2 && G.sw <= 4 && t->kind == KN_TARGET_CPU &&
            kl_lanes(L, G.x->dtype) >= 8) /* strided loads of the target's lanes */
            G.lanes = kl_lanes(L, G.x->dtype), G.strided = true;
        while (G.lanes > 4 && G.lanes > G.xhi - G.xlo) G.lanes /= 2;
        if (G.lanes < 4) G.lanes = 1;
        /* a float pool in a program for several threads keeps its rows apart (each
           output row's taps its own strided loads), so that it splits in bands of rows
           like the convolution before it (pool_bands here, passes/parallel.c band()) */
        bool keep = pool_keeps_rows(&G) && (G.x->dtype != KN_F32 || p->threads <= 1);
        if (pool_keeps_rows(&G) && !keep && t->kind == KN_TARGET_CPU &&
            G.yhi - G.ylo >= POOL_KEPT_BAND_MIN) {
            pool_bands_kept(L, &G);
            p->kernels[k]->sched.lanes = G.lanes;
            kl_builder_destroy(L);
            continue;
        }
        if (!keep && pool_banded(p, &G)) {
            pool_bands(L, &G);
            p->kernels[k]->sched.lanes = G.lanes;
            kl_builder_destroy(L);
            continue;
        }
        G.vbc = kl_for(L, G.x->dims[0] * G.x->dims[1]);
        pool_rows(L, &G, 0, G.ylo, true);
        if (keep)
            pool_rows_kept(L, &G, G.ylo, G.yhi);
        else
            pool_rows(L, &G, G.ylo, G.yhi, false);
        pool_rows(L, &G, G.yhi > G.ylo ? G.yhi : G.ylo, G.oh, true);
        kl_end(L);
        p->kernels[k]->sched.lanes = G.lanes;
        kl_builder_destroy(L);
    }
    return KN_OK;
}
