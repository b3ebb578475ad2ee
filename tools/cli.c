/* Helpers shared by the kiln subcommands. */
#include "tools/cli.h"
#include "tools/help.h"
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "ir/interp.h"
#include "passes/deseq.h"
#include "passes/pass.h"
#include "targets/target.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- warnings, -v and progress ---- */

static cli_talk talk;
static bool progress_shown;
static double stage_start;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

bool cli_talk_opt(const char *arg, cli_talk *t, bool quiet_allowed) {
    if (quiet_allowed && (cli_flag(arg, "-q") || cli_flag(arg, "--quiet")))
        t->quiet = true;
    else if (cli_flag(arg, "--no-warnings"))
        t->no_warnings = true;
    else if (cli_flag(arg, "-v") || cli_flag(arg, "--verbose"))
        t->verbose = true;
    else
        return false;
    return true;
}

void cli_progress_end(void) {
    if (progress_shown) fputs("\r\033[K", stderr);
    progress_shown = false;
}

static void on_warning(void *user, const char *msg) {
    (void)user;
    cli_progress_end();
    fprintf(stderr, "kiln: warning: %s\n", msg);
}

static void on_event(void *user, const kn_event *ev) {
    (void)user;
    double t = now_ms();
    if (talk.verbose) {
        if (ev->kind == KN_EVENT_PASS)
            fprintf(stderr, "kiln: pass %-12s %9.2f ms, IR size %lld after it\n", ev->name, ev->ms,
                    ev->size);
        else if (ev->kind == KN_EVENT_STAGE)
            fprintf(stderr, "kiln: %s (%.1f ms so far)\n", ev->name, t - stage_start);
        else if (ev->kind == KN_EVENT_WRITE && ev->done)
            fprintf(stderr, "kiln: wrote %s, %lld bytes\n", ev->name, ev->size);
        return;
    }
    static double last;
    if (ev->kind != KN_EVENT_STAGE && t - last < 100) return; /* at most 10 updates a second */
    last = t;
    if (ev->kind == KN_EVENT_STAGE)
        fprintf(stderr, "\r\033[Kkiln: %s", ev->name);
    else if (ev->kind == KN_EVENT_KERNEL)
        fprintf(stderr, "\r\033[Kkiln: %s: kernel %d of %d", ev->name, ev->done, ev->total);
    else if (ev->kind == KN_EVENT_WRITE)
        fprintf(stderr, "\r\033[Kkiln: writing %s: %.1f MB", ev->name, (double)ev->size / 1e6);
    else
        return;
    progress_shown = true;
}

/* The library's advice in the command line's words (ir/diag.h). */
static const char *const cli_hints[KN_HINT_COUNT] = {
    [KN_HINT_SHAPE_OPT] = "--shape",
    [KN_HINT_DIM_OPT] = "--dim",
    [KN_HINT_LENGTH_OPT] = "kiln compile --length",
    [KN_HINT_FIX_SHAPES] = "fix input dimensions with --shape/--dim",
    [KN_HINT_BIND] = "bake it in with --bind",
    [KN_HINT_NO_LOWERING] = "the reference interpreter runs it: kiln run --backend interp",
    [KN_HINT_EMIT_OPENCL] = "compile for it with --emit opencl",
    [KN_HINT_EMIT_OBJ] = "use kiln compile --emit obj",
    [KN_HINT_STRING_BYTES] = "raise it with --max-string-bytes",
};

void cli_ctx_init(kn_ctx *cx, const char *model, const cli_talk *t) {
    kn_ctx_init(cx, model);
    cx->hints = cli_hints;
    talk = *t;
    stage_start = now_ms();
    if (!t->quiet && !t->no_warnings) cx->on_warning = on_warning;
    if (t->verbose || (!t->quiet && isatty(2))) cx->on_event = on_event;
}

