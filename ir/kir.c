/* The kernel IR builder and printer.
 *
 * The builder keeps a stack of open blocks: kl_for/kl_if/kl_while push the block
 * their body goes into, kl_end pops it. Every load, store and copy updates the
 * buffer's first/last kernel, which the memory plan turns into lifetimes. */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/epilogue.h"
#include "targets/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kn_ks *new_stmt(kn_lower *L, kn_ks_kind kind) {
    kn_ks *s = kn_arena_alloc(L->p->arena, sizeof *s);
    KN_ASSERT(s);
    s->kind = kind;
    return s;
}

kn_ks *kl_block_new(kn_lower *L) {
    return new_stmt(L, KS_BLOCK);
}

void kl_block_append(kn_lower *L, kn_ks *block, kn_ks *s) {
    if (block->n == block->cap) {
        int nc = block->cap ? block->cap * 2 : 4;
        kn_ks **b = kn_arena_array(L->p->arena, (size_t)nc, sizeof *b);
        KN_ASSERT(b);
        if (block->n) memcpy(b, block->body, (size_t)block->n * sizeof *b);
        block->body = b;
        block->cap = nc;
    }
    block->body[block->n++] = s;
}

static void append(kn_lower *L, kn_ks *s) {
    KN_ASSERT(L->depth > 0);
    kl_block_append(L, L->stack[L->depth - 1], s);
}

static void push(kn_lower *L, kn_ks *owner, kn_ks *block) {
    KN_ASSERT(L->depth < KL_MAX_DEPTH);
    L->owner[L->depth] = owner;
    L->stack[L->depth++] = block;
}

int kl_new_var(kn_lower *L, kn_dtype t) {
    kn_kprog *p = L->p;
    if (p->nvars == p->cap_vars) {
        int nc = p->cap_vars ? p->cap_vars * 2 : 64;
        kn_dtype *v = kn_arena_array(p->arena, (size_t)nc, sizeof *v);
        int *l = kn_arena_array(p->arena, (size_t)nc, sizeof *l);
        KN_ASSERT(v && l);
        if (p->nvars) {
            memcpy(v, p->var_dtype, (size_t)p->nvars * sizeof *v);
            memcpy(l, p->var_lanes, (size_t)p->nvars * sizeof *l);
        }
        p->var_dtype = v;
        p->var_lanes = l;
        p->cap_vars = nc;
    }
    p->var_dtype[p->nvars] = t;
    p->var_lanes[p->nvars] = 1;
    return p->nvars++;
}

int kl_lanes(kn_lower *L, kn_dtype t) {
    int bits = L->target ? L->target->vector_bits : 0;
    int lanes = bits / (8 * (int)kn_dtype_get(t)->size);
    return lanes > 1 ? lanes : 1;
}

bool kl_register_tiles(kn_lower *L) {
    return L->target && L->target->kind != KN_TARGET_GPU;
}

bool kl_fma_scalar(kn_lower *L) {
    return L->target && L->target->fma_scalar;
}

int kl_vector_registers(kn_lower *L) {
    int n = L->target ? L->target->vector_registers : 0;
    return n > 0 ? n : 16;
}

static void use(kn_lower *L, kn_kbuf *b) {
    if (b->first < 0 || b->first > L->kidx) b->first = L->kidx;
    if (b->last < L->kidx) b->last = L->kidx;
}

void kl_contract(kn_lower *L, const kn_contract *c) {
    /* only a node that is its kernel's whole body describes it: not one lowered inline in
     * a subgraph, nor one inside a loop or branch of its kernel */
    if (L->subgraph || L->depth != 1) return;
    kn_contract *d = kn_arena_alloc(L->p->arena, sizeof *d);
    KN_ASSERT(d);
    *d = *c;
    if (c->epi) {
        kn_epilogue *e = kn_arena_alloc(L->p->arena, sizeof *e);
        KN_ASSERT(e);
        *e = *c->epi;
        d->epi = e;
    }
    L->p->kernels[L->kidx]->contract = d;
}

kn_lower *kl_builder_rewrite(kn_ctx *cx, kn_kprog *p, int k) {
    kn_lower *L = calloc(1, sizeof *L);
    KN_ASSERT(L && k >= 0 && k < p->nkernels);
    L->cx = cx;
    L->p = p;
    L->kidx = k;
    L->target = p->target;
    kn_kernel *kern = p->kernels[k];
    kern->body = kl_block_new(L);
    kern->disjoint = false; /* the new body's builder states its own (kn_kernel) */
    kern->staged_in = kern->staged_out = NULL;
    L->stack[0] = kern->body;
    L->owner[0] = NULL;
    L->depth = 1;
    return L;
}

void kl_want_sched(kn_lower *L, const kn_sched *s) {
    L->want = s;
}

const kn_sched *kl_wanted_sched(kn_lower *L) {
    return L->subgraph ? NULL : L->want;
}

kn_sched *kl_sched_record(kn_lower *L) {
    if (L->subgraph || L->depth != 1 || L->kidx < 0 || L->kidx >= L->p->nkernels) return NULL;
    return &L->p->kernels[L->kidx]->sched;
}

kn_lower *kl_builder(kn_ctx *cx, kn_kprog *p) {
    kn_lower *L = calloc(1, sizeof *L);
    KN_ASSERT(L);
    L->cx = cx;
    L->p = p;
    L->target = p->target;
    return L;
}

