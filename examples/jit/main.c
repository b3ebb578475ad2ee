/* jit_example: the host C API end to end, using nothing but kiln.h (C99).
 *
 * Loads an image classifier (examples/digits/digits.onnx), fixes its input "image" to
 * the shape of the images file, compiles it in process with the LLVM JIT, prints the
 * inputs and outputs, runs it on the images and prints the predicted classes (and the
 * accuracy with a labels file, the largest difference from reference logits with
 * --expect). With --cycles N it loads, compiles, runs and destroys N times, checking
 * that every cycle predicts the same: a leak check under LeakSanitizer.
 *
 * usage: jit_example MODEL.onnx IMAGES.npy [LABELS.npy] [--expect LOGITS.npy] [--cycles N]
 *
 * The .npy files are read by the small reader below (C order, little-endian f4 or i8). */
#include <kiln.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny .npy reader ---- */

typedef struct npy {
    char dtype[4]; /* "<f4", "<i8" */
    int rank;
    int64_t dims[8];
    size_t count;
    void *data; /* malloc'd */
} npy;

/* Reads path into *a; returns 0, or -1 after printing why. */
static int npy_read(const char *path, npy *a) {
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "rb");
    unsigned char pre[10];
    if (!f || fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "jit_example: %s is not a .npy file\n", path);
        if (f) fclose(f);
        return -1;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) { /* version 2 and 3: a 4-byte header length */
        unsigned char more[2];
        if (fread(more, 1, 2, f) != 2) hlen = 0;
        hlen |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
    }
    char *h = calloc(hlen + 1, 1);
    int bad = !h || fread(h, 1, hlen, f) != hlen;
    const char *d = bad ? NULL : strstr(h, "'descr': '");
    const char *s = bad ? NULL : strstr(h, "'shape': (");
    if (!d || !s || !strstr(h, "'fortran_order': False")) bad = 1;
    if (!bad) {
        memcpy(a->dtype, d + 10, 3);
        a->count = 1;
        for (char *p = (char *)s + 10; *p != ')' && a->rank < 8;) {
            a->dims[a->rank] = strtoll(p, &p, 10);
            a->count *= (size_t)a->dims[a->rank++];
            while (*p == ',' || *p == ' ') p++;
        }
        size_t size = a->dtype[2] - '0';
        a->data = malloc(a->count * size + 1);
        bad = !a->data || fread(a->data, size, a->count, f) != a->count;
    }
    free(h);
    fclose(f);
    if (bad) {
        fprintf(stderr, "jit_example: cannot read %s\n", path);
        free(a->data);
        a->data = NULL;
        return -1;
    }
    return 0;
}

/* ---- the example ---- */

/* Prints the API's message for a failed call and returns 1. */
static int failed(const char *what, kiln_status st) {
    fprintf(stderr, "jit_example: %s: %s (%s)\n", what, kiln_last_error(), kiln_status_string(st));
    return 1;
}

static void print_tensor(const char *kind, size_t i, const char *name, kiln_dtype dt, int rank,
                         const int64_t *dims, size_t bytes) {
    int k;
    printf("%s %d: %s %s[", kind, (int)i, name, kiln_dtype_name(dt));
    for (k = 0; k < rank; k++) printf("%s%lld", k ? "," : "", (long long)dims[k]);
    printf("] (%lu bytes)\n", (unsigned long)bytes);
}

/* Loads, compiles for images' shape and runs; logits receives the output (malloc'd).
 * Prints the model's interface when verbose. Returns 0 or 1. */
