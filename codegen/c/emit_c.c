/* C99 files from kernel IR. Each kernel becomes a static function taking the buffers
 * it touches, its body printed by the shared printer (codegen/c/cprint.c); NAME_run
 * computes buffer addresses (arena offsets from the memory plan) and calls the
 * kernels in order. Weights are static const arrays (or a separate file). */
#include "codegen/c/emit_c.h"
#include "codegen/outfiles.h"
#include "codegen/c/cprint.h"
#include "targets/target.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ctype kn_ctype_c99

static bool is_float(kn_dtype t) {
    return t == KN_F32 || t == KN_F64;
}

/* ---- weights ---- */

static void emit_weight_array(kn_cprint *P, const kn_kbuf *b, const char *section,
                              const char *prefix) {
    FILE *f = P->f;
    const kn_tensor *t = b->data;
    int64_t n = b->numel;
    if (section) fprintf(f, "KN_WEIGHTS_SECTION ");
    /* file-scope name N_wK: kernels take the array as parameter wK (no shadowing).
     * f32 data is written as the hex bit patterns of a union's uint32_t member, which
     * compilers parse about 1.7x faster than decimal float literals (and exactly) */
    bool bits = b->dtype == KN_F32;
    if (bits)
        fprintf(f, "static const union { uint32_t u[%lld]; float f[%lld]; } %s_%s = {{",
                (long long)(n ? n : 1), (long long)(n ? n : 1), prefix, b->name);
    else
        fprintf(f, "static const %s %s_%s[%lld] = {", ctype(b->dtype), prefix, b->name,
                (long long)(n ? n : 1));
    if (!n) fprintf(f, "0");
    for (int64_t i = 0; i < n; i++) {
        fprintf(f, "%s", i % 8 ? " " : "\n    ");
        kn_dtype dt = b->dtype;
        if (bits)
            fprintf(f, "0x%08" PRIx32 "u", ((const uint32_t *)t->data)[i]);
        else if (dt == KN_F16 || dt == KN_BF16 || dt == KN_BOOL || kn_dtype_is_f8(dt))
            fprintf(f, "%u",
                    (unsigned)(kn_dtype_get(dt)->size == 1 ? ((const uint8_t *)t->data)[i]
                                                           : ((const uint16_t *)t->data)[i]));
        else if (is_float(dt))
            kn_cprint_const(P, dt, kn_load_f64(t->data, dt, (size_t)i), 0);
        else if (dt == KN_U64)
            fprintf(f, "UINT64_C(%llu)", (unsigned long long)((const uint64_t *)t->data)[i]);
        else
            kn_cprint_const(P, dt == KN_I64 ? KN_I64 : KN_I32, 0,
                            kn_load_i64(t->data, dt, (size_t)i));
        fputc(',', f);
    }
    fprintf(f, bits ? "\n}};\n" : "\n};\n");
}

/* ---- the files ---- */

void kn_emit_c_groups(FILE *h, const kn_kprog *p) {
    for (int i = 0; i < p->ngroups; i++) {
        const kn_iogroup *gr = &p->groups[i];
        if (gr->type.kind == KN_KIND_TENSOR) continue;
        const char *IO = gr->output ? "OUTPUT" : "INPUT", *io = gr->output ? "output" : "input";
        char id[256];
        size_t k = 0;
        for (const char *s = gr->name; *s && k + 1 < sizeof id; s++)
            id[k++] =
                (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
                    ? *s
                    : '_';
        id[k] = 0;
        bool seq = gr->type.kind == KN_KIND_SEQUENCE || gr->type.elem_kind == KN_KIND_SEQUENCE;
        if (gr->type.kind == KN_KIND_OPTIONAL) {
            fprintf(h, "/* %s '%s' is an optional, %s */\n#define %s_%s_PRESENT %d\n", io, gr->name,
                    !gr->present ? "empty: it has no parameter"
                    : seq        ? "holding the sequence below"
                                 : "holding one tensor",
                    p->name, id, gr->present);
            if (!gr->present) continue;
        }
        if (seq)
            fprintf(h,
                    "/* %s '%s' is a sequence of %d tensors, %ss %s_0 .. */\n"
                    "#define %s_%s_LENGTH %d\n",
                    io, gr->name, gr->count, io, gr->name, p->name, id, gr->count);
        if (gr->count) fprintf(h, "#define %s_%s_FIRST_%s %d\n", p->name, id, IO, gr->first);
    }
}

/* The pointer type of a buffer parameter: `const float *` / `float *`; strings
 * `const char *const *` (read) / `const char **` (written: the pointers, never the
 * characters). */
static const char *param_type(const kn_kbuf *b, bool writes, char *buf, size_t cap) {
    if (b->dtype == KN_STRING)
        snprintf(buf, cap, "%s", writes ? "const char **" : "const char *const *");
    else
        snprintf(buf, cap, "%s%s *", writes ? "" : "const ", ctype(b->dtype));
    return buf;
}

static void emit_param(FILE *f, const kn_kbuf *b, bool writes, bool restr) {
    char t[64];
    fprintf(f, "%s%s%s", param_type(b, writes, t, sizeof t), restr ? "restrict " : "", b->name);
}

/* Which of the buffers a kernel uses (use[], kn_kernel_uses) may be `restrict`
 * parameters: all but arena buffers whose storage overlaps another one's in the plan
 * (an in-place alias and the buffer it runs in; the plan gives buffers live in the
 * same kernel disjoint ranges otherwise). Inputs, outputs and weights are distinct
 * objects (docs/generated-c.md: inputs must not overlap outputs). */
static void kernel_restrict(const kn_kprog *p, const unsigned char *use, bool *restr) {
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        restr[i] = use[i] != 0;
        if (!use[i] || (b->kind != KB_TEMP && b->kind != KB_SCRATCH)) continue;
        size_t lo = kn_kbuf_arena_offset(b), hi = lo + kn_kbuf_bytes(b);
        for (int j = 0; j < p->nbufs && restr[i]; j++) {
            const kn_kbuf *o = p->bufs[j];
            if (j == i || !use[j] || (o->kind != KB_TEMP && o->kind != KB_SCRATCH)) continue;
            if (kn_kbuf_storage(o)->region != kn_kbuf_storage(b)->region) continue;
            size_t olo = kn_kbuf_arena_offset(o), ohi = olo + kn_kbuf_bytes(o);
            if (lo < ohi && olo < hi) restr[i] = false;
            if (lo == olo && (hi == lo || ohi == olo)) restr[i] = false; /* empty, same place */
        }
    }
}

