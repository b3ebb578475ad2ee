/* The interpreter loop. Values are looked up in one environment array indexed by
 * kn_value.id, shared by the root graph and all subgraphs (ids are model-unique),
 * so a subgraph body sees outer values without copying. */
#include "ir/interp.h"
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "ir/ops/nn_attrs.h"

#include <stdint.h>
#include <string.h>

struct kn_exec {
    kn_ctx *cx;
    kn_arena *arena;
    kn_tensor **env; /* by value id */
    uint64_t rng;
    kn_interp_observer observe; /* or NULL */
    void *user;
};

kn_ctx *kn_exec_ctx(kn_exec *ex) {
    return ex->cx;
}

kn_arena *kn_exec_arena(kn_exec *ex) {
    return ex->arena;
}

/* Whether `bytes` more in the run's arena stay within cx->max_memory; if not, reports
 * the node (KN_ELIMIT) and returns false. */
static bool within_limit(kn_exec *ex, const kn_node *n, size_t bytes) {
    size_t max = ex->cx->max_memory, used = kn_arena_used(ex->arena);
    if (!max || (bytes <= max && used <= max - bytes)) return true;
    kn_diag(ex->cx, n, KN_ELIMIT,
            "the interpreter's memory limit of %zu bytes would be exceeded: its tensors hold "
            "%zu bytes and this node's outputs need %zu more",
            max, used, bytes);
    return false;
}

static size_t type_bytes(const kn_type *t) {
    int64_t c = kn_type_numel(t);
    size_t e = kn_dtype_get(t->dtype)->size;
    return c < 0 ? 0 : e && (uint64_t)c > SIZE_MAX / e ? SIZE_MAX : (size_t)c * e;
}

kn_tensor *kn_exec_tensor(kn_exec *ex, const kn_node *n, kn_dtype t, int rank,
                          const int64_t *dims) {
    kn_type ty = kn_type_make(t, rank, dims);
    if (kn_type_numel(&ty) >= 0 && !within_limit(ex, n, type_bytes(&ty))) return NULL;
    kn_tensor *x = kn_type_numel(&ty) < 0 ? NULL : kn_tensor_new(ex->arena, &ty);
    if (!x) {
        char buf[128];
        kn_diag(ex->cx, n, KN_ELIMIT, "output tensor %s is too large",
                kn_type_str(&ty, buf, sizeof buf));
    }
    return x;
}

double kn_exec_random(kn_exec *ex) {
    /* splitmix64: small, seedable, good enough for statistical tests */
    uint64_t z = (ex->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static kn_status run_node(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = ex->cx;
    const kn_opdesc *d = kn_op_desc(n->op);
    if (!d->infer || !d->eval)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "operator is not implemented by the interpreter");
    kn_type *types = kn_arena_array(ex->arena, (size_t)n->nout + 1, sizeof *types);
    for (int j = 0; j < n->nout; j++) types[j] = kn_type_unknown(KN_UNDEF), types[j].rank = 0;
    if (kn_op_infer(cx, n, in, types) || kn_failed(cx)) return cx->status ? cx->status : KN_EINVAL;
    size_t need = 0;
    for (int j = 0; j < n->nout; j++)
        if (kn_type_static(&types[j])) {
            size_t b = type_bytes(&types[j]);
            need = need > SIZE_MAX - b ? SIZE_MAX : need + b;
        }
    if (!within_limit(ex, n, need)) return cx->status;
    for (int j = 0; j < n->nout; j++) {
        out[j] = NULL;
        if (kn_type_static(&types[j])) {
            out[j] = kn_tensor_new(ex->arena, &types[j]);
            if (!out[j]) {
                char buf[128];
                return kn_diag(cx, n, KN_ELIMIT, "output %d of type %s is too large", j,
                               kn_type_str(&types[j], buf, sizeof buf));
            }
        }
    }
    if (d->eval(ex, n, in, out) || kn_failed(cx)) return cx->status ? cx->status : KN_EINVAL;
    bool xcl, ycl; /* a channels-last output: the Conv applied its epilogue (ir/ops/nn.c) */
    if (out[0] && kn_node_attr(n, KN_ATTR_EPILOGUE) && !(kn_conv_layout(n, &xcl, &ycl) && ycl)) {
        kn_epilogue e;
        if (kn_epilogue_of(cx, n, &e) || kn_epilogue_eval(cx, n, &e, out[0], in)) return cx->status;
    }
    for (int j = 0; j < n->nout; j++)
        if (n->out[j] && !out[j])
            return kn_diag(cx, n, KN_EINTERNAL, "output %d was not produced", j);
    return KN_OK;
}

static kn_status run_graph(kn_exec *ex, const kn_graph *g, kn_tensor *const *inputs,
                           kn_tensor **outputs) {
    kn_ctx *cx = ex->cx;
    for (int i = 0; i < g->nvalues; i++)
        if (g->values[i]->constant) ex->env[g->values[i]->id] = g->values[i]->constant;
    for (int i = 0; i < g->nin; i++) ex->env[g->inputs[i]->id] = inputs[i];
    kn_tensor *inb[256], *outb[256];
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        KN_ASSERT(n->nin <= 256 && n->nout <= 256);
        /* omitted trailing optional inputs read as NULL, as ir/ops.h promises */
        for (int k = n->nin; k < kn_op_desc(n->op)->max_in && k < 256; k++) inb[k] = NULL;
        for (int k = 0; k < n->nin; k++) {
            /* an outer constant seen from a subgraph folded on its own has no env entry */
            inb[k] = n->in[k] ? ex->env[n->in[k]->id] ? ex->env[n->in[k]->id] : n->in[k]->constant
                              : NULL;
            if (n->in[k] && !inb[k])
                return kn_diag(cx, n, KN_EINVAL, "input '%s' has no value", n->in[k]->name);
        }
        if (run_node(ex, n, inb, outb)) return cx->status;
        for (int k = 0; k < n->nout; k++)
            if (n->out[k]) ex->env[n->out[k]->id] = outb[k];
        for (int k = 0; ex->observe && k < n->nout; k++)
            if (n->out[k] && outb[k]) ex->observe(ex->user, n->out[k], outb[k]);
    }
    for (int i = 0; i < g->nout; i++) {
        outputs[i] = ex->env[g->outputs[i]->id];
        if (!outputs[i])
            return kn_diag(cx, NULL, KN_EINVAL, "graph output '%s' has no value",
                           g->outputs[i]->name);
    }
    return KN_OK;
}

