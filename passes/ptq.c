/* Post-training static quantization: layers, calibration, QDQ insertion and SQNR
 * (see ptq.h for the steps and docs/quantization.md for the choices).
 *
 * Quantization parameters, all stored as float32 scales:
 *   weights  int8, symmetric, per output channel: s[c] = max |W[c]| / 127, zero point 0,
 *            q = clamp(round_half_even(W / s[c]), -127, 127)
 *   bias     int32 at scale (float)xs * s[c] (the qdq pass checks this exact product),
 *            zero point 0
 *   activations per tensor, asymmetric over the calibrated range widened to hold 0:
 *            uint8 s = (hi - lo) / 255, z = round(-lo / s); int8 z = round(-128 - lo / s)
 * An activation read by several layers gets one QuantizeLinear/DequantizeLinear pair. */
#include "passes/ptq.h"
#include "ir/epilogue.h"
#include "ir/interp.h"
#include "ir/ops.h"
#include "ir/requant.h"
#include "passes/rewrite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan ---- */

static bool is_f32(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && v->type.dtype == KN_F32;
}

static bool const_f32(const kn_value *v) {
    return is_f32(v) && v->constant && v->constant->data;
}

/* Output channels of layer n (Conv, MatMul, Gemm with constant float weights and a
 * constant bias of one value per channel, if any), or 0 if n has no integer form here;
 * *axis is the weights' channel axis. */
static int64_t layer_channels(const kn_node *n, int *axis) {
    kn_ctx s;
    kn_ctx_init(&s, NULL);
    if (n->nin < 2 || !is_f32(n->in[0]) || !const_f32(n->in[1]) || n->nout != 1 ||
        kn_node_attr(n, KN_ATTR_EPILOGUE)) /* a fused activation (passes/fuse.c) */
        return 0;
    const kn_type *w = &n->in[1]->constant->type;
    const kn_value *b = n->nin > 2 ? n->in[2] : NULL;
    int64_t m = 0;
    if (n->op == KN_OP_CONV) {
        if (w->rank < 3 || n->in[0]->type.rank != w->rank) return 0;
        *axis = 0, m = w->dims[0];
    } else if (n->op == KN_OP_MATMUL) {
        if (w->rank != 2 || n->in[0]->type.rank < 2) return 0;
        *axis = 1, m = w->dims[1];
    } else if (n->op == KN_OP_GEMM) {
        bool tb = kn_attr_int(&s, n, "transB", 0) != 0;
        if (w->rank != 2 || n->in[0]->type.rank != 2 || kn_attr_int(&s, n, "transA", 0) ||
            kn_attr_float(&s, n, "alpha", 1) != 1 || (b && kn_attr_float(&s, n, "beta", 1) != 1))
            return 0;
        *axis = tb ? 0 : 1, m = w->dims[*axis];
    } else {
        return 0;
    }
    if (b && (!const_f32(b) || kn_tensor_numel(b->constant) != m)) return 0;
    return kn_failed(&s) ? 0 : m;
}

/* Relu, or Clip with constant bounds (Relu6): the qdq pass takes either between a
 * contraction and its QuantizeLinear. */
static bool is_relu(const kn_node *n) {
    double x;
    if (n->op == KN_OP_RELU) return true;
    if (n->op != KN_OP_CLIP || n->nout != 1) return false;
    for (int k = 1; k < n->nin; k++)
        if (n->in[k] && !kn_const_scalar(n->in[k], &x)) return false;
    return true;
}

static int value_index(kn_ptq *q, const char *name) {
    for (int i = 0; i < q->nvalues; i++)
        if (!strcmp(q->values[i].name, name)) return i;
    q->values[q->nvalues] = (kn_ptq_value){.name = kn_arena_strdup(q->arena, name)};
    return q->nvalues++;
}

