/* The LLVM backend: kernel IR -> LLVM IR through the LLVM C API, then either JIT
 * (ORC LLJIT, in process) or an object/assembly/bitcode file for a target.
 *
 * The module holds one internal function per kernel and two entry points with the
 * generated C's contract (docs/generated-c.md): NAME_run(inputs..., outputs...,
 * arena) and NAME_run_array(inputs, outputs, weights, arena). Weights are constant
 * globals. The module is verified, then optimized with LLVMRunPasses
 * ("default<On>") given the real TargetMachine, so the vectorizers use the target's
 * costs. */
#ifndef KN_LLVM_H
#define KN_LLVM_H

#include "codegen/profile.h"
#include "ir/kir.h"
#include "targets/target.h"

typedef int (*kn_entry_fn)(const void *const *inputs, void *const *outputs, const void *weights,
                           void *arena);

typedef struct kn_jit kn_jit;

/* A parallel for with the Halide runtime's signature (halide_do_par_for; kn_pool_par_for): runs
 * task(user_context, i, closure) for every i in [min, min + size), in any order and
 * on any threads, and returns 0 (or the first nonzero a task returned). */
typedef int (*kn_par_task)(void *user_context, int i, unsigned char *closure);
typedef int (*kn_par_for)(void *user_context, kn_par_task task, int min, int size,
                          unsigned char *closure);

/* Compiles p in process for the host (target "native" or a host-compatible one).
 * With par_for, each kernel's outermost parallel loop (KN_LOOP_PARALLEL) runs its
 * iterations as tasks of par_for; NULL runs everything on the calling thread.
 * *out is owned by the caller: kn_jit_destroy() releases the code and memory. */
kn_status kn_llvm_jit(kn_ctx *cx, const kn_kprog *p, const kn_target *t, int opt_level,
                      kn_par_for par_for, kn_jit **out);
/* kn_llvm_jit with per-kernel timing hooks (prof may be NULL: none; see codegen/profile.h). */
kn_status kn_llvm_jit_profiled(kn_ctx *cx, const kn_kprog *p, const kn_target *t, int opt_level,
                               kn_par_for par_for, const kn_profile *prof, kn_jit **out);
/* kn_llvm_jit_profiled for a caller done with p's weights: the JIT takes each big
 * weight's data over where p (or its graph, p->const_arena) holds it in a chunk of its
 * own, without copying it, and copies the small ones into a block of its own, freeing
 * them in p; so they are held once. Afterwards p gives shapes and buffers, not
 * constants. */
kn_status kn_llvm_jit_releasing(kn_ctx *cx, kn_kprog *p, const kn_target *t, int opt_level,
                                kn_par_for par_for, const kn_profile *prof, kn_jit **out);
/* The NAME_run_array entry point; valid until kn_jit_destroy(). Thread-safe: calls may
 * run concurrently with separate arenas. */
kn_entry_fn kn_jit_entry(const kn_jit *j);
void kn_jit_destroy(kn_jit *j);

/* Writes p for target t as "obj" (ELF object), "asm" (assembly) or "llvm" (textual IR)
 * to path, through a temporary name renamed on success. In an object, weights of 1 KiB
 * and more are not given to LLVM: the code reads them through the hidden symbol
 * NAME_weights, defined in a section .rodata.NAME_weights that kiln appends to LLVM's
 * object (codegen/llvm/elf.h). The weight data p reads (its own or its graph's) is freed
 * as LLVM copies it or as it is written, so a big model's weights are held once:
 * afterwards p and its graph give their header (kn_emit_c_files with header_only) and
 * shapes, not code or constants. */
kn_status kn_llvm_emit_file(kn_ctx *cx, kn_kprog *p, const kn_target *t, int opt_level,
                            const char *kind, const char *path);

#endif