kn_status kn_exec_subgraph(kn_exec *ex, const kn_graph *body, kn_tensor *const *in,
                           kn_tensor **out) {
    return run_graph(ex, body, in, out);
}

kn_status kn_interp_check_input(kn_ctx *cx, const kn_value *v, const kn_tensor *t) {
    const kn_type *want = &v->type;
    char a[128], b[128];
    if (t->type.kind != want->kind)
        return kn_diag(cx, NULL, KN_EINVAL, "input '%s' is a %s, the model expects %s", v->name,
                       kn_type_str(&t->type, a, sizeof a), kn_type_str(want, b, sizeof b));
    if (want->dtype && t->type.dtype && t->type.dtype != want->dtype)
        return kn_diag(cx, NULL, KN_EINVAL, "input '%s' has type %s, the model expects %s", v->name,
                       kn_type_str(&t->type, a, sizeof a), kn_type_str(want, b, sizeof b));
    if (want->kind != KN_KIND_TENSOR || want->rank < 0) return KN_OK;
    bool ok = t->type.rank == want->rank;
    for (int i = 0; ok && i < want->rank; i++)
        if (want->dims[i] >= 0 && want->dims[i] != t->type.dims[i]) ok = false;
    if (!ok)
        return kn_diag(cx, NULL, KN_EINVAL, "input '%s' has shape %s, the model expects %s",
                       v->name, kn_type_str(&t->type, a, sizeof a), kn_type_str(want, b, sizeof b));
    return KN_OK;
}

kn_status kn_interp_run(kn_ctx *cx, const kn_graph *g, kn_arena *a, kn_tensor *const *inputs,
                        kn_tensor **outputs, uint64_t seed) {
    return kn_interp_run_observed(cx, g, a, inputs, outputs, seed, NULL, NULL);
}

kn_status kn_interp_run_observed(kn_ctx *cx, const kn_graph *g, kn_arena *a,
                                 kn_tensor *const *inputs, kn_tensor **outputs, uint64_t seed,
                                 kn_interp_observer observe, void *user) {
    for (int i = 0; i < g->nin; i++) {
        if (!inputs[i])
            return kn_diag(cx, NULL, KN_EINVAL, "no value given for input '%s'",
                           g->inputs[i]->name);
        if (kn_interp_check_input(cx, g->inputs[i], inputs[i])) return cx->status;
    }
    kn_exec ex = {cx, a, NULL, seed, observe, user};
    for (int i = 0; observe && i < g->nin; i++) observe(user, g->inputs[i], inputs[i]);
    ex.env = kn_arena_array(a, (size_t)kn_graph_value_count(g) + 1, sizeof *ex.env);
    KN_ASSERT(ex.env);
    return run_graph(&ex, g, inputs, outputs);
}

kn_status kn_interp_node(kn_ctx *cx, const kn_node *n, kn_arena *a, kn_tensor *const *in,
                         kn_tensor **out) {
    kn_exec ex = {cx, a, NULL, 0, NULL, NULL};
    ex.env = kn_arena_array(a, (size_t)kn_graph_value_count(n->graph) + 1, sizeof *ex.env);
    return run_node(&ex, n, in, out);
}