/* ---- parallel loops as tasks (kn_c_options.threads > 1) ---- */

enum { MAX_TASK_LOOPS = 64 };

/* The parallel loops of the kernel being printed that run as tasks: each becomes
 * NAME_kK_bJ (the loop over a range of its iterations, the kernel's buffers as
 * parameters), struct NAME_kK_cJ (its closure: buffers and the outer variables it reads)
 * and NAME_kK_tJ (one task: a chunk of the iterations, the thread's copy of each
 * per-thread scratch), and the kernel calls the caller's par_for over the tasks, or runs
 * them in order when there is none. */
typedef struct task_loops {
    const kn_kprog *p;
    int kernel;
    const bool *restr; /* the kernel's restrict parameters (kernel_restrict) */
    int n;
    const kn_ks *loop[MAX_TASK_LOOPS];
    unsigned char *use, *inner, *used; /* scratch for task_vars */
} task_loops;

/* The buffers (T->use) and the outer variables (T->used without T->inner) of loop s. */
static void task_vars(task_loops *T, const kn_ks *s) {
    memset(T->use, 0, (size_t)T->p->nbufs + 1);
    memset(T->inner, 0, (size_t)T->p->nvars + 1);
    memset(T->used, 0, (size_t)T->p->nvars + 1);
    kn_kernel_uses(s, T->use);
    kn_ks_declared_vars(s, T->inner);
    kn_ks_used_vars(s, T->used);
    for (int v = 0; v < T->p->nvars; v++) T->used[v] &= !T->inner[v];
}

/* The loops the JIT runs as tasks (codegen/llvm/emit_llvm.c, par_loop): parallel, split
 * into more than one task, of a constant extent, none inside another; here also only
 * when every variable they take from outside is a scalar (a closure field). */
static void task_find(task_loops *T, const kn_ks *s) {
    if (!s) return;
    if (kn_ks_task_loop(s) && T->n < MAX_TASK_LOOPS) {
        task_vars(T, s);
        bool scalars = true;
        for (int v = 0; v < T->p->nvars; v++) scalars &= !T->used[v] || T->p->var_lanes[v] == 1;
        if (scalars) {
            T->loop[T->n++] = s;
            return;
        }
    }
    for (int i = 0; i < s->n; i++) task_find(T, s->body[i]);
}

static const char *index_type(const kn_kprog *p) {
    return ctype(p->index_bits == 32 ? KN_I32 : KN_I64);
}

/* The C type of variable v of the kernel, declared[] its kn_ks_declared_vars (loop indices
 * as the printer declares them). */
static const char *var_ctype(const kn_kprog *p, const unsigned char *declared, int v) {
    return declared[v] == 1 ? index_type(p) : ctype(p->var_dtype[v]);
}

/* Prints loop j's functions and closure through P (before the kernel's function). The
 * range function is inlined into its one caller, the task (KN_TASK_BODY): its parameters
 * are restrict where the kernel's are, and called, the many of them would go on the stack,
 * a frame a stack bound cannot count (kiln_stack.cmake). */
static void task_functions(kn_cprint *P, task_loops *T, const unsigned char *declared, int j) {
    const kn_ks *s = T->loop[j];
    const kn_kprog *p = T->p;
    FILE *f = P->f;
    const char *N = p->name, *IT = index_type(p);
    int K = T->kernel;
    task_vars(T, s);
    fprintf(f, "\nKN_TASK_BODY void %s_k%d_b%d(", N, K, j);
    for (int i = 0; i < p->nbufs; i++)
        if (T->use[i]) {
            emit_param(f, p->bufs[i], T->use[i] & 2, T->restr[i]);
            fprintf(f, ", ");
        }
    fprintf(f, "%s kn_lo, %s kn_hi", IT, IT);
    for (int v = 0; v < p->nvars; v++)
        if (T->used[v]) fprintf(f, ", %s v%d", var_ctype(p, declared, v), v);
    fprintf(f, ") {\n    for (%s v%d = kn_lo; v%d < kn_hi; v%d++) {\n", IT, s->var, s->var, s->var);
    kn_cprint_stmt(P, s->body[0], 8);
    fprintf(f, "    }\n}\n\nstruct %s_k%d_c%d {\n", N, K, j);
    char t[64];
    for (int i = 0; i < p->nbufs; i++)
        if (T->use[i])
            fprintf(f, "    %s%s;\n", param_type(p->bufs[i], T->use[i] & 2, t, sizeof t),
                    p->bufs[i]->name);
    for (int v = 0; v < p->nvars; v++)
        if (T->used[v]) fprintf(f, "    %s v%d;\n", var_ctype(p, declared, v), v);
    int64_t ntasks, chunk = kn_ks_task_chunk(s, &ntasks);
    fprintf(f,
            "};\n\nstatic void %s_k%d_t%d(void *kn_ctx, int kn_t, int kn_thread) {\n"
            "    const struct %s_k%d_c%d *kn_c = (const struct %s_k%d_c%d *)kn_ctx;\n"
            "    int64_t kn_lo = (int64_t)kn_t * %lld;\n"
            "    int64_t kn_hi = kn_lo + %lld < %lld ? kn_lo + %lld : %lld;\n",
            N, K, j, N, K, j, N, K, j, (long long)chunk, (long long)chunk, (long long)s->extent,
            (long long)chunk, (long long)s->extent);
    bool thread = false;
    for (int i = 0; i < p->nbufs; i++)
        thread |= T->use[i] && p->bufs[i]->per_thread && p->bufs[i]->copies > 1;
    if (!thread) fprintf(f, "    (void)kn_thread;\n");
    fprintf(f, "    %s_k%d_b%d(", N, K, j);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (!T->use[i]) continue;
        if (b->per_thread && b->copies > 1) /* the running thread's copy */
            fprintf(f, "(%s)(%svoid *)((%sunsigned char *)kn_c->%s + (size_t)kn_thread * %zu), ",
                    param_type(b, T->use[i] & 2, t, sizeof t), T->use[i] & 2 ? "" : "const ",
                    T->use[i] & 2 ? "" : "const ", b->name, kn_kbuf_thread_stride(b));
        else
            fprintf(f, "kn_c->%s, ", b->name);
    }
    fprintf(f, "(%s)kn_lo, (%s)kn_hi", IT, IT);
    for (int v = 0; v < p->nvars; v++)
        if (T->used[v]) fprintf(f, ", kn_c->v%d", v);
    fprintf(f, ");\n}\n");
}