void kl_builder_destroy(kn_lower *L) {
    free(L);
}

kn_ctx *kl_ctx(kn_lower *L) {
    return L->cx;
}

const kn_tensor *kl_const(kn_lower *L, const kn_node *n, int i) {
    (void)L;
    return i < n->nin && n->in[i] ? n->in[i]->constant : NULL;
}

kn_kbuf *kl_scratch(kn_lower *L, kn_dtype t, int64_t numel) {
    kn_kbuf *b = kl_buffer(L->p, KB_SCRATCH, t, 1, &numel, "s");
    b->first = b->last = L->kidx;
    return b;
}

kn_kbuf *kl_scratch_thread(kn_lower *L, kn_dtype t, int64_t numel) {
    kn_kbuf *b = kl_scratch(L, t, numel);
    b->per_thread = true;
    b->copies = L->p->threads > 1 ? L->p->threads : 1;
    return b;
}

kn_kbuf *kl_string_storage(kn_lower *L, int64_t bytes) {
    kn_kbuf *b = kl_buffer(L->p, KB_TEMP, KN_U8, 1, &bytes, "c");
    b->whole_run = true;
    use(L, b);
    return b;
}

int64_t kl_max_string_bytes(kn_lower *L) {
    return L->max_string_bytes > 0 ? L->max_string_bytes : KN_MAX_STRING_BYTES;
}

void kl_fail(kn_lower *L, int status) {
    kn_kprog *p = L->p;
    if (!p->status) {
        int64_t one = 1;
        p->status = kl_buffer(p, KB_TEMP, KN_I32, 1, &one, "st");
        p->status->whole_run = true;
    }
    kl_store(L, p->status, kx_int(L, 0), kx_const(L, KN_I32, status));
}

kn_kbuf *kl_table_fill(kn_lower *L, kn_dtype t, int64_t numel, kl_fill_fn fill, const void *ctx) {
    kn_tensor *x = kn_tensor_make(L->p->arena, t, 1, &numel);
    KN_ASSERT(x);
    fill(ctx, x->data);
    size_t bytes = kn_tensor_nbytes(x);
    for (int i = 0; i < L->p->nbufs; i++) {
        kn_kbuf *b = L->p->bufs[i];
        /* a constant whose data was freed (kn_kprog_release_data) has none to share */
        if (b->kind == KB_CONST && b->data && b->data->data && b->dtype == t && b->rank == 1 &&
            b->numel == numel && !memcmp(b->data->data, x->data, bytes)) {
            kn_arena_release(L->p->arena, x->data); /* a big one goes now, a small one stays */
            return b;
        }
    }
    kn_kbuf *b = kl_buffer(L->p, KB_CONST, t, 1, &numel, "c");
    b->data = x;
    return b;
}

typedef struct table_copy {
    const void *data;
    size_t bytes;
} table_copy;

static void copy_table(const void *ctx, void *data) {
    const table_copy *c = ctx;
    if (c->bytes) memcpy(data, c->data, c->bytes);
}

kn_kbuf *kl_table(kn_lower *L, kn_dtype t, int64_t numel, const void *data) {
    table_copy c = {data, (size_t)numel * kn_dtype_get(t)->size};
    return kl_table_fill(L, t, numel, copy_table, &c);
}

int kl_for(kn_lower *L, int64_t extent) {
    kn_ks *s = new_stmt(L, KS_FOR);
    s->var = kl_new_var(L, KN_I64);
    s->extent = extent;
    s->body = kn_arena_alloc(L->p->arena, sizeof *s->body);
    s->body[0] = kl_block_new(L);
    s->n = 1;
    append(L, s);
    push(L, s, s->body[0]);
    return s->var;
}

int kl_for_x(kn_lower *L, kn_kx *extent) {
    int v = kl_for(L, -1);
    L->owner[L->depth - 1]->ext = kx_cast(L, KN_I64, extent);
    return v;
}

void kl_end(kn_lower *L) {
    KN_ASSERT(L->depth > 1);
    L->depth--;
}

void kl_end_n(kn_lower *L, int n) {
    while (n-- > 0) kl_end(L);
}

void kl_if(kn_lower *L, kn_kx *cond) {
    kn_ks *s = new_stmt(L, KS_IF);
    s->cond = cond;
    s->body = kn_arena_array(L->p->arena, 2, sizeof *s->body);
    s->body[0] = kl_block_new(L);
    s->n = 2;
    append(L, s);
    push(L, s, s->body[0]);
}

void kl_else(kn_lower *L) {
    kn_ks *s = L->owner[L->depth - 1];
    KN_ASSERT(s && s->kind == KS_IF && !s->body[1]);
    L->depth--;
    s->body[1] = kl_block_new(L);
    push(L, s, s->body[1]);
}

void kl_while(kn_lower *L, kn_kx *cond) {
    kn_ks *s = new_stmt(L, KS_WHILE);
    s->cond = cond;
    s->body = kn_arena_alloc(L->p->arena, sizeof *s->body);
    s->body[0] = kl_block_new(L);
    s->n = 1;
    append(L, s);
    push(L, s, s->body[0]);
}

void kl_store(kn_lower *L, kn_kbuf *b, kn_kx *index, kn_kx *value) {
    kn_ks *s = new_stmt(L, KS_STORE);
    s->buf = b;
    s->index = index;
    s->value = kx_cast(L, kx_compute_dtype(b->dtype), value);
    use(L, b);
    append(L, s);
}

