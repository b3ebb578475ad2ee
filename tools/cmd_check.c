/* kiln check-onnx: runs ONNX backend test folders (model.onnx plus
 * test_data_set_N/{input,output}_K.pb) and compares outputs with rtol 1e-3,
 * atol 1e-5, NaN equal to NaN, dtype and shape exact.
 *
 * Tests run in forked worker processes (a batch of tests each, see run_all), each
 * test with its own time limit, so a crash or hang in one operator is reported as
 * that test's failure and the run goes on. A known-failures
 * file ("test_name: reason" per line) is enforced both ways: a listed test that
 * fails counts as skipped; a listed test that passes is a failure ("remove it from
 * the list"), so the list only shrinks. The last line is "N passed, N failed" with
 * ", N skipped" when some were skipped. */
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "ir/interp.h"
#include "tools/backend.h"
#include "tools/cli.h"
#include "tools/help.h"
#include "tools/opsdoc.h"

#include <dirent.h>
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RTOL 1e-3
#define ATOL 1e-5

typedef struct known {
    int n, cap;
    char **names;
    char *used;
} known;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Sorted names of the entries of dir starting with prefix (NULL: all). */
static int list_dir(const char *dir, const char *prefix, char ***out) {
    DIR *d = opendir(dir);
    int n = 0, cap = 16;
    char **v = malloc((size_t)cap * sizeof *v);
    KN_ASSERT(v);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            if (prefix && strncmp(e->d_name, prefix, strlen(prefix))) continue;
            if (n == cap) {
                cap *= 2;
                v = realloc(v, (size_t)cap * sizeof *v);
                KN_ASSERT(v);
            }
            v[n++] = strdup(e->d_name);
        }
        closedir(d);
    }
    qsort(v, (size_t)n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, int n) {
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* ---- comparison ---- */

static bool close_enough(double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= ATOL + RTOL * fabs(b);
}

static bool compare(const kn_tensor *got, const kn_tensor *want, char *why, size_t cap) {
    char a[128], b[128];
    if (got->type.kind != want->type.kind) {
        snprintf(why, cap, "got a %s, expected %s", kn_type_str(&got->type, a, sizeof a),
                 kn_type_str(&want->type, b, sizeof b));
        return false;
    }
    if (got->type.kind != KN_KIND_TENSOR) {
        if (got->nitems != want->nitems) {
            snprintf(why, cap, "got %d items, expected %d", got->nitems, want->nitems);
            return false;
        }
        for (int i = 0; i < got->nitems; i++) {
            if (!got->items[i] || !want->items[i]) {
                if (got->items[i] != want->items[i]) {
                    snprintf(why, cap, "item %d presence differs", i);
                    return false;
                }
                continue;
            }
            if (!compare(got->items[i], want->items[i], why, cap)) return false;
        }
        return true;
    }
    if (got->type.dtype != want->type.dtype || !kn_type_equal(&got->type, &want->type)) {
        snprintf(why, cap, "got %s, expected %s", kn_type_str(&got->type, a, sizeof a),
                 kn_type_str(&want->type, b, sizeof b));
        return false;
    }
    int64_t n = kn_tensor_numel(want);
    kn_dtype dt = want->type.dtype;
    const kn_dtype_info *info = kn_dtype_get(dt);
    int64_t bad = 0, first = -1;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        if (dt == KN_STRING)
            ok = !strcmp(((char **)got->data)[i], ((char **)want->data)[i]);
        else if (info->is_float || kn_dtype_is_f8(dt)) /* float8: decoded, NaN equal to NaN */
            ok = close_enough(kn_load_f64(got->data, dt, (size_t)i),
                              kn_load_f64(want->data, dt, (size_t)i));
        else
            ok = kn_load_u64(got->data, dt, (size_t)i) == kn_load_u64(want->data, dt, (size_t)i);
        if (!ok) {
            if (first < 0) first = i;
            bad++;
            if (dt != KN_STRING) {
                double d = fabs(kn_load_f64(got->data, dt, (size_t)i) -
                                kn_load_f64(want->data, dt, (size_t)i));
                if (d > worst || isnan(d)) worst = d;
            }
        }
    }
    if (!bad) return true;
    if (dt == KN_STRING)
        snprintf(why, cap, "%lld of %lld strings differ; first at %lld: \"%s\" vs \"%s\"",
                 (long long)bad, (long long)n, (long long)first, ((char **)got->data)[first],
                 ((char **)want->data)[first]);
    else
        snprintf(
            why, cap, "%lld of %lld values differ (max abs diff %.3g); first at %lld: %.7g vs %.7g",
            (long long)bad, (long long)n, worst, (long long)first,
            kn_load_f64(got->data, dt, (size_t)first), kn_load_f64(want->data, dt, (size_t)first));
    return false;
}

