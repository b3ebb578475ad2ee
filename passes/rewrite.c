/* The graph-rewrite toolkit of rewrite.h. */
#include "passes/rewrite.h"

#include "ir/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_subgraphs(const kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        if (kn_op_desc(g->nodes[i]->op)->flags & OPF_SUBGRAPH) return true;
    return false;
}

bool kn_rw_begin(kn_rw *rw, kn_ctx *cx, kn_graph *g) {
    *rw = (kn_rw){.cx = cx, .g = g, .n0 = g->nnodes};
    rw->cap = 2 * g->nnodes + 16;
    rw->dead = calloc((size_t)rw->cap, sizeof *rw->dead);
    rw->anchor = calloc((size_t)rw->cap, sizeof *rw->anchor);
    KN_ASSERT(rw->dead && rw->anchor);
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->id = i;
    return !has_subgraphs(g);
}

void kn_rw_end(kn_rw *rw) {
    kn_graph *g = rw->g;
    if (rw->changed) {
        int total = g->nnodes, k = 0;
        kn_node **list = malloc((size_t)total * sizeof *list);
        KN_ASSERT(list);
        for (int pos = 0; pos <= rw->n0; pos++) {
            for (int j = rw->n0; j < total; j++)
                if (rw->anchor[j] == pos && !rw->dead[j]) list[k++] = g->nodes[j];
            if (pos < rw->n0 && !rw->dead[pos]) list[k++] = g->nodes[pos];
        }
        memcpy(g->nodes, list, (size_t)k * sizeof *list);
        g->nnodes = k;
        free(list);
    }
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->id = i;
    free(rw->dead);
    free(rw->anchor);
    rw->dead = NULL;
    rw->anchor = NULL;
}

bool kn_rw_dead(const kn_rw *rw, const kn_node *n) {
    return n->id < rw->cap && rw->dead[n->id];
}

int kn_rw_uses(const kn_rw *rw, const kn_value *v) {
    int n = 0;
    const kn_graph *g = rw->g;
    for (int i = 0; i < g->nnodes; i++) {
        if (rw->dead[g->nodes[i]->id]) continue;
        for (int j = 0; j < g->nodes[i]->nin; j++) n += g->nodes[i]->in[j] == v;
    }
    return n + (kn_graph_is_output(g->root, v) ? 1 : 0);
}

kn_node *kn_rw_only_reader(const kn_rw *rw, const kn_value *v) {
    if (!v || kn_graph_is_output(rw->g->root, v)) return NULL;
    kn_node *r = NULL;
    const kn_graph *g = rw->g;
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        if (rw->dead[n->id]) continue;
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] == v) {
                if (r) return NULL;
                r = n;
            }
    }
    return r;
}

void kn_rw_kill(kn_rw *rw, kn_node *n) {
    rw->dead[n->id] = true;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j] && n->out[j]->producer == n) n->out[j]->producer = NULL;
    rw->changed = true;
}

kn_node *kn_rw_node(kn_rw *rw, int before, kn_op op, const char *name, int nin, kn_value **in,
                    int nout, kn_value **out) {
    kn_graph *g = rw->g;
    if (g->nnodes + 1 > rw->cap) {
        int nc = 2 * rw->cap;
        rw->dead = realloc(rw->dead, (size_t)nc * sizeof *rw->dead);
        rw->anchor = realloc(rw->anchor, (size_t)nc * sizeof *rw->anchor);
        KN_ASSERT(rw->dead && rw->anchor);
        memset(rw->dead + rw->cap, 0, (size_t)(nc - rw->cap) * sizeof *rw->dead);
        rw->cap = nc;
    }
    kn_node *n = kn_graph_add_node(g, op, name, nin, in, nout, out);
    n->id = g->nnodes - 1;
    rw->anchor[n->id] = before;
    rw->dead[n->id] = false;
    rw->changed = true;
    return n;
}

kn_value *kn_rw_value(kn_rw *rw, const char *like, const char *suffix, const kn_type *t) {
    char name[256];
    for (int k = 0;; k++) {
        snprintf(name, sizeof name, k ? "%s/%s%d" : "%s/%s", like, suffix, k);
        if (!kn_graph_find_value(rw->g, name)) break;
    }
    return kn_graph_add_value(rw->g, name, t);
}

kn_value *kn_rw_const(kn_rw *rw, const char *like, const char *suffix, kn_tensor *t) {
    kn_value *v = kn_rw_value(rw, like, suffix, &t->type);
    v->constant = t;
    return v;
}

void kn_rw_replace(kn_rw *rw, kn_value *from, kn_value *to) {
    kn_graph_replace_uses(rw->g, from, to);
    rw->changed = true;
}

bool kn_const_scalar(const kn_value *v, double *x) {
    if (!v || !v->constant || v->constant->type.kind != KN_KIND_TENSOR ||
        kn_tensor_numel(v->constant) != 1 || !v->constant->data)
        return false;
    *x = kn_tensor_get_f64(v->constant, 0);
    return true;
}

bool kn_float_static(const kn_value *v) {
    return v && v->type.kind == KN_KIND_TENSOR && kn_type_static(&v->type) &&
           kn_dtype_get(v->type.dtype)->is_float;
}
