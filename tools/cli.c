/* Helpers shared by the kiln subcommands. */
#include "tools/cli.h"
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "passes/pass.h"

#include <stdarg.h>
#include <stdio.h>
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

bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
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
    if (cli_opt(argc, argv, i, "--shape", &v))
        whole = 1;
    else if (cli_opt(argc, argv, i, "--dim", &v))
        whole = 0;
    else
        return false;
    if (s->n == 64) {
        fprintf(stderr, "kiln: too many --shape/--dim options\n");
        *err = 1;
        return true;
    }
    s->spec[s->n] = v;
    s->whole[s->n++] = whole;
    return true;
}

kn_status cli_load(kn_ctx *cx, const char *path, const cli_shapes *s, kn_graph **g) {
    if (kn_onnx_load_file(cx, path, g)) return cx->status;
    for (int i = 0; s && i < s->n; i++)
        if (kn_shape_bind(cx, *g, s->spec[i], s->whole[i])) {
            kn_graph_destroy(*g);
            *g = NULL;
            return cx->status;
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
