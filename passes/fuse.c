/* Operator fusion: an activation folded into the op that produces its input.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * A Relu whose input is the output of a head (Conv, or Add: ResNet's residual sum)
 * that nothing else reads is removed, and the head is marked with the attribute
 * `kn.activation = "Relu"` (kn_fused_relu). The interpreter (after any node) and the
 * heads' lowerings apply it to the head's result, so the output is written once
 * instead of written, read and written again. Graphs with subgraphs (If, Loop, Scan
 * bodies may read any outer value) are left alone. */
#include "ir/ops.h"
#include "passes/pass.h"

#include <string.h>

/* How many times v is read: node inputs and graph outputs. */
static int uses(const kn_graph *g, const kn_value *v) {
    int n = 0;
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++) n += g->nodes[i]->in[j] == v;
    for (int i = 0; i < g->nout; i++) n += g->outputs[i] == v;
    return n;
}

static bool has_subgraphs(const kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nattr; k++) {
            kn_attr_kind kind = g->nodes[i]->attrs[k].kind;
            if (kind == KN_ATTR_GRAPH || kind == KN_ATTR_GRAPHS) return true;
        }
    return false;
}

/* The node reading v, if exactly one node reads it once and it is not an output. */
static kn_node *sole_reader(const kn_graph *g, const kn_value *v) {
    if (uses(g, v) != 1) return NULL;
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++)
            if (g->nodes[i]->in[j] == v) return g->nodes[i];
    return NULL;
}

static void add_attr(kn_graph *g, kn_node *n, const char *name, const char *value) {
    kn_attr *a = kn_arena_array(g->arena, (size_t)n->nattr + 1, sizeof *a);
    KN_ASSERT(a);
    if (n->nattr) memcpy(a, n->attrs, (size_t)n->nattr * sizeof *a);
    a[n->nattr] =
        (kn_attr){.name = name, .kind = KN_ATTR_STRING, .s = value, .slen = strlen(value)};
    n->attrs = a;
    n->nattr++;
}

kn_status kn_pass_fuse(kn_ctx *cx, kn_graph *g) {
    (void)cx;
    if (has_subgraphs(g)) return KN_OK;
    int kept = 0;
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        const kn_value *x = n->op == KN_OP_RELU ? n->in[0] : NULL;
        kn_node *head = x ? x->producer : NULL;
        if (head && (head->op == KN_OP_CONV || head->op == KN_OP_ADD) && head->nout == 1 &&
            !kn_fused_relu(head) && sole_reader(g, x) == n &&
            x->type.dtype == n->out[0]->type.dtype) {
            kn_value *y = n->out[0];
            head->out[0]->producer = NULL; /* the head's old output is dead */
            head->out[0] = y;
            y->producer = head;
            add_attr(g, head, KN_ATTR_ACTIVATION, "Relu");
            continue; /* drop the Relu */
        }
        g->nodes[kept++] = n;
    }
    g->nnodes = kept;
    return KN_OK;
}
