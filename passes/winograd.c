/* The winograd pass: 3x3 stride-1 convolutions as Winograd F(m x m, 3 x 3) products.
 * requires: kir (kernels with kn_contract descriptors); breaks: plan (adds scratches
 * and a constant). Runs before `tile`, which then leaves the kernels it rebuilt alone.
 *
 * A 3x3 convolution computes each m x m block of outputs (a tile) from the a x a block
 * of inputs under it (a = m + 2). Winograd's minimal filtering (Lavin & Gray 2015, as in
 * NNPACK, ncnn and TVM's conv2d_winograd) writes that as
 *
 *   Y = AT [ sum_ci (G g G^T) . (BT d B) ] A          (. : elementwise, a x a)
 *
 * so the channel sum becomes a*a independent matrix products over the tiles, with
 * a*a / (9 m*m) of the direct convolution's multiplies: 16/36 for F(2x2, 3x3), 36/144
 * for F(4x4, 3x3). The kernel is rebuilt as four loop nests over arena scratches:
 *
 *   pad:     P[n][Hp][cb][Wp][L] = x[n][cb*L + l][row - ph][col - pw], zero outside x and
 *            past the channels (channels in blocks of L = the target's f32 lanes, so a
 *            pixel's L channels are one vector); Hp = TH*m + 2, Wp = TW*m + 2
 *   input:   for ty (parallel), cb, tx:  d = the a x a vectors P[n][ty*m ..][cb][tx*m ..]
 *            V[ij][t][cb*L ..] = (BT d B)[i][j]          t = (n*TH + ty)*TW + tx
 *            (F(4x4) at several threads: by groups of elements ij, wg_input_elems)
 *   product: for ij (parallel): M[ij] = V[ij] (NT x Kp) * U[ij] (Kp x Cout); or, where
 *            the Us fit in the L2 (or a schedule's wchunk asks), for chunk of tiles (parallel), ij
 * (kt_batched_rows, the transforms in the same loop over per-thread scratch, wchunk; in blocks of
 * output channels where a schedule file's wcob says) with U = G g G^T computed at compile time (in
 * double) and packed as the tile pass packs a constant B: its micro-kernel (kt_batched_const), not
 * a second GEMM output:  for ty (parallel; at several threads a task a thread over its
 * half of the tiles, wg_thread_tiles), tx, block of L output channels: Y = AT M[..][t][co ..]
 * A + bias, y[n][co + l][ty*m + i][tx*m + j] = epilogue(Y[i][j] lane l) for the outputs inside y
 * (scalar stores: NCHW puts channels oh*ow apart), the conv's fused epilogue and its operands
 * included
 *
 * Kp is Cin rounded up to L (U's extra rows are zero, as are P's extra lanes). The
 * transforms' coefficients are constants in the expressions (0 dropped, +-1 as an add
 * or a subtract). Which convolutions: f32, NCHW, one group, 3x3, stride and dilation 1,
 * constant weights, on CPU targets with vectors of 4 lanes or more (not microcontrollers,
 * not OpenCL devices, which keep the direct convolution), with at least WG_MIN_CIN input
 * and output channels: F(4x4) where 4x4 tiles make WG_F4_TILES or more per image (28x28
 * outputs and up), else F(2x2) where 2x2 tiles make WG_MIN_TILES (7x7 and up) and Cin *
 * Cout is WG_MIN_CC or more, else the direct convolution (wg_tile; measured on ResNet-18,
 * docs/benchmarks.md "Winograd", and again at small sizes). A schedule file's wino=2|4
 * picks the tile, wino=1 the direct convolution. The transformed weights are a*a/9
 * times the 3x3 weights (16/9, 4): ResNet-18's compiled weights grow from 47 to 81 MB,
 * ResNet-50's from 102 to 133 MB. */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "passes/tile.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

enum { WG_MAXA = 6 };

/* Which convolutions (see above); set from measurement. */
enum {
    WG_MIN_CIN = 16,
    WG_MIN_COUT = 16,
    WG_MIN_CC = 512,
    WG_MIN_TILES = 16,
    WG_DIRECT_TILES = 16,
    WG_F4_TILES = 49,
    WG_MAX_BATCH = 4
};

typedef struct wg_mats {
    int m, a;
    double bt[WG_MAXA][WG_MAXA]; /* a x a */
    double g[WG_MAXA][3];        /* a x 3 */
    double at[4][WG_MAXA];       /* m x a */
} wg_mats;

