/* OpenCL C from kernel IR. One __kernel per kernel-IR kernel, its body printed by
 * the shared C-family printer (codegen/c/cprint.c) in the OpenCL dialect.
 *
 * Parameters: (__global uchar *kn_arena, __global const uchar *kn_weights, then the
 * graph inputs and outputs the kernel touches in buffer order, then the trailing
 * __local uchar * every Halide launch appends). Temporaries and weights are
 * pointers into the arena and weight blobs at their planned offsets.
 *
 * Work-items: when a kernel's body is one loop nest whose loops the parallel-loop
 * analysis marked independent (passes/parallel.c), those loops (up to three)
 * become NDRange dimensions, the innermost as dimension 0; anything else runs as a
 * single work-item. Global sizes are rounded up to the work-group size, so each
 * mapped loop keeps its bound as a guard. */
#include "codegen/opencl/emit_opencl.h"
#include "codegen/c/cprint.h"
#include "codegen/c/emit_c.h"

#include <stdlib.h>
#include <string.h>

/* The perfect nest of parallel loops at the head of kernel k, innermost first. */
static int gid_loops(const kn_kernel *k, const kn_ks **out) {
    const kn_ks *body = k->body;
    const kn_ks *found[3];
    int n = 0;
    if (body->n != 1) return 0;
    const kn_ks *s = body->body[0];
    while (s->kind == KS_FOR && n < 3) {
        if (s->annot & KN_LOOP_PARALLEL)
            found[n++] = s;
        else if (s->extent != 1 || s->ext)
            break; /* a real sequential loop ends the nest */
        if (s->body[0]->n != 1) break;
        s = s->body[0]->body[0];
    }
    for (int i = 0; i < n; i++) out[i] = found[n - 1 - i];
    return n;
}

void kn_opencl_plan(const kn_kprog *p, int k, kn_opencl_kernel_plan *plan) {
    memset(plan, 0, sizeof *plan);
    const kn_ks *g[3];
    plan->ndims = gid_loops(p->kernels[k], g);
    for (int d = 0; d < 3; d++) plan->global[d] = plan->local[d] = 1;
    for (int d = 0; d < plan->ndims; d++) plan->global[d] = (int)g[d]->extent;
    /* the work-group passes/parallel.c chose from the target (it marks the loops mapped
     * here, so a kernel with NDRange dimensions has one; 1 otherwise) */
    int wg = p->kernels[k]->sched.wg > 0 ? p->kernels[k]->sched.wg : 1;
    if (plan->ndims) plan->local[0] = plan->global[0] < wg ? plan->global[0] : wg;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(p->kernels[k]->body, use);
    for (int i = 0; i < p->nbufs && plan->nio < KN_OPENCL_MAX_IO; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (use[i] && (b->kind == KB_INPUT || b->kind == KB_OUTPUT || b == p->status))
            plan->io[plan->nio++] = b;
    }
    free(use);
}

/* A statement that does nothing: a block of such statements, or a loop around one. */
static bool stmt_empty(const kn_ks *s) {
    if (s->kind == KS_FOR) return stmt_empty(s->body[0]);
    if (s->kind != KS_BLOCK) return false;
    for (int i = 0; i < s->n; i++)
        if (!stmt_empty(s->body[i])) return false;
    return true;
}

bool kn_opencl_empty(const kn_kprog *p, int k) {
    return stmt_empty(p->kernels[k]->body);
}

bool kn_opencl_on_host(const kn_kprog *p, int k) {
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(p->kernels[k]->body, use);
    bool host = false;
    for (int i = 0; i < p->nbufs && !host; i++) host = use[i] && p->bufs[i]->dtype == KN_STRING;
    free(use);
    return host;
}

/* The unit (kn_opencl_step) buffer b lives in, or -1 (weights: on both sides, constant). */
static int unit_of(const kn_kprog *p, const kn_kbuf *b) {
    if (b == p->status) return p->nin + p->nout;
    if (b->kind == KB_INPUT) return b->io;
    if (b->kind == KB_OUTPUT) return p->nin + b->io;
    if (b->kind == KB_TEMP || b->kind == KB_SCRATCH) return p->nin + p->nout + 1;
    return -1;
}

/* An empty graph input or output: nothing to copy (its device buffer is a 1-element
 * placeholder). */
