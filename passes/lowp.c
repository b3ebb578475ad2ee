/* Reduced-precision weights (--weights f16|bf16; docs/quantization.md, "Reduced-precision
 * floats"): float32 constants stored as float16 or bfloat16 and widened where the
 * kernels load them, so the weights take half the bytes.
 *
 * Two steps with one invariant between them:
 *
 *  - the graph pass `weights` (requires: shapes; breaks: nothing) rounds the float32
 *    constant tensors of the root graph with at least KN_WEIGHTS_MIN_NUMEL elements to the nearest
 * float16 (bfloat16) value, to nearest even, keeping them float32: this rounded graph is what every
 * backend computes, the interpreter included (the reference). A tensor with a finite value beyond
 * the format's range is left as it is;
 *  - the kernel pass `lowp` (requires: kernel IR; before plan) stores every float32
 *    KB_CONST buffer of at least KN_WEIGHTS_MIN_NUMEL elements whose values are all
 *    exactly representable in the chosen format in that format. The kernel IR's loads of
 *    f16/bf16 buffers widen to f32 (ir/kir.h), which every emitter implements (C:
 *    kn_h2f/kn_b2f or _Float16; LLVM: fpext from half, bf16 by shifting; OpenCL:
 *    vload_half), so the change is exact: the kernels compute the same values from half
 *    the bytes. Packed weights (tile, depthwise, tile_gpu) are permutations of rounded
 *    constants with zero padding, so they stay representable; a table computed from the
 *    weights in other ways keeps float32.
 *
 * The graph pass also widens contractions that compute in float16/bfloat16 (a model
 * exported in half precision, Cast at its edges): see widen() below.
 *
 * The format comes from the graph (kn_graph.weights, copied into kn_kprog.weights by
 * lower): set by kn_weights_prepare for --weights, or by kn_weights_detect for models
 * that store their weights in float16 and Cast them to float32 (those constants are
 * representable by construction, so only the storage changes). With none set both
 * passes do nothing. */
#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/rewrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool representable(float f, kn_dtype t) {
    if (isnan(f)) return true; /* kept a NaN (payloads are not weights) */
    float r = t == KN_F16 ? kn_f16_to_f32(kn_f32_to_f16(f)) : kn_bf16_to_f32(kn_f32_to_bf16(f));
    return memcmp(&r, &f, sizeof f) == 0;
}

static float round_to(float f, kn_dtype t) {
    return t == KN_F16 ? kn_f16_to_f32(kn_f32_to_f16(f)) : kn_bf16_to_f32(kn_f32_to_bf16(f));
}

/* ---- graph: round the constants ---- */

static void round_graph(kn_graph *g, kn_dtype t) {
    for (int v = 0; v < g->nvalues; v++) {
        kn_tensor *c = g->values[v]->constant;
        if (!c || !c->data || c->type.kind != KN_KIND_TENSOR || c->type.dtype != KN_F32) continue;
        int64_t n = kn_tensor_numel(c);
        if (n < KN_WEIGHTS_MIN_NUMEL) continue;
        const float *f = c->data;
        bool fits = true;
        for (int64_t i = 0; i < n && fits; i++)
            fits = !isfinite(f[i]) || isfinite(round_to(f[i], t));
        if (!fits) continue;
        /* new data: the old may be borrowed (the model's bytes) or shared */
        float *r = kn_arena_alloc(g->arena, (size_t)n * sizeof *r);
        KN_ASSERT(r);
        for (int64_t i = 0; i < n; i++) r[i] = round_to(f[i], t);
        c->data = r;
    }
}

/* ---- graph: contractions computing in half precision, widened ---- */

static bool half(kn_dtype t) {
    return t == KN_F16 || t == KN_BF16;
}

