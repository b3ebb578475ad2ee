/* kiln_diff: differential testing of random graphs across every backend.
 *
 *   kiln_diff [--seed S] [--count N] [--seconds T] [--nodes MIN,MAX] [--out DIR]
 *             [--no-opencl] [--opencl-every N] [--no-c] [--only CONFIG] [-v]
 *
 * Graph i (seed S+i, tests/diff/gen.c) runs through the interpreter (the reference),
 * the C backend (target generic on even seeds, native on odd), LLVM (native and
 * generic, 1 and 2 threads) and OpenCL (skipped when there is no device); each
 * output is compared by normalized error max|y - ref| / max(max|ref|, 1e-2) against
 * 1e-3. A graph runs in a child process, so a crash or a hang (60 s) is a finding
 * too. A failing graph is shrunk (outputs dropped, nodes cut into graph inputs while
 * the same backend still fails the same way) and written under DIR as a test folder
 * check-onnx reads: DIR/diff_<seed>/model.onnx and test_data_set_0/{input,output}_K.pb
 * (the interpreter's outputs: the reference the compiled backends disagreed with; the
 * interpreter itself is checked against the ONNX conformance data).
 *
 * Exit status: 0 when every graph agreed, 1 when some did not, 2 on bad usage. A
 * backend that refuses a graph as unsupported (KN_EUNSUPPORTED) is counted, not failed. */
#include "frontend/onnx.h"
#include "ir/interp.h"
#include "tests/diff/gen.h"
#include "tools/backend.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct config {
    const char *name, *backend, *target; /* target NULL: generic/native by seed */
    int threads;
} config;

static const config configs[] = {
    {"c", "c", NULL, 1},
    {"llvm-native-t1", "llvm", "native", 1},
    {"llvm-native-t2", "llvm", "native", 2},
    {"llvm-generic-t1", "llvm", "generic", 1},
    {"llvm-generic-t2", "llvm", "generic", 2},
    {"opencl", "opencl", NULL, 1},
};
#define NCONFIGS ((int)(sizeof configs / sizeof *configs))

enum { RES_OK, RES_MISMATCH, RES_ERROR, RES_CRASH, RES_REF_FAILED, RES_REF_NONFINITE };
static const char *result_names[] = {"ok",    "mismatch",         "error",
                                     "crash", "reference failed", "reference not finite"};

/* What a child reports, in memory shared with the parent. */
typedef struct result {
    int kind;
    int config; /* the config running or failed, -1 the interpreter */
    int output;
    double err;
    int unsupported[NCONFIGS];
    char msg[1024];
} result;

static const double TOLERANCE = 1e-3;
static bool skip_c, skip_opencl;
static const char *only;      /* --only NAME: that config alone */
static long opencl_every = 1; /* OpenCL (slow to build kernels) on every N-th graph */
static int verbose;

static kn_tensor *input_tensor(kn_arena *a, const dg_value *v) {
    kn_tensor *t = kn_tensor_make(a, KN_F32, v->rank, v->dims);
    memcpy(t->data, v->data, kn_tensor_nbytes(t));
    return t;
}

/* Runs g on `backend` (NULL: interpreter); outputs in out[], allocated in a. */
static kn_status run_one(kn_ctx *cx, const uint8_t *buf, size_t len, const dg_graph *dg,
                         const char *backend, int threads, kn_arena *a, kn_tensor **out) {
    kn_graph *g;
    kn_ctx_init(cx, "diff.onnx");
    if (kn_onnx_load_memory(cx, buf, len, NULL, "diff.onnx", &g)) return cx->status;
    int idx[DG_MAX_VALUES], nin = dg_inputs(dg, idx);
    kn_tensor *in[DG_MAX_VALUES];
    for (int i = 0; i < nin; i++) in[i] = input_tensor(a, &dg->v[idx[i]]);
    kn_status st;
    if (!backend) {
        st = kn_interp_run(cx, g, a, in, out, 1);
    } else {
        backend_prog *bp;
        st = backend_prepare(cx, backend, g, in, NULL, threads, NULL, &bp);
        if (!st) st = backend_call(cx, bp, a, in, out, 1);
        if (!st) backend_release(bp);
    }
    kn_graph_destroy(g);
    return st;
}