static bool unit_empty(const kn_kprog *p, int u) {
    if (u < p->nin) return p->inputs[u]->numel == 0;
    if (u < p->nin + p->nout) return p->outputs[u - p->nin]->numel == 0;
    return u == p->nin + p->nout + 1 && !p->arena_size;
}

kn_opencl_step *kn_opencl_schedule(const kn_kprog *p, int *n) {
    enum { ON_HOST = 1, ON_DEV = 2 };
    int nu = p->nin + p->nout + 2;
    /* the first uploads; a kernel, a copy of each unit before it; the final downloads */
    kn_opencl_step *s = calloc((size_t)(p->nkernels * (nu + 1) + 2 * nu), sizeof *s);
    unsigned char *at = calloc((size_t)nu, 1), *use = calloc((size_t)p->nbufs + 1, 1),
                  *uu = calloc((size_t)nu, 1);
    KN_ASSERT(s && at && use && uu);
    int ns = 0;
    for (int i = 0; i < p->nin; i++) at[i] = ON_HOST;
    at[p->nin + p->nout] = ON_HOST | ON_DEV; /* zeroed on both before the first kernel */
    /* inputs never change: the ones device kernels read go up first, before any launch
     * (an upload blocks until the queue drains) */
    for (int k = 0; k < p->nkernels; k++) {
        if (kn_opencl_on_host(p, k)) continue;
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(p->kernels[k]->body, use);
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if (use[i] && b->kind == KB_INPUT && at[b->io] == ON_HOST && b->numel) {
                s[ns++] = (kn_opencl_step){KN_OCL_UPLOAD, b->io};
                at[b->io] |= ON_DEV;
            }
        }
    }
    for (int k = 0; k < p->nkernels; k++) {
        if (kn_opencl_empty(p, k)) continue; /* a Reshape the plan aliased: no launch */
        bool host = kn_opencl_on_host(p, k);
        unsigned char side = host ? ON_HOST : ON_DEV;
        memset(use, 0, (size_t)p->nbufs);
        memset(uu, 0, (size_t)nu);
        kn_kernel_uses(p->kernels[k]->body, use);
        for (int i = 0; i < p->nbufs; i++) {
            int u = use[i] ? unit_of(p, p->bufs[i]) : -1;
            if (u >= 0) uu[u] |= use[i];
        }
        /* a kernel may write part of a unit: the rest must be current on its side too */
        for (int u = 0; u < nu; u++)
            if (uu[u] && at[u] && !(at[u] & side) && !unit_empty(p, u)) {
                s[ns++] = (kn_opencl_step){host ? KN_OCL_DOWNLOAD : KN_OCL_UPLOAD, u};
                at[u] |= side;
            }
        s[ns++] = (kn_opencl_step){host ? KN_OCL_HOST : KN_OCL_DEVICE, k};
        for (int u = 0; u < nu; u++)
            if (uu[u] & 2) at[u] = side;
    }
    for (int u = p->nin; u <= p->nin + p->nout; u++)
        if (at[u] == ON_DEV && !unit_empty(p, u)) s[ns++] = (kn_opencl_step){KN_OCL_DOWNLOAD, u};
    free(at);
    free(use);
    free(uu);
    *n = ns;
    return s;
}

