/* Running a model on a backend, shared by `kiln run`, `kiln check-onnx` and `kiln bench`.
 *
 * interp: the reference interpreter. c and llvm fix input shapes to the given
 * tensors, run the default passes, lower and plan memory. c then writes the C files
 * to a temporary folder, compiles them with the system compiler into a shared
 * object, loads it and removes the folder (KILN_KEEP_TMP=1 keeps it); llvm JITs
 * the program. Compiling (backend_prepare) is separate from calling (backend_call),
 * so kiln bench compiles once and runs many times. */
#include "targets/target.h"
#include "tools/backend.h"
#include "tools/cc.h"
#include "tools/pool_trace.h"
#include "codegen/c/emit_c.h"
#include "codegen/llvm/llvm.h"
#include "ir/interp.h"
#include "ir/kir.h"
#include "ir/ops.h"
#include "passes/deseq.h"
#include "passes/pass.h"
#include "runtime/kn_pool.h"
#ifdef KILN_HAVE_OPENCL
#include "tools/backend_opencl.h"

#include <HalideRuntime.h>
#endif

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

bool backend_known(const char *name) {
    return !strcmp(name, "interp") || !strcmp(name, "c") || !strcmp(name, "llvm") ||
           !strcmp(name, "opencl");
}

bool backend_available(const char *name) {
    if (strcmp(name, "opencl")) return true;
#ifdef KILN_HAVE_OPENCL
    /* Probe in a child: OpenCL drivers (PoCL) start threads when first asked for their
     * platforms, and a process that forks test runners afterwards would hand them a
     * driver without its threads. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(backend_opencl_available() ? 0 : 1);
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
#else
    return false;
#endif
}

kn_status backend_compile_c(kn_ctx *cx, kn_graph *g, const char *name, const kn_target *target,
                            const kn_compile_opts *opts, kn_kprog **out) {
    return kn_compile_program_opts(cx, g, name, target, opts, out);
}

/* Weights above this many bytes go to a file read at load time rather than into the
 * generated C as literals: gcc -O2 takes about 40 s on ResNet-18's 47 MB as literals. */
#define WEIGHTS_FILE_MIN ((size_t)16 << 20)

struct backend_prog {
    kn_graph *g;    /* interp: the graph to run; borrowed */
    kn_kprog *p;    /* c, llvm: the planned program */
    kn_entry_fn fn; /* c, llvm: NAME_run_array */
    /* c with threads > 1: NAME_run_array_parallel (codegen/c/emit_c.h), else NULL */
    int (*par_fn)(const void *const *, void *const *, const void *, void *,
                  void (*)(void *, int, void (*)(void *, int, int), void *), void *);
    kn_jit *jit;      /* llvm */
    void *lib;        /* c: the dlopen()ed shared object */
    void *weights;    /* c: contents of model.weights (64-byte aligned), or NULL */
    void *arena;      /* c, llvm: the work arena, p->arena_size bytes, or NULL */
    kn_arena *keep;   /* backend_reuse_outputs: holds the reused outputs, else NULL */
    kn_tensor **kept; /* the outputs handed out by every call (flat), once allocated */
    kn_pool *pool;    /* llvm, c with threads > 1: the parallel loops' workers, else NULL */
#ifdef KILN_HAVE_OPENCL
    backend_ocl *ocl; /* opencl: program, weights and arena on the device */
#endif
};

/* Fixes g's input shapes to in[] and compiles it to a planned program for the host's
 * vector width (OpenCL: scalar work-items), or for target t where it is not NULL. */
static kn_status prepare_kprog(kn_ctx *cx, const char *backend, kn_graph *g, kn_tensor *const *in,
                               const kn_compile_opts *opts, const kn_target *target, kn_kprog **p) {
    for (int i = 0; i < g->nin; i++) /* compile for exactly these shapes */
        if (kn_interp_check_input(cx, g->inputs[i], in[i])) return cx->status;
    for (int i = 0; i < g->nin; i++)
        if (in[i]->type.kind == KN_KIND_TENSOR) g->inputs[i]->type = in[i]->type;
    if (kn_deseq_expand_inputs(cx, g, in)) return cx->status; /* sequences: tensors */
    /* test mode KILN_TEST_TARGET=T: vector widths and tiles of target T (the code
     * still runs on the host), to exercise other targets' lowerings */
    const char *tt = getenv("KILN_TEST_TARGET");
    const kn_target *t = target        ? target
                         : tt && tt[0] ? kn_target_find(tt)
                                       : kn_target_find("native");
    if (!t) return kn_diag(cx, NULL, KN_EINVAL, "KILN_TEST_TARGET: unknown target '%s'", tt);
    if (!strcmp(backend, "opencl")) t = kn_target_find("opencl");
    return backend_compile_c(cx, g, "model", t, opts, p);
}

/* Reads the whole file at path into 64-byte aligned memory (free()). */
static kn_status read_weights(kn_ctx *cx, const char *path, void **out) {
    FILE *f = fopen(path, "rb");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *w = n > 0 ? aligned_alloc(64, ((size_t)n + 63) & ~(size_t)63) : NULL;
    if (n > 0 && (!w || fread(w, 1, (size_t)n, f) != (size_t)n)) {
        free(w);
        fclose(f);
        return kn_diag(cx, NULL, KN_EIO, "cannot read %s", path);
    }
    fclose(f);
    *out = w;
    return KN_OK;
}

/* A generated model's task (NAME_task) and its closure, run by kiln's pool. */
typedef struct c_task {
    void (*task)(void *ctx, int t, int thread);
    void *ctx;
} c_task;

static int c_task_run(void *user_context, int t, unsigned char *closure) {
    (void)user_context;
    const c_task *ct = (const c_task *)(void *)closure;
    ct->task(ct->ctx, t, kn_pool_thread_index());
    return 0;
}

/* The par_for NAME_run_array_parallel calls (NAME_par_for): the tasks on the pool of the
 * calling thread's run (kn_pool_run_begin), each told its thread's index. */
static void c_par_for(void *user, int ntasks, void (*task)(void *, int, int), void *ctx) {
    (void)user;
    c_task ct = {task, ctx};
    kn_pool_par_for(NULL, c_task_run, 0, ntasks, (unsigned char *)&ct);
}

/* Emits bp->p as C into a temporary folder, compiles and loads it, removes the folder.
 * With prof, the code calls prof's hook around each kernel. With threads > 1, the C runs
 * its parallel loops as tasks on a pool of that many threads (NAME_run_array_parallel). */
static kn_status prepare_c(kn_ctx *cx, backend_prog *bp, const char *cflags, const kn_profile *prof,
                           int threads) {
    size_t wbytes = kn_kprog_weight_bytes(bp->p);
    /* KILN_TEST_REVERSE_PARALLEL: run parallel loops backwards (tests the analysis) */
    kn_c_options opt = {.weights_file = wbytes >= WEIGHTS_FILE_MIN,
                        .reverse_parallel = getenv("KILN_TEST_REVERSE_PARALLEL") != NULL,
                        .threads = threads,
                        .profile = prof != NULL};
    char dir[4096];
    kn_status made = cc_tmp_dir(cx, "kiln-run", dir, sizeof dir);
    if (made) return made;
    char so[4200], wpath[4200];
    snprintf(so, sizeof so, "%s/model.so", dir);
    snprintf(wpath, sizeof wpath, "%s/model.weights", dir);
    kn_status st = kn_emit_c_files(cx, bp->p, &opt, dir);
    if (!st) st = backend_cc(cx, dir, "model", so, cflags);
    if (!st && opt.weights_file) st = read_weights(cx, wpath, &bp->weights);
    if (!st && !(bp->lib = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        st = kn_diag(cx, NULL, KN_EINTERNAL, "cannot load the compiled model: %s", dlerror());
    if (!st) {
        *(void **)&bp->fn = dlsym(bp->lib, "model_run_array");
        if (!bp->fn) st = kn_diag(cx, NULL, KN_EINTERNAL, "model_run_array not found");
    }
    if (!st && threads > 1) {
        *(void **)&bp->par_fn = dlsym(bp->lib, "model_run_array_parallel");
        if (!bp->par_fn)
            st = kn_diag(cx, NULL, KN_EINTERNAL, "model_run_array_parallel not found");
        else if (!(bp->pool = kn_pool_create(threads)))
            st = kn_diag(cx, NULL, KN_ELIMIT, "cannot start %d threads", threads);
    }
    if (!st && prof) {
        kn_profile_hook *hook = dlsym(bp->lib, "model_profile_hook");
        void **user = dlsym(bp->lib, "model_profile_user");
        if (!hook || !user)
            st = kn_diag(cx, NULL, KN_EINTERNAL, "model_profile_hook not found");
        else
            *hook = prof->hook, *user = prof->user;
    }
    cc_remove_dir(dir); /* the loaded object stays mapped */
    return st;
}

/* Whether p has a per-thread scratch of several copies (kn_kbuf.per_thread), whose tasks
 * need the thread index only kiln's pool gives (kn_pool_thread_index). */
static bool per_thread_copies(const kn_kprog *p) {
    for (int i = 0; p && i < p->nbufs; i++)
        if (p->bufs[i]->per_thread && p->bufs[i]->copies > 1) return true;
    return false;
}

/* The par_for the JIT's parallel loops call for `threads` threads (NULL: one thread):
 * kiln's pool (runtime/kn_pool.h), created into bp->pool; KILN_POOL=halide (for
 * comparisons) the Halide runtime's pool where it is linked in, unless the program has
 * per-thread scratch. */
static kn_par_for thread_pool(backend_prog *bp, int threads) {
    if (threads <= 1 && getenv("KILN_POOL_TRACE")) /* the split loops, on the caller */
        return pool_trace_wrap(kn_pool_par_for);
    if (threads <= 1) return NULL;
    kn_par_for pf = NULL;
    const char *which = getenv("KILN_POOL");
#ifdef KILN_HAVE_OPENCL /* the Halide runtime is linked in */
    if (which && !strcmp(which, "halide") && !per_thread_copies(bp->p)) {
        halide_set_num_threads(threads);
        pf = (kn_par_for)halide_do_par_for;
    }
#endif
    (void)which;
    if (!pf && (bp->pool = kn_pool_create(threads))) pf = kn_pool_par_for;
    if (pf && getenv("KILN_POOL_TRACE")) pf = pool_trace_wrap(pf);
    return pf;
}

kn_status backend_prepare(kn_ctx *cx, const char *backend, kn_graph *g, kn_tensor *const *in,
                          const char *cflags, int threads, const kn_compile_opts *opts,
                          backend_prog **out) {
    return backend_prepare_profiled(cx, backend, g, in, cflags, threads, opts, NULL, out);
}

kn_status backend_prepare_profiled(kn_ctx *cx, const char *backend, kn_graph *g,
                                   kn_tensor *const *in, const char *cflags, int threads,
                                   const kn_compile_opts *opts, const kn_profile *prof,
                                   backend_prog **out) {
    return backend_prepare_for(cx, backend, g, in, cflags, threads, opts, prof, NULL, out);
}

kn_status backend_prepare_for(kn_ctx *cx, const char *backend, kn_graph *g, kn_tensor *const *in,
                              const char *cflags, int threads, const kn_compile_opts *opts,
                              const kn_profile *prof, const kn_target *target, backend_prog **out) {
    *out = NULL;
    if (prof && !strcmp(backend, "interp"))
        return kn_diag(cx, NULL, KN_EINVAL, "per-kernel timing needs a compiled backend, not %s",
                       backend);
    backend_prog *bp = calloc(1, sizeof *bp);
    if (!bp) return kn_diag(cx, NULL, KN_ELIMIT, "out of memory");
    bp->g = g;
    kn_status st = KN_OK;
    /* --weights: every backend runs the graph with its weights rounded (passes/lowp.c) */
    if (!strcmp(backend, "interp") && opts && opts->weights)
        st = kn_weights_prepare(cx, g, opts->weights);
    if (st) {
    } else if (!strcmp(backend, "interp") && opts && opts->passes) {
        /* --passes with the interpreter: the graph passes of the pipeline (up to
         * 'lower'), so the rewritten graph is checked against the reference too */
        char graph_passes[1024];
        snprintf(graph_passes, sizeof graph_passes, "%s", opts->passes);
        char *lower = strstr(graph_passes, "lower");
        if (lower) *lower = 0;
        /* with KILN_TEST_TARGET=T, T's graph passes (its layouts), as the compiled
         * backends run them */
        const char *tt = getenv("KILN_TEST_TARGET");
        const kn_target *t = tt && tt[0] ? kn_target_find(tt) : NULL;
        if (tt && tt[0] && !t)
            st = kn_diag(cx, NULL, KN_EINVAL, "KILN_TEST_TARGET: unknown target '%s'", tt);
        else
            st = kn_pass_run_pipeline_for(cx, g, graph_passes, t, opts->dump_after, opts->dump);
    } else if (strcmp(backend, "interp")) {
        /* the JIT owns the weights: it takes the graph's and the program's big ones over
         * and copies the small ones (kn_llvm_jit_releasing), and the graph's constants nothing
         * reads once compiled (release_constants) */
        kn_compile_opts jopts = {0};
        if (opts) jopts = *opts;
        jopts.release_constants = !strcmp(backend, "llvm");
        /* the JIT's pool: as many copies of each per-thread scratch as it has threads */
        bool pooled = !strcmp(backend, "llvm") || !strcmp(backend, "c");
        jopts.threads = pooled && threads > 1 ? threads : 1;
        st = prepare_kprog(cx, backend, g, in, &jopts, target, &bp->p);
        if (!st && !strcmp(backend, "opencl")) {
#ifdef KILN_HAVE_OPENCL
            st = backend_opencl_prepare(cx, bp->p, prof, &bp->ocl);
#else
            st = kn_diag(cx, NULL, KN_EUNSUPPORTED,
                         "this kiln was built without the OpenCL runtime (Halide 14)");
#endif
        } else if (!st && !strcmp(backend, "llvm")) {
            int level = opts && opts->opt_level_set ? opts->opt_level : 2;
            st = kn_llvm_jit_releasing(cx, bp->p, target ? target : kn_target_find("native"), level,
                                       thread_pool(bp, threads), prof, &bp->jit);
            if (!st) bp->fn = kn_jit_entry(bp->jit);
        } else if (!st) {
            st = prepare_c(cx, bp, cflags, prof, jopts.threads);
        }
        if (!st && bp->p->arena_size &&
            !(bp->arena = aligned_alloc(KN_ARENA_ALIGN, (bp->p->arena_size + KN_ARENA_ALIGN - 1) &
                                                            ~(size_t)(KN_ARENA_ALIGN - 1))))
            st = kn_diag(cx, NULL, KN_ELIMIT, "cannot allocate the arena");
    }
    if (st)
        backend_release(bp);
    else
        *out = bp;
    return st;
}

const struct kn_kprog *backend_kprog(const backend_prog *bp) {
    return bp->p;
}

kn_status backend_call(kn_ctx *cx, backend_prog *bp, kn_arena *a, kn_tensor *const *in,
                       kn_tensor **out, uint64_t seed) {
    if (!bp->p) return kn_interp_run(cx, bp->g, a, in, out, seed);
    const kn_kprog *p = bp->p;
    const void **ip = kn_arena_array(a, (size_t)p->nin + 1, sizeof *ip);
    void **op = kn_arena_array(a, (size_t)p->nout + 1, sizeof *op);
    kn_tensor **flat = kn_arena_array(a, (size_t)p->nout + 1, sizeof *flat);
    for (int i = 0, k = 0; k < p->nin; i++) /* sequences: their tensors in order */
        k += kn_deseq_flatten(in[i], ip + k);
    bool reuse = bp->keep != NULL;
    for (int i = 0; i < p->nout; i++) {
        const kn_kbuf *b = p->outputs[i];
        if (reuse && bp->kept[i]) {
            flat[i] = bp->kept[i];
        } else {
            flat[i] = kn_tensor_make(reuse ? bp->keep : a, b->dtype, b->rank, b->dims);
            if (!flat[i]) return kn_diag(cx, NULL, KN_ELIMIT, "output %d is too large", i);
            if (reuse) bp->kept[i] = flat[i];
        }
        op[i] = flat[i]->data;
    }
    int nout;
    kn_deseq_regroup(a, p->groups, p->ngroups, flat, p->nout, out, &nout);
    int rc;
#ifdef KILN_HAVE_OPENCL
    if (bp->ocl) {
        if (backend_opencl_call(cx, bp->ocl, p, ip, op, &rc)) return cx->status;
    } else
#endif
    {
        pool_trace_run_begin();
        kn_pool_run_begin(bp->pool);
        rc = bp->par_fn ? bp->par_fn(ip, op, bp->weights, bp->arena, c_par_for, NULL)
                        : bp->fn(ip, op, bp->weights, bp->arena);
        kn_pool_run_end();
    }
    if (rc == KN_STATUS_STRING_TOO_LONG)
        return kn_diag(cx, NULL, KN_ELIMIT,
                       "a string is longer than its storage in the compiled model "
                       "(--max-string-bytes, default %d)",
                       KN_MAX_STRING_BYTES);
    if (rc == KN_STATUS_RANDOM)
        return kn_diag(cx, NULL, KN_EUNSUPPORTED,
                       "the inputs ask for training-mode Dropout with a ratio above 0, which is "
                       "random: compiled code runs inference mode only");
    if (rc == KN_STATUS_INVALID_BRANCH)
        return kn_diag(cx, NULL, KN_EINVAL,
                       "the inputs make an If take a branch that cannot run with the compiled "
                       "input shapes (status %d; compiling warned about it)",
                       rc);
    if (rc != 0) return kn_diag(cx, NULL, KN_EINTERNAL, "the compiled model returned an error");
    /* string outputs point into the work arena (or the inputs): copy them into a */
    for (int i = 0; i < p->nout; i++)
        if (p->outputs[i]->dtype == KN_STRING) {
            char **sv = op[i];
            for (int64_t k = 0; k < p->outputs[i]->numel; k++) sv[k] = kn_arena_strdup(a, sv[k]);
        }
    return KN_OK;
}

void backend_reuse_outputs(backend_prog *bp) {
    if (!bp->p || bp->keep) return;
    for (int i = 0; i < bp->p->nout; i++)
        if (bp->p->outputs[i]->dtype == KN_STRING) return; /* they point into the work arena */
    bp->keep = kn_arena_create();
    bp->kept = kn_arena_array(bp->keep, (size_t)bp->p->nout + 1, sizeof *bp->kept);
}

void backend_release(backend_prog *bp) {
    if (!bp) return;
    kn_arena_destroy(bp->keep);
    free(bp->arena);
#ifdef KILN_HAVE_OPENCL
    backend_opencl_release(bp->ocl);
#endif
    kn_jit_destroy(bp->jit);
    kn_pool_destroy(bp->pool);
    if (bp->lib) dlclose(bp->lib);
    free(bp->weights);
    kn_kprog_destroy(bp->p);
    free(bp);
}

kn_status backend_run(kn_ctx *cx, const char *backend, kn_graph *g, kn_arena *a, kn_tensor **in,
                      kn_tensor **out, uint64_t seed, const kn_compile_opts *opts) {
    backend_prog *bp;
    /* KILN_TEST_THREADS=N: parallel loops on N threads (tests the JIT's and the C's tasks) */
    const char *tt = getenv("KILN_TEST_THREADS");
    if (backend_prepare(cx, backend, g, in, NULL, tt ? atoi(tt) : 1, opts, &bp)) return cx->status;
    kn_status st = backend_call(cx, bp, a, in, out, seed);
    backend_release(bp);
    return st;
}

/* Graph inputs from which v's value is computed: marks them in `mark` (by input
 * position). */
static void ancestors(const kn_graph *g, const kn_value *v, unsigned char *mark,
                      unsigned char *seen) {
    /* a sequence's structure never depends on its elements' values */
    if (!v || seen[v->id] || v->type.kind != KN_KIND_TENSOR) return;
    seen[v->id] = 1;
    for (int i = 0; i < g->nin; i++)
        if (g->inputs[i] == v) mark[i] = 1;
    if (v->producer)
        for (int k = 0; k < v->producer->nin; k++) ancestors(g, v->producer->in[k], mark, seen);
}

int backend_shape_inputs(kn_ctx *cx, kn_graph *g, kn_tensor *const *in, unsigned char *mark,
                         bool all_inputs) {
    /* the shapes as given, then static inference: a node with a non-static output
     * takes its shape from the values of its integer inputs (shapes, indices, counts),
     * or with all_inputs from any of its inputs (Range's float bounds) */
    kn_ctx scratch;
    kn_ctx_init(&scratch, cx->file);
    scratch.hints = cx->hints;
    for (int i = 0; i < g->nin; i++) /* inputs that contradict the model: the run reports it */
        if (kn_interp_check_input(&scratch, g->inputs[i], in[i])) return 0;
    for (int i = 0; i < g->nin; i++)
        if (in[i]->type.kind == KN_KIND_TENSOR) g->inputs[i]->type = in[i]->type;
    /* fold too: Shape of a static input is a constant, not a reason to bind the input.
     * Not 'layout': the compilation runs it after the passes that need the target
     * ('patch' rewrites only convolutions still in ONNX's NCHW). */
    kn_pass_run_pipeline(
        &scratch, g, "shape,qdq,fold,shape,transpose,bnfold,act,norm,dynq,fuse,chain", NULL, NULL);
    int n = kn_graph_value_count(g), count = 0;
    unsigned char *seen = calloc((size_t)n + 1, 1);
    KN_ASSERT(seen);
    memset(mark, 0, (size_t)g->nin);
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *nd = g->nodes[i];
        bool dyn = false;
        for (int k = 0; k < nd->nout; k++)
            if (nd->out[k] && !kn_type_static(&nd->out[k]->type)) dyn = true;
        if (!dyn) continue;
        bool seq = false; /* sequence ops: only positions, trip counts, conditions */
        for (int k = 0; k < nd->nin; k++)
            seq |= nd->in[k] && nd->in[k]->type.kind != KN_KIND_TENSOR;
        for (int k = 0; k < nd->nout; k++)
            seq |= nd->out[k] && nd->out[k]->type.kind != KN_KIND_TENSOR;
        for (int k = 0; k < nd->nin; k++) {
            const kn_value *v = nd->in[k];
            /* strings are data, never shapes: binding them would fold the model away */
            if (v && !v->constant && v->type.kind == KN_KIND_TENSOR && v->type.dtype != KN_STRING &&
                (seq ? kn_deseq_structural(nd, k)
                     : all_inputs || kn_dtype_get(v->type.dtype)->is_int))
                ancestors(g, v, mark, seen);
        }
    }
    free(seen);
    for (int i = 0; i < g->nin; i++) count += mark[i];
    return count;
}
