/* AArch64 run test (tests/aarch64/run.sh): the example model's objects, compiled by kiln
 * with --emit obj --target aarch64 (LLVM), linked into a Linux program that qemu-aarch64
 * runs. The float DS-CNN must match torch's output (kws_ref.h) within 1e-5 of its largest
 * value, the int8 one make_qdq.py's integer reference (kws_int8_ref.h) exactly. */
#include "kws.h"
#include "kws_int8.h"
#include "kws_int8_ref.h"
#include "kws_ref.h"

#include <math.h>
#include <stdio.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))
static unsigned char arena[MAX(kws_ARENA_SIZE, kws_int8_ARENA_SIZE)]
    __attribute__((aligned(MAX(kws_ARENA_ALIGN, kws_int8_ARENA_ALIGN))));

int main(void) {
    float out[kws_OUTPUT_0_SIZE];
    int8_t out8[kws_int8_OUTPUT_0_SIZE];
    if (kws_run(kws_ref_input, out, arena) || kws_int8_run(kws_ref_input, out8, arena)) {
        printf("FAIL: a _run returned nonzero\n");
        return 1;
    }
    float ref_max = 0, err = 0;
    for (int i = 0; i < kws_OUTPUT_0_SIZE; i++) {
        ref_max = fmaxf(ref_max, fabsf(kws_ref_output[i]));
        err = fmaxf(err, fabsf(out[i] - kws_ref_output[i]));
    }
    int differ = 0;
    for (int i = 0; i < kws_int8_OUTPUT_0_SIZE; i++) differ += out8[i] != kws_ref_output_int8[i];
    printf("float: max |output - reference| = %.3e (tolerance %.3e); int8: %d of %d differ\n",
           (double)err, (double)(1e-5f * ref_max), differ, kws_int8_OUTPUT_0_SIZE);
    int ok = err <= 1e-5f * ref_max && !differ;
    printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
