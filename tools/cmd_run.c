/* kiln run: loads a model, binds inputs from files or random values, runs it with
 * the chosen backend, writes each output to --output-dir and prints a summary. */
#include "frontend/tensorfile.h"
#include "ir/interp.h"
#include "tools/backend.h"
#include "tools/cli.h"
#include "tools/help.h"
#include "tools/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void print_summary(const char *name, const kn_tensor *t) {
    char buf[256];
    printf("%s: %s", name, kn_type_str(&t->type, buf, sizeof buf));
    if (t->type.kind == KN_KIND_TENSOR && t->data) {
        int64_t n = kn_tensor_numel(t);
        printf(" [");
        for (int64_t i = 0; i < n && i < 8; i++) {
            if (t->type.dtype == KN_STRING)
                printf("%s\"%s\"", i ? ", " : "", ((char **)t->data)[i]);
            else if (kn_dtype_get(t->type.dtype)->is_float)
                printf("%s%.6g", i ? ", " : "", kn_load_f64(t->data, t->type.dtype, (size_t)i));
            else
                printf("%s%lld", i ? ", " : "",
                       (long long)kn_load_i64(t->data, t->type.dtype, (size_t)i));
        }
        printf("%s]", n > 8 ? ", ..." : "");
    }
    printf("\n");
}

/* --labels: top-1 of the first output (scores [N, classes], or [classes] for one
 * input) against the integer labels in path (N of them). */
static int top1(const char *path, const kn_tensor *y, kn_arena *a, bool quiet) {
    kn_ctx fcx;
    kn_ctx_init(&fcx, NULL);
    kn_tensor *lab;
    if (kn_tensorfile_read(&fcx, a, path, KN_KIND_TENSOR, &lab)) return cli_fail(&fcx);
    if (y->type.kind != KN_KIND_TENSOR || y->type.rank < 1 || y->type.rank > 2 ||
        !kn_dtype_get(y->type.dtype)->is_float) {
        char t[128];
        fprintf(stderr, "kiln: --labels %s: the first output is %s, not scores [N, classes]\n",
                path, kn_type_str(&y->type, t, sizeof t));
        return EXIT_BAD_INPUT;
    }
    int64_t c = y->type.dims[y->type.rank - 1], n = y->type.rank == 2 ? y->type.dims[0] : 1;
    if (kn_dtype_get(lab->type.dtype)->is_float || lab->type.dtype == KN_STRING ||
        lab->type.kind != KN_KIND_TENSOR || kn_tensor_numel(lab) != n) {
        char t[128];
        fprintf(stderr,
                "kiln: --labels %s: holds %s; the output has %lld rows: give %lld integer "
                "labels\n",
                path, kn_type_str(&lab->type, t, sizeof t), (long long)n, (long long)n);
        return EXIT_BAD_INPUT;
    }
    int64_t right = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t best = 0;
        for (int64_t k = 1; k < c; k++)
            if (kn_load_f64(y->data, y->type.dtype, (size_t)(i * c + k)) >
                kn_load_f64(y->data, y->type.dtype, (size_t)(i * c + best)))
                best = k;
        right += best == kn_load_i64(lab->data, lab->type.dtype, (size_t)i);
    }
    if (!quiet)
        printf("top-1: %lld of %lld = %.2f%%\n", (long long)right, (long long)n,
               n ? 100.0 * (double)right / (double)n : 0.0);
    return EXIT_OK;
}

