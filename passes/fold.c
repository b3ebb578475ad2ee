/* Constant folding.
 * requires: nothing; breaks: nothing (removes nodes whose outputs became constants).
 *
 * A node whose inputs are all constants (or omitted) and that is neither random nor
 * has subgraphs is evaluated with the reference interpreter; its outputs become
 * constants and the node is dropped. */
#include "ir/interp.h"
#include "ir/ops.h"
#include "passes/pass.h"

static bool foldable(const kn_node *n) {
    const kn_opdesc *d = kn_op_desc(n->op);
    if (d->flags & (OPF_RANDOM | OPF_SUBGRAPH)) return false;
    for (int k = 0; k < n->nin; k++)
        if (n->in[k] && !n->in[k]->constant) return false;
    return true;
}

kn_status kn_pass_fold(kn_ctx *cx, kn_graph *g) {
    kn_tensor *in[256], *out[256];
    int kept = 0;
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        if (!foldable(n) || n->nin > 256 || n->nout > 256) {
            g->nodes[kept++] = n;
            continue;
        }
        for (int k = 0; k < 256; k++) in[k] = k < n->nin && n->in[k] ? n->in[k]->constant : NULL;
        if (kn_interp_node(cx, n, g->arena, in, out)) return cx->status;
        for (int j = 0; j < n->nout; j++) {
            if (!n->out[j]) continue;
            n->out[j]->constant = out[j];
            n->out[j]->type = out[j]->type;
            n->out[j]->producer = NULL;
        }
    }
    g->nnodes = kept;
    for (int i = 0; i < kept; i++) g->nodes[i]->id = i;
    return KN_OK;
}