kn_status kn_emit_opencl(kn_ctx *cx, const kn_kprog *p, char **src, size_t *len) {
    if (p->nregions) /* one device arena */
        return kn_diag(cx, NULL, KN_EINVAL,
                       "--memory (several arena regions) is for the C backend only, not OpenCL");
    char *kbuf = NULL;
    size_t klen = 0;
    FILE *k = open_memstream(&kbuf, &klen);
    KN_ASSERT(k);
    kn_cprint P;
    kn_cprint_init(&P, p, k, KN_OPENCL);
    P.vec_ext = true; /* f32 vectors as floatN */
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff);
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(woff && use);
    kn_kprog_weight_layout(p, woff);
    for (int ki = 0; ki < p->nkernels; ki++) {
        const kn_kernel *kr = p->kernels[ki];
        if (kn_opencl_on_host(p, ki)) continue; /* the host code runs it */
        if (kn_opencl_empty(p, ki)) continue;   /* never launched (kn_opencl_schedule) */
        kn_opencl_kernel_plan plan;
        kn_opencl_plan(p, ki, &plan);
        if (plan.nio == KN_OPENCL_MAX_IO) {
            fclose(k);
            free(kbuf);
            free(woff);
            free(use);
            return kn_diag(cx, kr->node, KN_ELIMIT,
                           "too many graph inputs and outputs in one kernel");
        }
        const kn_ks *g[3];
        P.ngid = gid_loops(kr, g);
        for (int d = 0; d < P.ngid; d++) P.gid[d] = g[d];
        memset(use, 0, (size_t)p->nbufs);
        kn_kernel_uses(kr->body, use);
        for (int i = 0; i < p->nbufs; i++) /* work-items have no thread index */
            if (use[i] && p->bufs[i]->per_thread) {
                fclose(k);
                free(kbuf);
                free(woff);
                free(use);
                return kn_diag(cx, kr->node, KN_EUNSUPPORTED,
                               "per-thread scratch %s in a device kernel: OpenCL keeps shared "
                               "scratch (passes build per-thread scratch for CPU targets only)",
                               p->bufs[i]->name);
            }
        fprintf(k,
                "\n/* %s */\n__kernel void %s_k%d(__global uchar *kn_arena, "
                "__global const uchar *kn_weights",
                kr->name, p->name, ki);
        for (int i = 0; i < plan.nio; i++) {
            const kn_kbuf *b = plan.io[i];
            fprintf(k, ", __global %s%s *%s", use[b->id] & 2 ? "" : "const ",
                    kn_cprint_ctype(&P, b->dtype), b->name);
        }
        fprintf(k, ", __local uchar *kn_local) {\n");
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if (!use[i] || b == p->status) continue; /* the status word is a parameter */
            const char *t = kn_cprint_ctype(&P, b->dtype);
            if (b->kind == KB_TEMP || b->kind == KB_SCRATCH)
                fprintf(k, "    __global %s *%s = (__global %s *)(kn_arena + %zu);\n", t, b->name,
                        t, kn_kbuf_arena_offset(b));
            else if (b->kind == KB_CONST)
                fprintf(k, "    __global const %s *%s = (__global const %s *)(kn_weights + %zu);\n",
                        t, b->name, t, woff[i]);
        }
        fprintf(k, "    (void)kn_arena;\n    (void)kn_weights;\n    (void)kn_local;\n");
        kn_cprint_stmt(&P, kr->body, 4);
        fprintf(k, "}\n");
    }
    fclose(k);
    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    KN_ASSERT(f);
    fprintf(f, "/* Generated by kiln from model '%s'. Do not edit. OpenCL C 1.2. */\n", p->name);
    /* OpenCL C may contract a*b + c by default: the kernel IR says where a multiply-add
     * is fused (fma), as in the C and LLVM backends */
    fprintf(f, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF\n");
    kn_cprint_helpers(&P, f);
    kn_cprint_ocl_vectors(&P, f);
    fwrite(kbuf, 1, klen, f);
    fclose(f);
    free(kbuf);
    free(woff);
    free(use);
    *src = out;
    *len = olen;
    return KN_OK;
}

/* ---- host code (kiln compile --emit opencl) ---- */

/* The parameter type of a graph input or output in NAME_run, ending in " *" or "*":
 * `const float *` / `float *`; strings as the generated C takes them,
 * `const char *const *` / `const char **`. */
static const char *io_type(const kn_kbuf *b, bool output, char buf[64]) {
    if (b->dtype == KN_STRING)
        snprintf(buf, 64, "%s", output ? "const char **" : "const char *const *");
    else
        snprintf(buf, 64, "%s%s *", output ? "" : "const ", kn_ctype_c99(b->dtype));
    return buf;
}

