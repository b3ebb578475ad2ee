/* Channels-last edges folded into the convolutions and pools next to them.
 * requires: shape (static shapes; other nodes are left alone); breaks: nothing (the
 * graph stays valid and runnable: the interpreter honours kn.layout).
 *
 * A model converted from TensorFlow (tf2onnx) takes NHWC input and gives NHWC output;
 * passes/transpose.c cancels the Transpose pairs inside it, but the first convolution
 * still reads Transpose(x, [0,3,1,2]) and the last result goes through
 * Transpose(y, [0,2,3,1]): each a pass over memory. This pass removes them by making the
 * Conv address the channels-last tensor itself (kn.layout, ir/ops/nn_attrs.h):
 *
 *   - input:  Conv(Transpose_{to NCHW}(x), w, b)  ->  Conv(x, w, b) {kn.layout=[1, _]},
 *             for every Conv reading that Transpose; the Transpose goes when nothing
 *             else reads it (other readers keep it);
 *   - output: Transpose_{to NHWC}(Conv(...)) where the Transpose alone reads the Conv's
 *             result  ->  Conv(...) {kn.layout=[_, 1]} writing the Transpose's value.
 *
 * Pools (MaxPool without Indices, AveragePool, LpPool and the Global ones) fold the
 * same edges, in f32/f64/f16 (and an int8 MaxPool): tf2onnx wraps them in the same pairs,
 * and a model's first or last node is often one. Their lowering walks each window once
 * per output position with the channels innermost (ir/lower/nn.c, pool_body_cl).
 *
 * Any rank >= 3 (N C spatial... <-> N spatial... C). The lowering addresses such a Conv
 * with the channel innermost and describes the strides in its kn_contract (ir/kir.h),
 * which the tile passes (CPU and OpenCL) honour. Depthwise convolutions (one input
 * channel a group; passes/depthwise.c builds its row tiles over NCHW rows only) fold in
 * f32 with constant weights: their lowering then vectorizes over the channels as the
 * pools' does (lower_dw_cl). The expanded tensors of inverted residual blocks are kept
 * channels-last too (expanded_channels_last; in 8 bits, expanded_channels_last_int for
 * the qdq pass's fixed-point QLinearConvs; on x86 VNNI ResNet's residual blocks too,
 * res_channels_last). On microcontrollers a depthwise-separable
 * network of equal widths (DS-CNN) goes channels-last from its first convolution to its
 * average pool (a zero Pad before it dropped), so every layer reads and writes one layout
 * and can write over its input (pool_tail_channels_last). Runs after fuse and chain
 * (an epilogue applies to the channels-first result, ir/ops/nn_attrs.h). Graphs with
 * subgraphs are not rewritten (passes/rewrite.h). */
#include "ir/epilogue.h"
#include "ir/ops/nn_attrs.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "ir/requant.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

/* Whether n is a Transpose between channels-first and channels-last of a static
 * tensor of rank >= 3: to the first (N,H,W,C -> N,C,H,W) when to_last is false. */
static bool channel_move(const kn_node *n, bool to_last) {
    if (n->op != KN_OP_TRANSPOSE || n->nin < 1 || !n->in[0] || !n->out[0]) return false;
    const kn_type *t = &n->in[0]->type;
    int r = t->rank;
    if (t->kind != KN_KIND_TENSOR || r < 3 || !kn_type_static(t) ||
        !kn_type_static(&n->out[0]->type))
        return false;
    const kn_attr *a = kn_node_attr(n, "perm");
    if (!a || a->kind != KN_ATTR_INTS || a->n != r) return false;
    for (int d = 0; d < r; d++) {
        int64_t want = d == 0 ? 0 : to_last ? (d == r - 1 ? 1 : d + 1) : (d == 1 ? r - 1 : d - 1);
        if (a->ints[d] != want) return false;
    }
    return true;
}

static bool is_pool(kn_op op) {
    return op == KN_OP_MAXPOOL || op == KN_OP_AVERAGEPOOL || op == KN_OP_LPPOOL ||
           op == KN_OP_GLOBALMAXPOOL || op == KN_OP_GLOBALAVERAGEPOOL || op == KN_OP_GLOBALLPPOOL;
}

/* Whether n may take a layout: a Conv or a single-output pool of static tensors; a
 * depthwise Conv only in f32 with constant weights; a pool only in f32, f64 or f16 (an f16
 * average or norm accumulates in an f32 scratch, ir/lower/nn.c) or a MaxPool of int8/uint8,
 * and without an epilogue. */
