/* Output files written all or nothing: each through a temporary name in its folder,
 * all renamed to their final names once every one is written, none left on a failure
 * (kn_emit_c_files, kiln compile --emit opencl). */
#ifndef KN_OUTFILES_H
#define KN_OUTFILES_H

#include "ir/diag.h"

#include <stdio.h>

#define KN_OUTFILES_MAX 4

typedef struct kn_outfiles {
    int n;
    FILE *f[KN_OUTFILES_MAX]; /* write to these */
    char tmp[KN_OUTFILES_MAX][4200], final[KN_OUTFILES_MAX][4200];
} kn_outfiles;

/* Opens DIR/.NAME<ext[i]>.tmp<pid> for i < n (at most KN_OUTFILES_MAX), to become
 * DIR/NAME<ext[i]> ("NAME.h": ext ".h"). On failure reports it, closes and removes what
 * it opened, and o->f[] are NULL. */
kn_status kn_outfiles_open(kn_ctx *cx, kn_outfiles *o, const char *dir, const char *name,
                           const char *const *ext, int n);

/* Closes the files; when st is 0 and every close succeeds, renames each to its final
 * name (a KN_EVENT_WRITE event with its size for each), else removes them all. Returns
 * st, or the first failure here. */
kn_status kn_outfiles_finish(kn_ctx *cx, kn_outfiles *o, kn_status st);

#endif
