/* Helpers the contraction kernel passes share (passes/tile.c: register tiles for CPUs
 * and microcontrollers; passes/tile_gpu.c: work-item tiles for OpenCL devices;
 * passes/depthwise.c): which contractions they can rebuild, the part of a
 * convolution's output whose window stays inside the input (so padding can be handled
 * inside the kernel without a padded copy), fused-epilogue operands read at an
 * output position, and index arithmetic. */
#ifndef KN_PASSES_TILE_H
#define KN_PASSES_TILE_H

#include "ir/kir.h"

/* Whether b is constant f32 data known at compile time. */
bool kt_f32_const(const kn_kbuf *b);
/* Whether every epilogue operand of d can be read at y's coordinates (f32, shape
 * broadcastable to y's). */
bool kt_operands_ok(const kn_contract *d);
/* The outputs [*lo, *hi) along one axis whose window (k taps, stride s, dilation dl,
 * begin pad pb) lies inside [0, in): no bounds test is needed there. Outputs before lo
 * and from hi on read padding. 0 <= lo <= hi <= out. */
void kt_interior(int64_t in, int64_t out, int64_t k, int64_t s, int64_t dl, int64_t pb, int64_t *lo,
                 int64_t *hi);
/* The pixels of the span tiles (passes/tile.c, conv_plane: consecutive pixels of the
 * output plane, across its rows) the tile pass gives float convolution d by default on
 * L's target (two vectors of output channels, a padded copy), or 0 where it gives tiles
 * of one output row. */
int kt_conv_span_rows(kn_lower *L, const kn_contract *d);
/* Conditions 0 <= i < n as one expression. */
kn_kx *kt_inside(kn_lower *L, kn_kx *i, int64_t n);
/* e + k, written e - |k| for negative k and e for 0 (index arithmetic) */
kn_kx *kt_plus(kn_lower *L, kn_kx *e, int64_t k);
/* a * s + b (index arithmetic) */
kn_kx *kt_mad(kn_lower *L, kn_kx *a, int64_t s, kn_kx *b);
/* floor(a / b) for b > 0 (C's division truncates toward zero) */
static inline int64_t kt_floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
/* v limited to [lo, hi] (lo <= hi) */
static inline int64_t kt_clamp(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}
/* b[at .. at + n) = 0 (f32), one loop of stores; nothing when n <= 0. For the padding
 * of the staged copies of passes/stem.c and passes/depthwise.c. */
void kt_zero(kn_lower *L, kn_kbuf *b, kn_kx *at, int64_t n);
/* The column phases of those staged copies: a padded row of ws columns split into sw
 * phases, column j*sw + p at phase p's start + j. Sets each phase's width wid[p] and
 * start off[p] (sw entries each); returns the row's length, ws. */
int64_t kt_phases(int64_t ws, int64_t sw, int64_t *wid, int64_t *off);
/* Of phase p's n columns j (padded column j*sw + p, input column j*sw + p - pw), those
 * inside an input row of w columns: [*jlo, *jhi), 0 <= jlo <= jhi <= n. The rest are
 * padding. */
void kt_phase_inside(int64_t p, int64_t sw, int64_t pw, int64_t w, int64_t n, int64_t *jlo,
                     int64_t *jhi);
/* Loads d's epilogue operands into opnd[] at y's coordinates coord (one per axis of
 * y), `lanes` consecutive positions along y's last axis when lanes > 1 (a vector load
 * when the operand varies along that axis, else a scalar that broadcasts). */
void kt_epi_operands(kn_lower *L, const kn_contract *d, kn_kx *const *coord, int lanes,
                     kn_kx **opnd);
/* The offset sum_i c_i * st[i] of batch b of batched matrix product d (kn_contract),
 * c_i being b's coordinates in d's batch dims; st is d->xbs or d->wbs. */
kn_kx *kt_batch_off(kn_lower *L, const kn_contract *d, kn_kx *b, const int64_t *st);
/* Whether every epilogue operand of matrix product d is y-shaped, one row of N or a
 * single value. */
bool kt_mm_operands_ok(const kn_contract *d);
/* Matrix product d's epilogue on val, the value (scalar or vector) of y[yidx ..), column
 * col of the first lane: its operands read at those places (kt_mm_operands_ok). */
kn_kx *kt_mm_epi(kn_lower *L, const kn_contract *d, const kn_kbuf *y, kn_kx *val, kn_kx *yidx,
                 kn_kx *col);