/* The printer's loop hook (kn_cprint.loop_hook): a loop that runs as tasks becomes its
 * closure and a call of par_for, or without one its tasks in order on the calling thread
 * (thread 0). */
static bool task_call(kn_cprint *P, const kn_ks *s, int ind) {
    task_loops *T = P->hook_user;
    int j = 0;
    while (j < T->n && T->loop[j] != s) j++;
    if (j == T->n) return false;
    const kn_kprog *p = T->p;
    const char *N = p->name;
    FILE *f = P->f;
    task_vars(T, s);
    fprintf(f, "%*s{\n%*sstruct %s_k%d_c%d kn_c = {", ind, "", ind + 4, "", N, T->kernel, j);
    int nf = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (T->use[i]) fprintf(f, "%s%s", nf++ ? ", " : "", p->bufs[i]->name);
    for (int v = 0; v < p->nvars; v++)
        if (T->used[v]) fprintf(f, "%sv%d", nf++ ? ", " : "", v);
    int64_t ntasks;
    kn_ks_task_chunk(s, &ntasks);
    fprintf(f,
            "};\n%*sif (kn_pf)\n%*skn_pf(kn_pu, %lld, %s_k%d_t%d, &kn_c);\n%*selse\n"
            "%*sfor (int kn_t = 0; kn_t < %lld; kn_t++) %s_k%d_t%d(&kn_c, kn_t, 0);\n%*s}\n",
            ind + 4, "", ind + 8, "", (long long)ntasks, N, T->kernel, j, ind + 4, "", ind + 8, "",
            (long long)ntasks, N, T->kernel, j, ind, "");
    return true;
}

/* Writes what sf and vf hold (the same code printed in portable C99 and with vector
 * extensions) to k: once where they are the same, else both under #if KN_VECTOR_EXT. */
static void write_variants(FILE *k, FILE *sf, char **sbuf, FILE *vf, char **vbuf) {
    fflush(sf);
    fflush(vf);
    long sn = ftell(sf), vn = ftell(vf);
    if (sn == vn && !memcmp(*sbuf, *vbuf, (size_t)sn)) {
        fwrite(*sbuf, 1, (size_t)sn, k);
    } else {
        fprintf(k, "#if KN_VECTOR_EXT\n");
        fwrite(*vbuf, 1, (size_t)vn, k);
        fprintf(k, "#else\n");
        fwrite(*sbuf, 1, (size_t)sn, k);
        fprintf(k, "#endif\n");
    }
}

/* Prints the helpers used by E and V: those both use unconditionally, the others under
 * the #if of the kernel form that uses them (an unused static function is a warning). */
static void emit_helpers(const kn_cprint *E, const kn_cprint *V, FILE *f) {
    kn_cprint both = *E, onlye = *E, onlyv = *V;
    both.helpers = E->helpers & V->helpers;
    onlye.helpers = E->helpers & ~V->helpers;
    onlyv.helpers = V->helpers & ~E->helpers;
    bool ne = onlye.helpers != 0, nv = onlyv.helpers != 0;
    for (int t = 0; t < KN_DTYPE_MAX; t++) {
        both.types[t] = E->types[t] & V->types[t];
        onlye.types[t] = (unsigned char)(E->types[t] & ~V->types[t]);
        onlyv.types[t] = (unsigned char)(V->types[t] & ~E->types[t]);
        ne = ne || onlye.types[t];
        nv = nv || onlyv.types[t];
    }
    kn_cprint_helpers(&both, f);
    if (ne) {
        fprintf(f, "#if !KN_VECTOR_EXT\n");
        kn_cprint_helpers(&onlye, f);
        fprintf(f, "#endif\n");
    }
    if (nv) {
        fprintf(f, "#if KN_VECTOR_EXT\n");
        kn_cprint_helpers(&onlyv, f);
        fprintf(f, "#endif\n");
    }
}

