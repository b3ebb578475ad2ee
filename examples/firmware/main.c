/* The example firmware: runs the keyword-spotting model kiln compiled (kws.h, kws.c) on the
 * reference input, prints the 12 outputs, compares them with the output torch computed
 * (kws_ref.h) and prints the instructions one inference took, from the board's FPGA
 * counter under QEMU's -icount shift=0 (one instruction = one nanosecond of the board's
 * clock). Returns 0 when every output is within 1e-5 * max |reference| of it. */
#include "kws.h"
#include "kws_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* The arena: all the model's working memory, sized by the generated header. */
static unsigned char arena[kws_ARENA_SIZE] __attribute__((aligned(kws_ARENA_ALIGN)));
static float output[kws_OUTPUT_0_SIZE];

static uint32_t counter(void) {
    return *(volatile const uint32_t *)COUNTER_ADDR;
}

int main(void) {
    _Static_assert(kws_INPUT_0_SIZE == sizeof kws_ref_input / sizeof *kws_ref_input,
                   "kws.onnx and kws_ref.h disagree on the input size");
    _Static_assert(kws_OUTPUT_0_SIZE == sizeof kws_ref_output / sizeof *kws_ref_output,
                   "kws.onnx and kws_ref.h disagree on the output size");
    printf("kiln firmware example: %s, --target %s, arena %u bytes, weights %u bytes\n", BOARD,
           KILN_TARGET, (unsigned)kws_ARENA_SIZE, (unsigned)kws_WEIGHTS_SIZE);

    uint32_t t0 = counter();
    int rc = kws_run(kws_ref_input, output, arena);
    uint32_t ticks = counter() - t0;
    if (rc != 0) {
        printf("kws_run returned %d\n", rc);
        return 1;
    }

    float ref_max = 0, err = 0;
    for (int i = 0; i < kws_OUTPUT_0_SIZE; i++) {
        ref_max = fmaxf(ref_max, fabsf(kws_ref_output[i]));
        err = fmaxf(err, fabsf(output[i] - kws_ref_output[i]));
    }
    for (int i = 0; i < kws_OUTPUT_0_SIZE; i++)
        printf("output %2d % .8e  (reference % .8e)\n", i, (double)output[i],
               (double)kws_ref_output[i]);
    /* instructions = ticks * (1e9 / COUNTER_HZ): one per nanosecond under -icount shift=0 */
    uint64_t instructions = (uint64_t)ticks * 1000000000u / COUNTER_HZ;
    printf("instructions per inference: %llu (%lu counter ticks at %lu Hz)\n",
           (unsigned long long)instructions, (unsigned long)ticks, (unsigned long)COUNTER_HZ);
    int ok = err <= 1e-5f * ref_max;
    printf("%s: max |output - reference| = %.3e, tolerance %.3e\n", ok ? "PASS" : "FAIL",
           (double)err, (double)(1e-5f * ref_max));
    return ok ? 0 : 1;
}
