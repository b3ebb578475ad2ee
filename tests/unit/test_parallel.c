/* The parallel-loop analysis (passes/parallel.c) on hand-built loop nests: which loops
 * it marks KN_LOOP_PARALLEL, one case a line, each built once in a small program and
 * again in one with PAD_VARS more variables and a kernel of many accesses. The analysis
 * once sized its affine forms to every variable of the program and compared the
 * accesses of a loop in pairs, so a program of many variables with a kernel of many
 * accesses (ResNet-50 through --emit opencl) took minutes; the padded run must give the
 * same marks, and CTest's timeout bounds its time. */
#include "kir_fixture.h"
#include "passes/pass.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

enum { N = 64, PAD_VARS = 200000, MANY = 1500 };

typedef enum shape {
    ROWS4,       /* for i<N, j<4: y[i*4 + j] = x[i*4 + j]: both loops parallel */
    ROWS5,       /* the same with j<5: rows overlap, neither is */
    NEIGHBOUR,   /* for i<N-1: y[i] = y[i + 1]: reads the next iteration's element */
    CARRIED,     /* acc declared before the loop, set inside: carried across iterations */
    LET,         /* for i: r = i*4 (declared once); for j<4: y[r + j] = 1: i parallel (j is
                    not looked at: only perfect nests are descended) */
    STRIDED,     /* for i<4, j<N: y[j*4 + i] = 1: both (columns, then rows) */
    READ_OTHER,  /* for i: y[i] = x[0] + x[N-1]: a buffer only read may be read anywhere */
    MANY_ACCESS, /* for i: MANY stores y[i*MANY + m] and loads of x: parallel */
    BLOCKS_TAIL, /* for o<1: {for i<N, j<4: y[i*4 + j] = 1; for t<N-1: y[t] = y[t + 1]}: a
                    loop of one iteration holding a parallel loop and then a sequential one
                    (a channel-tiled convolution's full blocks, then its partial block) */
} shape;

static const struct {
    shape s;
    bool outer, inner; /* expected marks on the outer loop and the one inside it */
} cases[] = {
    {ROWS4, true, true},       {ROWS5, false, false},      {NEIGHBOUR, false, false},
    {CARRIED, false, false},   {LET, true, false},         {STRIDED, true, true},
    {READ_OTHER, true, false}, {MANY_ACCESS, true, false}, {BLOCKS_TAIL, false, true},
};

static kn_kx *I(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}

static void build(kn_lower *L, kn_kbuf *x, kn_kbuf *y, shape s) {
    switch (s) {
    case ROWS4:
    case ROWS5: {
        int w = s == ROWS4 ? 4 : 5;
        int i = kl_for(L, N), j = kl_for(L, w);
        kn_kx *at = kx_add(L, kx_mul(L, kx_var(L, i), I(L, 4)), kx_var(L, j));
        kl_store(L, y, at, kx_load(L, x, at));
        kl_end_n(L, 2);
        break;
    }
    case NEIGHBOUR: {
        int i = kl_for(L, N - 1);
        kl_store(L, y, kx_var(L, i), kx_load(L, y, kx_add(L, kx_var(L, i), I(L, 1))));
        kl_end(L);
        break;
    }
    case CARRIED: {
        int acc = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
        int i = kl_for(L, N);
        kl_set(L, acc, kx_add(L, kx_var(L, acc), kx_load(L, x, kx_var(L, i))));
        kl_store(L, y, kx_var(L, i), kx_var(L, acc));
        kl_end(L);
        break;
    }
    case LET: {
        int i = kl_for(L, N);
        int r = kl_decl(L, KN_I64, kx_mul(L, kx_var(L, i), I(L, 4)));
        int j = kl_for(L, 4);
        kl_store(L, y, kx_add(L, kx_var(L, r), kx_var(L, j)), kx_const(L, KN_F32, 1));
        kl_end_n(L, 2);
        break;
    }
    case STRIDED: {
        int i = kl_for(L, 4), j = kl_for(L, N);
        kl_store(L, y, kx_add(L, kx_mul(L, kx_var(L, j), I(L, 4)), kx_var(L, i)),
                 kx_const(L, KN_F32, 1));
        kl_end_n(L, 2);
        break;
    }
    case READ_OTHER: {
        int i = kl_for(L, N);
        kl_store(L, y, kx_var(L, i), kx_add(L, kx_load(L, x, I(L, 0)), kx_load(L, x, I(L, N - 1))));
        kl_end(L);
        break;
    }
    case BLOCKS_TAIL: {
        int o = kl_for(L, 1), i = kl_for(L, N), j = kl_for(L, 4);
        (void)o;
        kl_store(L, y, kx_add(L, kx_mul(L, kx_var(L, i), I(L, 4)), kx_var(L, j)),
                 kx_const(L, KN_F32, 1));
        kl_end_n(L, 2);
        int t = kl_for(L, N - 1);
        kl_store(L, y, kx_var(L, t), kx_load(L, y, kx_add(L, kx_var(L, t), I(L, 1))));
        kl_end_n(L, 2);
        break;
    }
    case MANY_ACCESS: {
        int i = kl_for(L, N);
        for (int m = 0; m < MANY; m++) {
            kn_kx *at = kx_add(L, kx_mul(L, kx_var(L, i), I(L, MANY)), I(L, m));
            kl_store(L, y, at, kx_load(L, x, at));
        }
        kl_end(L);
        break;
    }
    }
}