/* Prints the kernels of p that `which` marks (NULL: all) into k, each as
 * `static void NAME_kK(<the buffers it touches>)`, and leaves in E and V (portable C99
 * and vector-extension printers, whose streams are closed on return: use them only
 * for their helper flags) what the helpers and the prelude need. With opt->threads > 1,
 * a kernel with loops that run as tasks also takes `NAME_par_for kn_pf, void *kn_pu`
 * and tasks[K] is set (tasks may be NULL otherwise). Returns whether a kernel asks for
 * KN_REGTILE. */
static bool print_kernels(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt,
                          const unsigned char *which, kn_cprint *E, kn_cprint *V, FILE *k,
                          unsigned char *tasks) {
    const char *N = p->name;
    /* each kernel is printed twice: E in portable C99 (vectors as lane loops), V with
     * vector extensions; where they differ both go in, under #if KN_VECTOR_EXT */
    char *sbuf = NULL, *vbuf = NULL;
    size_t slen = 0, vlen = 0;
    FILE *sf = open_memstream(&sbuf, &slen), *vf = open_memstream(&vbuf, &vlen);
    KN_ASSERT(sf && vf);
    kn_cprint_init(E, p, sf, KN_C99);
    kn_cprint_init(V, p, vf, KN_C99);
    E->reverse_parallel = V->reverse_parallel = opt->reverse_parallel;
    V->vec_ext = true;
    /* Helium: the integer tiles' 4-lane multiply-adds (passes/tile.c, kt_mve) */
    V->mve_int = p->target && p->target->kind == KN_TARGET_MCU && p->target->vector_bits >= 128 &&
                 p->target->int8_dot == KN_DOT_S16X2;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    bool *restr = calloc((size_t)p->nbufs + 1, sizeof *restr);
    task_loops T = {.p = p,
                    .restr = restr,
                    .use = calloc((size_t)p->nbufs + 1, 1),
                    .inner = calloc((size_t)p->nvars + 1, 1),
                    .used = calloc((size_t)p->nvars + 1, 1)};
    unsigned char *declared = calloc((size_t)p->nvars + 1, 1);
    KN_ASSERT(use && restr && T.use && T.inner && T.used && declared);
    if (opt->threads > 1) {
        E->loop_hook = V->loop_hook = task_call;
        E->hook_user = V->hook_user = &T;
    }
    bool any_regtile = false;
    for (int ki = 0; ki < p->nkernels; ki++) {
        const kn_kernel *kr = p->kernels[ki];
        if (which && !which[ki]) continue;
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(kr->body, use);
        kn_event_emit(cx, &(kn_event){.kind = KN_EVENT_KERNEL,
                                      .name = "emitting C",
                                      .done = ki + 1,
                                      .total = p->nkernels});
        kernel_restrict(p, use, restr);
        bool regtile = kr->sched.split != 0 || kr->sched.fblock; /* KN_REGTILE, below */
        any_regtile = any_regtile || regtile;
        T.kernel = ki;
        T.n = 0;
        if (opt->threads > 1) task_find(&T, kr->body);
        if (T.n) { /* the task functions first, printed as the kernel is */
            memset(declared, 0, (size_t)p->nvars + 1);
            kn_ks_declared_vars(kr->body, declared);
            rewind(sf);
            rewind(vf);
            for (int j = 0; j < T.n; j++) {
                task_functions(E, &T, declared, j);
                task_functions(V, &T, declared, j);
            }
            write_variants(k, sf, &sbuf, vf, &vbuf);
            tasks[ki] = 1;
        }
        fprintf(k, "\n/* %s */\nstatic %s%svoid %s_k%d(", kr->name,
                p->target && p->target->kernel_noinline ? "KN_KERNEL " : "",
                regtile ? "KN_REGTILE " : "", N, ki);
        int np = 0;
        for (int i = 0; i < p->nbufs; i++)
            if (use[i]) {
                if (np++) fprintf(k, ", ");
                emit_param(k, p->bufs[i], use[i] & 2, restr[i]);
            }
        if (T.n) fprintf(k, "%s%s_par_for kn_pf, void *kn_pu", np++ ? ", " : "", N);
        fprintf(k, "%s) {\n", np ? "" : "void");
        rewind(sf);
        rewind(vf);
        kn_cprint_stmt(E, kr->body, 4);
        kn_cprint_stmt(V, kr->body, 4);
        write_variants(k, sf, &sbuf, vf, &vbuf);
        fprintf(k, "}\n");
    }
    fclose(sf);
    fclose(vf);
    free(sbuf);
    free(vbuf);
    free(restr);
    free(use);
    free(T.use);
    free(T.inner);
    free(T.used);
    free(declared);
    return any_regtile;
}

/* The arena parameters of NAME_run: `void *arena`, or with --memory one per region,
 * `void *arena_fast, void *arena_slow`. */
static void arena_params(FILE *f, const kn_kprog *p) {
    if (!p->nregions) fprintf(f, "void *arena");
    for (int r = 0; r < p->nregions; r++)
        fprintf(f, "%svoid *arena_%s", r ? ", " : "", p->region_name[r]);
}

/* The arena (region) expression a buffer's storage is addressed from in NAME_run. */
static void arena_base(FILE *f, const kn_kprog *p, const kn_kbuf *b) {
    if (p->nregions)
        fprintf(f, "(unsigned char *)arena_%s", p->region_name[kn_kbuf_storage(b)->region]);
    else
        fprintf(f, "a");
}

/* NAME_run's parameters: the inputs, the outputs, the weights (--weights-file), the
 * arena(s). */
static void run_params(FILE *f, const kn_kprog *p, const kn_c_options *opt) {
    for (int i = 0; i < p->nin; i++) {
        emit_param(f, p->inputs[i], false, false);
        fprintf(f, ", ");
    }
    for (int i = 0; i < p->nout; i++) {
        emit_param(f, p->outputs[i], true, false);
        fprintf(f, ", ");
    }
    fprintf(f, "%s", opt->weights_file ? "const void *weights, " : "");
    arena_params(f, p);
}

