/* The opencl backend of kiln run / check-onnx / bench: runs a planned program's
 * OpenCL C kernels through kiln's layer over the Halide runtime (runtime/kn_opencl.h).
 * The program is built once per prepared model and the weights are uploaded once;
 * each call uploads the inputs, launches every kernel as its plan says (in order, on
 * one in-order queue), and downloads the outputs. */
#include "tools/backend_opencl.h"
#include "codegen/opencl/emit_opencl.h"
#include "runtime/kn_opencl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct backend_ocl {
    kn_opencl_state *st;
    kn_opencl_buffer weights, arena;
    void *wdata;     /* host copy of the weight blob (the buffer borrows it) */
    size_t *woff;    /* offsets of the weights in the blob (kn_kprog_weight_layout) */
    kn_profile prof; /* hook NULL: no per-kernel timing */
};

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
    rc = kn_opencl_state_create(NULL, src, len, &b->st);
    free(src);
    if (rc) {
        free(b);
        return ocl_error(cx, rc, "cannot build the OpenCL program");
    }
    size_t wsize;
    b->woff = calloc((size_t)p->nbufs + 1, sizeof *b->woff);
    KN_ASSERT(b->woff);
    wsize = kn_kprog_weight_layout(p, b->woff);
    b->wdata = calloc(wsize ? wsize : 1, 1);
    KN_ASSERT(b->wdata);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *w = p->bufs[i];
        if (w->kind == KB_CONST && w->first >= 0)
            memcpy((char *)b->wdata + b->woff[i], w->data->data,
                   (size_t)w->numel * kn_dtype_get(w->dtype)->size);
    }
    rc = kn_opencl_buffer_create(NULL, &b->weights, b->wdata, 1, wsize ? wsize : 1);
    if (!rc) rc = kn_opencl_upload(NULL, &b->weights);
    if (!rc)
        rc = kn_opencl_buffer_create(NULL, &b->arena, NULL, 1, p->arena_size ? p->arena_size : 1);
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
    int32_t status = 0;
    kn_opencl_buffer *io = calloc((size_t)n + 1, sizeof *io);
    KN_ASSERT(io);
    *run_status = 0;
    if (p->status) { /* the status word: io[n], zeroed here, read back below */
        rc = kn_opencl_buffer_create(NULL, &io[n], &status, 4, 1);
        if (!rc) rc = kn_opencl_upload(NULL, &io[n]);
    }
    for (int i = 0; i < n && !rc; i++) {
        const kn_kbuf *buf = i < p->nin ? p->inputs[i] : p->outputs[i - p->nin];
        void *host = i < p->nin ? (void *)in[i] : out[i - p->nin];
        size_t es = kn_dtype_get(buf->dtype)->size, count = (size_t)buf->numel;
        if (!count) { /* an empty tensor: a 1-element scratch allocation */
            rc = kn_opencl_buffer_create(NULL, &io[i], NULL, es, 1);
            continue;
        }
        rc = kn_opencl_buffer_create(NULL, &io[i], host, es, count);
        if (!rc && i < p->nin) rc = kn_opencl_upload(NULL, &io[i]);
    }
    char name[160];
    for (int k = 0; k < p->nkernels && !rc; k++) {
        kn_opencl_kernel_plan plan;
        kn_opencl_plan(p, k, &plan);
        kn_opencl_arg args[KN_OPENCL_MAX_ARGS];
        int na = 0;
        args[na++] = kn_opencl_arg_buffer(&b->arena);
        args[na++] = kn_opencl_arg_buffer(&b->weights);
        for (int j = 0; j < plan.nio; j++) {
            const kn_kbuf *buf = plan.io[j];
            int idx = buf == p->status ? n : buf->kind == KB_INPUT ? buf->io : p->nin + buf->io;
            args[na++] = kn_opencl_arg_buffer(&io[idx]);
        }
        snprintf(name, sizeof name, "%s_k%d", p->name, k);
        if (b->prof.hook) b->prof.hook(b->prof.user, k, 0);
        rc = kn_opencl_launch(NULL, b->st, name, plan.global, plan.local, 0, args, na);
        if (b->prof.hook) {
            if (!rc) rc = kn_opencl_finish(NULL);
            b->prof.hook(b->prof.user, k, 1);
        }
    }
    for (int i = p->nin; i < n && !rc; i++)
        if (p->outputs[i - p->nin]->numel) rc = kn_opencl_download(NULL, &io[i]);
    if (p->status && !rc) rc = kn_opencl_download(NULL, &io[n]);
    *run_status = status;
    for (int i = 0; i <= n; i++) kn_opencl_buffer_destroy(NULL, &io[i]);
    free(io);
    return rc ? ocl_error(cx, rc, "running the OpenCL kernels failed") : KN_OK;
}

void backend_opencl_release(backend_ocl *b) {
    if (!b) return;
    kn_opencl_buffer_destroy(NULL, &b->weights);
    kn_opencl_buffer_destroy(NULL, &b->arena);
    kn_opencl_state_destroy(NULL, b->st);
    free(b->wdata);
    free(b->woff);
    free(b);
}
