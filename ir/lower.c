/* The lowering driver: graph IR -> kernel IR program.
 *
 * Every tensor value gets a buffer: graph inputs and outputs become entry-point
 * parameters, constants become weights, the rest arena temporaries. Each node is
 * lowered by its op's `lower` function into one kernel. A graph output that no node
 * computes (an input or a constant passed through) gets a copy kernel. The memory
 * plan (passes/plan.c) runs afterwards on the buffers' lifetimes. */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/ops.h"
#include "targets/target.h"

#include <stdio.h>
#include <string.h>

kn_kbuf *kl_buffer(kn_kprog *p, kn_kbuf_kind kind, kn_dtype t, int rank, const int64_t *dims,
                   const char *prefix) {
    kn_kbuf *b = kn_arena_alloc(p->arena, sizeof *b);
    KN_ASSERT(b && rank <= KN_MAX_RANK);
    b->id = p->nbufs;
    b->kind = kind;
    b->dtype = t;
    b->rank = rank;
    b->numel = 1;
    for (int i = 0; i < rank; i++) {
        b->dims[i] = dims[i];
        b->numel *= dims[i];
    }
    b->first = b->last = -1;
    char name[32];
    snprintf(name, sizeof name, "%s%d", prefix, b->id);
    b->name = kn_arena_strdup(p->arena, name);
    if (p->nbufs == p->cap_bufs) {
        int nc = p->cap_bufs ? p->cap_bufs * 2 : 64;
        kn_kbuf **v = kn_arena_array(p->arena, (size_t)nc, sizeof *v);
        KN_ASSERT(v);
        if (p->nbufs) memcpy(v, p->bufs, (size_t)p->nbufs * sizeof *v);
        p->bufs = v;
        p->cap_bufs = nc;
    }
    p->bufs[p->nbufs++] = b;
    return b;
}

static kn_kernel *begin_kernel(kn_lower *L, const kn_node *n, const char *what) {
    kn_kprog *p = L->p;
    kn_kernel *k = kn_arena_alloc(p->arena, sizeof *k);
    char name[512];
    if (n)
        snprintf(name, sizeof name, "node '%s' (%s)", n->name[0] ? n->name : "<unnamed>",
                 n->op_type);
    else
        snprintf(name, sizeof name, "%s", what);
    k->name = kn_arena_strdup(p->arena, name);
    k->node = n;
    L->depth = 0;
    k->body = kl_block_new(L);
    L->stack[0] = k->body;
    L->owner[0] = NULL;
    L->depth = 1;
    if (p->nkernels == p->cap_kernels) {
        int nc = p->cap_kernels ? p->cap_kernels * 2 : 32;
        kn_kernel **v = kn_arena_array(p->arena, (size_t)nc, sizeof *v);
        KN_ASSERT(v);
        if (p->nkernels) memcpy(v, p->kernels, (size_t)p->nkernels * sizeof *v);
        p->kernels = v;
        p->cap_kernels = nc;
    }
    L->kidx = p->nkernels;
    p->kernels[p->nkernels++] = k;
    return k;
}

static kn_status check_static(kn_ctx *cx, const kn_node *n, const kn_value *v) {
    char buf[128];
    if (v->type.kind != KN_KIND_TENSOR)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "value '%s' is a %s; code generators support tensors only", v->name,
                       kn_type_str(&v->type, buf, sizeof buf));
    bool static_in = n && (kn_op_desc(n->op)->flags & OPF_SHAPE_FROM_DATA);
    for (int k = 0; static_in && k < n->nin; k++)
        static_in = !n->in[k] || kn_type_static(&n->in[k]->type);
    if (!kn_type_static(&v->type) && static_in && v->producer == n)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "value '%s' has shape %s, not known at compile time: this %s's output "
                       "shape depends on the data of its inputs, not only on their shapes, and "
                       "compiled code needs static shapes (%s)",
                       v->name, kn_type_str(&v->type, buf, sizeof buf), n->op_type,
                       kn_hint_text(cx, KN_HINT_NO_LOWERING));
    char why[600];
    if (!kn_type_static(&v->type)) kn_shape_why(v, why, sizeof why);
    if (!kn_type_static(&v->type))
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "value '%s' has shape %s, not known at compile time: %s (%s, or %s)",
                       v->name, kn_type_str(&v->type, buf, sizeof buf), why,
                       kn_hint_text(cx, KN_HINT_FIX_SHAPES), kn_hint_text(cx, KN_HINT_BIND));
    if (v->type.dtype == KN_UNDEF)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "value '%s' has no element type (%s): compiled code needs one", v->name,
                       kn_type_str(&v->type, buf, sizeof buf));
    if (v->type.dtype == KN_STRING && v->constant) /* no string literals in weights yet */
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "value '%s' is a constant string tensor inside a subgraph; code "
                       "generators take constant strings only in the main graph",
                       v->name);
    if (v->type.dtype == KN_STRING && n && !(kn_op_desc(n->op)->flags & OPF_STRINGS))
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "value '%s' holds strings, and code generation supports strings in "
                       "Cast, CastLike, Equal, RegexFullMatch, StringConcat and StringNormalizer "
                       "only",
                       v->name);
    return KN_OK;
}

