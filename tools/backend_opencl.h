/* The opencl backend of the CLI (tools/backend.c), built when the OpenCL runtime is
 * (KILN_HAVE_OPENCL). */
#ifndef KN_BACKEND_OPENCL_H
#define KN_BACKEND_OPENCL_H

#include "codegen/profile.h"
#include "ir/kir.h"

typedef struct backend_ocl backend_ocl;

/* Whether an OpenCL device is there (no message). */
bool backend_opencl_available(void);
/* Builds the program of p and uploads its weights. With prof (may be NULL), each call
 * waits for every kernel to finish and calls prof's hook around it (kiln bench
 * --profile): kernels then no longer overlap with the host's launching. */
kn_status backend_opencl_prepare(kn_ctx *cx, const kn_kprog *p, const kn_profile *prof,
                                 backend_ocl **out);
/* One run: inputs in[] (host arrays), outputs out[] (host arrays); *run_status gets the
 * program's status word (0, or a KN_STATUS_* of ir/kir.h). */
kn_status backend_opencl_call(kn_ctx *cx, backend_ocl *b, const kn_kprog *p, const void *const *in,
                              void *const *out, int *run_status);
void backend_opencl_release(backend_ocl *b);

#endif