/* F(2x2, 3x3) and F(4x4, 3x3) with the interpolation points 0, +-1 (and +-2), inf. */
static void wg_matrices(int m, wg_mats *W) {
    static const double bt2[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
    static const double g2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
    static const double at2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
    static const double bt4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                     {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                     {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
    static const double g4[6][3] = {{1. / 4, 0, 0},
                                    {-1. / 6, -1. / 6, -1. / 6},
                                    {-1. / 6, 1. / 6, -1. / 6},
                                    {1. / 24, 1. / 12, 1. / 6},
                                    {1. / 24, -1. / 12, 1. / 6},
                                    {0, 0, 1}};
    static const double at4[4][6] = {
        {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
    memset(W, 0, sizeof *W);
    W->m = m;
    W->a = m + 2;
    for (int i = 0; i < W->a; i++) {
        for (int j = 0; j < W->a; j++) W->bt[i][j] = m == 2 ? bt2[i][j] : bt4[i][j];
        for (int j = 0; j < 3; j++) W->g[i][j] = m == 2 ? g2[i][j] : g4[i][j];
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < W->a; j++) W->at[i][j] = m == 2 ? at2[i][j] : at4[i][j];
}

typedef struct wg_geom {
    const kn_contract *d;
    wg_mats W;
    int lanes;
    int64_t n, c, co, h, w, oh, ow, ph, pw;
    int64_t th, tw, nt;     /* tiles down, across, in all */
    int64_t cb, kp, hp, wp; /* channel blocks, Kp, the padded copy's rows and columns */
    kn_kbuf *P, *V, *M, *S;
    bool s_thread; /* S per thread, [m*m][L] (wg_output_tiles), not [TH][m*m][L] */
} wg_geom;

/* The one-loop form's chunks (see "one parallel loop over chunks of tiles" below). */
typedef struct wg_chunks {
    int64_t nch, T, r, tc; /* chunks, tiles in the small ones, how many have T + 1, T + !!r */
    int64_t cob;           /* output channels in a block (Mt's width): Co, or fewer (big Us) */
    int64_t prows;         /* padded rows a chunk reads at most (Pt's rows) */
    kn_kbuf *Vt, *Mt, *St, *U, *Pt;
    kn_kx *prow0; /* inside a chunk: its first padded row (a variable) */
} wg_chunks;

/* sum_k c[k] * v[k] over the nonzero coefficients (vector or scalar values) */
static kn_kx *wg_lin(kn_lower *L, const double *c, kn_kx *const *v, int n) {
    kn_kx *s = NULL;
    for (int k = 0; k < n; k++) {
        if (c[k] == 0) continue;
        kn_kx *t = v[k];
        bool neg = c[k] < 0;
        double mag = neg ? -c[k] : c[k];
        if (mag != 1) t = kx_mul(L, t, kx_const(L, KN_F32, mag));
        if (!s)
            s = neg ? kx_un(L, KX_NEG, t) : t;
        else
            s = kx_bin(L, neg ? KX_SUB : KX_ADD, s, t);
    }
    return s ? s : kx_const(L, KN_F32, 0);
}

/* out = T in T^T for the r x a matrix T and the a x a values in (vector locals of
 * `lanes` declared here; out[i][j] are variables), for the elements e0 <= i*r + j < e1
 * only: the rows of T in they touch (mid), then their elements (each the same sum in the
 * same order whatever the range). in[k][j] may be NULL where no such row of T uses row k. */
static void wg_sandwich_part(kn_lower *L, int r, int a, const double (*t)[WG_MAXA], int lanes,
                             kn_kx *in[WG_MAXA][WG_MAXA], int e0, int e1,
                             int out[WG_MAXA][WG_MAXA]) {
    kn_kx *mid[WG_MAXA][WG_MAXA];
    int i0 = e0 / r, i1 = (e1 - 1) / r;
    for (int i = i0; i <= i1; i++)
        for (int j = 0; j < a; j++) { /* mid[i][j] = sum_k t[i][k] in[k][j] */
            kn_kx *col[WG_MAXA];
            for (int k = 0; k < a; k++) col[k] = in[k][j];
            mid[i][j] = kx_var(L, kl_decl_vec(L, KN_F32, lanes, wg_lin(L, t[i], col, a)));
        }
    for (int i = i0; i <= i1; i++)
        for (int j = 0; j < r; j++) /* out[i][j] = sum_k mid[i][k] t[j][k] */
            if (i * r + j >= e0 && i * r + j < e1)
                out[i][j] = kl_decl_vec(L, KN_F32, lanes, wg_lin(L, t[j], mid[i], a));
}

static void wg_sandwich(kn_lower *L, int r, int a, const double (*t)[WG_MAXA], int lanes,
                        kn_kx *in[WG_MAXA][WG_MAXA], int out[WG_MAXA][WG_MAXA]) {
    wg_sandwich_part(L, r, a, t, lanes, in, 0, r * r, out);
}

static void mark_parallel(kn_lower *L) {
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL;
}

/* Padded row `row` (a variable) of batch n into P from element q on ([cb][Wp][L]). */
static void wg_pad_row(kn_lower *L, const wg_geom *G, int64_t n, kn_kx *row, kn_kbuf *P, kn_kx *q) {
    int64_t lanes = G->lanes, full = G->c / lanes, tail = G->c % lanes;
    kn_kx *zero = kx_var(L, kl_decl_vec(L, KN_F32, (int)lanes, kx_const(L, KN_F32, 0)));
    int vq = kl_decl(L, KN_I64, q);
    kl_if(L, kt_inside(L, kt_plus(L, row, -G->ph), G->h));
    {
        /* zeros: the border columns of the full blocks, every pixel of a partial block */
        int vb = kl_for(L, G->cb);
        kn_kx *base = kt_mad(L, kx_var(L, vb), G->wp * lanes, kx_var(L, vq));
        kl_if(L, kx_bin(L, KX_LT, kx_var(L, vb), kx_int(L, full)));
        if (G->pw) {
            int vc = kl_for(L, G->pw);
            kl_store(L, P, kt_mad(L, kx_var(L, vc), lanes, base), zero);
            kl_end(L);
        }
        if (G->wp > G->pw + G->w) {
            int vc = kl_for(L, G->wp - G->pw - G->w);
            kl_store(L, P, kt_mad(L, kt_plus(L, kx_var(L, vc), G->pw + G->w), lanes, base), zero);
            kl_end(L);
        }
        kl_else(L);
        int vc = kl_for(L, G->wp);
        kl_store(L, P, kt_mad(L, kx_var(L, vc), lanes, base), zero);
        kl_end_n(L, 3);
        /* the copy: P's vectors filled lane by lane */
        for (int part = 0; part < 2; part++) {
            int64_t nb = part ? (tail ? 1 : 0) : full, nl = part ? tail : lanes;
            if (!nb) continue;
            int vb2 = kl_for(L, nb);
            kn_kx *cb = kt_plus(L, kx_var(L, vb2), part ? full : 0);
            /* lanes outside the columns: x read along its row, P written L apart; with
             * the lane loop innermost LLVM unrolled it and vectorized x into scatters */
            int vl = kl_for(L, nl), vx = kl_for(L, G->w);
            kn_kx *ch = kt_mad(L, cb, lanes, kx_var(L, vl));
            kn_kx *src =
                kt_mad(L, kt_mad(L, kt_plus(L, ch, n * G->c), G->h, kt_plus(L, row, -G->ph)), G->w,
                       kx_var(L, vx));
            kn_kx *dst = kt_mad(L, kt_mad(L, cb, G->wp, kt_plus(L, kx_var(L, vx), G->pw)), lanes,
                                kx_add(L, kx_var(L, vq), kx_var(L, vl)));
            kl_store(L, P, dst, kx_load(L, G->d->x, src));
            kl_end_n(L, 3);
        }
    }
    kl_else(L);
    {
        int vc = kl_for(L, G->cb * G->wp);
        kl_store(L, P, kt_mad(L, kx_var(L, vc), lanes, kx_var(L, vq)), zero);
        kl_end(L);
    }
    kl_end(L);
}

/* The zero-padded, channel-blocked copy of batch n of x, one padded row at a time: the
 * rows are the parallel loop, so the copy splits as the convolution before it and the
 * input transform after it do (by rows: each thread mostly reads rows it wrote). */
static void wg_pad(kn_lower *L, const wg_geom *G, int64_t n) {
    int vr = kl_for(L, G->hp);
    mark_parallel(L);
    kn_kx *row = kx_var(L, vr);
    /* P[n][row][0][0][0] */
    wg_pad_row(L, G, n, row, G->P,
               kt_mad(L, kt_plus(L, row, n * G->hp), G->cb * G->wp * G->lanes, kx_int(L, 0)));
    kl_end(L);
}

/* (BT d B) for the a x a vectors d = P[n][ty*m ..][cb][tx*m ..] of tile (ty, tx), channel
 * block cb: the transformed vectors' variables in v, elements [e0, e1) of the a*a (only the
 * rows of d those use are loaded). Pt (not NULL): d read from the chunk's own padded rows
 * instead, Pt[ty*m - prow0 ..][cb][tx*m ..] (prow0: its first). */
static void wg_tile_in(kn_lower *L, const wg_geom *G, int64_t n, kn_kx *ty, kn_kx *tx, kn_kx *cb,
                       int e0, int e1, int v[WG_MAXA][WG_MAXA], kn_kbuf *Pt, kn_kx *prow0) {
    const wg_mats *W = &G->W;
    int a = W->a, m = W->m, lanes = G->lanes;
    bool need[WG_MAXA] = {0}; /* the rows of d the elements' rows of BT use */
    for (int i = e0 / a; i <= (e1 - 1) / a; i++)
        for (int k = 0; k < a; k++) need[k] |= e1 - e0 == a * a || W->bt[i][k] != 0;
    kn_kx *row = kx_mul(L, ty, kx_int(L, m)), *col = kx_mul(L, tx, kx_int(L, m));
    kn_kx *prow = Pt ? kx_sub(L, row, prow0) : kt_plus(L, row, n * G->hp);
    kn_kbuf *P = Pt ? Pt : G->P;
    int vp = kl_decl(
        L, KN_I64,
        kx_mul(L, kx_add(L, kt_mad(L, kt_mad(L, prow, G->cb, cb), G->wp, kx_int(L, 0)), col),
               kx_int(L, lanes)));
    kn_kx *d[WG_MAXA][WG_MAXA] = {{0}};
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a && need[i]; j++)
            d[i][j] = kx_var(
                L, kl_decl_vec(L, KN_F32, lanes,
                               kx_vload(L, P,
                                        kt_plus(L, kx_var(L, vp), (i * G->cb * G->wp + j) * lanes),
                                        lanes)));
    wg_sandwich_part(L, a, a, W->bt, lanes, d, e0, e1, v);
}

/* V[ij][t][cb*L ..] = (BT d B)[i][j] for every tile t of batch n */
static void wg_input(kn_lower *L, const wg_geom *G, int64_t n) {
    int a = G->W.a, lanes = G->lanes;
    int vty = kl_for(L, G->th);
    mark_parallel(L);
    int vcb = kl_for(L, G->cb), vtx = kl_for(L, G->tw);
    kn_kx *ty = kx_var(L, vty), *tx = kx_var(L, vtx), *cb = kx_var(L, vcb);
    int v[WG_MAXA][WG_MAXA];
    wg_tile_in(L, G, n, ty, tx, cb, 0, a * a, v, NULL, NULL);
    /* t = (n*TH + ty)*TW + tx; V[(ij*NT + t)*Kp + cb*L] */
    kn_kx *t = kt_mad(L, kt_plus(L, ty, n * G->th), G->tw, tx);
    int vv = kl_decl(L, KN_I64, kt_mad(L, t, G->kp, kx_mul(L, cb, kx_int(L, lanes))));
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++)
            kl_store(L, G->V, kt_plus(L, kx_var(L, vv), (i * a + j) * G->nt * G->kp),
                     kx_var(L, v[i][j]));
    kl_end_n(L, 3);
}

/* The input transform split by Winograd element (programs for `threads` threads that
 * divide the a*a elements, three passes, F(4x4), products split by element): a parallel
 * loop of `threads` groups, group g computing elements [g*q, (g+1)*q) of V (q = a*a /
 * threads) for every tile and channel block from all of P. The products after it run one
 * task an element or a few (kt_batched_by_batch), thread g's range the same q elements
 * (runtime/kn_pool.c), so each thread multiplies the V it wrote; split by tiles (wg_input)
 * each thread wrote its rows of tiles of every element, and half of V crossed between the
 * cores, where now half of P does. A group's elements take the rows of BT d they need (at
 * 2 threads half of each stage's arithmetic) from the rows of d those use (5 of 6 for
 * F(4x4)); each element is the same sum in the same order as wg_input's.
 * Intel Xeon VM, 2 threads, ResNet-50's layer2 conv2s (F(4x4), 28x28, 128 -> 128; loop
 * times from KILN_POOL_TRACE, 6 pairs alternated with main's binary): the input transforms
 * 0.70-0.78x main's time, their products 0.92-0.93x (read across the cores, KILN_XCORE=2:
 * 982 -> 914 KB a kernel). For F(2x2) (layer3, 14x14, 256 -> 256: 866 -> 661 KB) the
 * input transforms took 1.0-1.17x and the products gained nothing (1.01-1.04x, their
 * time is U's 4 MB from memory), so F(2x2) keeps the split by tiles (docs/benchmarks.md
 * "Winograd's three passes at two threads"). */
static bool wg_input_by_element(kn_lower *L, const wg_geom *G, const kn_sched *ov) {
    int a = G->W.a, e = a * a, th = L->p->threads;
    return G->W.m == 4 && th > 1 && th <= e && e % th == 0 && L->target &&
           L->target->kind == KN_TARGET_CPU && kt_batched_by_batch(L, e, G->nt, G->kp, G->co, ov);
}

static void wg_input_elems(kn_lower *L, const wg_geom *G, int64_t n) {
    int a = G->W.a, lanes = G->lanes, th = L->p->threads, q = a * a / th;
    int64_t es = G->nt * G->kp; /* V's elements apart */
    int vg = kl_for(L, th);
    mark_parallel(L);
    kn_kx *g = kx_var(L, vg);
    for (int gi = 0; gi < th; gi++) {
        int e0 = gi * q, e1 = e0 + q;
        kl_if(L, kx_bin(L, KX_EQ, g, kx_int(L, gi)));
        int vty = kl_for(L, G->th), vcb = kl_for(L, G->cb), vtx = kl_for(L, G->tw);
        kn_kx *ty = kx_var(L, vty), *tx = kx_var(L, vtx), *cb = kx_var(L, vcb);
        int v[WG_MAXA][WG_MAXA];
        wg_tile_in(L, G, n, ty, tx, cb, e0, e1, v, NULL, NULL);
        /* V[(ij*NT + t)*Kp + cb*L] as g*q*NT*Kp + (ij - e0)*NT*Kp + ...: each group's
         * stores within its own q*NT*Kp (the parallel pass's stride) */
        kn_kx *t = kt_mad(L, kt_plus(L, ty, n * G->th), G->tw, tx);
        int vv = kl_decl(
            L, KN_I64, kt_mad(L, g, q * es, kt_mad(L, t, G->kp, kx_mul(L, cb, kx_int(L, lanes)))));
        for (int ij = e0; ij < e1; ij++)
            kl_store(L, G->V, kt_plus(L, kx_var(L, vv), (ij - e0) * es),
                     kx_var(L, v[ij / a][ij % a]));
        kl_end_n(L, 4);
    }
    kl_end(L);
}

/* Y = AT M A for `lanes` output channels from co0 of tile (ty, tx) of batch n, plus the
 * bias, stored as vectors into row ty of the scratch S ([TH][m*m][L]), then into y one
 * element at a time through the epilogue (a loop, so the code stays one store). */
static void wg_out_tile(kn_lower *L, const wg_geom *G, int64_t n, kn_kx *ty, kn_kx *tx, kn_kx *co0,
                        int lanes, kn_kx *tl, const wg_chunks *C, kn_kx *mco) {
    const wg_mats *W = &G->W;
    const kn_contract *d = G->d;
    int a = W->a, m = W->m;
    /* M[ij][t][co] of the three passes, or Mt[ij][tl][co - block's first] of the chunk
     * (C; mco: the column in Mt, co0 where Mt holds every channel) */
    kn_kx *t = C ? tl : kt_mad(L, kt_plus(L, ty, n * G->th), G->tw, tx);
    kn_kbuf *M = C ? C->Mt : G->M, *S = C ? C->St : G->S;
    int64_t rows = C ? C->tc : G->nt, width = C ? C->cob : G->co;
    int vm = kl_decl(L, KN_I64, kt_mad(L, t, width, mco ? mco : co0));
    kn_kx *in[WG_MAXA][WG_MAXA];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            kn_kx *idx = kt_plus(L, kx_var(L, vm), (i * a + j) * rows * width);
            in[i][j] =
                kx_var(L, kl_decl_vec(L, KN_F32, lanes,
                                      lanes > 1 ? kx_vload(L, M, idx, lanes) : kx_load(L, M, idx)));
        }
    int y[WG_MAXA][WG_MAXA];
    wg_sandwich(L, m, a, W->at, lanes, in, y);
    kn_kx *bias = NULL;
    if (d->bias)
        bias = kx_var(L, kl_decl_vec(L, KN_F32, lanes,
                                     lanes > 1 ? kx_vload(L, d->bias, co0, lanes)
                                               : kx_load(L, d->bias, co0)));
    int vs = kl_decl(L, KN_I64,
                     C || G->s_thread ? kx_int(L, 0) : kx_mul(L, ty, kx_int(L, m * m * G->lanes)));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            kn_kx *v = kx_var(L, y[i][j]);
            kl_store(L, S, kt_plus(L, kx_var(L, vs), (i * m + j) * lanes),
                     bias ? kx_add(L, v, bias) : v);
        }
    /* lanes innermost: LLVM unrolls them and stores rows of m outputs as vectors; with
     * the lanes outermost it unrolled i, j into m*m gathers and scatters (compile time) */
    int vi = kl_for(L, m), vj = kl_for(L, m), vl = kl_for(L, lanes);
    kn_kx *oy = kt_mad(L, ty, m, kx_var(L, vi)), *ox = kt_mad(L, tx, m, kx_var(L, vj));
    /* outputs past y's last row or column (a partial tile) are not stored */
    kn_kx *cond = NULL;
    if (G->oh % m) cond = kx_bin(L, KX_LT, oy, kx_int(L, G->oh));
    if (G->ow % m) {
        kn_kx *c2 = kx_bin(L, KX_LT, ox, kx_int(L, G->ow));
        cond = cond ? kx_bin(L, KX_LAND, cond, c2) : c2;
    }
    if (cond) kl_if(L, cond);
    kn_kx *val = kx_load(
        L, S,
        kx_add(L, kx_var(L, vs),
               kt_mad(L, kt_mad(L, kx_var(L, vi), m, kx_var(L, vj)), lanes, kx_var(L, vl))));
    kn_kx *co = kx_add(L, co0, kx_var(L, vl));
    if (d->epi) {
        kn_kx *coord[4] = {kx_int(L, n), co, oy, ox}, *opnd[KN_EPI_MAX] = {0};
        kt_epi_operands(L, d, coord, 1, opnd);
        val = kl_epilogue(L, d->epi, val, opnd);
    }
    kl_store(L, d->y, kt_mad(L, kt_mad(L, kt_plus(L, co, n * G->co), G->oh, oy), G->ow, ox), val);
    if (cond) kl_end(L);
    kl_end_n(L, 3);
}

/* The output transforms in programs for several threads (three passes): one task a thread
 * over its share of the tiles (wg_thread_tiles), S per thread, instead of the rows of tiles
 * in the tasks the parallel pass chose. Over the 7 tile rows of ResNet's 28x28 F(4x4) and
 * 14x14 F(2x2) layers it chose 7 tasks, and two threads ran 4 and 3 rows (the rows' tiles
 * shared S, so they could not be split with them); now 25 and 24 tiles. Intel Xeon VM, 2
 * threads, loop times from KILN_POOL_TRACE, 6 pairs alternated with main's binary:
 * ResNet-50's layer3 output transforms 0.80-0.92x main's time, layer2's 0.90-1.04x;
 * ResNet-18's 0.78-0.91x. Each output is computed as before (the same bits). */
static bool wg_output_tiles(kn_lower *L) {
    return L->p->threads > 1 && L->target && L->target->kind == KN_TARGET_CPU;
}

/* Opens a parallel loop of one task a thread (KN_LOOP_WHOLE) and, inside it, a loop over
 * that thread's tiles: [h*NT1 / th, (h+1)*NT1 / th) of the NT1 = TH*TW tiles of a batch
 * (row-major) on thread h. Returns the tile's variable; two loops to close. The parallel
 * pass gives a loop over the tiles as many tasks as its work asks (7 of 7 tiles over 49),
 * whose halves are then uneven (28 and 21 tiles). */
static int wg_thread_tiles(kn_lower *L, const wg_geom *G) {
    int64_t th = L->p->threads, nt1 = G->th * G->tw;
    int vh = kl_for(L, th);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
    kn_kx *h = kx_var(L, vh);
    int vlo = kl_decl(L, KN_I64, kx_bin(L, KX_DIV, kx_mul(L, h, kx_int(L, nt1)), kx_int(L, th)));
    kn_kx *hi = kx_bin(L, KX_DIV, kt_mad(L, h, nt1, kx_int(L, nt1)), kx_int(L, th));
    int vt = kl_for_x(L, kx_sub(L, hi, kx_var(L, vlo)));
    return kl_decl(L, KN_I64, kx_add(L, kx_var(L, vlo), kx_var(L, vt)));
}

static void wg_output(kn_lower *L, const wg_geom *G, int64_t n) {
    int64_t full = G->co / G->lanes, tail = G->co % G->lanes;
    int vty, vtx;
    if (G->s_thread) {
        int vt = wg_thread_tiles(L, G);
        kn_kx *t = kx_var(L, vt);
        vty = kl_decl(L, KN_I64, kx_bin(L, KX_DIV, t, kx_int(L, G->tw)));
        vtx = kl_decl(L, KN_I64, kx_bin(L, KX_MOD, t, kx_int(L, G->tw)));
    } else {
        vty = kl_for(L, G->th);
        mark_parallel(L);
        vtx = kl_for(L, G->tw);
    }
    kn_kx *ty = kx_var(L, vty), *tx = kx_var(L, vtx);
    if (full) {
        int vc = kl_for(L, full);
        wg_out_tile(L, G, n, ty, tx, kx_mul(L, kx_var(L, vc), kx_int(L, G->lanes)), G->lanes, NULL,
                    NULL, NULL);
        kl_end(L);
    }
    if (tail) {
        int vc = kl_for(L, tail);
        wg_out_tile(L, G, n, ty, tx, kt_plus(L, kx_var(L, vc), full * G->lanes), 1, NULL, NULL,
                    NULL);
        kl_end(L);
    }
    kl_end_n(L, 2);
}

/* ---- one parallel loop over chunks of tiles, in per-thread scratch ----
 *
 * Where the Us together fit in the L2 (ResNet's 56x56 layers, SqueezeNet's), or a
 * schedule file's wchunk > 1 asks for it with Us up to WG_BIG_U times the L2 (ResNet's
 * 28x28 and 14x14 layers; the default there before branch conv3), the input transform, the
 * products and the output transform run in one parallel loop over chunks of consecutive
 * tiles (row-major: a chunk is a run of tile rows or part of one), each chunk through
 * the per-thread scratches Vt ([a*a][TC][Kp]), Mt ([a*a][TC][Co]) and St ([m*m][L]) of
 * the thread running it (kl_scratch_thread): nothing a task writes is read by another
 * thread, and a thread reuses the same lines for every chunk. TC = the biggest chunk's
 * tiles; chunks hold T or T + 1 tiles (the first r of them T + 1), sized so that a
 * chunk's V and M take at most a quarter of the L2 (WG_CHUNK_L2) or 256 KB (WG_CHUNK_MAX)
 * and their count is
 * even. Each tile's arithmetic is the three-pass
 * form's (below), so the outputs are the same bits.
 *
 * With wchunk, Us bigger than the L2 (ResNet's 28x28 and 14x14: 2.4-4.2 MB) are read once per
 * chunk, each panel of a U (Kp x the tile's columns) from the L2 or the L3 for the chunk's rows of
 * tiles: with ResNet-18's small chunks (7 tiles, V + M a quarter of the L2) that took 4-14% less
 * CPU time at one thread than the three passes on the AMD EPYC VM (and 1.5-1.8x more on the Intel
 * Xeon VM, wg_big_chunked), which read each U once but write V and M (0.9 MB each at 28x28) to the
 * arena and read them back (docs/ benchmarks.md "Chunked Winograd over big Us"). Past WG_BIG_U
 * times the L2 (the 7x7 layers' 16 MB of 512 -> 512) the chunks' repeated reads of U cost 13-60%
 * more and the three passes stay. A schedule file's pad=1 moves the padded copy into the chunk
 * loop: each chunk pads the rows its tiles read (rows ty0*m .. ty1*m + a) into a
 * per-thread Pt and transforms from there, and the arena's P goes. Measured on ResNet-18
 * at one thread it took 5-12% more CPU time a Winograd kernel (a chunk of one or two
 * tile rows pads (m + 2) / m of them, and the pad loop runs per chunk) for 0.4-2.4 MB
 * less written across cores a run at two threads, and the two threads' Pt made the
 * arena 0.3 MB bigger than the P they replace: kept for schedule files, not the
 * default. A schedule file's wcob splits each chunk's products and output
 * transforms into blocks of wcob output channels (Mt [a*a][TC][wcob]), the chunk's V
 * kept for all of them, so that more tiles fit a chunk (V a quarter of the L2, M an
 * eighth: WG_BIG_V, WG_BIG_M, where wchunk does not say): every U still read once per
 * chunk. On ResNet-18 every block shape tried took 5-30% more CPU time than the three
 * passes at 28x28 and 14x14 (where whole chunks took less), so the default leaves it
 * off. */
enum { WG_CHUNK_L2 = 4, WG_CHUNK_MAX = 256 * 1024, WG_BIG_U = 8, WG_BIG_V = 4, WG_BIG_M = 8 };

static void wg_fill(const void *ctx, const kt_packing *P, float *dst);
static bool wg_chunked(kn_lower *L, const wg_geom *G);

static void wg_plan_chunks(kn_lower *L, const wg_geom *G, const kn_sched *ov, wg_chunks *C) {
    int a = G->W.a;
    int64_t ntb = G->th * G->tw;
    const kn_target *tg = L->target;
    int64_t l2 = kn_target_l2(tg, 1024 * 1024);
    int64_t pt = (int64_t)a * a * (G->kp + G->co) * 4; /* V and M bytes of a tile */
    /* a chunk's V and M: a quarter of the L2, at most WG_CHUNK_MAX. On the Intel Xeon VM
     * (2 MB L2, read by "native") a quarter of it (ResNet's 56x56 3x3 layers in chunks of 25
     * tiles instead of 14) took 5-15% more CPU time a kernel at one thread than 256 KB
     * (docs/benchmarks.md "The host's caches") */
    int64_t budget = l2 / WG_CHUNK_L2 < WG_CHUNK_MAX ? l2 / WG_CHUNK_L2 : WG_CHUNK_MAX;
    int64_t tmax = budget / pt;
    C->cob = G->co;
    if (ov && ov->wcob > 0) { /* blocks of output channels: V in the budget, M a block */
        int64_t kb = kt_batched_kb(L, 1, G->kp, G->co, ov);
        tmax = l2 / WG_BIG_V / ((int64_t)a * a * G->kp * 4);
        if (ov && ov->wchunk > 1) tmax = ov->wchunk;
        if (tmax < 1) tmax = 1;
        int64_t t = tmax < ntb ? tmax : ntb;
        int64_t cob = ov->wcob > 1 ? ov->wcob : l2 / WG_BIG_M / ((int64_t)a * a * t * 4);
        cob = kb > 0 ? cob / kb * kb : G->co;
        C->cob = cob < kb ? kb : cob > G->co ? G->co : cob;
    }
    if (ov && ov->wchunk > 1) tmax = ov->wchunk;
    if (tmax < 1) tmax = 1;
    int64_t nch = (ntb + tmax - 1) / tmax;
    /* an even count: at two threads each takes as many chunks, the first half of the tiles
     * (of the rows, where a pooling after it splits into bands) */
    if (nch % 2 && nch < ntb) nch++;
    C->nch = nch;
    C->T = ntb / nch;
    C->r = ntb % nch;
    C->tc = C->T + (C->r ? 1 : 0);
}

/* Whether every U together fits in the L2 (1 MB when the target does not say), as
 * kt_batched_const's rows-outermost products. */
static bool wg_chunked(kn_lower *L, const wg_geom *G) {
    const kn_target *tg = L->target;
    int64_t l2 = kn_target_l2(tg, 1024 * 1024);
    double ub = (double)G->W.a * G->W.a * (double)G->kp * (double)G->co * 4;
    return tg && tg->kind == KN_TARGET_CPU && ub <= (double)l2;
}

/* Whether the chunked form applies: where every U fits in the L2, or a schedule file
 * asks for it (wchunk=N > 1, with Us up to WG_BIG_U times the L2: as wgbig's default
 * was) or for blocks of output channels (wcob); bigger Us keep the three passes (split by
 * transform position, each U read once). Measured on an Intel Xeon VM (2 MB L2, 48 KB
 * L1d; CPU time a kernel, one thread, ResNet-18): the chunked form over Us past the L2
 * took 1.31-1.39 ms at 28x28 (F(4x4), U 2.4 MB) against the three passes' 0.86-0.89, and
 * 2.13-2.15 ms at 14x14 (F(2x2), 4.2 MB) against 1.17-1.22: each chunk reads every U
 * again from the third level, which is slow there; on the AMD EPYC VM wgbig had measured
 * the chunks 4-14% faster (docs/benchmarks.md "3x3 convolutions on the Intel Xeon"). Where
 * the Us fit the L2 (56x56) the chunks stay: 0.85-1.05 ms against 1.16-1.54. */
static bool wg_big_chunked(kn_lower *L, const wg_geom *G, const kn_sched *ov) {
    const kn_target *tg = L->target;
    if (!tg || tg->kind != KN_TARGET_CPU) return false;
    if (wg_chunked(L, G)) return true;
    if (ov && ov->wcob > 0) return kt_batched_kb(L, 1, G->kp, G->co, ov) > 0;
    if (!(ov && ov->wchunk > 1)) return false;
    int64_t l2 = kn_target_l2(tg, 1024 * 1024);
    double ub = (double)G->W.a * G->W.a * (double)G->kp * (double)G->co * 4;
    return ub <= (double)WG_BIG_U * (double)l2;
}

/* The input transform of tile (ty, tx) of batch n into row tl of the chunk scratch Vt:
 * Vt[(ij*TC + tl)*Kp + cb*L] = (BT d B)[i][j] for every channel block cb. */
static void wg_input_tile(kn_lower *L, const wg_geom *G, const wg_chunks *C, int64_t n, kn_kx *ty,
                          kn_kx *tx, kn_kx *tl) {
    int a = G->W.a, lanes = G->lanes;
    int vcb = kl_for(L, G->cb);
    kn_kx *cb = kx_var(L, vcb);
    int v[WG_MAXA][WG_MAXA];
    wg_tile_in(L, G, n, ty, tx, cb, 0, a * a, v, C->Pt, C->prow0);
    int vv = kl_decl(L, KN_I64, kt_mad(L, tl, G->kp, kx_mul(L, cb, kx_int(L, lanes))));
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++)
            kl_store(L, C->Vt, kt_plus(L, kx_var(L, vv), (i * a + j) * C->tc * G->kp),
                     kx_var(L, v[i][j]));
    kl_end(L);
}

