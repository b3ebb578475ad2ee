/* The constant output of tests/c/const_copy.onnx, built by kiln_add_model() with the
 * host's instruction set: GCC 12.2 with AVX-512 miscompiles its copy unless
 * kiln_add_model() adds -mstore-max=128 (docs/generated-c.md). */
#include "const_copy.h"
#include "../unit/test.h"

#include <stdint.h>

int main(void) {
    static _Alignas(64) unsigned char arena[const_copy_ARENA_SIZE + 64];
    static const int32_t want[10] = {-1, 0, -1, 0, 0, 0, 0, 0, 5, 6}; /* the model's value */
    int32_t y[10] = {0};
    CHECK(const_copy_run(y, arena) == 0);
    for (int i = 0; i < 10; i++) {
        CHECK(y[i] == want[i]);
        if (y[i] != want[i]) fprintf(stderr, "y[%d] = %d, want %d\n", i, (int)y[i], (int)want[i]);
    }
    return TEST_DONE();
}