/* The buffer of value v, created on first use. */
static kn_kbuf *value_buf(kn_lower *L, kn_kbuf **vbuf, const kn_value *v, const kn_node *n) {
    if (vbuf[v->id]) return vbuf[v->id];
    if (check_static(L->cx, n, v)) return NULL;
    kn_kbuf_kind kind = v->constant ? KB_CONST : KB_TEMP;
    kn_kbuf *b = kl_buffer(L->p, kind, v->type.dtype, v->type.rank, v->type.dims,
                           kind == KB_CONST ? "w" : "t");
    b->onnx = v->name;
    if (v->constant) b->data = v->constant;
    vbuf[v->id] = b;
    return b;
}

/* A constant string tensor v (a folded StringSplit, a string initializer) as a buffer
 * that a kernel of its own fills: its characters, byte by byte, into string storage,
 * and a pointer to each element's first byte. Code size grows with the characters:
 * meant for the short texts models carry (labels, vocabularies of a few words). */
static kn_status string_constant(kn_lower *L, const kn_value *v) {
    if (!kn_type_static(&v->type) || L->vbuf[v->id]) return KN_OK; /* check_static reports */
    const kn_tensor *t = v->constant;
    int64_t cnt = kn_type_numel(&v->type), total = 1;
    char **s = t->data;
    for (int64_t i = 0; i < cnt; i++) total += (int64_t)strlen(s[i]) + 1;
    begin_kernel(L, NULL, "string constant");
    kn_kbuf *chars = kl_string_storage(L, total);
    kn_kbuf *b = kl_buffer(L->p, KB_TEMP, KN_STRING, v->type.rank, v->type.dims, "t");
    b->onnx = v->name;
    int64_t off = 0;
    for (int64_t i = 0; i < cnt; i++) {
        kl_store(L, b, kx_int(L, i), kx_str(L, chars, kx_int(L, off)));
        for (const unsigned char *c = (const unsigned char *)s[i];; c++) {
            kl_store(L, chars, kx_int(L, off++), kx_const(L, KN_U8, *c));
            if (!*c) break;
        }
    }
    L->vbuf[v->id] = b;
    return KN_OK;
}

/* Every constant string tensor that the graph's nodes read or that it outputs. */
static kn_status string_constants(kn_lower *L, const kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++) {
            const kn_value *v = g->nodes[i]->in[k];
            if (v && v->constant && v->type.dtype == KN_STRING && string_constant(L, v))
                return L->cx->status;
        }
    for (int i = 0; i < g->nout; i++) {
        const kn_value *v = g->outputs[i];
        if (v->constant && v->type.dtype == KN_STRING && string_constant(L, v))
            return L->cx->status;
    }
    return KN_OK;
}

/* The graph's sequence/optional I/O groups, copied into the program's arena. */
static const kn_iogroup *copy_groups(kn_arena *a, const kn_iogroup *src, int n) {
    kn_iogroup *v = kn_arena_array(a, (size_t)n + 1, sizeof *v);
    KN_ASSERT(v);
    for (int i = 0; i < n; i++) {
        v[i] = src[i];
        v[i].name = kn_arena_strdup(a, src[i].name);
        memset(v[i].type.sym, 0, sizeof v[i].type.sym); /* borrowed from the graph */
    }
    return v;
}

/* Lowers node n into the current kernel. */
static kn_status lower_node(kn_lower *L, const kn_node *n) {
    kn_ctx *cx = L->cx;
    const kn_opdesc *d = kn_op_desc(n->op);
    if (!d->lower)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "code generation cannot lower the %s operator yet (%s)", n->op_type,
                       kn_hint_text(cx, KN_HINT_NO_LOWERING));
    KN_ASSERT(n->nin <= 256 && n->nout <= 256);
    kn_kbuf *inb[256] = {0}, *outb[256] = {0};
    for (int k = 0; k < n->nin; k++)
        if (n->in[k] && !(inb[k] = value_buf(L, L->vbuf, n->in[k], n))) return cx->status;
    for (int k = 0; k < n->nout; k++)
        if (n->out[k] && !(outb[k] = value_buf(L, L->vbuf, n->out[k], n))) return cx->status;
    int depth = L->depth;
    if (d->lower(L, n, inb, outb) || kn_failed(cx))
        return kn_failed(cx) ? cx->status : kn_diag(cx, n, KN_EINTERNAL, "lowering failed");
    KN_ASSERT(L->depth == depth);
    return KN_OK;
}

