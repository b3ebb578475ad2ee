/* Running a model on a backend (interp or c), shared by kiln run and check-onnx. */
#ifndef KN_BACKEND_H
#define KN_BACKEND_H

#include "ir/graph.h"

struct kn_kprog;

bool backend_known(const char *name);
/* Runs g on inputs in (one per graph input) with the backend; outputs in a. For c,
 * g's input types are fixed to the inputs' shapes and g is transformed by passes. */
kn_status backend_run(kn_ctx *cx, const char *backend, kn_graph *g, kn_arena *a, kn_tensor **in,
                      kn_tensor **out, uint64_t seed);
/* Default passes, lowering and memory plan: a program to emit (kn_kprog_destroy). */
kn_status backend_compile_c(kn_ctx *cx, kn_graph *g, const char *name, struct kn_kprog **out);
/* Compiles dir/name.c into the shared object `so` with $CC (default cc) at -std=c99
 * -Wall -Wextra -Wpedantic -Werror. */
kn_status backend_cc(kn_ctx *cx, const char *dir, const char *name, const char *so);
/* Marks (mark[i] = 1, one byte per graph input) the inputs whose values determine
 * the shape of some value, given the input tensors' shapes: those feeding integer
 * inputs of nodes with non-static outputs, or with all_inputs any of their inputs.
 * Returns how many. */
int backend_shape_inputs(kn_ctx *cx, kn_graph *g, kn_tensor *const *in, unsigned char *mark,
                         bool all_inputs);

#endif
