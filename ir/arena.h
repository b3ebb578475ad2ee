/* Arena allocation: the graph IR, interpreter tensors and scratch memory live in
 * arenas and are never freed one by one. An arena is a list of chunks; memory is
 * zero-initialized; kn_arena_destroy() releases all of it. Allocation failure is a
 * broken invariant on this host (KN_ASSERT), except for huge requests, which return
 * NULL so a caller can report a model whose tensors are too large. */
#ifndef KN_ARENA_H
#define KN_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kn_arena kn_arena;

/* Returns a new arena; destroy with kn_arena_destroy(). */
kn_arena *kn_arena_create(void);
void kn_arena_destroy(kn_arena *a);
/* Zeroed memory aligned to 64 bytes, or NULL if size exceeds KN_ARENA_MAX_ALLOC.
 * Owned by the arena. */
void *kn_arena_alloc(kn_arena *a, size_t size);
/* Like kn_arena_alloc(n * size), NULL on overflow. */
void *kn_arena_array(kn_arena *a, size_t n, size_t size);
char *kn_arena_strdup(kn_arena *a, const char *s);
char *kn_arena_strndup(kn_arena *a, const char *s, size_t n);
/* Frees the memory of p at once if p came from a request that got a chunk of its own
 * (larger than a quarter chunk, 16 KiB); returns whether it did. Smaller requests
 * stay until kn_arena_destroy(). For big data that nothing reads any more (weights a
 * compiled program has copied), so a compile need not hold them twice. */
bool kn_arena_release(kn_arena *a, const void *p);
/* Takes p out of a, like kn_arena_release, but without freeing it: p's memory (its
 * chunk of its own) now belongs to the caller, who frees it with kn_arena_block_free()
 * on the returned handle; p stays where it is. NULL (and a unchanged) if p did not get
 * a chunk of its own. For a compiled program that keeps big weights where the compile
 * made them instead of copying them (the JIT, #16). */
void *kn_arena_detach(kn_arena *a, const void *p);
/* Gives a block from kn_arena_detach() (of any arena) to a: its data, at the same
 * address, is a's until kn_arena_release() or kn_arena_destroy(). */
void kn_arena_attach(kn_arena *a, void *block);
void kn_arena_block_free(void *block);
/* Total bytes handed out (for limits and reports). */
size_t kn_arena_used(const kn_arena *a);

/* Memory for big data (weights, their packed copies): zeroed, 64-byte aligned, NULL
 * when the system has none. From KN_BIG_ALLOC bytes up it is its own mapping, laid on
 * 2 MiB boundaries and advised for transparent huge pages (MADV_HUGEPAGE, where the
 * kernel offers them on request): a compile touches each byte of hundreds of MB of
 * weights once or twice, and in 4 KiB pages the page faults cost more than the copies
 * (#16, compile time). Smaller requests are calloc's. Free with kn_big_free(). */
void *kn_big_alloc(size_t size);
void kn_big_free(void *p);
#define KN_BIG_ALLOC ((size_t)2 << 20)

/* 8 GiB: no single tensor of a supported model is larger. */
#define KN_ARENA_MAX_ALLOC ((size_t)1 << 33)

#endif
