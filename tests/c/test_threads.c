/* The generated C of the digits model, run from two threads at once with separate
 * arenas (the generated code keeps no global state), 50 times each: every run must
 * give the same logits as a single-threaded run, and those must match torch's
 * logits (examples/digits/expected_logits.npy) within rtol 1e-3 / atol 1e-5. */
#include "digits.h"
#include "frontend/tensorfile.h"
#include "../unit/test.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

typedef struct job {
    const float *images;
    const float *want;
    int mismatches;
    _Alignas(digits_ARENA_ALIGN) unsigned char arena[digits_ARENA_SIZE + 1];
    float logits[digits_OUTPUT_0_SIZE];
} job;

static void *worker(void *arg) {
    job *j = arg;
    for (int r = 0; r < 50; r++) {
        memset(j->logits, 0, sizeof j->logits);
        if (digits_run(j->images, j->logits, j->arena) != 0 ||
            memcmp(j->logits, j->want, sizeof j->logits) != 0)
            j->mismatches++;
    }
    return NULL;
}

static job jobs[3];

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    char path[4096];
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    kn_tensor *x = NULL, *torch = NULL;
    snprintf(path, sizeof path, "%s/test_images.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &x) == KN_OK);
    snprintf(path, sizeof path, "%s/expected_logits.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &torch) == KN_OK);
    if (!x || !torch) return TEST_DONE();
    /* single-threaded reference run */
    job *ref = &jobs[0];
    CHECK(digits_run(x->data, ref->logits, ref->arena) == 0);
    const float *t = torch->data;
    int bad = 0;
    for (int i = 0; i < digits_OUTPUT_0_SIZE; i++)
        bad += !(fabsf(ref->logits[i] - t[i]) <= 1e-5f + 1e-3f * fabsf(t[i]));
    CHECK(bad == 0);
    /* a misaligned arena is refused */
    CHECK(digits_run(x->data, ref->logits, ref->arena + 1) == 1);
    pthread_t th[2];
    for (int k = 1; k <= 2; k++) {
        jobs[k].images = x->data;
        jobs[k].want = ref->logits;
        CHECK(pthread_create(&th[k - 1], NULL, worker, &jobs[k]) == 0);
    }
    for (int k = 1; k <= 2; k++) {
        pthread_join(th[k - 1], NULL);
        CHECK(jobs[k].mismatches == 0);
    }
    kn_arena_destroy(a);
    return TEST_DONE();
}