static bool foldable(const kn_node *n) {
    bool pool = is_pool(n->op);
    if ((n->op != KN_OP_CONV && !pool) || n->nout != 1 || !n->out[0] || !n->in[0] ||
        (!pool && !n->in[1]))
        return false;
    const kn_type *x = &n->in[0]->type, *y = &n->out[0]->type;
    if (!kn_type_static(x) || !kn_type_static(y) || x->rank < 3 || y->rank != x->rank) return false;
    if (pool) {
        kn_dtype t = x->dtype;
        bool i8 = n->op == KN_OP_MAXPOOL && (t == KN_I8 || t == KN_U8);
        return (t == KN_F32 || t == KN_F64 || t == KN_F16 || i8) &&
               !kn_node_attr(n, KN_ATTR_EPILOGUE);
    }
    bool xcl, ycl;
    kn_conv_layout(n, &xcl, &ycl);
    int64_t c = xcl ? x->dims[x->rank - 1] : x->dims[1];
    const kn_attr *ga = kn_node_attr(n, "group");
    int64_t group = ga && ga->kind == KN_ATTR_INT ? ga->i : 1;
    if (!(group > 1 && group == c)) return true;
    /* depthwise: the channels-last kernel of ir/lower/nn.c (lower_dw_cl) needs f32, one
     * output channel a group and constant weights (which it packs) */
    const kn_value *wt = n->in[1];
    return x->dtype == KN_F32 && wt->constant && wt->type.dtype == KN_F32 && wt->type.rank >= 1 &&
           wt->type.dims[0] == c;
}

/* Whether n's channels-last kernel loops over the channels innermost (a pool, a
 * depthwise Conv: ir/lower/nn.c): it then reads x along that loop, so a channels-first
 * x with a channels-last y would be read H*W apart (measured 3.6x slower than the
 * Transpose and the row-walk MaxPool); such a node takes a channels-last y only when
 * its x is channels-last too, and a depthwise Conv takes a channels-last x with a
 * channels-first y only where that measured faster (dw_x_alone). */
static bool channels_inner(const kn_node *n) {
    if (is_pool(n->op)) return true;
    const kn_type *x = &n->in[0]->type;
    bool xcl, ycl;
    kn_conv_layout(n, &xcl, &ycl);
    int64_t c = xcl ? x->dims[x->rank - 1] : x->dims[1];
    const kn_attr *ga = kn_node_attr(n, "group");
    int64_t group = ga && ga->kind == KN_ATTR_INT ? ga->i : 1;
    return group > 1 && group == c;
}

/* Whether depthwise Conv n (channels-first, static) gains by folding its input Transpose
 * when its result stays channels-first: lower_dw_cl (ir/lower/nn.c) then sums each output
 * position's channel row in scratch and stores it H*W apart once, which beats the
 * Transpose and passes/depthwise.c's tiles where those tiles would stage a padded copy
 * anyway: a stride above 1 (the stores are a quarter of the input or fewer) or border
 * columns over an eighth of the row (passes/depthwise.c, dw_stage_suits). A stride-1
 * Conv on wide rows keeps its Transpose (docs/decisions.md has the measurements). */
static bool dw_x_alone(const kn_node *n) {
    const kn_type *x = &n->in[0]->type, *y = &n->out[0]->type;
    const kn_type *w = &n->in[1]->type;
    int r = x->rank;
    if (r < 3 || w->rank != r) return false;
    const kn_attr *st = kn_node_attr(n, "strides"), *dl = kn_node_attr(n, "dilations");
    for (int i = 0; st && st->kind == KN_ATTR_INTS && i < st->n; i++)
        if (st->ints[i] > 1) return true;
    /* the last axis: interior columns are those whose window stays inside the input */
    int64_t ow = y->dims[r - 1], iw = x->dims[r - 1], kw = w->dims[r - 1];
    int64_t d = dl && dl->kind == KN_ATTR_INTS && dl->n == r - 2 ? dl->ints[r - 3] : 1;
    const kn_attr *pa = kn_node_attr(n, "pads");
    int64_t pw = pa && pa->kind == KN_ATTR_INTS && pa->n == 2 * (r - 2) ? pa->ints[r - 3] : 0;
    int64_t lo = pw, hi = iw + pw - (kw - 1) * d; /* stride 1: [lo, hi) */
    if (hi > ow) hi = ow;
    int64_t inner = hi > lo ? hi - lo : 0;
    return 8 * (ow - inner) > ow;
}

/* Sets n's kn.layout to [xcl, ycl] (replacing one it has). */
static void set_layout(kn_graph *g, kn_node *n, bool xcl, bool ycl) {
    int64_t *v = kn_arena_array(g->arena, 2, sizeof *v);
    KN_ASSERT(v);
    v[0] = xcl, v[1] = ycl;
    for (int k = 0; k < n->nattr; k++)
        if (!strcmp(n->attrs[k].name, KN_ATTR_LAYOUT)) {
            n->attrs[k].ints = v;
            return;
        }
    kn_attr *a = kn_arena_array(g->arena, (size_t)n->nattr + 1, sizeof *a);
    KN_ASSERT(a);
    if (n->nattr) memcpy(a, n->attrs, (size_t)n->nattr * sizeof *a);
    a[n->nattr] = (kn_attr){.name = KN_ATTR_LAYOUT, .kind = KN_ATTR_INTS, .n = 2, .ints = v};
    n->attrs = a;
    n->nattr++;
}

