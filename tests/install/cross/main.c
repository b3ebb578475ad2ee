/* Firmware-style use of two compiled models sharing one arena (built, not run: the
 * QEMU boards are examples/firmware's). */
#include "fw_arena.h"

static float image[digits_INPUT_0_SIZE];
static float out[digits_OUTPUT_0_SIZE];

int main(void) {
    int rc = digits_run(image, out, fw_arena);
    return rc | digits_obj_run(image, out, fw_arena);
}