static void io_macros(FILE *h, const kn_kprog *p) {
    const char *N = p->name;
    fprintf(h, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", N, p->nin, N, p->nout);
    kn_emit_c_groups(h, p);
    for (int io = 0; io < 2; io++)
        for (int i = 0; i < (io ? p->nout : p->nin); i++) {
            const kn_kbuf *b = io ? p->outputs[i] : p->inputs[i];
            const char *IO = io ? "OUTPUT" : "INPUT";
            fprintf(h, "#define %s_%s_%d_NAME \"", N, IO, i);
            for (const char *s = b->onnx; *s; s++)
                fprintf(h, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
            fprintf(h, "\"\n#define %s_%s_%d_DTYPE \"%s\"\n#define %s_%s_%d_RANK %d\n", N, IO, i,
                    kn_dtype_name(b->dtype), N, IO, i, b->rank);
            fprintf(h, "#define %s_%s_%d_DIMS {", N, IO, i);
            for (int d = 0; d < b->rank; d++)
                fprintf(h, "%s%lld", d ? ", " : "", (long long)b->dims[d]);
            fprintf(h, "%s}\n#define %s_%s_%d_SIZE %lld\n", b->rank ? "" : "1", N, IO, i,
                    (long long)b->numel);
        }
}

/* A C array of bytes printed as it is fed: "static const unsigned char NAME[n] = {",
 * then the bytes 16 a line, from byte_array_put calls in order (no copy of the whole
 * array: a model's weights come straight from its buffers, in chunks), then "};". */
typedef struct bytes_out {
    FILE *f;
    size_t at; /* bytes printed */
} bytes_out;

static void byte_array_begin(bytes_out *a, FILE *c, const char *name, size_t n) {
    *a = (bytes_out){c, 0};
    fprintf(c, "static const unsigned char %s[%zu] = {", name, n ? n : 1);
    if (!n) fprintf(c, "0");
}

/* Prints n bytes of data (NULL: n zeros). Each byte is "\n    " (the first of a line of
 * 16) or " ", then its decimal value and ",": at most 10 characters. */
static void byte_array_put(bytes_out *a, const unsigned char *data, size_t n) {
    enum { CHUNK = 4096 };
    char buf[CHUNK * 10];
    while (n) {
        size_t m = n < CHUNK ? n : CHUNK, len = 0;
        for (size_t i = 0; i < m; i++, a->at++) {
            if (a->at % 16) {
                buf[len++] = ' ';
            } else {
                memcpy(buf + len, "\n    ", 5);
                len += 5;
            }
            unsigned v = data ? data[i] : 0;
            if (v >= 100) buf[len++] = (char)('0' + v / 100);
            if (v >= 10) buf[len++] = (char)('0' + v / 10 % 10);
            buf[len++] = (char)('0' + v % 10);
            buf[len++] = ',';
        }
        fwrite(buf, 1, len, a->f);
        if (data) data += m;
        n -= m;
    }
}

static void byte_array_end(bytes_out *a) {
    fprintf(a->f, "\n};\n");
}

static void byte_array(FILE *c, const char *name, const unsigned char *data, size_t n) {
    bytes_out a;
    byte_array_begin(&a, c, name, n);
    byte_array_put(&a, data, n);
    byte_array_end(&a);
}

/* The weights blob (kn_kprog_weight_layout: each weight at its aligned offset, zeros
 * between) as NAME[], printed from the buffers' own data. */
void kn_emit_opencl_weights(FILE *c, const kn_kprog *p, const char *name) {
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff);
    KN_ASSERT(woff);
    size_t wsize = kn_kprog_weight_layout(p, woff), at = 0;
    bytes_out a;
    byte_array_begin(&a, c, name, wsize);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (!kn_kbuf_is_weight(b)) continue;
        KN_ASSERT(woff[i] >= at && b->data && (b->data->data || !kn_kbuf_bytes(b)));
        byte_array_put(&a, NULL, woff[i] - at);
        byte_array_put(&a, b->data->data, kn_kbuf_bytes(b));
        at = woff[i] + kn_kbuf_bytes(b);
    }
    byte_array_put(&a, NULL, wsize - at);
    byte_array_end(&a);
    free(woff);
}