/* One chunk's products: Mt[ij] (m x Co) = Vt[ij] (m x Kp) * U[ij], for the m tiles of a
 * chunk (T or T + 1). */
static bool wg_chunk_products(kn_lower *L, const wg_geom *G, wg_chunks *C, int64_t m,
                              const kn_sched *ov, kn_sched *out) {
    int a = G->W.a;
    return kt_batched_rows(L, C->Vt, C->Mt, a * a, m, C->tc, G->kp, G->co, wg_fill, G, ov, &C->U,
                           out);
}

/* The output transforms of the chunk's vn tiles from tile vs, channels co0 .. co0 + nc:
 * with co0, of a block whose Mt holds only those channels (column co - co0); without
 * (NULL), of all channels. */
static void wg_chunk_outs(kn_lower *L, const wg_geom *G, const wg_chunks *C, int64_t n, int vs,
                          int vn, kn_kx *co0, int64_t nc) {
    int64_t full = nc / G->lanes, tail = nc % G->lanes;
    int vt = kl_for_x(L, kx_var(L, vn));
    kn_kx *tl = kx_var(L, vt), *t = kx_add(L, kx_var(L, vs), tl);
    int vty = kl_decl(L, KN_I64, kx_bin(L, KX_DIV, t, kx_int(L, G->tw)));
    int vtx = kl_decl(L, KN_I64, kx_bin(L, KX_MOD, t, kx_int(L, G->tw)));
    kn_kx *ty = kx_var(L, vty), *tx = kx_var(L, vtx);
    for (int part = 0; part < 2; part++) { /* whole vectors, then the channels left */
        int64_t count = part ? tail : full;
        if (!count) continue;
        int vco = kl_for(L, count);
        kn_kx *mco = part ? kt_plus(L, kx_var(L, vco), full * G->lanes)
                          : kx_mul(L, kx_var(L, vco), kx_int(L, G->lanes));
        wg_out_tile(L, G, n, ty, tx, co0 ? kx_add(L, co0, mco) : mco, part ? 1 : G->lanes, tl, C,
                    co0 ? mco : NULL);
        kl_end(L);
    }
    kl_end(L);
}

