/* libFuzzer target: arbitrary bytes as a schedule file (--schedule), read and applied
 * to one of a few small test models of the repository (pointwise tiles where a target's
 * FP units are narrower than its vectors, Winograd rows, a depthwise block with its
 * squeeze, pool bands, a Transpose and a Softmax row kernel) for one of several targets,
 * then emitted as C and as an LLVM module (OpenCL C for the GPU target). The input's size
 * picks the model and the target. A schedule a kernel cannot take must come back as a
 * kn_diag status naming the file; every program the pipeline accepts must emit. */
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
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const models[] = {
    "tests/models/pw_odd_cols/model.onnx", "tests/models/wino_rows/model.onnx",
    "tests/models/half_rate/model.onnx",   "tests/models/dw_odd_rows_se/model.onnx",
    "tests/models/pool_bands/model.onnx",  "tests/rows/model.onnx",
};
#define NMODELS ((int)(sizeof models / sizeof models[0]))
static const char *const targets[] = {"x86-64-zen4", "x86-64-avx512", "x86-64-avx2",
                                      "cortex-m4",   "generic",       "opencl"};
#define NTARGETS ((int)(sizeof targets / sizeof targets[0]))

/* The models' bytes, read once (a compile rewrites its graph, so each input loads one
 * afresh), and the file each input is written to for kn_schedule_read. */
static void *model_data[NMODELS];
static size_t model_size[NMODELS];
static char sched_path[64];

static void setup(void) {
    for (int i = 0; i < NMODELS; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", KILN_SOURCE_DIR, models[i]);
        FILE *f = fopen(path, "rb");
        KN_ASSERT(f);
        KN_ASSERT(fseek(f, 0, SEEK_END) == 0);
        long n = ftell(f);
        KN_ASSERT(n > 0 && fseek(f, 0, SEEK_SET) == 0);
        model_data[i] = malloc((size_t)n);
        KN_ASSERT(model_data[i] && fread(model_data[i], 1, (size_t)n, f) == (size_t)n);
        model_size[i] = (size_t)n;
        fclose(f);
    }
    snprintf(sched_path, sizeof sched_path, "/tmp/kiln_fuzz_schedule.%ld", (long)getpid());
}

static void emit(kn_ctx *cx, const kn_kprog *p, const kn_target *t) {
    if (t->kind == KN_TARGET_GPU) {
        char *src = NULL;
        size_t len = 0;
        KN_ASSERT(kn_emit_opencl(cx, p, &src, &len) == cx->status);
        free(src);
        return;
    }
    FILE *h = fopen("/dev/null", "w"), *c = fopen("/dev/null", "w");
    KN_ASSERT(h && c);
    kn_c_options opt = {0};
    KN_ASSERT(kn_emit_c(cx, p, &opt, h, c, NULL) == cx->status);
    fclose(h);
    fclose(c);
    if (cx->status) return;
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = NULL;
    KN_ASSERT(kn_llvm_build_module(cx, p, ctx, NULL, NULL, &m) == cx->status);
    if (m) LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!sched_path[0]) setup();
    int mi = (int)(size % NMODELS);
    const kn_target *t = kn_target_find(targets[size / NMODELS % NTARGETS]);
    KN_ASSERT(t);
    FILE *f = fopen(sched_path, "wb");
    KN_ASSERT(f && fwrite(data, 1, size, f) == size);
    fclose(f);
    kn_ctx cx;
    kn_ctx_init(&cx, "fuzz.onnx");
    kn_graph *g = NULL;
    KN_ASSERT(!kn_onnx_load_memory(&cx, model_data[mi], model_size[mi], NULL, "fuzz.onnx", &g));
    kn_compile_opts opts = {.schedule_file = sched_path};
    kn_kprog *p = NULL;
    kn_status st = kn_compile_program_opts(&cx, g, "fuzz", t, &opts, &p);
    KN_ASSERT(st == cx.status);
    /* a refused schedule names its file */
    KN_ASSERT(!st || strstr(cx.msg, sched_path) || strstr(cx.msg, "fuzz.onnx"));
    if (!st) {
        emit(&cx, p, t);
        kn_kprog_destroy(p);
    }
    kn_graph_destroy(g);
    return 0;
}