/* onnx 1.12's test generator had no numpy bfloat16 and stored bfloat16 data as
 * UINT16 tensors holding the same bits: read them as the bf16 the model declares. */
static void bf16_from_u16(kn_tensor *t, kn_dtype declared) {
    if (declared == KN_BF16 && t->type.kind == KN_KIND_TENSOR && t->type.dtype == KN_U16)
        t->type.dtype = KN_BF16;
}

/* Runs one test folder; returns true on pass, else fills why. */
static const char *backend = "interp";
static kn_compile_opts check_opts; /* --passes, --schedule, --tuning, -O */

/* Binds the inputs whose values determine shapes (compiled backends only): they
 * become constants and leave in[]. Returns how many were bound. */
static int bind_shape_inputs(kn_ctx *cx, kn_graph *g, kn_tensor **in) {
    if (!strcmp(backend, "interp") || !g->nin) return 0;
    unsigned char mark[256] = {0};
    if (g->nin > 256) return 0;
    char names[256][256];
    int bound = 0;
    /* integer inputs first; then any input if shapes still depend on values (OneHot's
     * float depth next to its integer indices) */
    for (int pass = 0; pass < 2 && g->nin; pass++) {
        if (!backend_shape_inputs(cx, g, in, mark, pass == 1)) continue;
        int k = 0, nin = g->nin;
        for (int i = 0; i < nin; i++) snprintf(names[i], sizeof names[i], "%s", g->inputs[i]->name);
        for (int i = 0; i < nin; i++) {
            if (mark[i] && !kn_graph_bind_input(cx, g, names[i], in[i])) {
                bound++;
                continue;
            }
            in[k++] = in[i];
        }
    }
    return bound;
}

static bool run_test(const char *dir, char *why, size_t cap, int *bound) {
    char path[4096], model[4096];
    /* Hooks for tests/cli/cli.sh: the test folder named so crashes or hangs. */
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir, *hook;
    if ((hook = getenv("KILN_TEST_CRASH")) && !strcmp(hook, base)) raise(SIGSEGV);
    if ((hook = getenv("KILN_TEST_HANG")) && !strcmp(hook, base))
        for (;;) pause();
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(model, sizeof model, "%s", path);
    kn_ctx cx;
    kn_ctx_init(&cx, model);
    kn_graph *g;
    if (kn_onnx_load_file(&cx, path, &g)) {
        snprintf(why, cap, "%s", cx.msg);
        return false;
    }
    char **sets;
    int nsets = list_dir(dir, "test_data_set_", &sets);
    bool ok = nsets > 0;
    if (!ok) snprintf(why, cap, "no test_data_set_* folders");
    for (int s = 0; s < nsets && ok; s++) {
        if (s > 0 && strcmp(backend, "interp")) { /* compiled backends transform g */
            kn_graph_destroy(g);
            snprintf(path, sizeof path, "%s/model.onnx", dir);
            if (kn_onnx_load_file(&cx, path, &g)) {
                snprintf(why, cap, "%s", cx.msg);
                free_list(sets, nsets);
                return false;
            }
        }
        kn_arena *a = kn_arena_create();
        kn_tensor **in = kn_arena_array(a, (size_t)g->nin + 1, sizeof *in);
        kn_tensor **out = kn_arena_array(a, (size_t)g->nout + 1, sizeof *out);
        kn_ctx fcx;
        kn_ctx_init(&fcx, NULL);
        for (int i = 0; i < g->nin && ok; i++) {
            snprintf(path, sizeof path, "%s/%s/input_%d.pb", dir, sets[s], i);
            if (!file_exists(path)) {
                snprintf(why, cap, "%s: missing input_%d.pb for input '%s'", sets[s], i,
                         g->inputs[i]->name);
                ok = false;
            } else if (kn_tensorfile_read(&fcx, a, path, g->inputs[i]->type.kind, &in[i])) {
                snprintf(why, cap, "%s", fcx.msg);
                ok = false;
            } else {
                bf16_from_u16(in[i], g->inputs[i]->type.dtype);
            }
        }
        if (ok) *bound += bind_shape_inputs(&cx, g, in);
        /* compiling flattens sequence outputs in g; out[] keeps the model's outputs */
        kn_value **outputs = g->outputs;
        int nout = g->nout;
        if (ok && backend_run(&cx, backend, g, a, in, out, 0, &check_opts)) {
            snprintf(why, cap, "%s", cx.msg);
            ok = false;
        }
        for (int i = 0; i < nout && ok; i++) {
            snprintf(path, sizeof path, "%s/%s/output_%d.pb", dir, sets[s], i);
            kn_tensor *want;
            kn_kind kind = out[i]->type.kind;
            if (kn_tensorfile_read(&fcx, a, path, kind, &want)) {
                snprintf(why, cap, "%s", fcx.msg);
                ok = false;
            } else {
                bf16_from_u16(want, out[i]->type.dtype);
                char w[600];
                if (!compare(out[i], want, w, sizeof w)) {
                    snprintf(why, cap, "%s output '%s': %s", sets[s], outputs[i]->name, w);
                    ok = false;
                }
            }
        }
        kn_arena_destroy(a);
    }
    free_list(sets, nsets);
    kn_graph_destroy(g);
    return ok;
}