kn_status kn_ptq_plan(kn_ctx *cx, const kn_graph *g, const kn_ptq_opts *o, kn_ptq **out) {
    *out = NULL;
    for (int i = 0; i < g->nnodes; i++)
        if (kn_op_desc(g->nodes[i]->op)->flags & OPF_SUBGRAPH)
            return kn_diag(cx, g->nodes[i], KN_EUNSUPPORTED,
                           "--quantize does not handle models with subgraphs (If, Loop, Scan)");
    int nv = kn_graph_value_count(g);
    int *readers = calloc((size_t)nv + 1, sizeof *readers);
    KN_ASSERT(readers);
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++)
            if (g->nodes[i]->in[k]) readers[g->nodes[i]->in[k]->id]++;
    kn_arena *a = kn_arena_create();
    kn_ptq *q = kn_arena_alloc(a, sizeof *q);
    *q = (kn_ptq){.arena = a, .opts = *o};
    if (!q->opts.act) q->opts.act = KN_U8;
    if (q->opts.method == KN_CALIB_PERCENTILE && !(q->opts.percentile > 0))
        q->opts.percentile = 99.99;
    q->layers = kn_arena_array(a, (size_t)g->nnodes + 1, sizeof *q->layers);
    q->values = kn_arena_array(a, 2 * (size_t)g->nnodes + 1, sizeof *q->values);
    KN_ASSERT(q->layers && q->values);
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        int axis;
        if (!layer_channels(n, &axis)) continue;
        const kn_value *y = n->out[0];
        bool relu = false;
        if (readers[y->id] == 1 && !kn_graph_is_output(g, y))
            for (int j = i + 1; j < g->nnodes; j++)
                if (g->nodes[j]->nin && g->nodes[j]->in[0] == y) {
                    if (is_relu(g->nodes[j])) y = g->nodes[j]->out[0], relu = true;
                    break;
                }
        kn_ptq_layer *l = &q->layers[q->nlayers++];
        char label[64];
        snprintf(label, sizeof label, "#%d", i);
        *l = (kn_ptq_layer){.node = kn_arena_strdup(a, n->name[0] ? n->name : label),
                            .op = kn_arena_strdup(a, n->op_type),
                            .relu = relu,
                            .sqnr = NAN};
        l->x = value_index(q, n->in[0]->name);
        l->y = value_index(q, y->name);
    }
    free(readers);
    if (!q->nlayers) {
        kn_ptq_destroy(q);
        return kn_diag(cx, NULL, KN_EINVAL,
                       "--quantize: the model has no Conv, MatMul or Gemm with constant float "
                       "weights to quantize");
    }
    *out = q;
    return KN_OK;
}

void kn_ptq_destroy(kn_ptq *q) {
    if (q) kn_arena_destroy(q->arena);
}

kn_status kn_ptq_keep(kn_ctx *cx, kn_ptq *q, const char *names) {
    for (const char *p = names; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int i = 0;
        while (i < q->nlayers &&
               (strlen(q->layers[i].node) != len || strncmp(q->layers[i].node, p, len)))
            i++;
        if (i == q->nlayers) {
            char list[1024];
            size_t n = 0;
            list[0] = 0;
            for (int k = 0; k < q->nlayers && n < sizeof list; k++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                                      q->layers[k].node);
            return kn_diag(cx, NULL, KN_EINVAL,
                           "--keep-float: no quantized layer is named '%.*s' (the layers: %s)",
                           (int)len, p, list);
        }
        q->layers[i].keep = true;
        p = e ? e + 1 : p + len;
    }
    return KN_OK;
}

/* ---- calibration ---- */

typedef struct calib_run {
    kn_ptq *q;
    int *index; /* by value id: q->values index, or -1 */
    int phase;  /* 0: min/max; 1: histogram */
} calib_run;

static void observe(void *user, const kn_value *v, const kn_tensor *t) {
    calib_run *r = user;
    int k = r->index[v->id];
    if (k < 0 || t->type.kind != KN_KIND_TENSOR || t->type.dtype != KN_F32 || !t->data) return;
    kn_ptq_value *s = &r->q->values[k];
    const float *x = t->data;
    int64_t n = kn_tensor_numel(t);
    if (r->phase == 0) {
        for (int64_t i = 0; i < n; i++) {
            if (!isfinite(x[i])) continue;
            if (!s->count || x[i] < s->lo) s->lo = x[i];
            if (!s->count || x[i] > s->hi) s->hi = x[i];
            s->count++;
        }
        return;
    }
    double amax = fmax(fabs(s->lo), fabs(s->hi));
    if (!(amax > 0)) return;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        int b = (int)(fabs(x[i]) / amax * KN_PTQ_BINS);
        s->hist[b < KN_PTQ_BINS ? b : KN_PTQ_BINS - 1]++;
    }
}

/* The clip threshold of least KL divergence between p, the |x| histogram cut at bin i
 * with the tail added to its last bin, and q, the cut histogram without the tail
 * quantized to NQ levels (128, the levels int8 has for |x|), as TensorRT's entropy calibration (and
 * MXNet's _get_optimal_threshold): the threshold in histogram bins. */