/* Whether n is a Conv of one group with a kh x kw window (any layout), f32, static. */
static bool conv_window(const kn_node *n, int64_t kh, int64_t kw) {
    if (n->op != KN_OP_CONV || n->nout != 1 || !n->out[0] || n->nin < 2 || !n->in[0] || !n->in[1] ||
        !foldable(n) || channels_inner(n) || n->in[0]->type.dtype != KN_F32 ||
        n->out[0]->type.dtype != KN_F32)
        return false;
    const kn_type *w = &n->in[1]->type;
    return w->rank == 4 && n->in[0]->type.rank == 4 && w->dims[2] == kh && w->dims[3] == kw;
}

/* A squeeze-and-excite after depthwise Conv d (EfficientNet's MBConv): d's output y is
 * read by a GlobalAveragePool and by t = Mul(y, s) (either order) alone, s [1,C,1,1]
 * made by a Conv f of 1x1 spatial output (the excite's second fc, its Sigmoid fused)
 * read by the Mul alone, and t read by a Conv q alone. */
typedef struct se_block {
    kn_node *pool, *m, *f, *q;
} se_block;

static bool squeeze_excite(kn_rw *rw, kn_graph *g, kn_node *d, se_block *se) {
    kn_value *y = d->out[0];
    if (kn_rw_uses(rw, y) != 2 || kn_graph_is_output(g->root, y)) return false;
    kn_node *pool = NULL, *m = NULL;
    for (int i = 0; i < rw->n0; i++) {
        kn_node *n = g->nodes[i];
        if (kn_rw_dead(rw, n) || n == d) continue;
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] == y) {
                if (n->op == KN_OP_GLOBALAVERAGEPOOL && j == 0 && !pool)
                    pool = n;
                else if (n->op == KN_OP_MUL && n->nin == 2 && n->nout == 1 && !m &&
                         n->in[1 - j] != y)
                    m = n;
                else
                    return false;
            }
    }
    if (!pool || !m || pool->nout != 1 || !foldable(pool) || kn_node_attr(m, KN_ATTR_EPILOGUE))
        return false;
    bool xcl, ycl;
    if (kn_conv_layout(pool, &xcl, &ycl)) return false;
    kn_value *s = m->in[0] == y ? m->in[1] : m->in[0], *t = m->out[0];
    const kn_type *st = &s->type, *yt = &y->type;
    kn_node *f = s->producer;
    if (!t || t->type.dtype != KN_F32 || !kn_type_static(&t->type) || t->type.rank != 4 ||
        st->kind != KN_KIND_TENSOR || st->dtype != KN_F32 || st->rank != 4 || !kn_type_static(st) ||
        st->dims[0] != yt->dims[0] || st->dims[1] != yt->dims[1] || st->dims[2] != 1 ||
        st->dims[3] != 1 || memcmp(t->type.dims, yt->dims, sizeof(int64_t) * 4))
        return false;
    if (!f || f->graph != g || kn_rw_dead(rw, f) || f->op != KN_OP_CONV || f->nout != 1 ||
        !foldable(f) || channels_inner(f) || kn_rw_only_reader(rw, s) != m)
        return false;
    kn_conv_layout(f, &xcl, &ycl);
    kn_node *q = kn_rw_only_reader(rw, t);
    if (ycl || !q) return false;
    *se = (se_block){pool, m, f, q};
    return true;
}

/* The expanded tensors of an inverted residual block (MobileNetV2's 1x1 expansion ->
 * depthwise -> 1x1 projection) kept channels-last: D a 2-D depthwise Conv whose input
 * only it reads, made by a 1x1 Conv P (on microcontrollers any Conv where Q keeps its
 * width: DS-CNN's first convolution), and whose output only a 1x1 Conv Q reads. P
 * writes channels-last, D reads and writes it, Q reads it; the block's own input and
 * output (and so the residual Add in Q's epilogue) stay as they were. Channels-last,
 * a depthwise convolution's vectors run along the channels (passes/depthwise.c
 * dw_cl), which fills every lane on 14x14 and 7x7 rows and needs no staged copy for a
 * stride, and P's channel tiles store their vectors of output channels straight into y
 * instead of transposing them (passes/tile.c).
 *
 * EfficientNet's MBConv has a squeeze-and-excite between D and Q (squeeze_excite): y is
 * read by a GlobalAveragePool and by t = Mul(y, s), and Q reads t. Then the pool reads
 * NHWC (kn.layout [1, 0]; passes/depthwise.c computes it in D's kernel), the excite's
 * last fc writes s as [1,1,1,C] (kn.layout [_, 1]: the same memory as [1,C,1,1], its
 * output being 1x1), so the Mul broadcasts along NHWC's channels (passes/sescale.c
 * builds it as vectors along them) and t is NHWC. */
/* Whether Conv n keeps its channel count (a depthwise-separable network's 1x1 layers:
 * DS-CNN's 64 -> 64). */
static bool equal_widths(const kn_node *n) {
    return n->in[0]->type.rank == 4 && n->out[0]->type.rank == 4 &&
           n->in[0]->type.dims[1] == n->out[0]->type.dims[1];
}

