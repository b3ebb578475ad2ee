/* Patch-based inference of a CNN's first layers (MCUNetV2) on small-RAM targets.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * A CNN's first layers hold its largest activations (MobileNetV2-0.35 at 96x96: a
 * 48x48x48 expansion), and a whole-tensor plan needs each of them whole next to its
 * input. This pass runs a linear chain of those layers strip by strip instead: the
 * chain's final output is split into S bands of rows, each band computed from a Slice
 * of the chain's input by copies of the chain's nodes on just the rows it needs (the
 * receptive field, halo rows recomputed), and the bands joined by a Concat along H.
 * Only one band's intermediates exist at a time, so the plan's peak over the chain
 * falls by about S; the cost is the halo rows computed twice. Or the bands carry them
 * (a rolling buffer of rows, as TinyEngine's and MCUNetV2's patch inference discuss):
 * each link computes in a band only the rows no band before it computed, and its
 * successor reads the halo rows the band before kept (a Slice of that band's input of
 * the successor) joined to the new rows by a Concat along H. Nothing is computed twice;
 * the cost is the copies (each link's band input once, its halo rows once more).
 *
 * The chain starts at the first node reading a graph input (the stem) and continues
 * while each link is a 2-D Conv or QLinearConv (NCHW, explicit pads, every input but
 * the data one constant: weights, bias, quantization parameters, and no epilogue
 * operand), or an elementwise QuantizeLinear/DequantizeLinear with a scalar scale,
 * Relu, or Clip with constant bounds; each intermediate has the next link as its only
 * reader and is no graph output. A band's copy of a convolution gets the pads of its
 * position: the original top pad only where the band's rows reach the image's top,
 * the bottom pad where they reach its bottom, none between bands (their halo rows are
 * real data). Every output element is computed by the same arithmetic as before, so
 * results are bit-identical (integer and float alike).
 *
 * Where to start and end the banded part of the chain and how many bands: for each
 * start b, end e and S in 2..8 the pass estimates the peak of the graph's value liveness
 * (bytes of values live at each node, graph inputs and outputs excluded, as the arena plan
 * does): inside the bands, the largest band input plus band output, plus the whole final
 * output (the finished bands), the whole input of the bands (when it is no graph input)
 * and values live across; the Concat (bands and joined output); every node outside as
 * before, the links before b whole. Two things the kernels do that the graph does not
 * show are counted, as the arena plan will see them: an 8-bit convolution's copy of its
 * input in words (word_copy), and a float layer written over its input (in_place). The
 * cost of the bands is estimated in multiply-adds (COST_*): the rows each link computes
 * again, weighted by what an element costs (a QuantizeLinear's division costs a dozen
 * multiply-adds), each band's Slice and each kernel's fixed cost. The pass takes the
 * smallest peak among the candidates whose extra cost is at most RECOMPUTE_PCT (5%) of
 * the model's convolution multiply-adds, and among those within 3% of it the cheapest,
 * and rewrites the graph only when that peak is below 0.9x the unpatched one. The least
 * peak is taken over the recomputing candidates, the cheapest over both kinds: carrying
 * makes the same peak cheaper, and could band deeper for less RAM, but that measured 1%
 * more instructions on the M4 and 6% on the M55 (MobileNetV1), so it is not what the pass
 * seeks. Float bands are not carried on targets with vector float tiles. So an
 * expensive elementwise head (the input's quantization) runs once on the whole input
 * when its output fits, and the bands start after it. Only targets of kind mcu are
 * patched (RAM is their constraint; elsewhere the recomputed rows cost time for
 * nothing), and only graphs whose tensors are all PATCH_MAX_BYTES or smaller. */
#include "ir/dtype.h"
#include "ir/epilogue.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "targets/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHAIN_MAX = 64, BANDS_MAX = 8, RECOMPUTE_PCT = 5 };

/* A graph with a tensor of more bytes than this (256 MiB, beyond any microcontroller's
 * RAM) is left unbanded: below it the estimates' sums of bytes and multiply-adds stay far
 * inside int64 (fuzz_codegen found two live tensors of 4.6e18 bytes, a ConstantOfShape's,
 * overflowing the liveness sum; regressions/fuzz_codegen/ubsan-patch-live-bytes-overflow). */
#define PATCH_MAX_BYTES ((int64_t)1 << 28)

/* a + b, a - b and a * b saturating at INT64_MIN / INT64_MAX. Below PATCH_MAX_BYTES a
 * tensor's bytes and a convolution's multiply-adds per row fit, but sums over the graph
 * and chain do not have to: 64-link chains whose weights constant folding made (64 MiB
 * each, KN_FOLD_MAX_BYTES) count up to 2^63 multiply-adds, and the cost bound multiplies
 * them by 100. A saturated estimate compares as too large or too costly: no bands. */
