/* The host C API (include/kiln.h) over the compiler library.
 *
 * A kiln_model keeps the serialized ONNX bytes (copied) and the folder for external
 * data; loading parses them once to report errors early. The passes rewrite a graph in
 * place, so kiln_compile_jit parses a fresh graph from those bytes each time: the model
 * stays immutable, can be shared by threads and compiled with different options.
 * Compiling applies the shape options (kn_shape_bind), runs kn_compile_program (default
 * passes, lowering, memory plan) and kn_llvm_jit; the handle copies the input/output
 * metadata and keeps only the JIT, so the graph and the kernel program are freed before
 * it returns. Weights live in the JIT's constant globals.
 *
 * Errors go to a thread-local message (kiln_last_error): each public function that
 * returns a status runs with its own kn_ctx and copies the first diagnostic out. */
#include "kiln.h"

#include "codegen/llvm/llvm.h"
#include "frontend/onnx.h"
#include "ir/kir.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "runtime/kn_pool.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The public codes are the internal ones. */
_Static_assert(KILN_OK == (int)KN_OK && KILN_EINVAL == (int)KN_EINVAL &&
                   KILN_EUNSUPPORTED == (int)KN_EUNSUPPORTED && KILN_EIO == (int)KN_EIO &&
                   KILN_ELIMIT == (int)KN_ELIMIT && KILN_EINTERNAL == (int)KN_EINTERNAL,
               "kiln_status must equal kn_status");
#define X(E, v, n, c, s) _Static_assert(KILN_DTYPE_##E == (int)KN_##E, "kiln_dtype " n);
KN_DTYPES(X)
#undef X
_Static_assert(KN_MAX_RANK == 8, "kiln.h documents rank <= 8");

/* ---- errors ---- */

static _Thread_local char last_error[sizeof((kn_ctx *)0)->msg];

const char *kiln_last_error(void) {
    return last_error;
}

/* Records the outcome of a public call: cx's message on failure, "" on success. */
static kiln_status finish(const kn_ctx *cx) {
    if (cx->status == KN_OK)
        last_error[0] = 0;
    else
        snprintf(last_error, sizeof last_error, "%s", cx->msg);
    return (kiln_status)cx->status;
}

