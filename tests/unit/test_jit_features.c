/* The JIT for a named target uses that target's instructions, not this CPU's: a kernel of
 * one 16-lane ldexp (KX_LDEXP, which the LLVM emitter gives AVX-512's vscalefps where the
 * machine has AVX-512F), JIT-compiled for x86-64-avx2 (`kiln tune --target x86-64-avx2`
 * does so on an AVX-512 host). Asking this CPU instead emitted the AVX-512 intrinsic into
 * a module for a machine without it, which LLVM cannot select (it aborts the process).
 * Also JIT-compiled for the native target. Both results are compared with ldexpf.
 * Skipped where the host is not x86-64 with AVX2. usage: test_jit_features */
#include "codegen/llvm/llvm.h"
#include "kir_fixture.h"
#include "passes/pass.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 64 };

static float xin[N], nin[N], got[N];

static void build(kn_ctx *cx, kn_kprog *p) {
    fx_prog(p, "x86-64-avx512");
    int64_t n = N;
    kn_kbuf *x = kl_buffer(p, KB_INPUT, KN_F32, 1, &n, "x");
    kn_kbuf *e = kl_buffer(p, KB_INPUT, KN_F32, 1, &n, "e");
    kn_kbuf *y = kl_buffer(p, KB_OUTPUT, KN_F32, 1, &n, "y");
    p->inputs = kn_arena_array(p->arena, 2, sizeof *p->inputs);
    p->outputs = kn_arena_array(p->arena, 1, sizeof *p->outputs);
    KN_ASSERT(p->inputs && p->outputs);
    p->inputs[0] = x, p->inputs[1] = e, p->outputs[0] = y;
    x->onnx = "x", e->onnx = "e", y->onnx = "y";
    e->io = 1;
    p->nin = 2, p->nout = 1;
    kn_lower *L = fx_kernel(cx, p);
    int vi = kl_for(L, N / 16);
    kn_kx *i = kx_mul(L, kx_var(L, vi), kx_int(L, 16));
    kl_store(L, y, i, kx_bin(L, KX_LDEXP, kx_vload(L, x, i, 16), kx_vload(L, e, i, 16)));
    kl_end(L);
    kl_builder_destroy(L);
    kn_kprog_lifetimes(p);
    CHECK(kn_kprog_verify(cx, p) == KN_OK);
    CHECK(kn_kpass_plan(cx, p) == KN_OK);
}

static void jit_case(kn_ctx *cx, const char *target) {
    kn_kprog p;
    build(cx, &p);
    kn_jit *j = NULL;
    /* as `kiln tune --target` runs it: the target's CPU and features on the host's triple */
    kn_target t = *kn_target_find(target);
    t.triple = NULL;
    kn_status st = kn_llvm_jit(cx, &p, &t, 2, NULL, &j);
    if (st) printf("%s: %s\n", target, cx->msg);
    CHECK(st == KN_OK);
    void *arena =
        p.arena_size ? aligned_alloc(KN_ARENA_ALIGN, (p.arena_size + 63) / 64 * 64) : NULL;
    kn_entry_fn fn = j ? kn_jit_entry(j) : NULL;
    const void *in[2] = {xin, nin};
    void *out[1] = {got};
    memset(got, 0, sizeof got);
    CHECK(fn && fn(in, out, NULL, arena) == 0);
    int bad = 0;
    for (int k = 0; k < N; k++) {
        bad += got[k] != ldexpf(xin[k], (int)nin[k]);
    }
    if (bad) printf("%s: %d of %d lanes wrong\n", target, bad, N);
    CHECK(bad == 0);
    free(arena);
    if (j) kn_jit_destroy(j);
    kn_kprog_destroy(&p);
}

int main(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) {
        printf("skipped: the host has no AVX2\n");
        return 0;
    }
#else
    printf("skipped: not an x86-64 host\n");
    return 0;
#endif
    for (int k = 0; k < N; k++) { /* normal, subnormal and overflowing results */
        xin[k] = (float)(k % 9 - 4) * 0.375f + (k % 2 ? 1e-30f : 0.0f);
        nin[k] = (float)((k * 37) % 301 - 150);
    }
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    jit_case(&cx, "x86-64-avx2");
    jit_case(&cx, "native");
    return TEST_DONE();
}
