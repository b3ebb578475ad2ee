/* Per-thread scratch (kn_kbuf.per_thread, kl_scratch_thread): a hand-built kernel whose
 * parallel loop of NT tasks has each task fill a private buffer of K floats from its
 * part of x and then sum it backwards into y[t]:
 *
 *   for t < NT (parallel, NT tasks):  s[i] = x[t*K + i] * 3 + t  (i < K)
 *                                      y[t] = s[K-1] + ... + s[0]
 *
 * x holds small integers, so every sum is exact and y is compared for equality with a
 * reference computed here in plain C. One shared s would let a task on the other thread
 * overwrite a buffer between its fill and its sum; each run does 64 tasks, 200 runs. Checked:
 * the plan's copies (1 at one thread, 2 at two) and the arena that holds them, the
 * program printed with "per thread", the JIT at 1 thread and at 2 on kiln's pool, and the
 * generated C (one copy: its parallel loops run on the caller), compiled with $CC (or cc)
 * and run. usage: test_thread_scratch TMPDIR */
#include "c_harness.h"
#include "codegen/llvm/llvm.h"
#include "kir_fixture.h"
#include "passes/pass.h"
#include "runtime/kn_pool.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NT = 64, K = 2048, RUNS = 200 };

static float xin[NT * K], want[NT], got[NT];

/* p: the program above, planned for `threads` threads; *s its per-thread buffer. */
static void build(kn_ctx *cx, kn_kprog *p, int threads, kn_kbuf **s) {
    fx_prog(p, "native");
    p->threads = threads;
    int64_t nx = NT * K, ny = NT;
    kn_kbuf *x = kl_buffer(p, KB_INPUT, KN_F32, 1, &nx, "x");
    kn_kbuf *y = kl_buffer(p, KB_OUTPUT, KN_F32, 1, &ny, "y");
    p->inputs = kn_arena_array(p->arena, 1, sizeof *p->inputs);
    p->outputs = kn_arena_array(p->arena, 1, sizeof *p->outputs);
    KN_ASSERT(p->inputs && p->outputs);
    p->inputs[0] = x, p->outputs[0] = y;
    x->onnx = "x", y->onnx = "y";
    p->nin = p->nout = 1;
    kn_lower *L = fx_kernel(cx, p);
    *s = kl_scratch_thread(L, KN_F32, K);
    int vt = kl_for(L, NT);
    kn_ks *par = L->owner[L->depth - 1];
    par->annot |= KN_LOOP_PARALLEL;
    par->tasks = NT;
    kn_kx *t = kx_var(L, vt);
    int vi = kl_for(L, K);
    kn_kx *xi = kx_load(L, x, kx_add(L, kx_mul(L, t, kx_int(L, K)), kx_var(L, vi)));
    kl_store(L, *s, kx_var(L, vi),
             kx_add(L, kx_mul(L, xi, kx_const(L, KN_F32, 3)), kx_cast(L, KN_F32, t)));
    kl_end(L);
    int acc = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    int vj = kl_for(L, K);
    kl_set(L, acc,
           kx_add(L, kx_var(L, acc),
                  kx_load(L, *s, kx_bin(L, KX_SUB, kx_int(L, K - 1), kx_var(L, vj)))));
    kl_end(L);
    kl_store(L, y, t, kx_var(L, acc));
    kl_end(L);
    kl_builder_destroy(L);
    kn_kprog_lifetimes(p);
    CHECK(kn_kprog_verify(cx, p) == KN_OK);
    CHECK(kn_kpass_plan(cx, p) == KN_OK);
}

static int mismatches(void) {
    return memcmp(got, want, sizeof got) != 0;
}