/* Their names, as the arguments of a call. */
static void run_args(FILE *f, const kn_kprog *p, const kn_c_options *opt) {
    for (int i = 0; i < p->nin; i++) fprintf(f, "%s, ", p->inputs[i]->name);
    for (int i = 0; i < p->nout; i++) fprintf(f, "%s, ", p->outputs[i]->name);
    fprintf(f, "%s", opt->weights_file ? "weights, " : "");
    if (!p->nregions) fprintf(f, "arena");
    for (int r = 0; r < p->nregions; r++)
        fprintf(f, "%sarena_%s", r ? ", " : "", p->region_name[r]);
}

/* NAME_run_array's arguments of NAME_run (or NAME_run_parallel). */
static void array_args(FILE *k, const kn_kprog *p, const kn_c_options *opt) {
    char pt[64];
    for (int i = 0; i < p->nin; i++)
        fprintf(k, "(%s)inputs[%d], ", param_type(p->inputs[i], false, pt, sizeof pt), i);
    for (int i = 0; i < p->nout; i++)
        fprintf(k, "(%s)outputs[%d], ", param_type(p->outputs[i], true, pt, sizeof pt), i);
    fprintf(k, "%s", opt->weights_file ? "weights, " : "");
    if (!p->nregions) fprintf(k, "arena");
    for (int r = 0; r < p->nregions; r++) fprintf(k, "%sarenas[%d]", r ? ", " : "", r);
}

