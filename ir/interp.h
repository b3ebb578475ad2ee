/* The reference interpreter of the graph IR: the ground truth every backend and
 * pass is checked against, and what constant folding runs on.
 *
 * It walks the nodes in order; for each node it runs the op's infer on the actual
 * input tensors (so output shapes are exact even where static inference could not
 * know them), allocates the outputs and calls the op's eval. All tensors of a run
 * live in the arena the caller passes. */
#ifndef KN_INTERP_H
#define KN_INTERP_H

#include "ir/graph.h"

/* Checks inputs[i] against g->inputs[i]'s declared type (dtype, rank, known dims),
 * runs g, and sets outputs[0..g->nout) (allocated in a). seed drives random ops. */
kn_status kn_interp_run(kn_ctx *cx, const kn_graph *g, kn_arena *a, kn_tensor *const *inputs,
                        kn_tensor **outputs, uint64_t seed);

/* Called with every value a run computes (graph inputs first, then each node's
 * outputs, subgraph values included) as soon as it exists; t belongs to the run's
 * arena. Calibration (passes/ptq.c) collects activation statistics through it. */
typedef void (*kn_interp_observer)(void *user, const kn_value *v, const kn_tensor *t);
/* kn_interp_run, calling observe (if not NULL) with user for each value. */
kn_status kn_interp_run_observed(kn_ctx *cx, const kn_graph *g, kn_arena *a,
                                 kn_tensor *const *inputs, kn_tensor **outputs, uint64_t seed,
                                 kn_interp_observer observe, void *user);

/* Evaluates one node whose inputs are all constants (for constant folding): sets
 * out[0..n->nout). */
kn_status kn_interp_node(kn_ctx *cx, const kn_node *n, kn_arena *a, kn_tensor *const *in,
                         kn_tensor **out);

/* Checks that tensor t may be bound to graph input v; reports a mismatch naming v. */
kn_status kn_interp_check_input(kn_ctx *cx, const kn_value *v, const kn_tensor *t);

#endif
