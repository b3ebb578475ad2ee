/* Unit tests of the host C API (include/kiln.h), through libkiln.so only.
 *
 * The table has one case a line: a scenario (a small function over a fixture of the
 * digits model, loaded and compiled once for batch 2), the status it must return, and
 * a substring of kiln_last_error() ("" for a success, whose message must be empty).
 * After the table: the getters on NULL and out-of-range indexes, a run checked
 * against a batch-1 compilation, and concurrent compiles and runs from two threads.
 *
 * usage: test_api DIGITS_DIR (examples/digits) */
#include "kiln.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

typedef struct fixture {
    const char *dir;
    char model_path[4096];
    kiln_model *model;
    kiln_compiled *compiled; /* batch 2 */
    float in[2 * 64], out[2 * 10];
    unsigned char *workspace; /* 64-byte aligned, workspace size + 64 bytes */
} fixture;

static fixture F;

/* ---- scenarios ---- */

static kiln_status load_missing(void) {
    kiln_model *m = (kiln_model *)&F; /* must be reset to NULL */
    kiln_status st = kiln_model_load_file("/nonexistent/model.onnx", &m);
    CHECK(m == NULL);
    return st;
}
static kiln_status load_null_path(void) {
    kiln_model *m;
    return kiln_model_load_file(NULL, &m);
}
static kiln_status load_null_out(void) {
    return kiln_model_load_file(F.model_path, NULL);
}
static kiln_status load_garbage(void) {
    static const unsigned char junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x34, 0x56, 0x78};
    kiln_model *m = (kiln_model *)&F;
    kiln_status st = kiln_model_load_memory(junk, sizeof junk, NULL, &m);
    CHECK(m == NULL);
    return st;
}
static kiln_status load_garbage_file(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s/test_labels.npy", F.dir); /* a file, not a model */
    kiln_model *m;
    return kiln_model_load_file(path, &m);
}
static kiln_status load_null_data(void) {
    kiln_model *m;
    return kiln_model_load_memory(NULL, 10, NULL, &m);
}
static kiln_status load_ok(void) {
    kiln_model *m = NULL;
    kiln_status st = kiln_model_load_file(F.model_path, &m);
    CHECK(m != NULL);
    kiln_model_destroy(m);
    return st;
}
static kiln_status options_null_out(void) {
    return kiln_options_create(NULL);
}

/* An options object made by opts_* below, destroyed after each case. */
static kiln_options *opts;

