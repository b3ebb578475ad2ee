/* A guard on the size of the code the kernel passes build, which LLVM's optimization
 * time follows (#16's compile-time targets; not a timed test). In-kernel padding built
 * every convolution's micro-kernel up to 12 times (top, interior and bottom rows, each
 * with border pixels, full tiles and a partial one), and made ResNet-18's compile 4x
 * slower in LLVM (ScalarEvolution over functions with hundreds of loops); CPUs now pad
 * through a copy (passes/tile.c conv_pad_choice), microcontrollers still read in place.
 * The bounds sit between the two: loops and stores per kernel and in the whole program.
 * usage: test_kernel_size DIR (a folder with a ResNet-style model.onnx:
 * tests/bench_models/resnet18) */
#include "frontend/onnx.h"
#include "ir/kir.h"
#include "passes/pass.h"
#include "targets/target.h"
#include "test.h"

#include <stdio.h>

/* Reduced ResNet-18 (tests/bench_models/resnet18), largest kernel / program, measured
 * when this was written:
 *                   padded copy (now)            padding in place (before)
 *   x86-64-avx512   13 loops  46 stores / 228 loops   57 loops 165 stores / 582 loops
 *   x86-64-avx2     13 loops  46 stores / 261 loops   74 loops 300 stores / 925 loops
 *   generic         18 loops  85 stores / 291 loops   75 loops 300 stores / 956 loops
 * (stores: KS_STORE, KS_SET and KS_DECL statements). The stem pass (passes/stem.c) then
 * made the first convolution the largest kernel: 13-16 loops, 144 stores (avx512, avx2)
 * and 324 (generic), its tiles of output channels x vectors written out with their
 * row-end variants; it cost 0.07 s of the 0.76 s of user CPU time of ResNet-18's JIT
 * compile (interleaved, 3 pairs). The loop bounds still catch in-place padding. */
enum { KERNEL_LOOPS_MAX = 24, KERNEL_STORES_MAX = 360, PROGRAM_LOOPS_MAX = 400 };

typedef struct counts {
    int loops, stores;
} counts;

static void count(const kn_ks *s, counts *c) {
    if (!s) return;
    c->loops += s->kind == KS_FOR || s->kind == KS_WHILE;
    c->stores += s->kind == KS_STORE || s->kind == KS_SET || s->kind == KS_DECL;
    for (int i = 0; i < s->n; i++) count(s->body[i], c);
}

/* Compiles the model for target tname; the largest kernel's and the whole program's
 * counts, and how many convolutions read their padding in place (pad=1). */
static void measure(const char *dir, const char *tname, counts *max, counts *all, int *inplace) {
    char path[4096];
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_graph *g = NULL;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    CHECK(kn_onnx_load_file(&cx, path, &g) == KN_OK);
    *max = *all = (counts){0, 0};
    *inplace = 0;
    if (!g) return;
    kn_kprog *p = NULL;
    kn_compile_opts opts = {0};
    CHECK(kn_compile_program_opts(&cx, g, "m", kn_target_find(tname), &opts, &p) == KN_OK);
    if (!p) return;
    for (int k = 0; k < p->nkernels; k++) {
        counts c = {0, 0};
        count(p->kernels[k]->body, &c);
        max->loops = c.loops > max->loops ? c.loops : max->loops;
        max->stores = c.stores > max->stores ? c.stores : max->stores;
        all->loops += c.loops;
        all->stores += c.stores;
        *inplace += p->kernels[k]->sched.pad == 1;
    }
    printf("%-14s largest kernel: %4d loops %5d stores; program: %5d loops %6d stores; "
           "%d convs pad in place\n",
           tname, max->loops, max->stores, all->loops, all->stores, *inplace);
    kn_kprog_destroy(p);
    kn_graph_destroy(g);
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    counts max, all;
    int inplace;
    /* CPUs: the padded copy */
    const char *cpus[] = {"x86-64-avx512", "x86-64-avx2", "generic"};
    for (size_t i = 0; i < sizeof cpus / sizeof *cpus; i++) {
        measure(argv[1], cpus[i], &max, &all, &inplace);
        CHECK(all.loops > 0);
        CHECK(inplace == 0);
        CHECK(max.loops <= KERNEL_LOOPS_MAX);
        CHECK(max.stores <= KERNEL_STORES_MAX);
        CHECK(all.loops <= PROGRAM_LOOPS_MAX);
    }
    /* microcontrollers keep reading padding in place (RAM; issue 13) */
    measure(argv[1], "cortex-m4", &max, &all, &inplace);
    CHECK(inplace > 0);
    return TEST_DONE();
}