/* v (a constant of dtype t, or NULL) as a float32 constant: exact. */
static kn_value *const32(kn_rw *rw, kn_value *v) {
    if (!v) return NULL;
    const kn_tensor *c = v->constant;
    kn_tensor *f = kn_tensor_make(rw->g->arena, KN_F32, c->type.rank, c->type.dims);
    KN_ASSERT(f);
    for (int64_t i = 0; i < kn_tensor_numel(c); i++)
        ((float *)f->data)[i] = (float)kn_load_f64(c->data, c->type.dtype, (size_t)i);
    return kn_rw_const(rw, v->name, "_f32", f);
}

static kn_value *cast(kn_rw *rw, int at, const char *name, kn_value *x, kn_dtype to, kn_value *y) {
    if (!y) {
        kn_type t = x->type;
        t.dtype = to;
        y = kn_rw_value(rw, x->name, "_f32", &t);
    }
    kn_node *c = kn_rw_node(rw, at, KN_OP_CAST, name, 1, &x, 1, &y);
    kn_attr *a = kn_arena_array(rw->g->arena, 1, sizeof *a);
    KN_ASSERT(a);
    *a = (kn_attr){.name = "to", .kind = KN_ATTR_INT, .i = to};
    c->attrs = a;
    c->nattr = 1;
    return y;
}

/* A Conv, MatMul or Gemm computing in float16/bfloat16 with constant weights (and bias):
 * rewritten as Cast(x) -> the contraction in float32 (weights as float32 constants,
 * exact) [-> Relu, its only reader] -> Cast back. The tile passes take it (they build
 * float32 contractions only) and 'lowp' stores the weights half again. The result
 * differs from the half-precision node's reference (sum in double, rounded once) only
 * where float32 accumulation moves the value across a rounding boundary of the format.
 * Returns the format if it rewrote n. */
static kn_dtype widen(kn_rw *rw, kn_node *n) {
    if ((n->op != KN_OP_CONV && n->op != KN_OP_MATMUL && n->op != KN_OP_GEMM) || n->nout != 1 ||
        !n->out[0] || n->nin < 2 || !n->in[0] || !n->in[1])
        return KN_UNDEF;
    kn_dtype t = n->in[0]->type.dtype;
    if (!half(t) || n->out[0]->type.dtype != t || !n->in[1]->constant ||
        !n->in[1]->constant->data || kn_node_attr(n, "kn.epilogue"))
        return KN_UNDEF;
    for (int i = 1; i < n->nin; i++)
        if (n->in[i] &&
            (!n->in[i]->constant || !n->in[i]->constant->data || n->in[i]->type.dtype != t))
            return KN_UNDEF;
    int at = n->id;
    kn_value *in[3] = {cast(rw, at, "kn.widen", n->in[0], KN_F32, NULL), NULL, NULL};
    for (int i = 1; i < n->nin && i < 3; i++) in[i] = const32(rw, n->in[i]);
    kn_type yt = n->out[0]->type;
    yt.dtype = KN_F32;
    kn_value *y = kn_rw_value(rw, n->out[0]->name, "_f32", &yt), *out = n->out[0];
    kn_node *m = kn_rw_node(rw, at, n->op, n->name, n->nin < 3 ? n->nin : 3, in, 1, &y);
    m->attrs = n->attrs;
    m->nattr = n->nattr;
    kn_node *r = kn_rw_only_reader(rw, out);
    if (r && r->op == KN_OP_RELU && r->nout == 1 && r->out[0]) { /* exact either side */
        kn_value *ry = kn_rw_value(rw, r->out[0]->name, "_f32", &yt);
        kn_rw_node(rw, at, KN_OP_RELU, r->name, 1, &y, 1, &ry);
        kn_rw_kill(rw, r);
        out = r->out[0], y = ry;
    }
    kn_rw_kill(rw, n);
    cast(rw, at, "kn.narrow", y, t, out);
    return t;
}

static void widen_graph(kn_ctx *cx, kn_graph *g) {
    kn_rw rw;
    if (kn_rw_begin(&rw, cx, g))
        for (int i = 0; i < rw.n0; i++) {
            kn_node *n = g->nodes[i];
            if (kn_rw_dead(&rw, n)) continue;
            kn_dtype t = widen(&rw, n);
            if (t && !g->weights) g->weights = t;
        }
    kn_rw_end(&rw);
}