static kiln_status target_unknown(void) {
    return kiln_options_set_target(opts, "vax");
}
static kiln_status target_null(void) {
    return kiln_options_set_target(NULL, "native");
}
static kiln_status opt_level_4(void) {
    return kiln_options_set_opt_level(opts, 4);
}
static kiln_status opt_level_neg(void) {
    return kiln_options_set_opt_level(opts, -1);
}
static kiln_status threads_neg(void) {
    return kiln_options_set_threads(opts, -2);
}
static kiln_status threads_ok(void) {
    return kiln_options_set_threads(opts, 4);
}
static kiln_status shape_rank_9(void) {
    int64_t d[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    return kiln_options_set_input_shape(opts, "image", 9, d);
}
static kiln_status shape_negative(void) {
    int64_t d[4] = {2, 1, -8, 8};
    return kiln_options_set_input_shape(opts, "image", 4, d);
}
static kiln_status shape_null_dims(void) {
    return kiln_options_set_input_shape(opts, "image", 4, NULL);
}
static kiln_status shape_bad_name(void) {
    int64_t d[1] = {1};
    return kiln_options_set_input_shape(opts, "a=b", 1, d);
}
static kiln_status dim_negative(void) {
    return kiln_options_set_dim(opts, "batch", -1);
}

/* Compiles F.model with opts; the compiled model, if any, is destroyed. */
static kiln_status compile(void) {
    kiln_compiled *c = (kiln_compiled *)&F;
    kiln_status st = kiln_compile_jit(F.model, opts, &c);
    CHECK((st == KILN_OK) == (c != NULL));
    kiln_compiled_destroy(c);
    return st;
}
static kiln_status weights_bad(void) {
    return kiln_options_set_weights(opts, "f8");
}
static kiln_status weights_null(void) {
    return kiln_options_set_weights(opts, NULL);
}
static kiln_status max_memory_null(void) {
    return kiln_options_set_max_memory(NULL, 1);
}
/* digits at batch 2 needs a workspace of a few KB */
static kiln_status compile_max_memory(size_t bytes) {
    int64_t d[4] = {2, 1, 8, 8};
    kiln_options_set_input_shape(opts, "image", 4, d);
    kiln_options_set_max_memory(opts, bytes);
    return compile();
}
static kiln_status compile_max_memory_small(void) {
    return compile_max_memory(64);
}
static kiln_status compile_max_memory_ok(void) {
    return compile_max_memory((size_t)1 << 30);
}
static kiln_status compile_unknown_input(void) {
    int64_t d[4] = {2, 1, 8, 8};
    kiln_options_set_input_shape(opts, "nope", 4, d);
    return compile();
}
static kiln_status compile_wrong_rank(void) {
    int64_t d[3] = {2, 8, 8};
    kiln_options_set_input_shape(opts, "image", 3, d);
    return compile();
}
static kiln_status compile_conflict(void) {
    int64_t d[4] = {2, 3, 8, 8}; /* the model says 1 channel */
    kiln_options_set_input_shape(opts, "image", 4, d);
    return compile();
}
static kiln_status compile_unknown_dim(void) {
    kiln_options_set_dim(opts, "height", 8);
    return compile();
}
static kiln_status compile_no_shape(void) {
    return compile();
}
static kiln_status compile_dim_ok(void) {
    kiln_options_set_dim(opts, "batch", 3);
    return compile();
}
static kiln_status compile_shape_replaced(void) {
    int64_t bad[4] = {2, 3, 8, 8}, good[4] = {2, 1, 8, 8};
    kiln_options_set_input_shape(opts, "image", 4, bad);
    kiln_options_set_input_shape(opts, "image", 4, good); /* replaces */
    return compile();
}
static kiln_status compile_embedded_target(void) {
    kiln_options_set_dim(opts, "batch", 1);
    kiln_options_set_target(opts, "cortex-m4");
    return compile();
}
static kiln_status compile_opencl_target(void) {
    kiln_options_set_dim(opts, "batch", 1);
    kiln_options_set_target(opts, "opencl");
    return compile();
}
/* tests/cli/no_lowering.onnx: RandomUniformLike, which code generation cannot lower */
static kiln_status compile_no_lowering(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s/../../tests/cli/no_lowering.onnx", F.dir);
    kiln_model *m = NULL;
    kiln_status st = kiln_model_load_file(path, &m);
    if (st) return st;
    kiln_compiled *c = NULL;
    st = kiln_compile_jit(m, opts, &c);
    CHECK(c == NULL);
    kiln_model_destroy(m);
    return st;
}
static kiln_status compile_generic_o0(void) {
    kiln_options_set_dim(opts, "batch", 1);
    kiln_options_set_target(opts, "generic");
    kiln_options_set_opt_level(opts, 0);
    return compile();
}
static kiln_status compile_null_model(void) {
    kiln_compiled *c;
    return kiln_compile_jit(NULL, opts, &c);
}
static kiln_status compile_null_out(void) {
    return kiln_compile_jit(F.model, opts, NULL);
}

static kiln_status run(const void *const *in, void *const *out, void *ws) {
    return kiln_compiled_run(F.compiled, in, out, ws);
}
static kiln_status run_ok(void) {
    const void *in[] = {F.in};
    void *out[] = {F.out};
    return run(in, out, F.workspace);
}
static kiln_status run_misaligned(void) {
    const void *in[] = {F.in};
    void *out[] = {F.out};
    return run(in, out, F.workspace + 8);
}
static kiln_status run_no_workspace(void) {
    const void *in[] = {F.in};
    void *out[] = {F.out};
    return run(in, out, NULL);
}
static kiln_status run_null_input(void) {
    const void *in[] = {NULL};
    void *out[] = {F.out};
    return run(in, out, F.workspace);
}
static kiln_status run_null_output(void) {
    const void *in[] = {F.in};
    void *out[] = {NULL};
    return run(in, out, F.workspace);
}
static kiln_status run_null_arrays(void) {
    return run(NULL, NULL, F.workspace);
}
static kiln_status run_null_compiled(void) {
    const void *in[] = {F.in};
    void *out[] = {F.out};
    return kiln_compiled_run(NULL, in, out, F.workspace);
}

typedef struct api_case {
    int line;
    kiln_status (*fn)(void);
    kiln_status want;
    const char *msg; /* a substring of kiln_last_error(); "" means it must be empty */
} api_case;

#define T(fn, want, msg)                                                                           \
    { __LINE__, fn, want, msg }

/* clang-format off */
static const api_case cases[] = {
    T(load_missing,            KILN_EIO,          "cannot open '/nonexistent/model.onnx'"),
    T(load_null_path,          KILN_EINVAL,       "path is NULL"),
    T(load_null_out,           KILN_EINVAL,       "out is NULL"),
    T(load_garbage,            KILN_EINVAL,       "not an ONNX model"),
    T(load_garbage_file,       KILN_EINVAL,       "test_labels.npy"),
    T(load_null_data,          KILN_EINVAL,       "data is NULL"),
    T(load_ok,                 KILN_OK,           ""),
    T(options_null_out,        KILN_EINVAL,       "out is NULL"),
    T(target_unknown,          KILN_EINVAL,       "unknown target 'vax'"),
    T(target_null,             KILN_EINVAL,       "NULL argument"),
    T(opt_level_4,             KILN_EINVAL,       "level 4 is not in 0..3"),
    T(opt_level_neg,           KILN_EINVAL,       "level -1"),
    T(threads_neg,             KILN_EINVAL,       "-2 is negative"),
    T(threads_ok,              KILN_OK,           ""),
    T(shape_rank_9,            KILN_EINVAL,       "rank 9 is above the limit of 8"),
    T(shape_negative,          KILN_EINVAL,       "dim 2 is negative (-8)"),
    T(shape_null_dims,         KILN_EINVAL,       "NULL argument"),
    T(shape_bad_name,          KILN_EINVAL,       "bad input name 'a=b'"),
    T(dim_negative,            KILN_EINVAL,       "'batch': value -1 is negative"),
    T(compile_unknown_input,   KILN_EINVAL,       "no input 'nope' (its inputs: 'image')"),
    T(compile_wrong_rank,      KILN_EINVAL,       "kiln_options_set_input_shape() image=2,8,8 has rank 3, input has rank 4"),
    T(compile_conflict,        KILN_EINVAL,       "kiln_options_set_input_shape() image=2,3,8,8 conflicts with dim 1 = 1"),
    T(compile_unknown_dim,     KILN_EINVAL,       "kiln_options_set_dim(): no input dimension is named 'height'"),
    T(compile_no_shape,        KILN_EINVAL,       "input 'image' has shape f32[batch,1,8,8]"),
    T(compile_dim_ok,          KILN_OK,           ""),
    T(compile_shape_replaced,  KILN_OK,           ""),
    T(compile_embedded_target, KILN_EUNSUPPORTED, "'cortex-m4' cannot run in this process; the host API runs targets of this machine only"),
    T(compile_opencl_target,   KILN_EUNSUPPORTED, "'opencl' is an OpenCL device: the host API runs CPU targets only"),
    T(compile_no_lowering,     KILN_EUNSUPPORTED, "node 'noise_1' (RandomUniformLike): code generation cannot lower the RandomUniformLike operator yet (no compiled backend"),
    T(compile_generic_o0,      KILN_OK,           ""),
    T(weights_bad,             KILN_EINVAL,       "weights format 'f8' is not f16, bf16 or f32"),
    T(weights_null,            KILN_EINVAL,       "kiln_options_set_weights: NULL argument"),
    T(max_memory_null,         KILN_EINVAL,       "kiln_options_set_max_memory: options is NULL"),
    T(compile_max_memory_small, KILN_ELIMIT,      "allowed by kiln_options_set_max_memory()"),
    T(compile_max_memory_ok,   KILN_OK,           ""),
    T(compile_null_model,      KILN_EINVAL,       "model is NULL"),
    T(compile_null_out,        KILN_EINVAL,       "out is NULL"),
    T(run_ok,                  KILN_OK,           ""),
    T(run_misaligned,          KILN_EINVAL,       "is not aligned to 64 bytes"),
    T(run_no_workspace,        KILN_EINVAL,       "needs a workspace of"),
    T(run_null_input,          KILN_EINVAL,       "input 0 ('image') is NULL"),
    T(run_null_output,         KILN_EINVAL,       "output 0 ('logits') is NULL"),
    T(run_null_arrays,         KILN_EINVAL,       "the inputs array is NULL"),
    T(run_null_compiled,       KILN_EINVAL,       "compiled is NULL"),
};
/* clang-format on */

static void run_cases(void) {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const api_case *c = &cases[i];
        CHECK(kiln_options_create(&opts) == KILN_OK);
        kiln_status st = c->fn();
        const char *msg = kiln_last_error();
        int good = st == c->want && msg && (c->msg[0] ? strstr(msg, c->msg) != NULL : !msg[0]);
        /* the host API's messages speak of its functions, never of kiln's command line */
        if (msg && (strstr(msg, "--") || strstr(msg, "kiln compile") || strstr(msg, "kiln run"))) {
            fprintf(stderr, "%s:%d: command-line wording in \"%s\"\n", __FILE__, c->line, msg);
            good = 0;
        }
        if (!good)
            fprintf(stderr, "%s:%d: got %d \"%s\", want %d \"%s\"\n", __FILE__, c->line, (int)st,
                    msg ? msg : "(null)", (int)c->want, c->msg);
        CHECK(good);
        kiln_options_destroy(opts);
        opts = NULL;
    }
}

