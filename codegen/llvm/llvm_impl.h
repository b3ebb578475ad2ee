/* Internals of the LLVM backend shared by its files. */
#ifndef KN_LLVM_IMPL_H
#define KN_LLVM_IMPL_H

#include "codegen/llvm/llvm.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

/* Builds the (verified, unoptimized) module of p in ctx; par_for as in kn_llvm_jit
 * (its address is built into the code). Weights are constant globals
 * of the module, or, when weights is not NULL, read from weights[buffer id] (addresses
 * in this process that outlive the code: the JIT owns them). */
kn_status kn_llvm_build_module(kn_ctx *cx, const kn_kprog *p, LLVMContextRef ctx,
                               const void *const *weights, kn_par_for par_for, LLVMModuleRef *out);
/* The same with per-kernel timing hooks called from NAME_run (prof: JIT only, its
 * addresses are built into the code; NULL: none), for a JIT whose target machine has
 * LLVM features jit_features (NULL: this CPU's, the native target). */
kn_status kn_llvm_build_module_profiled(kn_ctx *cx, const kn_kprog *p, LLVMContextRef ctx,
                                        const void *const *weights, kn_par_for par_for,
                                        const kn_profile *prof, const char *jit_features,
                                        LLVMModuleRef *out);
/* The module for a file (weights as constants), freeing each weight's data
 * (kn_kprog_release_data) once LLVM has copied it: p and its graph can then give their
 * shapes and header, not code. With blob_off, a weight whose blob_off[buffer id] is not
 * SIZE_MAX is instead read at that offset from the external hidden symbol blob_symbol
 * (64-byte aligned), which the caller defines (codegen/llvm/elf.h); its data is kept. */
kn_status kn_llvm_build_module_releasing(kn_ctx *cx, kn_kprog *p, LLVMContextRef ctx,
                                         const size_t *blob_off, const char *blob_symbol,
                                         LLVMModuleRef *out);
/* A TargetMachine for t (native: the host's CPU and features). */
kn_status kn_llvm_target_machine(kn_ctx *cx, const kn_target *t, int opt_level,
                                 LLVMTargetMachineRef *out);
/* Sets the module's triple and data layout for tm and runs default<O{opt}> (LLVM's loop
 * unrolling only for bare-metal t: elsewhere the kernel IR unrolled what pays). */
kn_status kn_llvm_optimize(kn_ctx *cx, LLVMModuleRef m, LLVMTargetMachineRef tm, const kn_target *t,
                           int opt_level);

#endif
