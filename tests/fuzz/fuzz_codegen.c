/* libFuzzer target: arbitrary bytes as an ONNX model, compiled through the whole
 * default pipeline (graph passes, lowering, the kernel-IR passes, the memory plan) and
 * then through code emission: C text, the LLVM module (built and verified by
 * kn_llvm_build_module, not optimized) and OpenCL C. The input's size picks the target
 * the pipeline schedules for (the seeds stay valid models, and the tiles and vector
 * widths of several targets are exercised; the list is below). KILN_FUZZ_TARGETS, a
 * comma-separated subset of that list, restricts a campaign to those targets (tools/fuzz.sh,
 * docs/robustness.md). Models with more than 64 nodes are skipped to bound the work per
 * input. Errors must come back as kn_diag statuses; the emitters must accept every program
 * the pipeline produces. */
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
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
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

/* The targets inputs pick among: all of them, or those KILN_FUZZ_TARGETS names (in the
 * order of targets[]); a name not in targets[] stops the campaign before its first input
 * (LLVMFuzzerInitialize). */
static const char *chosen[NTARGETS];
static int nchosen;

static void choose_targets(void) {
    const char *env = getenv("KILN_FUZZ_TARGETS");
    for (int i = 0; i < NTARGETS; i++) {
        size_t n = strlen(targets[i]);
        bool named = !env || !*env;
        for (const char *p = env; p && *p && !named;) {
            size_t len = strcspn(p, ",");
            named = len == n && !strncmp(p, targets[i], n);
            p += len + (p[len] == ',');
        }
        if (named) chosen[nchosen++] = targets[i];
    }
    for (const char *p = env; p && *p;) {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (int i = 0; i < NTARGETS && !known; i++)
            known = strlen(targets[i]) == len && !strncmp(p, targets[i], len);
        if (!known) {
            fprintf(stderr, "fuzz_codegen: KILN_FUZZ_TARGETS names '%.*s', not one of:", (int)len,
                    p);
            for (int i = 0; i < NTARGETS; i++) fprintf(stderr, " %s", targets[i]);
            fputc('\n', stderr);
            exit(2);
        }
        p += len + (p[len] == ',');
    }
    fprintf(stderr, "fuzz_codegen: %d target%s:", nchosen, nchosen == 1 ? "" : "s");
    for (int i = 0; i < nchosen; i++) fprintf(stderr, " %s", chosen[i]);
    fputc('\n', stderr);
}

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

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    choose_targets();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    KN_ASSERT(nchosen > 0);
    const kn_target *t = kn_target_find(chosen[size % (size_t)nchosen]);
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
