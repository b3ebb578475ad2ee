/* A user's program built against an installed kiln (tests/install): the digits model
 * compiled twice by kiln_add_model() (48 images at once, and one image for a Cortex-M4
 * target), both run on one arena from kiln_add_arena(). Prints the accuracy of each.
 * usage: consumer IMAGES.npy LABELS.npy */
#include "model_arena.h" /* includes digits48.h and digits1.h */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sizes CMake read at configure time are the generated headers' */
_Static_assert(CMAKE_DIGITS48_ARENA == digits48_ARENA_SIZE, "digits48 arena");
_Static_assert(CMAKE_DIGITS1_ARENA == digits1_ARENA_SIZE, "digits1 arena");
_Static_assert(CMAKE_DIGITS48_WEIGHTS == digits48_WEIGHTS_SIZE, "digits48 weights");
_Static_assert(CMAKE_SHARED_ARENA == model_arena_SIZE, "shared arena");
_Static_assert(model_arena_SIZE >= digits48_ARENA_SIZE && model_arena_SIZE >= digits1_ARENA_SIZE,
               "the shared arena fits both");

/* The data of a .npy file (version 1, little-endian) of `bytes` bytes, or exits. */
static void *npy_data(const char *path, size_t bytes) {
    FILE *f = fopen(path, "rb");
    unsigned char pre[10];
    if (!f || fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01", 7)) {
        fprintf(stderr, "consumer: cannot read %s\n", path);
        exit(1);
    }
    void *d = malloc(bytes);
    if (!d || fseek(f, 10 + (long)(pre[8] | pre[9] << 8), SEEK_SET) ||
        fread(d, 1, bytes, f) != bytes) {
        fprintf(stderr, "consumer: %s is short\n", path);
        exit(1);
    }
    fclose(f);
    return d;
}

static int argmax(const float *v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    enum { N = 48, C = 10 };
    float *images = npy_data(argv[1], sizeof(float) * digits48_INPUT_0_SIZE);
    int64_t *labels = npy_data(argv[2], sizeof(int64_t) * N);
    static float logits[digits48_OUTPUT_0_SIZE];
    if (digits48_run(images, logits, model_arena)) return 1;
    int ok48 = 0, ok1 = 0, agree = 0;
    for (int i = 0; i < N; i++) {
        float one[C];
        if (digits1_run(images + i * 64, one, model_arena)) return 1;
        ok48 += argmax(logits + i * C, C) == labels[i];
        ok1 += argmax(one, C) == labels[i];
        agree += argmax(one, C) == argmax(logits + i * C, C);
    }
    printf("digits48 accuracy: %d/%d\ndigits1 accuracy: %d/%d\nagree: %d/%d\n", ok48, N, ok1, N,
           agree, N);
    printf("arena %d bytes (digits48 %d, digits1 %d)\n", (int)model_arena_SIZE,
           (int)digits48_ARENA_SIZE, (int)digits1_ARENA_SIZE);
    free(images);
    free(labels);
    return ok48 == N && ok1 == N ? 0 : 1;
}
