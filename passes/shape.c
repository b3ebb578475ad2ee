/* Static shape and type inference.
 * requires: nothing; breaks: nothing (sets kn_value.type).
 *
 * Runs each op's infer on tensors that carry the values' types and, for constants,
 * their data. A node whose inputs have unknown rank gets unknown outputs without
 * calling infer (ops with subgraphs excepted: they handle it). Subgraphs are
 * inferred when their node's infer asks (kn_shape_infer_graph). */
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

kn_status kn_shape_infer_node(kn_ctx *cx, kn_node *n, kn_arena *a) {
    const kn_opdesc *d = kn_op_desc(n->op);
    /* zeroed up to max_in: omitted trailing optional inputs read as NULL */
    int cap = n->nin > d->max_in ? n->nin : d->max_in;
    kn_tensor **in = kn_arena_array(a, (size_t)cap + 1, sizeof *in);
    kn_type *out = kn_arena_array(a, (size_t)n->nout + 1, sizeof *out);
    bool unknown = false;
    for (int k = 0; k < n->nin; k++) {
        kn_value *v = n->in[k];
        if (!v) continue;
        if (v->constant) {
            in[k] = v->constant;
        } else {
            in[k] = kn_tensor_typed(a, &v->type);
            if (v->type.kind == KN_KIND_TENSOR && v->type.rank < 0) unknown = true;
        }
    }
    for (int j = 0; j < n->nout; j++) out[j] = kn_type_unknown(KN_UNDEF), out[j].rank = 0;
    if (unknown && !(d->flags & OPF_SUBGRAPH)) {
        for (int j = 0; j < n->nout; j++)
            if (n->out[j]) n->out[j]->type = kn_type_unknown(KN_UNDEF);
        return KN_OK;
    }
    if (d->infer(cx, n, in, out) || kn_failed(cx)) return cx->status ? cx->status : KN_EINVAL;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j]) n->out[j]->type = out[j];
    return KN_OK;
}

kn_status kn_shape_infer_graph(kn_ctx *cx, kn_graph *g) {
    kn_arena *scratch = kn_arena_create();
    kn_status st = KN_OK;
    for (int i = 0; i < g->nnodes && !st; i++) st = kn_shape_infer_node(cx, g->nodes[i], scratch);
    kn_arena_destroy(scratch);
    return st;
}

kn_status kn_pass_shape(kn_ctx *cx, kn_graph *g) {
    return kn_shape_infer_graph(cx, g);
}

kn_status kn_shape_bind(kn_ctx *cx, kn_graph *g, const char *spec, int whole_shape) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return kn_diag(cx, NULL, KN_EINVAL, "expected NAME=VALUE, got '%s'", spec);
    size_t nl = (size_t)(eq - spec);
    if (whole_shape) {
        for (int i = 0; i < g->nin; i++) {
            kn_value *v = g->inputs[i];
            if (strlen(v->name) != nl || strncmp(v->name, spec, nl)) continue;
            int64_t dims[KN_MAX_RANK];
            int r = 0;
            const char *p = eq + 1;
            while (*p) {
                char *end;
                long long d = strtoll(p, &end, 10);
                if (end == p || d < 0 || r == KN_MAX_RANK)
                    return kn_diag(cx, NULL, KN_EINVAL, "bad shape in --shape '%s'", spec);
                dims[r++] = d;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                    return kn_diag(cx, NULL, KN_EINVAL, "bad shape in --shape '%s'", spec);
            }
            if (v->type.rank >= 0 && v->type.rank != r)
                return kn_diag(cx, NULL, KN_EINVAL, "--shape %s has rank %d, input has rank %d",
                               spec, r, v->type.rank);
            for (int k = 0; k < r; k++) {
                if (v->type.rank >= 0 && v->type.dims[k] >= 0 && v->type.dims[k] != dims[k])
                    return kn_diag(cx, NULL, KN_EINVAL,
                                   "--shape %s conflicts with dim %d = %lld of the model", spec, k,
                                   (long long)v->type.dims[k]);
                v->type.dims[k] = dims[k];
                v->type.sym[k] = NULL;
            }
            v->type.rank = r;
            return KN_OK;
        }
        return kn_diag(cx, NULL, KN_EINVAL, "--shape: the model has no input '%.*s'", (int)nl,
                       spec);
    }
    char *end;
    long long val = strtoll(eq + 1, &end, 10);
    if (end == eq + 1 || *end || val < 0)
        return kn_diag(cx, NULL, KN_EINVAL, "bad value in --dim '%s'", spec);
    int hits = 0;
    for (int i = 0; i < g->nin; i++) {
        kn_type *t = &g->inputs[i]->type;
        for (int k = 0; k < t->rank; k++)
            if (t->sym[k] && strlen(t->sym[k]) == nl && !strncmp(t->sym[k], spec, nl)) {
                t->dims[k] = val;
                t->sym[k] = NULL;
                hits++;
            }
    }
    if (!hits)
        return kn_diag(cx, NULL, KN_EINVAL, "--dim: no input dimension is named '%.*s'", (int)nl,
                       spec);
    return KN_OK;
}