void kl_store_strided(kn_lower *L, kn_kbuf *b, kn_kx *index, kn_kx *value, int stride) {
    KN_ASSERT(kx_lanes(value) >= 2 && stride >= 2);
    kl_store(L, b, index, value);
    kn_ks *blk = L->stack[L->depth - 1];
    blk->body[blk->n - 1]->stride = stride;
}

void kl_store_word(kn_lower *L, kn_kbuf *b, kn_kx *index, kn_kx *word) {
    KN_ASSERT(b->dtype == KN_U8 || b->dtype == KN_I8);
    KN_ASSERT(kx_lanes(word) == 1);
    kn_ks *s = new_stmt(L, KS_STORE);
    s->buf = b;
    s->index = index;
    s->value = kx_cast(L, KN_I32, word);
    s->word = true;
    use(L, b);
    append(L, s);
}

int kl_decl(kn_lower *L, kn_dtype t, kn_kx *init) {
    return kl_decl_vec(L, t, 1, init);
}

int kl_decl_vec(kn_lower *L, kn_dtype t, int lanes, kn_kx *init) {
    kn_ks *s = new_stmt(L, KS_DECL);
    s->dtype = kx_compute_dtype(t);
    s->var = kl_new_var(L, s->dtype);
    s->width = L->p->var_lanes[s->var] = lanes > 1 ? lanes : 1;
    s->value = kx_cast(L, s->dtype, init);
    KN_ASSERT(kx_lanes(s->value) == 1 || kx_lanes(s->value) == lanes);
    append(L, s);
    return s->var;
}

int kl_decl_block(kn_lower *L, int lanes, kn_kx *init, int reg) {
    KN_ASSERT(init->op == KX_LOAD && kx_lanes(init) == lanes && init->dtype == KN_F32 && reg >= 0);
    int v = kl_decl_vec(L, KN_F32, lanes, init);
    kn_ks *blk = L->stack[L->depth - 1];
    blk->body[blk->n - 1]->annot = (unsigned)reg + 1;
    return v;
}

void kl_set(kn_lower *L, int var, kn_kx *value) {
    kn_ks *s = new_stmt(L, KS_SET);
    s->var = var;
    s->value = kx_cast(L, L->p->var_dtype[var], value);
    KN_ASSERT(kx_lanes(s->value) == 1 || kx_lanes(s->value) == L->p->var_lanes[var]);
    append(L, s);
}

void kl_copy(kn_lower *L, kn_kbuf *dst, kn_kx *dst_index, kn_kbuf *src, kn_kx *src_index,
             kn_kx *count) {
    KN_ASSERT(dst->dtype == src->dtype);
    kn_ks *s = new_stmt(L, KS_COPY);
    s->buf = dst;
    s->src = src;
    s->index = dst_index;
    s->src_index = src_index;
    s->count = count;
    use(L, dst);
    use(L, src);
    append(L, s);
}

void kl_prefetch(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    kn_ks *s = new_stmt(L, KS_PREFETCH);
    s->buf = b;
    s->index = kx_cast(L, KN_I64, index);
    use(L, b);
    append(L, s);
}

void kl_for_shape(kn_lower *L, int rank, const int64_t *dims, int *vars) {
    for (int d = 0; d < rank; d++) vars[d] = kl_for(L, dims[d]);
}

/* ---- expressions ---- */

static kn_kx *new_x(kn_lower *L, kn_kx_op op, kn_dtype t) {
    kn_kx *x = kn_arena_alloc(L->p->arena, sizeof *x);
    KN_ASSERT(x);
    x->op = op;
    x->dtype = t;
    return x;
}

kn_dtype kx_compute_dtype(kn_dtype t) {
    if (t == KN_F16 || t == KN_BF16) return KN_F32;
    if (kn_dtype_is_f8(t) || t == KN_U4) return KN_U8;
    return t == KN_I4 ? KN_I8 : t;
}

kn_kx *kx_int(kn_lower *L, int64_t v) {
    kn_kx *x = new_x(L, KX_CONST, KN_I64);
    x->i = v;
    x->f = (double)v;
    return x;
}

kn_kx *kx_const(kn_lower *L, kn_dtype t, double v) {
    if (kn_dtype_is_f8(t)) v = kn_f8_encode(v, kn_f8_kind_of(t), true); /* its code */
    kn_kx *x = new_x(L, KX_CONST, kx_compute_dtype(t));
    x->f = v;
    /* an integer constant from a float (a Pad value, say) saturates: NaN is 0 */
    x->i = kn_dtype_get(x->dtype)->is_float || v != v ? 0
           : v >= 0x1p63                              ? INT64_MAX
           : v < -0x1p63                              ? INT64_MIN
                                                      : (int64_t)v;
    if (x->dtype == KN_BOOL) x->i = v != 0;
    return x;
}

kn_kx *kx_var(kn_lower *L, int var) {
    kn_kx *x = new_x(L, KX_VAR, L->p->var_dtype[var]);
    x->var = var;
    x->lanes = L->p->var_lanes[var];
    return x;
}

kn_kx *kx_lane(kn_lower *L, int var, int lane) {
    KN_ASSERT(lane >= 0 && lane < L->p->var_lanes[var]);
    kn_kx *x = new_x(L, KX_LANE, L->p->var_dtype[var]);
    x->a[0] = kx_var(L, var);
    x->i = lane;
    return x;
}

