/* Walking and rewriting the kernel IR: one visitor for every analysis and pass, so
 * none writes its own recursion over the statement kinds (see kir.h).
 *
 * kn_kwalk visits statements in program order (enter before the children, leave
 * after) and every expression node children first; kn_kx_map rebuilds an expression
 * bottom-up, copying a node only when a child or the callback changed it;
 * kn_ks_clone deep-copies a statement tree, giving every loop index and local it
 * declares a fresh variable so the copy can sit next to the original (loop tails,
 * unrolled bodies). Buffer uses and lifetimes (kn_kernel_uses, kn_kprog_lifetimes)
 * are computed here from the statements themselves, so a pass that merges, splits or
 * rewrites kernels keeps the memory plan right. */
#include "ir/kir.h"
#include "ir/lower_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void walk_x(kn_kwalker *w, kn_kx *x) {
    if (!x) return;
    for (int i = 0; i < 3; i++) walk_x(w, x->a[i]);
    w->expr(w, x);
}

void kn_kwalk(kn_kwalker *w, kn_ks *s) {
    if (!s) return;
    if (w->enter && !w->enter(w, s)) return;
    if (w->expr) {
        kn_kx *xs[] = {s->ext, s->index, s->value, s->cond, s->src_index, s->count};
        for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) walk_x(w, xs[i]);
    }
    for (int i = 0; i < s->n; i++) kn_kwalk(w, s->body[i]);
    if (w->leave) w->leave(w, s);
}

typedef struct io_walk {
    kn_kwalker w;
    kn_kbuf *x, *x2, *y;
    bool bad;
} io_walk;

static bool io_enter(kn_kwalker *w, kn_ks *s) {
    io_walk *W = (io_walk *)w;
    if (s->kind == KS_COPY) W->bad = true;
    if (s->kind == KS_STORE) {
        if (W->y && W->y != s->buf) W->bad = true;
        W->y = s->buf;
    }
    return true;
}

static void io_expr(kn_kwalker *w, kn_kx *x) {
    io_walk *W = (io_walk *)w;
    if (x->op != KX_LOAD || x->buf == W->x) return;
    if (!W->x) {
        W->x = x->buf;
        return;
    }
    if (W->x2 && W->x2 != x->buf) W->bad = true;
    W->x2 = x->buf;
}

bool kn_kernel_io(kn_ks *s, kn_kbuf **x, kn_kbuf **x2, kn_kbuf **y) {
    io_walk W = {.w = {.enter = io_enter, .expr = io_expr}};
    kn_kwalk(&W.w, s);
    *x = W.x, *x2 = W.x2, *y = W.y;
    return !W.bad;
}

kn_kx *kn_kx_map(kn_kprog *p, kn_kx *x, kn_kx *(*fn)(void *user, kn_kx *x), void *user) {
    if (!x) return NULL;
    kn_kx *a[3];
    bool changed = false;
    for (int i = 0; i < 3; i++) {
        a[i] = kn_kx_map(p, x->a[i], fn, user);
        changed |= a[i] != x->a[i];
    }
    kn_kx *y = x;
    if (changed) {
        y = kn_arena_alloc(p->arena, sizeof *y);
        KN_ASSERT(y);
        *y = *x;
        memcpy(y->a, a, sizeof a);
    }
    kn_kx *r = fn ? fn(user, y) : y;
    return r ? r : y;
}

bool kn_kx_equal(const kn_kx *a, const kn_kx *b) {
    if (a == b) return true;
    if (!a || !b || a->op != b->op || a->dtype != b->dtype || kx_lanes(a) != kx_lanes(b) ||
        a->i != b->i || a->stride != b->stride || memcmp(&a->f, &b->f, sizeof a->f) ||
        a->var != b->var || a->buf != b->buf ||
        (a->text != b->text && (!a->text || !b->text || strcmp(a->text, b->text))))
        return false;
    for (int i = 0; i < 3; i++)
        if (!kn_kx_equal(a->a[i], b->a[i])) return false;
    return true;
}

/* ---- cloning ---- */

typedef struct clone_ctx {
    kn_kprog *p;
    int *map; /* new variable of each old one declared inside (-1: keep) */
} clone_ctx;

static int new_var(kn_kprog *p, int like) {
    kn_lower L = {.p = p};
    int v = kl_new_var(&L, p->var_dtype[like]);
    p->var_lanes[v] = p->var_lanes[like];
    return v;
}

static kn_kx *rename_x(void *user, kn_kx *x) {
    clone_ctx *C = user;
    if (x->op != KX_VAR || C->map[x->var] < 0) return x;
    kn_kx *y = kn_arena_alloc(C->p->arena, sizeof *y);
    KN_ASSERT(y);
    *y = *x;
    y->var = C->map[x->var];
    return y;
}