kn_status kl_subgraph(kn_lower *L, const kn_graph *body, kn_kbuf *const *in, kn_kbuf *const *out) {
    for (int i = 0; i < body->nin; i++) L->vbuf[body->inputs[i]->id] = in[i];
    L->subgraph++; /* the nodes share the kernel of the If/Loop/Scan: none describes it */
    for (int i = 0; i < body->nnodes; i++)
        if (lower_node(L, body->nodes[i])) {
            L->subgraph--;
            return L->cx->status;
        }
    L->subgraph--;
    for (int j = 0; j < body->nout; j++) {
        if (!out || !out[j]) continue;
        const kn_value *v = body->outputs[j];
        kn_kbuf *src = value_buf(L, L->vbuf, v, NULL);
        if (!src) return L->cx->status;
        if (src == out[j]) continue;
        if (src->numel != out[j]->numel || src->dtype != out[j]->dtype)
            return kn_diag(L->cx, NULL, KN_EUNSUPPORTED,
                           "subgraph output '%s' does not match the node's output type", v->name);
        kl_copy(L, out[j], kx_int(L, 0), src, kx_int(L, 0), kx_int(L, src->numel));
    }
    return KN_OK;
}

/* True if some output of n is present (ONNX allows a node whose outputs are all
 * omitted; it computes nothing anyone can see). */
static bool has_output(const kn_node *n) {
    for (int k = 0; k < n->nout; k++)
        if (n->out[k]) return true;
    return false;
}

kn_status kn_lower_graph(kn_ctx *cx, const kn_graph *g, const char *name, const kn_target *target,
                         kn_kprog **out) {
    *out = NULL;
    kn_arena *a = kn_arena_create();
    kn_kprog *p = kn_arena_alloc(a, sizeof *p);
    p->arena = a;
    p->const_arena = g->arena;
    p->name = kn_arena_strdup(a, name);
    p->target = target;
    kn_lower L = {.cx = cx, .p = p, .target = target, .max_string_bytes = g->max_string_bytes};
    kn_kbuf **vbuf = kn_arena_array(a, (size_t)kn_graph_value_count(g) + 1, sizeof *vbuf);
    L.vbuf = vbuf;
    p->nin = g->nin;
    p->nout = g->nout;
    p->ngroups = g->ngroups;
    p->groups = copy_groups(a, g->groups, g->ngroups);
    p->inputs = kn_arena_array(a, (size_t)g->nin + 1, sizeof *p->inputs);
    p->outputs = kn_arena_array(a, (size_t)g->nout + 1, sizeof *p->outputs);
    for (int i = 0; i < g->nin; i++) {
        const kn_value *v = g->inputs[i];
        if (check_static(cx, NULL, v)) goto fail;
        kn_kbuf *b = kl_buffer(p, KB_INPUT, v->type.dtype, v->type.rank, v->type.dims, "in");
        b->onnx = v->name;
        b->io = i;
        vbuf[v->id] = p->inputs[i] = b;
    }
    if (string_constants(&L, g)) goto fail;
    for (int i = 0; i < g->nout; i++) {
        const kn_value *v = g->outputs[i];
        if (!vbuf[v->id] && check_static(cx, v->producer, v)) goto fail;
        kn_kbuf *b = kl_buffer(p, KB_OUTPUT, v->type.dtype, v->type.rank, v->type.dims, "out");
        b->onnx = v->name;
        b->io = i;
        p->outputs[i] = b;
        /* an output produced by a node is written in place; one that is an input, a
         * constant or another output is copied at the end */
        if (v->producer && !vbuf[v->id]) vbuf[v->id] = b;
    }
    for (int i = 0; i < g->nnodes; i++) {
        if (!has_output(g->nodes[i])) continue; /* every output absent: nothing to compute */
        begin_kernel(&L, g->nodes[i], NULL);
        if (lower_node(&L, g->nodes[i])) goto fail;
    }
    for (int i = 0; i < g->nout; i++) {
        const kn_value *v = g->outputs[i];
        kn_kbuf *src = vbuf[v->id];
        if (src == p->outputs[i]) continue;
        if (!src && !(src = value_buf(&L, vbuf, v, NULL))) goto fail;
        begin_kernel(&L, NULL, "copy to graph output");
        kl_copy(&L, p->outputs[i], kx_int(&L, 0), src, kx_int(&L, 0), kx_int(&L, src->numel));
    }
    for (int i = 0; i < p->nbufs; i++) /* string storage, status: until the end */
        if (p->bufs[i]->whole_run && p->bufs[i]->first >= 0) p->bufs[i]->last = p->nkernels - 1;
    *out = p;
    return KN_OK;
fail:
    kn_arena_destroy(a);
    return cx->status;
}

void kn_kprog_destroy(kn_kprog *p) {
    if (p) kn_arena_destroy(p->arena);
}