kn_kx *kx_vload(kn_lower *L, kn_kbuf *b, kn_kx *index, int lanes) {
    kn_kx *x = kx_load(L, b, index);
    x->lanes = lanes > 1 ? lanes : 1;
    return x;
}

kn_kx *kx_vload_strided(kn_lower *L, kn_kbuf *b, kn_kx *index, int lanes, int stride) {
    KN_ASSERT(lanes >= 2 && stride >= 2);
    kn_kx *x = kx_vload(L, b, index, lanes);
    x->stride = stride;
    return x;
}

/* The lanes of an operation on a and b: a scalar operand broadcasts. */
static int lanes2(const kn_kx *a, const kn_kx *b) {
    int la = kx_lanes(a), lb = b ? kx_lanes(b) : 1;
    KN_ASSERT(la == 1 || lb == 1 || la == lb);
    return la > lb ? la : lb;
}

kn_kx *kx_load(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    kn_kx *x = new_x(L, KX_LOAD, kx_compute_dtype(b->dtype));
    x->buf = b;
    x->a[0] = index;
    use(L, b);
    return x;
}

kn_kx *kx_load_word(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    KN_ASSERT(b->dtype == KN_U8 || b->dtype == KN_I8);
    kn_kx *x = kx_load(L, b, index);
    x->dtype = KN_I32;
    x->i = 4;
    return x;
}

kn_kx *kx_load_kept(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    kn_kx *x = kx_load(L, b, index);
    x->i = KX_LOAD_KEPT;
    return x;
}

kn_kx *kx_load_kept_base(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    kn_kx *x = kx_load(L, b, index);
    x->i = KX_LOAD_KEPT_BASE;
    return x;
}

static int rank_of(kn_dtype t) {
    switch (t) {
    case KN_BOOL: return 0;
    case KN_U8: return 1;
    case KN_I8: return 2;
    case KN_U16: return 3;
    case KN_I16: return 4;
    case KN_U32: return 5;
    case KN_I32: return 6;
    case KN_U64: return 7;
    case KN_I64: return 8;
    case KN_F32: return 9;
    case KN_F64: return 10;
    default: return 9;
    }
}

static kn_dtype common(kn_dtype a, kn_dtype b) {
    return rank_of(a) >= rank_of(b) ? a : b;
}

kn_kx *kx_cast(kn_lower *L, kn_dtype t, kn_kx *a) {
    t = kx_compute_dtype(t);
    if (a->dtype == t) return a;
    if (a->op == KX_CONST) { /* fold: constants are printed in their dtype */
        kn_kx *x = new_x(L, KX_CONST, t);
        bool fl = kn_dtype_get(a->dtype)->is_float;
        x->f = fl ? a->f : (double)a->i;
        x->i = kn_dtype_get(t)->is_float ? 0
               : t == KN_BOOL            ? (fl ? a->f != 0 : a->i != 0)
               : fl                      ? (int64_t)a->f
                                         : a->i;
        return x;
    }
    kn_kx *x = new_x(L, KX_CAST, t);
    x->a[0] = a;
    x->lanes = a->lanes;
    return x;
}

kn_kx *kx_cast_inrange(kn_lower *L, kn_dtype t, kn_kx *a) {
    kn_kx *x = kx_cast(L, t, a);
    if (x->op == KX_CAST && kn_dtype_get(a->dtype)->is_float && kn_dtype_get(x->dtype)->is_int)
        x->i = 1;
    return x;
}

kn_kx *kx_un(kn_lower *L, kn_kx_op op, kn_kx *a) {
    kn_dtype t = a->dtype;
    if (op == KX_ISNAN || op == KX_ISINF || op == KX_NOT) t = KN_BOOL;
    kn_kx *x = new_x(L, op, t);
    x->a[0] = a;
    x->lanes = a->lanes;
    return x;
}

kn_kx *kx_round_small(kn_lower *L, kn_kx *a) {
    kn_kx *x = kx_un(L, KX_ROUND, a);
    x->i = 1;
    return x;
}

kn_kx *kx_bin(kn_lower *L, kn_kx_op op, kn_kx *a, kn_kx *b) {
    bool cmp = op >= KX_LT && op <= KX_LOR;
    kn_dtype t = op == KX_SHL || op == KX_SHR ? a->dtype : common(a->dtype, b->dtype);
    if (op == KX_LAND || op == KX_LOR) t = KN_BOOL;
    /* fold integer index arithmetic with constants: keeps generated code readable */
    if (a->op == KX_CONST && b->op == KX_CONST && t == KN_I64 && !cmp) {
        int64_t x = a->i, y = b->i, r;
        switch (op) {
        case KX_ADD: r = x + y; return kx_int(L, r);
        case KX_SUB: r = x - y; return kx_int(L, r);
        case KX_MUL: r = x * y; return kx_int(L, r);
        default: break;
        }
    }
    if (t == KN_I64 && !cmp) {
        if (op == KX_MUL && ((a->op == KX_CONST && a->i == 0) || (b->op == KX_CONST && b->i == 0)))
            return kx_int(L, 0);
        if (op == KX_MUL && a->op == KX_CONST && a->i == 1) return b;
        if ((op == KX_MUL || op == KX_DIV) && b->op == KX_CONST && b->i == 1) return a;
        if (op == KX_ADD && a->op == KX_CONST && a->i == 0) return b;
        if ((op == KX_ADD || op == KX_SUB) && b->op == KX_CONST && b->i == 0) return a;
    }
    kn_kx *x = new_x(L, op, cmp ? KN_BOOL : t);
    x->lanes = lanes2(a, b);
    x->a[0] = kx_cast(L, t, a);
    x->a[1] = op == KX_SHL || op == KX_SHR ? kx_cast(L, t, b) : kx_cast(L, t, b);
    return x;
}