kn_status kn_emit_opencl_host(kn_ctx *cx, const kn_kprog *p, FILE *cl, FILE *h, FILE *c) {
    const char *N = p->name;
    char *src;
    size_t len;
    if (kn_emit_opencl(cx, p, &src, &len)) return cx->status;
    fwrite(src, 1, len, cl);

    fprintf(h,
            "/* Generated by kiln from model '%s'. Do not edit. OpenCL host code on the\n"
            " * Halide runtime (link with kiln's runtime/kn_opencl.c and the Halide runtime). */\n",
            N);
    fprintf(h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n", N, N);
    io_macros(h, p);
    fprintf(h,
            "\ntypedef struct %s_state %s_state;\n\n"
            "/* Builds the OpenCL program (once) and uploads the weights to the device.\n"
            " * *out is owned by the caller: %s_destroy(). Returns 0, or a negative\n"
            " * KN_OPENCL_E* status (KN_OPENCL_ENOPLATFORM: no OpenCL device). */\n"
            "int %s_create(void *user_context, %s_state **out);\n"
            "void %s_destroy(void *user_context, %s_state *s);\n"
            "/* Copies the inputs to the device, runs every kernel, copies the outputs back\n"
            " * (kernels on strings run on the host, between the device launches). Strings\n"
            " * are NUL-terminated UTF-8; string outputs receive pointers into the state's\n"
            " * host memory or the inputs, valid until the next call with the same state.\n"
            " * One state runs one call at a time. Returns 0, a negative KN_OPENCL_E* status,\n"
            " * or the positive status the generated C's NAME_run returns for the same inputs\n"
            " * (docs/generated-c.md). */\nint %s_run(void *user_context, %s_state *s",
            N, N, N, N, N, N, N, N, N);
    char pt[64];
    for (int i = 0; i < p->nin; i++) fprintf(h, ", %sin%d", io_type(p->inputs[i], false, pt), i);
    for (int i = 0; i < p->nout; i++) fprintf(h, ", %sout%d", io_type(p->outputs[i], true, pt), i);
    fprintf(h, ");\n\n#endif\n");

    fprintf(c, "/* Generated by kiln from model '%s'. Do not edit. */\n", N);
    bool any_host = false;
    for (int k = 0; k < p->nkernels && !any_host; k++) any_host = kn_opencl_on_host(p, k);
    if (any_host) kn_cprint_posix_prelude(c); /* the host kernels may match regexes */
    fprintf(c, "#include <stdlib.h>\n\n#include \"kn_opencl.h\"\n#include \"%s.h\"\n\n", N);
    char name[160];
    snprintf(name, sizeof name, "%s_source", N);
    byte_array(c, name, (const unsigned char *)src, len + 1); /* with its NUL: the runtime
                                                                  reads it as a C string */
    free(src);
    snprintf(name, sizeof name, "%s_weights", N);
    kn_emit_opencl_weights(c, p, name);
    unsigned char *which = calloc((size_t)p->nkernels + 1, 1);
    KN_ASSERT(which);
    int nhost = 0;
    for (int k = 0; k < p->nkernels; k++) nhost += which[k] = kn_opencl_on_host(p, k);
    if (nhost) {
        fprintf(c, "\n/* The kernels on strings, run on the host (kiln's C backend). */\n");
        kn_emit_c_host_kernels(cx, p, which, false, c);
    }
    free(which);
    size_t asize = p->arena_size ? p->arena_size : 1;
    /* the arena's host copy (host kernels only), aligned by hand in a malloc'd block */
    fprintf(
        c,
        "\nstruct %s_state {\n    kn_opencl_state *program;\n"
        "    kn_opencl_buffer weights, arena;\n    void *host_block;\n};\n\n"
        "int %s_create(void *uc, %s_state **out) {\n"
        "    %s_state *s = calloc(1, sizeof *s);\n"
        "    void *host = NULL;\n"
        "    int rc = s ? kn_opencl_state_create(uc, (const char *)%s_source, sizeof %s_source - "
        "1, &s->program) : KN_OPENCL_ENOMEM;\n"
        "    if (!rc) rc = kn_opencl_buffer_create(uc, &s->weights, (void *)%s_weights, 1, sizeof "
        "%s_weights);\n"
        "    if (!rc) rc = kn_opencl_upload(uc, &s->weights);\n",
        N, N, N, N, N, N, N, N);
    if (nhost)
        fprintf(c,
                "    if (!rc && !(s->host_block = malloc(%zu + %d))) rc = KN_OPENCL_ENOMEM;\n"
                "    if (!rc) host = (void *)(((uintptr_t)s->host_block + %d) & ~(uintptr_t)%d);\n",
                asize, KN_ARENA_ALIGN - 1, KN_ARENA_ALIGN - 1, KN_ARENA_ALIGN - 1);
    fprintf(c,
            "    if (!rc) rc = kn_opencl_buffer_create(uc, &s->arena, host, 1, %zu);\n"
            "    if (rc && s) %s_destroy(uc, s);\n    *out = rc ? NULL : s;\n    return rc;\n}\n\n"
            "void %s_destroy(void *uc, %s_state *s) {\n    if (!s) return;\n"
            "    kn_opencl_buffer_destroy(uc, &s->weights);\n"
            "    kn_opencl_buffer_destroy(uc, &s->arena);\n"
            "    kn_opencl_state_destroy(uc, s->program);\n    free(s->host_block);\n"
            "    free(s);\n}\n\n",
            asize, N, N, N);
    int n = p->nin + p->nout;
    fprintf(c, "int %s_run(void *uc, %s_state *s", N, N);
    for (int i = 0; i < p->nin; i++) fprintf(c, ", %sin%d", io_type(p->inputs[i], false, pt), i);
    for (int i = 0; i < p->nout; i++) fprintf(c, ", %sout%d", io_type(p->outputs[i], true, pt), i);
    fprintf(c, ") {\n    kn_opencl_buffer io[%d] = {0};\n    int rc = 0;\n", n + 1);
    if (p->status || nhost) fprintf(c, "    int32_t status = 0;\n");
    if (nhost) { /* the host kernels' io[] (kn_emit_c_host_kernels) */
        fprintf(c, "    void *hio[%d] = {", n + 1);
        for (int i = 0; i < n; i++)
            fprintf(c, "(void *)%s%d, ", i < p->nin ? "in" : "out", i < p->nin ? i : i - p->nin);
        fprintf(c, "&status};\n");
    }
    if (p->status) /* the status word (kl_fail), zeroed on entry and read back */
        fprintf(c,
                "    rc = kn_opencl_buffer_create(uc, &io[%d], &status, 4, 1);\n"
                "    if (!rc) rc = kn_opencl_upload(uc, &io[%d]);\n",
                n, n);
    for (int i = 0; i < n; i++) {
        const kn_kbuf *b = i < p->nin ? p->inputs[i] : p->outputs[i - p->nin];
        bool dev = b->numel && b->dtype != KN_STRING; /* strings never reach the device */
        char host[32];
        snprintf(host, sizeof host, "(void *)%s%d", i < p->nin ? "in" : "out",
                 i < p->nin ? i : i - p->nin);
        fprintf(c, "    if (!rc) rc = kn_opencl_buffer_create(uc, &io[%d], %s, %zu, %lld);\n", i,
                dev ? host : "NULL", kn_dtype_get(b->dtype)->size, (long long)(dev ? b->numel : 1));
    }
    int nsteps;
    kn_opencl_step *steps = kn_opencl_schedule(p, &nsteps);
    for (int si = 0; si < nsteps; si++) {
        const kn_opencl_step *sp = &steps[si];
        if (sp->kind == KN_OCL_UPLOAD || sp->kind == KN_OCL_DOWNLOAD) {
            char unit[32];
            if (sp->arg == n + 1)
                snprintf(unit, sizeof unit, "s->arena");
            else
                snprintf(unit, sizeof unit, "io[%d]", sp->arg);
            fprintf(c, "    if (!rc) rc = kn_opencl_%s(uc, &%s);\n",
                    sp->kind == KN_OCL_UPLOAD ? "upload" : "download", unit);
            continue;
        }
        int k = sp->arg;
        if (sp->kind == KN_OCL_HOST) {
            fprintf(c, "    if (!rc) %s_h%d(s->arena.hb.host, %s_weights, hio); /* %s */\n", N, k,
                    N, p->kernels[k]->name);
            continue;
        }
        kn_opencl_kernel_plan plan;
        kn_opencl_plan(p, k, &plan);
        fprintf(c, "    if (!rc) { /* %s */\n", p->kernels[k]->name);
        fprintf(c, "        static const int g[3] = {%d, %d, %d}, l[3] = {%d, %d, %d};\n",
                plan.global[0], plan.global[1], plan.global[2], plan.local[0], plan.local[1],
                plan.local[2]);
        fprintf(c,
                "        kn_opencl_arg a[%d] = {kn_opencl_arg_buffer(&s->arena), "
                "kn_opencl_arg_buffer(&s->weights)",
                plan.nio + 2);
        for (int j = 0; j < plan.nio; j++) {
            const kn_kbuf *b = plan.io[j];
            fprintf(c, ", kn_opencl_arg_buffer(&io[%d])",
                    b == p->status        ? n
                    : b->kind == KB_INPUT ? b->io
                                          : p->nin + b->io);
        }
        fprintf(c,
                "};\n        rc = kn_opencl_launch(uc, s->program, \"%s_k%d\", g, l, 0, a, %d);\n  "
                "  }\n",
                N, k, plan.nio + 2);
    }
    free(steps);
    if (p->status) fprintf(c, "    if (!rc) rc = status;\n");
    fprintf(c,
            "    for (int i = 0; i < %d; i++) kn_opencl_buffer_destroy(uc, &io[i]);\n    return "
            "rc;\n}\n",
            n + 1);
    return KN_OK;
}
