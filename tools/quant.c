/* Post-training quantization on the command line (kiln compile/run --quantize, kiln
 * quantize): the options, reading calibration samples, the passes that prepare the
 * float graph, --quantize auto's search, and the report (a table on stdout, JSON in a
 * file). The work itself is passes/ptq.c. */
#include "tools/quant.h"
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "ir/interp.h"
#include "passes/ptq.h"
#include "tools/cli.h"
#include "tools/help.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What runs before calibration, on every graph the quantization sees: shapes, constant
 * folding and BatchNormalization folded into the weights, so the weights quantized are
 * the ones the compiled model multiplies by. */
#define PREPARE "shape,fold,shape,bnfold,shape"

bool cli_quant_opt(int argc, char **argv, int *i, cli_quant *q, const char *cmd, int *err) {
    const char *v;
    *err = 0;
    if (cli_opt(argc, argv, i, "--quantize", &v)) {
        if (!strcmp(v, "int8"))
            q->mode = 1;
        else if (!strcmp(v, "auto"))
            q->mode = 2;
        else
            *err = cli_usage_error(cmd, "--quantize takes int8 or auto, got '%s'", v);
    } else if (cli_opt(argc, argv, i, "--calibrate", &v)) {
        q->calibrate = v;
    } else if (cli_opt(argc, argv, i, "--calibration", &v)) {
        char *end = NULL;
        if (!strcmp(v, "minmax")) {
            q->method = KN_CALIB_MINMAX;
        } else if (!strcmp(v, "entropy")) {
            q->method = KN_CALIB_ENTROPY;
        } else if (!strncmp(v, "percentile", 10) && (!v[10] || v[10] == '=')) {
            q->method = KN_CALIB_PERCENTILE;
            q->percentile = v[10] ? strtod(v + 11, &end) : 99.99;
            if ((v[10] && (!v[11] || *end)) || !(q->percentile > 0 && q->percentile <= 100))
                *err = cli_usage_error(
                    cmd, "--calibration percentile=P takes P in (0, 100], got '%s'", v);
        } else {
            *err = cli_usage_error(
                cmd, "--calibration takes minmax, percentile[=P] or entropy, got '%s'", v);
        }
    } else if (cli_opt(argc, argv, i, "--keep-float", &v)) {
        q->keep = v;
    } else if (cli_opt(argc, argv, i, "--max-drop", &v)) {
        char *end;
        q->max_drop = strtod(v, &end);
        if (!*v || *end || !(q->max_drop >= 0))
            *err = cli_usage_error(cmd, "--max-drop takes a number >= 0, got '%s'", v);
    } else if (cli_opt(argc, argv, i, "--activations", &v)) {
        if (!strcmp(v, "uint8"))
            q->act = KN_U8;
        else if (!strcmp(v, "int8"))
            q->act = KN_I8;
        else
            *err = cli_usage_error(cmd, "--activations takes uint8 or int8, got '%s'", v);
    } else if (cli_opt(argc, argv, i, "--report", &v)) {
        q->report = v;
    } else {
        return false;
    }
    return true;
}

int cli_quant_check(const cli_quant *q, const char *cmd) {
    bool any = q->calibrate || q->keep || q->max_drop >= 0 || q->act || q->report ||
               q->method != KN_CALIB_MINMAX;
    if (!q->mode && any)
        return cli_usage_error(cmd, "--calibrate, --calibration, --keep-float, --max-drop, "
                                    "--activations and --report go with --quantize");
    if (q->mode && !q->calibrate)
        return cli_usage_error(cmd, "--quantize needs calibration inputs: --calibrate PATH");
    if (q->mode == 2 && q->max_drop < 0)
        return cli_usage_error(cmd, "--quantize auto needs --max-drop X");
    if (q->mode == 1 && q->max_drop >= 0)
        return cli_usage_error(cmd, "--max-drop goes with --quantize auto");
    return EXIT_OK;
}

/* ---- calibration samples ---- */

typedef struct samples {
    int n, cap;
    kn_tensor ***s; /* s[k][input] */
} samples;