/* ---- the rest ---- */

static void getters(void) {
    const kiln_compiled *c = F.compiled;
    CHECK(kiln_compiled_input_count(NULL) == 0 && kiln_compiled_output_count(NULL) == 0);
    CHECK(kiln_compiled_input_name(NULL, 0) == NULL && kiln_compiled_input_rank(NULL, 0) == -1);
    CHECK(kiln_compiled_workspace_size(NULL) == 0);
    CHECK(kiln_compiled_input_count(c) == 1 && kiln_compiled_output_count(c) == 1);
    CHECK(!strcmp(kiln_compiled_input_name(c, 0), "image"));
    CHECK(!strcmp(kiln_compiled_output_name(c, 0), "logits"));
    CHECK(kiln_compiled_input_dtype(c, 0) == KILN_DTYPE_F32);
    CHECK(kiln_compiled_input_rank(c, 0) == 4 && kiln_compiled_output_rank(c, 0) == 2);
    const int64_t *d = kiln_compiled_input_dims(c, 0);
    CHECK(d && d[0] == 2 && d[1] == 1 && d[2] == 8 && d[3] == 8);
    d = kiln_compiled_output_dims(c, 0);
    CHECK(d && d[0] == 2 && d[1] == 10);
    CHECK(kiln_compiled_input_bytes(c, 0) == sizeof F.in);
    CHECK(kiln_compiled_output_bytes(c, 0) == sizeof F.out);
    CHECK(kiln_compiled_input_name(c, 1) == NULL && kiln_compiled_output_name(c, 1) == NULL);
    CHECK(kiln_compiled_input_dtype(c, 1) == KILN_DTYPE_UNDEFINED);
    CHECK(kiln_compiled_output_rank(c, 7) == -1 && kiln_compiled_output_dims(c, 7) == NULL);
    CHECK(kiln_compiled_input_bytes(c, 1) == 0);
    CHECK(kiln_compiled_workspace_size(c) > 0 && kiln_compiled_workspace_alignment(c) == 64);
    CHECK(kiln_dtype_size(KILN_DTYPE_F32) == 4 && kiln_dtype_size(KILN_DTYPE_BF16) == 2);
    CHECK(kiln_dtype_size(KILN_DTYPE_UNDEFINED) == 0 && kiln_dtype_size((kiln_dtype)99) == 0);
    CHECK(!strcmp(kiln_dtype_name(KILN_DTYPE_I64), "i64"));
    CHECK(kiln_dtype_size(KILN_DTYPE_F8E5M2FNUZ) == 1 && kiln_dtype_size(KILN_DTYPE_I4) == 1);
    CHECK(!strcmp(kiln_dtype_name(KILN_DTYPE_F8E4M3FN), "f8e4m3fn"));
    CHECK(!strcmp(kiln_dtype_name(KILN_DTYPE_U4), "u4"));
    CHECK(kiln_dtype_size((kiln_dtype)23) == 0); /* float4e2m1: not a kiln dtype */
    CHECK(!strcmp(kiln_dtype_name((kiln_dtype)99), "?"));
    CHECK(!strcmp(kiln_status_string(KILN_EIO), "input/output error"));
    CHECK(!strcmp(kiln_status_string((kiln_status)-42), "unknown status"));
    /* destroys take NULL */
    kiln_model_destroy(NULL);
    kiln_options_destroy(NULL);
    kiln_compiled_destroy(NULL);
}