kn_status kn_pass_weights(kn_ctx *cx, kn_graph *g) {
    if (g->weights_round && half(g->weights)) round_graph(g, g->weights);
    widen_graph(cx, g);
    return KN_OK;
}

kn_status kn_weights_prepare(kn_ctx *cx, kn_graph *g, kn_dtype t) {
    if (t != KN_F16 && t != KN_BF16)
        return kn_diag(cx, NULL, KN_EINVAL, "--weights takes f16 or bf16, got %s",
                       kn_dtype_name(t));
    if (g->weights_round && g->weights == t) return KN_OK; /* prepared already */
    g->weights = t;
    g->weights_round = true;
    return kn_pass_run_pipeline(cx, g, KN_WEIGHTS_PREPARE, NULL, NULL);
}

void kn_weights_detect(kn_graph *g) {
    if (g->weights) return;
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        kn_ctx scratch;
        kn_ctx_init(&scratch, NULL);
        if (n->op != KN_OP_CAST || n->nin < 1 || !n->in[0] || !n->in[0]->constant ||
            kn_attr_int(&scratch, n, "to", 0) != KN_F32)
            continue;
        const kn_tensor *c = n->in[0]->constant;
        if ((c->type.dtype == KN_F16 || c->type.dtype == KN_BF16) &&
            kn_tensor_numel(c) >= KN_WEIGHTS_MIN_NUMEL) {
            g->weights = c->type.dtype;
            return;
        }
    }
}

/* ---- kernel IR: store representable constants narrow ---- */

typedef struct lowp_walk {
    kn_kwalker w;
    bool *loaded, *other; /* by buffer id: read by a load; used any other way */
} lowp_walk;

static bool lw_enter(kn_kwalker *w, kn_ks *s) {
    lowp_walk *l = (lowp_walk *)w;
    if (s->kind == KS_STORE || s->kind == KS_COPY) l->other[s->buf->id] = true;
    if (s->kind == KS_COPY) l->other[s->src->id] = true;
    return true;
}

static void lw_expr(kn_kwalker *w, kn_kx *x) {
    lowp_walk *l = (lowp_walk *)w;
    if (x->op == KX_LOAD) l->loaded[x->buf->id] = true;
    if (x->op == KX_STR || x->op == KX_REGEX) l->other[x->buf->id] = true;
}

kn_status kn_kpass_lowp(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    kn_dtype t = p->weights;
    if (t != KN_F16 && t != KN_BF16) return KN_OK;
    bool *flags = calloc(2 * (size_t)p->nbufs + 2, sizeof *flags);
    KN_ASSERT(flags);
    lowp_walk l = {
        .w = {.enter = lw_enter, .expr = lw_expr}, .loaded = flags, .other = flags + p->nbufs + 1};
    for (int k = 0; k < p->nkernels; k++) kn_kwalk(&l.w, p->kernels[k]->body);
    for (int i = 0; i < p->nbufs; i++) {
        kn_kbuf *b = p->bufs[i];
        if (b->kind != KB_CONST || b->dtype != KN_F32 || !b->data || !b->data->data ||
            b->numel < KN_WEIGHTS_MIN_NUMEL || !l.loaded[b->id] || l.other[b->id])
            continue;
        const float *f = b->data->data;
        bool ok = true;
        for (int64_t j = 0; j < b->numel && ok; j++) ok = representable(f[j], t);
        if (!ok) continue;
        kn_tensor *h = kn_tensor_make(p->arena, t, b->data->type.rank, b->data->type.dims);
        KN_ASSERT(h && kn_tensor_numel(h) == b->numel);
        uint16_t *d = h->data;
        for (int64_t j = 0; j < b->numel; j++)
            d[j] = t == KN_F16 ? kn_f32_to_f16(f[j]) : kn_f32_to_bf16(f[j]);
        b->dtype = t;
        b->data = h;
    }
    free(flags);
    return KN_OK;
}