/* conv_window for any kernel window. */
static bool conv_window_any(const kn_node *n) {
    if (n->op != KN_OP_CONV || n->nin < 2 || !n->in[1] || n->in[1]->type.rank != 4) return false;
    return conv_window(n, n->in[1]->type.dims[2], n->in[1]->type.dims[3]);
}

/* Whether n is a constant-mode Pad whose pads are all zero (torch's export of an
 * AvgPool2d writes one): its output is its input. */
static bool zero_pad(const kn_node *n) {
    if (n->op != KN_OP_PAD || n->nin < 2 || !n->in[0] || !n->in[1] || !n->in[1]->constant ||
        !n->in[1]->constant->data || n->in[1]->type.dtype != KN_I64 || !n->out[0])
        return false;
    const kn_attr *m = kn_node_attr(n, "mode");
    if (m && (m->kind != KN_ATTR_STRING || strcmp(m->s, "constant"))) return false;
    const int64_t *v = n->in[1]->constant->data;
    for (int64_t i = 0; i < kn_type_numel(&n->in[1]->type); i++)
        if (v[i]) return false;
    return true;
}

/* On microcontrollers: a Conv q that reads channels-last and whose output only an average
 * pool reads (through a zero Pad, which goes) writes channels-last too, and the pool reads
 * it so: DS-CNN's last 1x1 layer and its pool, so that every layer of the network reads
 * and writes one layout and can write over its input (passes/tile.c conv_bands). */
static void pool_tail_channels_last(kn_rw *rw, kn_graph *g) {
    for (int i = 0; i < rw->n0; i++) {
        kn_node *q = g->nodes[i], *u, *pool;
        bool xcl, ycl, pxcl, pycl;
        if (kn_rw_dead(rw, q) || !conv_window_any(q) || !kn_conv_layout(q, &xcl, &ycl) || !xcl ||
            ycl || kn_graph_is_output(g->root, q->out[0]))
            continue;
        u = kn_rw_only_reader(rw, q->out[0]);
        if (!u) continue;
        pool = u;
        if (zero_pad(u)) {
            if (kn_graph_is_output(g->root, u->out[0])) continue;
            pool = kn_rw_only_reader(rw, u->out[0]);
        }
        if (!pool || (pool->op != KN_OP_AVERAGEPOOL && pool->op != KN_OP_GLOBALAVERAGEPOOL) ||
            pool->in[0] != u->out[0] || !foldable(pool) || kn_conv_layout(pool, &pxcl, &pycl))
            continue;
        if (u != pool) {
            pool->in[0] = q->out[0];
            kn_rw_kill(rw, u);
        }
        q->out[0]->type = kn_type_channels(&q->out[0]->type, true);
        set_layout(g, q, true, true);
        set_layout(g, pool, true, false);
        rw->changed = true;
    }
}

static void expanded_channels_last(kn_rw *rw, kn_graph *g, bool mcu) {
    for (int i = 0; i < rw->n0; i++) {
        kn_node *d = g->nodes[i];
        bool xcl, ycl, pxcl, pycl, qxcl, qycl;
        if (kn_rw_dead(rw, d) || d->op != KN_OP_CONV || !foldable(d) || !channels_inner(d) ||
            d->in[0]->type.rank != 4 || d->in[0]->type.dtype != KN_F32 ||
            kn_conv_layout(d, &xcl, &ycl))
            continue;
        kn_value *x = d->in[0], *y = d->out[0];
        kn_node *p = x->producer, *q = kn_rw_only_reader(rw, y);
        se_block se = {0};
        if (!q && squeeze_excite(rw, g, d, &se)) q = se.q;
        if (!p || p->graph != g || kn_rw_dead(rw, p) || kn_rw_only_reader(rw, x) != d || !q ||
            q->in[0] != (se.m ? se.m->out[0] : y) || !conv_window(q, 1, 1) ||
            !(conv_window(p, 1, 1) || (mcu && equal_widths(q) && conv_window_any(p))))
            continue;
        kn_conv_layout(p, &pxcl, &pycl);
        kn_conv_layout(q, &qxcl, &qycl);
        if (pycl || qxcl) continue;
        x->type = kn_type_channels(&x->type, true);
        y->type = kn_type_channels(&y->type, true);
        set_layout(g, p, pxcl, true);
        set_layout(g, d, true, true);
        set_layout(g, q, true, qycl);
        if (se.m) { /* the pool reads NHWC; the scale [1,1,1,C] (the same memory as
                       [1,C,1,1]) broadcasts along NHWC's channels; t is NHWC */
            bool fxcl, fycl;
            kn_conv_layout(se.f, &fxcl, &fycl);
            set_layout(g, se.pool, true, false);
            set_layout(g, se.f, fxcl, true);
            se.f->out[0]->type = kn_type_channels(&se.f->out[0]->type, true);
            se.m->out[0]->type = kn_type_channels(&se.m->out[0]->type, true);
        }
        rw->changed = true;
    }
}

