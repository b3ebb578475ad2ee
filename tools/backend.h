/* Running a model on a backend (interp, c or llvm), shared by kiln run, check-onnx
 * and bench. */
#ifndef KN_BACKEND_H
#define KN_BACKEND_H

#include "codegen/profile.h"
#include "ir/graph.h"
#include "passes/pass.h"

struct kn_target;

struct kn_kprog;

/* The backends, for messages. */
#define BACKEND_NAMES "interp, c, llvm, opencl"

bool backend_known(const char *name);
/* False when the backend cannot run here (opencl: no OpenCL platform or runtime). */
bool backend_available(const char *name);

/* A model compiled once for a backend and given input shapes, callable many times. */
typedef struct backend_prog backend_prog;
/* Compiles g for the backend. For c and llvm, g's input types are fixed to in[]'s
 * shapes and g is transformed by the passes; c compiles the generated C with $CC at
 * -O1, then `cflags` (space-separated, may be NULL), then $KILN_CFLAGS; llvm JITs,
 * running each kernel's outermost parallel loop on `threads` threads of a pool the
 * program owns (runtime/kn_pool.h; 1: the calling thread only).
 * interp compiles nothing. opts (may be NULL) chooses the pipeline and -O level. *out
 * is owned by the caller (backend_release()); g must outlive it. */
kn_status backend_prepare(kn_ctx *cx, const char *backend, kn_graph *g, kn_tensor *const *in,
                          const char *cflags, int threads, const kn_compile_opts *opts,
                          backend_prog **out);
/* backend_prepare with per-kernel timing (prof may be NULL): the compiled code calls
 * prof->hook around each kernel of backend_kprog()'s program (opencl: the host waits
 * for each kernel to finish). Compiled backends only. */
kn_status backend_prepare_profiled(kn_ctx *cx, const char *backend, kn_graph *g,
                                   kn_tensor *const *in, const char *cflags, int threads,
                                   const kn_compile_opts *opts, const kn_profile *prof,
                                   backend_prog **out);
/* backend_prepare_profiled for target (NULL: the host's, as backend_prepare_profiled):
 * the passes tile for it, and llvm's JIT builds for its CPU and features. target must run
 * in this process (kind CPU, no triple of another architecture: a copy with triple NULL
 * for the host's; its features the host's CPU has): kiln tune --target. */
kn_status backend_prepare_for(kn_ctx *cx, const char *backend, kn_graph *g, kn_tensor *const *in,
                              const char *cflags, int threads, const kn_compile_opts *opts,
                              const kn_profile *prof, const struct kn_target *target,
                              backend_prog **out);
/* The program c, llvm and opencl run (kernels in order), or NULL for interp. */
const struct kn_kprog *backend_kprog(const backend_prog *bp);
/* Runs the prepared model on in[] (the shapes it was prepared for); outputs in a.
 * seed drives the interpreter's random ops. Calls on one handle must not overlap:
 * it owns one work arena. */
kn_status backend_call(kn_ctx *cx, backend_prog *bp, kn_arena *a, kn_tensor *const *in,
                       kn_tensor **out, uint64_t seed);
/* From now on, backend_call hands out the same output tensors on every call (compiled
 * programs without string outputs), allocated once in bp: a timing loop then measures
 * the model, not the page faults of fresh output memory. Each call overwrites the last
 * call's outputs; they stay valid until backend_release(). */
void backend_reuse_outputs(backend_prog *bp);
void backend_release(backend_prog *bp);
/* backend_prepare, one backend_call, backend_release. */
kn_status backend_run(kn_ctx *cx, const char *backend, kn_graph *g, kn_arena *a, kn_tensor **in,
                      kn_tensor **out, uint64_t seed, const kn_compile_opts *opts);
/* Default passes, lowering (vector widths for target; NULL: scalar) and memory plan: a
 * program to emit (kn_kprog_destroy). */
kn_status backend_compile_c(kn_ctx *cx, kn_graph *g, const char *name,
                            const struct kn_target *target, const kn_compile_opts *opts,
                            struct kn_kprog **out);
/* Marks (mark[i] = 1, one byte per graph input) the inputs whose values determine
 * the shape of some value, given the input tensors' shapes: those feeding integer
 * inputs of nodes with non-static outputs, or with all_inputs any of their inputs.
 * Returns how many. */
int backend_shape_inputs(kn_ctx *cx, kn_graph *g, kn_tensor *const *in, unsigned char *mark,
                         bool all_inputs);

#endif