kn_kx *kx_shr_inrange(kn_lower *L, kn_kx *a, kn_kx *b) {
    kn_kx *x = kx_bin(L, KX_SHR, a, b);
    KN_ASSERT(x->op == KX_SHR && !kn_dtype_get(x->dtype)->is_float);
    x->i = 1;
    return x;
}

kn_kx *kx_select(kn_lower *L, kn_kx *c, kn_kx *a, kn_kx *b) {
    kn_dtype t = common(a->dtype, b->dtype);
    kn_kx *x = new_x(L, KX_SELECT, t);
    x->lanes = lanes2(c, a);
    x->lanes = lanes2(x, b);
    x->a[0] = c;
    x->a[1] = kx_cast(L, t, a);
    x->a[2] = kx_cast(L, t, b);
    return x;
}

kn_kx *kx_fma(kn_lower *L, kn_kx *a, kn_kx *b, kn_kx *c) {
    kn_dtype t = common(common(a->dtype, b->dtype), c->dtype);
    if (!kn_dtype_get(t)->is_float) return kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, a, b), c);
    kn_kx *x = new_x(L, KX_FMA, t);
    x->lanes = lanes2(a, b);
    x->lanes = lanes2(x, c);
    x->a[0] = kx_cast(L, t, a);
    x->a[1] = kx_cast(L, t, b);
    x->a[2] = kx_cast(L, t, c);
    return x;
}

kn_kx *kx_fma_exact(kn_lower *L, kn_kx *a, kn_kx *b, kn_kx *c) {
    kn_kx *x = kx_fma(L, a, b, c);
    KN_ASSERT(x->op == KX_FMA);
    x->i = 1;
    return x;
}

kn_kx *kx_dot(kn_lower *L, int kind, kn_kx *acc, kn_kx *a, kn_kx *b) {
    KN_ASSERT(kind > 0);
    kn_kx *x = new_x(L, KX_DOT, KN_I32);
    x->i = kind;
    if (kind == KN_DOT_S8X16) { /* a reduction: one lane from two 4-lane words */
        KN_ASSERT(kx_lanes(acc) == 1 && kx_lanes(a) == 4 && kx_lanes(b) == 4);
        x->lanes = 1;
        x->a[0] = kx_cast(L, KN_I32, acc);
        x->a[1] = kx_cast(L, KN_I32, a);
        x->a[2] = kx_cast(L, KN_I32, b);
        return x;
    }
    x->lanes = lanes2(acc, a);
    x->lanes = lanes2(x, b);
    x->a[0] = kx_cast(L, KN_I32, acc);
    x->a[1] = kx_cast(L, KN_I32, a);
    x->a[2] = kx_cast(L, KN_I32, b);
    return x;
}

kn_kx *kx_unpack16(kn_lower *L, kn_kx *a, bool odd, bool unsig) {
    kn_kx *x = new_x(L, KX_UNPACK16, KN_I32);
    x->i = (odd ? 1 : 0) | (unsig ? 2 : 0);
    x->lanes = lanes2(a, NULL);
    x->a[0] = kx_cast(L, KN_I32, a);
    return x;
}

kn_kx *kx_sat(kn_lower *L, kn_kx *a, int bits, bool unsig) {
    KN_ASSERT((bits == 8 || bits == 16) && kx_lanes(a) == 1);
    kn_kx *x = new_x(L, KX_SAT, KN_I32);
    x->i = bits | (unsig ? 32 : 0);
    x->a[0] = kx_cast(L, KN_I32, a);
    return x;
}

kn_kx *kx_cvtrn(kn_lower *L, kn_kx *a) {
    KN_ASSERT(a->dtype == KN_F32);
    kn_kx *x = new_x(L, KX_CVTRN, KN_I32);
    x->lanes = lanes2(a, NULL);
    x->a[0] = a;
    return x;
}

kn_kx *kx_qadd(kn_lower *L, kn_kx *a, kn_kx *b) {
    KN_ASSERT(kx_lanes(a) == 1 && kx_lanes(b) == 1);
    kn_kx *x = new_x(L, KX_QADD, KN_I32);
    x->a[0] = kx_cast(L, KN_I32, a);
    x->a[1] = kx_cast(L, KN_I32, b);
    return x;
}

kn_kx *kx_regex(kn_lower *L, int kind, kn_kbuf *re, kn_kx *s, const char *posix, int flags) {
    KN_ASSERT(re->dtype == KN_U8 && re->numel >= KN_REGEX_T_BYTES);
    KN_ASSERT(kind != KN_RX_MATCH || (s && s->dtype == KN_STRING && kx_lanes(s) == 1));
    kn_kx *x = new_x(L, KX_REGEX, KN_I32);
    x->buf = re;
    x->a[0] = kind == KN_RX_MATCH ? s : NULL;
    x->i = kind << 1 | (flags & 1);
    if (kind == KN_RX_COMPILE) {
        x->text = kn_arena_strdup(L->p->arena, posix);
        KN_ASSERT(x->text);
    }
    use(L, re);
    return x;
}