/* Value of column col at reduction step r of a matrix B being packed (ctx: the caller's). */
typedef double (*kt_get)(const void *ctx, int64_t r, int64_t col);
/* Where kt_batched_const packs element (r, col) of batch b's constant B (k x n): batch
 * b's packing starts at b * per; blocks of kb columns, each holding its k rows kb apart
 * (a partial last block kbl apart). Elements of no (r, col) are 0. */
typedef struct kt_packing {
    int64_t k, n, kb, kbl, per;
} kt_packing;

static inline int64_t kt_packed_at(const kt_packing *P, int64_t b, int64_t r, int64_t col) {
    int64_t blk = col / P->kb;
    return b * P->per + blk * P->k * P->kb + r * (blk < P->n / P->kb ? P->kb : P->kbl) +
           col % P->kb;
}

/* Writes every batch's B at kt_packed_at(P, ...) into dst, which is zeroed before and is
 * the packed constant itself (ctx: the caller's). */
typedef void (*kt_fill_b)(const void *ctx, const kt_packing *P, float *dst);

/* `batch` independent products y[b] = a[b] * B_b, a[b] being m x k (row-major, from b*m*k
 * on in a), y[b] m x n (from b*m*n on), each B_b (k x n) a constant written at compile
 * time by fill straight into its packed place (the layout the tile pass packs a constant
 * B in): the tile pass's micro-kernels inside a loop over the batches, which is marked
 * parallel; where every B together is small, inside a parallel loop over chunks of rows
 * instead (the rows of every batch split alike: Winograd's tiles). Built at L's current position;
 * the tile chosen goes to out (tile_rows, tile_vecs, lanes). false (nothing built) when the columns
 * are too few for a tile. */
bool kt_batched_const(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t k,
                      int64_t n, kt_fill_b fill, const void *ctx, const kn_sched *ov,
                      kn_sched *out);

/* Whether kt_batched_const splits these products by batch, one task a batch or a few,
 * rather than by chunks of rows (false also where it builds none). */
bool kt_batched_by_batch(kn_lower *L, int64_t batch, int64_t m, int64_t k, int64_t n,
                         const kn_sched *ov);

/* kt_batched_const's products for a caller that runs them inside a loop of its own
 * (passes/winograd.c: per chunk of tiles, in a per-thread scratch): built at L's position,
 * no loop marked parallel: for b < batch, rows r < m, y[(b*ms + r)*n + j] = sum_i
 * a[(b*ms + r)*k + i] * B_b[i][j], ms >= m the rows between two batches' first rows. Each
 * element is the same sum in the same order as kt_batched_const's. B is packed into a new
 * constant on the first call (*packed NULL, then set) and shared by later calls with the
 * same batch, k, n and ov (instances for other m). false when the columns are too few. */
bool kt_batched_rows(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t ms,
                     int64_t k, int64_t n, kt_fill_b fill, const void *ctx, const kn_sched *ov,
                     kn_kbuf **packed, kn_sched *out);

/* The block of columns (kb) of kt_batched_rows' tile for these products, 0 when the
 * columns are too few for a tile. */
int64_t kt_batched_kb(kn_lower *L, int64_t m, int64_t k, int64_t n, const kn_sched *ov);
/* kt_batched_rows for the columns [blk0*kb, blk0*kb + nc) of every product (kb:
 * kt_batched_kb; blk0 an index expression): y's rows ys >= nc wide, y[(b*ms + r)*ys + j]
 * the product's column blk0*kb + j. nc is a multiple of kb, or blk0*kb + nc = n. B is packed
 * whole as kt_batched_rows packs it (shared through *packed with its instances); each
 * element is the same sum in the same order. */
bool kt_batched_cols(kn_lower *L, kn_kbuf *a, kn_kbuf *y, int64_t batch, int64_t m, int64_t ms,
                     int64_t k, int64_t n, kn_kx *blk0, int64_t nc, int64_t ys, kt_fill_b fill,
                     const void *ctx, const kn_sched *ov, kn_kbuf **packed, kn_sched *out);

/* The work-item schedules of passes/tile_gpu.c: d rebuilt into kernel L (a
 * kl_builder_rewrite builder), its choices recorded in *out; false when d does not
 * suit them (the plain nest stays). ov: the schedule file's overrides, or NULL. */
bool kt_gpu_conv(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out);
bool kt_gpu_matmul(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out);

#endif