/* Compiles F.model for batch n with default options but the weights format (NULL: the
 * default); runs in[] -> out[]. */
static int compile_run_weights(int n, const char *weights, const float *in, float *out) {
    kiln_options *o;
    kiln_compiled *c = NULL;
    int rc = kiln_options_create(&o) || kiln_options_set_dim(o, "batch", n) ||
             (weights && kiln_options_set_weights(o, weights)) || kiln_compile_jit(F.model, o, &c);
    kiln_options_destroy(o);
    size_t size = kiln_compiled_workspace_size(c);
    unsigned char *ws = rc ? NULL : aligned_alloc(64, (size + 63) / 64 * 64 + 64);
    const void *ip[] = {in};
    void *op[] = {out};
    if (!rc) rc = kiln_compiled_run(c, ip, op, ws);
    free(ws);
    kiln_compiled_destroy(c);
    return rc;
}

static int compile_run(int n, const float *in, float *out) {
    return compile_run_weights(n, NULL, in, out);
}

/* Weights rounded to float16 (bfloat16) move the logits (of magnitude about 10) by more
 * than float32 rounding, and by less than 0.05 (0.5). */
static void weights_formats(void) {
    static const char *const fmt[] = {"f16", "bf16", "f32"};
    static const float most[] = {0.05f, 0.5f, 0.0f};
    for (int f = 0; f < 3; f++) {
        float out[2 * 10], d = 0;
        CHECK(compile_run_weights(2, fmt[f], F.in, out) == 0);
        for (int k = 0; k < 2 * 10; k++) d = fmaxf(d, fabsf(out[k] - F.out[k]));
        if (f < 2)
            CHECK(d > 1e-5f && d <= most[f]);
        else
            CHECK(d <= 1e-5f);
    }
}

