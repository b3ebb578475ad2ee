/* libFuzzer target: arbitrary bytes as an ONNX model, compiled through the whole
 * default pipeline (graph passes, lowering, the kernel-IR passes, the memory plan) and
 * then through code emission: C text, the LLVM module (built and verified by
 * kn_llvm_build_module, not optimized) and OpenCL C. The input's size picks the target
 * the pipeline schedules for (the seeds stay valid models, and the tiles and vector
 * widths of several targets are exercised; the list is below). Models with more than 64 nodes are
 * skipped to bound the work per input. Errors must come back as kn_diag statuses; the emitters must
 * accept every program the pipeline produces. */
#include "codegen/c/emit_c.h"
#include "codegen/llvm/llvm_impl.h"
#include "codegen/opencl/emit_opencl.h"
#include "frontend/onnx.h"
#include "ir/kir.h"
#include "passes/pass.h"
#include "targets/target.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NODES 64

/* Every named target whose fields lead the schedule passes to choose differently (not
 * native, which depends on the host, nor those that repeat another's fields: cortex-m3
 * is cortex-m0plus's, cortex-m33 cortex-m4's): 512-bit vectors run as two 256-bit
 * halves (x86-64-zen4, kn_target_fp_split), without FMA and with the u8s8 dot product
 * (x86-64-vnni), soft float (cortex-m0plus), a known L1 (cortex-m7), Helium's 8 vector
 * registers and gathers (cortex-m55). */
static const char *const targets[] = {
    "generic",     "x86-64-avx2", "x86-64-avx512", "aarch64",   "cortex-m4", "opencl",
    "x86-64-zen4", "x86-64-vnni", "cortex-m0plus", "cortex-m7", "cortex-m55"};
#define NTARGETS ((int)(sizeof targets / sizeof targets[0]))

static void emit_c(kn_ctx *cx, const kn_kprog *p) {
    FILE *h = fopen("/dev/null", "w"), *c = fopen("/dev/null", "w");
    KN_ASSERT(h && c);
    kn_c_options opt = {0};
    kn_status st = kn_emit_c(cx, p, &opt, h, c, NULL);
    KN_ASSERT(st == cx->status);
    fclose(h);
    fclose(c);
}

static void emit_llvm(kn_ctx *cx, const kn_kprog *p) {
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = NULL;
    kn_status st = kn_llvm_build_module(cx, p, ctx, NULL, NULL, &m);
    KN_ASSERT(st == cx->status);
    if (m) LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
}

static void emit_opencl(kn_ctx *cx, const kn_kprog *p) {
    char *src = NULL;
    size_t len = 0;
    kn_status st = kn_emit_opencl(cx, p, &src, &len);
    KN_ASSERT(st == cx->status);
    free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const kn_target *t = kn_target_find(targets[size % NTARGETS]);
    KN_ASSERT(t);
    kn_ctx cx;
    kn_ctx_init(&cx, "fuzz.onnx");
    kn_graph *g = NULL;
    if (kn_onnx_load_memory(&cx, data, size, NULL, "fuzz.onnx", &g)) return 0;
    if (g->nnodes <= MAX_NODES) {
        kn_kprog *p = NULL;
        kn_status st = kn_compile_program_opts(&cx, g, "fuzz", t, NULL, &p);
        KN_ASSERT(st == cx.status);
        if (!st) {
            if (t->kind == KN_TARGET_GPU) {
                emit_opencl(&cx, p);
            } else {
                emit_c(&cx, p);
                if (!cx.status) emit_llvm(&cx, p);
            }
            kn_kprog_destroy(p);
        }
    }
    kn_graph_destroy(g);
    return 0;
}