/* Records a failure described here (argument checks). */
static kiln_status fail(kiln_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

static kiln_status ok(void) {
    last_error[0] = 0;
    return KILN_OK;
}

const char *kiln_status_string(kiln_status status) {
    switch (status) {
    case KILN_OK: return "success";
    case KILN_EINVAL: return "invalid argument";
    case KILN_EUNSUPPORTED: return "unsupported";
    case KILN_EIO: return "input/output error";
    case KILN_ELIMIT: return "resource limit exceeded";
    case KILN_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

size_t kiln_dtype_size(kiln_dtype dtype) {
    return dtype == KILN_DTYPE_UNDEFINED ? 0 : kn_dtype_get((int)dtype)->size;
}

const char *kiln_dtype_name(kiln_dtype dtype) {
    return kn_dtype_name((int)dtype);
}

/* A malloc'd copy of s (NULL when out of memory). */
static char *copy_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The library's advice in the host API's words (ir/diag.h): option setters, never the
 * command line's options. */
static const char *const api_hints[KN_HINT_COUNT] = {
    [KN_HINT_SHAPE_OPT] = "kiln_options_set_input_shape()",
    [KN_HINT_DIM_OPT] = "kiln_options_set_dim()",
    [KN_HINT_LENGTH_OPT] = "",
    [KN_HINT_LENGTH] = "the host API does not take sequence inputs; compile the model to C or "
                       "an object file instead (docs/generated-c.md)",
    [KN_HINT_FIX_SHAPES] = "fix input dimensions with kiln_options_set_input_shape() or "
                           "kiln_options_set_dim()",
    [KN_HINT_BIND] = "make that input a constant (an initializer) of the model",
    [KN_HINT_NO_LOWERING] = "no compiled backend runs this model yet",
    [KN_HINT_EMIT_OPENCL] = "the host API runs CPU targets only (kiln_options_set_target())",
    [KN_HINT_EMIT_OBJ] = "the host API runs targets of this machine only "
                         "(kiln_options_set_target(): native or generic)",
    [KN_HINT_STRING_BYTES] = "raise it with kiln_options_set_max_string_bytes()",
};

/* kn_ctx_init with the host API's wording of advice. */
static void api_ctx_init(kn_ctx *cx, const char *file) {
    kn_ctx_init(cx, file);
    cx->hints = api_hints;
}

/* ---- models ---- */

struct kiln_model {
    void *bytes; /* the serialized ModelProto */
    size_t size;
    char *base_dir; /* external data folder, or NULL */
    char *name;     /* the path or "<memory>", for messages */
};

void kiln_model_destroy(kiln_model *m) {
    if (!m) return;
    free(m->bytes);
    free(m->base_dir);
    free(m->name);
    free(m);
}

/* Parses m's bytes into a new graph (kn_graph_destroy); cx names m in messages. */
static kn_status parse(kn_ctx *cx, const kiln_model *m, kn_graph **g) {
    return kn_onnx_load_memory(cx, m->bytes, m->size, m->base_dir, m->name, g);
}

/* Takes ownership of bytes (malloc'd); checks that they parse. */
static kiln_status make_model(void *bytes, size_t size, const char *base_dir, const char *name,
                              kiln_model **out) {
    kiln_model *m = calloc(1, sizeof *m);
    if (!m) {
        free(bytes);
        return fail(KILN_ELIMIT, "out of memory");
    }
    m->bytes = bytes;
    m->size = size;
    m->name = copy_str(name);
    m->base_dir = base_dir ? copy_str(base_dir) : NULL;
    if (!m->name || (base_dir && !m->base_dir)) {
        kiln_model_destroy(m);
        return fail(KILN_ELIMIT, "out of memory");
    }
    kn_ctx cx;
    api_ctx_init(&cx, m->name);
    kn_graph *g;
    if (parse(&cx, m, &g)) {
        kiln_model_destroy(m);
        return finish(&cx);
    }
    kn_graph_destroy(g);
    *out = m;
    return finish(&cx);
}

kiln_status kiln_model_load_file(const char *path, kiln_model **out) {
    if (!out) return fail(KILN_EINVAL, "kiln_model_load_file: out is NULL");
    *out = NULL;
    if (!path) return fail(KILN_EINVAL, "kiln_model_load_file: path is NULL");
    kn_ctx cx;
    api_ctx_init(&cx, path);
    void *buf;
    size_t len;
    if (kn_read_file(&cx, path, &buf, &len)) return finish(&cx);
    /* external data is relative to the model's folder, as kn_onnx_load_file does */
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    return make_model(buf, len, dir, path, out);
}

kiln_status kiln_model_load_memory(const void *data, size_t size, const char *base_dir,
                                   kiln_model **out) {
    if (!out) return fail(KILN_EINVAL, "kiln_model_load_memory: out is NULL");
    *out = NULL;
    if (!data && size) return fail(KILN_EINVAL, "kiln_model_load_memory: data is NULL");
    void *copy = malloc(size ? size : 1);
    if (!copy) return fail(KILN_ELIMIT, "out of memory copying a model of %zu bytes", size);
    if (size) memcpy(copy, data, size);
    return make_model(copy, size, base_dir, "<memory>", out);
}

/* ---- options ---- */

typedef struct shape_opt {
    char *spec; /* "NAME=d0,d1,..." (whole) or "DIM=value", for kn_shape_bind */
    size_t name_len;
    int whole;
} shape_opt;

struct kiln_options {
    const kn_target *target;
    int opt_level;
    int threads;
    size_t max_memory; /* 0: no limit */
    kn_dtype weights;  /* kiln_options_set_weights: KN_F16, KN_BF16, or KN_UNDEF */
    size_t max_string; /* kiln_options_set_max_string_bytes; 0: KN_MAX_STRING_BYTES */
    int nshapes, cap_shapes;
    shape_opt *shapes; /* applied in order */
};

kiln_status kiln_options_create(kiln_options **out) {
    if (!out) return fail(KILN_EINVAL, "kiln_options_create: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out) return fail(KILN_ELIMIT, "out of memory");
    (*out)->target = kn_target_find("native");
    (*out)->opt_level = 2;
    return ok();
}

void kiln_options_destroy(kiln_options *o) {
    if (!o) return;
    for (int i = 0; i < o->nshapes; i++) free(o->shapes[i].spec);
    free(o->shapes);
    free(o);
}

kiln_status kiln_options_set_target(kiln_options *o, const char *name) {
    if (!o || !name) return fail(KILN_EINVAL, "kiln_options_set_target: NULL argument");
    const kn_target *t = kn_target_find(name);
    if (!t) return fail(KILN_EINVAL, "unknown target '%s'", name);
    o->target = t;
    return ok();
}

kiln_status kiln_options_set_opt_level(kiln_options *o, int level) {
    if (!o) return fail(KILN_EINVAL, "kiln_options_set_opt_level: options is NULL");
    if (level < 0 || level > 3)
        return fail(KILN_EINVAL, "optimization level %d is not in 0..3", level);
    o->opt_level = level;
    return ok();
}

kiln_status kiln_options_set_threads(kiln_options *o, int threads) {
    if (!o) return fail(KILN_EINVAL, "kiln_options_set_threads: options is NULL");
    if (threads < 0) return fail(KILN_EINVAL, "thread count %d is negative", threads);
    o->threads = threads;
    return ok();
}

kiln_status kiln_options_set_max_memory(kiln_options *o, size_t bytes) {
    if (!o) return fail(KILN_EINVAL, "kiln_options_set_max_memory: options is NULL");
    o->max_memory = bytes;
    return ok();
}

kiln_status kiln_options_set_weights(kiln_options *o, const char *format) {
    if (!o || !format) return fail(KILN_EINVAL, "kiln_options_set_weights: NULL argument");
    if (strcmp(format, "f16") && strcmp(format, "bf16") && strcmp(format, "f32"))
        return fail(KILN_EINVAL, "weights format '%s' is not f16, bf16 or f32", format);
    o->weights = !strcmp(format, "f16") ? KN_F16 : !strcmp(format, "bf16") ? KN_BF16 : KN_UNDEF;
    return ok();
}

kiln_status kiln_options_set_max_string_bytes(kiln_options *o, size_t bytes) {
    if (!o) return fail(KILN_EINVAL, "kiln_options_set_max_string_bytes: options is NULL");
    if (bytes < 1 || bytes > ((size_t)1 << 30))
        return fail(KILN_EINVAL, "kiln_options_set_max_string_bytes: %zu is not from 1 to 2^30",
                    bytes);
    o->max_string = bytes;
    return ok();
}

/* Adds spec (malloc'd, owned from here) or replaces the option with the same name and
 * kind. */
static kiln_status add_shape(kiln_options *o, char *spec, size_t name_len, int whole) {
    for (int i = 0; i < o->nshapes; i++) {
        shape_opt *s = &o->shapes[i];
        if (s->whole == whole && s->name_len == name_len && !memcmp(s->spec, spec, name_len)) {
            free(s->spec);
            s->spec = spec;
            return ok();
        }
    }
    if (o->nshapes == o->cap_shapes) {
        int cap = o->cap_shapes ? 2 * o->cap_shapes : 4;
        shape_opt *n = realloc(o->shapes, (size_t)cap * sizeof *n);
        if (!n) {
            free(spec);
            return fail(KILN_ELIMIT, "out of memory");
        }
        o->shapes = n;
        o->cap_shapes = cap;
    }
    o->shapes[o->nshapes++] = (shape_opt){spec, name_len, whole};
    return ok();
}

/* A name usable in a "NAME=..." spec. */
static bool good_name(const char *s) {
    return s[0] && !strchr(s, '=');
}

kiln_status kiln_options_set_input_shape(kiln_options *o, const char *input, size_t rank,
                                         const int64_t *dims) {
    if (!o || !input || (rank && !dims))
        return fail(KILN_EINVAL, "kiln_options_set_input_shape: NULL argument");
    if (!good_name(input)) return fail(KILN_EINVAL, "bad input name '%s'", input);
    if (rank > KN_MAX_RANK)
        return fail(KILN_EINVAL, "input '%s': rank %zu is above the limit of %d", input, rank,
                    KN_MAX_RANK);
    size_t nl = strlen(input), cap = nl + 2 + rank * 21;
    char *spec = malloc(cap);
    if (!spec) return fail(KILN_ELIMIT, "out of memory");
    size_t n = (size_t)snprintf(spec, cap, "%s=", input);
    for (size_t k = 0; k < rank; k++) {
        if (dims[k] < 0) {
            free(spec);
            return fail(KILN_EINVAL, "input '%s': dim %zu is negative (%" PRId64 ")", input, k,
                        dims[k]);
        }
        n += (size_t)snprintf(spec + n, cap - n, "%s%" PRId64, k ? "," : "", dims[k]);
    }
    return add_shape(o, spec, nl, 1);
}

kiln_status kiln_options_set_dim(kiln_options *o, const char *dim, int64_t value) {
    if (!o || !dim) return fail(KILN_EINVAL, "kiln_options_set_dim: NULL argument");
    if (!good_name(dim)) return fail(KILN_EINVAL, "bad dimension name '%s'", dim);
    if (value < 0)
        return fail(KILN_EINVAL, "dimension '%s': value %" PRId64 " is negative", dim, value);
    size_t nl = strlen(dim), cap = nl + 23;
    char *spec = malloc(cap);
    if (!spec) return fail(KILN_ELIMIT, "out of memory");
    snprintf(spec, cap, "%s=%" PRId64, dim, value);
    return add_shape(o, spec, nl, 0);
}

/* ---- compiled models ---- */

typedef struct io_info {
    char *name;
    kiln_dtype dtype;
    int rank;
    int64_t dims[KN_MAX_RANK];
    size_t bytes;
} io_info;

/* ---- threads ----
 *
 * The compiled kernels split their parallel loops into tasks (passes/parallel.c) and
 * hand them to a par_for: kiln's pool (runtime/kn_pool.h), one per compiled model with
 * as many threads as kiln_options_set_threads gave it (the calling thread and
 * threads - 1 workers that spin during a run and sleep between runs). Runs of one
 * model from several threads at once are correct: a loop that finds the pool busy runs
 * on its caller's thread. */
#include <unistd.h>

/* The threads a model compiled with `threads` uses (0: every online CPU). */
static int threads_for(int threads) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return threads > 0 ? threads : n > 0 ? (int)n : 1;
}

struct kiln_compiled {
    int threads;   /* a run's threads (1: the calling thread only) */
    kn_pool *pool; /* threads > 1: the workers of the parallel loops, else NULL */
    kn_jit *jit;
    kn_entry_fn entry;
    size_t nin, nout;
    io_info *in, *out; /* in[0..nin), out[0..nout) */
    size_t workspace_size;
    size_t max_string; /* bytes of storage per new string, NUL included */
};

void kiln_compiled_destroy(kiln_compiled *c) {
    if (!c) return;
    for (size_t i = 0; i < c->nin; i++) free(c->in[i].name);
    for (size_t i = 0; i < c->nout; i++) free(c->out[i].name);
    free(c->in);
    free(c->out);
    kn_jit_destroy(c->jit);
    kn_pool_destroy(c->pool);
    free(c);
}

/* Copies the metadata of buffers b[0..n) into a new array *out. */
static kn_status copy_io(kn_ctx *cx, kn_kbuf *const *b, int n, io_info **out) {
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out) return kn_diag(cx, NULL, KN_ELIMIT, "out of memory");
    for (int i = 0; i < n; i++) {
        io_info *d = &(*out)[i];
        d->name = copy_str(b[i]->onnx ? b[i]->onnx : b[i]->name);
        if (!d->name) return kn_diag(cx, NULL, KN_ELIMIT, "out of memory");
        d->dtype = (kiln_dtype)b[i]->dtype;
        d->rank = b[i]->rank;
        memcpy(d->dims, b[i]->dims, (size_t)b[i]->rank * sizeof *d->dims);
        d->bytes = (size_t)b[i]->numel * kn_dtype_get(b[i]->dtype)->size;
    }
    return KN_OK;
}

/* Applies one shape option to g, naming the inputs when none matches. */
static kn_status bind_shape(kn_ctx *cx, kn_graph *g, const shape_opt *s) {
    if (s->whole) {
        int i = 0;
        while (i < g->nin && (strlen(g->inputs[i]->name) != s->name_len ||
                              memcmp(g->inputs[i]->name, s->spec, s->name_len)))
            i++;
        if (i == g->nin) {
            char names[512] = "";
            size_t n = 0;
            for (int k = 0; k < g->nin && n < sizeof names; k++)
                n += (size_t)snprintf(names + n, sizeof names - n, "%s'%s'", k ? ", " : "",
                                      g->inputs[k]->name);
            return kn_diag(cx, NULL, KN_EINVAL,
                           "input shape option: the model has no input '%.*s' (its inputs: %s)",
                           (int)s->name_len, s->spec, g->nin ? names : "none");
        }
    }
    return kn_shape_bind(cx, g, s->spec, s->whole);
}

/* A workspace above the limit of kiln_options_set_max_memory is refused. */
static kn_status refuse_workspace(kn_ctx *cx, const kn_kprog *p, size_t max) {
    if (!max || p->arena_size <= max) return KN_OK;
    return kn_diag(cx, NULL, KN_ELIMIT,
                   "a run needs a workspace of %zu bytes, more than the %zu bytes allowed by "
                   "kiln_options_set_max_memory()",
                   (size_t)p->arena_size, max);
}

/* The steps of kiln_compile_jit; *c is filled in, freed by the caller on failure. */
static kn_status compile(kn_ctx *cx, const kiln_model *m, const kiln_options *o, kiln_compiled *c) {
    kn_graph *g;
    if (parse(cx, m, &g)) return cx->status;
    g->max_string_bytes = (int64_t)o->max_string; /* 0: the default */
    cx->max_memory = o->max_memory;               /* constant folding runs the interpreter */
    kn_kprog *p = NULL;
    c->threads = threads_for(o->threads);
    for (int i = 0; i < o->nshapes && !cx->status; i++) bind_shape(cx, g, &o->shapes[i]);
    for (int i = 0; i < g->nin && !cx->status; i++) { /* say which option is missing */
        const kn_value *v = g->inputs[i];
        char buf[128];
        if (v->type.kind == KN_KIND_TENSOR && !kn_type_static(&v->type))
            kn_diag(cx, NULL, KN_EINVAL,
                    "input '%s' has shape %s: compiled code needs static shapes; fix it with "
                    "kiln_options_set_input_shape() or kiln_options_set_dim()",
                    v->name, kn_type_str(&v->type, buf, sizeof buf));
    }
    /* g and p are dropped once the JIT holds the weights: each constant is freed as soon
     * as nothing needs it, so the weights are held about once (docs/robustness.md) */
    kn_compile_opts copts = {
        .release_constants = true, .weights = o->weights, .threads = c->threads};
    if (!cx->status && !kn_compile_program_opts(cx, g, "model", o->target, &copts, &p) &&
        !refuse_workspace(cx, p, o->max_memory) &&
        !kn_llvm_jit_releasing(cx, p, o->target, o->opt_level,
                               c->threads > 1 ? kn_pool_par_for : (kn_par_for)0, NULL, &c->jit)) {
        c->entry = kn_jit_entry(c->jit);
        c->pool = kn_pool_create(c->threads); /* NULL: the loops run on the caller */
        c->nin = (size_t)p->nin;
        c->nout = (size_t)p->nout;
        c->workspace_size = p->arena_size;
        c->max_string = o->max_string ? o->max_string : KN_MAX_STRING_BYTES;
        if (!copy_io(cx, p->inputs, p->nin, &c->in)) copy_io(cx, p->outputs, p->nout, &c->out);
    }
    kn_kprog_destroy(p);
    kn_graph_destroy(g);
    return cx->status;
}

kiln_status kiln_compile_jit(const kiln_model *model, const kiln_options *options,
                             kiln_compiled **out) {
    if (!out) return fail(KILN_EINVAL, "kiln_compile_jit: out is NULL");
    *out = NULL;
    if (!model) return fail(KILN_EINVAL, "kiln_compile_jit: model is NULL");
    kiln_options defaults = {.target = kn_target_find("native"), .opt_level = 2};
    if (!options) options = &defaults;
    kiln_compiled *c = calloc(1, sizeof *c);
    if (!c) return fail(KILN_ELIMIT, "out of memory");
    kn_ctx cx;
    api_ctx_init(&cx, model->name);
    if (compile(&cx, model, options, c)) {
        /* copy_io may have filled part of an array: free only what exists */
        if (!c->in) c->nin = 0;
        if (!c->out) c->nout = 0;
        kiln_compiled_destroy(c);
        return finish(&cx);
    }
    *out = c;
    return finish(&cx);
}

/* Input or output index of c, or NULL. */
static const io_info *io(const kiln_compiled *c, int output, size_t i) {
    if (!c) return NULL;
    if (output) return i < c->nout ? &c->out[i] : NULL;
    return i < c->nin ? &c->in[i] : NULL;
}

size_t kiln_compiled_input_count(const kiln_compiled *c) {
    return c ? c->nin : 0;
}
size_t kiln_compiled_output_count(const kiln_compiled *c) {
    return c ? c->nout : 0;
}

#define GETTERS(kind, output)                                                                      \
    const char *kiln_compiled_##kind##_name(const kiln_compiled *c, size_t i) {                    \
        const io_info *d = io(c, output, i);                                                       \
        return d ? d->name : NULL;                                                                 \
    }                                                                                              \
    kiln_dtype kiln_compiled_##kind##_dtype(const kiln_compiled *c, size_t i) {                    \
        const io_info *d = io(c, output, i);                                                       \
        return d ? d->dtype : KILN_DTYPE_UNDEFINED;                                                \
    }                                                                                              \
    int kiln_compiled_##kind##_rank(const kiln_compiled *c, size_t i) {                            \
        const io_info *d = io(c, output, i);                                                       \
        return d ? d->rank : -1;                                                                   \
    }                                                                                              \
    const int64_t *kiln_compiled_##kind##_dims(const kiln_compiled *c, size_t i) {                 \
        const io_info *d = io(c, output, i);                                                       \
        return d && d->rank ? d->dims : NULL;                                                      \
    }                                                                                              \
    size_t kiln_compiled_##kind##_bytes(const kiln_compiled *c, size_t i) {                        \
        const io_info *d = io(c, output, i);                                                       \
        return d ? d->bytes : 0;                                                                   \
    }