static double compare(const kn_tensor *y, const kn_tensor *ref, char *msg, size_t n) {
    if (y->type.dtype != ref->type.dtype || y->type.rank != ref->type.rank) {
        snprintf(msg, n, "dtype or rank differ (rank %d, reference %d)", y->type.rank,
                 ref->type.rank);
        return INFINITY;
    }
    for (int i = 0; i < ref->type.rank; i++)
        if (y->type.dims[i] != ref->type.dims[i]) {
            snprintf(msg, n, "dim %d is %lld, reference %lld", i, (long long)y->type.dims[i],
                     (long long)ref->type.dims[i]);
            return INFINITY;
        }
    const float *p = y->data, *q = ref->data;
    int64_t cnt = kn_tensor_numel(ref), worst = 0;
    double scale = 1e-2, diff = 0;
    for (int64_t i = 0; i < cnt; i++) scale = fmax(scale, fabs(q[i]));
    for (int64_t i = 0; i < cnt; i++) {
        double d = fabs((double)p[i] - q[i]);
        if (isnan(p[i])) d = INFINITY;
        if (d > diff) diff = d, worst = i;
    }
    if (diff / scale > TOLERANCE)
        snprintf(msg, n, "element %lld is %g, reference %g (scale %g)", (long long)worst, p[worst],
                 q[worst], scale);
    return diff / scale;
}

static const char *target_of(const config *c, uint64_t seed) {
    return c->target ? c->target : (seed & 1) ? "native" : "generic";
}

/* In a child: the interpreter, then every config of mask; fills r. */
static void check_graph(const dg_graph *dg, uint64_t seed, unsigned mask, result *r) {
    uint8_t *buf;
    size_t len;
    dg_pack(dg, &buf, &len);
    kn_ctx cx;
    kn_arena *a = kn_arena_create();
    kn_tensor *ref[DG_MAX_VALUES], *out[DG_MAX_VALUES];
    r->config = -1;
    if (run_one(&cx, buf, len, dg, NULL, 1, a, ref)) {
        r->kind = RES_REF_FAILED;
        snprintf(r->msg, sizeof r->msg, "%s", cx.msg);
        return;
    }
    for (int i = 0; i < dg->nout; i++) {
        const float *q = ref[i]->data;
        for (int64_t j = 0; j < kn_tensor_numel(ref[i]); j++)
            if (!isfinite(q[j])) {
                r->kind = RES_REF_NONFINITE;
                return;
            }
    }
    for (int c = 0; c < NCONFIGS; c++) {
        if (!(mask & (1u << c))) continue;
        r->config = c;
        setenv("KILN_TEST_TARGET", target_of(&configs[c], seed), 1);
        if (run_one(&cx, buf, len, dg, configs[c].backend, configs[c].threads, a, out)) {
            if (cx.status == KN_EUNSUPPORTED) {
                r->unsupported[c]++;
                if (verbose) fprintf(stderr, "  %s: unsupported: %s\n", configs[c].name, cx.msg);
                continue;
            }
            r->kind = RES_ERROR;
            snprintf(r->msg, sizeof r->msg, "%s", cx.msg);
            return;
        }
        for (int i = 0; i < dg->nout; i++) {
            double e = compare(out[i], ref[i], r->msg, sizeof r->msg);
            if (e > TOLERANCE) {
                r->kind = RES_MISMATCH;
                r->output = i;
                r->err = e;
                return;
            }
        }
    }
    r->config = -2;
    r->kind = RES_OK;
    kn_arena_destroy(a);
    free(buf);
}

