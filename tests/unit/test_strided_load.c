/* The strided vector load (kx_vload_strided, ir/kir.h) on hand-built programs, one case a
 * line: the verifier's bounds of a constant index (a load of 4 lanes with step s reads the
 * span 3s + 1 from its index, so the last one in bounds of 10 elements starts at 9 - 3s)
 * and its operand rules, and what the kernel-IR, C99 and OpenCL C printers write for it.
 * The emitted code (LLVM's shufflevectors too) is run by the quant tests on every backend
 * (tests/quant/models/qdq_pool_strided, the stride-2 and -3 8-bit pools of pool.c). */
#include "kir_fixture.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

enum { N = 10 };

static const struct {
    int at, step;
    bool ok; /* expected verifier result */
} cases[] = {
    {0, 2, true}, {3, 2, true},  {4, 2, false}, {-1, 2, false},
    {0, 3, true}, {1, 3, false}, {0, 1, false}, /* a step of 1 is a plain vector load */
};

/* p as a program of one kernel: y[0 x4] = x[at x4 step s]; returns the store. */
static kn_ks *build(kn_ctx *cx, kn_kprog *p, int c) {
    fx_prog(p, "generic");
    int64_t n = N, four = 4;
    kn_kbuf *x = kl_buffer(p, KB_INPUT, KN_U8, 1, &n, "x");
    kn_kbuf *y = kl_buffer(p, KB_OUTPUT, KN_U8, 1, &four, "y");
    kn_lower *L = fx_kernel(cx, p);
    kn_kx *ld = kx_vload_strided(L, x, kx_int(L, cases[c].at), 4, 2);
    ld->stride = cases[c].step; /* set after building: kx_vload_strided asserts step >= 2 */
    kl_store(L, y, kx_int(L, 0), ld);
    kl_builder_destroy(L);
    return fx_last_store(p->kernels[0]);
}

int main(void) {
    for (int c = 0; c < (int)(sizeof cases / sizeof *cases); c++) {
        kn_ctx cx;
        kn_ctx_init(&cx, NULL);
        kn_kprog p;
        kn_ks *s = build(&cx, &p, c);
        bool ok = kn_kprog_verify(&cx, &p) == KN_OK;
        if (ok != cases[c].ok)
            fprintf(stderr, "case %d: verify %d, expected %d\n", c, ok, cases[c].ok);
        CHECK(ok == cases[c].ok);
        if (c == 1) { /* y[0 x4] = x[3 x4 step 2]: lanes x[3], x[5], x[7], x[9] */
            char text[4096];
            for (int d = 0; d < 2; d++) {
                fx_print(&p, s, d ? KN_OPENCL : KN_C99, false, text, sizeof text);
                if (!strstr(text, "[3 + kn_l * 2]")) fprintf(stderr, "%s\n", text);
                CHECK(strstr(text, "[3 + kn_l * 2]") != NULL);
            }
            FILE *f = fmemopen(text, sizeof text, "w");
            kn_kprog_print(&p, f);
            fclose(f);
            CHECK(strstr(text, "[3 x4 step 2]") != NULL);
        }
        kn_arena_destroy(p.arena);
    }
    return TEST_DONE();
}