const char *cli_target_names(void) {
    static char buf[512];
    size_t len = (size_t)snprintf(buf, sizeof buf, "targets:");
    for (const kn_target *const *t = kn_target_list(); *t && len < sizeof buf; t++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s",
                                t == kn_target_list() ? "" : ",", (*t)->name);
    return buf;
}

int cli_exit_code(kn_status st) {
    return st == KN_OK ? EXIT_OK : st == KN_EINTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
}

int cli_fail(const kn_ctx *cx) {
    cli_progress_end();
    fprintf(stderr, "kiln: %s\n", cx->msg[0] ? cx->msg : "failed");
    return cli_exit_code(cx->status ? cx->status : KN_EINTERNAL);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kiln %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'kiln %s --help'.\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

bool cli_is_help(const char *arg) {
    return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* The option names the parser has tested since the process started, for
 * KILN_CHECK_OPTIONS (a parser tests each name at most once per argument). */
static const char *asked[128];
static int nasked;

static void ask(const char *name) {
    for (int k = 0; k < nasked; k++)
        if (!strcmp(asked[k], name)) return;
    if (nasked < (int)(sizeof asked / sizeof *asked)) asked[nasked++] = name;
}

int cli_unknown_option(const char *cmd, const char *arg) {
    const cli_command *c = cli_command_find(cmd);
    if (getenv("KILN_CHECK_OPTIONS") && c) {
        int bad = 0;
        for (int k = 0; k < nasked; k++) {
            const cli_option *o = c->options;
            while (o->name && strcmp(o->name, asked[k])) o++;
            if (!o->name)
                bad += fprintf(stderr, "kiln %s: accepts %s, which tools/help.c does not list\n",
                               cmd, asked[k]) > 0;
        }
        for (const cli_option *o = c->options; o->name; o++) {
            int k = 0;
            while (k < nasked && strcmp(o->name, asked[k])) k++;
            if (k == nasked)
                bad += fprintf(stderr, "kiln %s: tools/help.c lists %s, which it does not accept\n",
                               cmd, o->name) > 0;
        }
        if (bad) return EXIT_INTERNAL;
    }
    return cli_usage_error(cmd, "unknown option '%s'", arg);
}

bool cli_flag(const char *arg, const char *name) {
    ask(name);
    return !strcmp(arg, name);
}

bool cli_opt_level(const char *arg, int *level) {
    ask("-O");
    if (strncmp(arg, "-O", 2) || strlen(arg) != 3 || arg[2] < '0' || arg[2] > '3') return false;
    *level = arg[2] - '0';
    return true;
}

bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
    ask(name);
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n)) return false;
    if (a[n] == '=') {
        *value = a + n + 1;
        return true;
    }
    if (a[n] || *i + 1 >= argc) return false;
    *value = argv[++*i];
    return true;
}

bool cli_pipeline_opt(int argc, char **argv, int *i, cli_pipeline *po) {
    const char *v, *a = argv[*i];
    if (cli_opt(argc, argv, i, "--passes", &v)) {
        po->passes = v;
    } else if (cli_opt(argc, argv, i, "--dump-after", &v)) {
        po->dump_after = v;
    } else if (cli_opt(argc, argv, i, "--schedule", &v)) {
        po->schedule = v;
    } else if (cli_opt(argc, argv, i, "--tuning", &v)) {
        po->tuning = v;
    } else if (cli_opt(argc, argv, i, "--dump-schedule", &v)) {
        po->dump_schedule = v;
    } else if (cli_opt(argc, argv, i, "--weights", &v)) {
        po->weights = !strcmp(v, "f16") ? KN_F16 : !strcmp(v, "bf16") ? KN_BF16 : KN_UNDEF;
        po->weights_bad = !po->weights;
    } else if (cli_opt_level(a, &po->opt_level)) {
        po->opt_set = true;
    } else {
        return false;
    }
    return true;
}

int cli_pipeline_check(const cli_pipeline *po, const char *cmd) {
    return po->weights_bad ? cli_usage_error(cmd, "--weights takes f16 or bf16") : 0;
}