kn_status kn_emit_c(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt, FILE *h, FILE *c,
                    FILE *weights) {
    (void)cx;
    const char *N = p->name;
    kn_c_options none = {0};
    if (!opt) opt = &none;
    /* weights layout (weights-file mode): 64-byte aligned offsets in buffer order */
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff);
    KN_ASSERT(woff);
    size_t wsize = kn_kprog_weight_layout(p, woff);

    /* header */
    fprintf(h, "/* Generated by kiln from model '%s'. Do not edit. */\n", N);
    fprintf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n", N, N);
    fprintf(h, "/* Bytes of scratch memory %s_run needs, and its required alignment. */\n", N);
    fprintf(h, "#define %s_ARENA_SIZE %zu\n#define %s_ARENA_ALIGN %d\n", N, p->arena_size, N,
            KN_ARENA_ALIGN);
    if (p->nregions) {
        fprintf(h,
                "/* --memory: the arena is %d regions, fastest first, each its own block of\n"
                " * memory (%s_ARENA_SIZE is their sum), each aligned to %s_ARENA_ALIGN:\n"
                " * %s_ARENA_<region>_SIZE bytes (and its lower bound, the most bytes live at\n"
                " * once in it), %s_REGION_k_NAME the k-th one's name. */\n"
                "#define %s_NUM_REGIONS %d\n",
                p->nregions, N, N, N, N, N, p->nregions);
        for (int r = 0; r < p->nregions; r++)
            fprintf(h,
                    "#define %s_ARENA_%s_SIZE %zu\n#define %s_ARENA_%s_LOWER_BOUND %zu\n"
                    "#define %s_REGION_%d_NAME \"%s\"\n",
                    N, p->region_name[r], p->region_size[r], N, p->region_name[r],
                    p->region_lower_bound[r], N, r, p->region_name[r]);
    }
    size_t wraw = kn_kprog_weight_bytes(p); /* without alignment padding */
    fprintf(h, "/* Bytes of weights: in %s.c as static const arrays, or in %s.weights. */\n", N, N);
    fprintf(h, "#define %s_WEIGHTS_SIZE %zu\n", N, opt->weights_file ? wsize : wraw);
    fprintf(h, "\n#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", N, p->nin, N, p->nout);
    kn_emit_c_groups(h, p);
    for (int io = 0; io < 2; io++) {
        int cnt = io ? p->nout : p->nin;
        for (int i = 0; i < cnt; i++) {
            const kn_kbuf *b = io ? p->outputs[i] : p->inputs[i];
            const char *IO = io ? "OUTPUT" : "INPUT";
            fprintf(h, "#define %s_%s_%d_NAME \"", N, IO, i);
            for (const char *s = b->onnx; *s; s++)
                fprintf(h, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
            fprintf(h, "\"\n#define %s_%s_%d_DTYPE \"%s\"\n", N, IO, i, kn_dtype_name(b->dtype));
            fprintf(h, "#define %s_%s_%d_RANK %d\n#define %s_%s_%d_DIMS {", N, IO, i, b->rank, N,
                    IO, i);
            for (int d = 0; d < b->rank; d++)
                fprintf(h, "%s%lld", d ? ", " : "", (long long)b->dims[d]);
            fprintf(h, "%s}\n#define %s_%s_%d_SIZE %lld\n", b->rank ? "" : "1", N, IO, i,
                    (long long)b->numel);
            if (p->io_in_arena) fprintf(h, "#define %s_%s_%d_OFFSET %zu\n", N, IO, i, b->offset);
            if (p->io_in_arena && p->nregions)
                fprintf(h, "#define %s_%s_%d_REGION %d /* %s */\n", N, IO, i, b->region,
                        p->region_name[b->region]);
        }
    }
    if (p->io_in_arena)
        fprintf(h,
                "/* --arena-in-place-io: each input and output lives in the arena, _OFFSET\n"
                " * bytes from its start. Write the inputs there, pass pointers to them\n"
                " * ((T *)((unsigned char *)arena + %s_INPUT_0_OFFSET), ...), and read the\n"
                " * outputs from theirs after the call; %s_run returns 5 for any other\n"
                " * pointer. The other bytes of the arena are overwritten.%s */\n",
                N, N,
                p->nregions ? "\n * With --memory, the offset is in region _REGION (0: the first)."
                            : "");
    fprintf(h, "\n/* Runs the model: one pointer per input, then one per output (element types\n"
               " * as the _DTYPE macros say; f16, bf16 as uint16_t bit patterns, bool as uint8_t,\n"
               " * float8 as uint8_t codes, i4/u4 as int8_t/uint8_t (one element a byte),\n"
               " * string as const char * to NUL-terminated UTF-8: outputs receive pointers that\n"
               " * stay valid until the next call with the same arena),\n");
    if (opt->weights_file)
        fprintf(h, " * the contents of %s.weights (%s_WEIGHTS_SIZE bytes, 64-byte aligned),\n", N,
                N);
    if (p->nregions)
        fprintf(h,
                " * and one arena per region, fastest first: arena_R, %s_ARENA_R_SIZE bytes\n"
                " * aligned to %s_ARENA_ALIGN (any pointer, NULL too, for a region of 0 bytes),\n"
                " * owned by the caller, used only during the call. Reentrant: no global\n"
                " * state, so threads may run at once with separate arenas. Returns 0, 1 if an\n"
                " * arena is misaligned, or 2 if a string did not fit its storage\n"
                " * (--max-string-bytes). */\n"
                "int %s_run(",
                N, N, N);
    else
        fprintf(h,
                " * and arena: %s_ARENA_SIZE bytes aligned to %s_ARENA_ALIGN, owned by the\n"
                " * caller, used only during the call. Reentrant: no global state, so threads\n"
                " * may run at once with separate arenas. Returns 0, 1 if the arena is\n"
                " * misaligned, or 2 if a string did not fit its storage (--max-string-bytes). "
                "*/\n"
                "int %s_run(",
                N, N, N);
    run_params(h, p, opt);
    fprintf(h, ");\n");
    const char *arr = p->nregions ? "void *const *arenas" : "void *arena";
    fprintf(h,
            "/* The same with arrays of pointers, for generic callers (weights may be NULL\n"
            " * unless the model was compiled with --weights-file%s). */\n"
            "int %s_run_array(const void *const *inputs, void *const *outputs, "
            "const void *weights, %s);\n",
            p->nregions ? "; arenas: one pointer per region, fastest first" : "", N, arr);
    if (opt->threads > 1) {
        fprintf(h,
                "\n/* --threads %d: %s_run_parallel runs the parallel loops of the kernels as\n"
                " * tasks through the caller's par_for, which must run task(ctx, t, thread) for\n"
                " * every t in [0, ntasks), each once, on any threads, and return when all have\n"
                " * returned. thread is the index of the thread running it, 0 to\n"
                " * %s_MAX_THREADS - 1, and no two calls running at once have the same one\n"
                " * (each thread has its own copy of the kernels' scratch in the arena). Its\n"
                " * results are the same as %s_run's, bit for bit, however the tasks run.\n"
                " * par_for NULL runs the loops on the calling thread. */\n"
                "#define %s_MAX_THREADS %d\n"
                "typedef void (*%s_task)(void *ctx, int t, int thread);\n"
                "typedef void (*%s_par_for)(void *user, int ntasks, %s_task task, void *ctx);\n"
                "int %s_run_parallel(",
                opt->threads, N, N, N, N, opt->threads, N, N, N, N);
        run_params(h, p, opt);
        fprintf(h,
                ", %s_par_for par_for, void *user);\n"
                "int %s_run_array_parallel(const void *const *inputs, void *const *outputs, "
                "const void *weights, %s, %s_par_for par_for, void *user);\n",
                N, N, arr, N);
    }
    fprintf(h, "\n#endif\n");

    if (!c) { /* header only: the code comes from another backend (an object file) */
        free(woff);
        return KN_OK;
    }
    /* source: helpers are known only after printing the kernels, so kernels go to a
     * buffer first */
    char *kbuf = NULL;
    size_t klen = 0;
    FILE *k = open_memstream(&kbuf, &klen);
    KN_ASSERT(k);
    kn_cprint E, V;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1),
                  *tasks = calloc((size_t)p->nkernels + 1, 1);
    KN_ASSERT(use && tasks);
    bool any_regtile = print_kernels(cx, p, opt, NULL, &E, &V, k, tasks);
    /* the entry point (with --threads, NAME_run_tasks under NAME_run and NAME_run_parallel) */
    bool par = opt->threads > 1;
    fprintf(k, par ? "\nstatic int %s_run_tasks(" : "\nint %s_run(", N);
    run_params(k, p, opt);
    if (par) fprintf(k, ", %s_par_for kn_pf, void *kn_pu", N);
    fprintf(k, ") {\n");
    if (par) fprintf(k, "    (void)kn_pf;\n    (void)kn_pu;\n");
    if (p->nregions) {
        for (int r = 0; r < p->nregions; r++)
            fprintf(k, "    if ((uintptr_t)arena_%s %% %d != 0) return 1;\n", p->region_name[r],
                    KN_ARENA_ALIGN);
    } else {
        fprintf(k, "    unsigned char *a = (unsigned char *)arena;\n");
        fprintf(k, "    if ((uintptr_t)arena %% %d != 0) return 1;\n", KN_ARENA_ALIGN);
    }
    if (p->io_in_arena) /* each input and output at its planned place */
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if ((b->kind == KB_INPUT || b->kind == KB_OUTPUT) && b->first >= 0) {
                fprintf(k, "    if ((const void *)%s != (const void *)(", b->name);
                arena_base(k, p, b);
                fprintf(k, " + %zu)) return 5;\n", b->offset);
            }
        }
    /* the buffers some kernel takes: a temporary whose kernels were all emptied (a copy
       that runs in place of its source) keeps a lifetime but no reader */
    unsigned char *taken = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(taken);
    for (int ki = 0; ki < p->nkernels; ki++) kn_kernel_uses(p->kernels[ki]->body, taken);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if ((b->kind == KB_TEMP || b->kind == KB_SCRATCH) &&
            (b->first < 0 || (!taken[i] && b != p->status))) {
            continue; /* touched by no kernel (a pass moved its work elsewhere) */
        } else if (b->kind == KB_TEMP || b->kind == KB_SCRATCH) {
            const kn_kbuf *r = kn_kbuf_storage(b);
            fprintf(k, "    %s *%s = (%s *)(void *)(", ctype(b->dtype), b->name, ctype(b->dtype));
            arena_base(k, p, r);
            fprintf(k, " + %zu);\n", kn_kbuf_arena_offset(b));
        } else if (kn_kbuf_is_weight(b) && opt->weights_file) {
            fprintf(k,
                    "    const %s *%s = (const %s *)(const void *)((const unsigned char *)weights "
                    "+ %zu);\n",
                    ctype(b->dtype), b->name, ctype(b->dtype), woff[i]);
        }
    }
    free(taken);
    if (p->status) fprintf(k, "    %s[0] = 0;\n", p->status->name);
    if (p->nregions)
        for (int r = 0; r < p->nregions; r++)
            fprintf(k, "    (void)arena_%s;\n", p->region_name[r]);
    else
        fprintf(k, "    (void)a;\n");
    for (int i = 0; i < p->nbufs; i++) { /* unread: EyeLike's input, an empty output */
        const kn_kbuf *b = p->bufs[i];
        if ((b->kind == KB_INPUT || b->kind == KB_OUTPUT) && b->first < 0)
            fprintf(k, "    (void)%s;\n", b->name);
    }
    for (int ki = 0; ki < p->nkernels; ki++) {
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[ki]->body, use);
        if (opt->profile)
            fprintf(k, "    if (%s_profile_hook) %s_profile_hook(%s_profile_user, %d, 0);\n", N, N,
                    N, ki);
        fprintf(k, "    %s_k%d(", N, ki);
        int np = 0;
        for (int i = 0; i < p->nbufs; i++)
            if (use[i]) {
                bool inl = p->bufs[i]->kind == KB_CONST && !opt->weights_file;
                fprintf(k, "%s%s%s%s%s", np++ ? ", " : "", inl ? N : "", inl ? "_" : "",
                        p->bufs[i]->name, inl && p->bufs[i]->dtype == KN_F32 ? ".f" : "");
            }
        fprintf(k, "%s);\n", tasks[ki] ? np ? ", kn_pf, kn_pu" : "kn_pf, kn_pu" : "");
        if (opt->profile)
            fprintf(k, "    if (%s_profile_hook) %s_profile_hook(%s_profile_user, %d, 1);\n", N, N,
                    N, ki);
    }
    if (p->status) fprintf(k, "    return %s[0];\n", p->status->name);
    fprintf(k, "%s}\n", p->status ? "" : "    return 0;\n");
    for (int pf = 0; par && pf < 2; pf++) { /* NAME_run and NAME_run_parallel */
        fprintf(k, "\nint %s_run%s(", N, pf ? "_parallel" : "");
        run_params(k, p, opt);
        if (pf) fprintf(k, ", %s_par_for par_for, void *user", N);
        fprintf(k, ") {\n    return %s_run_tasks(", N);
        run_args(k, p, opt);
        fprintf(k, pf ? ", par_for, user);\n}\n" : ", NULL, NULL);\n}\n");
    }
    for (int pf = 0; pf < 1 + par; pf++) {
        fprintf(k,
                "\nint %s_run_array%s(const void *const *inputs, void *const *outputs, "
                "const void *weights, %s%s%s%s) {\n",
                N, pf ? "_parallel" : "", p->nregions ? "void *const *arenas" : "void *arena",
                pf ? ", " : "", pf ? N : "", pf ? "_par_for par_for, void *user" : "");
        if (!opt->weights_file) fprintf(k, "    (void)weights;\n");
        if (!p->nin) fprintf(k, "    (void)inputs;\n");
        fprintf(k, "    return %s_run%s(", N, pf ? "_parallel" : "");
        array_args(k, p, opt);
        fprintf(k, pf ? ", par_for, user);\n}\n" : ");\n}\n");
    }
    fclose(k);

    fprintf(c,
            "/* Generated by kiln from model '%s'. Do not edit.\n * Kernels in execution order, "
            "then %s_run. C99; no allocation, no mutable globals. */\n",
            N, N);
    if (kn_cprint_uses_regex(&E) || kn_cprint_uses_regex(&V)) kn_cprint_posix_prelude(c);
    fprintf(c,
            "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
            "#include \"%s.h\"\n\n",
            N);
    /* Clang contracts a*b + c by default (GCC in its GNU modes): the kernel IR says
     * where a multiply-add is fused (KN_FMAF) */
    fprintf(c, "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n");
    kn_cprint_vector_prelude(&E, &V, p->target && p->target->fma, c);
    /* split-word integer tiles (passes/tile.c, kn_sched.split): GCC's scheduling before
     * register allocation moves all of a step's weight loads ahead of the SMLADs, which
     * keeps them live at once and spills accumulators on Arm's 16 general registers
     * (DS-CNN int8 on the M4, 2 x 4 tiles: 7.74 M instructions scheduled, 6.67 M not);
     * every s16x2 tile on a microcontroller (split 1, 2 or 3): the FC autoencoder's
     * matrix-vector tiles interleaved four requantizations into spills (0.618 M
     * scheduled, 0.546 M not) */
    if (any_regtile)
        fprintf(c, "#if defined(__GNUC__) && !defined(__clang__) && defined(__arm__)\n"
                   "#define KN_REGTILE __attribute__((optimize(\"no-schedule-insns\")))\n"
                   "#else\n#define KN_REGTILE\n#endif\n");
    if (opt->threads > 1) /* task_functions */
        fprintf(c, "#if defined(__GNUC__)\n"
                   "#define KN_TASK_BODY static inline __attribute__((always_inline))\n"
                   "#else\n#define KN_TASK_BODY static\n#endif\n");
    /* the target's kernels as functions of their own (kn_target.kernel_noinline) */
    if (p->target && p->target->kernel_noinline)
        fprintf(c, "#if defined(__GNUC__)\n#define KN_KERNEL __attribute__((noinline))\n"
                   "#else\n#define KN_KERNEL\n#endif\n");
    if (opt->weights_section)
        fprintf(
            c,
            "#if defined(__GNUC__)\n#define KN_WEIGHTS_SECTION __attribute__((section(\"%s\")))\n"
            "#else\n#define KN_WEIGHTS_SECTION\n#endif\n",
            opt->weights_section);
    if (!opt->weights_file) {
        kn_cprint W;
        kn_cprint_init(&W, p, c, KN_C99);
        for (int i = 0; i < p->nbufs; i++)
            if (kn_kbuf_is_weight(p->bufs[i])) {
                emit_weight_array(&W, p->bufs[i], opt->weights_section, N);
                kn_event_emit(cx, &(kn_event){.kind = KN_EVENT_WRITE,
                                              .name = "weights",
                                              .size = (long long)ftell(c)});
            }
    }
    if (opt->weights_file && weights) {
        static const unsigned char zero[64];
        size_t at = 0;
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if (!kn_kbuf_is_weight(b)) continue;
            fwrite(zero, 1, woff[i] - at, weights);
            fwrite(b->data->data, 1, kn_kbuf_bytes(b), weights);
            at = woff[i] + kn_kbuf_bytes(b);
        }
        fwrite(zero, 1, wsize - at, weights);
    }
    emit_helpers(&E, &V, c);
    if (opt->profile)
        fprintf(c,
                "\n/* Profiling build (kiln bench --profile): called around each kernel. */\n"
                "void (*%s_profile_hook)(void *, int, int);\nvoid *%s_profile_user;\n",
                N, N);
    fwrite(kbuf, 1, klen, c);
    free(kbuf);
    free(use);
    free(tasks);
    free(woff);
    return KN_OK;
}

