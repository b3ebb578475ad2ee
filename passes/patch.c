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
 * falls by about S; the cost is the halo rows computed twice.
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
 * Where to end the chain and how many bands: for each end e and S in 2..8 the pass
 * estimates the peak of the graph's value liveness (bytes of values live at each node,
 * graph inputs and outputs excluded, as the arena plan does): inside the chain, the
 * largest band input plus band output, plus the whole final output (the finished
 * bands) and values live across; the Concat (bands and joined output); every node
 * outside the chain as before. It takes the smallest peak, and among ends and band
 * counts within 3% of it the fewest multiply-adds, among the candidates whose recomputed
 * rows add at most RECOMPUTE_PCT (5%) to the model's convolution multiply-adds (a deep
 * chain in many bands can save more RAM, at a cost in time no caller asked for), and
 * rewrites the graph only when that peak is below 0.9x the unpatched one. Only targets of kind mcu
 * are patched (RAM is their constraint; elsewhere the recomputed rows cost time for nothing). */
#include "ir/dtype.h"
#include "ir/epilogue.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

enum { CHAIN_MAX = 64, BANDS_MAX = 8, RECOMPUTE_PCT = 5 };

typedef struct link {
    kn_node *n;
    bool conv;
    int64_t k, s, d, pt, pb; /* along H: kernel, stride, dilation, pads */
    int64_t hin, hout;       /* rows of the input and output */
    int64_t in_row, out_row; /* bytes of one row of input / output (all of N, C, W) */
    int64_t macs_row;        /* multiply-adds per output row (0 for elementwise) */
} link;

static int64_t value_bytes(const kn_value *v) {
    int64_t n = kn_type_numel(&v->type);
    return n < 0 ? -1 : n * (int64_t)kn_dtype_get(v->type.dtype)->size;
}

static bool nchw(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && v->type.rank == 4 && kn_type_static(&v->type);
}

static bool is_const(const kn_value *v) {
    return !v || v->constant;
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
        int64_t K = (l->k - 1) * l->d + 1;
        if (l->s < 1 || l->d < 1 || (l->hin + l->pt + l->pb - K) / l->s + 1 != l->hout)
            return false;
        l->macs_row = y->type.dims[0] * y->type.dims[1] * y->type.dims[3] * w->type.dims[1] *
                      w->type.dims[2] * w->type.dims[3];
        return true;
    }
    case KN_OP_QUANTIZELINEAR:
    case KN_OP_DEQUANTIZELINEAR:
        if (n->nin < 2 || kn_type_numel(&n->in[1]->type) != 1) return false;
        /* fallthrough */
    case KN_OP_RELU:
    case KN_OP_CLIP: return l->hin == l->hout && !kn_failed(cx);
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

/* The estimate of a plan patched at chain[0..e] in S bands (see the file comment):
 * peak bytes and multiply-adds of the chain. */
static void estimate(const link *ch, int e, int S, int64_t across, int64_t *peak, int64_t *macs) {
    int64_t top = 0, m = 0, fin = value_bytes(ch[e].n->out[0]);
    for (int s = 0; s < S; s++) {
        int64_t a, b;
        band(ch[e].hout, S, s, &a, &b);
        for (int i = e; i >= 0; i--) {
            int64_t oa = a, ob = b;
            rows_in(&ch[i], &a, &b);
            int64_t live = (b - a) * ch[i].in_row + (ob - oa) * ch[i].out_row + fin + across;
            if (live > top) top = live;
            m += (ob - oa) * ch[i].macs_row;
        }
    }
    if (2 * fin + across > top) top = 2 * fin + across;
    *peak = top;
    *macs = m;
}

typedef struct live_info {
    int64_t *at;   /* bytes live at each node position */
    int *first;    /* per value id: producer position, -1 */
    int *last;     /* per value id: last reader position */
    int64_t *size; /* per value id: bytes (0 for values the plan does not place) */
} live_info;