void cli_compile_opts(const cli_pipeline *po, kn_compile_opts *o) {
    memset(o, 0, sizeof *o);
    o->passes = po->passes;
    o->opt_level = po->opt_set ? po->opt_level : 3;
    o->opt_level_set = po->opt_set;
    o->dump_after = po->dump_after;
    o->dump = po->dump_after ? stdout : NULL;
    o->schedule_file = po->schedule;
    o->tuning_file = po->tuning;
    o->dump_schedule = po->dump_schedule;
    o->weights = po->weights;
}

bool cli_shape_opt(int argc, char **argv, int *i, cli_shapes *s, int *err) {
    const char *v;
    int whole;
    ask("--shape"), ask("--dim"), ask("--length");
    if (cli_opt(argc, argv, i, "--shape", &v))
        whole = 1;
    else if (cli_opt(argc, argv, i, "--dim", &v))
        whole = 0;
    else if (cli_opt(argc, argv, i, "--length", &v))
        whole = 2;
    else
        return false;
    if (s->n == 64) {
        fprintf(stderr, "kiln: too many --shape/--dim/--length options\n");
        *err = 1;
        return true;
    }
    s->spec[s->n] = v;
    s->whole[s->n++] = whole;
    return true;
}

/* The graph inputs' names ("image, mask") or their symbolic dimension names, for
 * messages that say what --shape and --dim accept. */
static void list_inputs(const kn_graph *g, bool dims, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < g->nin && len < cap; i++) {
        const kn_type *t = &g->inputs[i]->type;
        if (!dims) {
            len +=
                (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", g->inputs[i]->name);
            continue;
        }
        for (int d = 0; d < t->rank && len < cap; d++) {
            if (t->dims[d] >= 0 || !t->sym[d]) continue;
            bool seen = false; /* each name once */
            for (int j = 0; j <= i && !seen; j++)
                for (int e = 0; e < g->inputs[j]->type.rank && !seen; e++)
                    seen = (j < i || e < d) && g->inputs[j]->type.sym[e] &&
                           !strcmp(g->inputs[j]->type.sym[e], t->sym[d]);
            if (!seen)
                len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", t->sym[d]);
        }
    }
}

/* --shape IN=.. and --dim NAME=.. checked against the model first, so a mistake is
 * answered with what the model has. */
static kn_status check_shape_spec(kn_ctx *cx, const kn_graph *g, const char *spec, int whole) {
    const char *eq = strchr(spec, '=');
    if (!eq) return KN_OK; /* kn_shape_bind explains the syntax */
    size_t n = (size_t)(eq - spec);
    char names[512];
    if (!whole) {
        for (int i = 0; i < g->nin; i++)
            for (int d = 0; d < g->inputs[i]->type.rank; d++) {
                const char *sym = g->inputs[i]->type.sym[d];
                if (sym && strlen(sym) == n && !strncmp(sym, spec, n)) return KN_OK;
            }
        list_inputs(g, true, names, sizeof names);
        return kn_diag(cx, NULL, KN_EINVAL, "--dim: no input dimension is named '%.*s' (%s%s)",
                       (int)n, spec, names[0] ? "the model's symbolic dimensions: " : "",
                       names[0] ? names : "no input has a symbolic dimension; use --shape");
    }
    for (int i = 0; i < g->nin; i++) {
        const kn_value *v = g->inputs[i];
        if (strlen(v->name) != n || strncmp(v->name, spec, n)) continue;
        int sizes = 1;
        for (const char *c = eq + 1; *c; c++) sizes += *c == ',';
        if (v->type.kind == KN_KIND_TENSOR && v->type.rank >= 0 && sizes != v->type.rank) {
            char t[128];
            return kn_diag(cx, NULL, KN_EINVAL,
                           "--shape %s gives %d sizes; input '%s' is %s: give %d", spec, sizes,
                           v->name, kn_type_str(&v->type, t, sizeof t), v->type.rank);
        }
        return KN_OK;
    }
    list_inputs(g, false, names, sizeof names);
    return kn_diag(cx, NULL, KN_EINVAL, "--shape: the model has no input '%.*s' (its inputs: %s)",
                   (int)n, spec, names[0] ? names : "none");
}

