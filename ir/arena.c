/* Chunked bump allocator. Small requests come from the current chunk; a request
 * larger than a quarter chunk gets a chunk of its own so big tensors waste nothing.
 * Chunks come from kn_big_alloc, so a big tensor's chunk is a mapping of its own on
 * huge pages (see arena.h). */
#include "ir/arena.h"
#include "ir/diag.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- big allocations ----
 *
 * Each block starts with a head of BIG_HEAD bytes: where its memory starts, and for a
 * mapping its length (0: the memory is calloc's). The data follows the head. A mapping
 * starts on a KN_BIG_ALLOC boundary so its huge pages line up with it; it ends on a
 * page boundary, so its last, partial huge page is small pages and wastes nothing. */

enum { BIG_HEAD = 64 };

typedef struct big_head {
    void *base;
    size_t len;
} big_head;

void *kn_big_alloc(size_t size) {
    if (size > KN_ARENA_MAX_ALLOC) return NULL;
    if (size + BIG_HEAD < KN_BIG_ALLOC) {
        unsigned char *base = calloc(1, size + 2 * BIG_HEAD);
        if (!base) return NULL;
        /* the first multiple of 64 at least BIG_HEAD past base */
        unsigned char *p =
            (unsigned char *)(((uintptr_t)base + 2 * BIG_HEAD - 1) & ~(uintptr_t)(BIG_HEAD - 1));
        *(big_head *)(p - BIG_HEAD) = (big_head){base, 0};
        return p;
    }
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    size_t len = (size + BIG_HEAD + page - 1) / page * page, huge = KN_BIG_ALLOC;
    unsigned char *m =
        mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    unsigned char *base = (unsigned char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
    if (base > m) munmap(m, (size_t)(base - m));
    size_t tail = (size_t)((m + len + huge) - (base + len));
    if (tail) munmap(base + len, tail);
#ifdef MADV_HUGEPAGE
    madvise(base, len, MADV_HUGEPAGE); /* advice only: small pages if refused */
#endif
    *(big_head *)base = (big_head){base, len};
    return base + BIG_HEAD;
}

void kn_big_free(void *p) {
    if (!p) return;
    big_head h = *(big_head *)((unsigned char *)p - BIG_HEAD);
    if (h.len)
        munmap(h.base, h.len);
    else
        free(h.base);
}

/* ---- arenas ---- */

#define CHUNK_SIZE ((size_t)1 << 16)
#define ALIGN 64

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    int dedicated;   /* holds one big request (kn_arena_release may free it) */
    max_align_t pad; /* data follows, aligned by rounding below */
} chunk;

struct kn_arena {
    chunk *head;
    size_t total;
};

kn_arena *kn_arena_create(void) {
    kn_arena *a = calloc(1, sizeof *a);
    KN_ASSERT(a);
    return a;
}

void kn_arena_destroy(kn_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        kn_big_free(c);
    }
    free(a);
}

static unsigned char *chunk_data(chunk *c) {
    uintptr_t p = (uintptr_t)(c + 1);
    return (unsigned char *)((p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
}

static chunk *new_chunk(size_t size) {
    chunk *c = kn_big_alloc(sizeof(chunk) + ALIGN + size);
    KN_ASSERT(c);
    c->size = size;
    return c;
}

void *kn_arena_alloc(kn_arena *a, size_t size) {
    if (size > KN_ARENA_MAX_ALLOC) return NULL;
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (size == 0) size = ALIGN;
    a->total += size;
    if (size > CHUNK_SIZE / 4) {
        chunk *c = new_chunk(size);
        c->used = size;
        c->dedicated = 1;
        if (a->head) { /* keep the current small-object chunk at the head */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            a->head = c;
        }
        return chunk_data(c);
    }
    if (!a->head || a->head->size - a->head->used < size) {
        chunk *c = new_chunk(CHUNK_SIZE);
        c->next = a->head;
        a->head = c;
    }
    void *p = chunk_data(a->head) + a->head->used;
    a->head->used += size;
    return p;
}

bool kn_arena_release(kn_arena *a, const void *p) {
    if (!a || !p || !a->head) return false;
    for (chunk **link = &a->head; *link; link = &(*link)->next) {
        chunk *c = *link;
        if (!c->dedicated || chunk_data(c) != p) continue;
        *link = c->next;
        a->total -= c->size;
        kn_big_free(c);
        return true;
    }
    return false;
}

void *kn_arena_detach(kn_arena *a, const void *p) {
    if (!a || !p || !a->head) return NULL;
    for (chunk **link = &a->head; *link; link = &(*link)->next) {
        chunk *c = *link;
        if (!c->dedicated || chunk_data(c) != p) continue;
        *link = c->next;
        a->total -= c->size;
        c->next = NULL;
        return c;
    }
    return NULL;
}

void kn_arena_attach(kn_arena *a, void *block) {
    chunk *c = block;
    KN_ASSERT(c && c->dedicated && !c->next);
    a->total += c->size;
    if (a->head) { /* keep the current small-object chunk at the head */
        c->next = a->head->next;
        a->head->next = c;
    } else {
        a->head = c;
    }
}

void kn_arena_block_free(void *block) {
    kn_big_free(block);
}

void *kn_arena_array(kn_arena *a, size_t n, size_t size) {
    if (size && n > KN_ARENA_MAX_ALLOC / size) return NULL;
    return kn_arena_alloc(a, n * size);
}

char *kn_arena_strndup(kn_arena *a, const char *s, size_t n) {
    char *d = kn_arena_alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *kn_arena_strdup(kn_arena *a, const char *s) {
    return kn_arena_strndup(a, s, strlen(s));
}

size_t kn_arena_used(const kn_arena *a) {
    return a->total;
}