/* The marks of every case in one program, with `pad` unused variables made first;
 * the analysis's time in *secs. */
static void run(int pad, bool *outer, bool *inner, double *secs) {
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_kprog p;
    fx_prog(&p, NULL);
    kn_lower *E = kl_builder(&cx, &p);
    for (int i = 0; i < pad; i++) kl_new_var(E, KN_I64);
    kl_builder_destroy(E);
    int64_t n = (int64_t)N * MANY;
    kn_kbuf *x = kl_buffer(&p, KB_INPUT, KN_F32, 1, &n, "x");
    kn_kbuf *y = kl_buffer(&p, KB_OUTPUT, KN_F32, 1, &n, "y");
    int ncases = (int)(sizeof cases / sizeof *cases);
    for (int c = 0; c < ncases; c++) {
        kn_lower *L = fx_kernel(&cx, &p);
        build(L, x, y, cases[c].s);
        kl_builder_destroy(L);
    }
    clock_t t0 = clock();
    CHECK(kn_kpass_parallel(&cx, &p) == KN_OK);
    *secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    for (int c = 0; c < ncases; c++) {
        const kn_ks *body = p.kernels[c]->body, *loop = NULL;
        for (int s = 0; s < body->n && !loop; s++)
            if (body->body[s]->kind == KS_FOR) loop = body->body[s];
        KN_ASSERT(loop);
        outer[c] = loop->annot & KN_LOOP_PARALLEL;
        const kn_ks *in = NULL; /* the first loop directly inside */
        for (int s = 0; s < loop->body[0]->n && !in; s++)
            if (loop->body[0]->body[s]->kind == KS_FOR) in = loop->body[0]->body[s];
        inner[c] = in && (in->annot & KN_LOOP_PARALLEL);
        if (cases[c].s == BLOCKS_TAIL) { /* the second loop inside: sequential */
            CHECK(loop->body[0]->n == 2);
            CHECK(!(loop->body[0]->body[1]->annot & KN_LOOP_PARALLEL));
        }
    }
    kn_arena_destroy(p.arena);
}

/* ---- the split decision: how many tasks a nest gets ----
 * A matrix-vector product y[J] = W[J][K] x[K] as the tile pass writes one: for each block
 * of 16 outputs, a 16-lane accumulator over K steps, W packed [J/16][K][16]. Its effort
 * (one per vector statement) is J/16 * (K + 2), under the split threshold for a
 * classifier (1000 x 1280: 80,000); the 5 MB of W it streams make it worth two cores.
 * The same nest reading W from an input (not constant data the nest streams) or with a
 * small W stays on the calling thread, and a nest whose compute alone is large is split
 * whatever it reads. */
typedef struct split_case {
    int64_t j, k;       /* outputs (a multiple of 16), reduction */
    kn_kbuf_kind wkind; /* KB_CONST: weights; KB_INPUT: a run-time operand */
    bool split;         /* expected: more than one task */
    bool wrapped;       /* the nest inside a loop of one iteration, followed by a sequential loop */
} split_case;

