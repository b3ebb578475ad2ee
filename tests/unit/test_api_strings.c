/* Unit test of string tensors through the host C API (include/kiln.h, libkiln.so only):
 * tests/models/strings_mixed (x * 2 cast to text and concatenated with the string
 * input s, s cast to float and added, a RegexFullMatch on the concatenation) compiled
 * by kiln_compile_jit and run twice with different strings, then with string storage
 * too small for the concatenations. The expected values are derived by hand from the
 * ONNX operator definitions (make_strings_mixed.py writes the first set out).
 *
 * usage: test_api_strings tests/models/strings_mixed/model.onnx */
#include "kiln.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Index of the input (output) named name, or -1. */
static long find(const kiln_compiled *c, int output, const char *name) {
    size_t n = output ? kiln_compiled_output_count(c) : kiln_compiled_input_count(c);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(output ? kiln_compiled_output_name(c, i) : kiln_compiled_input_name(c, i),
                    name))
            return (long)i;
    return -1;
}

typedef struct run_case {
    const char *s[6];   /* the string input */
    const char *cat[6]; /* StringConcat(str(x * 2), s) */
    float z[6];         /* float(s) + x * 2 */
    int m[6];           /* RegexFullMatch(cat, '-?[0-9.]+'), or -1: not checked */
    kiln_status status; /* of the run */
    const char *msg;    /* in kiln_last_error() */
} run_case;

static const float X[6] = {1.5f, -2.0f, 0.25f, 3.0f, 0.0f, 10.0f}; /* x * 2: 3 -4 0.5 6 0 20 */

static void run(kiln_compiled *c, const run_case *k) {
    long ix = find(c, 0, "x"), is = find(c, 0, "s");
    long ocat = find(c, 1, "cat"), oz = find(c, 1, "z"), om = find(c, 1, "m");
    CHECK(ix >= 0 && is >= 0 && ocat >= 0 && oz >= 0 && om >= 0);
    if (ix < 0 || is < 0 || ocat < 0 || oz < 0 || om < 0) return;
    const char *cat[6] = {0};
    float z[6] = {0};
    unsigned char m[6] = {0};
    const void *in[2];
    void *out[3];
    in[ix] = X;
    in[is] = k->s;
    out[ocat] = (void *)cat;
    out[oz] = z;
    out[om] = m;
    size_t ws = kiln_compiled_workspace_size(c), al = kiln_compiled_workspace_alignment(c);
    unsigned char *raw = malloc(ws + al), *w = raw + (al - (uintptr_t)raw % al) % al;
    CHECK(kiln_compiled_run(c, in, out, w) == k->status);
    CHECK(strstr(kiln_last_error(), k->msg) != NULL);
    for (int i = 0; i < 6; i++) {
        CHECK(cat[i] && !strcmp(cat[i], k->cat[i]));
        if (!cat[i] || strcmp(cat[i], k->cat[i]))
            fprintf(stderr, "  cat[%d] = '%s', expected '%s'\n", i, cat[i] ? cat[i] : "(null)",
                    k->cat[i]);
        CHECK(z[i] == k->z[i]);
        if (k->m[i] >= 0) CHECK(m[i] == k->m[i]);
    }
    free(raw);
}

int main(int argc, char **argv) {
    if (argc != 2) return fprintf(stderr, "usage: test_api_strings MODEL\n"), 2;
    kiln_model *md = NULL;
    CHECK(kiln_model_load_file(argv[1], &md) == KILN_OK);
    if (!md) return TEST_DONE();

    kiln_compiled *c = NULL;
    CHECK(kiln_compile_jit(md, NULL, &c) == KILN_OK); /* refused before 2026-12-06 */
    if (!c) {
        fprintf(stderr, "  %s\n", kiln_last_error());
        kiln_model_destroy(md);
        return TEST_DONE();
    }
    long is = find(c, 0, "s"), ocat = find(c, 1, "cat");
    CHECK(is >= 0 && kiln_compiled_input_dtype(c, (size_t)is) == KILN_DTYPE_STRING);
    CHECK(is >= 0 && kiln_compiled_input_bytes(c, (size_t)is) == 6 * sizeof(char *));
    CHECK(ocat >= 0 && kiln_compiled_output_dtype(c, (size_t)ocat) == KILN_DTYPE_STRING);
    CHECK(ocat >= 0 && kiln_compiled_output_bytes(c, (size_t)ocat) == 6 * sizeof(char *));
    CHECK(kiln_dtype_size(KILN_DTYPE_STRING) == sizeof(char *));

    static const run_case first = {
        {"1.5", "-2", "3e1", "0.125", "7", "-0.5"},
        {"3.01.5", "-4.0-2", "0.53e1", "6.00.125", "0.07", "20.0-0.5"},
        {4.5f, -6.0f, 30.5f, 6.125f, 7.0f, 19.5f},
        {1, 0, 0, 1, 1, 0},
        KILN_OK,
        "",
    };
    /* non-numeric text casts to 0; e-acute is two bytes of UTF-8 */
    static const run_case second = {
        {"2", "\xc3\xa9", "x", "-1", "0", "1e-1"},
        {"3.02", "-4.0\xc3\xa9", "0.5x", "6.0-1", "0.00", "20.01e-1"},
        {5.0f, -4.0f, 0.5f, 5.0f, 0.0f, 20.1f},
        {1, 0, 0, 0, 1, 0},
        KILN_OK,
        "",
    };
    run(c, &first);
    run(c, &second);
    kiln_compiled_destroy(c);

    /* storage of 5 bytes: each concatenation cut to 4 characters, the run finishes */
    kiln_options *o = NULL;
    CHECK(kiln_options_create(&o) == KILN_OK);
    CHECK(kiln_options_set_max_string_bytes(o, 0) == KILN_EINVAL);
    CHECK(kiln_options_set_max_string_bytes(NULL, 5) == KILN_EINVAL);
    CHECK(kiln_options_set_max_string_bytes(o, 5) == KILN_OK);
    c = NULL;
    CHECK(kiln_compile_jit(md, o, &c) == KILN_OK);
    static const run_case cut = {
        {"1.5", "-2", "3e1", "0.125", "7", "-0.5"},
        {"3.01", "-4.0", "0.53", "6.00", "0.07", "20.0"},
        {4.5f, -6.0f, 30.5f, 6.125f, 7.0f, 19.5f},
        {-1, -1, -1, -1, -1, -1},
        KILN_ELIMIT,
        "kiln_options_set_max_string_bytes()",
    };
    if (c) run(c, &cut);
    kiln_compiled_destroy(c);
    kiln_options_destroy(o);
    kiln_model_destroy(md);
    return TEST_DONE();
}
