/* Running a model on a backend, shared by `kiln run` and `kiln check-onnx`.
 *
 * interp: the reference interpreter. c: fixes input shapes to the given tensors,
 * runs the default passes, lowers, plans memory, writes the C files to a temporary
 * folder, compiles them with the system compiler into a shared object, loads it,
 * runs it, and removes the folder (KILN_KEEP_TMP=1 keeps it). */
#include "tools/backend.h"
#include "codegen/c/emit_c.h"
#include "codegen/llvm/llvm.h"
#include "ir/interp.h"
#include "ir/kir.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

bool backend_known(const char *name) {
    return !strcmp(name, "interp") || !strcmp(name, "c") || !strcmp(name, "llvm");
}

kn_status backend_compile_c(kn_ctx *cx, kn_graph *g, const char *name, kn_kprog **out) {
    return kn_compile_program(cx, g, name, out);
}

/* Runs argv, stderr to errfile; returns the exit status (-1 if it could not run). */
static int run_tool(char *const *argv, const char *errfile) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_dir(const char *dir) {
    if (getenv("KILN_KEEP_TMP")) {
        fprintf(stderr, "kiln: kept %s\n", dir);
        return;
    }
    char *argv[] = {"rm", "-rf", (char *)dir, NULL};
    run_tool(argv, "/dev/null");
}