/* Runs the program through the JIT RUNS times on a pool of `threads` threads. */
static void jit_case(kn_ctx *cx, int threads) {
    kn_kprog p;
    kn_kbuf *s;
    build(cx, &p, threads, &s);
    CHECK(s->per_thread && s->copies == threads);
    CHECK(p.arena_size >= (size_t)threads * kn_kbuf_thread_stride(s));
    CHECK(kn_kbuf_thread_stride(s) == (size_t)K * 4);
    char text[1 << 16] = {0};
    FILE *f = fmemopen(text, sizeof text - 1, "w");
    KN_ASSERT(f);
    kn_kprog_print(&p, f);
    fclose(f);
    char tag[32];
    snprintf(tag, sizeof tag, "per thread x%d", threads);
    CHECK(strstr(text, tag) != NULL);
    kn_jit *j = NULL;
    kn_pool *pool = threads > 1 ? kn_pool_create(threads) : NULL;
    CHECK(threads == 1 || pool != NULL);
    CHECK(kn_llvm_jit(cx, &p, kn_target_find("native"), 2, pool ? kn_pool_par_for : NULL, &j) ==
          KN_OK);
    void *arena = aligned_alloc(KN_ARENA_ALIGN, (p.arena_size + 63) / 64 * 64);
    KN_ASSERT(arena);
    kn_entry_fn fn = j ? kn_jit_entry(j) : NULL;
    int bad = 0;
    kn_pool_run_begin(pool); /* one bracket: the worker spins between the runs */
    for (int r = 0; fn && r < RUNS; r++) {
        const void *in[1] = {xin};
        void *out[1] = {got};
        memset(got, 0, sizeof got);
        CHECK(fn(in, out, NULL, arena) == 0);
        bad += mismatches();
    }
    kn_pool_run_end();
    if (bad) printf("jit, %d threads: %d of %d runs wrong\n", threads, bad, RUNS);
    CHECK(bad == 0);
    if (pool) {
        kn_pool_stats st = kn_pool_get_stats(pool);
        printf("jit, %d threads: %ld of %ld tasks on the worker\n", threads, st.worker_tasks,
               st.tasks);
        CHECK(st.tasks == (long)NT * RUNS);
    }
    free(arena);
    if (j) kn_jit_destroy(j);
    kn_pool_destroy(pool);
    kn_kprog_destroy(&p);
}

/* The generated C (planned for 2 threads: the C uses copy 0), compiled and run. */
static void c_case(kn_ctx *cx, const char *tmp) {
    kn_kprog p;
    kn_kbuf *s;
    build(cx, &p, 2, &s);
    char dir[2048], path[4096];
    FILE *f = ch_emit(cx, &p, tmp, "thread_scratch_c", dir, sizeof dir);
    CHECK(f != NULL);
    if (!f) {
        kn_kprog_destroy(&p);
        return;
    }
    fprintf(f,
            "#include \"m.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"
            "static float x[%d], y[%d];\n"
            "int main(void) {\n"
            "  void *arena = aligned_alloc(m_ARENA_ALIGN, (m_ARENA_SIZE + 63) / 64 * 64);\n"
            "  for (int i = 0; i < %d; i++) x[i] = (float)(i %% 7 - 3);\n"
            "  if (m_run(x, y, arena)) return 1;\n"
            "  for (int t = 0; t < %d; t++) printf(\"%%.1f\\n\", y[t]);\n"
            "  return 0;\n}\n",
            NT * K, NT, NT * K, NT);
    fclose(f);
    CHECK(ch_build_run(dir, "out.txt"));
    snprintf(path, sizeof path, "%s/out.txt", dir);
    f = fopen(path, "r");
    CHECK(f != NULL);
    int n = 0;
    for (double v; f && n < NT && fscanf(f, "%lf", &v) == 1; n++) got[n] = (float)v;
    if (f) fclose(f);
    CHECK(n == NT);
    CHECK(mismatches() == 0);
    kn_kprog_destroy(&p);
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    for (int i = 0; i < NT * K; i++) xin[i] = (float)(i % 7 - 3);
    for (int t = 0; t < NT; t++) {
        double sum = 0;
        for (int i = 0; i < K; i++) sum += xin[t * K + i] * 3.0 + t;
        want[t] = (float)sum;
    }
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    jit_case(&cx, 1);
    jit_case(&cx, 2);
    c_case(&cx, argv[1]);
    return TEST_DONE();
}