static kn_kx *clone_x(clone_ctx *C, kn_kx *x) {
    if (!x) return NULL;
    /* copy every node: the clone shares no expression with the original, so a pass
     * may rewrite either in place */
    kn_kx *y = kn_arena_alloc(C->p->arena, sizeof *y);
    KN_ASSERT(y);
    *y = *x;
    for (int i = 0; i < 3; i++) y->a[i] = clone_x(C, x->a[i]);
    return rename_x(C, y);
}

static kn_ks *clone_s(clone_ctx *C, const kn_ks *s) {
    if (!s) return NULL;
    kn_ks *t = kn_arena_alloc(C->p->arena, sizeof *t);
    KN_ASSERT(t);
    *t = *s;
    if (s->kind == KS_FOR || s->kind == KS_DECL) C->map[s->var] = new_var(C->p, s->var);
    if (s->kind == KS_FOR || s->kind == KS_DECL || s->kind == KS_SET)
        t->var = C->map[s->var] >= 0 ? C->map[s->var] : s->var;
    t->ext = clone_x(C, s->ext);
    t->index = clone_x(C, s->index);
    t->value = clone_x(C, s->value);
    t->cond = clone_x(C, s->cond);
    t->src_index = clone_x(C, s->src_index);
    t->count = clone_x(C, s->count);
    if (s->n) {
        int cap = s->cap > s->n ? s->cap : s->n;
        t->body = kn_arena_array(C->p->arena, (size_t)cap, sizeof *t->body);
        KN_ASSERT(t->body);
        t->cap = cap;
        for (int i = 0; i < s->n; i++) t->body[i] = clone_s(C, s->body[i]);
    }
    return t;
}

kn_ks *kn_ks_clone(kn_kprog *p, const kn_ks *s) {
    /* variables created while cloning are never in the map: size it for the old ones */
    int n = p->nvars;
    clone_ctx C = {.p = p, .map = malloc(((size_t)n + 1) * sizeof *C.map)};
    KN_ASSERT(C.map);
    for (int i = 0; i < n; i++) C.map[i] = -1;
    kn_ks *t = clone_s(&C, s);
    free(C.map);
    return t;
}

/* ---- buffer uses and lifetimes ---- */

typedef struct uses_ctx {
    kn_kwalker w;
    unsigned char *use;
} uses_ctx;

static bool uses_enter(kn_kwalker *w, kn_ks *s) {
    uses_ctx *U = (uses_ctx *)w;
    if (s->kind == KS_STORE || s->kind == KS_COPY) U->use[s->buf->id] |= 2;
    if (s->kind == KS_COPY) U->use[s->src->id] |= 1;
    return true;
}

static void uses_expr(kn_kwalker *w, kn_kx *x) {
    if (x->op == KX_LOAD || x->op == KX_STR) ((uses_ctx *)w)->use[x->buf->id] |= 1;
    if (x->op == KX_REGEX) ((uses_ctx *)w)->use[x->buf->id] |= 3; /* the compiled pattern */
}

void kn_kernel_uses(const kn_ks *s, unsigned char *use) {
    uses_ctx U = {.w = {.enter = uses_enter, .expr = uses_expr}, .use = use};
    kn_kwalk(&U.w, (kn_ks *)s);
}

/* ---- variables ---- */

typedef struct vars_ctx {
    kn_kwalker w;
    unsigned char *v;
} vars_ctx;

static bool declared_enter(kn_kwalker *w, kn_ks *s) {
    if (s->kind == KS_FOR || s->kind == KS_DECL)
        ((vars_ctx *)w)->v[s->var] = s->kind == KS_FOR ? 1 : 2;
    return true;
}

void kn_ks_declared_vars(const kn_ks *s, unsigned char *v) {
    vars_ctx V = {.w = {.enter = declared_enter}, .v = v};
    kn_kwalk(&V.w, (kn_ks *)s);
}

static bool used_enter(kn_kwalker *w, kn_ks *s) {
    if (s->kind == KS_SET) ((vars_ctx *)w)->v[s->var] = 1;
    return true;
}

static void used_expr(kn_kwalker *w, kn_kx *x) {
    if (x->op == KX_VAR) ((vars_ctx *)w)->v[x->var] = 1;
}

void kn_ks_used_vars(const kn_ks *s, unsigned char *v) {
    vars_ctx V = {.w = {.enter = used_enter, .expr = used_expr}, .v = v};
    kn_kwalk(&V.w, (kn_ks *)s);
}

