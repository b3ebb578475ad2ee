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

#include <stdlib.h>
#include <string.h>

void kn_opencl_weights_layout(const kn_kprog *p, size_t *offsets, size_t *size) {
    size_t at = 0;
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        offsets[i] = 0;
        if (b->kind != KB_CONST || b->first < 0) continue;
        offsets[i] = at;
        at += ((size_t)b->numel * kn_dtype_get(b->dtype)->size + 63) & ~(size_t)63;
    }
    *size = at;
}

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
    if (plan->ndims) plan->local[0] = plan->global[0] < 64 ? plan->global[0] : 64;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(p->kernels[k]->body, use);
    for (int i = 0; i < p->nbufs && plan->nio < KN_OPENCL_MAX_IO; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (use[i] && (b->kind == KB_INPUT || b->kind == KB_OUTPUT)) plan->io[plan->nio++] = b;
    }
    free(use);
}

static const kn_kbuf *root(const kn_kbuf *b) {
    while (b->alias) b = b->alias;
    return b;
}

kn_status kn_emit_opencl(kn_ctx *cx, const kn_kprog *p, char **src, size_t *len) {
    char *kbuf = NULL;
    size_t klen = 0;
    FILE *k = open_memstream(&kbuf, &klen);
    KN_ASSERT(k);
    kn_cprint P;
    kn_cprint_init(&P, p, k, KN_OPENCL);
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff), wsize;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(woff && use);
    kn_opencl_weights_layout(p, woff, &wsize);
    for (int ki = 0; ki < p->nkernels; ki++) {
        const kn_kernel *kr = p->kernels[ki];
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
            if (!use[i]) continue;
            const char *t = kn_cprint_ctype(&P, b->dtype);
            if (b->kind == KB_TEMP || b->kind == KB_SCRATCH)
                fprintf(k, "    __global %s *%s = (__global %s *)(kn_arena + %zu);\n", t, b->name,
                        t, root(b)->offset);
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
    fprintf(f, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    kn_cprint_helpers(&P, f);
    fwrite(kbuf, 1, klen, f);
    fclose(f);
    free(kbuf);
    free(woff);
    free(use);
    *src = out;
    *len = olen;
    return KN_OK;
}