static const split_case splits[] = {
    {1008, 1280, KB_CONST, true, false},  /* EfficientNet-B0's classifier: 5.2 MB of weights */
    {1008, 1280, KB_INPUT, false, false}, /* the same effort, nothing constant streamed */
    {512, 256, KB_CONST, false, false},   /* 0.5 MB: below the threshold (the MLP's second layer) */
    {1008, 512, KB_CONST, true, false},   /* ResNet-18's classifier: 2 MB */
    {64, 80000, KB_INPUT, true, false},   /* effort 320,000 of compute alone */
    {1008, 1280, KB_CONST, true, true},   /* the classifier, under a loop of one iteration */
};

static int split_tasks(const split_case *c) {
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_kprog p;
    fx_prog(&p, NULL);
    int64_t wn = c->j * c->k, jn = c->j;
    kn_kbuf *x = kl_buffer(&p, KB_INPUT, KN_F32, 1, &c->k, "x");
    kn_kbuf *w = kl_buffer(&p, c->wkind, KN_F32, 1, &wn, "w");
    kn_kbuf *y = kl_buffer(&p, KB_OUTPUT, KN_F32, 1, &jn, "y");
    kn_lower *L = fx_kernel(&cx, &p);
    if (c->wrapped) kl_for(L, 1);
    int vb = kl_for(L, c->j / 16);
    int acc = kl_decl_vec(L, KN_F32, 16, kx_const(L, KN_F32, 0));
    int vk = kl_for(L, c->k);
    kn_kx *wi = kx_mul(L, kx_add(L, kx_mul(L, kx_var(L, vb), I(L, c->k)), kx_var(L, vk)), I(L, 16));
    kl_set(L, acc, kx_fma(L, kx_vload(L, w, wi, 16), kx_load(L, x, kx_var(L, vk)), kx_var(L, acc)));
    kl_end(L);
    kl_store(L, y, kx_mul(L, kx_var(L, vb), I(L, 16)), kx_var(L, acc));
    kl_end(L);
    if (c->wrapped) { /* a carried tail loop after the nest */
        int t = kl_for(L, jn - 1);
        kl_store(L, y, kx_var(L, t), kx_load(L, y, kx_add(L, kx_var(L, t), I(L, 1))));
        kl_end_n(L, 2);
    }
    kl_builder_destroy(L);
    CHECK(kn_kpass_parallel(&cx, &p) == KN_OK);
    const kn_ks *loop = p.kernels[0]->body->body[0];
    if (c->wrapped) loop = loop->body[0]->body[0];
    KN_ASSERT(loop->kind == KS_FOR);
    CHECK(loop->annot & KN_LOOP_PARALLEL);
    int tasks = loop->tasks;
    kn_arena_destroy(p.arena);
    return tasks;
}

/* A nest that only moves data (a padded copy, a Winograd input transform): rows vector
 * copies of 16 lanes into y. Its effort (one per vector statement) is rows*4, under the
 * split threshold; the bytes it writes split it, into at most 8 tasks, when they are many
 * (rows*256: 1 MB for 4096 rows) and what it reads was written by a split kernel (here a
 * kernel before it of effort 4096*80 into a temporary t); not when it reads a graph input
 * (in the caller's cache), nor when it writes few bytes. */
