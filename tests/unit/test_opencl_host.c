/* The weights array of the OpenCL host code (kn_emit_opencl_weights), printed in chunks
 * from each weight's own data, against the form it had when it was printed one byte a
 * fprintf from a copied blob: the same text, byte for byte. One case a line: weight
 * sizes in bytes, so that the blob has padding between weights, weights across the
 * printer's 4096-byte chunks, a weight the code does not read, and no weights at all. */
#include "codegen/opencl/emit_opencl.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXW = 6 };

static const struct {
    int n;
    int64_t bytes[MAXW]; /* a negative size: a constant the code does not read */
} cases[] = {
    {0, {0}},
    {1, {1}},
    {1, {64}},
    {3, {3, 100, 17}},
    {4, {4096, 1, 8191, 65}},
    {3, {5000, -300, 12289}},
    {2, {-7, 70000}},
};

/* The reference: the blob copied from the weights, then one fprintf a byte. */
static char *reference(const kn_kprog *p, const char *name, size_t *len) {
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    KN_ASSERT(f);
    size_t *woff = calloc((size_t)p->nbufs + 1, sizeof *woff);
    size_t n = kn_kprog_weight_layout(p, woff);
    unsigned char *blob = calloc(n ? n : 1, 1);
    KN_ASSERT(woff && blob);
    for (int i = 0; i < p->nbufs; i++)
        if (kn_kbuf_is_weight(p->bufs[i]))
            memcpy(blob + woff[i], p->bufs[i]->data->data, kn_kbuf_bytes(p->bufs[i]));
    fprintf(f, "static const unsigned char %s[%zu] = {", name, n ? n : 1);
    if (!n) fprintf(f, "0");
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%u,", i % 16 ? " " : "\n    ", blob[i]);
    fprintf(f, "\n};\n");
    fclose(f);
    free(blob);
    free(woff);
    return out;
}

int main(void) {
    unsigned seed = 12345;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        kn_kprog p = {0};
        p.arena = kn_arena_create();
        for (int w = 0; w < cases[c].n; w++) {
            int64_t n = cases[c].bytes[w] < 0 ? -cases[c].bytes[w] : cases[c].bytes[w];
            kn_kbuf *b = kl_buffer(&p, KB_CONST, KN_U8, 1, &n, "w");
            kn_tensor *t = kn_tensor_make(p.arena, KN_U8, 1, &n);
            KN_ASSERT(t);
            for (int64_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                ((unsigned char *)t->data)[i] = (unsigned char)(seed >> 16);
            }
            b->data = t;
            if (cases[c].bytes[w] >= 0) b->first = b->last = 0; /* read by kernel 0 */
            int64_t one = 1; /* an input between weights: no place in the blob */
            kl_buffer(&p, KB_INPUT, KN_F32, 1, &one, "x");
        }
        size_t rlen, len;
        char *ref = reference(&p, "m_weights", &rlen), *out = NULL;
        FILE *f = open_memstream(&out, &len);
        KN_ASSERT(f);
        kn_emit_opencl_weights(f, &p, "m_weights");
        fclose(f);
        bool same = len == rlen && !memcmp(out, ref, len);
        printf("case %zu: %zu bytes of text, %s\n", c, len, same ? "same" : "DIFFERENT");
        CHECK(same);
        free(out);
        free(ref);
        kn_arena_destroy(p.arena);
    }
    return TEST_DONE();
}