kn_status backend_cc(kn_ctx *cx, const char *dir, const char *name, const char *so) {
    const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
    char src[4096], err[4096];
    snprintf(src, sizeof src, "%s/%s.c", dir, name);
    snprintf(err, sizeof err, "%s/cc.log", dir);
    char *argv[64] = {(char *)cc, "-std=c99", "-O1", "-Wall",    "-Wextra", "-Wpedantic", "-Werror",
                      "-fPIC",    "-shared",  "-o",  (char *)so, src,       "-lm"};
    int argc = 13;
    /* KILN_CFLAGS: extra flags, e.g. -fsanitize=address,undefined in the sanitizer pass */
    char extra[1024] = "";
    const char *env = getenv("KILN_CFLAGS");
    if (env) snprintf(extra, sizeof extra, "%s", env);
    for (char *tok = strtok(extra, " "); tok && argc < 63; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    int rc = run_tool(argv, err);
    if (rc == 0) return KN_OK;
    char first[600] = "";
    FILE *f = fopen(err, "r");
    if (f) {
        while (fgets(first, sizeof first, f))
            if (strstr(first, "error")) break;
        fclose(f);
    }
    first[strcspn(first, "\n")] = 0;
    return kn_diag(cx, NULL, KN_EINTERNAL, "the generated C does not compile with %s: %s", cc,
                   first[0] ? first : "(no message)");
}

/* Fixes g's input shapes to in[] and compiles it to a planned program. */
static kn_status prepare(kn_ctx *cx, kn_graph *g, kn_tensor **in, kn_kprog **p) {
    for (int i = 0; i < g->nin; i++) /* compile for exactly these shapes */
        if (kn_interp_check_input(cx, g->inputs[i], in[i])) return cx->status;
    for (int i = 0; i < g->nin; i++)
        if (in[i]->type.kind == KN_KIND_TENSOR) g->inputs[i]->type = in[i]->type;
    return backend_compile_c(cx, g, "model", p);
}

/* Calls a compiled entry point with in[] and fresh outputs in a. */
static kn_status call_entry(kn_ctx *cx, const kn_kprog *p, kn_entry_fn fn, kn_arena *a,
                            kn_tensor **in, kn_tensor **out) {
    kn_status st = KN_OK;
    const void **ip = kn_arena_array(a, (size_t)p->nin + 1, sizeof *ip);
    void **op = kn_arena_array(a, (size_t)p->nout + 1, sizeof *op);
    for (int i = 0; i < p->nin; i++) ip[i] = in[i]->data;
    for (int i = 0; i < p->nout && !st; i++) {
        const kn_kbuf *b = p->outputs[i];
        out[i] = kn_tensor_make(a, b->dtype, b->rank, b->dims);
        if (!out[i])
            st = kn_diag(cx, NULL, KN_ELIMIT, "output %d is too large", i);
        else
            op[i] = out[i]->data;
    }
    void *arena = NULL;
    if (!st && p->arena_size) {
        arena = aligned_alloc(KN_ARENA_ALIGN, p->arena_size);
        if (!arena) st = kn_diag(cx, NULL, KN_ELIMIT, "cannot allocate the arena");
    }
    if (!st && fn(ip, op, NULL, arena) != 0)
        st = kn_diag(cx, NULL, KN_EINTERNAL, "the compiled model returned an error");
    free(arena);
    return st;
}

static kn_status run_llvm(kn_ctx *cx, kn_graph *g, kn_arena *a, kn_tensor **in, kn_tensor **out) {
    kn_kprog *p;
    if (prepare(cx, g, in, &p)) return cx->status;
    kn_jit *j = NULL;
    kn_status st = kn_llvm_jit(cx, p, kn_target_find("native"), 2, &j);
    if (!st) st = call_entry(cx, p, kn_jit_entry(j), a, in, out);
    kn_jit_destroy(j);
    kn_kprog_destroy(p);
    return st;
}

static kn_status run_c(kn_ctx *cx, kn_graph *g, kn_arena *a, kn_tensor **in, kn_tensor **out) {
    kn_kprog *p;
    if (prepare(cx, g, in, &p)) return cx->status;
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kiln-run-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        kn_kprog_destroy(p);
        return kn_diag(cx, NULL, KN_EIO, "cannot create a temporary folder");
    }
    char so[4200];
    snprintf(so, sizeof so, "%s/model.so", dir);
    kn_status st = kn_emit_c_files(cx, p, NULL, dir);
    if (!st) st = backend_cc(cx, dir, "model", so);
    void *lib = NULL;
    if (!st && !(lib = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        st = kn_diag(cx, NULL, KN_EINTERNAL, "cannot load the compiled model: %s", dlerror());
    kn_entry_fn fn = NULL;
    if (!st) {
        *(void **)&fn = dlsym(lib, "model_run_array");
        if (!fn) st = kn_diag(cx, NULL, KN_EINTERNAL, "model_run_array not found");
    }
    if (!st) st = call_entry(cx, p, fn, a, in, out);
    if (lib) dlclose(lib);
    remove_dir(dir);
    kn_kprog_destroy(p);
    return st;
}

kn_status backend_run(kn_ctx *cx, const char *backend, kn_graph *g, kn_arena *a, kn_tensor **in,
                      kn_tensor **out, uint64_t seed) {
    if (!strcmp(backend, "c")) return run_c(cx, g, a, in, out);
    if (!strcmp(backend, "llvm")) return run_llvm(cx, g, a, in, out);
    return kn_interp_run(cx, g, a, in, out, seed);
}

/* Graph inputs from which v's value is computed: marks them in `mark` (by input
 * position). */
static void ancestors(const kn_graph *g, const kn_value *v, unsigned char *mark,
                      unsigned char *seen) {
    if (!v || seen[v->id]) return;
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
    for (int i = 0; i < g->nin; i++) /* inputs that contradict the model: the run reports it */
        if (kn_interp_check_input(&scratch, g->inputs[i], in[i])) return 0;
    for (int i = 0; i < g->nin; i++)
        if (in[i]->type.kind == KN_KIND_TENSOR) g->inputs[i]->type = in[i]->type;
    kn_pass_shape(&scratch, g);
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
        for (int k = 0; k < nd->nin; k++) {
            const kn_value *v = nd->in[k];
            if (v && !v->constant && v->type.kind == KN_KIND_TENSOR &&
                (all_inputs || kn_dtype_get(v->type.dtype)->is_int))
                ancestors(g, v, mark, seen);
        }
    }
    free(seen);
    for (int i = 0; i < g->nin; i++) count += mark[i];
    return count;
}