/* Runs check_graph in a child process; a signal or a hang is a crash. */
static void check_isolated(const dg_graph *dg, uint64_t seed, unsigned mask, result *r) {
    result *shared =
        mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(shared, 0, sizeof *shared);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(300); /* PoCL builds big kernels slowly on a loaded machine */
        check_graph(dg, seed, mask, shared);
        _exit(0);
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    *r = *shared;
    if (WIFSIGNALED(ws) || (WIFEXITED(ws) && WEXITSTATUS(ws))) {
        r->kind = RES_CRASH;
        snprintf(r->msg, sizeof r->msg, "%s %d",
                 WIFSIGNALED(ws) ? "killed by signal" : "exit status",
                 WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    }
    munmap(shared, sizeof *shared);
}

static unsigned default_mask(void) {
    unsigned m = 0;
    for (int c = 0; c < NCONFIGS; c++) {
        if (skip_c && !strcmp(configs[c].backend, "c")) continue;
        if (only && strcmp(configs[c].name, only)) continue;
        if (!strcmp(configs[c].backend, "opencl") && (skip_opencl || !backend_available("opencl")))
            continue;
        m |= 1u << c;
    }
    return m;
}

/* Whether g fails config c the way `want` did. */
static bool still_fails(const dg_graph *g, uint64_t seed, int c, const result *want) {
    result r;
    check_isolated(g, seed, 1u << c, &r);
    return r.kind == want->kind && r.config == c;
}

/* Shrinks *g while it fails config c as `want` did. */
static void shrink(dg_graph *g, uint64_t seed, int c, const result *want) {
    for (bool progress = true; progress;) {
        progress = false;
        for (int i = 0; g->nout > 1 && i < g->nout; i++) {
            dg_graph *t = malloc(sizeof *t);
            dg_copy(t, g);
            for (int j = 0; j < g->nn; j++) t->n[j].dead = false;
            for (int j = 0; j < g->nv; j++) t->v[j].dead = false;
            for (int j = i; j + 1 < t->nout; j++) t->out[j] = t->out[j + 1];
            t->nout--;
            dg_prune(t);
            for (int j = 0; j < g->nn; j++) t->n[j].dead |= g->n[j].dead;
            dg_prune(t);
            if (still_fails(t, seed, c, want)) {
                dg_free(g);
                memcpy(g, t, sizeof *g);
                progress = true;
                i--;
            } else {
                dg_free(t);
            }
            free(t);
        }
        for (int k = g->nn - 1; k >= 0; k--) {
            if (g->n[k].dead) continue;
            dg_graph *t = malloc(sizeof *t);
            dg_copy(t, g);
            bool is_out = false;
            for (int j = 0; j < t->nout; j++) is_out |= t->out[j] == t->n[k].out;
            if (is_out) { /* an output node: cutting it leaves nothing to compute */
                dg_free(t);
                free(t);
                continue;
            }
            dg_cut(t, k, seed + (uint64_t)k);
            if (still_fails(t, seed, c, want)) {
                dg_free(g);
                memcpy(g, t, sizeof *g);
                progress = true;
            } else {
                dg_free(t);
            }
            free(t);
        }
    }
}

static int write_blob(const char *path, const void *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(buf, 1, len, f);
    return fclose(f) || w != len ? -1 : 0;
}

/* Writes g as a check-onnx test folder dir/diff_<seed>, outputs from the interpreter. */
static void write_case(const dg_graph *g, uint64_t seed, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/diff_%llu", dir, (unsigned long long)seed);
    mkdir(dir, 0777);
    mkdir(path, 0777);
    uint8_t *buf;
    size_t len;
    dg_pack(g, &buf, &len);
    char p[4200];
    snprintf(p, sizeof p, "%s/model.onnx", path);
    write_blob(p, buf, len);
    snprintf(p, sizeof p, "%s/test_data_set_0", path);
    mkdir(p, 0777);
    kn_ctx cx;
    kn_arena *a = kn_arena_create();
    kn_tensor *ref[DG_MAX_VALUES];
    int idx[DG_MAX_VALUES], nin = dg_inputs(g, idx);
    if (!run_one(&cx, buf, len, g, NULL, 1, a, ref)) {
        for (int i = 0; i < nin + g->nout; i++) {
            bool is_in = i < nin;
            int k = is_in ? idx[i] : g->out[i - nin];
            kn_tensor *t = is_in ? input_tensor(a, &g->v[k]) : ref[i - nin];
            char name[32];
            snprintf(name, sizeof name, "v%d", k);
            void *pb;
            size_t n;
            if (kn_onnx_encode_tensor(&cx, t, name, &pb, &n)) continue;
            snprintf(p, sizeof p, "%s/test_data_set_0/%s_%d.pb", path, is_in ? "input" : "output",
                     is_in ? i : i - nin);
            write_blob(p, pb, n);
            free(pb);
        }
    }
    kn_arena_destroy(a);
    free(buf);
    fprintf(stderr, "  written: %s\n", path);
}

int main(int argc, char **argv) {
    uint64_t seed = 1;
    long count = 100;
    double seconds = 0;
    int min_nodes = 2, max_nodes = 30;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seed") && v)
            seed = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--count") && v)
            count = strtol(v, NULL, 0), i++;
        else if (!strcmp(a, "--seconds") && v)
            seconds = strtod(v, NULL), i++;
        else if (!strcmp(a, "--nodes") && v && sscanf(v, "%d,%d", &min_nodes, &max_nodes) == 2)
            i++;
        else if (!strcmp(a, "--out") && v)
            out = v, i++;
        else if (!strcmp(a, "--no-opencl"))
            skip_opencl = true;
        else if (!strcmp(a, "--opencl-every") && v && (opencl_every = strtol(v, NULL, 0)) > 0)
            i++;
        else if (!strcmp(a, "--only") && v)
            only = v, i++;
        else if (!strcmp(a, "--no-c"))
            skip_c = true;
        else if (!strcmp(a, "-v"))
            verbose++;
        else {
            fprintf(stderr,
                    "usage: kiln_diff [--seed S] [--count N] [--seconds T] [--nodes MIN,MAX] "
                    "[--out DIR] [--no-opencl] [--opencl-every N] [--no-c] [--only CONFIG] [-v]\n");
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    unsigned mask = default_mask();
    fprintf(stderr, "kiln_diff: seed %llu, backends:", (unsigned long long)seed);
    for (int c = 0; c < NCONFIGS; c++)
        if (mask & (1u << c)) fprintf(stderr, " %s", configs[c].name);
    fprintf(stderr, "\n");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long run = 0, failed = 0, ref_failed = 0, nonfinite = 0, nodes = 0;
    long unsupported[NCONFIGS] = {0};
    dg_graph *g = malloc(sizeof *g);
    for (long i = 0; count <= 0 || i < count; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (seconds > 0 && el >= seconds) break;
        uint64_t s = seed + (uint64_t)i;
        dg_generate(g, s, min_nodes, max_nodes);
        if (verbose) {
            fprintf(stderr, "graph %llu (%d nodes)\n", (unsigned long long)s, dg_live_nodes(g));
            if (verbose > 1) dg_print(g, stderr);
        }
        result r;
        unsigned m = mask;
        if (i % opencl_every)
            for (int c = 0; c < NCONFIGS; c++)
                if (!strcmp(configs[c].backend, "opencl")) m &= ~(1u << c);
        check_isolated(g, s, m, &r);
        run++;
        nodes += dg_live_nodes(g);
        for (int c = 0; c < NCONFIGS; c++) unsupported[c] += r.unsupported[c] > 0;
        if (r.kind == RES_REF_NONFINITE) nonfinite++;
        if (r.kind == RES_OK || r.kind == RES_REF_NONFINITE) {
            dg_free(g);
            continue;
        }
        const char *cname = r.config >= 0 ? configs[r.config].name : "interp";
        fprintf(stderr, "graph %llu: %s on %s (target %s)", (unsigned long long)s,
                result_names[r.kind], cname,
                r.config >= 0 ? target_of(&configs[r.config], s) : "-");
        if (r.kind == RES_MISMATCH) fprintf(stderr, ", output %d, error %.3g", r.output, r.err);
        fprintf(stderr, ": %s\n", r.msg);
        if (r.kind == RES_REF_FAILED) {
            ref_failed++;
            dg_print(g, stderr);
            dg_free(g);
            continue;
        }
        failed++;
        if (r.config >= 0) {
            shrink(g, s, r.config, &r);
            fprintf(stderr, "  shrunk to %d nodes:\n", dg_live_nodes(g));
            dg_print(g, stderr);
            if (out) write_case(g, s, out);
        }
        dg_free(g);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fprintf(stderr,
            "kiln_diff: %ld graphs (%ld nodes) in %.0f s: %ld failed, %ld the interpreter "
            "refused, %ld not finite\n",
            run, nodes, el, failed, ref_failed, nonfinite);
    for (int c = 0; c < NCONFIGS; c++)
        if (unsupported[c])
            fprintf(stderr, "  %s refused %ld graphs as unsupported\n", configs[c].name,
                    unsupported[c]);
    free(g);
    return failed || ref_failed ? 1 : 0;
}
