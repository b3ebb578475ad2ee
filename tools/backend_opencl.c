/* The opencl backend of kiln run / check-onnx / bench: runs a planned program's
 * OpenCL C kernels through kiln's layer over the Halide runtime (runtime/kn_opencl.h).
 * The program is built once per prepared model and the weights are uploaded once;
 * each call follows the program's schedule (kn_opencl_schedule): device kernels are
 * launched as their plan says (in order, on one in-order queue), host kernels (those
 * on strings) are the C backend's, compiled with the system compiler at prepare time
 * and called on host copies, with the uploads and downloads between them. */
#include "tools/backend_opencl.h"
#include "codegen/c/emit_c.h"
#include "codegen/opencl/emit_opencl.h"
#include "runtime/kn_opencl.h"
#include "tools/cc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct backend_ocl {
    kn_opencl_state *st;
    kn_opencl_buffer weights, arena;
    void *wdata;           /* host copy of the weight blob (the buffer borrows it) */
    size_t *woff;          /* offsets of the weights in the blob (kn_kprog_weight_layout) */
    kn_profile prof;       /* hook NULL: no per-kernel timing */
    kn_opencl_step *steps; /* kn_opencl_schedule */
    int nsteps;
    kn_opencl_kernel_plan *plans; /* per kernel, made once: a plan walks the kernel's body,
                                     which cost the encoder ~7% of its CPU time per call */
    void *lib;                    /* the host kernels, or NULL */
    void (**hostfn)(void *, const void *, void *const *); /* per kernel: model_hK or NULL */
    void *host_arena; /* the arena's host copy (host kernels), or NULL */
    /* the graph inputs' and outputs' device buffers, then the status word's: kept from
     * call to call while the caller passes the same arrays (a new device allocation per
     * call cost page faults on the host thread before the first launch) */
    kn_opencl_buffer *io;
    int nio;        /* graph inputs and outputs: io[nio] is the status word */
    int32_t status; /* the status word's host side */
};

typedef void (*host_kernel_fn)(void *, const void *, void *const *);

/* Compiles the host kernels of p (kn_emit_c_host_kernels) and looks up their entries. */
static kn_status load_host_kernels(kn_ctx *cx, backend_ocl *b, const kn_kprog *p) {
    unsigned char *which = calloc((size_t)p->nkernels + 1, 1);
    KN_ASSERT(which);
    int nhost = 0;
    for (int k = 0; k < p->nkernels; k++) nhost += which[k] = kn_opencl_on_host(p, k);
    kn_status st = KN_OK;
    if (nhost) {
        char *src = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&src, &len);
        KN_ASSERT(f);
        kn_emit_c_host_kernels(cx, p, which, true, f);
        fclose(f);
        st = backend_cc_load(cx, src, len, &b->lib);
        free(src);
        b->hostfn = calloc((size_t)p->nkernels, sizeof *b->hostfn);
        KN_ASSERT(b->hostfn);
        char name[160];
        for (int k = 0; k < p->nkernels && !st; k++) {
            if (!which[k]) continue;
            snprintf(name, sizeof name, "%s_h%d", p->name, k);
            *(void **)&b->hostfn[k] = dlsym(b->lib, name);
            if (!b->hostfn[k]) st = kn_diag(cx, NULL, KN_EINTERNAL, "%s not found", name);
        }
        if (!st && p->arena_size &&
            !(b->host_arena = aligned_alloc(KN_ARENA_ALIGN, (p->arena_size + KN_ARENA_ALIGN - 1) &
                                                                ~(size_t)(KN_ARENA_ALIGN - 1))))
            st = kn_diag(cx, NULL, KN_ELIMIT, "cannot allocate the arena's host copy");
    }
    free(which);
    return st;
}

bool backend_opencl_available(void) {
    return kn_opencl_probe(NULL) == KN_OPENCL_OK;
}

static kn_status ocl_error(kn_ctx *cx, int rc, const char *what) {
    return kn_diag(cx, NULL, rc == KN_OPENCL_ENOPLATFORM ? KN_EUNSUPPORTED : KN_EINTERNAL, "%s: %s",
                   what, kn_opencl_strerror(rc));
}

kn_status backend_opencl_prepare(kn_ctx *cx, const kn_kprog *p, const kn_profile *prof,
                                 backend_ocl **out) {
    *out = NULL;
    int rc = kn_opencl_probe(NULL);
    if (rc) return ocl_error(cx, rc, "OpenCL");
    char *src;
    size_t len;
    if (kn_emit_opencl(cx, p, &src, &len)) return cx->status;
    backend_ocl *b = calloc(1, sizeof *b);
    KN_ASSERT(b);
    if (prof) b->prof = *prof;
    b->steps = kn_opencl_schedule(p, &b->nsteps);
    b->plans = calloc((size_t)p->nkernels + 1, sizeof *b->plans);
    KN_ASSERT(b->plans);
    for (int si = 0; si < b->nsteps; si++)
        if (b->steps[si].kind == KN_OCL_DEVICE)
            kn_opencl_plan(p, b->steps[si].arg, &b->plans[b->steps[si].arg]);
    if (load_host_kernels(cx, b, p)) {
        free(src);
        backend_opencl_release(b);
        return cx->status;
    }
    rc = kn_opencl_state_create(NULL, src, len, &b->st);
    free(src);
    if (rc) {
        backend_opencl_release(b);
        return ocl_error(cx, rc, "cannot build the OpenCL program");
    }
    size_t wsize;
    b->woff = calloc((size_t)p->nbufs + 1, sizeof *b->woff);
    KN_ASSERT(b->woff);
    wsize = kn_kprog_weight_layout(p, b->woff);
    /* aligned as the C backend's weights (host kernels read them in place) */
    size_t wcap = (wsize + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    b->wdata = aligned_alloc(KN_ARENA_ALIGN, wcap ? wcap : KN_ARENA_ALIGN);
    KN_ASSERT(b->wdata);
    memset(b->wdata, 0, wcap ? wcap : KN_ARENA_ALIGN);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *w = p->bufs[i];
        if (w->kind == KB_CONST && w->first >= 0)
            memcpy((char *)b->wdata + b->woff[i], w->data->data,
                   (size_t)w->numel * kn_dtype_get(w->dtype)->size);
    }
    rc = kn_opencl_buffer_create(NULL, &b->weights, b->wdata, 1, wsize ? wsize : 1);
    if (!rc) rc = kn_opencl_upload(NULL, &b->weights);
    if (!rc)
        rc = kn_opencl_buffer_create(NULL, &b->arena, b->host_arena, 1,
                                     p->arena_size ? p->arena_size : 1);
    if (rc) {
        backend_opencl_release(b);
        return ocl_error(cx, rc, "cannot allocate device memory");
    }
    *out = b;
    return KN_OK;
}

