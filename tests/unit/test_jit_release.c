/* kn_llvm_jit_releasing (what kiln run/bench and the host API use): once the JIT owns the
 * weights (the big ones taken over where they lie, the small ones copied), the program
 * and the graph hold none of its big weights (their data pointers NULL), and the
 * compiled code still gives the model's outputs, also after the program is destroyed.
 * usage: test_jit_release DIR (an ONNX test folder whose model has weights of 16 KiB and
 * more, which live in arena chunks of their own: tests/bench_models/mlp) */
#include "codegen/llvm/llvm.h"
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* A weight of KN_BIG_ALLOC bytes and more, which the JIT takes over where it lies (not a
 * copy): y = x + w (w: 2.4 MB) from a model file, run after the program and the graph
 * are destroyed; values derived by hand. */
static void test_big_weight(void) {
    enum { N = 600000 };
    static float w[N], x[N], y[N];
    for (int i = 0; i < N; i++) w[i] = (float)i, x[i] = 0.25f;
    static int64_t dn[] = {N};
    static char *in_xw[] = {"x", "w"}, *out_y[] = {"y"};
    model md;
    model_init(&md, 13);
    add_input(&md, "x", 1, dn);
    Onnx__TensorProto *tw = add_init(&md, "w", 1, dn, NULL, 0);
    tw->has_raw_data = 1;
    tw->raw_data = (ProtobufCBinaryData){sizeof w, (uint8_t *)w};
    add_node(&md, "Add", "add0", 2, in_xw, 1, out_y);
    add_output(&md, "y");
    kn_ctx cx;
    kn_graph *g = NULL;
    CHECK(load_file(&md, &cx, &g) == KN_OK);
    if (!g) return;
    kn_kprog *p = NULL;
    kn_compile_opts opts = {.release_constants = true};
    CHECK(kn_compile_program_opts(&cx, g, "m", kn_target_find("native"), &opts, &p) == KN_OK);
    kn_jit *j = NULL;
    if (p)
        CHECK(kn_llvm_jit_releasing(&cx, p, kn_target_find("native"), 2, NULL, NULL, &j) == KN_OK);
    size_t arena_size = p ? p->arena_size : 0;
    kn_kprog_destroy(p);
    kn_graph_destroy(g);
    if (!j) return;
    void *arena = aligned_alloc(KN_ARENA_ALIGN, (arena_size / KN_ARENA_ALIGN + 1) * KN_ARENA_ALIGN);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    CHECK(kn_jit_entry(j)(ins, outs, NULL, arena) == 0);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != (float)i + 0.25f;
    CHECK(bad == 0);
    free(arena);
    kn_jit_destroy(j);
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    test_big_weight();
    char path[4096];
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_graph *g = NULL;
    snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
    CHECK(kn_onnx_load_file(&cx, path, &g) == KN_OK);
    if (!g) return TEST_DONE();
    kn_kprog *p = NULL;
    kn_compile_opts opts = {.release_constants = true};
    CHECK(kn_compile_program_opts(&cx, g, "m", kn_target_find("native"), &opts, &p) == KN_OK);
    if (!p) return TEST_DONE();
    int big = 0, held = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (kn_kbuf_is_weight(p->bufs[i]) && kn_kbuf_bytes(p->bufs[i]) >= 16384) big++;
    CHECK(big > 0);
    kn_jit *j = NULL;
    CHECK(kn_llvm_jit_releasing(&cx, p, kn_target_find("native"), 2, NULL, NULL, &j) == KN_OK);
    for (int i = 0; i < p->nbufs; i++)
        if (kn_kbuf_is_weight(p->bufs[i]) && kn_kbuf_bytes(p->bufs[i]) >= 16384 &&
            p->bufs[i]->data->data)
            held++;
    CHECK(held == 0); /* the JIT's block is the only copy */
    /* the outputs, against the folder's, after the program and the graph are gone: the
     * weights the code reads are the JIT's */
    bool one_io = p->nin == 1 && p->nout == 1;
    size_t n = one_io ? (size_t)p->outputs[0]->numel : 0, arena_size = p->arena_size;
    kn_kprog_destroy(p);
    kn_graph_destroy(g);
    kn_arena *a = kn_arena_create();
    kn_tensor *in = NULL, *want = NULL;
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &in) == KN_OK);
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &want) == KN_OK);
    if (j && in && want && one_io) {
        float *out = calloc(n, sizeof *out);
        void *arena = aligned_alloc(
            KN_ARENA_ALIGN,
            (arena_size + KN_ARENA_ALIGN - 1) / KN_ARENA_ALIGN * KN_ARENA_ALIGN + KN_ARENA_ALIGN);
        const void *ins[1] = {in->data};
        void *outs[1] = {out};
        CHECK(kn_jit_entry(j)(ins, outs, NULL, arena) == 0);
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            float w = ((const float *)want->data)[i];
            bad += !(fabsf(out[i] - w) <= 1e-5f + 1e-3f * fabsf(w));
        }
        CHECK(n > 0 && bad == 0);
        free(out);
        free(arena);
    } else {
        CHECK(!"no JIT, input or output");
    }
    kn_arena_destroy(a);
    kn_jit_destroy(j);
    return TEST_DONE();
}