/* Whether n is a QLinearConv with fixed-point requantization (the qdq pass's) over static
 * 4-D 8-bit tensors with constant 4-D weights: what qconv_any and res_conv both require. */
static bool qconv_fixed4(const kn_node *n) {
    if (n->op != KN_OP_QLINEARCONV || n->nout != 1 || !n->out[0] || n->nin < 8 || !n->in[0] ||
        !n->in[3] || !n->in[3]->constant || !kn_fixed_point(n))
        return false;
    const kn_type *x = &n->in[0]->type, *y = &n->out[0]->type, *w = &n->in[3]->type;
    return kn_type_static(x) && kn_type_static(y) && x->rank == 4 && y->rank == 4 && w->rank == 4 &&
           (x->dtype == KN_U8 || x->dtype == KN_I8) && (y->dtype == KN_U8 || y->dtype == KN_I8);
}

/* Whether n is a QLinearConv with fixed-point requantization (the qdq pass's), 2-D, of
 * static 8-bit tensors, constant weights; depthwise (one input and one output channel a
 * group) or 1x1 of one group with no padding and stride 1. */
static bool qconv_any(const kn_node *n, bool depthwise) {
    if (!qconv_fixed4(n)) return false;
    const kn_type *x = &n->in[0]->type, *w = &n->in[3]->type;
    const kn_attr *ga = kn_node_attr(n, "group");
    int64_t group = ga && ga->kind == KN_ATTR_INT ? ga->i : 1, c = x->dims[1];
    if (depthwise) return group == c && group > 1 && w->dims[0] == c;
    if (group != 1 || w->dims[2] != 1 || w->dims[3] != 1) return false;
    const kn_attr *st = kn_node_attr(n, "strides"), *pa = kn_node_attr(n, "pads");
    for (int i = 0; st && st->kind == KN_ATTR_INTS && i < st->n; i++)
        if (st->ints[i] != 1) return false;
    for (int i = 0; pa && pa->kind == KN_ATTR_INTS && i < pa->n; i++)
        if (pa->ints[i]) return false;
    return true;
}

/* qconv_any of a node not yet laid out. */
static bool qconv(const kn_node *n, bool depthwise) {
    return !kn_node_attr(n, KN_ATTR_LAYOUT) && qconv_any(n, depthwise);
}

/* The integer form of expanded_channels_last: an inverted residual block of fixed-point
 * QLinearConvs (the qdq pass's, from a QDQ MobileNetV2) whose 1x1 P expands the channels
 * (m > c: not a depthwise-separable pair's 1x1 -> depthwise -> 1x1 of equal widths, as
 * DS-CNN's, which stay NCHW) keeps the expanded 8-bit tensors channels-last: P's channel
 * tiles store their requantized vectors of output channels straight into y, the depthwise
 * D runs in vectors along the channels (passes/depthwise.c, dwc), and the projection Q
 * reads words of 4 consecutive channels, which NHWC holds as 4 consecutive bytes.
 * Only where the depthwise output has at most QBLOCK_MAX_PIXELS pixels: on MobileNetV2
 * (Zen 5, thread CPU per kernel, docs/quantization.md) the blocks at 7x7 and 14x14 ran
 * faster channels-last (7x7 rows fill no 16-lane vector in NCHW), while at 28x28 and above
 * the NCHW forms (pixel tiles for the 1x1s, dot-product words for the depthwise) were
 * faster by 1.1-1.4x. */
enum { QBLOCK_MAX_PIXELS = 196 }; /* 14x14 */

static void expanded_channels_last_int(kn_rw *rw, kn_graph *g) {
    for (int i = 0; i < rw->n0; i++) {
        kn_node *d = g->nodes[i];
        if (kn_rw_dead(rw, d) || !qconv(d, true)) continue;
        kn_value *x = d->in[0], *y = d->out[0];
        kn_node *p = x->producer, *q = kn_rw_only_reader(rw, y);
        if (!p || p->graph != g || kn_rw_dead(rw, p) || kn_rw_only_reader(rw, x) != d || !q ||
            q->in[0] != y || !qconv(p, false) || !qconv(q, false) ||
            p->out[0]->type.dims[1] <= p->in[0]->type.dims[1] || kn_graph_is_output(g->root, x) ||
            kn_graph_is_output(g->root, y) || y->type.dims[2] * y->type.dims[3] > QBLOCK_MAX_PIXELS)
            continue;
        x->type = kn_type_channels(&x->type, true);
        y->type = kn_type_channels(&y->type, true);
        set_layout(g, p, false, true);
        set_layout(g, d, true, true);
        set_layout(g, q, true, false);
        rw->changed = true;
    }
}

/* Whether n (live, of g) is a QLinearAdd of two 8-bit operands of its output's shape (no
 * broadcast: elementwise in any layout, both operands and the sum laid out alike). */