static int move_tasks(int64_t rows, bool from_split) {
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_kprog p;
    fx_prog(&p, NULL);
    int64_t n = 4096 * 64;
    kn_kbuf *x = kl_buffer(&p, KB_INPUT, KN_F32, 1, &n, "x");
    kn_kbuf *t = kl_buffer(&p, KB_TEMP, KN_F32, 1, &n, "t");
    kn_kbuf *y = kl_buffer(&p, KB_OUTPUT, KN_F32, 1, &n, "y");
    kn_lower *L = fx_kernel(&cx, &p); /* t[i*64 + 16j ..] = sum over r of x * x */
    int i = kl_for(L, 4096), j = kl_for(L, 4);
    kn_kx *at = kx_mul(L, kx_add(L, kx_mul(L, kx_var(L, i), I(L, 4)), kx_var(L, j)), I(L, 16));
    int acc = kl_decl_vec(L, KN_F32, 16, kx_const(L, KN_F32, 0));
    kl_for(L, 20);
    kl_set(L, acc, kx_fma(L, kx_vload(L, x, at, 16), kx_vload(L, x, at, 16), kx_var(L, acc)));
    kl_end(L);
    kl_store(L, t, at, kx_var(L, acc));
    kl_end_n(L, 2);
    kl_builder_destroy(L);
    L = fx_kernel(&cx, &p); /* the move */
    i = kl_for(L, rows), j = kl_for(L, 4);
    at = kx_mul(L, kx_add(L, kx_mul(L, kx_var(L, i), I(L, 4)), kx_var(L, j)), I(L, 16));
    kl_store(L, y, at, kx_vload(L, from_split ? t : x, at, 16));
    kl_end_n(L, 2);
    kl_builder_destroy(L);
    CHECK(kn_kpass_parallel(&cx, &p) == KN_OK);
    CHECK(p.kernels[0]->body->body[0]->tasks > 1);
    const kn_ks *loop = p.kernels[1]->body->body[0];
    CHECK(loop->annot & KN_LOOP_PARALLEL);
    int tasks = loop->tasks;
    kn_arena_destroy(p.arena);
    return tasks;
}

/* A short row-wise nest (a Softmax or LayerNorm after a split matrix product): for each of
 * `rows` rows of 128 floats, y = t * 2 in 8 vector stores, then y = y * 0.5 reading y back
 * (Softmax rescales its exps so). Its effort (16 a row) and the bytes it writes (1 KB a row)
 * are under both thresholds above; the bytes it reads and writes (2 KB a row) split it,
 * into 2-8 tasks, when they are many (1 MB for 512 rows) and the rows it reads were written
 * by a split kernel: reading back its own stores must not count as reading data of the
 * caller's. Not when it reads a graph input, nor for 64 rows (128 KB), nor for 128 rows
 * (256 KB, but 2,048 statement executions: under two tasks of SPREAD_TASK_EFFORT; the
 * input packing of SqueezeNet's 1x1 convolutions, vector copies of 190 KB, ran 1.2-1.4x
 * longer split). Modes: SPREAD_ROWS as above; SPREAD_IN_ONE, the rows loop inside a
 * parallel loop of one iteration (a Winograd convolution's padded copy: its split would
 * come from collapsing the loops inside, not from its own outer loop), not split;
 * SPREAD_STORES, 256 rows that store constants and load nothing (the zero borders of a
 * padded buffer: no data of either core to be near), not split. */
enum { SPREAD_ROWS, SPREAD_IN_ONE, SPREAD_STORES };
static int spread_tasks(int64_t rows, bool from_split, int mode) {
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_kprog p;
    fx_prog(&p, NULL);
    int64_t n = 4096 * 64;
    kn_kbuf *x = kl_buffer(&p, KB_INPUT, KN_F32, 1, &n, "x");
    kn_kbuf *t = kl_buffer(&p, KB_TEMP, KN_F32, 1, &n, "t");
    kn_kbuf *y = kl_buffer(&p, KB_OUTPUT, KN_F32, 1, &n, "y");
    kn_lower *L = fx_kernel(&cx, &p); /* t[i*64 + 16j ..] = sum over r of x * x: split */
    int i = kl_for(L, 4096), j = kl_for(L, 4);
    kn_kx *at = kx_mul(L, kx_add(L, kx_mul(L, kx_var(L, i), I(L, 4)), kx_var(L, j)), I(L, 16));
    int acc = kl_decl_vec(L, KN_F32, 16, kx_const(L, KN_F32, 0));
    kl_for(L, 20);
    kl_set(L, acc, kx_fma(L, kx_vload(L, x, at, 16), kx_vload(L, x, at, 16), kx_var(L, acc)));
    kl_end(L);
    kl_store(L, t, at, kx_var(L, acc));
    kl_end_n(L, 2);
    kl_builder_destroy(L);
    L = fx_kernel(&cx, &p); /* the rows */
    if (mode == SPREAD_IN_ONE) kl_for(L, 1);
    i = kl_for(L, rows);
    int zero = mode == SPREAD_STORES ? kl_decl_vec(L, KN_F32, 16, kx_const(L, KN_F32, 0)) : -1;
    for (int pass = 0; pass < 2; pass++) {
        j = kl_for(L, 8);
        at = kx_mul(L, kx_add(L, kx_mul(L, kx_var(L, i), I(L, 8)), kx_var(L, j)), I(L, 16));
        kn_kx *v = pass ? kx_vload(L, y, at, 16) : kx_vload(L, from_split ? t : x, at, 16);
        if (mode == SPREAD_STORES) v = kx_var(L, zero);
        kl_store(L, y, at, kx_mul(L, v, kx_const(L, KN_F32, pass ? 0.5 : 2.0)));
        kl_end(L);
    }
    kl_end_n(L, mode == SPREAD_IN_ONE ? 2 : 1);
    kl_builder_destroy(L);
    kn_ks *nest = p.kernels[1]->body->body[0];
    if (mode == SPREAD_IN_ONE) nest->annot |= KN_LOOP_PARALLEL; /* as the Winograd pass's */
    CHECK(kn_kpass_parallel(&cx, &p) == KN_OK);
    CHECK(p.kernels[0]->body->body[0]->tasks > 1);
    CHECK(nest->annot & KN_LOOP_PARALLEL); /* the outermost parallel loop: its tasks */
    int tasks = nest->tasks;
    kn_arena_destroy(p.arena);
    return tasks;
}