static void liveness(const kn_graph *g, live_info *L) {
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
        for (int p = L->first[i]; p >= 0 && p <= L->last[i]; p++) L->at[p] += L->size[i];
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

/* Rewrites chain[0..e] into S bands joined by a Concat writing the chain's output. */
static void rewrite(kn_rw *rw, link *ch, int e, int S) {
    kn_graph *g = rw->g;
    int at = ch[0].n->id;
    kn_value *x = ch[0].n->in[0], *y = ch[e].n->out[0];
    kn_value *outs[BANDS_MAX];
    for (int i = 0; i <= e; i++) kn_rw_kill(rw, ch[i].n);
    for (int s = 0; s < S; s++) {
        int64_t ra[CHAIN_MAX + 1], rb[CHAIN_MAX + 1]; /* ra[i]: link i's output rows */
        band(ch[e].hout, S, s, &ra[e], &rb[e]);
        for (int i = e; i >= 0; i--) {
            int64_t a = ra[i], b = rb[i];
            rows_in(&ch[i], &a, &b);
            if (i) {
                ra[i - 1] = a;
                rb[i - 1] = b;
            } else {
                ra[CHAIN_MAX] = a;
                rb[CHAIN_MAX] = b;
            }
        }
        char sfx[32];
        kn_value *cur = x;
        int64_t xa = ra[CHAIN_MAX], xb = rb[CHAIN_MAX];
        if (xa > 0 || xb < ch[0].hin) { /* the band's rows of the chain's input */
            kn_type t = x->type;
            t.dims[2] = xb - xa;
            snprintf(sfx, sizeof sfx, "band%d", s);
            kn_value *in[4] = {x, i64_const(rw, x->name, "/band_start", xa),
                               i64_const(rw, x->name, "/band_end", xb),
                               i64_const(rw, x->name, "/band_axis", 2)};
            kn_value *o = kn_rw_value(rw, x->name, sfx, &t);
            kn_node *sl = kn_rw_node(rw, at, KN_OP_SLICE, "", 4, in, 1, &o);
            sl->opset = g->opset;
            cur = o;
        }
        for (int i = 0; i <= e; i++) {
            const kn_node *n = ch[i].n;
            int64_t ia = i ? ra[i - 1] : xa, ib = i ? rb[i - 1] : xb;
            kn_type t = n->out[0]->type;
            t.dims[2] = rb[i] - ra[i];
            snprintf(sfx, sizeof sfx, "band%d", s);
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
                pt = ia - (ra[i] * l->s - l->pt);
                pb = (rb[i] - ra[i] - 1) * l->s + K - pt - (ib - ia);
                if (pb < 0) pb = 0;
                KN_ASSERT(pt >= 0 && pt <= l->pt && pb <= l->pb);
                KN_ASSERT((ib - ia + pt + pb - K) / l->s + 1 == rb[i] - ra[i]);
            }
            set_attrs(g, c, n, ch[i].conv, pt, pb);
            cur = o;
        }
        outs[s] = cur;
    }
    kn_node *cat = kn_rw_node(rw, at, KN_OP_CONCAT, "", S, outs, 1, &y);
    kn_attr *a = kn_arena_array(g->arena, 1, sizeof *a);
    KN_ASSERT(a);
    *a = (kn_attr){.name = "axis", .kind = KN_ATTR_INT, .i = 2};
    cat->attrs = a;
    cat->nattr = 1;
    cat->opset = g->opset;
}

kn_status kn_pass_patch(kn_ctx *cx, kn_graph *g, const kn_target *t) {
    if (!t || t->kind != KN_TARGET_MCU || g->opset < 13) return KN_OK;
    kn_rw rw;
    if (!kn_rw_begin(&rw, cx, g)) {
        kn_rw_end(&rw);
        return KN_OK;
    }
    link ch[CHAIN_MAX];
    int len = find_chain(cx, &rw, ch);
    live_info L;
    liveness(g, &L);
    int64_t base = 0;
    for (int p = 0; p < g->nnodes; p++)
        if (L.at[p] > base) base = L.at[p];
    int p0 = len ? ch[0].n->id : 0;
    int64_t best = base, best_macs = 0;
    int best_e = -1, best_s = 0;
    /* (peak, macs) of every candidate, then the cheapest within 3% of the least peak */
    int64_t pk[CHAIN_MAX][BANDS_MAX + 1], mc[CHAIN_MAX][BANDS_MAX + 1];
    int64_t least = base;
    for (int e = 0; e < len; e++) {
        int pe = ch[e].n->id;
        int64_t rest = 0, across = 0;
        for (int p = 0; p < g->nnodes; p++)
            if ((p < p0 || p > pe) && L.at[p] > rest) rest = L.at[p];
        for (int i = 0; i < kn_graph_value_count(g); i++) /* live through the chain */
            if (L.first[i] >= 0 && L.first[i] < p0 && L.last[i] > pe) across += L.size[i];
        if (ch[0].n->in[0]->producer) across += value_bytes(ch[0].n->in[0]);
        int64_t whole = 0; /* multiply-adds of chain[0..e] unpatched */
        for (int i = 0; i <= e; i++) whole += ch[i].hout * ch[i].macs_row;
        for (int S = 2; S <= BANDS_MAX; S++) {
            pk[e][S] = -1;
            if (!ch[e].conv || S > ch[e].hout) continue;
            int64_t peak, macs;
            estimate(ch, e, S, across, &peak, &macs);
            if (rest > peak) peak = rest;
            pk[e][S] = peak;
            mc[e][S] = macs - whole; /* the recomputed halo rows */
            if (peak < least) least = peak;
        }
    }
    /* the model's convolution multiply-adds: the recomputed rows may add RECOMPUTE_PCT */
    int64_t total = 0;
    for (int p = 0; p < g->nnodes; p++) {
        link l;
        if ((g->nodes[p]->op == KN_OP_CONV || g->nodes[p]->op == KN_OP_QLINEARCONV) &&
            make_link(cx, g->nodes[p], &l))
            total += l.hout * l.macs_row;
    }
    least = base;
    for (int e = 0; e < len; e++)
        for (int S = 2; S <= BANDS_MAX; S++)
            if (pk[e][S] >= 0 && mc[e][S] * 100 > total * RECOMPUTE_PCT)
                pk[e][S] = -1;
            else if (pk[e][S] >= 0 && pk[e][S] < least)
                least = pk[e][S];
    for (int e = 0; e < len; e++)
        for (int S = 2; S <= BANDS_MAX; S++) {
            if (pk[e][S] < 0 || pk[e][S] > least + least * 3 / 100) continue;
            if (best_e < 0 || mc[e][S] < best_macs) {
                best_e = e;
                best_s = S;
                best = pk[e][S];
                best_macs = mc[e][S];
            }
        }
    liveness_free(&L);
    if (best_e >= 0 && best * 10 < base * 9) rewrite(&rw, ch, best_e, best_s);
    kn_rw_end(&rw);
    return cx->status;
}
