/* Helpers of the C harnesses that run generated models on the host (tests/arena_io,
 * tests/memory_regions): a .npy's data, and an output against its reference. Include
 * after defining TOUT (the output's C type) and TOL (relative tolerance, 0: equal). */
#ifndef KILN_TESTS_HARNESS_NPY_H
#define KILN_TESTS_HARNESS_NPY_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* the data of a .npy (version 1 header), which must be n bytes */
static int npy_load(const char *path, void *dst, size_t n) {
    FILE *f = fopen(path, "rb");
    unsigned char h[10];
    if (!f || fread(h, 1, 10, f) != 10) {
        if (f) fclose(f);
        return -1;
    }
    long hl = h[8] | h[9] << 8;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    size_t got = 0;
    if (size == 10 + hl + (long)n) {
        fseek(f, 10 + hl, SEEK_SET);
        got = fread(dst, 1, n, f);
    }
    fclose(f);
    return got == n ? 0 : -1;
}

/* 0 when max |got - ref| <= TOL * max |ref| over n values; else prints why and returns 1 */
static int near_ref(const TOUT *got, const TOUT *ref, size_t n) {
    double rmax = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        rmax = fmax(rmax, fabs((double)ref[i]));
        err = fmax(err, fabs((double)got[i] - (double)ref[i]));
    }
    if (err <= TOL * rmax) return 0;
    printf("FAIL: max |output - reference| %g > %g\n", err, TOL * rmax);
    return 1;
}

#endif
