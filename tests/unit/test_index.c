/* Pass 'index' (passes/index.c) on hand-built loop nests for cortex-m4: whether it lets the
 * C emitter declare loop indices int32_t (kn_kprog.index_bits 32), one case a line. The
 * expected widths are worked out by hand from the largest value C computes with 32 bits
 * once the indices are int32_t: a case is 32 only if every such value fits in int32. */
#include "kir_fixture.h"
#include "passes/pass.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

typedef enum shape {
    ROWS,      /* i<1000, j<8: y[i*8 + j] = x[i*8 + j]; largest 7999 */
    MUL_EDGE,  /* i<2: if (i * 2147483646 > 5) y[0] = 1: i * 2147483646 <= 2147483646 fits */
    MUL_OVER,  /* i<3: the same, 2 * 2147483646 does not */
    INTERMED,  /* i<30000: y[i*100000 - i*99999] = y[i]: the index fits, i*100000 does not */
    WIDE_LIT,  /* i<N: y[(i - 2147483647) + 2147483647]: the literal is INT64_C, so C
                  computes the sum with 64 bits; nothing 32-bit leaves int32 */
    LOCAL_ARG, /* i<30000: r = i*100000 (an int64_t local); y[r - i*99999 - ...]: the local
                  makes the subtraction 64-bit, but i*99999 is computed in int32 first */
    HELPER,    /* i<30000: y[min(i*100000, 5)]: the helper takes int64_t, its argument is
                  computed with 32 bits before the call */
    MASK,      /* i<3000: y[(i*1000001) & 7]: 2999 * 1000001 leaves int32 before the & */
    MASK_OK,   /* i<3000: y[(i*1001) & 7]: 2999 * 1001 fits */
    SELECT,    /* i<N: y[i < 5 ? i : i*70000000]: one arm reaches 63 * 70000000 */
    EXTENT,    /* a loop of 2^31 iterations (its index's last value does not fit) */
} shape;

enum { N = 64 };

static const struct {
    shape s;
    int bits; /* expected kn_kprog.index_bits */
} cases[] = {
    {ROWS, 32},  {MUL_EDGE, 32}, {MUL_OVER, 0}, {INTERMED, 0}, {WIDE_LIT, 32}, {LOCAL_ARG, 0},
    {HELPER, 0}, {MASK, 0},      {MASK_OK, 32}, {SELECT, 0},   {EXTENT, 0},
};

static kn_kx *I(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}

static void build(kn_lower *L, kn_kbuf *x, kn_kbuf *y, shape s) {
    kn_kx *one = kx_const(L, KN_F32, 1);
    switch (s) {
    case ROWS: {
        int i = kl_for(L, 1000), j = kl_for(L, 8);
        kn_kx *at = kx_add(L, kx_mul(L, kx_var(L, i), I(L, 8)), kx_var(L, j));
        kl_store(L, y, at, kx_load(L, x, at));
        kl_end_n(L, 2);
        return;
    }
    case MUL_EDGE:
    case MUL_OVER: {
        int i = kl_for(L, s == MUL_EDGE ? 2 : 3);
        kl_if(L, kx_bin(L, KX_GT, kx_mul(L, kx_var(L, i), I(L, 2147483646)), I(L, 5)));
        kl_store(L, y, I(L, 0), one);
        kl_end_n(L, 2);
        return;
    }
    case INTERMED: {
        int i = kl_for(L, 30000);
        kn_kx *at =
            kx_sub(L, kx_mul(L, kx_var(L, i), I(L, 100000)), kx_mul(L, kx_var(L, i), I(L, 99999)));
        kl_store(L, y, at, kx_load(L, y, kx_var(L, i)));
        kl_end(L);
        return;
    }
    case WIDE_LIT: {
        int i = kl_for(L, N);
        kn_kx *at = kx_add(L, kx_sub(L, kx_var(L, i), I(L, 2147483647)), I(L, 2147483647));
        kl_store(L, y, at, one);
        kl_end(L);
        return;
    }
    case LOCAL_ARG: {
        int i = kl_for(L, 30000);
        int r = kl_decl(L, KN_I64, kx_mul(L, kx_var(L, i), I(L, 100000)));
        kl_store(L, y, kx_sub(L, kx_var(L, r), kx_mul(L, kx_var(L, i), I(L, 99999))), one);
        kl_end(L);
        return;
    }
    case HELPER: {
        int i = kl_for(L, 30000);
        kl_store(L, y, kx_bin(L, KX_MIN, kx_mul(L, kx_var(L, i), I(L, 100000)), I(L, 5)), one);
        kl_end(L);
        return;
    }
    case MASK:
    case MASK_OK: {
        int i = kl_for(L, 3000);
        kn_kx *m = kx_mul(L, kx_var(L, i), I(L, s == MASK ? 1000001 : 1001));
        kl_store(L, y, kx_bin(L, KX_AND, m, I(L, 7)), one);
        kl_end(L);
        return;
    }
    case SELECT: {
        int i = kl_for(L, N);
        kn_kx *c = kx_bin(L, KX_LT, kx_var(L, i), I(L, 5));
        kl_store(L, y, kx_select(L, c, kx_var(L, i), kx_mul(L, kx_var(L, i), I(L, 70000000))), one);
        kl_end(L);
        return;
    }
    case EXTENT: {
        int i = kl_for(L, (int64_t)1 << 31);
        (void)i;
        kl_store(L, y, I(L, 0), one);
        kl_end(L);
        return;
    }
    }
}

/* kn_kprog.index_bits after pass 'index' of a program of case s's one kernel, for target. */
static int bits_of(shape s, const char *target) {
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_kprog p;
    fx_prog(&p, target);
    int64_t n = 8000;
    kn_kbuf *x = kl_buffer(&p, KB_INPUT, KN_F32, 1, &n, "x");
    kn_kbuf *y = kl_buffer(&p, KB_OUTPUT, KN_F32, 1, &n, "y");
    kn_lower *L = fx_kernel(&cx, &p);
    build(L, x, y, s);
    kl_builder_destroy(L);
    CHECK(kn_kpass_index(&cx, &p) == KN_OK);
    int bits = p.index_bits;
    kn_arena_destroy(p.arena);
    return bits;
}

int main(void) {
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int got = bits_of(cases[c].s, "cortex-m4");
        if (got != cases[c].bits)
            fprintf(stderr, "case %zu: index_bits %d, expected %d\n", c, got, cases[c].bits);
        CHECK(got == cases[c].bits);
        CHECK(bits_of(cases[c].s, "generic") == 0); /* index_bits 0: never narrowed */
    }
    return TEST_DONE();
}