kn_status cli_load(kn_ctx *cx, const char *path, const cli_shapes *s, kn_graph **g) {
    if (kn_onnx_load_file(cx, path, g)) return cx->status;
    /* --length first: it makes the inputs NAME_i that --shape may name */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; s && i < s->n; i++) {
            if ((s->whole[i] == 2) != (pass == 0)) continue;
            if (s->whole[i] == 2 ? kn_deseq_expand_length(cx, *g, s->spec[i])
                                 : check_shape_spec(cx, *g, s->spec[i], s->whole[i]) ||
                                       kn_shape_bind(cx, *g, s->spec[i], s->whole[i])) {
                kn_graph_destroy(*g);
                *g = NULL;
                return cx->status;
            }
        }
    return KN_OK;
}

kn_status cli_require_static_inputs(kn_ctx *cx, const kn_graph *g) {
    for (int i = 0; i < g->nin; i++) {
        const kn_value *v = g->inputs[i];
        const kn_type *t = &v->type;
        if (t->kind != KN_KIND_TENSOR || kn_type_static(t)) continue;
        if (t->rank < 0)
            return kn_diag(cx, NULL, KN_EINVAL,
                           "input '%s' has no known shape: pass --shape %s=D0,D1,..", v->name,
                           v->name);
        char shape[256] = "";
        size_t len = 0;
        int sym = -1, unknown = -1;
        for (int d = 0; d < t->rank && len < sizeof shape; d++) {
            if (t->dims[d] < 0 && t->sym[d] && sym < 0) sym = d;
            if (t->dims[d] < 0 && !t->sym[d] && unknown < 0) unknown = d;
            len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", d ? "," : "",
                                    t->dims[d] >= 0 ? (long long)t->dims[d] : 1LL);
        }
        if (sym >= 0)
            return kn_diag(cx, NULL, KN_EINVAL,
                           "input '%s' has symbolic dimension '%s': pass --dim %s=N (e.g. --dim "
                           "%s=1) or --shape %s=%s",
                           v->name, t->sym[sym], t->sym[sym], t->sym[sym], v->name, shape);
        return kn_diag(cx, NULL, KN_EINVAL,
                       "input '%s' has an unknown dimension %d: pass --shape %s=%s with the sizes "
                       "you need",
                       v->name, unknown, v->name, shape);
    }
    return KN_OK;
}

kn_status cli_apply_binds(kn_ctx *cx, kn_graph *g, kn_arena *a, const char *const *binds, int n) {
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(binds[i], '=');
        if (!eq || eq == binds[i])
            return kn_diag(cx, NULL, KN_EINVAL, "--bind expects NAME=FILE, got '%s'", binds[i]);
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)(eq - binds[i]), binds[i]);
        kn_tensor *t;
        kn_ctx fcx;
        kn_ctx_init(&fcx, NULL);
        if (kn_tensorfile_read(&fcx, a, eq + 1, KN_KIND_TENSOR, &t)) {
            *cx = fcx;
            return cx->status;
        }
        if (kn_graph_bind_input(cx, g, name, t)) return cx->status;
    }
    return KN_OK;
}

/* Random values: floats uniform in [-1, 1), integers in [0, 10), bools 0/1. */
static void fill_random(kn_tensor *t, uint64_t *state) {
    int64_t n = kn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(*state >> 11) / 9007199254740992.0;
        if (kn_dtype_get(t->type.dtype)->is_float)
            kn_store_f64(t->data, t->type.dtype, (size_t)i, 2 * u - 1);
        else
            kn_store_i64(t->data, t->type.dtype, (size_t)i, (int64_t)(u * 10));
    }
}

