/* Band views (passes/views.c, through the plan pass) on hand-built programs for cortex-m4,
 * one case a line: a Concat of H (1x2x2x4) and V (1x2x3x4) along rows into C (1x2x5x4),
 * read whole by a last kernel; V's producer writes V in the case's way. A view of V in C
 * at row 2 (element i of V at C's (i / 12) * 20 + i % 12 + 8) is taken where every store
 * of V decomposes into channel planes and in-plane rows (expected values by hand); then
 * the Concat's copy of V is gone and the producer's store index is C's, checked at every
 * iteration of its loops against that formula. */
#include "kir_fixture.h"
#include "passes/pass.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

typedef enum shape {
    PLANES,  /* c<2, r<3, w<4: V[c*12 + r*4 + w]: a view */
    FLAT,    /* i<24: V[i]: i crosses the channel planes: no view */
    STRIDED, /* r<3, w<4: V[r*4 + w + k*12], k < 2 lanes (a strided store): a view, stride 20 */
    LOCAL,   /* c<2, r<3: t = c*12 + r*4 (a local); w<4: V[t + w]: a view */
    OVER,    /* r<3, w<4: V[r*5 + w] (rows of 5): r = 2 reaches the next plane: no view */
} shape;

static const struct {
    shape s;
    bool view;
} cases[] = {
    {PLANES, true}, {FLAT, false}, {STRIDED, true}, {LOCAL, true}, {OVER, false},
};

static kn_kx *I(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}

static kn_kx *V3(kn_lower *L, int c, int r, int w) { /* c*12 + r*4 + w */
    return kx_add(L, kx_add(L, kx_mul(L, kx_var(L, c), I(L, 12)), kx_mul(L, kx_var(L, r), I(L, 4))),
                  kx_var(L, w));
}

static void producer(kn_lower *L, kn_kbuf *x, kn_kbuf *v, shape s) {
    switch (s) {
    case PLANES: {
        int c = kl_for(L, 2), r = kl_for(L, 3), w = kl_for(L, 4);
        kl_store(L, v, V3(L, c, r, w), kx_load(L, x, V3(L, c, r, w)));
        kl_end_n(L, 3);
        return;
    }
    case FLAT: {
        int i = kl_for(L, 24);
        kl_store(L, v, kx_var(L, i), kx_load(L, x, kx_var(L, i)));
        kl_end(L);
        return;
    }
    case STRIDED: {
        int r = kl_for(L, 3), w = kl_for(L, 4);
        kn_kx *at = kx_add(L, kx_mul(L, kx_var(L, r), I(L, 4)), kx_var(L, w));
        kl_store_strided(L, v, at, kx_vload_strided(L, x, at, 2, 12), 12);
        kl_end_n(L, 2);
        return;
    }
    case LOCAL: {
        int c = kl_for(L, 2), r = kl_for(L, 3);
        int t =
            kl_decl(L, KN_I64,
                    kx_add(L, kx_mul(L, kx_var(L, c), I(L, 12)), kx_mul(L, kx_var(L, r), I(L, 4))));
        int w = kl_for(L, 4);
        kn_kx *at = kx_add(L, kx_var(L, t), kx_var(L, w));
        kl_store(L, v, at, kx_load(L, x, at));
        kl_end_n(L, 3);
        return;
    }
    case OVER: {
        int r = kl_for(L, 3), w = kl_for(L, 4);
        kl_store(L, v, kx_add(L, kx_mul(L, kx_var(L, r), I(L, 5)), kx_var(L, w)),
                 kx_const(L, KN_F32, 1));
        kl_end_n(L, 2);
        return;
    }
    }
}

/* The value of index expression x with the variables vals[var] (constants, loop indices
 * and locals substituted by hand: +, -, * and casts only). */
static int64_t eval(const kn_kx *x, const int64_t *vals) {
    switch (x->op) {
    case KX_CONST: return x->i;
    case KX_VAR: return vals[x->var];
    case KX_ADD: return eval(x->a[0], vals) + eval(x->a[1], vals);
    case KX_SUB: return eval(x->a[0], vals) - eval(x->a[1], vals);
    case KX_MUL: return eval(x->a[0], vals) * eval(x->a[1], vals);
    case KX_CAST: return eval(x->a[0], vals);
    default: KN_ASSERT(!"unexpected index expression"); return 0;
    }
}