kn_kx *kx_byte(kn_lower *L, kn_kx *s, kn_kx *index) {
    KN_ASSERT(s->dtype == KN_STRING && kx_lanes(s) == 1);
    kn_kx *x = new_x(L, KX_BYTE, KN_U8);
    x->a[0] = s;
    x->a[1] = kx_cast(L, KN_I64, index);
    return x;
}

kn_kx *kx_str(kn_lower *L, kn_kbuf *chars, kn_kx *index) {
    KN_ASSERT(chars->dtype == KN_U8);
    kn_kx *x = new_x(L, KX_STR, KN_STRING);
    x->buf = chars;
    x->a[0] = kx_cast(L, KN_I64, index);
    use(L, chars);
    return x;
}

kn_kx *kx_offset(kn_lower *L, int rank, const int *vars, const int64_t *strides) {
    kn_kx *off = kx_int(L, 0);
    for (int d = 0; d < rank; d++)
        if (strides[d])
            off = kx_bin(L, KX_ADD, off,
                         kx_bin(L, KX_MUL, kx_var(L, vars[d]), kx_int(L, strides[d])));
    return off;
}

kn_kx *kx_bcast_offset(kn_lower *L, const kn_kbuf *b, int orank, const int64_t *odims,
                       const int *vars) {
    kn_type t = kn_type_make(b->dtype, b->rank, b->dims);
    int64_t st[KN_MAX_RANK];
    kn_bcast_strides(&t, orank, odims, st);
    return kx_offset(L, orank, vars, st);
}

/* ---- analysis ---- */

size_t kn_kprog_weight_bytes(const kn_kprog *p) {
    size_t n = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (kn_kbuf_is_weight(p->bufs[i])) n += kn_kbuf_bytes(p->bufs[i]);
    return n;
}

size_t kn_kprog_weight_layout(const kn_kprog *p, size_t *offsets) {
    size_t at = 0;
    for (int i = 0; i < p->nbufs; i++) {
        offsets[i] = 0;
        if (!kn_kbuf_is_weight(p->bufs[i])) continue;
        offsets[i] = at;
        at += (kn_kbuf_bytes(p->bufs[i]) + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    }
    return at;
}

kn_kbuf *kn_kbuf_storage(const kn_kbuf *b) {
    while (b->alias) b = b->alias;
    return (kn_kbuf *)b;
}

size_t kn_kbuf_view_at(const kn_kbuf *b) {
    size_t at = 0;
    for (; b->alias; b = b->alias) at += b->alias_at;
    return at;
}

size_t kn_kbuf_arena_offset(const kn_kbuf *b) {
    return kn_kbuf_storage(b)->offset + kn_kbuf_view_at(b);
}

/* ---- structural equality ---- */

typedef struct kmatch {
    int *buf;       /* buffer of b for each buffer id of a */
    int *var, *rev; /* variable of b for each of a, and back (-1: not yet seen) */
} kmatch;

static bool same_var(kmatch *M, int a, int b) {
    if (M->var[a] < 0 && M->rev[b] < 0) {
        M->var[a] = b;
        M->rev[b] = a;
    }
    return M->var[a] == b && M->rev[b] == a;
}

static bool same_buf(const kmatch *M, const kn_kbuf *a, const kn_kbuf *b) {
    return (!a && !b) || (a && b && M->buf[a->id] == b->id);
}

static bool same_x(kmatch *M, const kn_kx *a, const kn_kx *b) {
    if (!a || !b) return a == b;
    if (a->op != b->op || a->dtype != b->dtype || kx_lanes(a) != kx_lanes(b) || a->i != b->i ||
        a->stride != b->stride || memcmp(&a->f, &b->f, sizeof a->f) ||
        !same_buf(M, a->buf, b->buf) ||
        (a->text != b->text && (!a->text || !b->text || strcmp(a->text, b->text))))
        return false;
    if (a->op == KX_VAR && !same_var(M, a->var, b->var)) return false;
    for (int i = 0; i < 3; i++)
        if (!same_x(M, a->a[i], b->a[i])) return false;
    return true;
}

static bool same_s(kmatch *M, const kn_ks *a, const kn_ks *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind || a->dtype != b->dtype || a->extent != b->extent ||
        a->annot != b->annot || a->width != b->width || a->tasks != b->tasks || a->n != b->n ||
        !same_buf(M, a->buf, b->buf) || !same_buf(M, a->src, b->src))
        return false;
    bool has_var = a->kind == KS_FOR || a->kind == KS_DECL || a->kind == KS_SET;
    if (has_var && !same_var(M, a->var, b->var)) return false;
    if (!same_x(M, a->ext, b->ext) || !same_x(M, a->index, b->index) ||
        !same_x(M, a->value, b->value) || !same_x(M, a->cond, b->cond) ||
        !same_x(M, a->src_index, b->src_index) || !same_x(M, a->count, b->count))
        return false;
    for (int i = 0; i < a->n; i++)
        if (!same_s(M, a->body[i], b->body[i])) return false;
    return true;
}