/* One block of nc output channels from co0 (Mt's columns 0 .. nc) of a chunk whose tiles
 * are vn from vs: the products for those columns (instances for T + 1 and T tiles where
 * big), then their output transforms. blk0: co0 in the product tile's column blocks. */
static bool wg_chunk_block(kn_lower *L, const wg_geom *G, wg_chunks *C, int64_t n, int vs, int vn,
                           kn_kx *big, kn_kx *co0, kn_kx *blk0, int64_t nc, const kn_sched *ov,
                           kn_sched *out) {
    int a = G->W.a;
    for (int part = C->r ? 0 : 1; part < 2; part++) {
        if (C->r && part == 0) kl_if(L, big);
        if (C->r && part == 1) kl_else(L);
        if (!kt_batched_cols(L, C->Vt, C->Mt, a * a, C->T + (part == 0), C->tc, G->kp, G->co, blk0,
                             nc, C->cob, wg_fill, G, ov, &C->U, out))
            return false;
    }
    if (C->r) kl_end(L);
    wg_chunk_outs(L, G, C, n, vs, vn, co0, nc);
    return true;
}

/* Batch n's tiles, chunk by chunk (the parallel loop), after its padded copy. */
static bool wg_chunked_batch(kn_lower *L, const wg_geom *G, wg_chunks *C, int64_t n,
                             const kn_sched *ov, kn_sched *out) {
    int vc = kl_for(L, C->nch);
    L->owner[L->depth - 1]->annot |= KN_LOOP_PARALLEL | KN_LOOP_WHOLE;
    kn_kx *c = kx_var(L, vc);
    /* the chunk's first tile and its tiles: c*T + min(c, r), T + (c < r) */
    kn_kx *big = kx_bin(L, KX_LT, c, kx_int(L, C->r));
    int vs = kl_decl(
        L, KN_I64, kx_add(L, kx_mul(L, c, kx_int(L, C->T)), kx_bin(L, KX_MIN, c, kx_int(L, C->r))));
    int vn = kl_decl(L, KN_I64,
                     C->r ? kx_add(L, kx_int(L, C->T), kx_cast(L, KN_I64, big)) : kx_int(L, C->T));
    /* pad=1: the padded rows the chunk's tiles read, from the first one's top, into Pt:
     * rows ty0*m .. ty1*m + a of P (ty0, ty1: its first and last tile's rows) */
    if (C->Pt) {
        int m = G->W.m, a = G->W.a;
        kn_kx *ty0 = kx_bin(L, KX_DIV, kx_var(L, vs), kx_int(L, G->tw));
        kn_kx *ty1 = kx_bin(L, KX_DIV, kt_plus(L, kx_add(L, kx_var(L, vs), kx_var(L, vn)), -1),
                            kx_int(L, G->tw));
        int vr0 = kl_decl(L, KN_I64, kx_mul(L, ty0, kx_int(L, m)));
        int vnr =
            kl_decl(L, KN_I64,
                    kt_mad(L, kx_sub(L, ty1, kx_bin(L, KX_DIV, kx_var(L, vs), kx_int(L, G->tw))), m,
                           kx_int(L, a)));
        int vr = kl_for_x(L, kx_var(L, vnr));
        int vrow = kl_decl(L, KN_I64, kx_add(L, kx_var(L, vr0), kx_var(L, vr)));
        wg_pad_row(L, G, n, kx_var(L, vrow), C->Pt,
                   kx_mul(L, kx_var(L, vr), kx_int(L, G->cb * G->wp * G->lanes)));
        kl_end(L);
        C->prow0 = kx_var(L, vr0);
    }
    /* input transforms */
    {
        int vt = kl_for_x(L, kx_var(L, vn));
        kn_kx *tl = kx_var(L, vt), *t = kx_add(L, kx_var(L, vs), tl);
        int vty = kl_decl(L, KN_I64, kx_bin(L, KX_DIV, t, kx_int(L, G->tw)));
        int vtx = kl_decl(L, KN_I64, kx_bin(L, KX_MOD, t, kx_int(L, G->tw)));
        wg_input_tile(L, G, C, n, kx_var(L, vty), kx_var(L, vtx), tl);
        kl_end(L);
    }
    if (C->cob < G->co) { /* big Us: block by block of output channels */
        int64_t kb = kt_batched_kb(L, C->T, G->kp, G->co, ov), nfull = G->co / C->cob;
        int64_t rest = G->co % C->cob;
        KN_ASSERT(kb > 0 && C->cob % kb == 0);
        if (nfull) {
            int vk = kl_for(L, nfull);
            kn_kx *k = kx_var(L, vk);
            if (!wg_chunk_block(L, G, C, n, vs, vn, big, kx_mul(L, k, kx_int(L, C->cob)),
                                kx_mul(L, k, kx_int(L, C->cob / kb)), C->cob, ov, out))
                return false;
            kl_end(L);
        }
        if (rest && !wg_chunk_block(L, G, C, n, vs, vn, big, kx_int(L, nfull * C->cob),
                                    kx_int(L, nfull * C->cob / kb), rest, ov, out))
            return false;
        kl_end(L);
        return true;
    }
    /* products: one instance per chunk size */
    if (C->r) {
        kl_if(L, big);
        if (!wg_chunk_products(L, G, C, C->T + 1, ov, out)) return false;
        kl_else(L);
    }
    if (!wg_chunk_products(L, G, C, C->T, ov, out)) return false;
    if (C->r) kl_end(L);
    wg_chunk_outs(L, G, C, n, vs, vn, NULL, G->co); /* output transforms */
    kl_end(L);
    return true;
}