static void run_case(int ci) {
    shape s = cases[ci].s;
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_kprog p;
    fx_prog(&p, "cortex-m4");
    int64_t nx = 24, dh[4] = {1, 2, 2, 4}, dv[4] = {1, 2, 3, 4}, dc[4] = {1, 2, 5, 4}, ny = 40;
    kn_kbuf *x = kl_buffer(&p, KB_INPUT, KN_F32, 1, &nx, "in");
    kn_kbuf *h = kl_buffer(&p, KB_TEMP, KN_F32, 4, dh, "t");
    kn_kbuf *v = kl_buffer(&p, KB_TEMP, KN_F32, 4, dv, "t");
    kn_kbuf *c = kl_buffer(&p, KB_TEMP, KN_F32, 4, dc, "t");
    kn_kbuf *y = kl_buffer(&p, KB_OUTPUT, KN_F32, 1, &ny, "out");
    h->onnx = "h";
    v->onnx = "v";
    c->onnx = "c";
    kn_lower *L = fx_kernel(&cx, &p); /* k0: H */
    int i = kl_for(L, 16);
    kl_store(L, h, kx_var(L, i), kx_const(L, KN_F32, 2));
    kl_end(L);
    kl_builder_destroy(L);
    L = fx_kernel(&cx, &p); /* k1: V */
    producer(L, x, v, s);
    kl_builder_destroy(L);
    L = fx_kernel(&cx, &p); /* k2: the Concat, a copy of each part's planes */
    int ch = kl_for(L, 2);
    kl_copy(L, c, kx_mul(L, kx_var(L, ch), I(L, 20)), h, kx_mul(L, kx_var(L, ch), I(L, 8)),
            I(L, 8));
    kl_end(L);
    ch = kl_for(L, 2);
    kl_copy(L, c, kx_add(L, kx_mul(L, kx_var(L, ch), I(L, 20)), I(L, 8)), v,
            kx_mul(L, kx_var(L, ch), I(L, 12)), I(L, 12));
    kl_end(L);
    kl_builder_destroy(L);
    L = fx_kernel(&cx, &p); /* k3: reads C */
    i = kl_for(L, 40);
    kl_store(L, y, kx_var(L, i), kx_load(L, c, kx_var(L, i)));
    kl_end(L);
    kl_builder_destroy(L);
    kn_value vh = {.name = "h"}, vv = {.name = "v"}, vc = {.name = "c"};
    kn_value *ins[2] = {&vh, &vv}, *outs[1] = {&vc};
    kn_attr axis = {.name = "axis", .kind = KN_ATTR_INT, .i = 2};
    kn_node cat = {.op = KN_OP_CONCAT,
                   .nin = 2,
                   .nout = 1,
                   .in = ins,
                   .out = outs,
                   .nattr = 1,
                   .attrs = &axis};
    p.kernels[2]->node = &cat;

    CHECK(kn_kpass_plan(&cx, &p) == KN_OK);
    bool got = v->view == c;
    if (got != cases[ci].view) fprintf(stderr, "case %d: view %d, expected %d\n", ci, got, !got);
    CHECK(got == cases[ci].view);
    CHECK(p.kernels[2]->body->n == (got ? 1 : 2)); /* the copy of V gone with the view */
    kn_ks *st = fx_last_store(p.kernels[1]);
    CHECK(st->buf == (got ? c : v));
    if (got && s != LOCAL) { /* every iteration's element of C: (e / 12) * 20 + e % 12 + 8 */
        int64_t vals[64] = {0};
        int vars[3], nl = 0;
        for (kn_ks *b = p.kernels[1]->body; b->kind != KS_STORE; b = b->body[b->n - 1])
            if (b->kind == KS_FOR) vars[nl++] = b->var;
        int64_t ext[3] = {s == STRIDED ? 3 : 2, s == STRIDED ? 4 : 3, 4};
        bool ok = true;
        for (int64_t a = 0; a < ext[0]; a++)
            for (int64_t b2 = 0; b2 < ext[1]; b2++)
                for (int64_t d = 0; d < (nl == 3 ? ext[2] : 1); d++) {
                    vals[vars[0]] = a;
                    vals[vars[1]] = b2;
                    if (nl == 3) vals[vars[2]] = d;
                    int64_t e = s == STRIDED ? a * 4 + b2 : a * 12 + b2 * 4 + d;
                    ok = ok && eval(st->index, vals) == (e / 12) * 20 + e % 12 + 8;
                }
        CHECK(ok);
        if (s == STRIDED) CHECK(st->stride == 20); /* the channel lanes: C's plane stride */
    }
    CHECK(kn_kprog_verify(&cx, &p) == KN_OK);
    kn_arena_destroy(p.arena);
}

int main(void) {
    for (int c = 0; c < (int)(sizeof cases / sizeof *cases); c++) run_case(c);
    return TEST_DONE();
}