static int load_known(const char *path, known *k) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kiln: cannot open known-failures file '%s'\n", path);
        return -1;
    }
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || !*p) continue;
        size_t len = strcspn(p, ": \t\n");
        if (k->n == k->cap) {
            k->cap = k->cap ? k->cap * 2 : 64;
            k->names = realloc(k->names, (size_t)k->cap * sizeof *k->names);
            KN_ASSERT(k->names);
        }
        k->names[k->n++] = strndup(p, len);
    }
    fclose(f);
    return 0;
}

static int known_index(const known *k, const char *name) {
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->names[i], name)) return i;
    return -1;
}

/* ---- worker processes ----
 *
 * Tests run in forked worker processes, up to `batch` tests each, in order. A
 * worker sets a fresh time limit (alarm) before each test and writes one record per
 * test to a pipe: 1 byte passed, 1 byte inputs bound, 2 bytes message length, the
 * message. When a worker dies (a crash, a sanitizer report, the time limit), the
 * test it was running fails with that cause and a new worker takes the next test.
 * Batching saves each test the start-up of the backend: PoCL loads and links its
 * kernel library once per process, about 1.5 s of CPU, five times a small node
 * test's own cost. */

#define MSG_CAP 1200

typedef struct worker_record {
    unsigned char ok, bound, len[2];
    char msg[MSG_CAP];
} worker_record;