/* U[ij][ci][co] = (G w[co][ci] G^T)[i][j], computed in double and rounded once to f32,
 * written straight into its packed place (kt_fill_b: B of product ij, k = Kp rows, of
 * which those past Cin stay 0). Neither a table of U nor a packed copy in between: in
 * 4 KiB pages the page faults of those copies cost more than the arithmetic (ResNet-18's
 * compile time, #16). w is f32 (wg_suits). */
static void wg_fill(const void *ctx, const kt_packing *P, float *dst) {
    const wg_geom *G = ctx;
    const wg_mats *W = &G->W;
    int a = W->a;
    const float *w = G->d->w->data->data;
    KN_ASSERT(G->d->w->dtype == KN_F32);
    for (int64_t ci = 0; ci < G->c; ci++) /* co innermost: dst written in a*a streams */
        for (int64_t co = 0; co < G->co; co++) {
            double g[3][3], gg[WG_MAXA][3];
            for (int k = 0; k < 9; k++) g[k / 3][k % 3] = w[(co * G->c + ci) * 9 + k];
            for (int i = 0; i < a; i++)
                for (int l = 0; l < 3; l++)
                    gg[i][l] = W->g[i][0] * g[0][l] + W->g[i][1] * g[1][l] + W->g[i][2] * g[2][l];
            float *at = dst + kt_packed_at(P, 0, ci, co);
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++)
                    at[(i * a + j) * P->per] =
                        (float)(gg[i][0] * W->g[j][0] + gg[i][1] * W->g[j][1] +
                                gg[i][2] * W->g[j][2]);
        }
}