static bool qadd_flat(const kn_node *n) {
    if (n->op != KN_OP_QLINEARADD || n->nout != 1 || !n->out[0] || n->nin < 7 || !n->in[0] ||
        !n->in[3])
        return false;
    const kn_type *y = &n->out[0]->type;
    for (int k = 0; k < 2; k++) {
        const kn_type *t = &n->in[3 * k]->type;
        if (t->rank != y->rank || memcmp(t->dims, y->dims, sizeof(int64_t) * (size_t)y->rank))
            return false;
    }
    return true;
}

/* Whether n's one result may go NHWC as far as its type goes: a 4-D static 8-bit
 * tensor that is not a graph output. */
static bool nhwc_result(const kn_graph *g, const kn_node *n) {
    const kn_type *y = &n->out[0]->type;
    return y->rank == 4 && kn_type_static(y) && (y->dtype == KN_U8 || y->dtype == KN_I8) &&
           !kn_graph_is_output(g->root, n->out[0]);
}

/* Whether the value n writes may be NHWC on the evidence of n alone: a 4-D static 8-bit
 * result, not a graph output, of a block's projection laid out [1, 0] by
 * expanded_channels_last_int or of a QLinearAdd of the same shape. */
static bool block_out_candidate(const kn_graph *g, const kn_node *n) {
    bool xcl, ycl;
    if (n->op == KN_OP_QLINEARCONV) {
        if (!qconv_any(n, false) || !kn_conv_layout(n, &xcl, &ycl) || !xcl || ycl) return false;
    } else if (!qadd_flat(n)) {
        return false;
    }
    return nhwc_result(g, n);
}

/* Whether v's producer is a node of g marked in on (by its id, the rewrite's start
 * position). */
static bool made_on(const kn_rw *rw, const kn_graph *g, const bool *on, const kn_value *v) {
    const kn_node *p = v->producer;
    return p && p->graph == g && p->id < rw->n0 && on[p->id];
}

/* Whether r is a per-tensor DequantizeLinear to float32 whose every reader is a float32
 * GlobalAveragePool not laid out yet (ResNet's head after its last residual add): it is
 * elementwise in either layout, and the pool reads its result channels-last (ir/lower/nn.c,
 * pool_body_cl: each channel's taps in the plain nest's order, so the same sums) and
 * writes [n][c][1][1], which is the same memory as [n][1][1][c]. */
static bool dq_gap_reader(const kn_rw *rw, const kn_graph *g, const kn_node *r) {
    if (r->op != KN_OP_DEQUANTIZELINEAR || r->nin < 2 || r->nout != 1 || !r->out[0] ||
        r->out[0]->type.dtype != KN_F32 || kn_type_numel(&r->in[1]->type) != 1 ||
        (r->nin > 2 && r->in[2] && kn_type_numel(&r->in[2]->type) != 1) ||
        kn_graph_is_output(g->root, r->out[0]))
        return false;
    int n = 0;
    for (int j = 0; j < rw->n0; j++) {
        const kn_node *u = g->nodes[j];
        if (kn_rw_dead(rw, u)) continue;
        bool xcl, ycl;
        for (int k = 0; k < u->nin; k++) {
            if (u->in[k] != r->out[0]) continue;
            if (k || u->op != KN_OP_GLOBALAVERAGEPOOL || u->out[0]->type.dtype != KN_F32 ||
                !foldable(u) || kn_conv_layout(u, &xcl, &ycl))
                return false;
            n++;
        }
    }
    return n > 0;
}

/* The largest subset of the candidates marked in on (indexed by node id, the rewrite's
 * start positions) whose results can all go NHWC, laid out, and on freed: candidates are
 * dropped until none breaks the rule. A QLinearAdd's operands and a MaxPool's input must be
 * made by nodes of the set; each reader of a result must be a QLinearConv reading it as its
 * input that conv_reader accepts, or a QLinearAdd (either operand) or MaxPool in the set.
 * Then each result's type goes NHWC, a convolution of the set writes NHWC, a MaxPool of the
 * set reads and writes NHWC, and every QLinearConv reading a result reads NHWC. With head,
 * a reader may also be a DequantizeLinear into global average pools (dq_gap_reader), whose
 * result then goes NHWC and whose pools read it so. Used by block_outputs_channels_last
 * and res_channels_last (head), which differ in their candidates and the convolutions that
 * may read them. */