static int entropy_bins(const int64_t *h, int NQ) {
    static double p[KN_PTQ_BINS], qd[KN_PTQ_BINS];
    double tail = 0, best = INFINITY;
    int best_i = KN_PTQ_BINS;
    for (int j = NQ; j < KN_PTQ_BINS; j++) tail += (double)h[j];
    for (int i = NQ; i <= KN_PTQ_BINS; i++) {
        double psum = 0;
        for (int j = 0; j < i; j++) p[j] = (double)h[j];
        p[i - 1] += tail;
        for (int j = 0; j < i; j++) psum += p[j];
        if (!(psum > 0)) break;
        /* the i bins without the tail merged into NQ levels, each spread back evenly
         * over the bins where p is nonzero */
        for (int g = 0; g < NQ; g++) {
            int lo = (int)((int64_t)g * i / NQ), hi = (int)((int64_t)(g + 1) * i / NQ);
            double sum = 0;
            int nz = 0;
            for (int j = lo; j < hi; j++) sum += (double)h[j], nz += p[j] != 0;
            for (int j = lo; j < hi; j++) qd[j] = p[j] != 0 && nz ? sum / nz : 0;
        }
        double qsum = 0, kl = 0;
        for (int j = 0; j < i; j++) qsum += qd[j];
        for (int j = 0; j < i; j++) {
            if (p[j] == 0) continue;
            double pj = p[j] / psum, qj = qd[j] / qsum;
            kl += pj * log(pj / (qj > 0 ? qj : 1e-12));
        }
        if (kl < best) best = kl, best_i = i;
        if (i < KN_PTQ_BINS) tail -= (double)h[i];
    }
    return best_i;
}

/* Scale and zero point of s from its clipped range, for activations of dtype act. */
static void qparams(kn_ptq_value *s, kn_dtype act) {
    double lo = fmin(s->clip_lo, 0), hi = fmax(s->clip_hi, 0);
    float scale = (float)((hi - lo) / 255);
    if (!(scale > 0) || !isfinite(scale)) scale = 1;
    s->scale = scale;
    double z = nearbyint((act == KN_U8 ? 0 : -128) - lo / scale);
    double zmin = act == KN_U8 ? 0 : -128, zmax = act == KN_U8 ? 255 : 127;
    s->zero = (int)(z < zmin ? zmin : z > zmax ? zmax : z);
}

static kn_status run_samples(kn_ctx *cx, const kn_graph *g, int nsamples,
                             kn_tensor *const *const *samples, kn_interp_observer f, void *user) {
    for (int s = 0; s < nsamples; s++) {
        kn_arena *a = kn_arena_create();
        kn_tensor **out = kn_arena_array(a, (size_t)g->nout + 1, sizeof *out);
        kn_status st = kn_interp_run_observed(cx, g, a, samples[s], out, 0, f, user);
        kn_arena_destroy(a);
        if (st) return st;
    }
    return KN_OK;
}

kn_status kn_ptq_calibrate(kn_ctx *cx, const kn_graph *g, kn_ptq *q, int nsamples,
                           kn_tensor *const *const *samples) {
    if (nsamples < 1) return kn_diag(cx, NULL, KN_EINVAL, "--calibrate: no samples");
    int nv = kn_graph_value_count(g);
    calib_run r = {q, malloc(((size_t)nv + 1) * sizeof(int)), 0};
    KN_ASSERT(r.index);
    for (int i = 0; i < nv; i++) r.index[i] = -1;
    for (int k = 0; k < q->nvalues; k++) {
        const kn_value *v = kn_graph_find_value(g, q->values[k].name);
        KN_ASSERT(v);
        r.index[v->id] = k;
        q->values[k].count = 0;
    }
    kn_status st = run_samples(cx, g, nsamples, samples, observe, &r);
    if (!st && q->opts.method != KN_CALIB_MINMAX) {
        for (int k = 0; k < q->nvalues; k++) {
            q->values[k].hist = kn_arena_array(q->arena, KN_PTQ_BINS, sizeof(int64_t));
            KN_ASSERT(q->values[k].hist);
            memset(q->values[k].hist, 0, KN_PTQ_BINS * sizeof(int64_t));
        }
        r.phase = 1;
        st = run_samples(cx, g, nsamples, samples, observe, &r);
    }
    free(r.index);
    if (st) return st;
    q->nsamples = nsamples;
    for (int k = 0; k < q->nvalues; k++) {
        kn_ptq_value *s = &q->values[k];
        s->clip_lo = s->lo, s->clip_hi = s->hi;
        double amax = fmax(fabs(s->lo), fabs(s->hi)), t = amax;
        if (s->hist && amax > 0 && q->opts.method == KN_CALIB_PERCENTILE) {
            double want = q->opts.percentile / 100 * (double)s->count, cum = 0;
            int b = 0;
            while (b < KN_PTQ_BINS - 1 && (cum += (double)s->hist[b]) < want) b++;
            t = amax * (b + 1) / KN_PTQ_BINS;
        } else if (s->hist && amax > 0 && q->opts.method == KN_CALIB_ENTROPY) {
            t = amax * entropy_bins(s->hist, 128) / KN_PTQ_BINS;
        }
        s->clip_lo = fmax(s->lo, -t), s->clip_hi = fmin(s->hi, t);
        qparams(s, q->opts.act);
    }
    return KN_OK;
}