int cli_inputs(const char *cmd, const char *model, kn_graph *g, kn_arena *a,
               const char *const *inputs, int ninputs, bool random, uint64_t seed, kn_tensor **in) {
    int rc = EXIT_OK;
    kn_ctx fcx; /* file errors name the file, not the model */
    kn_ctx_init(&fcx, NULL);
    for (int k = 0; k < ninputs && !rc; k++) {
        const char *eq = strchr(inputs[k], '=');
        if (!eq) {
            rc = cli_usage_error(cmd, "--input expects NAME=FILE, got '%s'", inputs[k]);
            break;
        }
        int idx = -1;
        for (int i = 0; i < g->nin; i++)
            if (strlen(g->inputs[i]->name) == (size_t)(eq - inputs[k]) &&
                !strncmp(g->inputs[i]->name, inputs[k], (size_t)(eq - inputs[k])))
                idx = i;
        if (idx < 0) {
            char names[512];
            list_inputs(g, false, names, sizeof names);
            fprintf(stderr, "kiln: %s: the model has no input '%.*s' (its inputs: %s)\n", model,
                    (int)(eq - inputs[k]), inputs[k], names[0] ? names : "none");
            rc = EXIT_BAD_INPUT;
        } else if (kn_tensorfile_read(&fcx, a, eq + 1, g->inputs[idx]->type.kind, &in[idx])) {
            rc = cli_fail(&fcx);
        } else if (kn_interp_check_input(&fcx, g->inputs[idx], in[idx])) {
            /* name both files: the model and the one that contradicts it */
            fprintf(stderr, "kiln: %s: %s (read from %s)\n", model, fcx.msg, eq + 1);
            rc = cli_exit_code(fcx.status);
        }
    }
    uint64_t state = seed * 2654435761u + 1;
    for (int i = 0; i < g->nin && !rc; i++) {
        if (in[i]) continue;
        kn_value *iv = g->inputs[i];
        if (!random) {
            fprintf(stderr,
                    "kiln: %s: no value for input '%s' (use --input %s=FILE or --random SEED)\n",
                    model, iv->name, iv->name);
            rc = EXIT_BAD_INPUT;
        } else if (!kn_type_static(&iv->type)) {
            kn_ctx scx; /* the same advice as compiling, for --random's sake */
            kn_ctx_init(&scx, model);
            cli_require_static_inputs(&scx, g);
            if (scx.msg[0])
                fprintf(stderr, "kiln: %s (needed for --random)\n", scx.msg);
            else
                fprintf(stderr,
                        "kiln: %s: input '%s' has unfixed dimensions; fix them to use "
                        "--random\n",
                        model, iv->name);
            rc = EXIT_BAD_INPUT;
        } else if (iv->type.dtype == KN_STRING || iv->type.dtype == KN_UNDEF) {
            fprintf(stderr,
                    "kiln: %s: input '%s' is %s: --random fills numeric inputs only (give it "
                    "with --input %s=FILE)\n",
                    model, iv->name, kn_dtype_name(iv->type.dtype), iv->name);
            rc = EXIT_BAD_INPUT;
        } else if (!(in[i] = kn_tensor_new(a, &iv->type))) {
            fprintf(stderr, "kiln: %s: input '%s' is too large\n", model, iv->name);
            rc = EXIT_BAD_INPUT;
        } else {
            fill_random(in[i], &state);
        }
    }
    return rc;
}

bool cli_parse_bytes(const char *s, size_t *out) {
    char *end;
    if (!isdigit((unsigned char)s[0])) return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10), unit = 1;
    if (errno) return false;
    if (*end == 'K' || *end == 'k')
        unit = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        unit = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        unit = 1ull << 30, end++;
    if (*end || v > SIZE_MAX / unit) return false;
    *out = (size_t)(v * unit);
    return true;
}

void cli_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    fputc('"', f);
}