static void grow_channels_last(kn_rw *rw, kn_graph *g, bool *on,
                               bool (*conv_reader)(const kn_node *), bool head) {
    for (bool again = true; again;) {
        again = false;
        for (int i = 0; i < rw->n0; i++) {
            if (!on[i]) continue;
            kn_node *n = g->nodes[i];
            kn_value *y = n->out[0];
            bool ok = n->op == KN_OP_QLINEARADD
                          ? made_on(rw, g, on, n->in[0]) && made_on(rw, g, on, n->in[3])
                      : n->op == KN_OP_MAXPOOL ? made_on(rw, g, on, n->in[0])
                                               : true;
            for (int j = 0; j < rw->n0 && ok; j++) {
                kn_node *r = g->nodes[j];
                if (kn_rw_dead(rw, r)) continue;
                for (int k = 0; k < r->nin && ok; k++) {
                    if (r->in[k] != y) continue;
                    if (r->op == KN_OP_QLINEARCONV)
                        ok = k == 0 && conv_reader(r);
                    else if (head && r->op == KN_OP_DEQUANTIZELINEAR)
                        ok = k == 0 && dq_gap_reader(rw, g, r);
                    else
                        ok = (r->op == KN_OP_QLINEARADD ? k == 0 || k == 3
                              : r->op == KN_OP_MAXPOOL  ? k == 0
                                                        : false) &&
                             r->id < rw->n0 && on[r->id];
                }
            }
            if (!ok) on[i] = false, again = true;
        }
    }
    for (int i = 0; i < rw->n0; i++) {
        if (!on[i]) continue;
        kn_node *n = g->nodes[i];
        kn_value *y = n->out[0];
        bool xcl, ycl;
        y->type = kn_type_channels(&y->type, true);
        if (n->op == KN_OP_QLINEARCONV) {
            kn_conv_layout(n, &xcl, &ycl);
            set_layout(g, n, xcl, true);
        } else if (n->op == KN_OP_MAXPOOL) {
            set_layout(g, n, true, true);
        }
        for (int j = 0; j < rw->n0; j++) {
            kn_node *r = g->nodes[j];
            if (!kn_rw_dead(rw, r) && r->op == KN_OP_QLINEARCONV && r->in[0] == y) {
                kn_conv_layout(r, &xcl, &ycl);
                set_layout(g, r, true, ycl);
            } else if (head && !kn_rw_dead(rw, r) && r->op == KN_OP_DEQUANTIZELINEAR &&
                       r->in[0] == y) { /* dq_gap_reader: its result and its pools' input */
                r->out[0]->type = kn_type_channels(&r->out[0]->type, true);
                for (int u = 0; u < rw->n0; u++)
                    if (!kn_rw_dead(rw, g->nodes[u]) && g->nodes[u]->nin &&
                        g->nodes[u]->in[0] == r->out[0])
                        set_layout(g, g->nodes[u], true, false);
            }
        }
        rw->changed = true;
    }
    free(on);
}

/* Whether r is a next block's expansion that may read a block output NHWC: a 1x1
 * fixed-point QLinearConv laid out [0, 1] by expanded_channels_last_int. */
static bool expansion_reader(const kn_node *r) {
    bool xcl, ycl;
    return qconv_any(r, false) && kn_conv_layout(r, &xcl, &ycl) && !xcl && ycl;
}

/* The inverted residual blocks' outputs kept NHWC between the blocks laid out by
 * expanded_channels_last_int: a projection's result, the residual QLinearAdds of such
 * results, and so the next blocks' inputs. A value goes NHWC when its producer is a
 * candidate (block_out_candidate) and every reader takes it: the next block's expansion
 * (a 1x1 fixed-point QLinearConv laid out [0, 1], reading it as its input), or a
 * QLinearAdd whose operands and result all go NHWC. The set is the largest such
 * (candidates dropped until none breaks the rule); a chain whose end is a graph output or
 * another reader stays NCHW. The projection then stores its vectors of output channels
 * straight into y (no tile scratch, no transposing loop) and the next expansion reads
 * its input words in place (no word copy); the adds are elementwise in either layout.
 * Other 1x1 readers are left out: MobileNetV2's last 1x1 (320 -> 1280 at 7x7, NCHW out)
 * took 1.05-1.10x as long reading NHWC in place (docs/quantization.md). */
static void block_outputs_channels_last(kn_rw *rw, kn_graph *g) {
    bool *on = calloc((size_t)rw->n0 + 1, sizeof *on);
    KN_ASSERT(on);
    for (int i = 0; i < rw->n0; i++) {
        kn_node *n = g->nodes[i];
        on[i] = !kn_rw_dead(rw, n) && n->id == i && block_out_candidate(g, n);
    }
    grow_channels_last(rw, g, on, expansion_reader, false);
}

/* Whether n is a fixed-point QLinearConv of one group over static 4-D 8-bit tensors with
 * constant weights and a kernel window or a stride (ResNet's 3x3 layers, its stem and its
 * strided 1x1 downsamples; not a 1x1 of stride 1, whose NHWC forms
 * block_outputs_channels_last chooses) whose output is not laid out yet. */
static bool res_conv(const kn_node *n) {
    if (!qconv_fixed4(n)) return false;
    const kn_type *w = &n->in[3]->type;
    const kn_attr *ga = kn_node_attr(n, "group");
    if (ga && ga->kind == KN_ATTR_INT && ga->i != 1) return false;
    bool xcl, ycl;
    kn_conv_layout(n, &xcl, &ycl);
    if (ycl) return false;
    if (w->dims[2] * w->dims[3] > 1) return true;
    const kn_attr *st = kn_node_attr(n, "strides");
    for (int i = 0; st && st->kind == KN_ATTR_INTS && i < st->n; i++)
        if (st->ints[i] != 1) return true;
    return false;
}

