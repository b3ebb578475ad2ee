/* The word store (kl_store_word, ir/kir.h) on hand-built programs, one case a line: the
 * verifier's bounds of a constant index (a word store writes 4 bytes: the last one in
 * bounds starts at n - 4) and its operand rules, and what the C99 and OpenCL C printers write for
 * it. The emitted code is run by the quant tests (the 8-bit channel tiles' stores, tile.c). */
#include "kir_fixture.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

enum { N = 10 };

typedef enum shape {
    AT,    /* y[at] word = 0x04030201 */
    LOOP,  /* for i < 2: y[4i + at] word = i */
    VALUE, /* y[0] word = an f32 (not an i32) */
} shape;

static const struct {
    shape s;
    int at;
    kn_dtype yt;
    bool ok; /* expected verifier result */
} cases[] = {
    {AT, 0, KN_U8, true},   {AT, N - 4, KN_U8, true}, {AT, N - 3, KN_U8, false},
    {AT, -1, KN_U8, false}, {AT, N - 4, KN_I8, true}, {AT, 0, KN_F32, false},
    {LOOP, 2, KN_U8, true}, {VALUE, 0, KN_U8, false},
};

/* p as a program of one kernel holding case c's store; returns the store. */
static kn_ks *build(kn_ctx *cx, kn_kprog *p, int c) {
    fx_prog(p, "generic");
    int64_t n = N;
    kn_kbuf *y = kl_buffer(p, KB_OUTPUT, KN_U8, 1, &n, "y");
    kn_lower *L = fx_kernel(cx, p);
    switch (cases[c].s) {
    case AT: kl_store_word(L, y, kx_int(L, cases[c].at), kx_const(L, KN_I32, 0x04030201)); break;
    case LOOP: {
        int i = kl_for(L, 2);
        kl_store_word(L, y,
                      kx_add(L, kx_mul(L, kx_var(L, i), kx_int(L, 4)), kx_int(L, cases[c].at)),
                      kx_var(L, i));
        kl_end(L);
        break;
    }
    case VALUE: kl_store_word(L, y, kx_int(L, 0), kx_const(L, KN_I32, 1)); break;
    }
    kn_kx *f32 = kx_const(L, KN_F32, 1);
    kl_builder_destroy(L);
    kn_ks *b = fx_last_store(p->kernels[0]);
    /* cases whose buffer or value breaks the rules: set after building (kl_store_word
     * asserts them) */
    if (cases[c].yt != KN_U8) y->dtype = cases[c].yt;
    if (cases[c].s == VALUE) b->value = f32;
    return b;
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
        if (c == 1) { /* y0[6 word] = 0x04030201 */
            char text[4096];
            fx_print(&p, s, KN_C99, true, text, sizeof text);
            CHECK(strstr(text, "kn_stw(y0 + 6, 67305985);") != NULL);
            CHECK(strstr(text, "memcpy(p, &v, 4)") != NULL); /* the helper, little-endian */
            fx_print(&p, s, KN_OPENCL, true, text, sizeof text);
            CHECK(strstr(text, "kn_stw") == NULL); /* no memcpy in OpenCL C: the bytes */
            CHECK(strstr(text, "y0[6 + 0] = (uchar)(kn_w >> 0);") != NULL);
            CHECK(strstr(text, "y0[6 + 3] = (uchar)(kn_w >> 24);") != NULL);
            FILE *f = fmemopen(text, sizeof text, "w");
            kn_kprog_print(&p, f);
            fclose(f);
            CHECK(strstr(text, "y0[6 word] = 67305985") != NULL);
        }
        kn_arena_destroy(p.arena);
    }
    return TEST_DONE();
}