int main(void) {
    int sbig = spread_tasks(512, true, SPREAD_ROWS), sin = spread_tasks(512, false, SPREAD_ROWS),
        ssmall = spread_tasks(64, true, SPREAD_ROWS), sfew = spread_tasks(128, true, SPREAD_ROWS),
        sone = spread_tasks(512, true, SPREAD_IN_ONE),
        sstores = spread_tasks(256, true, SPREAD_STORES);
    printf("rows: 1 MB moved from a split kernel: %d tasks (expected 2-8), from the input: %d, "
           "128 KB: %d, 256 KB in 2048 statements: %d, 1 MB under a loop of one iteration: %d, "
           "256 KB of stores only: %d (expected 1)\n",
           sbig, sin, ssmall, sfew, sone, sstores);
    CHECK(sbig >= 2 && sbig <= 8);
    CHECK(sin <= 1);
    CHECK(ssmall <= 1);
    CHECK(sfew <= 1);
    CHECK(sone <= 1);
    CHECK(sstores <= 1);

    int big = move_tasks(4096, true), in = move_tasks(4096, false), small = move_tasks(64, true);
    printf("moves: 1 MB from a split kernel: %d tasks (expected 2-8), from the input: %d, 16 KB: "
           "%d (expected 1)\n",
           big, in, small);
    CHECK(big >= 2 && big <= 8);
    CHECK(in <= 1);
    CHECK(small <= 1);

    for (int c = 0; c < (int)(sizeof splits / sizeof *splits); c++) {
        int tasks = split_tasks(&splits[c]);
        printf("split %d: %lld x %lld, weights %s: %d tasks (expected %s)\n", c,
               (long long)splits[c].j, (long long)splits[c].k,
               splits[c].wkind == KB_CONST ? "constant" : "input", tasks,
               splits[c].split ? "> 1" : "1");
        CHECK((tasks > 1) == splits[c].split);
    }

    enum { NC = sizeof cases / sizeof *cases };
    bool outer[NC], inner[NC], pouter[NC], pinner[NC];
    double secs, psecs;
    run(0, outer, inner, &secs);
    run(PAD_VARS, pouter, pinner, &psecs);
    for (int c = 0; c < NC; c++) {
        printf("case %d: outer %d inner %d (expected %d %d); with %d more variables %d %d\n", c,
               outer[c], inner[c], cases[c].outer, cases[c].inner, PAD_VARS, pouter[c], pinner[c]);
        CHECK(outer[c] == cases[c].outer);
        CHECK(inner[c] == cases[c].inner);
        CHECK(pouter[c] == outer[c]);
        CHECK(pinner[c] == inner[c]);
    }
    printf("analysis: %.3f s, with %d more variables %.3f s\n", secs, PAD_VARS, psecs);
    return TEST_DONE();
}