/* Batch 2 computes each image as batch 1 does. */
static void batch_consistency(void) {
    float one[10];
    for (int b = 0; b < 2; b++) {
        CHECK(compile_run(1, F.in + b * 64, one) == 0);
        for (int k = 0; k < 10; k++) /* the batch size may change the vector code */
            CHECK(fabsf(one[k] - F.out[b * 10 + k]) <= 1e-5f * (1 + fabsf(one[k])));
    }
}

typedef struct job {
    int n; /* 0: run F.compiled; else compile and run for batch n */
    float out[2 * 10];
    int rc;
} job;

static int work(void *arg) {
    job *j = arg;
    for (int rep = 0; rep < 20 && !j->rc; rep++) {
        if (j->n) {
            j->rc = compile_run(j->n, F.in, j->out);
            rep = 20;
        } else {
            size_t size = kiln_compiled_workspace_size(F.compiled);
            unsigned char *ws = aligned_alloc(64, (size + 63) / 64 * 64);
            const void *ip[] = {F.in};
            void *op[] = {j->out};
            j->rc = kiln_compiled_run(F.compiled, ip, op, ws);
            free(ws);
        }
    }
    return 0;
}

/* Compiles F.model for batch 256 with `threads` threads and runs it on a fixed input. */
static int run_threaded(int threads, float *out) {
    enum { N = 256 };
    static float in[N * 64];
    for (int i = 0; i < N * 64; i++) in[i] = (float)((i * 29) % 23) / 22.0f;
    kiln_options *o;
    kiln_compiled *c = NULL;
    int rc = kiln_options_create(&o) || kiln_options_set_dim(o, "batch", N) ||
             kiln_options_set_threads(o, threads) || kiln_compile_jit(F.model, o, &c);
    kiln_options_destroy(o);
    size_t size = kiln_compiled_workspace_size(c);
    unsigned char *ws = rc ? NULL : aligned_alloc(64, (size + 63) / 64 * 64 + 64);
    const void *ip[] = {in};
    void *op[] = {out};
    for (int rep = 0; rep < 3 && !rc; rep++) rc = kiln_compiled_run(c, ip, op, ws);
    free(ws);
    kiln_compiled_destroy(c);
    return rc;
}

