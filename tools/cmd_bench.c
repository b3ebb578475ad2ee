/* kiln bench: compiles a model once for a backend, then times repeated runs on the
 * same inputs and reports the compile time, the median and minimum latency and the
 * achieved GFLOP/s.
 *
 * The FLOPs are kn_node_flops() (the estimate kiln inspect prints: 2 per multiply-add,
 * 1 per bias add or elementwise output) summed over the graph after shape inference and
 * constant folding for the benchmarked input shapes. Compile time covers
 * backend_prepare(): passes, lowering and planning, then for c emitting the C and
 * $CC (at -O3 -march=native here), for llvm the JIT. Each timed run is one call of
 * the compiled entry point. Compiled backends write every run's outputs into the same
 * tensors, allocated by the first run (backend_reuse_outputs): fresh output memory each
 * run made page faults a large part of models with multi-MB outputs.
 *
 * --paced hands the timing to another program (bench/run.sh interleaves kiln and ONNX
 * Runtime run by run with it, docs/benchmarks.md): after the warm-up kiln prints
 * `ready`, then for each line N it reads on stdin it times N runs and prints their
 * latencies in ms on one line; at the end of stdin the summary covers every timed run. */
#include "ir/interp.h"
#include "ir/kir.h"
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
 * compiled backends do), runs shape inference, qdq and constant folding (the passes every
 * pipeline starts with, so what is computed once at compile time is not counted) and
 * sums kn_node_flops(). Unknown shapes count 0. */
static kn_status graph_flops(kn_ctx *cx, kn_graph *g, kn_tensor *const *in, int64_t *flops) {
    for (int i = 0; i < g->nin; i++)
        if (kn_interp_check_input(cx, g->inputs[i], in[i])) return cx->status;
    for (int i = 0; i < g->nin; i++)
        if (in[i]->type.kind == KN_KIND_TENSOR) g->inputs[i]->type = in[i]->type;
    /* qdq before fold, as every pipeline (fold would turn a QDQ model's weights to float) */
    if (kn_pass_shape(cx, g) || kn_pass_qdq(cx, g) || kn_pass_fold(cx, g) || kn_pass_shape(cx, g))
        return cx->status;
    *flops = 0;
    for (int i = 0; i < g->nnodes; i++) *flops += kn_node_flops(g->nodes[i]);
    return KN_OK;
}

/* Per-kernel times from the hooks of a profiling build (codegen/profile.h). */
typedef struct prof_acc {
    int nk;
    bool cpu;            /* --profile-clock cpu: the calling thread's CPU time, not wall time */
    double *start, *sum; /* ms: the current kernel's start, the total over timed runs */
} prof_acc;

/* CPU time of the calling thread, in ms: what a kernel run on it cost, whatever else ran
 * on the machine (the hooks run on the thread that calls the kernels). */
static double thread_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void prof_hook(void *user, int k, int phase) {
    prof_acc *a = user;
    double t = a->cpu ? thread_cpu_ms() : now_ms();
    if (k < 0 || k >= a->nk) return;
    if (phase == 0)
        a->start[k] = t;
    else
        a->sum[k] += t - a->start[k];
}

/* CPU time of the whole process (every thread: the JIT's pool, an OpenCL driver's
 * workers), in ms. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One call of the compiled program, its latency in ms in *ms. */
static kn_status call_once(kn_ctx *cx, backend_prog *bp, kn_tensor *const *in, int nout,
                           uint64_t seed, double *ms) {
    kn_arena *a = kn_arena_create(); /* outputs (and interp's temporaries) of this run */
    kn_tensor **out = kn_arena_array(a, (size_t)nout + 1, sizeof *out);
    double t0 = now_ms();
    kn_status st = backend_call(cx, bp, a, in, out, seed);
    *ms = now_ms() - t0;
    kn_arena_destroy(a);
    return st;
}

/* The warm-up: untimed calls until there have been at least w->runs of them and they
 * have taken at least w->ms ms; w->done gets how many ran and w->took their wall time. */
typedef struct warmup_spec {
    int runs;
    double ms;
    int done;
    double took;
} warmup_spec;

/* Warms up as w says, then times `runs` calls; lat[0..runs) gets the timed latencies in ms
 * and *cpu the process's CPU time over the timed runs, per run; *first the first call's
 * latency (warm-up or timed). With acc, its sums cover the timed runs only. */