static int compile_and_run(const char *model_path, const npy *images, int verbose, float **logits,
                           size_t *nlogits) {
    kiln_model *model = NULL;
    kiln_options *opts = NULL;
    kiln_compiled *cm = NULL;
    kiln_status st;
    size_t i;
    int rc = 1;
    *logits = NULL;

    if ((st = kiln_model_load_file(model_path, &model)) != KILN_OK)
        return failed("kiln_model_load_file", st);
    if ((st = kiln_options_create(&opts)) != KILN_OK) {
        kiln_model_destroy(model);
        return failed("kiln_options_create", st);
    }
    /* the model's batch dimension is symbolic: compile for this many images */
    if ((st = kiln_options_set_input_shape(opts, "image", (size_t)images->rank, images->dims)) !=
            KILN_OK ||
        (st = kiln_options_set_opt_level(opts, 2)) != KILN_OK) {
        failed("kiln_options_set", st);
        goto done;
    }
    st = kiln_compile_jit(model, opts, &cm);
    /* the compiled model depends on neither: free them now */
    kiln_model_destroy(model);
    kiln_options_destroy(opts);
    model = NULL;
    opts = NULL;
    if (st != KILN_OK) {
        failed("kiln_compile_jit", st);
        goto done;
    }

    if (verbose) {
        for (i = 0; i < kiln_compiled_input_count(cm); i++)
            print_tensor("input", i, kiln_compiled_input_name(cm, i),
                         kiln_compiled_input_dtype(cm, i), kiln_compiled_input_rank(cm, i),
                         kiln_compiled_input_dims(cm, i), kiln_compiled_input_bytes(cm, i));
        for (i = 0; i < kiln_compiled_output_count(cm); i++)
            print_tensor("output", i, kiln_compiled_output_name(cm, i),
                         kiln_compiled_output_dtype(cm, i), kiln_compiled_output_rank(cm, i),
                         kiln_compiled_output_dims(cm, i), kiln_compiled_output_bytes(cm, i));
        printf("workspace: %lu bytes, aligned to %lu\n",
               (unsigned long)kiln_compiled_workspace_size(cm),
               (unsigned long)kiln_compiled_workspace_alignment(cm));
    }
    if (kiln_compiled_input_count(cm) != 1 || kiln_compiled_output_count(cm) != 1 ||
        kiln_compiled_input_dtype(cm, 0) != KILN_DTYPE_F32 ||
        kiln_compiled_output_dtype(cm, 0) != KILN_DTYPE_F32 ||
        kiln_compiled_input_bytes(cm, 0) != images->count * sizeof(float)) {
        fprintf(stderr,
                "jit_example: expected one f32 input of the images' size, one f32 output\n");
        goto done;
    }

    {
        /* the workspace: over-allocate and align by hand (C99 has no aligned_alloc) */
        size_t align = kiln_compiled_workspace_alignment(cm);
        size_t size = kiln_compiled_workspace_size(cm);
        unsigned char *raw = malloc(size + align);
        void *workspace = (void *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
        const void *inputs[1];
        void *outputs[1];
        *nlogits = kiln_compiled_output_bytes(cm, 0) / sizeof(float);
        *logits = malloc(kiln_compiled_output_bytes(cm, 0));
        inputs[0] = images->data;
        outputs[0] = *logits;
        if (!raw || !*logits)
            fprintf(stderr, "jit_example: out of memory\n");
        else if ((st = kiln_compiled_run(cm, inputs, outputs, workspace)) != KILN_OK)
            failed("kiln_compiled_run", st);
        else
            rc = 0;
        free(raw);
    }

done:
    kiln_compiled_destroy(cm);
    kiln_options_destroy(opts);
    kiln_model_destroy(model);
    if (rc) {
        free(*logits);
        *logits = NULL;
    }
    return rc;
}

static int argmax(const float *v, int n) {
    int best = 0, c;
    for (c = 1; c < n; c++)
        if (v[c] > v[best]) best = c;
    return best;
}

int main(int argc, char **argv) {
    const char *model = NULL, *images_path = NULL, *labels_path = NULL, *expect_path = NULL;
    long cycles = 0, c;
    int i, rc = 0, usage = 0, n, classes;
    npy images, labels, expect;
    float *logits;
    size_t nlogits;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
            cycles = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect_path = argv[++i];
        else if (!model)
            model = argv[i];
        else if (!images_path)
            images_path = argv[i];
        else if (!labels_path)
            labels_path = argv[i];
        else
            usage = 1;
    }
    if (usage || !model || !images_path) {
        fprintf(stderr, "usage: jit_example MODEL.onnx IMAGES.npy [LABELS.npy] "
                        "[--expect LOGITS.npy] [--cycles N]\n");
        return 2;
    }
    if (npy_read(images_path, &images)) return 1;
    if (strcmp(images.dtype, "<f4") != 0 || images.rank < 1) {
        fprintf(stderr, "jit_example: %s: expected float32 images\n", images_path);
        free(images.data);
        return 1;
    }

    if (compile_and_run(model, &images, 1, &logits, &nlogits)) {
        free(images.data);
        return 1;
    }
    n = (int)images.dims[0];
    classes = (int)(nlogits / (size_t)n);
    printf("predicted:");
    for (i = 0; i < n; i++) printf(" %d", argmax(logits + (size_t)i * classes, classes));
    printf("\n");

    if (labels_path && !npy_read(labels_path, &labels)) {
        int right = 0;
        if (strcmp(labels.dtype, "<i8") == 0 && labels.count == (size_t)n)
            for (i = 0; i < n; i++)
                right += argmax(logits + (size_t)i * classes, classes) ==
                         ((const int64_t *)labels.data)[i];
        printf("accuracy: %d/%d\n", right, n);
        free(labels.data);
    }
    if (expect_path && !npy_read(expect_path, &expect)) {
        double worst = INFINITY;
        size_t k;
        if (strcmp(expect.dtype, "<f4") == 0 && expect.count == nlogits)
            for (worst = 0, k = 0; k < nlogits; k++) {
                double d = fabs((double)logits[k] - ((const float *)expect.data)[k]);
                if (d > worst) worst = d;
            }
        printf("largest difference from %s: %g\n", expect_path, worst);
        if (!(worst < 1e-4)) rc = 1;
        free(expect.data);
    }

    /* the leak check: whole cycles, each must predict what the first did */
    for (c = 0; c < cycles && !rc; c++) {
        float *again;
        size_t nagain;
        if (compile_and_run(model, &images, 0, &again, &nagain))
            rc = 1;
        else if (nagain != nlogits)
            rc = 1;
        else
            for (i = 0; i < n; i++)
                if (argmax(again + (size_t)i * classes, classes) !=
                    argmax(logits + (size_t)i * classes, classes))
                    rc = 1;
        free(again);
        if (rc) fprintf(stderr, "jit_example: cycle %ld differs or failed\n", c + 1);
    }
    if (cycles) printf("%ld compile/run/destroy cycles: %s\n", cycles, rc ? "FAILED" : "ok");

    free(logits);
    free(images.data);
    return rc;
}