int cmd_run(int argc, char **argv) {
    const char *model = NULL, *outdir = NULL, *backend = "interp", *labels = NULL, *v;
    cli_quant qo = CLI_QUANT_INIT;
    const char *inputs[256], *binds[64];
    int ninputs = 0, nbinds = 0, err = 0, have_seed = 0;
    cli_talk talk = {0};
    uint64_t seed = 0;
    size_t max_memory = 0;
    cli_shapes shapes = {0};
    cli_pipeline po = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("run"));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "--input", &v)) {
            if (ninputs == 256) return cli_usage_error("run", "too many --input options");
            inputs[ninputs++] = v;
        } else if (cli_opt(argc, argv, &i, "--bind", &v)) {
            if (nbinds == 64) return cli_usage_error("run", "too many --bind options");
            binds[nbinds++] = v;
        } else if (cli_opt(argc, argv, &i, "--labels", &v)) {
            labels = v;
        } else if (cli_quant_opt(argc, argv, &i, &qo, "run", &err)) {
            if (err) return err;
        } else if (cli_opt(argc, argv, &i, "--output-dir", &v)) {
            outdir = v;
        } else if (cli_opt(argc, argv, &i, "--backend", &v)) {
            backend = v;
        } else if (cli_opt(argc, argv, &i, "--max-memory", &v)) {
            if (!cli_parse_bytes(v, &max_memory))
                return cli_usage_error("run", "--max-memory takes a size in bytes, got '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--random", &v)) {
            char *end;
            seed = strtoull(v, &end, 10);
            if (*end || !*v) return cli_usage_error("run", "--random takes a number");
            have_seed = 1;
        } else if (cli_talk_opt(argv[i], &talk, true)) {
        } else if (cli_pipeline_opt(argc, argv, &i, &po)) {
        } else if (cli_shape_opt(argc, argv, &i, &shapes, &err)) {
            if (err) return EXIT_USAGE;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("run", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("run", "more than one model given");
        }
    }
    if (!model) return cli_usage_error("run", "no model given");
    if ((err = cli_quant_check(&qo, "run")) || (err = cli_pipeline_check(&po, "run"))) return err;
    if (!backend_known(backend))
        return cli_usage_error("run", "unknown backend '%s' (available: " BACKEND_NAMES ")",
                               backend);

    kn_ctx cx;
    cli_ctx_init(&cx, model, &talk);
    cx.max_memory = max_memory;
    kn_graph *g;
    if (qo.mode ? cli_quantize(&cx, model, &shapes, &qo, talk.quiet, NULL, &g)
                : cli_load(&cx, model, &shapes, &g))
        return cli_fail(&cx);
    kn_arena *a = kn_arena_create();
    if (cli_apply_binds(&cx, g, a, binds, nbinds)) {
        int code = cli_fail(&cx);
        kn_arena_destroy(a);
        kn_graph_destroy(g);
        return code;
    }
    kn_tensor **in = kn_arena_array(a, (size_t)g->nin + 1, sizeof *in);
    kn_tensor **out = kn_arena_array(a, (size_t)g->nout + 1, sizeof *out);
    int rc = cli_inputs("run", model, g, a, inputs, ninputs, have_seed, seed, in);
    kn_compile_opts copts;
    cli_compile_opts(&po, &copts);
    /* the interpreter runs the integer operators the compiled backends run */
    if (qo.mode && !strcmp(backend, "interp") && !copts.passes) copts.passes = "shape,qdq,shape";
    if (!rc && backend_run(&cx, backend, g, a, in, out, seed, &copts)) rc = cli_fail(&cx);
    if (!rc && outdir) {
        mkdir(outdir, 0777);
        for (int i = 0; i < g->nout && !rc; i++) {
            char path[4096], name[256];
            snprintf(name, sizeof name, "%s", g->outputs[i]->name);
            for (char *p = name; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
                            *p))
                    *p = '_';
            /* NumPy has no float8 or 4-bit dtypes: those are written as TensorProto */
            bool pb =
                out[i]->type.kind == KN_KIND_TENSOR && kn_dtype_get(out[i]->type.dtype)->is_narrow;
            snprintf(path, sizeof path, "%s/%s.%s", outdir, name, pb ? "pb" : "npy");
            kn_ctx fcx; /* file errors name the file, not the model */
            kn_ctx_init(&fcx, NULL);
            if (kn_tensorfile_write(&fcx, path, out[i])) rc = cli_fail(&fcx);
        }
    }
    cli_progress_end();
    if (!rc && !talk.quiet)
        for (int i = 0; i < g->nout; i++) print_summary(g->outputs[i]->name, out[i]);
    if (!rc && labels) rc = top1(labels, out[0], a, talk.quiet);
    kn_arena_destroy(a);
    kn_graph_destroy(g);
    return rc;
}