/* Whether d suits the pass on this target (see the file's comment); m the tile. */
static bool wg_suits(const kn_contract *d, int lanes, int m) {
    if (d->kind != KN_CONTRACT_CONV || d->nsp != 2 || d->group != 1 || d->kh != 3 || d->kw != 3 ||
        d->sh != 1 || d->sw != 1 || d->dh != 1 || d->dw != 1 || d->x->dtype != KN_F32 ||
        d->y->dtype != KN_F32 || !kt_f32_const(d->w) || d->w->numel != d->m * d->c * 9 ||
        (d->bias && (!kt_f32_const(d->bias) || d->bias->numel != d->m)) || !kt_operands_ok(d) ||
        !kn_contract_nchw(d) || lanes < 4)
        return false;
    if (d->n > WG_MAX_BATCH || d->c < WG_MIN_CIN || d->m < WG_MIN_COUT || d->ph > 2 || d->pw > 2 ||
        d->oh < 1 || d->ow < 1)
        return false;
    return m == 2 || m == 4;
}

bool kn_winograd_suits(const kn_contract *d, const kn_target *t) {
    return t && t->kind == KN_TARGET_CPU && wg_suits(d, t->vector_bits / 32, 2);
}

static int64_t wg_tiles(const kn_contract *d, int m) {
    return ((d->oh + m - 1) / m) * ((d->ow + m - 1) / m);
}