static void add_sample(samples *S, kn_arena *a, int nin, kn_tensor *const *in) {
    if (S->n == S->cap) {
        S->cap = S->cap ? 2 * S->cap : 64;
        S->s = realloc(S->s, (size_t)S->cap * sizeof *S->s);
        KN_ASSERT(S->s);
    }
    kn_tensor **t = kn_arena_array(a, (size_t)nin + 1, sizeof *t);
    KN_ASSERT(t);
    memcpy(t, in, (size_t)nin * sizeof *t);
    S->s[S->n++] = t;
}

/* The samples in tensor t for the single input v: t itself split along axis 0, each
 * element (t has one more dimension than v) or block of v's batch size (the same rank). */
static kn_status split(kn_ctx *cx, kn_arena *a, const kn_value *v, kn_tensor *t, const char *path,
                       samples *S) {
    const kn_type *want = &v->type;
    if (t->type.kind != KN_KIND_TENSOR || t->type.rank < 1 || want->rank < 0 ||
        (t->type.rank != want->rank && t->type.rank != want->rank + 1))
        return kn_diag(cx, NULL, KN_EINVAL,
                       "%s: a calibration file must hold input '%s' (rank %d) or samples of it "
                       "stacked on axis 0 (rank %d); it has rank %d",
                       path, v->name, want->rank, want->rank + 1, t->type.rank);
    bool stacked = t->type.rank == want->rank + 1;
    int64_t block = stacked ? 1 : want->dims[0] > 0 ? want->dims[0] : 1;
    int64_t n0 = t->type.dims[0];
    if (n0 % block)
        return kn_diag(cx, NULL, KN_EINVAL, "%s: %lld rows are no whole number of batches of %lld",
                       path, (long long)n0, (long long)block);
    size_t row = kn_tensor_nbytes(t) / (size_t)(n0 ? n0 : 1);
    for (int64_t k = 0; k < n0; k += block) {
        kn_tensor *x = kn_arena_alloc(a, sizeof *x);
        KN_ASSERT(x);
        *x = *t;
        if (stacked) {
            x->type.rank--;
            memmove(x->type.dims, x->type.dims + 1, (size_t)x->type.rank * sizeof *x->type.dims);
            memmove(x->type.sym, x->type.sym + 1, (size_t)x->type.rank * sizeof *x->type.sym);
        } else {
            x->type.dims[0] = block;
        }
        x->data = (char *)t->data + (size_t)k * row;
        kn_ctx fcx;
        kn_ctx_init(&fcx, NULL);
        if (kn_interp_check_input(&fcx, v, x))
            return kn_diag(cx, NULL, fcx.status, "%s: %s", path, fcx.msg);
        add_sample(S, a, 1, &x);
    }
    return KN_OK;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of dir whose name starts with prefix (or ends in suffix). */
static int list_dir(const char *dir, const char *prefix, const char *suffix, char ***out) {
    DIR *d = opendir(dir);
    int n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if ((prefix && strncmp(e->d_name, prefix, strlen(prefix))) ||
            (suffix && (len < sl || strcmp(e->d_name + len - sl, suffix))))
            continue;
        if (n == cap) v = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *v);
        KN_ASSERT(v);
        v[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, int n) {
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* Reads PATH: one .npy/.pb file of stacked samples, a folder of ONNX test_data_set_*
 * folders (input_K.pb or .npy, one sample each), or a folder of .npy files. */
static kn_status read_samples(kn_ctx *cx, kn_arena *a, const kn_graph *g, const char *path,
                              samples *S) {
    struct stat st;
    if (stat(path, &st) != 0)
        return kn_diag(cx, NULL, KN_EIO, "--calibrate: cannot read '%s'", path);
    kn_ctx fcx;
    kn_ctx_init(&fcx, NULL);
    kn_tensor *t;
    bool one = g->nin == 1;
    if (!S_ISDIR(st.st_mode)) {
        if (!one)
            return kn_diag(cx, NULL, KN_EINVAL,
                           "--calibrate %s: the model has %d inputs; give a folder of "
                           "test_data_set_* folders (input_K.pb, one per input)",
                           path, g->nin);
        if (kn_tensorfile_read(&fcx, a, path, KN_KIND_TENSOR, &t))
            return kn_diag(cx, NULL, fcx.status, "%s", fcx.msg);
        return split(cx, a, g->inputs[0], t, path, S);
    }
    char **sets, **files, file[4200];
    int ns = list_dir(path, "test_data_set_", NULL, &sets);
    kn_status rc = KN_OK;
    for (int s = 0; s < ns && !rc; s++) {
        kn_tensor *in[256] = {0};
        for (int k = 0; k < g->nin && k < 256 && !rc; k++) {
            snprintf(file, sizeof file, "%s/%s/input_%d.pb", path, sets[s], k);
            if (stat(file, &st) != 0)
                snprintf(file, sizeof file, "%s/%s/input_%d.npy", path, sets[s], k);
            if (kn_tensorfile_read(&fcx, a, file, g->inputs[k]->type.kind, &in[k]))
                rc = kn_diag(cx, NULL, fcx.status, "%s", fcx.msg);
            else if (kn_interp_check_input(&fcx, g->inputs[k], in[k]))
                rc = kn_diag(cx, NULL, fcx.status, "%s: %s", file, fcx.msg);
        }
        if (!rc) add_sample(S, a, g->nin, in);
    }
    free_list(sets, ns);
    if (rc || ns) return rc;
    int nf = list_dir(path, NULL, ".npy", &files);
    if (nf && !one)
        rc = kn_diag(cx, NULL, KN_EINVAL,
                     "--calibrate %s: the model has %d inputs; give a folder of test_data_set_* "
                     "folders (input_K.pb, one per input)",
                     path, g->nin);
    for (int f = 0; f < nf && !rc; f++) {
        snprintf(file, sizeof file, "%s/%s", path, files[f]);
        if (kn_tensorfile_read(&fcx, a, file, KN_KIND_TENSOR, &t))
            rc = kn_diag(cx, NULL, fcx.status, "%s", fcx.msg);
        else
            rc = split(cx, a, g->inputs[0], t, file, S);
    }
    free_list(files, nf);
    if (!rc && !S->n)
        rc = kn_diag(cx, NULL, KN_EINVAL,
                     "--calibrate %s: no .npy files and no test_data_set_* folders in it", path);
    return rc;
}

/* ---- the report ---- */

static void json_num(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fprintf(f, "null");
}

static const char *method_name(const kn_ptq *q) {
    return q->opts.method == KN_CALIB_MINMAX       ? "minmax"
           : q->opts.method == KN_CALIB_PERCENTILE ? "percentile"
                                                   : "entropy";
}

static kn_status write_json(kn_ctx *cx, const kn_ptq *q, const char *model, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    fprintf(f, "{\n  \"model\": ");
    cli_json_str(f, model);
    fprintf(f, ",\n  \"calibration\": \"%s\",", method_name(q));
    if (q->opts.method == KN_CALIB_PERCENTILE)
        fprintf(f, " \"percentile\": %g,", q->opts.percentile);
    fprintf(f,
            "\n  \"samples\": %d,\n  \"activations\": \"%s\",\n  \"output_sqnr_db\": ", q->nsamples,
            q->opts.act == KN_I8 ? "int8" : "uint8");
    json_num(f, q->out_sqnr);
    fprintf(f, ",\n  \"output_relative_error\": ");
    json_num(f, q->out_error);
    fprintf(f, ",\n  \"layers\": [");
    for (int i = 0; i < q->nlayers; i++) {
        const kn_ptq_layer *l = &q->layers[i];
        const kn_ptq_value *x = &q->values[l->x], *y = &q->values[l->y];
        fprintf(f, "%s\n    {\"node\": ", i ? "," : "");
        cli_json_str(f, l->node);
        fprintf(f, ", \"op\": ");
        cli_json_str(f, l->op);
        fprintf(f, ", \"float\": %s, \"input\": ", l->keep ? "true" : "false");
        cli_json_str(f, x->name);
        fprintf(f, ", \"input_range\": [");
        json_num(f, x->clip_lo);
        fprintf(f, ", ");
        json_num(f, x->clip_hi);
        fprintf(f, "], \"input_scale\": %.9g, \"input_zero_point\": %d, \"output\": ", x->scale,
                x->zero);
        cli_json_str(f, y->name);
        fprintf(f, ", \"relu\": %s, \"output_range\": [", l->relu ? "true" : "false");
        json_num(f, y->clip_lo);
        fprintf(f, ", ");
        json_num(f, y->clip_hi);
        fprintf(f, "], \"output_scale\": %.9g, \"output_zero_point\": %d", y->scale, y->zero);
        if (!l->keep)
            fprintf(f,
                    ", \"channels\": %lld, \"weight_scale_min\": %.9g, \"weight_scale_max\": %.9g",
                    (long long)l->channels, l->ws_min, l->ws_max);
        fprintf(f, ", \"sqnr_db\": ");
        json_num(f, l->sqnr);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) return kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    return KN_OK;
}

static void print_table(const kn_ptq *q) {
    cli_progress_end();
    int wn = 20; /* the layer column fits the longest name */
    for (int i = 0; i < q->nlayers; i++)
        if ((int)strlen(q->layers[i].node) > wn) wn = (int)strlen(q->layers[i].node);
    printf("%-*s %-7s %11s %4s %11s %4s %23s %8s\n", wn, "layer", "op", "x scale", "x zp",
           "y scale", "y zp", "w scales (min..max)", "SQNR dB");
    for (int i = 0; i < q->nlayers; i++) {
        const kn_ptq_layer *l = &q->layers[i];
        const kn_ptq_value *x = &q->values[l->x], *y = &q->values[l->y];
        char w[64];
        if (l->keep)
            snprintf(w, sizeof w, "(float)");
        else
            snprintf(w, sizeof w, "%.3g..%.3g", l->ws_min, l->ws_max);
        char op[32];
        snprintf(op, sizeof op, "%s%s", l->op, l->relu ? "+R" : "");
        printf("%-*s %-7s %11.5g %4d %11.5g %4d %23s %8.2f\n", wn, l->node, op, x->scale, x->zero,
               y->scale, y->zero, w, l->sqnr);
    }
    int kept = 0;
    for (int i = 0; i < q->nlayers; i++) kept += q->layers[i].keep;
    printf("output SQNR %.2f dB (relative error %.4f) on %d calibration samples (%s); %d of %d "
           "layers in float\n",
           q->out_sqnr, q->out_error, q->nsamples, method_name(q), kept, q->nlayers);
}

/* ---- the whole step ---- */

static kn_status load_prepared(kn_ctx *cx, const char *model, const cli_shapes *s, kn_graph **g) {
    if (cli_load(cx, model, s, g)) return cx->status;
    if (kn_pass_run_pipeline(cx, *g, PREPARE, NULL, NULL)) {
        kn_graph_destroy(*g);
        *g = NULL;
    }
    return cx->status;
}

/* Applies q to a new load of the model and measures it against f; *out (if not NULL)
 * receives the quantized graph, else it is freed. */
static kn_status trial(kn_ctx *cx, const char *model, const cli_shapes *s, const kn_graph *f,
                       kn_ptq *q, const samples *S, kn_graph **out) {
    kn_graph *g;
    if (load_prepared(cx, model, s, &g)) return cx->status;
    if (kn_ptq_apply(cx, g, q) ||
        kn_ptq_measure(cx, f, g, q, S->n, (kn_tensor *const *const *)S->s)) {
        kn_graph_destroy(g);
        return cx->status;
    }
    if (out)
        *out = g;
    else
        kn_graph_destroy(g);
    return KN_OK;
}

/* --quantize auto: each layer's sensitivity (the output SQNR with that layer alone
 * quantized), then the k most sensitive layers kept in float for k = 0, 1, .. until
 * the output's relative error is at most max_drop. */
static kn_status search(kn_ctx *cx, const char *model, const cli_shapes *s, const kn_graph *f,
                        kn_ptq *q, const samples *S, double max_drop, bool quiet) {
    int L = q->nlayers, nfree = 0;
    bool *user = calloc((size_t)L + 1, sizeof *user);
    double *sens = calloc((size_t)L + 1, sizeof *sens);
    int *order = calloc((size_t)L + 1, sizeof *order);
    KN_ASSERT(user && sens && order);
    for (int i = 0; i < L; i++) user[i] = q->layers[i].keep;
    kn_status st = KN_OK;
    for (int i = 0; i < L && !st; i++) {
        if (user[i]) continue;
        for (int k = 0; k < L; k++) q->layers[k].keep = k != i;
        st = trial(cx, model, s, f, q, S, NULL);
        sens[i] = q->out_sqnr;
        order[nfree++] = i;
    }
    for (int a = 1; a < nfree; a++) /* most sensitive (lowest SQNR) first */
        for (int b = a; b > 0 && sens[order[b]] < sens[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (int k = 0; k <= nfree && !st; k++) {
        for (int i = 0; i < L; i++) q->layers[i].keep = user[i];
        for (int j = 0; j < k; j++) q->layers[order[j]].keep = true;
        st = trial(cx, model, s, f, q, S, NULL);
        if (!quiet && !st) {
            cli_progress_end();
            printf("auto: %d layer%s in float: output relative error %.4f%s\n", k,
                   k == 1 ? "" : "s", q->out_error,
                   q->out_error <= max_drop ? " (within --max-drop)" : "");
        }
        if (!st && q->out_error <= max_drop) break;
    }
    free(user), free(sens), free(order);
    return st;
}

kn_status cli_quantize(kn_ctx *cx, const char *model, const cli_shapes *s, const cli_quant *o,
                       bool quiet, const char *report, kn_graph **out) {
    *out = NULL;
    kn_graph *f = NULL;
    kn_ptq *q = NULL;
    samples S = {0};
    kn_arena *a = kn_arena_create();
    kn_ptq_opts po = {.method = o->method, .percentile = o->percentile, .act = o->act};
    kn_event_emit(cx, &(kn_event){.kind = KN_EVENT_STAGE, .name = "calibrating"});
    if (!load_prepared(cx, model, s, &f) && !read_samples(cx, a, f, o->calibrate, &S) &&
        !kn_ptq_plan(cx, f, &po, &q) && !(o->keep && kn_ptq_keep(cx, q, o->keep)) &&
        !kn_ptq_calibrate(cx, f, q, S.n, (kn_tensor *const *const *)S.s) &&
        !(o->mode == 2 && search(cx, model, s, f, q, &S, o->max_drop, quiet)) &&
        !trial(cx, model, s, f, q, &S, out)) {
        if (!quiet) print_table(q);
        const char *rep = o->report ? o->report : report;
        if (rep && write_json(cx, q, model, rep)) {
            kn_graph_destroy(*out);
            *out = NULL;
        } else if (rep && !quiet) {
            printf("wrote %s\n", rep);
        }
    }
    kn_ptq_destroy(q);
    kn_graph_destroy(f);
    free(S.s);
    kn_arena_destroy(a);
    return cx->status;
}

/* ---- kiln quantize ---- */

int cmd_quantize(int argc, char **argv) {
    const char *model = NULL, *out = NULL, *v;
    cli_quant qo = CLI_QUANT_INIT;
    cli_shapes shapes = {0};
    cli_talk talk = {0};
    int err = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("quantize"));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "-o", &v)) {
            out = v;
        } else if (cli_talk_opt(argv[i], &talk, true)) {
        } else if (cli_shape_opt(argc, argv, &i, &shapes, &err)) {
            if (err) return EXIT_USAGE;
        } else if (cli_quant_opt(argc, argv, &i, &qo, "quantize", &err)) {
            if (err) return err;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("quantize", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("quantize", "more than one model given");
        }
    }
    if (!model) return cli_usage_error("quantize", "no model given");
    if (!out) return cli_usage_error("quantize", "no output file given (-o FILE.onnx)");
    if (!qo.mode) qo.mode = 1;
    if ((err = cli_quant_check(&qo, "quantize"))) return err;
    kn_ctx cx;
    cli_ctx_init(&cx, model, &talk);
    kn_graph *g;
    if (cli_quantize(&cx, model, &shapes, &qo, talk.quiet, NULL, &g)) return cli_fail(&cx);
    kn_status st = KN_OK;
    if (g->opset < 13)
        st = kn_diag(&cx, NULL, KN_EUNSUPPORTED,
                     "the model imports opset %d; per-channel DequantizeLinear needs opset 13 or "
                     "later (convert the model first)",
                     g->opset);
    if (!st) st = kn_onnx_write_file(&cx, g, out);
    kn_graph_destroy(g);
    if (st) return cli_fail(&cx);
    if (!talk.quiet) printf("wrote %s\n", out);
    return EXIT_OK;
}