static kn_status time_runs(kn_ctx *cx, backend_prog *bp, kn_tensor *const *in, int nout,
                           warmup_spec *w, int runs, uint64_t seed, double *first, double *lat,
                           double *cpu, prof_acc *acc) {
    double w0 = now_ms(), t;
    for (w->done = 0; w->done < w->runs || now_ms() - w0 < w->ms; w->done++) {
        kn_status st = call_once(cx, bp, in, nout, seed, &t);
        if (st) return st;
        if (w->done == 0) *first = t;
    }
    w->took = now_ms() - w0;
    if (acc) memset(acc->sum, 0, (size_t)acc->nk * sizeof *acc->sum);
    double c0 = cpu_ms();
    for (int r = 0; r < runs; r++) {
        kn_status st = call_once(cx, bp, in, nout, seed, &t);
        if (st) return st;
        if (r == 0 && w->done == 0) *first = t;
        lat[r] = t;
    }
    *cpu = (cpu_ms() - c0) / runs;
    return KN_OK;
}

/* --paced: after time_runs' warm-up (lat: one entry), `ready`, then N timed runs per line
 * N of stdin, their latencies printed on one line each. *lat (malloc'd, the caller frees)
 * gets every timed latency, *runs their count, *cpu the CPU time per timed run. */
static kn_status paced_runs(kn_ctx *cx, backend_prog *bp, kn_tensor *const *in, int nout,
                            uint64_t seed, double **lat, int *runs, double *cpu) {
    int cap = 64, n = 0;
    double *l = malloc((size_t)cap * sizeof *l), busy = 0;
    KN_ASSERT(l);
    printf("ready\n");
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        int want = atoi(line);
        double c0 = cpu_ms();
        for (int r = 0; r < want; r++) {
            double t;
            kn_status st = call_once(cx, bp, in, nout, seed, &t);
            if (st) {
                free(l);
                return st;
            }
            if (n == cap) {
                l = realloc(l, (size_t)(cap *= 2) * sizeof *l);
                KN_ASSERT(l);
            }
            l[n++] = t;
            printf(r ? " %.4f" : "%.4f", t);
        }
        busy += cpu_ms() - c0;
        printf("\n");
        fflush(stdout);
    }
    if (!n) {
        free(l);
        return kn_diag(cx, NULL, KN_EINVAL, "--paced: no timed run was asked for on stdin");
    }
    *lat = l;
    *runs = n;
    *cpu = busy / n;
    return KN_OK;
}

static const double *sort_key;
static int by_time(const void *a, const void *b) {
    double x = sort_key[*(const int *)a], y = sort_key[*(const int *)b];
    return x > y ? -1 : x < y ? 1 : *(const int *)a - *(const int *)b;
}

/* The per-kernel report: the top kernels on stdout (with print), all of them in the profile file
 * (JSON, one kernel a line, read by kiln inspect --profile). */
static int report_profile(const char *model, const char *backend, const kn_kprog *p,
                          const prof_acc *acc, int runs, double mean, const char *file,
                          bool print) {
    const char *clock = acc->cpu ? "cpu" : "wall";
    int nk = acc->nk, *order = calloc((size_t)nk + 1, sizeof *order);
    double *ms = calloc((size_t)nk + 1, sizeof *ms), total = 0;
    KN_ASSERT(order && ms);
    for (int k = 0; k < nk; k++) {
        order[k] = k;
        ms[k] = acc->sum[k] / runs;
        total += ms[k];
    }
    sort_key = ms;
    qsort(order, (size_t)nk, sizeof *order, by_time);
    if (!print) goto file;
    printf("\nper kernel, %s time, mean of %d runs (the hooks add a little to each):\n",
           acc->cpu ? "thread CPU" : "wall-clock", runs);
    printf("  %4s %6s %10s %7s %9s  %-18s %s\n", "rank", "kernel", "ms/run", "share", "GFLOP/s",
           "op", "node");
    int shown = nk < 15 ? nk : 15;
    double rest = total;
    for (int r = 0; r < shown; r++) {
        int k = order[r];
        const kn_node *n = p->kernels[k]->node;
        int64_t fl = n ? kn_node_flops(n) : 0;
        rest -= ms[k];
        printf("  %4d %6d %10.4f %6.1f%% %9.2f  %-18s %s\n", r + 1, k, ms[k],
               total > 0 ? 100 * ms[k] / total : 0, ms[k] > 0 ? (double)fl / (ms[k] * 1e6) : 0,
               n ? n->op_type : "", n ? n->name : p->kernels[k]->name);
    }
    if (shown < nk)
        printf("  (%d more kernels: %.4f ms, %.1f%%)\n", nk - shown, rest,
               total > 0 ? 100 * rest / total : 0);
    printf("kernels %.4f ms of the %.4f ms mean run%s (%.1f%%)\n", total, mean,
           acc->cpu ? " in CPU time" : "", mean > 0 ? 100 * total / mean : 0);
file:;
    int rc = EXIT_OK;
    if (file) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        if (!f) {
            fprintf(stderr, "kiln: cannot write '%s'\n", file);
            rc = EXIT_BAD_INPUT;
        } else {
            fprintf(f, "{\"kiln_profile\": 1, \"model\": ");
            cli_json_str(f, model);
            fprintf(f,
                    ", \"backend\": \"%s\", \"clock\": \"%s\", \"runs\": %d, \"mean_ms\": %.6f, "
                    "\"kernels\": [\n",
                    backend, clock, runs, mean);
            for (int k = 0; k < nk; k++) {
                const kn_node *n = p->kernels[k]->node;
                int64_t fl = n ? kn_node_flops(n) : 0;
                fprintf(f, "  {\"kernel\": %d, \"node\": ", k);
                cli_json_str(f, n ? n->name : "");
                fprintf(f, ", \"op\": ");
                cli_json_str(f, n ? n->op_type : "");
                fprintf(f,
                        ", \"ms\": %.6f, \"share\": %.6f, \"flops\": %lld, \"gflops\": %.3f}%s\n",
                        ms[k], total > 0 ? ms[k] / total : 0, (long long)fl,
                        ms[k] > 0 ? (double)fl / (ms[k] * 1e6) : 0, k + 1 < nk ? "," : "");
            }
            fprintf(f, "]}\n");
            if (fclose(f) != 0 || rename(tmp, file) != 0) {
                remove(tmp);
                fprintf(stderr, "kiln: cannot write '%s'\n", file);
                rc = EXIT_BAD_INPUT;
            }
        }
    }
    free(order);
    free(ms);
    return rc;
}