/* ---- QDQ insertion ---- */

static kn_value *scalar_const(kn_rw *rw, const char *like, const char *suffix, kn_dtype t,
                              double v) {
    kn_tensor *x = kn_tensor_scalar_f64(rw->g->arena, t, v);
    KN_ASSERT(x);
    return kn_rw_const(rw, like, suffix, x);
}

static void set_axis(kn_graph *g, kn_node *n, int64_t axis) {
    n->attrs = kn_arena_alloc(g->arena, sizeof *n->attrs);
    KN_ASSERT(n->attrs);
    memset(n->attrs, 0, sizeof *n->attrs);
    n->attrs[0].name = "axis";
    n->attrs[0].kind = KN_ATTR_INT;
    n->attrs[0].i = axis;
    n->nattr = 1;
}

/* DequantizeLinear(c, s, z) of a constant, per axis when s has more than one element,
 * placed before position `before`; the float value it makes. */
static kn_value *dq_const(kn_rw *rw, int before, const char *like, kn_tensor *c, kn_tensor *s,
                          kn_tensor *z, int64_t axis) {
    kn_value *in[3] = {kn_rw_const(rw, like, "quantized", c), kn_rw_const(rw, like, "scale", s),
                       kn_rw_const(rw, like, "zero_point", z)};
    kn_type t = kn_type_make(KN_F32, c->type.rank, c->type.dims);
    kn_value *out = kn_rw_value(rw, like, "dequantized", &t);
    kn_node *n = kn_rw_node(rw, before, KN_OP_DEQUANTIZELINEAR, out->name, 3, in, 1, &out);
    if (kn_tensor_numel(s) > 1) set_axis(rw->g, n, axis);
    return out;
}

/* Quantizes activation v in place: its readers read DequantizeLinear(QuantizeLinear(v)).
 * A graph output keeps its name (on the dequantized value). Returns the new value. */
static kn_value *qdq_act(kn_rw *rw, kn_value *v, const kn_ptq_value *s, kn_dtype act) {
    int before = v->producer ? v->producer->id + 1 : 0;
    kn_value *sc = scalar_const(rw, v->name, "scale", KN_F32, s->scale);
    kn_value *zp = scalar_const(rw, v->name, "zero_point", act, s->zero);
    kn_type qt = v->type;
    qt.dtype = act;
    kn_value *vq = kn_rw_value(rw, v->name, "quantized", &qt);
    kn_value *vd = kn_rw_value(rw, v->name, "dequantized", &v->type);
    kn_rw_replace(rw, v, vd);
    if (kn_graph_is_output(rw->g, vd)) { /* the output keeps its name */
        const char *nm = v->name;
        v->name = vd->name;
        vd->name = nm;
    }
    kn_value *qin[3] = {v, sc, zp}, *din[3] = {vq, sc, zp};
    kn_node *qn = kn_rw_node(rw, before, KN_OP_QUANTIZELINEAR, vq->name, 3, qin, 1, &vq);
    qn->attrs = kn_arena_alloc(rw->g->arena, sizeof *qn->attrs);
    KN_ASSERT(qn->attrs);
    qn->attrs[0] = (kn_attr){.name = KN_PTQ_ATTR, .kind = KN_ATTR_INT, .i = 1};
    qn->nattr = 1;
    kn_rw_node(rw, before, KN_OP_DEQUANTIZELINEAR, vd->name, 3, din, 1, &vd);
    return vd;
}

