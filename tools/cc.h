/* Compiling generated C with the system compiler into a shared object and loading it:
 * the c backend's models (tools/backend.c) and the opencl backend's host kernels
 * (tools/backend_opencl.c). */
#ifndef KN_CC_H
#define KN_CC_H

#include "ir/diag.h"

#include <stddef.h>

/* Compiles dir/name.c into the shared object `so` with $CC (default cc) at -std=c99
 * -O1 -Wall -Wextra -Wpedantic -Werror, then `cflags` (space-separated, may be NULL;
 * a later -O wins), then $KILN_CFLAGS. */
kn_status backend_cc(kn_ctx *cx, const char *dir, const char *name, const char *so,
                     const char *cflags);
/* Writes C source src[0..len) to a temporary folder, compiles it as backend_cc does
 * (no extra flags) and dlopen()s it into *lib (dlclose() it); the folder is removed. */
kn_status backend_cc_load(kn_ctx *cx, const char *src, size_t len, void **lib);
/* Creates a fresh folder $TMPDIR/PREFIX-XXXXXX (/tmp without TMPDIR) into dir[size]. */
kn_status cc_tmp_dir(kn_ctx *cx, const char *prefix, char *dir, size_t size);
/* Removes dir and what is in it, unless KILN_KEEP_TMP is set (then says it kept it). */
void cc_remove_dir(const char *dir);

#endif
