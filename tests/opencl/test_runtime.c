/* The OpenCL runtime layer (runtime/kn_opencl.h) on a real device, PoCL in CI.
 *
 * Uploads two float arrays, runs an `add` kernel, downloads and checks every
 * element; runs it a second time on new data and checks that the program was
 * built once: the test wraps clBuildProgram through Halide's symbol lookup hook
 * and counts the calls. Also checks the error paths generated code can hit: an
 * unknown kernel, bad arguments and, with --leaky-errors, a kernel without the
 * trailing __local parameter and a program that does not build. Exits 77 (CTest SKIP_RETURN_CODE)
 * with "no OpenCL platform found" when there is no device, so a machine without OpenCL reports
 * SKIPPED. */
#define CL_TARGET_OPENCL_VERSION 120
#include "runtime/kn_opencl.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>

#define SKIP 77
#define N 1000003 /* not a multiple of the work-group size: exercises the guard */
#define WG 64

/* Passed as user_context everywhere: the error handler writes into it. */
typedef struct test_ctx {
    char last_error[2048];
    int errors;
} test_ctx;

static int failures;

#define CHECK(cx, cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            if ((cx)->errors) fprintf(stderr, "  last Halide error: %s\n", (cx)->last_error);      \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void on_halide_error(void *user_context, const char *msg) {
    test_ctx *cx = user_context;
    if (!cx) return; /* the runtime's exit-time cleanup passes NULL */
    snprintf(cx->last_error, sizeof cx->last_error, "%s", msg);
    cx->errors++;
}

/* ---- counting program builds */

typedef cl_int(CL_API_CALL *build_program_fn)(cl_program, cl_uint, const cl_device_id *,
                                              const char *, void(CL_CALLBACK *)(cl_program, void *),
                                              void *);
static build_program_fn real_build;
static int builds;
static halide_get_library_symbol_t default_get_symbol;

static cl_int CL_API_CALL counting_build(cl_program p, cl_uint ndev, const cl_device_id *devs,
                                         const char *options,
                                         void(CL_CALLBACK *notify)(cl_program, void *),
                                         void *data) {
    builds++;
    return real_build(p, ndev, devs, options, notify, data);
}