/* Weights W quantized per channel along axis; their scales in *ws (float32). */
static kn_tensor *quant_weights(kn_arena *a, const kn_tensor *w, int axis, kn_tensor **ws) {
    int64_t m = w->type.dims[axis], inner = 1, outer = 1, n = kn_tensor_numel(w);
    for (int d = axis + 1; d < w->type.rank; d++) inner *= w->type.dims[d];
    for (int d = 0; d < axis; d++) outer *= w->type.dims[d];
    kn_tensor *q = kn_tensor_make(a, KN_I8, w->type.rank, w->type.dims);
    *ws = kn_tensor_make(a, KN_F32, 1, &m);
    double *amax = calloc((size_t)m + 1, sizeof *amax);
    KN_ASSERT(q && *ws && amax);
    const float *x = w->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i / inner % m;
        if (fabs(x[i]) > amax[c]) amax[c] = fabs(x[i]);
    }
    float *s = (*ws)->data;
    for (int64_t c = 0; c < m; c++) s[c] = amax[c] > 0 ? (float)(amax[c] / 127) : 1.0f;
    int8_t *o = q->data;
    for (int64_t i = 0; i < n; i++) {
        double v = nearbyint((double)x[i] / s[i / inner % m]);
        o[i] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
    }
    (void)outer;
    free(amax);
    return q;
}

kn_status kn_ptq_apply(kn_ctx *cx, kn_graph *g, kn_ptq *q) {
    kn_rw rw;
    if (!kn_rw_begin(&rw, cx, g)) {
        kn_rw_end(&rw);
        return kn_diag(cx, NULL, KN_EUNSUPPORTED,
                       "--quantize does not handle models with subgraphs (If, Loop, Scan)");
    }
    kn_value **dq = calloc((size_t)q->nvalues + 1, sizeof *dq);
    KN_ASSERT(dq);
    int li = 0;
    for (int i = 0; i < rw.n0 && li < q->nlayers; i++) {
        kn_node *n = g->nodes[i];
        int axis;
        int64_t m = layer_channels(n, &axis);
        if (!m) continue;
        kn_ptq_layer *l = &q->layers[li++];
        if (strcmp(l->op, n->op_type)) {
            free(dq);
            kn_rw_end(&rw);
            return kn_diag(cx, n, KN_EINTERNAL, "the graph differs from the calibrated one");
        }
        if (l->keep) continue;
        const kn_ptq_value *xs = &q->values[l->x], *ys = &q->values[l->y];
        if (!dq[l->x]) {
            kn_value *x = kn_graph_find_value(g, xs->name);
            KN_ASSERT(x);
            dq[l->x] = qdq_act(&rw, x, xs, q->opts.act);
        }
        /* weights, then the bias at x_scale * w_scale */
        kn_tensor *ws, *wq = quant_weights(g->arena, n->in[1]->constant, axis, &ws);
        kn_tensor *wz = kn_tensor_make(g->arena, KN_I8, 1, &m);
        KN_ASSERT(wz);
        memset(wz->data, 0, (size_t)m);
        const float *s = ws->data;
        l->channels = m;
        l->ws_min = INFINITY, l->ws_max = 0;
        for (int64_t c = 0; c < m; c++)
            l->ws_min = fmin(l->ws_min, s[c]), l->ws_max = fmax(l->ws_max, s[c]);
        n->in[1] = dq_const(&rw, i, n->in[1]->name, wq, ws, wz, axis);
        if (n->nin > 2 && n->in[2]) {
            kn_tensor *bq = kn_tensor_make(g->arena, KN_I32, 1, &m);
            kn_tensor *bs = kn_tensor_make(g->arena, KN_F32, 1, &m);
            kn_tensor *bz = kn_tensor_make(g->arena, KN_I32, 1, &m);
            KN_ASSERT(bq && bs && bz);
            memset(bz->data, 0, (size_t)m * 4);
            const float *b = n->in[2]->constant->data;
            for (int64_t c = 0; c < m; c++) {
                float sc = (float)xs->scale * s[c];
                double v = nearbyint((double)b[c] / sc);
                ((float *)bs->data)[c] = sc;
                ((int32_t *)bq->data)[c] = (int32_t)(v < -2147483647.0  ? -2147483647.0
                                                     : v > 2147483647.0 ? 2147483647.0
                                                                        : v);
            }
            n->in[2] = dq_const(&rw, i, n->in[2]->name, bq, bs, bz, 0);
        }
        n->in[0] = dq[l->x];
        if (!dq[l->y]) {
            kn_value *y = kn_graph_find_value(g, ys->name);
            KN_ASSERT(y);
            dq[l->y] = qdq_act(&rw, y, ys, q->opts.act);
        }
        l->ydq = kn_arena_strdup(q->arena, dq[l->y]->name);
    }
    rw.changed = true;
    kn_rw_end(&rw);
    free(dq);
    return kn_graph_verify(cx, g);
}