void kn_emit_c_host_kernels(kn_ctx *cx, const kn_kprog *p, const unsigned char *which,
                            bool exported, FILE *c) {
    const char *N = p->name;
    kn_c_options opt = {0};
    char *kbuf = NULL;
    size_t klen = 0;
    FILE *k = open_memstream(&kbuf, &klen);
    KN_ASSERT(k);
    kn_cprint E, V;
    bool any_regtile = print_kernels(cx, p, &opt, which, &E, &V, k, NULL);
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff);
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(woff && use);
    kn_kprog_weight_layout(p, woff);
    char pt[64];
    for (int ki = 0; ki < p->nkernels; ki++) {
        if (!which[ki]) continue;
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[ki]->body, use);
        fprintf(k,
                "\n%svoid %s_h%d(void *arena, const void *weights, void *const *io) {\n"
                "    unsigned char *a = (unsigned char *)arena;\n"
                "    const unsigned char *w = (const unsigned char *)weights;\n"
                "    (void)a;\n    (void)w;\n    (void)io;\n    %s_k%d(",
                exported ? "" : "static ", N, ki, N, ki);
        int np = 0;
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if (!use[i]) continue;
            if (np++) fprintf(k, ", ");
            param_type(b, use[i] & 2, pt, sizeof pt);
            if (b == p->status)
                fprintf(k, "(int32_t *)io[%d]", p->nin + p->nout);
            else if (b->kind == KB_INPUT || b->kind == KB_OUTPUT)
                fprintf(k, "(%s)io[%d]", pt, b->kind == KB_INPUT ? b->io : p->nin + b->io);
            else if (b->kind == KB_CONST)
                fprintf(k, "(%s)(const void *)(w + %zu)", pt, woff[i]);
            else
                fprintf(k, "(%s)(void *)(a + %zu)", pt, kn_kbuf_arena_offset(b));
        }
        fprintf(k, ");\n}\n");
    }
    fclose(k);
    if (kn_cprint_uses_regex(&E) || kn_cprint_uses_regex(&V)) kn_cprint_posix_prelude(c);
    fprintf(c,
            "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n");
    fprintf(c, "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n");
    kn_cprint_vector_prelude(&E, &V, p->target && p->target->fma, c);
    if (any_regtile) fprintf(c, "#define KN_REGTILE\n");
    emit_helpers(&E, &V, c);
    fwrite(kbuf, 1, klen, c);
    free(kbuf);
    free(use);
    free(woff);
}

kn_status kn_emit_c_files(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt, const char *dir) {
    static const char *const ext[3] = {".h", ".c", ".weights"};
    int nf = opt && opt->header_only ? 1 : opt && opt->weights_file ? 3 : 2;
    kn_outfiles o;
    kn_status st = kn_outfiles_open(cx, &o, dir, p->name, ext, nf);
    if (st) return st;
    st = kn_emit_c(cx, p, opt, o.f[0], o.f[1], o.f[2]);
    return kn_outfiles_finish(cx, &o, st);
}