/* The thread pool changes who computes each task, not what: 1, 2 and 3 threads (and the
 * default, one per CPU) give bit-identical outputs. */
static void thread_counts(void) {
    static float ref[256 * 10], got[256 * 10];
    CHECK(run_threaded(1, ref) == 0);
    int counts[] = {2, 3, 0};
    for (int i = 0; i < 3; i++) {
        memset(got, 0, sizeof got);
        CHECK(run_threaded(counts[i], got) == 0);
        CHECK(!memcmp(ref, got, sizeof ref));
    }
}

/* Two threads run one compiled model with their own workspaces; two others compile. */
static void threads(void) {
    job jobs[4] = {{.n = 0}, {.n = 0}, {.n = 2}, {.n = 2}};
    thrd_t t[4];
    for (int i = 0; i < 4; i++) CHECK(thrd_create(&t[i], work, &jobs[i]) == thrd_success);
    for (int i = 0; i < 4; i++) thrd_join(t[i], NULL);
    for (int i = 0; i < 4; i++) {
        CHECK(jobs[i].rc == 0);
        CHECK(memcmp(jobs[i].out, F.out, sizeof F.out) == 0);
    }
}

/* The message is per thread: a failure here leaves another thread's message alone. */
static int fail_once(void *arg) {
    (void)arg;
    kiln_options_set_opt_level(NULL, 1);
    return strstr(kiln_last_error(), "options is NULL") != NULL;
}
static void thread_local_message(void) {
    kiln_status st = kiln_options_set_threads(NULL, 1);
    thrd_t t;
    int res = 0;
    CHECK(st == KILN_EINVAL && thrd_create(&t, fail_once, NULL) == thrd_success);
    thrd_join(t, &res);
    CHECK(res == 1);
    CHECK(strstr(kiln_last_error(), "kiln_options_set_threads") != NULL);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_api DIGITS_DIR\n");
        return 2;
    }
    F.dir = argv[1];
    snprintf(F.model_path, sizeof F.model_path, "%s/digits.onnx", F.dir);
    for (int i = 0; i < 2 * 64; i++) F.in[i] = (float)((i * 37) % 17) / 16.0f;
    kiln_options *o;
    int64_t shape[4] = {2, 1, 8, 8};
    CHECK(kiln_model_load_file(F.model_path, &F.model) == KILN_OK);
    CHECK(kiln_options_create(&o) == KILN_OK);
    CHECK(kiln_options_set_input_shape(o, "image", 4, shape) == KILN_OK);
    CHECK(kiln_compile_jit(F.model, o, &F.compiled) == KILN_OK);
    kiln_options_destroy(o);
    if (!F.compiled) {
        fprintf(stderr, "test_api: %s\n", kiln_last_error());
        kiln_model_destroy(F.model);
        return TEST_DONE();
    }
    size_t size = kiln_compiled_workspace_size(F.compiled);
    F.workspace = aligned_alloc(64, (size + 63) / 64 * 64 + 64);

    run_cases();
    getters();
    batch_consistency();
    weights_formats();
    thread_counts();
    threads();
    thread_local_message();

    free(F.workspace);
    kiln_compiled_destroy(F.compiled);
    kiln_model_destroy(F.model);
    return TEST_DONE();
}
