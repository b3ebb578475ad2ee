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
 * The format comes from the graph (kn_graph.weights, copied into kn_kprog.weights by
 * lower): set by kn_weights_prepare for --weights, or by kn_weights_detect for models
 * that store their weights in float16 and Cast them to float32 (those constants are
 * representable by construction, so only the storage changes). With none set both
 * passes do nothing. */
#include "ir/kir.h"
#include "passes/pass.h"

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

kn_status kn_pass_weights(kn_ctx *cx, kn_graph *g) {
    (void)cx;
    if (g->weights_round && (g->weights == KN_F16 || g->weights == KN_BF16))
        round_graph(g, g->weights);
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
    if (x->op == KX_STR) l->other[x->buf->id] = true;
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