/* ---- SQNR ---- */

typedef struct measure_run {
    kn_ptq *q;
    int *index;          /* by value id: layer index, or -1 */
    const kn_tensor **f; /* the float run's tensors, by layer */
    double *sig, *err;   /* by layer */
    bool second;
} measure_run;

static void observe_measure(void *user, const kn_value *v, const kn_tensor *t) {
    measure_run *r = user;
    int k = r->index[v->id];
    if (k < 0 || t->type.dtype != KN_F32 || !t->data) return;
    if (!r->second) {
        r->f[k] = t;
        return;
    }
    const kn_tensor *f = r->f[k];
    if (!f || kn_tensor_numel(f) != kn_tensor_numel(t)) return;
    const float *a = f->data, *b = t->data;
    for (int64_t i = 0; i < kn_tensor_numel(t); i++) {
        double d = (double)a[i] - (double)b[i];
        r->sig[k] += (double)a[i] * a[i];
        r->err[k] += d * d;
    }
}

static double sqnr_db(double sig, double err) {
    return err > 0 ? 10 * log10(sig / err) : INFINITY;
}

kn_status kn_ptq_measure(kn_ctx *cx, const kn_graph *f, const kn_graph *qg, kn_ptq *q, int nsamples,
                         kn_tensor *const *const *samples) {
    int nf = kn_graph_value_count(f), nq = kn_graph_value_count(qg), L = q->nlayers;
    measure_run r = {q,
                     NULL,
                     calloc((size_t)L + 1, sizeof *r.f),
                     calloc((size_t)L + 1, sizeof(double)),
                     calloc((size_t)L + 1, sizeof(double)),
                     false};
    int *fi = malloc(((size_t)nf + 1) * sizeof *fi), *qi = malloc(((size_t)nq + 1) * sizeof *qi);
    KN_ASSERT(r.f && r.sig && r.err && fi && qi);
    for (int i = 0; i < nf; i++) fi[i] = -1;
    for (int i = 0; i < nq; i++) qi[i] = -1;
    for (int k = 0; k < L; k++) {
        const kn_ptq_layer *l = &q->layers[k];
        const kn_value *a = kn_graph_find_value(f, q->values[l->y].name);
        const kn_value *b = kn_graph_find_value(qg, l->ydq ? l->ydq : q->values[l->y].name);
        if (a && b) fi[a->id] = k, qi[b->id] = k;
    }
    double osig = 0, oerr = 0;
    kn_status st = KN_OK;
    for (int s = 0; s < nsamples && !st; s++) {
        kn_arena *a = kn_arena_create();
        kn_tensor **fo = kn_arena_array(a, (size_t)f->nout + 1, sizeof *fo);
        kn_tensor **qo = kn_arena_array(a, (size_t)qg->nout + 1, sizeof *qo);
        memset(r.f, 0, (size_t)L * sizeof *r.f);
        r.index = fi, r.second = false;
        st = kn_interp_run_observed(cx, f, a, samples[s], fo, 0, observe_measure, &r);
        r.index = qi, r.second = true;
        if (!st) st = kn_interp_run_observed(cx, qg, a, samples[s], qo, 0, observe_measure, &r);
        for (int o = 0; !st && o < f->nout && o < qg->nout; o++) {
            if (fo[o]->type.dtype != KN_F32 || qo[o]->type.dtype != KN_F32 ||
                kn_tensor_numel(fo[o]) != kn_tensor_numel(qo[o]))
                continue;
            const float *x = fo[o]->data, *y = qo[o]->data;
            for (int64_t i = 0; i < kn_tensor_numel(fo[o]); i++) {
                double d = (double)x[i] - (double)y[i];
                osig += (double)x[i] * x[i], oerr += d * d;
            }
        }
        kn_arena_destroy(a);
    }
    for (int k = 0; k < L; k++) q->layers[k].sqnr = sqnr_db(r.sig[k], r.err[k]);
    q->out_sqnr = sqnr_db(osig, oerr);
    q->out_error = osig > 0 ? sqrt(oerr / osig) : 0;
    free(r.f), free(r.sig), free(r.err), free(fi), free(qi);
    return st;
}
