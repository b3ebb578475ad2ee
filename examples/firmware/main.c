/* The example firmware: runs the keyword-spotting model kiln compiled, in float (kws.h,
 * kws.c) and in int8 (kws_int8.h, kws_int8.c: the QDQ model make_qdq.py writes), on the
 * reference input, in one arena the two share (kws_arena.h, from kiln_add_arena: they never
 * run at the same time). It prints the outputs next to the references (kws_ref.h: torch's
 * float output; kws_int8_ref.h: the integer operators' output, computed with numpy) and the
 * instructions each inference took, from the board's FPGA counter under QEMU's
 * -icount shift=0 (one instruction = one nanosecond of the board's clock). Returns 0 when
 * every float output is within 1e-5 * max |reference| and every int8 output is equal. */
#include "kws.h"
#include "kws_arena.h"
#include "kws_int8.h"
#include "kws_int8_ref.h"
#include "kws_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static float output[kws_OUTPUT_0_SIZE];
static int8_t output_int8[kws_int8_OUTPUT_0_SIZE];

static uint32_t counter(void) {
    return *(volatile const uint32_t *)COUNTER_ADDR;
}

/* instructions = ticks * (1e9 / COUNTER_HZ): one per nanosecond under -icount shift=0 */
static void print_count(const char *what, uint32_t ticks) {
    uint64_t instructions = (uint64_t)ticks * 1000000000u / COUNTER_HZ;
    printf("%sinstructions per inference: %llu (%lu counter ticks at %lu Hz)\n", what,
           (unsigned long long)instructions, (unsigned long)ticks, (unsigned long)COUNTER_HZ);
}

int main(void) {
    _Static_assert(kws_INPUT_0_SIZE == sizeof kws_ref_input / sizeof *kws_ref_input,
                   "kws.onnx and kws_ref.h disagree on the input size");
    _Static_assert(kws_OUTPUT_0_SIZE == sizeof kws_ref_output / sizeof *kws_ref_output,
                   "kws.onnx and kws_ref.h disagree on the output size");
    _Static_assert(kws_int8_INPUT_0_SIZE == kws_INPUT_0_SIZE, "the int8 model's input differs");
    _Static_assert(kws_int8_OUTPUT_0_SIZE ==
                       sizeof kws_ref_output_int8 / sizeof *kws_ref_output_int8,
                   "kws_int8.onnx and kws_int8_ref.h disagree on the output size");
    printf("kiln firmware example: %s, --target %s, arena %u bytes (float %u, int8 %u), "
           "weights %u bytes (float), %u bytes (int8)\n",
           BOARD, KILN_TARGET, (unsigned)kws_arena_SIZE, (unsigned)kws_ARENA_SIZE,
           (unsigned)kws_int8_ARENA_SIZE, (unsigned)kws_WEIGHTS_SIZE,
           (unsigned)kws_int8_WEIGHTS_SIZE);

    /* float */
    uint32_t t0 = counter();
    int rc = kws_run(kws_ref_input, output, kws_arena);
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
    print_count("", ticks);
    int ok = err <= 1e-5f * ref_max;
    printf("%s: max |output - reference| = %.3e, tolerance %.3e\n", ok ? "PASS" : "FAIL",
           (double)err, (double)(1e-5f * ref_max));

    /* int8 */
    t0 = counter();
    rc = kws_int8_run(kws_ref_input, output_int8, kws_arena);
    ticks = counter() - t0;
    if (rc != 0) {
        printf("kws_int8_run returned %d\n", rc);
        return 1;
    }
    int differ = 0;
    for (int i = 0; i < kws_int8_OUTPUT_0_SIZE; i++) {
        differ += output_int8[i] != kws_ref_output_int8[i];
        printf("int8 output %2d %4d  (reference %4d)\n", i, output_int8[i], kws_ref_output_int8[i]);
    }
    print_count("int8 ", ticks);
    printf("%s: int8 outputs equal to the reference: %d of %d\n", differ ? "FAIL" : "PASS",
           kws_int8_OUTPUT_0_SIZE - differ, kws_int8_OUTPUT_0_SIZE);
    return ok && !differ ? 0 : 1;
}
