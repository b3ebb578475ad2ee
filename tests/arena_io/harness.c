/* tests/arena_io: one model compiled twice, as m (inputs and outputs in buffers of their
 * own) and mi (--arena-in-place-io), run on the same input: mi's output, read from its
 * arena, must equal m's byte for byte and the reference (REF: a .npy of an independent
 * computation) within TOL * max |reference| (TOL 0: equal). Prints the sizes.
 * Build: cc -DTIN=float -DTOUT=float -DTOL=1e-5 harness.c m.c mi.c -lm
 * usage: harness INPUT.npy REF.npy */
#include "m.h"
#include "mi.h"

#include "harness_npy.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(64) unsigned char arena_m[m_ARENA_SIZE + 64], arena_i[mi_ARENA_SIZE + 64];
static TIN in[m_INPUT_0_SIZE];
static TOUT out[m_OUTPUT_0_SIZE], ref[m_OUTPUT_0_SIZE];

int main(int argc, char **argv) {
    if (argc != 3 || npy_load(argv[1], in, sizeof in) || npy_load(argv[2], ref, sizeof ref)) {
        fprintf(stderr, "usage: harness INPUT.npy REF.npy (sizes as the model's)\n");
        return 2;
    }
    int fail = 0;
    if (m_run(in, out, arena_m)) return 3;
    /* in place: garbage everywhere, the input written at its offset */
    memset(arena_i, 0xa5, sizeof arena_i);
    TIN *ii = (TIN *)(void *)(arena_i + mi_INPUT_0_OFFSET);
    TOUT *oi = (TOUT *)(void *)(arena_i + mi_OUTPUT_0_OFFSET);
    memcpy(ii, in, sizeof in);
    int rc = mi_run(ii, oi, arena_i);
    if (rc) {
        printf("FAIL: mi_run returned %d\n", rc);
        return 1;
    }
    if (memcmp(oi, out, sizeof out)) {
        printf("FAIL: in-place output differs from the normal mode's\n");
        fail = 1;
    }
    if (near_ref(oi, ref, sizeof ref / sizeof *ref)) fail = 1;
    /* pointers elsewhere are refused */
    if (mi_run(in, oi, arena_i) != 5) {
        printf("FAIL: mi_run accepted an input outside the arena\n");
        fail = 1;
    }
    printf("sizes: arena %lu, input %lu, output %lu; in place: arena %lu, input at %lu, "
           "output at %lu\n",
           (unsigned long)m_ARENA_SIZE, (unsigned long)sizeof in, (unsigned long)sizeof out,
           (unsigned long)mi_ARENA_SIZE, (unsigned long)mi_INPUT_0_OFFSET,
           (unsigned long)mi_OUTPUT_0_OFFSET);
    return fail;
}