/* Whether d keeps the direct convolution over F(2x2) at small planes (WG_DIRECT_TILES
 * tiles or fewer: 7x7, 8x8) whose U (16/9 of the weights) is bigger than the L2 (1 MB where
 * the target does not say), where the tile pass gives it span tiles (passes/tile.h
 * kt_conv_span_rows: 13 pixels a tile at 7x7, the next block's weights prefetched).
 * There each product streams its U from beyond the L2 for 16 rows of tiles, so F(2x2)
 * reads 16/9 of the weights the direct tiles read. ResNet-50's layer4 (512 -> 512, 7x7,
 * 9.4 MB of weights, U 16.7 MB) on the Intel Xeon VM, CPU time a kernel in the whole
 * model (one thread, 5 rounds, docs/benchmarks.md "ResNet-50's layer4"): direct 2.14-3.22
 * ms (medians 2.41, 2.42) against F(2x2)'s 2.71-2.93 (2.79, 2.80); alone in a loop, its
 * weights warm in the third level, F(2x2) stays faster (1.26-1.31 ms against 1.59-1.62),
 * and a later set at lower load had F(2x2) 3-10% faster in the model too; ResNet-18's
 * three such layers, direct 2.12-2.51 ms against F(2x2)'s 2.51-2.83 in the same minutes.
 * Not where the target's vectors run in parts on narrower units (kn_target_fp_split): its
 * multiply-adds cost twice as much against the same bytes, and F(2x2)'s 2.25 times fewer
 * of them outweigh its 16/9 of the weights read. On the AMD EPYC VM (Zen 4, one 512-bit
 * FMA a cycle, 1 MB L2), CPU time a kernel in the whole model (one thread,
 * docs/benchmarks.md "ResNet-50 and SqueezeNet on Zen 4"): ResNet-50's layer4 3x3s
 * direct 2.10-2.14 ms against F(2x2)'s 1.62-1.72, ResNet-18's three 2.21-2.51 against
 * 1.59-1.65. */
