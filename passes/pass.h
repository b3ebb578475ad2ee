/* Graph passes and the pipeline that runs them.
 *
 * A pass is `kn_status kn_pass_NAME(kn_ctx *cx, kn_graph *g)`, registered once in
 * the table in passes/pass.c with a one-line description. Pipelines are strings
 * ("shape,fold"), as in LLVMRunPasses. After every pass the verifier runs; with
 * dump_after set the graph is printed after that pass. */
#ifndef KN_PASS_H
#define KN_PASS_H

#include "ir/graph.h"

#include <stdio.h>

struct kn_target;

kn_status kn_pass_shape(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_fold(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_fuse(kn_ctx *cx, kn_graph *g);

/* Static shape inference of g and its subgraphs (kn_pass_shape is this on the root). */
kn_status kn_shape_infer_graph(kn_ctx *cx, kn_graph *g);
/* Infers the output types of node n alone (scratch tensors in a). */
kn_status kn_shape_infer_node(kn_ctx *cx, kn_node *n, kn_arena *a);
/* Constant-folds node n if its inputs are constants (see passes/fold.c): its outputs
 * become constants and *folded is set; the caller drops n from its graph. */
kn_status kn_fold_node(kn_ctx *cx, kn_node *n, kn_arena *scratch, bool *folded);

/* Fixes symbolic/unknown input dims: spec "NAME=VALUE" (every dim named NAME) or
 * "INPUT=1,3,224,224" (the whole shape of graph input INPUT). */
kn_status kn_shape_bind(kn_ctx *cx, kn_graph *g, const char *spec, int whole_shape);

struct kn_kprog;
/* Kernel-IR pass: in-place reuse and arena offsets for every temporary (passes/plan.c). */
kn_status kn_plan_memory(kn_ctx *cx, struct kn_kprog *p);
/* Kernel-IR pass: marks independent top-level loops KN_LOOP_PARALLEL (passes/parallel.c). */
kn_status kn_pass_parallel(kn_ctx *cx, struct kn_kprog *p);

/* Default passes, lowering and the memory plan: a program ready to emit, named
 * `name` (a C identifier); free with kn_kprog_destroy(). */
kn_status kn_compile_program(kn_ctx *cx, kn_graph *g, const char *name,
                             const struct kn_target *target, struct kn_kprog **out);

/* Default pipeline for inspect and compile. */
#define KN_DEFAULT_PASSES "shape,fold,shape,fuse"

/* Runs the comma-separated pipeline; unknown names are a KN_EINVAL error. */
kn_status kn_pass_run_pipeline(kn_ctx *cx, kn_graph *g, const char *pipeline,
                               const char *dump_after, FILE *dump);
/* Prints the registered passes, one per line. */
void kn_pass_list(FILE *f);

#endif