bool kn_kernel_same(const kn_kprog *p, const kn_kernel *a, const kn_kernel *b) {
    size_t nb = (size_t)p->nbufs + 1, nv = (size_t)p->nvars + 1;
    unsigned char *ua = calloc(nb, 1), *ub = calloc(nb, 1);
    kmatch M = {malloc(nb * sizeof(int)), malloc(nv * sizeof(int)), malloc(nv * sizeof(int))};
    KN_ASSERT(ua && ub && M.buf && M.var && M.rev);
    memset(M.var, 0xff, nv * sizeof(int));
    memset(M.rev, 0xff, nv * sizeof(int));
    kn_kernel_uses(a->body, ua);
    kn_kernel_uses(b->body, ub);
    bool ok = true;
    int j = 0;
    for (int i = 0; i < p->nbufs && ok; i++) { /* pair the used buffers in order */
        M.buf[i] = -1;
        if (!ua[i]) continue;
        while (j < p->nbufs && !ub[j]) j++;
        ok = j < p->nbufs && ua[i] == ub[j] && p->bufs[i]->dtype == p->bufs[j]->dtype &&
             p->bufs[i]->per_thread == p->bufs[j]->per_thread &&
             (!p->bufs[i]->per_thread ||
              (kn_kbuf_thread_stride(p->bufs[i]) == kn_kbuf_thread_stride(p->bufs[j]) &&
               p->bufs[i]->copies == p->bufs[j]->copies));
        M.buf[i] = j++;
    }
    while (ok && j < p->nbufs && !ub[j]) j++;
    ok = ok && j == p->nbufs && same_s(&M, a->body, b->body);
    free(ua);
    free(ub);
    free(M.buf);
    free(M.var);
    free(M.rev);
    return ok;
}

/* ---- printer ---- */

static const char *op_name(kn_kx_op op) {
    static const char *names[KX_OP_COUNT] = {
        [KX_CONST] = "const",
        [KX_VAR] = "var",
        [KX_LOAD] = "load",
#define X(id, s) [KX_##id] = s,
        KN_KX_UNARY(X) KN_KX_BINARY(X)
#undef X
            [KX_SELECT] = "select",
        [KX_CAST] = "cast",
        [KX_FMA] = "fma",
        [KX_LANE] = "lane",
        [KX_BYTE] = "byte",
        [KX_STR] = "str",
        [KX_DOT] = "dot",
        [KX_UNPACK16] = "unpack16",
        [KX_SAT] = "sat",
        [KX_CVTRN] = "cvtrn",
        [KX_QADD] = "qadd",
        [KX_REGEX] = "regex",
    };
    return names[op];
}

static void print_x(FILE *f, const kn_kx *x) {
    switch (x->op) {
    case KX_CONST:
        if (kn_dtype_get(x->dtype)->is_float)
            fprintf(f, "%.9g", x->f);
        else
            fprintf(f, "%lld", (long long)x->i);
        return;
    case KX_VAR: fprintf(f, "v%d", x->var); return;
    case KX_LANE: fprintf(f, "v%d.%lld", x->a[0]->var, (long long)x->i); return;
    case KX_LOAD:
        fprintf(f, "%s[", x->buf->name);
        print_x(f, x->a[0]);
        if (kx_lanes(x) > 1) fprintf(f, " x%d", x->lanes);
        if (x->stride > 1) fprintf(f, " step %d", x->stride);
        if (x->i == 4) fprintf(f, " word");
        if (x->i == KX_LOAD_KEPT) fprintf(f, " kept");
        if (x->i == KX_LOAD_KEPT_BASE) fprintf(f, " kept_base");
        fputc(']', f);
        return;
    case KX_CAST:
        fprintf(f, "%s%s(", kn_dtype_name(x->dtype), x->i == 1 ? "!" : "");
        print_x(f, x->a[0]);
        fputc(')', f);
        return;
    case KX_STR:
        fprintf(f, "str(%s[", x->buf->name);
        print_x(f, x->a[0]);
        fprintf(f, "])");
        return;
    case KX_DOT: fprintf(f, "dot.%s(", kn_dot_name((kn_dot)x->i)); break;
    case KX_UNPACK16:
        fprintf(f, "unpack16.%s%d(", x->i & 2 ? "u" : "s", (int)(x->i & 1));
        print_x(f, x->a[0]);
        fputc(')', f);
        return;
    case KX_REGEX:
        fprintf(f, "regex.%s%s(%s",
                (x->i >> 1) == KN_RX_COMPILE ? "compile"
                : (x->i >> 1) == KN_RX_MATCH ? "match"
                                             : "free",
                x->i & 1 ? ".icase" : "", x->buf->name);
        if (x->a[0]) {
            fprintf(f, ", ");
            print_x(f, x->a[0]);
        }
        if (!x->text) {
            fputc(')', f);
            return;
        }
        fprintf(f, ", \"");
        for (const char *c = x->text; *c; c++)
            fprintf(f,
                    *c == '"' || *c == '\\'  ? "\\%c"
                    : (unsigned char)*c < 32 ? "\\x%02x"
                                             : "%c",
                    (unsigned char)*c);
        fprintf(f, "\")");
        return;
    case KX_ROUND:
        fprintf(f, "round%s(", x->i ? ".small" : "");
        print_x(f, x->a[0]);
        fputc(')', f);
        return;
    case KX_FMA:
        if (!x->i) break;
        fprintf(f, "fma.exact(");
        print_x(f, x->a[0]);
        fprintf(f, ", ");
        print_x(f, x->a[1]);
        fprintf(f, ", ");
        print_x(f, x->a[2]);
        fputc(')', f);
        return;
    case KX_SAT:
        fprintf(f, "sat.%s%d(", x->i & 32 ? "u" : "s", (int)(x->i & 31));
        print_x(f, x->a[0]);
        fputc(')', f);
        return;
    default: break;
    }
    if (x->op >= KX_ADD && x->op <= KX_LOR && x->op != KX_FMOD && x->op != KX_POW &&
        x->op != KX_MIN && x->op != KX_MAX) {
        fputc('(', f);
        print_x(f, x->a[0]);
        fprintf(f, " %s%s ", op_name(x->op), x->op == KX_SHR && x->i == 1 ? "!" : "");
        print_x(f, x->a[1]);
        fputc(')', f);
        return;
    }
    if (x->op != KX_DOT) fprintf(f, "%s(", op_name(x->op));
    for (int i = 0; i < 3 && x->a[i]; i++) {
        if (i) fprintf(f, ", ");
        print_x(f, x->a[i]);
    }
    fputc(')', f);
}