static int64_t sadd(int64_t a, int64_t b) {
    int64_t r;
    return !__builtin_add_overflow(a, b, &r) ? r : a < 0 ? INT64_MIN : INT64_MAX;
}
static int64_t ssub(int64_t a, int64_t b) {
    int64_t r;
    return !__builtin_sub_overflow(a, b, &r) ? r : a < 0 ? INT64_MIN : INT64_MAX;
}
static int64_t smul(int64_t a, int64_t b) {
    int64_t r;
    return !__builtin_mul_overflow(a, b, &r) ? r : (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/* The cost model, in multiply-adds of a convolution (about 2.4 instructions each on the
 * Cortex-M4, int8 and float: MobileNetV1's stem, depthwise and pointwise layers measured
 * 2.3-2.6 per multiply-add with bench/fw_profile.sh). Per element of an elementwise link:
 * QuantizeLinear/DequantizeLinear divide and round (about 30 instructions an element on
 * the M4, measured), Relu and Clip a compare. A band's Slice copies its rows (about one
 * multiply-add's time per 4 bytes), and every kernel a band adds has a fixed cost (its
 * call, loop set-up and border tiles). */
enum { COST_QUANT = 12, COST_ELEM = 1, COST_SLICE_BYTES = 4, COST_KERNEL = 256 };

typedef struct link {
    kn_node *n;
    bool conv;
    int64_t k, s, d, pt, pb;     /* along H: kernel, stride, dilation, pads */
    int64_t hin, hout;           /* rows of the input and output */
    int64_t in_row, out_row;     /* bytes of one row of input / output (all of N, C, W) */
    int64_t macs_row;            /* multiply-adds per output row (0 for elementwise) */
    int64_t cost_row;            /* estimated cost per output row, in multiply-adds (see COST_*) */
    int64_t copy_row, copy_pads; /* word_copy: its scratch's bytes a row, its pad rows */
    int in_place;                /* 0, or in_place()'s kind: writes over its input */
} link;

static int64_t value_bytes(const kn_value *v) {
    int64_t n = kn_type_numel(&v->type);
    return n < 0 ? -1 : smul(n, (int64_t)kn_dtype_get(v->type.dtype)->size);
}

static bool nchw(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && v->type.rank == 4 && kn_type_static(&v->type);
}

static bool is_const(const kn_value *v) {
    return !v || v->constant;
}

/* Bytes per input row of the scratch copy of its input that the kernel of n holds, 0 for
 * none (*pads: the copy's pad rows). An 8-bit convolution of input channels a multiple
 * of 4, not grouped, stride 1, reads its input as words of 4 channels that the tile pass
 * copies it into, with the pads around it (passes/tile.c, conv_words; the M55's reduction
 * tiles take a channels-last copy of the same size): one byte per padded input value.
 * The graph's liveness does not see that scratch, but the arena holds it: it set int8
 * MobileNetV1's peak outside the stem. */
static int64_t word_copy(kn_ctx *cx, const kn_node *n, int64_t *pads) {
    *pads = 0;
    if (n->op != KN_OP_QLINEARCONV || n->nin < 4 || !nchw(n->in[0]) || !n->in[3] ||
        n->in[3]->type.rank != 4 || kn_dtype_get(n->in[0]->type.dtype)->size != 1)
        return 0;
    const kn_type *x = &n->in[0]->type;
    const kn_attr *st = kn_node_attr(n, "strides"), *pa = kn_node_attr(n, "pads");
    if (st && (st->kind != KN_ATTR_INTS || st->n != 2 || st->ints[0] != 1 || st->ints[1] != 1))
        return 0;
    if (x->dims[1] % 4 || kn_attr_int(cx, n, "group", 1) != 1) return 0;
    int64_t lr = 0;
    if (pa && pa->kind == KN_ATTR_INTS && pa->n == 4) {
        *pads = sadd(pa->ints[0], pa->ints[2]);
        lr = sadd(pa->ints[1], pa->ints[3]);
    }
    return smul(smul(x->dims[0], x->dims[1]), sadd(x->dims[3], lr));
}

/* Whether the kernel of n writes its output over its input on a microcontroller
 * (docs/firmware.md, "Layers written over their input"): a float depthwise convolution
 * with stride 1 whose output has its input's size (passes/depthwise.c, dw_plane_suits:
 * one channel's plane copied to a scratch), or a float 1x1 convolution with stride 1, as
 * many output as input channels, batch 1 (passes/tile.c, conv_bands: a band of at most
 * a quarter of the input copied). 1 for the depthwise kind, 2 for the 1x1 kind, 0 for
 * neither. The plan decides it (the input must have no later reader); this is the
 * estimate's view of it, on targets whose float tiles are scalar. */
static int in_place(kn_ctx *cx, const kn_node *n) {
    if (n->op != KN_OP_CONV || n->nin < 2 || !nchw(n->in[0]) || !nchw(n->out[0]) ||
        n->in[0]->type.dtype != KN_F32 || n->out[0]->type.dtype != KN_F32 || !n->in[1] ||
        n->in[1]->type.rank != 4)
        return 0;
    const kn_type *x = &n->in[0]->type, *y = &n->out[0]->type, *w = &n->in[1]->type;
    if (kn_type_numel(x) != kn_type_numel(y)) return 0;
    const kn_attr *ep = kn_node_attr(n, KN_ATTR_EPILOGUE);
    if (ep && ep->kind == KN_ATTR_STRINGS)
        for (int i = 0; i < ep->n; i++)
            if (strchr(ep->strings[i], '@')) return 0;
    const kn_attr *st = kn_node_attr(n, "strides");
    if (st && (st->kind != KN_ATTR_INTS || st->n != 2 || st->ints[0] != 1 || st->ints[1] != 1))
        return 0;
    int64_t group = kn_attr_int(cx, n, "group", 1);
    if (group == x->dims[1] && group == y->dims[1]) return 1;
    if (group == 1 && w->dims[2] == 1 && w->dims[3] == 1 && x->dims[0] == 1 &&
        x->dims[1] == y->dims[1])
        return 2;
    return 0;
}

/* The scratch of an in-place kernel (in_place kind k) over an input of c channels and
 * bytes bytes (batch 1): a channel's plane, or a quarter of the input. */
static int64_t in_place_scratch(int k, int64_t c, int64_t bytes) {
    return k == 1 ? bytes / c : bytes / 4;
}

/* Reads an INTS attribute of n with `want` entries into out; false if absent or not. */
static bool ints(kn_ctx *cx, const kn_node *n, const char *name, int want, int64_t *out) {
    const int64_t *v;
    int c = kn_attr_ints(cx, n, name, &v);
    if (c < 0) return false;
    if (c != want) return false;
    memcpy(out, v, (size_t)want * sizeof *out);
    return true;
}

/* Fills l for node n (input x, output y) if n may be a link of a patched chain. */
static bool make_link(kn_ctx *cx, kn_node *n, link *l) {
    memset(l, 0, sizeof *l);
    l->n = n;
    if (n->nin < 1 || n->nout != 1 || !nchw(n->in[0]) || !nchw(n->out[0])) return false;
    const kn_value *x = n->in[0], *y = n->out[0];
    if (x->type.dims[0] != y->type.dims[0] || kn_node_attr(n, "kn.layout")) return false;
    if (x->type.dims[2] < 1 || y->type.dims[2] < 1) return false; /* no rows to band */
    for (int i = 1; i < n->nin; i++)
        if (!is_const(n->in[i])) return false;
    const kn_attr *epi = kn_node_attr(n, KN_ATTR_EPILOGUE);
    if (epi && epi->kind == KN_ATTR_STRINGS)
        for (int i = 0; i < epi->n; i++)
            if (strchr(epi->strings[i], '@')) return false;
    l->hin = x->type.dims[2];
    l->hout = y->type.dims[2];
    l->in_row = value_bytes(x) / l->hin;
    l->out_row = value_bytes(y) / l->hout;
    switch (n->op) {
    case KN_OP_CONV:
    case KN_OP_QLINEARCONV: {
        const char *ap = kn_attr_str(cx, n, "auto_pad", "NOTSET");
        if (strcmp(ap, "NOTSET")) return false;
        const kn_value *w = n->in[n->op == KN_OP_CONV ? 1 : 3];
        if (!w || w->type.rank != 4 || !kn_type_static(&w->type)) return false;
        int64_t pads[4] = {0, 0, 0, 0}, st[2] = {1, 1}, dil[2] = {1, 1};
        if (kn_node_attr(n, "pads") && !ints(cx, n, "pads", 4, pads)) return false;
        if (kn_node_attr(n, "strides") && !ints(cx, n, "strides", 2, st)) return false;
        if (kn_node_attr(n, "dilations") && !ints(cx, n, "dilations", 2, dil)) return false;
        l->conv = true;
        l->k = w->type.dims[2];
        l->s = st[0];
        l->d = dil[0];
        l->pt = pads[0];
        l->pb = pads[2];
        int64_t K, span; /* the dilated kernel's rows, the padded input's (checked: the
                            attributes are the model's; rows_in and rewrite then stay inside) */
        if (l->s < 1 || l->d < 1 || l->k < 1 || l->pt < 0 || l->pb < 0 ||
            __builtin_mul_overflow(l->k - 1, l->d, &K) || __builtin_add_overflow(K, 1, &K) ||
            __builtin_add_overflow(l->hin, l->pt, &span) ||
            __builtin_add_overflow(span, l->pb, &span) || (span - K) / l->s + 1 != l->hout)
            return false;
        l->macs_row = smul(smul(smul(y->type.dims[0], y->type.dims[1]), y->type.dims[3]),
                           smul(smul(w->type.dims[1], w->type.dims[2]), w->type.dims[3]));
        l->cost_row = l->macs_row;
        l->copy_row = word_copy(cx, n, &l->copy_pads);
        l->in_place = in_place(cx, n);
        return true;
    }
    case KN_OP_QUANTIZELINEAR:
    case KN_OP_DEQUANTIZELINEAR:
        if (n->nin < 2 || kn_type_numel(&n->in[1]->type) != 1) return false;
        l->cost_row = COST_QUANT * (kn_type_numel(&y->type) / l->hout);
        return l->hin == l->hout && !kn_failed(cx);
    case KN_OP_RELU:
    case KN_OP_CLIP:
        l->cost_row = COST_ELEM * (kn_type_numel(&y->type) / l->hout);
        return l->hin == l->hout && !kn_failed(cx);
    default: return false;
    }
}

/* Input rows [*a, *b) link l needs for its output rows [a, b). */
static void rows_in(const link *l, int64_t *a, int64_t *b) {
    if (!l->conv) return;
    int64_t K = (l->k - 1) * l->d + 1, lo = *a * l->s - l->pt, hi = (*b - 1) * l->s - l->pt + K;
    *a = lo < 0 ? 0 : lo;
    *b = hi > l->hin ? l->hin : hi;
}

/* Band s of S of the final output's H rows. */
static void band(int64_t h, int S, int s, int64_t *a, int64_t *b) {
    *a = h * s / S;
    *b = h * (s + 1) / S;
}

/* The rows of a banded chain[b..e]: in band s, link i computes its output rows
 * [na, nb) from its input rows [qa, qb). Recomputing (carry false), each band computes
 * every row its successor needs, halo rows again; carrying, only rows no band before
 * computed, and its successor's input is the halo rows kept from the band before
 * (a Slice of that band's input of the successor) joined to the new rows by a Concat. */
typedef struct rows_plan {
    int64_t na[BANDS_MAX][CHAIN_MAX], nb[BANDS_MAX][CHAIN_MAX];
    int64_t qa[BANDS_MAX][CHAIN_MAX], qb[BANDS_MAX][CHAIN_MAX];
} rows_plan;

/* Fills P; false where carrying leaves a link with no new row in some band. */
static bool plan_rows(const link *ch, int b, int e, int S, bool carry, rows_plan *P) {
    int64_t done[CHAIN_MAX];
    for (int i = b; i <= e; i++) done[i] = -1;
    for (int s = 0; s < S; s++) {
        int64_t lo, hi;
        band(ch[e].hout, S, s, &lo, &hi);
        for (int i = e; i >= b; i--) {
            int64_t na = carry && done[i] > lo ? done[i] : lo, nb = hi;
            if (na >= nb) return false;
            P->na[s][i] = na;
            P->nb[s][i] = nb;
            done[i] = nb;
            lo = na;
            hi = nb;
            rows_in(&ch[i], &lo, &hi);
            P->qa[s][i] = lo;
            P->qb[s][i] = hi;
        }
    }
    return true;
}

/* Rows of link i's input (i > b) that band s takes from band s - 1: [qa, *to). */
static int64_t carried_to(const rows_plan *P, int s, int i) {
    return P->na[s][i - 1];
}

/* The estimate of a plan patched at chain[b..e] in S bands (see the file comment): peak
 * bytes, and the cost of the bands in multiply-adds (COST_*), their Slices, Concats and
 * kernels included. S = 1 is the chain unpatched (its cost, no peak). False if the plan
 * cannot carry. */
static bool estimate(const link *ch, int b, int e, int S, bool carry, int64_t across, int64_t *peak,
                     int64_t *cost) {
    rows_plan *P = malloc(sizeof *P);
    KN_ASSERT(P);
    if (!plan_rows(ch, b, e, S, carry, P)) {
        free(P);
        return false;
    }
    int64_t top = 0, c = 0, fin = value_bytes(ch[e].n->out[0]);
    int64_t kept[BANDS_MAX + 1] = {0}; /* halo bytes band s keeps for band s + 1 */
    for (int s = 1; carry && s < S; s++)
        for (int i = b + 1; i <= e; i++)
            if (carried_to(P, s, i) > P->qa[s][i])
                kept[s - 1] += (carried_to(P, s, i) - P->qa[s][i]) * ch[i].in_row;
    for (int s = 0; s < S; s++) {
        int64_t halos = kept[s] + (s ? kept[s - 1] : 0);
        for (int i = e; i >= b; i--) {
            int64_t ra = P->qa[s][i], rb = P->qb[s][i], oa = P->na[s][i], ob = P->nb[s][i];
            int64_t in = (rb - ra) * ch[i].in_row, out = (ob - oa) * ch[i].out_row;
            int64_t rest = sadd(sadd(fin, across), halos); /* live around the link */
            int64_t live = sadd(in + out, rest);
            if (ch[i].copy_row)
                live = sadd(live, smul(sadd(rb - ra, ch[i].copy_pads), ch[i].copy_row));
            if (ch[i].in_place && in == out) /* over its input, as the plan places it */
                live = sadd(in + in_place_scratch(ch[i].in_place, ch[i].n->in[0]->type.dims[1], in),
                            rest);
            if (live > top) top = live;
            c = sadd(c, sadd(smul(ob - oa, ch[i].cost_row), S > 1 ? COST_KERNEL : 0));
            if (s && i > b && carried_to(P, s, i) > ra) { /* the halo's Slice and the Concat */
                c = sadd(c, ((carried_to(P, s, i) - ra) * ch[i].in_row + in) / COST_SLICE_BYTES +
                                2 * COST_KERNEL);
                /* the Concat holds its parts (the halo and the new rows) and its output */
                if (sadd(2 * in, rest) > top) top = sadd(2 * in, rest);
            }
        }
        if (S > 1 && (P->qa[s][b] > 0 || P->qb[s][b] < ch[b].hin)) /* the band's Slice */
            c = sadd(c,
                     (P->qb[s][b] - P->qa[s][b]) * ch[b].in_row / COST_SLICE_BYTES + COST_KERNEL);
    }
    free(P);
    if (sadd(2 * fin, across) > top) top = sadd(2 * fin, across);
    *peak = top;
    *cost = c;
    return true;
}

typedef struct live_info {
    int64_t *at;   /* bytes live at each node position */
    int *first;    /* per value id: producer position, -1 */
    int *last;     /* per value id: last reader position */
    int64_t *size; /* per value id: bytes (0 for values the plan does not place) */
} live_info;

static void liveness(kn_ctx *cx, const kn_graph *g, bool inplace, live_info *L) {
    int nv = kn_graph_value_count(g), n = g->nnodes;
    L->at = calloc((size_t)n + 1, sizeof *L->at);
    L->first = malloc(((size_t)nv + 1) * sizeof *L->first);
    L->last = malloc(((size_t)nv + 1) * sizeof *L->last);
    L->size = calloc((size_t)nv + 1, sizeof *L->size);
    KN_ASSERT(L->at && L->first && L->last && L->size);
    for (int i = 0; i < nv; i++) L->first[i] = L->last[i] = -1;
    for (int p = 0; p < n; p++) {
        const kn_node *nd = g->nodes[p];
        for (int j = 0; j < nd->nout; j++) {
            const kn_value *v = nd->out[j];
            if (!v || v->id >= nv || kn_graph_is_output(g, v)) continue;
            int64_t b = v->type.kind == KN_KIND_TENSOR ? value_bytes(v) : -1;
            L->first[v->id] = L->last[v->id] = p;
            L->size[v->id] = b > 0 ? b : 0;
        }
        for (int j = 0; j < nd->nin; j++) {
            const kn_value *v = nd->in[j];
            if (v && v->id < nv && L->first[v->id] >= 0) L->last[v->id] = p;
        }
    }
    for (int i = 0; i < nv; i++)
        for (int p = L->first[i]; p >= 0 && p <= L->last[i]; p++)
            L->at[p] = sadd(L->at[p], L->size[i]);
    for (int p = 0; p < n; p++) { /* the kernels' copies of their inputs, in place */
        const kn_node *nd = g->nodes[p];
        int64_t pads, row = word_copy(cx, nd, &pads);
        if (row) L->at[p] = sadd(L->at[p], smul(sadd(nd->in[0]->type.dims[2], pads), row));
        int k = inplace ? in_place(cx, nd) : 0;
        const kn_value *x = k ? nd->in[0] : NULL, *y = k ? nd->out[0] : NULL;
        if (k && x->id < nv && y->id < nv && L->first[x->id] >= 0 && L->last[x->id] == p &&
            L->size[y->id] > 0)
            L->at[p] = sadd(L->at[p],
                            in_place_scratch(k, x->type.dims[1], L->size[x->id]) - L->size[y->id]);
    }
}

static void liveness_free(live_info *L) {
    free(L->at);
    free(L->first);
    free(L->last);
    free(L->size);
}

/* The chain from the stem: ch[0..*len). */
static int find_chain(kn_ctx *cx, kn_rw *rw, link *ch) {
    kn_graph *g = rw->g;
    int p0 = -1;
    for (int p = 0; p < g->nnodes && p0 < 0; p++) {
        kn_node *n = g->nodes[p];
        if (n->nin < 1 || !n->in[0] || !(n->in[0]->flags & KN_VALUE_INPUT)) continue;
        p0 = p;
    }
    if (p0 < 0) return 0;
    int len = 0;
    for (int p = p0; p < g->nnodes && len < CHAIN_MAX; p++) {
        kn_node *n = g->nodes[p];
        if (len && n->in[0] != ch[len - 1].n->out[0]) break;
        if (!make_link(cx, n, &ch[len])) break;
        len++;
        kn_node *next = kn_rw_only_reader(rw, n->out[0]);
        if (!next || next->id != p + 1) break;
    }
    return len;
}

/* A copy of n's attributes with pads [top, left, bottom, right] set (convolutions). */
static void set_attrs(kn_graph *g, kn_node *to, const kn_node *from, bool conv, int64_t pt,
                      int64_t pb) {
    int na = from->nattr + (conv && !kn_node_attr(from, "pads"));
    kn_attr *a = kn_arena_array(g->arena, (size_t)(na ? na : 1), sizeof *a);
    KN_ASSERT(a);
    if (from->nattr) memcpy(a, from->attrs, (size_t)from->nattr * sizeof *a);
    if (conv) {
        kn_attr *p = NULL;
        for (int i = 0; i < from->nattr; i++)
            if (!strcmp(a[i].name, "pads")) p = &a[i];
        int64_t lr[2] = {0, 0};
        if (p) {
            lr[0] = p->ints[1];
            lr[1] = p->ints[3];
        } else {
            p = &a[na - 1];
        }
        int64_t *v = kn_arena_array(g->arena, 4, sizeof *v);
        KN_ASSERT(v);
        v[0] = pt;
        v[1] = lr[0];
        v[2] = pb;
        v[3] = lr[1];
        *p = (kn_attr){.name = "pads", .kind = KN_ATTR_INTS, .n = 4, .ints = v};
    }
    to->attrs = a;
    to->nattr = na;
}

static kn_value *i64_const(kn_rw *rw, const char *like, const char *suffix, int64_t v) {
    int64_t one = 1;
    kn_tensor *t = kn_tensor_make(rw->g->arena, KN_I64, 1, &one);
    KN_ASSERT(t);
    ((int64_t *)t->data)[0] = v;
    return kn_rw_const(rw, like, suffix, t);
}

/* A Slice of rows [a, b) of v (axis 2) anchored before position at. */
static kn_value *slice_rows(kn_rw *rw, int at, kn_value *v, int64_t a, int64_t b, const char *sfx) {
    kn_type t = v->type;
    t.dims[2] = b - a;
    kn_value *in[4] = {v, i64_const(rw, v->name, "/band_start", a),
                       i64_const(rw, v->name, "/band_end", b),
                       i64_const(rw, v->name, "/band_axis", 2)};
    kn_value *o = kn_rw_value(rw, v->name, sfx, &t);
    kn_node *sl = kn_rw_node(rw, at, KN_OP_SLICE, "", 4, in, 1, &o);
    sl->opset = rw->g->opset;
    return o;
}

/* A Concat of n values along H into a new value like `like` with rows rows. */
static kn_value *concat_rows(kn_rw *rw, int at, kn_value **parts, int n, const kn_value *like,
                             int64_t rows, const char *sfx, kn_value *into) {
    kn_graph *g = rw->g;
    kn_value *o = into;
    if (!o) {
        kn_type t = like->type;
        t.dims[2] = rows;
        o = kn_rw_value(rw, like->name, sfx, &t);
    }
    kn_node *cat = kn_rw_node(rw, at, KN_OP_CONCAT, "", n, parts, 1, &o);
    kn_attr *a = kn_arena_array(g->arena, 1, sizeof *a);
    KN_ASSERT(a);
    *a = (kn_attr){.name = "axis", .kind = KN_ATTR_INT, .i = 2};
    cat->attrs = a;
    cat->nattr = 1;
    cat->opset = g->opset;
    return o;
}

/* Rewrites chain[b..e] into S bands (carrying halo rows or not) joined by a Concat
 * writing the chain's output. */
static void rewrite(kn_rw *rw, link *ch, int b, int e, int S, bool carry) {
    kn_graph *g = rw->g;
    int at = ch[b].n->id;
    kn_value *x = ch[b].n->in[0], *y = ch[e].n->out[0];
    kn_value *outs[BANDS_MAX], *halo[CHAIN_MAX] = {0};
    rows_plan *P = malloc(sizeof *P);
    KN_ASSERT(P);
    bool planned = plan_rows(ch, b, e, S, carry, P); /* as the estimate made it */
    KN_ASSERT(planned);
    for (int i = b; i <= e; i++) kn_rw_kill(rw, ch[i].n);
    for (int s = 0; s < S; s++) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "band%d", s);
        kn_value *cur = x;
        if (P->qa[s][b] > 0 || P->qb[s][b] < ch[b].hin) /* the band's rows of the input */
            cur = slice_rows(rw, at, x, P->qa[s][b], P->qb[s][b], sfx);
        for (int i = b; i <= e; i++) {
            const kn_node *n = ch[i].n;
            int64_t ia = P->qa[s][i], ib = P->qb[s][i], ra = P->na[s][i], rb = P->nb[s][i];
            if (i > b && s && carry && carried_to(P, s, i) > ia) { /* halo rows + new rows */
                kn_value *parts[2] = {halo[i], cur};
                char hs[40];
                snprintf(hs, sizeof hs, "band%d/in", s);
                cur = concat_rows(rw, at, parts, 2, n->in[0], ib - ia, hs, NULL);
            }
            if (carry && s + 1 < S && i > b && carried_to(P, s + 1, i) > P->qa[s + 1][i]) {
                char hs[40]; /* the rows band s + 1 takes from this band's input of link i */
                snprintf(hs, sizeof hs, "band%d/halo", s);
                halo[i] =
                    slice_rows(rw, at, cur, P->qa[s + 1][i] - ia, carried_to(P, s + 1, i) - ia, hs);
            }
            kn_type t = n->out[0]->type;
            t.dims[2] = rb - ra;
            kn_value *o = kn_rw_value(rw, n->out[0]->name, sfx, &t);
            kn_value **in = kn_arena_array(g->arena, (size_t)n->nin, sizeof *in);
            KN_ASSERT(in);
            memcpy(in, n->in, (size_t)n->nin * sizeof *in);
            in[0] = cur;
            char name[512];
            snprintf(name, sizeof name, "%s%s", n->name, sfx);
            kn_node *c = kn_rw_node(rw, at, n->op, name, n->nin, in, 1, &o);
            c->opset = n->opset;
            c->op_type = n->op_type;
            c->domain = n->domain;
            int64_t pt = 0, pb = 0;
            if (ch[i].conv) {
                const link *l = &ch[i];
                int64_t K = (l->k - 1) * l->d + 1;
                pt = ia - (ra * l->s - l->pt);
                pb = (rb - ra - 1) * l->s + K - pt - (ib - ia);
                if (pb < 0) pb = 0;
                KN_ASSERT(pt >= 0 && pt <= l->pt && pb <= l->pb);
                KN_ASSERT((ib - ia + pt + pb - K) / l->s + 1 == rb - ra);
            }
            set_attrs(g, c, n, ch[i].conv, pt, pb);
            cur = o;
        }
        outs[s] = cur;
    }
    free(P);
    concat_rows(rw, at, outs, S, y, 0, "", y);
}

