/* kiln compile --emit opencl on the corpus's strings_mixed model: string kernels (Cast
 * to and from string, StringConcat, RegexFullMatch) run on the host inside the
 * generated host code, between device kernels (Mul, Add), with the arena copied
 * between them both ways. Outputs against test_data_set_0 (written by hand from the
 * operator definitions, tests/models/make_strings_mixed.py), twice on one state (the
 * second run reuses the host memory the first one's string outputs point into); then a
 * string longer than its storage (256 bytes): status 2 (KN_STATUS_STRING_TOO_LONG) set
 * by a host kernel, with the device kernels' outputs still right. Exit code 77
 * (skipped) when there is no OpenCL device. */
#include "frontend/tensorfile.h"
#include "ir/kir.h"
#include "runtime/kn_opencl.h"
#include "strings_ocl.h"
#include "../unit/test.h"

#include <string.h>

static kn_tensor *load(kn_ctx *cx, kn_arena *a, const char *dir, const char *file) {
    char path[4096];
    kn_tensor *t = NULL;
    snprintf(path, sizeof path, "%s/test_data_set_0/%s", dir, file);
    CHECK(kn_tensorfile_read(cx, a, path, KN_KIND_TENSOR, &t) == KN_OK);
    return t;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    if (kn_opencl_probe(NULL) == KN_OPENCL_ENOPLATFORM) {
        printf("no OpenCL platform found\n");
        return 77;
    }
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    kn_tensor *x = load(&cx, a, argv[1], "input_0.pb"), *s = load(&cx, a, argv[1], "input_1.pb");
    kn_tensor *cat = load(&cx, a, argv[1], "output_0.pb"),
              *z = load(&cx, a, argv[1], "output_1.pb");
    kn_tensor *m = load(&cx, a, argv[1], "output_2.pb");
    if (test_fail) return TEST_DONE();
    CHECK(s->type.dtype == KN_STRING && cat->type.dtype == KN_STRING);
    strings_ocl_state *st = NULL;
    CHECK(strings_ocl_create(NULL, &st) == 0);
    if (!st) return TEST_DONE();
    for (int run = 0; run < 2; run++) {
        const char *got_cat[strings_ocl_OUTPUT_0_SIZE] = {0};
        float got_z[strings_ocl_OUTPUT_1_SIZE];
        uint8_t got_m[strings_ocl_OUTPUT_2_SIZE];
        memset(got_z, 0xff, sizeof got_z);
        memset(got_m, 0xff, sizeof got_m);
        CHECK(strings_ocl_run(NULL, st, x->data, (const char *const *)s->data, got_cat, got_z,
                              got_m) == 0);
        for (int i = 0; i < strings_ocl_OUTPUT_0_SIZE; i++) {
            const char *want = ((char **)cat->data)[i];
            CHECK(got_cat[i] && !strcmp(got_cat[i], want));
            CHECK(got_z[i] == ((const float *)z->data)[i]); /* exact: sums of short binaries */
            CHECK(got_m[i] == ((const uint8_t *)m->data)[i]);
        }
    }
    /* s[0] of 299 characters: "3.0" + it does not fit StringConcat's 256 bytes */
    char longs[300];
    memset(longs, '9', sizeof longs - 1);
    longs[sizeof longs - 1] = 0;
    const char *s2[strings_ocl_INPUT_1_SIZE];
    memcpy(s2, s->data, sizeof s2);
    s2[0] = longs;
    const char *got_cat[strings_ocl_OUTPUT_0_SIZE] = {0};
    float got_z[strings_ocl_OUTPUT_1_SIZE];
    uint8_t got_m[strings_ocl_OUTPUT_2_SIZE];
    CHECK(strings_ocl_run(NULL, st, x->data, s2, got_cat, got_z, got_m) ==
          KN_STATUS_STRING_TOO_LONG);
    CHECK(got_cat[1] && !strcmp(got_cat[1], ((char **)cat->data)[1]));
    CHECK(got_z[1] == ((const float *)z->data)[1]);
    CHECK(got_cat[0] && strlen(got_cat[0]) == 255 && !strncmp(got_cat[0], "3.0999", 6));
    strings_ocl_destroy(NULL, st);
    kn_arena_destroy(a);
    return TEST_DONE();
}