static void print_s(FILE *f, const kn_ks *s, int ind) {
    switch (s->kind) {
    case KS_BLOCK:
        for (int i = 0; i < s->n; i++) print_s(f, s->body[i], ind);
        return;
    case KS_FOR:
        fprintf(f, "%*sfor v%d in [0, ", ind, "", s->var);
        if (s->ext)
            print_x(f, s->ext);
        else
            fprintf(f, "%lld", (long long)s->extent);
        fprintf(f, ")%s", s->annot & KN_LOOP_PARALLEL ? " parallel" : "");
        if ((s->annot & KN_LOOP_PARALLEL) && s->tasks > 1) fprintf(f, " in %d tasks", s->tasks);
        fprintf(f, "%s%s:\n", s->annot & KN_LOOP_VECTORIZE ? " vectorize" : "",
                s->annot & KN_LOOP_UNROLL ? " unroll" : "");
        print_s(f, s->body[0], ind + 2);
        return;
    case KS_STORE:
        fprintf(f, "%*s%s[", ind, "", s->buf->name);
        print_x(f, s->index);
        if (kx_lanes(s->value) > 1) fprintf(f, " x%d", s->value->lanes);
        if (s->stride > 1) fprintf(f, " step %d", s->stride);
        if (s->word) fprintf(f, " word");
        fprintf(f, "] = ");
        print_x(f, s->value);
        fputc('\n', f);
        return;
    case KS_DECL:
    case KS_SET:
        fprintf(f, "%*s", ind, "");
        if (s->kind == KS_DECL) fprintf(f, "%s", kn_dtype_name(s->dtype));
        if (s->kind == KS_DECL && s->width > 1) fprintf(f, "x%d", s->width);
        fprintf(f, "%sv%d = ", s->kind == KS_DECL ? " " : "", s->var);
        print_x(f, s->value);
        if (s->kind == KS_DECL && s->annot) fprintf(f, " in block %u", s->annot - 1);
        fputc('\n', f);
        return;
    case KS_IF:
    case KS_WHILE:
        fprintf(f, "%*s%s ", ind, "", s->kind == KS_IF ? "if" : "while");
        print_x(f, s->cond);
        fprintf(f, ":\n");
        print_s(f, s->body[0], ind + 2);
        if (s->kind == KS_IF && s->body[1]) {
            fprintf(f, "%*selse:\n", ind, "");
            print_s(f, s->body[1], ind + 2);
        }
        return;
    case KS_COPY:
        fprintf(f, "%*scopy %s[", ind, "", s->buf->name);
        print_x(f, s->index);
        fprintf(f, "...] <- %s[", s->src->name);
        print_x(f, s->src_index);
        fprintf(f, "...] x ");
        print_x(f, s->count);
        fputc('\n', f);
        return;
    case KS_PREFETCH:
        fprintf(f, "%*sprefetch %s[", ind, "", s->buf->name);
        print_x(f, s->index);
        fprintf(f, "]\n");
        return;
    }
}

void kn_kprog_print(const kn_kprog *p, void *file) {
    FILE *f = file;
    static const char *kinds[] = {"input", "output", "const", "temp", "scratch"};
    fprintf(f, "program %s: arena %zu bytes (lower bound %zu)\n", p->name, p->arena_size,
            p->arena_lower_bound);
    for (int r = 0; r < p->nregions; r++)
        fprintf(f, "region %d %s: %zu of %zu bytes (lower bound %zu)\n", r, p->region_name[r],
                p->region_size[r], p->region_cap[r], p->region_lower_bound[r]);
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        char buf[128];
        kn_type t = kn_type_make(b->dtype, b->rank, b->dims);
        fprintf(f, "  %-7s %s: %s", kinds[b->kind], b->name, kn_type_str(&t, buf, sizeof buf));
        if (b->kind == KB_TEMP || b->kind == KB_SCRATCH) {
            if (b->alias && b->alias_at)
                fprintf(f, " in place of %s+%zu", b->alias->name, b->alias_at);
            else if (b->alias)
                fprintf(f, " in place of %s", b->alias->name);
            else
                fprintf(f, " @%zu", b->offset);
            if (p->nregions) fprintf(f, " in %s", p->region_name[b->region]);
            fprintf(f, " live %d..%d", b->first, b->last);
            if (b->per_thread) fprintf(f, " per thread x%d", b->copies);
        }
        if (b->onnx) fprintf(f, "  # %s", b->onnx);
        fputc('\n', f);
    }
    for (int k = 0; k < p->nkernels; k++) {
        fprintf(f, "kernel %d: %s\n", k, p->kernels[k]->name);
        print_s(f, p->kernels[k]->body, 2);
    }
}
