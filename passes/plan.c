/* Static memory planning of a kernel IR program.
 * requires: lowered program (buffer lifetimes set by the builder); breaks: nothing.
 *
 * 1. In place: the output of an elementwise node (OPF_ELEMWISE) takes the storage of
 *    an input temporary of the same shape and byte size that dies in that kernel,
 *    since element i is read before it is written and by that element only.
 * 2. Offsets: temporaries and kernel scratch buffers are placed greedily, largest
 *    first, at the lowest 64-byte aligned offset that overlaps no buffer whose
 *    lifetime [first, last] (in kernels) intersects its own (as TFLite's greedy
 *    by-size planner does). The arena size is the highest end; the lower bound is
 *    the largest total of bytes live in any one kernel, each buffer counted with its
 *    size rounded up to the 64-byte alignment every placement must respect. */
#include "ir/kir.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

static size_t buf_bytes(const kn_kbuf *b) {
    return (size_t)b->numel * kn_dtype_get(b->dtype)->size;
}

/* Every buffer starts on a KN_ARENA_ALIGN boundary, so it occupies its size rounded up. */
static size_t aligned(size_t n) {
    return (n + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
}

static bool planned(const kn_kbuf *b) {
    return (b->kind == KB_TEMP || b->kind == KB_SCRATCH) && !b->alias;
}

static void in_place(kn_kprog *p) {
    for (int k = 0; k < p->nkernels; k++) {
        const kn_node *n = p->kernels[k]->node;
        if (!n || !(kn_op_desc(n->op)->flags & OPF_ELEMWISE)) continue;
        kn_kbuf *out = NULL, *cand = NULL;
        for (int i = 0; i < p->nbufs; i++) { /* the node's output temp: first use here */
            kn_kbuf *b = p->bufs[i];
            if (b->kind == KB_TEMP && b->first == k && b->onnx && n->nout > 0 && n->out[0] &&
                !strcmp(b->onnx, n->out[0]->name))
                out = b;
        }
        if (!out) continue;
        for (int j = 0; j < n->nin && !cand; j++) {
            if (!n->in[j]) continue;
            for (int i = 0; i < p->nbufs; i++) {
                kn_kbuf *b = p->bufs[i];
                if (b == out || b->kind != KB_TEMP || !b->onnx || strcmp(b->onnx, n->in[j]->name))
                    continue;
                kn_kbuf *r = kn_kbuf_storage(b);
                if (b->last == k && r->last <= k && buf_bytes(b) == buf_bytes(out) &&
                    b->rank == out->rank &&
                    !memcmp(b->dims, out->dims, sizeof(int64_t) * (size_t)b->rank))
                    cand = b;
            }
        }
        if (cand) {
            kn_kbuf *r = kn_kbuf_storage(cand);
            out->alias = r;
            if (out->last > r->last) r->last = out->last;
        }
    }
    /* a buffer aliased to a root extends the root's lifetime (done above) */
}

static int by_size(const void *a, const void *b) {
    size_t x = buf_bytes(*(kn_kbuf *const *)a), y = buf_bytes(*(kn_kbuf *const *)b);
    if (x != y) return x < y ? 1 : -1;
    return (*(kn_kbuf *const *)a)->id - (*(kn_kbuf *const *)b)->id; /* deterministic */
}

kn_status kn_plan_memory(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    in_place(p);
    kn_kbuf **v = calloc((size_t)p->nbufs + 1, sizeof *v);
    KN_ASSERT(v);
    int n = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (planned(p->bufs[i]) && p->bufs[i]->first >= 0) v[n++] = p->bufs[i];
    qsort(v, (size_t)n, sizeof *v, by_size);
    size_t end = 0;
    for (int i = 0; i < n; i++) {
        kn_kbuf *b = v[i];
        size_t size = buf_bytes(b), off = 0;
        /* lowest offset clear of every placed, lifetime-overlapping buffer: try 0 and the
         * end of each conflicting one, in increasing order */
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < i; j++) {
                kn_kbuf *o = v[j];
                if (o->last < b->first || b->last < o->first) continue;
                size_t os = buf_bytes(o);
                if (off < o->offset + os && o->offset < off + size) {
                    off = (o->offset + os + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
                    moved = true;
                }
            }
        }
        b->offset = off;
        if (off + size > end) end = off + size;
    }
    size_t bound = 0;
    for (int k = 0; k < p->nkernels; k++) {
        size_t live = 0;
        for (int i = 0; i < n; i++)
            if (v[i]->first <= k && k <= v[i]->last) live += aligned(buf_bytes(v[i]));
        if (live > bound) bound = live;
    }
    free(v);
    p->arena_size = (end + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    p->arena_lower_bound = bound;
    return KN_OK;
}
