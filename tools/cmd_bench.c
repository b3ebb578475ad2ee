/* kiln bench: compiles a model once for a backend, then times repeated runs on the
 * same inputs and reports the compile time, the median and minimum latency and the
 * achieved GFLOP/s.
 *
 * The FLOPs are kn_node_flops() (the estimate kiln inspect prints) summed over the
 * graph after shape inference for the benchmarked input shapes. Compile time covers
 * backend_prepare(): passes, lowering and planning, then for c emitting the C and
 * $CC (at -O3 -march=native here), for llvm the JIT. Each timed run is one call of
 * the compiled entry point; output allocation is inside it, arena setup is not. */
#include "ir/interp.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "tools/backend.h"
#include "tools/cli.h"
#include "tools/help.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Parses a count in [lo, 1e6] into *out. */
static bool parse_count(const char *s, int lo, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || !*s || v < lo || v > 1000000) return false;
    *out = (int)v;
    return true;
}

/* FLOPs of one run for the inputs' shapes: fixes g's input types to in[] (as the
 * compiled backends do) and runs shape inference. Unknown shapes count 0. */
static kn_status graph_flops(kn_ctx *cx, kn_graph *g, kn_tensor *const *in, int64_t *flops) {
    for (int i = 0; i < g->nin; i++)
        if (kn_interp_check_input(cx, g->inputs[i], in[i])) return cx->status;
    for (int i = 0; i < g->nin; i++)
        if (in[i]->type.kind == KN_KIND_TENSOR) g->inputs[i]->type = in[i]->type;
    if (kn_pass_shape(cx, g)) return cx->status;
    *flops = 0;
    for (int i = 0; i < g->nnodes; i++) *flops += kn_node_flops(g->nodes[i]);
    return KN_OK;
}

/* Times warmup + runs calls; lat[0..runs) gets the timed latencies in ms. */
static kn_status time_runs(kn_ctx *cx, backend_prog *bp, kn_tensor *const *in, int nout, int warmup,
                           int runs, uint64_t seed, double *first, double *lat) {
    for (int r = 0; r < warmup + runs; r++) {
        kn_arena *a = kn_arena_create(); /* outputs (and interp's temporaries) of this run */
        kn_tensor **out = kn_arena_array(a, (size_t)nout + 1, sizeof *out);
        double t0 = now_ms();
        kn_status st = backend_call(cx, bp, a, in, out, seed);
        double t = now_ms() - t0;
        kn_arena_destroy(a);
        if (st) return st;
        if (r == 0) *first = t;
        if (r >= warmup) lat[r - warmup] = t;
    }
    return KN_OK;
}

int cmd_bench(int argc, char **argv) {
    const char *model = NULL, *backend = "llvm", *v, *inputs[256];
    int ninputs = 0, err = 0, json = 0, runs = 10, warmup = 2, threads = 1;
    uint64_t seed = 0;
    cli_shapes shapes = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("bench"));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "--input", &v)) {
            if (ninputs == 256) return cli_usage_error("bench", "too many --input options");
            inputs[ninputs++] = v;
        } else if (cli_opt(argc, argv, &i, "--backend", &v)) {
            backend = v;
        } else if (cli_opt(argc, argv, &i, "--runs", &v)) {
            if (!parse_count(v, 1, &runs)) return cli_usage_error("bench", "--runs takes N >= 1");
        } else if (cli_opt(argc, argv, &i, "--warmup", &v)) {
            if (!parse_count(v, 0, &warmup))
                return cli_usage_error("bench", "--warmup takes N >= 0");
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!parse_count(v, 1, &threads))
                return cli_usage_error("bench", "--threads takes N >= 1");
        } else if (cli_opt(argc, argv, &i, "--random", &v)) {
            char *end;
            seed = strtoull(v, &end, 10);
            if (*end || !*v) return cli_usage_error("bench", "--random takes a number");
        } else if (cli_flag(argv[i], "--json")) {
            json = 1;
        } else if (cli_shape_opt(argc, argv, &i, &shapes, &err)) {
            if (err) return EXIT_USAGE;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("bench", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("bench", "more than one model given");
        }
    }
    if (!model) return cli_usage_error("bench", "no model given");
    if (!backend_known(backend))
        return cli_usage_error("bench", "unknown backend '%s' (available: " BACKEND_NAMES ")",
                               backend);

    kn_ctx cx;
    kn_ctx_init(&cx, model);
    double t0 = now_ms();
    kn_graph *g;
    if (cli_load(&cx, model, &shapes, &g)) return cli_fail(&cx);
    double load_ms = now_ms() - t0;
    kn_arena *a = kn_arena_create();
    kn_tensor **in = kn_arena_array(a, (size_t)g->nin + 1, sizeof *in);
    double *lat = kn_arena_array(a, (size_t)runs, sizeof *lat);
    int rc = cli_inputs("bench", model, g, a, inputs, ninputs, true, seed, in);
    int64_t flops = 0;
    if (!rc && graph_flops(&cx, g, in, &flops)) rc = cli_fail(&cx);
    int nout = g->nout;
    backend_prog *bp = NULL;
    double compile_ms = 0, first_ms = 0;
    if (!rc) {
        t0 = now_ms();
        if (backend_prepare(&cx, backend, g, in, "-O3 -march=native", threads, &bp))
            rc = cli_fail(&cx);
        compile_ms = now_ms() - t0;
    }
    if (!rc && time_runs(&cx, bp, in, nout, warmup, runs, seed, &first_ms, lat)) rc = cli_fail(&cx);
    backend_release(bp);
    if (!rc) {
        qsort(lat, (size_t)runs, sizeof *lat, cmp_double);
        double median = runs % 2 ? lat[runs / 2] : (lat[runs / 2 - 1] + lat[runs / 2]) / 2;
        double gflops = median > 0 ? (double)flops / (median * 1e6) : 0;
        if (json) {
            printf("{\"model\": \"");
            for (const char *s = model; *s; s++) /* a path: escape quotes and controls */
                if (*s == '"' || *s == '\\')
                    printf("\\%c", *s);
                else if ((unsigned char)*s < 0x20)
                    printf("\\u%04x", *s);
                else
                    putchar(*s);
            printf("\", \"backend\": \"%s\", \"threads\": %d, \"runs\": %d, \"warmup\": %d, "
                   "\"load_ms\": %.3f, \"compile_ms\": %.3f, \"first_ms\": %.3f, "
                   "\"median_ms\": %.3f, \"min_ms\": %.3f, \"flops\": %lld, \"gflops\": %.3f}\n",
                   backend, threads, runs, warmup, load_ms, compile_ms, first_ms, median, lat[0],
                   (long long)flops, gflops);
        } else {
            printf("%s: backend %s, %d thread%s (kernels are single-threaded)\n", model, backend,
                   threads, threads == 1 ? "" : "s");
            printf("load     %10.3f ms\n", load_ms);
            printf("compile  %10.3f ms\n", compile_ms);
            printf("first    %10.3f ms\n", first_ms);
            printf("median   %10.3f ms  (%d runs after %d warmup)\n", median, runs, warmup);
            printf("min      %10.3f ms\n", lat[0]);
            printf("compute  %10.3f GFLOP per run, %.2f GFLOP/s at the median\n",
                   (double)flops * 1e-9, gflops);
        }
    }
    kn_arena_destroy(a);
    kn_graph_destroy(g);
    return rc;
}
