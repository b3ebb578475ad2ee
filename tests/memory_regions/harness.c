/* tests/memory_regions: one model compiled three ways: m (one arena), m2 (--memory with
 * two regions) and mr (--memory and --arena-in-place-io), run on the same input from
 * arenas filled with garbage and allocated apart: m2's and mr's outputs must equal m's
 * byte for byte, and m2's must equal the reference (REF: a .npy of an independent
 * computation) within TOL * max |reference| (TOL 0: equal). Prints the sizes.
 * Build: cc -DTIN=float -DTOUT=float -DTOL=1e-5 harness.c m.c m2.c mr.c -lm
 * usage: harness INPUT.npy REF.npy */
#include "m.h"
#include "m2.h"
#include "mr.h"

#include "harness_npy.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(64) unsigned char arena_m[m_ARENA_SIZE + 64];
static TIN in[m_INPUT_0_SIZE];
static TOUT out[m_OUTPUT_0_SIZE], out2[m_OUTPUT_0_SIZE], ref[m_OUTPUT_0_SIZE];

/* a region's arena: its own allocation (64-byte aligned, at least 64 bytes), garbage */
static unsigned char *region(size_t n) {
    unsigned char *p = aligned_alloc(64, n ? (n + 63) / 64 * 64 : 64);
    if (!p) exit(4);
    memset(p, 0xa5, n);
    return p;
}

int main(int argc, char **argv) {
    if (argc != 3 || npy_load(argv[1], in, sizeof in) || npy_load(argv[2], ref, sizeof ref)) {
        fprintf(stderr, "usage: harness INPUT.npy REF.npy (sizes as the model's)\n");
        return 2;
    }
    int fail = 0;
    if (m_run(in, out, arena_m)) return 3;
    /* two regions */
    unsigned char *fast = region(m2_ARENA_fast_SIZE), *slow = region(m2_ARENA_slow_SIZE);
    int rc = m2_run(in, out2, fast, slow);
    if (rc) {
        printf("FAIL: m2_run returned %d\n", rc);
        return 1;
    }
    if (memcmp(out2, out, sizeof out)) {
        printf("FAIL: two-region output differs from the one-arena output\n");
        fail = 1;
    }
    if (near_ref(out2, ref, sizeof ref / sizeof *ref)) fail = 1;
    /* the generic entry point, with the regions swapped back in order */
    memset(out2, 0, sizeof out2);
    const void *ins[1] = {in};
    void *outs[1] = {out2}, *arenas[2] = {fast, slow};
    if (m2_run_array(ins, outs, NULL, arenas) || memcmp(out2, out, sizeof out)) {
        printf("FAIL: m2_run_array\n");
        fail = 1;
    }
    if (m2_run(in, out2, fast, slow + 8) != 1) { /* a misaligned region */
        printf("FAIL: m2_run accepted a misaligned slow arena\n");
        fail = 1;
    }
    /* regions and inputs/outputs in place */
    unsigned char *rr[2] = {region(mr_ARENA_fast_SIZE), region(mr_ARENA_slow_SIZE)};
    TIN *ii = (TIN *)(void *)(rr[mr_INPUT_0_REGION] + mr_INPUT_0_OFFSET);
    TOUT *oi = (TOUT *)(void *)(rr[mr_OUTPUT_0_REGION] + mr_OUTPUT_0_OFFSET);
    memcpy(ii, in, sizeof in);
    rc = mr_run(ii, oi, rr[0], rr[1]);
    if (rc || memcmp(oi, out, sizeof out)) {
        printf("FAIL: in-place two-region run (status %d)\n", rc);
        fail = 1;
    }
    if (mr_run(in, oi, rr[0], rr[1]) != 5) {
        printf("FAIL: mr_run accepted an input outside its region\n");
        fail = 1;
    }
    printf("sizes: arena %lu; regions %lu + %lu = %lu; in place: %lu + %lu, input in %d at %lu, "
           "output in %d at %lu\n",
           (unsigned long)m_ARENA_SIZE, (unsigned long)m2_ARENA_fast_SIZE,
           (unsigned long)m2_ARENA_slow_SIZE, (unsigned long)m2_ARENA_SIZE,
           (unsigned long)mr_ARENA_fast_SIZE, (unsigned long)mr_ARENA_slow_SIZE, mr_INPUT_0_REGION,
           (unsigned long)mr_INPUT_0_OFFSET, mr_OUTPUT_0_REGION, (unsigned long)mr_OUTPUT_0_OFFSET);
    if (m2_ARENA_fast_SIZE + m2_ARENA_slow_SIZE != m2_ARENA_SIZE || m2_NUM_REGIONS != 2 ||
        strcmp(m2_REGION_0_NAME, "fast") || strcmp(m2_REGION_1_NAME, "slow")) {
        printf("FAIL: region macros\n");
        fail = 1;
    }
    free(fast);
    free(slow);
    free(rr[0]);
    free(rr[1]);
    return fail;
}