kn_status backend_opencl_call(kn_ctx *cx, backend_ocl *b, const kn_kprog *p, const void *const *in,
                              void *const *out, int *run_status) {
    int n = p->nin + p->nout, rc = KN_OPENCL_OK;
    if (!b->io) {
        b->io = calloc((size_t)n + 1, sizeof *b->io);
        KN_ASSERT(b->io);
        b->nio = n;
    }
    kn_opencl_buffer *io = b->io;
    *run_status = 0;
    b->status = 0;
    if (p->status) { /* the status word: io[n], zeroed here, read back below */
        if (!io[n].hb.device) rc = kn_opencl_buffer_create(NULL, &io[n], &b->status, 4, 1);
        if (!rc) rc = kn_opencl_upload(NULL, &io[n]);
    }
    for (int i = 0; i < n && !rc; i++) {
        const kn_kbuf *buf = i < p->nin ? p->inputs[i] : p->outputs[i - p->nin];
        void *host = i < p->nin ? (void *)in[i] : out[i - p->nin];
        size_t es = kn_dtype_get(buf->dtype)->size, count = (size_t)buf->numel;
        /* an empty tensor: a 1-element scratch allocation; strings never reach the device */
        bool dev = count && buf->dtype != KN_STRING;
        if (io[i].hb.device && io[i].hb.host == (dev ? host : NULL)) continue; /* as last call */
        kn_opencl_buffer_destroy(NULL, &io[i]);
        rc = kn_opencl_buffer_create(NULL, &io[i], dev ? host : NULL, es, dev ? count : 1);
    }
    /* the host kernels' view: io[] as kn_emit_c_host_kernels takes it */
    void **hio = calloc((size_t)n + 1, sizeof *hio);
    KN_ASSERT(hio);
    for (int i = 0; i < n; i++) hio[i] = i < p->nin ? (void *)in[i] : out[i - p->nin];
    hio[n] = &b->status;
    char name[160];
    for (int si = 0; si < b->nsteps && !rc; si++) {
        const kn_opencl_step *sp = &b->steps[si];
        kn_opencl_buffer *u = sp->arg == n + 1 ? &b->arena : &io[sp->arg];
        if (sp->kind == KN_OCL_UPLOAD || sp->kind == KN_OCL_DOWNLOAD) {
            rc =
                sp->kind == KN_OCL_UPLOAD ? kn_opencl_upload(NULL, u) : kn_opencl_download(NULL, u);
            continue;
        }
        int k = sp->arg;
        if (b->prof.hook) b->prof.hook(b->prof.user, k, 0);
        if (sp->kind == KN_OCL_HOST) {
            b->hostfn[k](b->host_arena, b->wdata, hio);
        } else {
            const kn_opencl_kernel_plan *plan = &b->plans[k];
            kn_opencl_arg args[KN_OPENCL_MAX_ARGS];
            int na = 0;
            args[na++] = kn_opencl_arg_buffer(&b->arena);
            args[na++] = kn_opencl_arg_buffer(&b->weights);
            for (int j = 0; j < plan->nio; j++) {
                const kn_kbuf *buf = plan->io[j];
                int idx = buf == p->status ? n : buf->kind == KB_INPUT ? buf->io : p->nin + buf->io;
                args[na++] = kn_opencl_arg_buffer(&io[idx]);
            }
            snprintf(name, sizeof name, "%s_k%d", p->name, k);
            rc = kn_opencl_launch(NULL, b->st, name, plan->global, plan->local, 0, args, na);
        }
        if (b->prof.hook) {
            if (!rc) rc = kn_opencl_finish(NULL);
            b->prof.hook(b->prof.user, k, 1);
        }
    }
    free(hio);
    *run_status = b->status;
    if (rc) /* a failed call keeps nothing it may have left half made */
        for (int i = 0; i <= n; i++) kn_opencl_buffer_destroy(NULL, &io[i]);
    return rc ? ocl_error(cx, rc, "running the OpenCL kernels failed") : KN_OK;
}

void backend_opencl_release(backend_ocl *b) {
    if (!b) return;
    for (int i = 0; b->io && i <= b->nio; i++) kn_opencl_buffer_destroy(NULL, &b->io[i]);
    free(b->io);
    kn_opencl_buffer_destroy(NULL, &b->weights);
    kn_opencl_buffer_destroy(NULL, &b->arena);
    kn_opencl_state_destroy(NULL, b->st);
    if (b->lib) dlclose(b->lib);
    free(b->hostfn);
    free(b->host_arena);
    free(b->steps);
    free(b->plans);
    free(b->wdata);
    free(b->woff);
    free(b);
}