/* Reads exactly n bytes; false at end of file or on an error. */
static bool read_full(int fd, void *buf, size_t n) {
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

/* The worker: runs dirs[first..last) and reports each on fd (one write a record,
 * less than PIPE_BUF bytes, so a record arrives whole or not at all). */
static void worker_run(char **dirs, int first, int last, int timeout, int fd) {
    for (int i = first; i < last; i++) {
        worker_record r;
        int bound = 0;
        r.msg[0] = 0;
        alarm((unsigned)timeout);
        bool ok = run_test(dirs[i], r.msg, sizeof r.msg, &bound);
        alarm(0);
        size_t len = ok ? 0 : strlen(r.msg);
        r.ok = ok;
        r.bound = bound != 0;
        r.len[0] = (unsigned char)(len & 0xff);
        r.len[1] = (unsigned char)(len >> 8);
        if (write(fd, &r, offsetof(worker_record, msg) + len) < 0) return;
    }
}

/* Why a worker that stopped during a test failed it, from its wait status. */
static void worker_death(int status, int timeout, char *why, size_t cap) {
    if (WIFEXITED(status)) /* e.g. a sanitizer report, printed on stderr */
        snprintf(why, cap, "test process exited with status %d", WEXITSTATUS(status));
    else if (WTERMSIG(status) == SIGALRM)
        snprintf(why, cap, "timed out after %d s", timeout);
    else
        snprintf(why, cap, "crashed with signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
}

/* What the tests came to, and what the results are checked against. */
typedef struct check_run {
    known k;
    opsdoc *doc;
    bool verbose;
    int passed, failed, skipped, nbound;
} check_run;

/* Counts and prints one test's result. */
static void report(check_run *r, const char *dir, bool ok, int bound, const char *why) {
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    char model[4096];
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    if (ok && bound) r->nbound++;
    if (r->doc) opsdoc_add(r->doc, model, ok);
    int ki = known_index(&r->k, name);
    if (ki >= 0) r->k.used[ki] = 1;
    if (ok && ki >= 0) {
        printf("FAIL %s: passes but is listed as a known failure; remove it from the list\n", name);
        r->failed++;
    } else if (ok) {
        if (r->verbose) printf("pass %s\n", name);
        r->passed++;
    } else if (ki >= 0) {
        if (r->verbose) printf("skip %s (known failure): %s\n", name, why);
        r->skipped++;
    } else {
        printf("FAIL %s: %s\n", name, why);
        r->failed++;
    }
    fflush(stdout);
}

/* Runs dirs[0..n) in workers of up to `batch` tests (0: in this process). */
static void run_all(check_run *r, char **dirs, int n, int batch, int timeout) {
    char why[MSG_CAP];
    for (int i = 0; i < n;) {
        int fd[2];
        pid_t pid = -1;
        fflush(stdout);
        fflush(stderr);
        if (batch > 0 && !pipe(fd) && (pid = fork()) < 0) {
            close(fd[0]);
            close(fd[1]);
        }
        if (pid < 0) { /* --no-fork, or no pipe or process to be had */
            int bound = 0;
            why[0] = 0;
            bool ok = run_test(dirs[i], why, sizeof why, &bound);
            report(r, dirs[i], ok, bound, why);
            i++;
            continue;
        }
        int last = i + batch < n ? i + batch : n;
        if (pid == 0) {
            close(fd[0]);
            worker_run(dirs, i, last, timeout, fd[1]);
            close(fd[1]);
            _exit(0);
        }
        close(fd[1]);
        worker_record rec;
        int first = i;
        while (i < last && read_full(fd[0], &rec, offsetof(worker_record, msg))) {
            size_t len = (size_t)rec.len[0] | (size_t)rec.len[1] << 8;
            if (len >= sizeof rec.msg || !read_full(fd[0], rec.msg, len)) break;
            rec.msg[len] = 0;
            report(r, dirs[i], rec.ok, rec.bound, rec.msg);
            i++;
        }
        close(fd[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        if (i < last) { /* the worker died running dirs[i] */
            worker_death(status, timeout, why, sizeof why);
            report(r, dirs[i], false, 0, why);
            i++;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
            /* every test reported, then the exit failed (a leak report at exit) */
            worker_death(status, timeout, why, sizeof why);
            printf("FAIL the process that ran %s .. %s: %s\n", dirs[first], dirs[last - 1], why);
            r->failed++;
        }
    }
}

/* Tests per worker process by default. A sanitizer build runs one test a process, so
 * that a report at exit (LeakSanitizer's) names its test. */
#if defined(__SANITIZE_ADDRESS__)
#define DEFAULT_BATCH 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEFAULT_BATCH 1
#endif
#endif
#ifndef DEFAULT_BATCH
#define DEFAULT_BATCH 64
#endif

int cmd_check_onnx(int argc, char **argv) {
    const char *dirs[256], *kf[8], *opsmd = NULL, *v;
    int nkf = 0;
    int ndirs = 0, timeout = 60, batch = DEFAULT_BATCH;
    check_run r = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("check-onnx"));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "--known-failures", &v)) {
            if (nkf == 8) return cli_usage_error("check-onnx", "too many --known-failures");
            kf[nkf++] = v;
        } else if (cli_opt(argc, argv, &i, "--backend", &v)) {
            backend = v;
        } else if (cli_opt(argc, argv, &i, "--operators-md", &v)) {
            opsmd = v;
        } else if (cli_opt(argc, argv, &i, "--timeout", &v)) {
            timeout = atoi(v);
            if (timeout <= 0) return cli_usage_error("check-onnx", "bad --timeout '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--batch", &v)) {
            batch = atoi(v);
            if (batch <= 0) return cli_usage_error("check-onnx", "bad --batch '%s'", v);
        } else if (cli_flag(argv[i], "--no-fork")) {
            batch = 0;
        } else if (cli_flag(argv[i], "-v") || cli_flag(argv[i], "--verbose")) {
            r.verbose = true;
        } else if (cli_opt(argc, argv, &i, "--passes", &v)) {
            check_opts.passes = v;
        } else if (cli_opt(argc, argv, &i, "--schedule", &v)) {
            check_opts.schedule_file = v;
        } else if (cli_opt(argc, argv, &i, "--tuning", &v)) {
            check_opts.tuning_file = v;
        } else if (cli_opt(argc, argv, &i, "--weights", &v)) {
            check_opts.weights = !strcmp(v, "f16")    ? KN_F16
                                 : !strcmp(v, "bf16") ? KN_BF16
                                                      : KN_UNDEF;
            if (!check_opts.weights)
                return cli_usage_error("check-onnx", "--weights takes f16 or bf16, got '%s'", v);
        } else if (cli_opt_level(argv[i], &check_opts.opt_level)) {
            check_opts.opt_level_set = true;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("check-onnx", argv[i]);
        } else if (ndirs < 256) {
            dirs[ndirs++] = argv[i];
        } else {
            return cli_usage_error("check-onnx", "too many folders");
        }
    }
    if (!ndirs) return cli_usage_error("check-onnx", "no test folder given");
    if (!backend_known(backend))
        return cli_usage_error("check-onnx", "unknown backend '%s' (available: " BACKEND_NAMES ")",
                               backend);
    for (int i = 0; i < nkf; i++)
        if (load_known(kf[i], &r.k)) return EXIT_USAGE;
    r.k.used = calloc((size_t)r.k.n + 1, 1);

    /* every test folder, in order */
    int n = 0, cap = 64;
    char **tests = malloc((size_t)cap * sizeof *tests);
    KN_ASSERT(tests);
    for (int d = 0; d < ndirs; d++) {
        char **names;
        int nnames;
        char model[4096];
        snprintf(model, sizeof model, "%s/model.onnx", dirs[d]);
        if (file_exists(model)) {
            names = malloc(sizeof *names);
            KN_ASSERT(names);
            names[0] = strdup("");
            nnames = 1;
        } else if (is_dir(dirs[d])) {
            nnames = list_dir(dirs[d], NULL, &names);
        } else {
            fprintf(stderr, "kiln: '%s' is not a test folder\n", dirs[d]);
            return EXIT_BAD_INPUT;
        }
        for (int t = 0; t < nnames; t++) {
            char dir[4000];
            if (names[t][0])
                snprintf(dir, sizeof dir, "%s/%s", dirs[d], names[t]);
            else
                snprintf(dir, sizeof dir, "%s", dirs[d]);
            snprintf(model, sizeof model, "%s/model.onnx", dir);
            if (!file_exists(model)) continue;
            if (n == cap) {
                cap *= 2;
                tests = realloc(tests, (size_t)cap * sizeof *tests);
                KN_ASSERT(tests);
            }
            tests[n++] = strdup(dir);
        }
        free_list(names, nnames);
    }

    bool skip_all = !backend_available(backend);
    if (skip_all) {
        printf("no OpenCL platform found: the tests are skipped\n");
        r.skipped = n;
    } else {
        r.doc = opsmd ? opsdoc_create() : NULL;
        run_all(&r, tests, n, batch, timeout);
    }
    free_list(tests, n);
    if (r.doc) {
        FILE *f = fopen(opsmd, "w");
        if (f) {
            opsdoc_write(r.doc, f, backend);
            fclose(f);
        } else {
            fprintf(stderr, "kiln: cannot write '%s'\n", opsmd);
        }
        opsdoc_destroy(r.doc);
    }
    if (r.nbound)
        printf("%d of the passing tests had shape-determining inputs bound as constants\n",
               r.nbound);
    if (r.skipped && !skip_all) printf("%d listed known failures were skipped\n", r.skipped);
    if (r.skipped)
        printf("%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped);
    else
        printf("%d passed, %d failed\n", r.passed, r.failed);
    for (int i = 0; i < r.k.n; i++) free(r.k.names[i]);
    free(r.k.names);
    free(r.k.used);
    if (skip_all) return EXIT_SKIPPED;
    return r.failed ? EXIT_BAD_INPUT : EXIT_OK;
}
