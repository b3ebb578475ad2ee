/* libFuzzer target: arbitrary bytes as an ONNX model, loaded, then run through
 * the default pipeline (shape,fold,shape). When that succeeds and every graph
 * input is a tensor of static type with fewer than 1e5 elements, the reference
 * interpreter runs the model on zero-filled inputs in a fresh arena, under a memory
 * limit of 256 MB (kn_ctx.max_memory: a model whose tensors would need more is
 * refused with KN_ELIMIT). To bound the work per input, models with more than 64 nodes
 * (counting subgraphs), any Loop node, or a value of more than 4 M elements (below)
 * are not interpreted. Errors must come back as kn_diag statuses. */
#include "frontend/onnx.h"
#include "ir/interp.h"
#include "passes/pass.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NODES 64
#define MAX_INPUT_NUMEL 100000
#define MAX_MEMORY ((size_t)256 << 20)
/* Values of more than 4 M elements: one operation over them costs seconds under ASan (a
 * Pad to 36.7 M elements, a Conv to 33 M outputs, an Einsum of 6.7 M outputs of 5 terms:
 * each a finding of its own, regressions/fuzz_passes), and their mutations as much, which
 * made CTest's run of 200,000 inputs time-bound (docs/robustness.md). Such models still go
 * through the passes; tests/fuzz/regressions.sh interprets the checked-in ones. A campaign
 * looking for slow operations sets KILN_FUZZ_MAX_NUMEL (0: no bound). */
static int64_t max_value_numel = (int64_t)1 << 22;

/* Nodes in g and its subgraphs; MAX_NODES + 1 for any Loop (never interpreted). */
static int count_nodes(const kn_graph *g) {
    int total = g->nnodes;
    for (int i = 0; i < g->nnodes && total <= MAX_NODES; i++) {
        const kn_node *n = g->nodes[i];
        if (n->op == KN_OP_LOOP) return MAX_NODES + 1;
        for (int k = 0; k < n->nattr; k++) {
            const kn_attr *at = &n->attrs[k];
            if (at->kind == KN_ATTR_GRAPH && at->g) total += count_nodes(at->g);
            for (int j = 0; at->kind == KN_ATTR_GRAPHS && j < at->n; j++)
                total += count_nodes(at->graphs[j]);
        }
    }
    return total;
}

/* Whether a value of g has a static type of more than max_value_numel elements. */
static bool has_huge_value(const kn_graph *g) {
    for (int i = 0; i < g->nvalues; i++) {
        const kn_type *t = &g->values[i]->type;
        if (t->kind == KN_KIND_TENSOR && kn_type_static(t) && max_value_numel > 0 &&
            kn_type_numel(t) > max_value_numel)
            return true;
    }
    return false;
}

static void run(kn_ctx *cx, const kn_graph *g) {
    if (count_nodes(g) > MAX_NODES || has_huge_value(g)) return;
    kn_arena *a = kn_arena_create();
    kn_tensor **in = kn_arena_array(a, (size_t)g->nin + 1, sizeof *in);
    kn_tensor **out = kn_arena_array(a, (size_t)g->nout + 1, sizeof *out);
    for (int i = 0; i < g->nin; i++) {
        const kn_type *t = &g->inputs[i]->type;
        if (t->kind != KN_KIND_TENSOR || t->dtype == KN_UNDEF || !kn_type_static(t) ||
            kn_type_numel(t) >= MAX_INPUT_NUMEL)
            goto done;
        in[i] = kn_tensor_new(a, t);
        KN_ASSERT(in[i]);
    }
    kn_status st = kn_interp_run(cx, g, a, in, out, 1);
    KN_ASSERT(st == cx->status);
done:
    kn_arena_destroy(a);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *e = getenv("KILN_FUZZ_MAX_NUMEL");
    if (e && *e) max_value_numel = strtoll(e, NULL, 10);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kn_ctx cx;
    kn_ctx_init(&cx, "fuzz.onnx");
    cx.max_memory = MAX_MEMORY;
    kn_graph *g = NULL;
    if (kn_onnx_load_memory(&cx, data, size, NULL, "fuzz.onnx", &g)) return 0;
    kn_status st = kn_pass_run_pipeline(&cx, g, KN_DEFAULT_PASSES, NULL, NULL);
    KN_ASSERT(st == cx.status);
    if (!st) run(&cx, g);
    kn_graph_destroy(g);
    return 0;
}