GETTERS(input, 0)
GETTERS(output, 1)
#undef GETTERS

size_t kiln_compiled_workspace_size(const kiln_compiled *c) {
    return c ? c->workspace_size : 0;
}

size_t kiln_compiled_workspace_alignment(const kiln_compiled *c) {
    (void)c;
    return KN_ARENA_ALIGN;
}

kiln_status kiln_compiled_run(const kiln_compiled *c, const void *const *inputs,
                              void *const *outputs, void *workspace) {
    if (!c) return fail(KILN_EINVAL, "kiln_compiled_run: compiled is NULL");
    if ((c->nin && !inputs) || (c->nout && !outputs))
        return fail(KILN_EINVAL, "kiln_compiled_run: the %s array is NULL",
                    c->nin && !inputs ? "inputs" : "outputs");
    for (size_t i = 0; i < c->nin; i++)
        if (!inputs[i])
            return fail(KILN_EINVAL, "kiln_compiled_run: input %zu ('%s') is NULL", i,
                        c->in[i].name);
    for (size_t i = 0; i < c->nout; i++)
        if (!outputs[i])
            return fail(KILN_EINVAL, "kiln_compiled_run: output %zu ('%s') is NULL", i,
                        c->out[i].name);
    if (c->workspace_size) {
        if (!workspace)
            return fail(KILN_EINVAL, "kiln_compiled_run: the model needs a workspace of %zu bytes",
                        c->workspace_size);
        if ((uintptr_t)workspace % KN_ARENA_ALIGN)
            return fail(KILN_EINVAL,
                        "kiln_compiled_run: the workspace %p is not aligned to %d bytes", workspace,
                        KN_ARENA_ALIGN);
    }
    kn_pool_run_begin(c->pool);
    int rc = c->entry(inputs, outputs, NULL, workspace);
    kn_pool_run_end();
    if (rc == KN_STATUS_INVALID_BRANCH)
        return fail(KILN_EINVAL,
                    "kiln_compiled_run: the inputs make an If take a branch that cannot run with "
                    "the compiled input shapes");
    if (rc == KN_STATUS_STRING_TOO_LONG)
        return fail(KILN_ELIMIT,
                    "kiln_compiled_run: a string is longer than its storage in the compiled "
                    "model (%zu bytes, NUL included); it was cut and the rest ran; raise it with "
                    "kiln_options_set_max_string_bytes()",
                    c->max_string);
    if (rc == KN_STATUS_REGEX)
        return fail(KILN_ELIMIT,
                    "kiln_compiled_run: a regular expression did not compile (out of memory)");
    if (rc == KN_STATUS_RANDOM)
        return fail(KILN_EUNSUPPORTED,
                    "kiln_compiled_run: the inputs ask for training-mode Dropout with a ratio "
                    "above 0, which is random: compiled code runs inference mode only");
    if (rc) return fail(KILN_EINTERNAL, "kiln_compiled_run: the compiled model returned %d", rc);
    return ok();
}