static void *get_symbol_hook(void *lib, const char *name) {
    void *sym = default_get_symbol(lib, name);
    if (sym && strcmp(name, "clBuildProgram") == 0) {
        build_program_fn wrapper = counting_build;
        memcpy(&real_build, &sym, sizeof sym); /* POSIX: void * holds function pointers */
        memcpy(&sym, &wrapper, sizeof sym);
    }
    return sym;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char source[] =
    "__kernel void add(__global const float *a, __global const float *b,\n"
    "                  __global float *c, int n, __local uchar *shared) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "/* Lacks the trailing __local parameter halide_opencl_run always passes. */\n"
    "__kernel void add_no_local(__global const float *a, __global const float *b,\n"
    "                           __global float *c, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

static float a[N], b[N], c[N];

/* One launch of `add` over N elements, waited for. Returns the status. */
static int run_add(test_ctx *cx, kn_opencl_state *st, const char *kernel, kn_opencl_buffer *ba,
                   kn_opencl_buffer *bb, kn_opencl_buffer *bc, double *ms) {
    int n = N;
    const int global[3] = {N, 1, 1}, local[3] = {WG, 1, 1};
    kn_opencl_arg args[] = {kn_opencl_arg_buffer(ba), kn_opencl_arg_buffer(bb),
                            kn_opencl_arg_buffer(bc), KN_OPENCL_SCALAR(n)};
    double t0 = now_ms();
    int status = kn_opencl_launch(cx, st, kernel, global, local, 0, args, 4);
    if (status == KN_OPENCL_OK) status = kn_opencl_finish(cx);
    if (ms) *ms = now_ms() - t0;
    return status;
}

static int check_sum(void) {
    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (c[i] != a[i] + b[i]) {
            if (bad < 5) fprintf(stderr, "  c[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
            bad++;
        }
    }
    return bad;
}

int main(int argc, char **argv) {
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--leaky-errors") != 0)) {
        fprintf(stderr, "usage: %s [--leaky-errors]\n", argv[0]);
        return 2;
    }
    int leaky_errors = argc == 2;
    test_ctx cx = {"", 0};
    halide_set_error_handler(on_halide_error);
    default_get_symbol = halide_set_custom_get_library_symbol(get_symbol_hook);

    int status = kn_opencl_probe(&cx);
    if (status == KN_OPENCL_ENOPLATFORM) {
        printf("%s\n", kn_opencl_strerror(status));
        return SKIP;
    }
    CHECK(&cx, status == KN_OPENCL_OK);
    CHECK(&cx, cx.errors == 0); /* the probe reports nothing */

    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i + 0.25f;
        c[i] = -1.0f;
    }

    double t0 = now_ms();
    kn_opencl_state *st = NULL;
    status = kn_opencl_state_create(&cx, source, sizeof source - 1, &st);
    double build_ms = now_ms() - t0;
    CHECK(&cx, status == KN_OPENCL_OK && st != NULL);
    if (!st) return 1;
    CHECK(&cx, builds == 1);

    kn_opencl_buffer ba, bb, bc;
    CHECK(&cx, kn_opencl_buffer_create(&cx, &ba, a, sizeof a[0], N) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_buffer_create(&cx, &bb, b, sizeof b[0], N) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_buffer_create(&cx, &bc, c, sizeof c[0], N) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_upload(&cx, &ba) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_upload(&cx, &bb) == KN_OPENCL_OK);

    /* First launch. */
    double first_ms = 0, second_ms = 0;
    CHECK(&cx, run_add(&cx, st, "add", &ba, &bb, &bc, &first_ms) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_download(&cx, &bc) == KN_OPENCL_OK);
    CHECK(&cx, check_sum() == 0);

    /* Second launch on new data: same program, no new build. */
    for (int i = 0; i < N; i++) {
        b[i] = 0.5f - (float)i;
        c[i] = -1.0f;
    }
    CHECK(&cx, kn_opencl_upload(&cx, &bb) == KN_OPENCL_OK);
    CHECK(&cx, run_add(&cx, st, "add", &ba, &bb, &bc, &second_ms) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_download(&cx, &bc) == KN_OPENCL_OK);
    CHECK(&cx, check_sum() == 0);
    CHECK(&cx, builds == 1);
    CHECK(&cx, cx.errors == 0);
    printf("program build: %.2f ms; first launch: %.3f ms; second launch: %.3f ms "
           "(%d elements, clBuildProgram called %d time%s)\n",
           build_ms, first_ms, second_ms, N, builds, builds == 1 ? "" : "s");

    /* Error paths: each returns a status, none aborts. */
    CHECK(&cx, run_add(&cx, st, "no_such_kernel", &ba, &bb, &bc, NULL) == KN_OPENCL_EDEVICE);
    kn_opencl_buffer bz;
    CHECK(&cx, kn_opencl_buffer_create(&cx, &bz, c, sizeof c[0], 0) == KN_OPENCL_EINVAL);
    CHECK(&cx, kn_opencl_buffer_create(&cx, &bz, c, 3, 4) == KN_OPENCL_EINVAL);
    CHECK(&cx, kn_opencl_buffer_create(&cx, &bz, NULL, 4, 16) == KN_OPENCL_OK);
    CHECK(&cx, kn_opencl_upload(&cx, &bz) == KN_OPENCL_EINVAL); /* device-only */
    kn_opencl_buffer_destroy(&cx, &bz);
    kn_opencl_buffer_destroy(&cx, &bz); /* idempotent */
    const int bad_local[3] = {0, 1, 1}, global[3] = {N, 1, 1};
    CHECK(&cx, kn_opencl_launch(&cx, st, "add", global, bad_local, 0, NULL, 0) == KN_OPENCL_EINVAL);
    if (leaky_errors) {
        /* Halide 14's runtime leaks the cl_kernel when clSetKernelArg fails and the
         * cl_program when clBuildProgram fails: run these only with --leaky-errors,
         * which CTest runs with LeakSanitizer off. PoCL prints the build errors. */
        CHECK(&cx, run_add(&cx, st, "add_no_local", &ba, &bb, &bc, NULL) == KN_OPENCL_EDEVICE);
        CHECK(&cx, strstr(cx.last_error, "CL_INVALID_ARG_INDEX") != NULL);
        kn_opencl_state *bad = NULL;
        CHECK(&cx,
              kn_opencl_state_create(&cx, "__kernel void f( {", 18, &bad) == KN_OPENCL_EDEVICE);
        CHECK(&cx, bad == NULL);
        CHECK(&cx, strstr(cx.last_error, "CL_BUILD_PROGRAM_FAILURE") != NULL);
    }
    CHECK(&cx, strcmp(kn_opencl_strerror(KN_OPENCL_ENOPLATFORM), "no OpenCL platform found") == 0);

    kn_opencl_buffer_destroy(&cx, &ba);
    kn_opencl_buffer_destroy(&cx, &bb);
    kn_opencl_buffer_destroy(&cx, &bc);
    kn_opencl_state_destroy(&cx, st);
    kn_opencl_release(&cx);

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