int *kn_kprog_readers(const kn_kprog *p) {
    if (!p->release_constants) return NULL;
    int *n = calloc((size_t)p->nbufs + 1, sizeof *n);
    unsigned char *use = malloc((size_t)p->nbufs + 1);
    KN_ASSERT(n && use);
    for (int k = 0; k < p->nkernels; k++) {
        memset(use, 0, (size_t)p->nbufs + 1);
        kn_kernel_uses(p->kernels[k]->body, use);
        for (int i = 0; i < p->nbufs; i++) n[i] += (use[i] & 1) != 0;
    }
    free(use);
    return n;
}

void kn_kprog_release_data(kn_kprog *p, kn_kbuf *b) {
    if (b->kind != KB_CONST || !b->data || !b->data->data) return;
    if (kn_arena_release(p->arena, b->data->data) ||
        kn_arena_release(p->const_arena, b->data->data))
        ((kn_tensor *)b->data)->data = NULL; /* a tensor of p or of its graph */
}

void *kn_kprog_take_data(kn_kprog *p, kn_kbuf *b) {
    if (b->kind != KB_CONST || !b->data || !b->data->data) return NULL;
    void *block = kn_arena_detach(p->arena, b->data->data);
    if (!block) block = kn_arena_detach(p->const_arena, b->data->data);
    if (block) ((kn_tensor *)b->data)->data = NULL;
    return block;
}

void kn_kprog_rewritten(kn_kprog *p, int *readers, int k, const kn_ks *old) {
    if (!readers) return;
    /* readers counts the buffers that existed when it was made; later ones are new */
    unsigned char *was = calloc((size_t)p->nbufs + 1, 1), *now = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(was && now);
    kn_kernel_uses(old, was);
    kn_kernel_uses(p->kernels[k]->body, now);
    for (int i = 0; i < p->nbufs; i++)
        if ((was[i] & 1) && !(now[i] & 1) && readers[i] > 0 && --readers[i] == 0)
            kn_kprog_release_data(p, p->bufs[i]);
    free(was);
    free(now);
}

void kn_kprog_lifetimes(kn_kprog *p) {
    unsigned char *use = malloc((size_t)p->nbufs + 1);
    KN_ASSERT(use);
    for (int i = 0; i < p->nbufs; i++) p->bufs[i]->first = p->bufs[i]->last = -1;
    for (int k = 0; k < p->nkernels; k++) {
        memset(use, 0, (size_t)p->nbufs + 1);
        kn_kernel_uses(p->kernels[k]->body, use);
        for (int i = 0; i < p->nbufs; i++) {
            if (!use[i]) continue;
            kn_kbuf *b = p->bufs[i];
            if (b->first < 0) b->first = k;
            b->last = k;
        }
    }
    if (p->status) p->status->first = 0; /* emitters zero it on entry */
    for (int i = 0; i < p->nbufs; i++) { /* string storage, the status word: to the end */
        kn_kbuf *b = p->bufs[i];
        if (b->whole_run && b->first >= 0) b->last = p->nkernels - 1;
    }
    free(use);
}

int kn_kprog_new_var(kn_kprog *p, kn_dtype t, int lanes) {
    kn_lower L = {.p = p};
    int v = kl_new_var(&L, t);
    p->var_lanes[v] = lanes > 1 ? lanes : 1;
    return v;
}

kn_ks *kn_ks_decl(kn_kprog *p, int var, kn_kx *value) {
    kn_ks *s = kn_arena_alloc(p->arena, sizeof *s);
    KN_ASSERT(s);
    s->kind = KS_DECL;
    s->var = var;
    s->dtype = p->var_dtype[var];
    s->width = p->var_lanes[var];
    s->value = value;
    return s;
}

void kn_block_insert(kn_kprog *p, kn_ks *block, int at, kn_ks *s) {
    KN_ASSERT(block->kind == KS_BLOCK && at >= 0 && at <= block->n);
    kn_lower L = {.p = p};
    kl_block_append(&L, block, s); /* grows the array */
    memmove(block->body + at + 1, block->body + at,
            (size_t)(block->n - 1 - at) * sizeof *block->body);
    block->body[at] = s;
}

bool kn_ks_task_loop(const kn_ks *s) {
    return s->kind == KS_FOR && (s->annot & KN_LOOP_PARALLEL) && s->tasks > 1 && !s->ext &&
           s->extent > 1 && s->extent <= INT32_MAX;
}

int64_t kn_ks_task_chunk(const kn_ks *s, int64_t *ntasks) {
    int64_t n = s->extent < s->tasks ? s->extent : s->tasks;
    int64_t chunk = (s->extent + n - 1) / n;
    *ntasks = (s->extent + chunk - 1) / chunk;
    return chunk;
}