int cmd_bench(int argc, char **argv) {
    const char *model = NULL, *backend = "llvm", *v, *inputs[256], *profile_file = NULL;
    int ninputs = 0, err = 0, json = 0, runs = 10, threads = 1, profile = 0;
    warmup_spec warm = {.runs = 2, .ms = 200};
    bool cpu_clock = false, paced = false;
    double *paced_lat = NULL;
    uint64_t seed = 0;
    cli_shapes shapes = {0};
    cli_pipeline po = {0};
    cli_talk talk = {0};
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
            if (!parse_count(v, 0, &warm.runs))
                return cli_usage_error("bench", "--warmup takes N >= 0");
        } else if (cli_opt(argc, argv, &i, "--warmup-ms", &v)) {
            int ms;
            if (!parse_count(v, 0, &ms))
                return cli_usage_error("bench", "--warmup-ms takes MS >= 0");
            warm.ms = ms;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!parse_count(v, 1, &threads))
                return cli_usage_error("bench", "--threads takes N >= 1");
        } else if (cli_opt(argc, argv, &i, "--random", &v)) {
            char *end;
            seed = strtoull(v, &end, 10);
            if (*end || !*v) return cli_usage_error("bench", "--random takes a number");
        } else if (cli_talk_opt(argv[i], &talk, false)) {
        } else if (cli_pipeline_opt(argc, argv, &i, &po)) {
        } else if (cli_flag(argv[i], "--json")) {
            json = 1;
        } else if (cli_flag(argv[i], "--paced")) {
            paced = true;
        } else if (cli_flag(argv[i], "--profile")) {
            profile = 1;
        } else if (cli_opt(argc, argv, &i, "--profile-file", &v)) {
            profile = 1;
            profile_file = v;
        } else if (cli_opt(argc, argv, &i, "--profile-clock", &v)) {
            if (strcmp(v, "wall") && strcmp(v, "cpu"))
                return cli_usage_error("bench", "--profile-clock takes wall or cpu, not '%s'", v);
            cpu_clock = !strcmp(v, "cpu");
            profile = 1;
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
    if ((err = cli_pipeline_check(&po, "bench"))) return err;
    if (profile && !strcmp(backend, "interp"))
        return cli_usage_error("bench", "--profile times the kernels of a compiled backend "
                                        "(llvm, c or opencl), not interp");
    if (cpu_clock && (threads > 1 || !strcmp(backend, "opencl")))
        return cli_usage_error("bench", "--profile-clock cpu times the thread that calls the "
                                        "kernels: use it with --threads 1 and backend llvm or c");
    if (paced && profile)
        return cli_usage_error("bench", "--paced and --profile do not go together");
    if (!backend_known(backend))
        return cli_usage_error("bench", "unknown backend '%s' (available: " BACKEND_NAMES ")",
                               backend);

    kn_ctx cx;
    cli_ctx_init(&cx, model, &talk);
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
    double compile_ms = 0, first_ms = 0, cpu_run = 0;
    /* hooks around each kernel; the program's kernel count is known only after
     * compiling, so the arrays are sized generously and checked by the hook */
    prof_acc acc = {.cpu = cpu_clock};
    kn_profile prof = {prof_hook, &acc};
    if (profile) {
        acc.nk = 1 << 16;
        acc.start = calloc((size_t)acc.nk, sizeof *acc.start);
        acc.sum = calloc((size_t)acc.nk, sizeof *acc.sum);
        KN_ASSERT(acc.start && acc.sum);
    }
    if (!rc) {
        t0 = now_ms();
        kn_compile_opts copts;
        cli_compile_opts(&po, &copts);
        if (backend_prepare_profiled(&cx, backend, g, in, "-O3 -march=native", threads, &copts,
                                     profile ? &prof : NULL, &bp))
            rc = cli_fail(&cx);
        compile_ms = now_ms() - t0;
    }
    if (!rc) backend_reuse_outputs(bp); /* outputs allocated by the first run only */
    if (!rc && profile) acc.nk = backend_kprog(bp)->nkernels;
    if (!rc && paced) { /* the warm-up, then the runs stdin asks for */
        if (time_runs(&cx, bp, in, nout, &warm, 1, seed, &first_ms, lat, &cpu_run, NULL) ||
            paced_runs(&cx, bp, in, nout, seed, &paced_lat, &runs, &cpu_run))
            rc = cli_fail(&cx);
        else
            lat = paced_lat;
    } else if (!rc && time_runs(&cx, bp, in, nout, &warm, runs, seed, &first_ms, lat, &cpu_run,
                                profile ? &acc : NULL))
        rc = cli_fail(&cx);
    cli_progress_end();
    if (!rc) {
        qsort(lat, (size_t)runs, sizeof *lat, cmp_double);
        double median = runs % 2 ? lat[runs / 2] : (lat[runs / 2 - 1] + lat[runs / 2]) / 2;
        double gflops = median > 0 ? (double)flops / (median * 1e6) : 0;
        const kn_kprog *kp = backend_kprog(bp); /* NULL: the interpreter */
        long long wbytes = kp ? (long long)kn_kprog_weight_bytes(kp) : -1;
        if (json) {
            printf("{\"model\": ");
            cli_json_str(stdout, model);
            printf(", \"backend\": \"%s\", \"threads\": %d, \"runs\": %d, \"warmup\": %d, "
                   "\"warmup_ms\": %.3f, "
                   "\"load_ms\": %.3f, \"compile_ms\": %.3f, \"first_ms\": %.3f, "
                   "\"median_ms\": %.3f, \"min_ms\": %.3f, \"cpu_ms\": %.3f, \"flops\": %lld, "
                   "\"gflops\": %.3f, \"weights_bytes\": %lld}\n",
                   backend, threads, runs, warm.done, warm.took, load_ms, compile_ms, first_ms,
                   median, lat[0], cpu_run, (long long)flops, gflops, wbytes);
        } else {
            if (!strcmp(backend, "opencl"))
                printf("%s: backend opencl (the device runs the work-items)\n", model);
            else {
                int nt = strcmp(backend, "llvm") && strcmp(backend, "c") ? 1 : threads;
                printf("%s: backend %s, %d thread%s\n", model, backend, nt, nt == 1 ? "" : "s");
            }
            printf("load     %10.3f ms\n", load_ms);
            printf("compile  %10.3f ms\n", compile_ms);
            printf("first    %10.3f ms\n", first_ms);
            printf("median   %10.3f ms  (%d runs after %d warm-up runs in %.0f ms)\n", median, runs,
                   warm.done, warm.took);
            printf("min      %10.3f ms\n", lat[0]);
            printf("cpu      %10.3f ms  per run, every thread of the process\n", cpu_run);
            printf("flops    %10lld per run (%.3f GFLOP), %.2f GFLOP/s at the median\n",
                   (long long)flops, (double)flops * 1e-9, gflops);
            if (wbytes >= 0) printf("weights  %10lld bytes in the compiled code\n", wbytes);
        }
        double mean = 0; /* a run's mean in the profile's clock */
        for (int r = 0; r < runs; r++) mean += lat[r] / runs;
        if (cpu_clock) mean = cpu_run;
        if (profile)
            rc = report_profile(model, backend, backend_kprog(bp), &acc, runs, mean, profile_file,
                                !json);
    }
    backend_release(bp);
    free(paced_lat);
    free(acc.start);
    free(acc.sum);
    kn_arena_destroy(a);
    kn_graph_destroy(g);
    return rc;
}
