/* Generated C in a unit test: a program's C emitted into a folder of the test's temporary
 * directory with a main.c the test writes beside it, then built with $CC (or cc) at -O1
 * and run in that folder. */
#ifndef KN_C_HARNESS_H
#define KN_C_HARNESS_H

#include "codegen/c/emit_c.h"
#include "ir/kir.h"

#include <stdio.h>
#include <stdlib.h>

/* p's C files in tmp/name (made if missing; its path in dir, cap bytes), and main.c there
 * opened for writing (the caller's to close), or NULL if any step failed. */
static inline FILE *ch_emit(kn_ctx *cx, const kn_kprog *p, const char *tmp, const char *name,
                            char *dir, size_t cap) {
    char cmd[4200], path[4200];
    snprintf(dir, cap, "%s/%s", tmp, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    kn_c_options opt = {0};
    if (system(cmd) != 0 || kn_emit_c_files(cx, p, &opt, dir) != KN_OK) return NULL;
    snprintf(path, sizeof path, "%s/main.c", dir);
    return fopen(path, "w");
}

/* Builds main.c and the model's C in dir into `run` and runs it there, its standard output
 * to out (a file name in dir, or NULL: the test's); whether both succeeded. */
static inline int ch_build_run(const char *dir, const char *out) {
    const char *cc = getenv("CC");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s -std=c11 -O1 -o run main.c m.c -lm && ./run%s%s", dir,
             cc && cc[0] ? cc : "cc", out ? " > " : "", out ? out : "");
    return system(cmd) == 0;
}

#endif
