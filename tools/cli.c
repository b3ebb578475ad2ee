/* Helpers shared by the kiln subcommands. */
#include "tools/cli.h"
#include "tools/help.h"
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "ir/interp.h"
#include "passes/deseq.h"
#include "passes/pass.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_exit_code(kn_status st) {
    return st == KN_OK ? EXIT_OK : st == KN_EINTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
}

int cli_fail(const kn_ctx *cx) {
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

kn_status cli_load(kn_ctx *cx, const char *path, const cli_shapes *s, kn_graph **g) {
    if (kn_onnx_load_file(cx, path, g)) return cx->status;
    /* --length first: it makes the inputs NAME_i that --shape may name */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; s && i < s->n; i++) {
            if ((s->whole[i] == 2) != (pass == 0)) continue;
            if (s->whole[i] == 2 ? kn_deseq_expand_length(cx, *g, s->spec[i])
                                 : kn_shape_bind(cx, *g, s->spec[i], s->whole[i])) {
                kn_graph_destroy(*g);
                *g = NULL;
                return cx->status;
            }
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
            fprintf(stderr, "kiln: %s: the model has no input '%.*s'\n", model,
                    (int)(eq - inputs[k]), inputs[k]);
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
            char buf[128];
            fprintf(stderr,
                    "kiln: %s: input '%s' has unfixed dimensions %s; fix them with --shape or "
                    "--dim to use --random\n",
                    model, iv->name, kn_type_str(&iv->type, buf, sizeof buf));
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