/* The estimated peak and extra cost of patching chain[b..e] in S bands; false if the
 * candidate is not one (its end no convolution, or fewer rows than bands). */
static bool candidate(const kn_graph *g, const live_info *L, const link *ch, int b, int e, int S,
                      bool carry, int64_t *peak, int64_t *extra) {
    if (!ch[e].conv || S > ch[e].hout) return false;
    int pb = ch[b].n->id, pe = ch[e].n->id;
    int64_t rest = 0, across = 0;
    for (int p = 0; p < g->nnodes; p++)
        if ((p < pb || p > pe) && L->at[p] > rest) rest = L->at[p];
    for (int i = 0; i < kn_graph_value_count(g); i++) /* live through the chain */
        if (L->first[i] >= 0 && L->first[i] < pb && L->last[i] > pe)
            across = sadd(across, L->size[i]);
    if (ch[b].n->in[0]->producer) across = sadd(across, value_bytes(ch[b].n->in[0]));
    int64_t whole, banded, unused;
    estimate(ch, b, e, 1, false, across, &unused, &whole);
    if (!estimate(ch, b, e, S, carry, across, peak, &banded)) return false;
    if (rest > *peak) *peak = rest;
    *extra = ssub(banded, whole);
    return true;
}

kn_status kn_pass_patch(kn_ctx *cx, kn_graph *g, const kn_target *t) {
    if (!t || t->kind != KN_TARGET_MCU || g->opset < 13) return KN_OK;
    for (int i = 0; i < g->nvalues; i++) {
        const kn_value *v = g->values[i];
        int64_t n = v && v->type.kind == KN_KIND_TENSOR ? kn_type_numel(&v->type) : 0;
        if (n > PATCH_MAX_BYTES || n * (int64_t)kn_dtype_get(v->type.dtype)->size > PATCH_MAX_BYTES)
            return KN_OK;
    }
    kn_rw rw;
    if (!kn_rw_begin(&rw, cx, g)) {
        kn_rw_end(&rw);
        return KN_OK;
    }
    link ch[CHAIN_MAX];
    int len = find_chain(cx, &rw, ch);
    /* float layers are written over their inputs where the target's float tiles are
     * scalar (the M4; the M55's vector tiles read several channels at once and keep both) */
    bool inplace = t->vector_bits < 128;
    for (int i = 0; i < len && !inplace; i++) ch[i].in_place = 0;
    live_info L;
    liveness(cx, g, inplace, &L);
    int64_t base = 0;
    for (int p = 0; p < g->nnodes; p++)
        if (L.at[p] > base) base = L.at[p];
    /* the model's convolution multiply-adds: the bands may add RECOMPUTE_PCT of them */
    int64_t total = 0;
    for (int p = 0; p < g->nnodes; p++) {
        link l;
        if ((g->nodes[p]->op == KN_OP_CONV || g->nodes[p]->op == KN_OP_QLINEARCONV) &&
            make_link(cx, g->nodes[p], &l))
            total = sadd(total, smul(l.hout, l.macs_row));
    }
    /* the least peak of the candidates within the cost bound that recompute their halo
     * rows, then the cheapest candidate within 3% of it, carrying or recomputing: carrying
     * makes deep chains cheap enough to band, down to half of MobileNetV1's arena, but
     * for about 1% more instructions on the M4 and 6% on the M55 (its float Concats and
     * short bands); it is used where it makes the same peak cheaper */
    int64_t least = base, peak, extra;
    for (int b = 0; b < len; b++)
        for (int e = b; e < len; e++)
            for (int S = 2; S <= BANDS_MAX; S++)
                if (candidate(g, &L, ch, b, e, S, false, &peak, &extra) &&
                    smul(extra, 100) <= smul(total, RECOMPUTE_PCT) && peak < least)
                    least = peak;
    /* carrying float bands on vector float tiles (the M55) measured 7% more instructions
     * on MobileNetV2 for the same arena (short bands of vector tiles, float Concats) */
    bool carry_ok = inplace;
    for (int i = 0; i < len && !carry_ok; i++)
        carry_ok = ch[i].conv && ch[i].n->op == KN_OP_QLINEARCONV;
    int64_t best = base, best_cost = 0;
    int best_b = -1, best_e = -1, best_s = 0;
    bool best_carry = false;
    for (int b = 0; b < len; b++)
        for (int e = b; e < len; e++)
            for (int S = 2; S <= BANDS_MAX; S++)
                for (int cr = 0; cr < 1 + carry_ok; cr++) {
                    if (!candidate(g, &L, ch, b, e, S, cr, &peak, &extra) ||
                        smul(extra, 100) > smul(total, RECOMPUTE_PCT) ||
                        peak > sadd(least, least / 100 * 3 + least % 100 * 3 / 100)) /* 3% */
                        continue;
                    if (best_e < 0 || extra < best_cost) {
                        best_b = b;
                        best_e = e;
                        best_s = S;
                        best_carry = cr;
                        best = peak;
                        best_cost = extra;
                    }
                }
    liveness_free(&L);
    if (best_e >= 0 && smul(best, 10) < smul(base, 9))
        rewrite(&rw, ch, best_b, best_e, best_s, best_carry);
    kn_rw_end(&rw);
    return cx->status;
}