static bool wg_direct_streams(kn_lower *L, const kn_contract *d) {
    const kn_target *tg = L->target;
    if (kn_target_fp_split(tg)) return false;
    int64_t l2 = kn_target_l2(tg, 1024 * 1024);
    double ub = 16.0 * (double)d->c * (double)d->m * 4;
    return wg_tiles(d, 2) <= WG_DIRECT_TILES && ub > (double)l2 && kt_conv_span_rows(L, d) > 0;
}

/* The tile size m for d: the schedule file's (2 or 4), else F(4x4) where it makes
 * WG_F4_TILES tiles or more, else F(2x2) where that makes WG_MIN_TILES and Cin * Cout is
 * WG_MIN_CC or more, else 0. Measured again at small sizes (CPU time a kernel, one
 * thread, docs/benchmarks.md "Chunked Winograd over big Us"): on tests/winograd the
 * direct convolution took 4-7% less than F(2x2) where Cin * Cout is 306-399 (17 -> 18,
 * 16 -> 24, 19 -> 21; 20-42 tiles), F(2x2) 10-18% less at 1,024 (32 -> 32, 35 tiles),
 * so the channels' product sets F(2x2)'s threshold; F(4x4) over 132 tiles of 16 -> 24
 * (384) took 34% less than the direct convolution, F(2x2) 20%; at 7x7 (ResNet's
 * 512 -> 512, 16 tiles) F(2x2) took 15-19% less than the direct convolution and F(4x4)
 * (4 tiles) about as much as it; at 13x13 (SqueezeNet's 64 -> 256, 48 -> 192) F(2x2)
 * 5-13% less than F(4x4) and 30-35% less than the direct one. Earlier, per conv
 * of ResNet-18 (CPU time against the direct conv): F(4x4) 0.42-0.53 at 56x56 and
 * 0.35-0.41 at 28x28 against F(2x2)'s 0.66-0.77 and 0.60-0.63; at 14x14 and 7x7 the two
 * are within noise (0.48-0.58 / 0.54-0.58, 0.69-0.84 / 0.68-0.75), and F(2x2) keeps the
 * weights at 16/9 instead of 4x and compiles faster (LLVM's time grows with F(4x4)'s
 * 36-vector transforms). */
static int wg_tile(kn_lower *L, const kn_contract *d, const kn_sched *ov) {
    if (ov && (ov->wino == 2 || ov->wino == 4)) return ov->wino;
    if (wg_tiles(d, 4) >= WG_F4_TILES) return 4;
    if (wg_direct_streams(L, d)) return 0;
    return wg_tiles(d, 2) >= WG_MIN_TILES && d->c * d->m >= WG_MIN_CC ? 2 : 0;
}

static bool wg_build(kn_lower *L, const kn_contract *d, int m, const kn_sched *ov, kn_sched *out) {
    wg_geom G = {.d = d, .lanes = kl_lanes(L, KN_F32)};
    wg_matrices(m, &G.W);
    G.n = d->n, G.c = d->c, G.co = d->m, G.h = d->h, G.w = d->w_, G.oh = d->oh, G.ow = d->ow;
    G.ph = d->ph, G.pw = d->pw;
    G.th = (G.oh + m - 1) / m, G.tw = (G.ow + m - 1) / m, G.nt = G.n * G.th * G.tw;
    G.cb = (G.c + G.lanes - 1) / G.lanes, G.kp = G.cb * G.lanes;
    G.hp = G.th * m + 2, G.wp = G.tw * m + 2;
    int a = G.W.a;
    if (wg_big_chunked(L, &G, ov) && !(ov && ov->wchunk == 1)) {
        wg_chunks C = {0};
        wg_plan_chunks(L, &G, ov, &C);
        bool rows = ov && ov->pad == 1; /* each chunk pads its rows (see above) */
        if (rows) {
            C.prows = ((C.tc - 1) / G.tw + 1) * m + a;
            C.Pt = kl_scratch_thread(L, KN_F32, C.prows * G.cb * G.wp * G.lanes);
        } else {
            G.P = kl_scratch(L, KN_F32, G.n * G.cb * G.hp * G.wp * G.lanes);
        }
        C.Vt = kl_scratch_thread(L, KN_F32, a * a * C.tc * G.kp);
        C.Mt = kl_scratch_thread(L, KN_F32, a * a * C.tc * C.cob);
        C.St = kl_scratch_thread(L, KN_F32, m * m * G.lanes);
        for (int64_t n = 0; n < G.n; n++) {
            if (!rows) wg_pad(L, &G, n);
            if (!wg_chunked_batch(L, &G, &C, n, ov, out)) return false;
        }
        if (rows) out->pad = 1;
        L->p->kernels[L->kidx]->rows_out = d->y;
        out->wino = m;
        out->wchunk = (int)C.tc > 1 ? (int)C.tc : 2; /* 1 would mean the three passes */
        if (C.cob < G.co) out->wcob = (int)C.cob;
        return true;
    }
    G.P = kl_scratch(L, KN_F32, G.n * G.cb * G.hp * G.wp * G.lanes);
    G.V = kl_scratch(L, KN_F32, a * a * G.nt * G.kp);
    G.M = kl_scratch(L, KN_F32, a * a * G.nt * G.co);
    G.s_thread = wg_output_tiles(L);
    G.S = G.s_thread ? kl_scratch_thread(L, KN_F32, m * m * G.lanes)
                     : kl_scratch(L, KN_F32, G.th * m * m * G.lanes);
    for (int64_t n = 0; n < G.n; n++) {
        wg_pad(L, &G, n);
        if (wg_input_by_element(L, &G, ov))
            wg_input_elems(L, &G, n);
        else
            wg_input(L, &G, n);
    }
    if (!kt_batched_const(L, G.V, G.M, a * a, G.nt, G.kp, G.co, wg_fill, &G, ov, out)) return false;
    for (int64_t n = 0; n < G.n; n++) wg_output(L, &G, n);
    out->wino = m;
    return true;
}

kn_status kn_kpass_winograd(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    if (!t || t->kind != KN_TARGET_CPU) return KN_OK;
    int *readers = kn_kprog_readers(p); /* frees weights once transformed (compile memory) */
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_contract *d = kern->contract;
        const kn_sched *ov = kn_schedule_for(p, k);
        if (!d || kern->sched.tile_rows || (ov && ov->wino == 1)) continue;
        kn_ks *old = kern->body;
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        int m = wg_tile(L, d, ov);
        kn_sched s = kern->sched;
        if (wg_suits(d, kl_lanes(L, KN_F32), m) && wg_build(L, d, m, ov, &s)) {
            kern->sched = s;
            kn_kprog_rewritten(p, readers, k, old);
        } else {
            kern->body = old;
        }
        kl_builder_destroy(L);
    }
    free(readers);
    return KN_OK;
}