/* Whether n is an 8-bit MaxPool (one output, static 4-D) not laid out yet. */
static bool res_pool(const kn_node *n) {
    bool xcl, ycl;
    return n->op == KN_OP_MAXPOOL && n->nout == 1 && foldable(n) && n->in[0]->type.rank == 4 &&
           !kn_conv_layout(n, &xcl, &ycl);
}

/* ResNet's residual blocks channels-last on x86 VNNI: the values made by res_conv
 * convolutions, 8-bit MaxPools and flat QLinearAdds go NHWC where every reader takes NHWC:
 * a res_conv reading it as its input, or a MaxPool or QLinearAdd whose operands and result
 * all go NHWC (a pool's channels-last kernel walks the channels innermost, so it writes
 * NHWC only from NHWC). The set is the largest such (candidates dropped until none breaks
 * the rule), as in block_outputs_channels_last, and a DequantizeLinear feeding global average
 * pools takes it too (dq_gap_reader): on ResNet-18 it runs from the stem's output to the last
 * add, whose DequantizeLinear and GlobalAveragePool read NHWC (the pool's channels then
 * consecutive: vectors of channels a pixel, where the NCHW pool gathered 16 channels 49
 * floats apart; docs/quantization.md, r18in). The dot tiles then store each
 * requantized vector of 16 output channels straight into y (passes/tile.c, conv_tile's
 * direct store) instead of transposing 4 pixels of a channel into a word; the 3x3 layers
 * read their input words from a padded NHWC copy (4 consecutive channels at a pixel are 4
 * consecutive bytes), the strided 1x1s from x in place. */
static void res_channels_last(kn_rw *rw, kn_graph *g) {
    bool *on = calloc((size_t)rw->n0 + 1, sizeof *on);
    KN_ASSERT(on);
    for (int i = 0; i < rw->n0; i++) {
        kn_node *n = g->nodes[i];
        on[i] = !kn_rw_dead(rw, n) && n->id == i && (res_conv(n) || res_pool(n) || qadd_flat(n)) &&
                nhwc_result(g, n);
    }
    grow_channels_last(rw, g, on, res_conv, true);
}

kn_status kn_pass_layout(kn_ctx *cx, kn_graph *g, const kn_target *tg) {
    kn_rw rw;
    if (!kn_rw_begin(&rw, cx, g)) {
        kn_rw_end(&rw);
        return KN_OK;
    }
    for (int i = 0; i < rw.n0; i++) {
        kn_node *t = g->nodes[i];
        if (kn_rw_dead(&rw, t)) continue;
        bool xcl, ycl;
        if (channel_move(t, false)) { /* input: every Conv or pool reading t reads t's input */
            for (int j = i + 1; j < rw.n0; j++) {
                kn_node *n = g->nodes[j];
                if (kn_rw_dead(&rw, n) || n->nin < 1 || n->in[0] != t->out[0] || !foldable(n))
                    continue;
                kn_conv_layout(n, &xcl, &ycl);
                if (xcl) continue;
                if (channels_inner(n) && n->op == KN_OP_CONV && !dw_x_alone(n)) {
                    kn_node *u = kn_rw_only_reader(&rw, n->out[0]); /* y must follow */
                    if (!u || !channel_move(u, true)) continue;
                }
                n->in[0] = t->in[0];
                set_layout(g, n, true, ycl);
                rw.changed = true;
            }
            if (kn_rw_uses(&rw, t->out[0]) == 0) kn_rw_kill(&rw, t);
        } else if (channel_move(t, true)) { /* output: the Conv or pool writes t's value */
            kn_node *n = t->in[0]->producer;
            if (!n || n->graph != g || kn_rw_dead(&rw, n) ||
                kn_rw_only_reader(&rw, t->in[0]) != t || !foldable(n))
                continue;
            kn_conv_layout(n, &xcl, &ycl);
            if (ycl || (!xcl && channels_inner(n))) continue;
            kn_value *z = t->out[0];
            kn_rw_kill(&rw, t);
            n->out[0] = z;
            z->producer = n;
            set_layout(g, n, xcl, true);
        }
    }
    bool mcu = tg && tg->kind == KN_TARGET_MCU;
    expanded_channels_last(&rw, g, mcu);
    if (mcu) pool_tail_channels_last(&rw, g);
    /* not on microcontrollers: their integer tiles (SMLAD channel pairs, Helium's
     * VMLADAVA reductions) read NCHW words, and the channels-last block cost MobileNetV2
     * int8 10% more instructions on the M4 and 33% on the M55 (docs/firmware.md) */
    if (!tg || tg->kind != KN_TARGET_MCU) {
        expanded_channels_last_int(&rw, g);
        block_outputs_channels_last(&rw, g);
    }
    if (tg && tg->kind == KN_TARGET_CPU && tg->int8_dot == KN_DOT_U8S8X4) res_channels_last(&rw, g);
    kn_rw_end(&rw);
    return KN_OK;
}
