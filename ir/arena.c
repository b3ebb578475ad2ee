/* Chunked bump allocator. Small requests come from the current chunk; a request
 * larger than a quarter chunk gets a chunk of its own so big tensors waste nothing. */
#include "ir/arena.h"
#include "ir/diag.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
        free(c);
    }
    free(a);
}

static unsigned char *chunk_data(chunk *c) {
    uintptr_t p = (uintptr_t)(c + 1);
    return (unsigned char *)((p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
}

static chunk *new_chunk(size_t size) {
    chunk *c = calloc(1, sizeof(chunk) + ALIGN + size);
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
        free(c);
        return true;
    }
    return false;
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
