/* The sescale pass: squeeze-and-excite's channel scale applied where the next kernel
 * reads the scaled tensor. requires: kir; breaks: nothing the plan needs (it runs
 * before plan: the Mul's kernel is left empty and its output no longer read).
 *
 * EfficientNet's squeeze-and-excite ends in t = Mul(x, s), x [1,C,H,W] and s [1,C,1,1]
 * (or [C,1,1]), whose one reader is the block's projecting 1x1 convolution. The Mul is
 * a pass over memory of its own; here every load t[I] (scalar or vector) of its reader
 * becomes x[I] * s[c], and the Mul's kernel is emptied. With the pointwise tiles of
 * passes/tile.c the loads of t are those of the pass that packs x into blocks, so the
 * scale costs one multiply per packed vector (a prefetch of t[I] becomes one of x[I]).
 * c is read from I: I must be affine in loop indices of known extent (and integer
 * locals declared once), its terms whose coefficients are multiples of P = H*W give c,
 * and the rest, lanes included, must stay in [0, P) (a vector never crosses a channel).
 * If any load of t does not have that
 * form, nothing changes. CPU and microcontroller targets only (OpenCL keeps the Mul).
 *
 * A reader that loads each element of t many times (the channel tiles of a 1x1
 * convolution on 7x7 or 14x14 pixels read the whole input once per block of output
 * channels, as scalars broadcast to the lanes) would repeat the multiply each time, in
 * its innermost loop: 7x7 1152->192 ran at 65 GFLOP/s with it, 88 without. When the
 * reader's loads of t (counted over its static loops) exceed SE_REREAD times t's
 * size, the reader is left alone and the Mul's kernel is rebuilt instead as one
 * vector loop per channel, t[c, ..] = x[c, ..] * s[c] (the generic broadcast Mul it
 * replaces ran at about 1 element per ns). So is a Mul of that form that stays for
 * another reason (two readers, a reader whose loads are not of that form, or a
 * reader before it or after a kernel that writes x or s).
 *
 * Channels-last (passes/layout.c keeps an MBConv block's expanded tensors NHWC): t and x
 * [1,H,W,C], s [1,1,1,C]. Its reader is a 1x1 convolution's channel tiles, which re-read
 * t, so the Mul always stays, rebuilt as one loop over pixels of vectors along the
 * channels, t[p*C + c] = x[p*C + c] * s[c]. */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "passes/pass.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

enum { SE_REREAD = 2 }; /* see above */

typedef struct se_ctx {
    kn_kwalker w;
    kn_kprog *p;
    int64_t *extent;      /* loop variable -> trip count; -1: not a static loop index */
    const kn_kx **let;    /* integer local declared once -> its value */
    unsigned char *nlet;  /* times each variable is declared or assigned */
    const kn_kbuf *t;     /* the scaled tensor */
    kn_kbuf *x, *s;       /* what it is made of */
    int64_t plane, chans; /* P = H*W, C */
    bool cl;              /* channels-last: t, x [1,H,W,C], s [1,1,1,C] */
    bool ok;
    int64_t trip[64]; /* iterations of the enclosing static loops, outermost first */
    int depth;        /* loops open (beyond 64, or of a computed extent: reads unknown) */
    double reads;     /* elements of t the reader loads per run; < 0: unknown */
    kn_lower *L;
} se_ctx;

/* An affine form over variables: coef[v] * v summed, plus k. */
typedef struct se_aff {
    int64_t *coef;
    int64_t k;
    bool ok;
} se_aff;

static void aff_add(se_ctx *S, se_aff *a, const kn_kx *x, int64_t m, int depth) {
    if (!a->ok || depth > 32) {
        a->ok = false;
        return;
    }
    switch (x->op) {
    case KX_CONST: a->k += m * x->i; return;
    case KX_VAR:
        if (S->extent[x->var] >= 0)
            a->coef[x->var] += m;
        else if (S->let[x->var] && S->nlet[x->var] == 1)
            aff_add(S, a, S->let[x->var], m, depth + 1);
        else
            a->ok = false;
        return;
    case KX_ADD:
        aff_add(S, a, x->a[0], m, depth + 1);
        aff_add(S, a, x->a[1], m, depth + 1);
        return;
    case KX_SUB:
        aff_add(S, a, x->a[0], m, depth + 1);
        aff_add(S, a, x->a[1], -m, depth + 1);
        return;
    case KX_MUL:
        if (x->a[1]->op == KX_CONST)
            aff_add(S, a, x->a[0], m * x->a[1]->i, depth + 1);
        else if (x->a[0]->op == KX_CONST)
            aff_add(S, a, x->a[1], m * x->a[0]->i, depth + 1);
        else
            a->ok = false;
        return;
    default: a->ok = false; return;
    }
}

/* The channel of t[index .. + lanes) as an expression, or NULL when it is not one
 * channel for every value of the loop indices. */
static kn_kx *channel_of(se_ctx *S, const kn_kx *index, int lanes) {
    se_aff a = {calloc((size_t)S->p->nvars, sizeof(int64_t)), 0, true};
    KN_ASSERT(a.coef);
    aff_add(S, &a, index, 1, 0);
    kn_kx *ch = NULL;
    int64_t P = S->plane, q = a.k >= 0 ? a.k / P : -((-a.k + P - 1) / P);
    int64_t rlo = a.k - q * P, rhi = rlo + lanes - 1, clo = q, chi = q;
    for (int v = 0; a.ok && v < S->p->nvars; v++) {
        int64_t c = a.coef[v];
        if (!c) continue;
        int64_t span = c * (S->extent[v] - 1);
        if (c % P == 0) {
            clo += span < 0 ? span / P : 0, chi += span > 0 ? span / P : 0;
            kn_kx *term = kx_mul(S->L, kx_var(S->L, v), kx_int(S->L, c / P));
            ch = ch ? kx_add(S->L, ch, term) : term;
        } else {
            rlo += span < 0 ? span : 0, rhi += span > 0 ? span : 0;
        }
    }
    bool ok = a.ok && rlo >= 0 && rhi < P && clo >= 0 && chi < S->chans;
    free(a.coef);
    if (!ok) return NULL;
    return ch ? (q ? kx_add(S->L, ch, kx_int(S->L, q)) : ch) : kx_int(S->L, q);
}

/* ---- finding the loads, then rewriting them ---- */

static bool note_enter(kn_kwalker *w, kn_ks *s) {
    se_ctx *S = (se_ctx *)w;
    if (s->kind == KS_FOR) {
        S->extent[s->var] = s->ext ? -1 : s->extent;
        if (S->depth < 64) S->trip[S->depth] = s->ext ? -1 : s->extent;
        S->depth++;
    }
    if (s->kind == KS_DECL || s->kind == KS_SET) S->nlet[s->var]++;
    if (s->kind == KS_DECL && s->value) S->let[s->var] = s->value;
    if ((s->kind == KS_STORE || s->kind == KS_COPY) && s->buf == S->t) S->ok = false;
    if (s->kind == KS_COPY && s->src == S->t) S->ok = false;
    return true;
}

static void note_leave(kn_kwalker *w, kn_ks *s) {
    if (s->kind == KS_FOR) ((se_ctx *)w)->depth--;
}

static void check_expr(kn_kwalker *w, kn_kx *x) {
    se_ctx *S = (se_ctx *)w;
    if (x->op != KX_LOAD || x->buf != S->t) return;
    if (x->i == 4 || !channel_of(S, x->a[0], kx_lanes(x))) S->ok = false; /* not a word load */
    double n = kx_lanes(x);
    for (int i = 0; i < S->depth && S->reads >= 0; i++)
        n = i < 64 && S->trip[i] >= 0 ? n * (double)S->trip[i] : -1;
    S->reads = n < 0 || S->reads < 0 ? -1 : S->reads + n;
}

static kn_kx *rewrite(void *user, kn_kx *x) {
    se_ctx *S = user;
    if (x->op != KX_LOAD || x->buf != S->t) return x;
    int lanes = kx_lanes(x);
    kn_kx *xv = lanes > 1 ? kx_vload(S->L, S->x, x->a[0], lanes) : kx_load(S->L, S->x, x->a[0]);
    return kx_mul(S->L, xv, kx_load(S->L, S->s, channel_of(S, x->a[0], lanes)));
}

static void rewrite_stmt(se_ctx *S, kn_ks *s) {
    if (!s) return;
    /* a prefetch of t (the pointwise tiles' next block, passes/tile.c pw_pack_cols) goes
     * to the same element of x, which has t's layout: t is no longer written or planned */
    if (s->kind == KS_PREFETCH && s->buf == S->t) s->buf = S->x;
    kn_kx **f[] = {&s->index, &s->value, &s->cond, &s->src_index, &s->count, &s->ext};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (*f[i]) *f[i] = kn_kx_map(S->p, *f[i], rewrite, S);
    for (int i = 0; s->body && i < s->n; i++) rewrite_stmt(S, s->body[i]);
}

/* The Mul's kernel rebuilt as t[c*P + i] = x[c*P + i] * s[c]: per channel, vectors of
 * the target's lanes, the last one ending at the channel's end (overlapping the one
 * before when P is not a multiple of the lanes: it stores the same values again). */
static void rebuild_mul(kn_ctx *cx, kn_kprog *p, int k, const se_ctx *S) {
    kn_lower *L = kl_builder_rewrite(cx, p, k);
    int64_t P = S->plane, lanes = kl_lanes(L, KN_F32);
    if (lanes > P) lanes = 1;
    int vc = kl_for(L, S->chans);
    int vs = kl_decl(L, KN_F32, kx_load(L, S->s, kx_var(L, vc)));
    kn_kx *base = kx_mul(L, kx_var(L, vc), kx_int(L, P));
    int64_t nv = P / lanes;
    for (int tail = 0; tail < 2; tail++) {
        if (tail && P % lanes == 0) break;
        int vj = tail ? -1 : kl_for(L, nv);
        kn_kx *i = tail ? kx_add(L, base, kx_int(L, P - lanes))
                        : kx_add(L, base, kx_mul(L, kx_var(L, vj), kx_int(L, lanes)));
        kn_kx *xv = lanes > 1 ? kx_vload(L, S->x, i, (int)lanes) : kx_load(L, S->x, i);
        kl_store(L, (kn_kbuf *)S->t, i, kx_mul(L, xv, kx_var(L, vs)));
        if (!tail) kl_end(L);
    }
    kl_end(L);
    kl_builder_destroy(L);
}

/* The channels-last Mul's kernel rebuilt as t[p*C + c] = x[p*C + c] * s[c]: per pixel,
 * vectors of the target's lanes along the channels, the last one ending at the pixel's
 * last channel (overlapping the one before when C is not a multiple of the lanes). */
static void rebuild_mul_cl(kn_ctx *cx, kn_kprog *p, int k, const se_ctx *S) {
    kn_lower *L = kl_builder_rewrite(cx, p, k);
    int64_t C = S->chans, lanes = kl_lanes(L, KN_F32);
    if (lanes > C) lanes = 1;
    int vp = kl_for(L, S->plane);
    kn_kx *base = kx_mul(L, kx_var(L, vp), kx_int(L, C));
    int64_t nv = C / lanes;
    for (int tail = 0; tail < 2; tail++) {
        if (tail && C % lanes == 0) break;
        int vj = tail ? -1 : kl_for(L, nv);
        kn_kx *c = tail ? kx_int(L, C - lanes) : kx_mul(L, kx_var(L, vj), kx_int(L, lanes));
        kn_kx *i = kx_add(L, base, c);
        kn_kx *xv = lanes > 1 ? kx_vload(L, S->x, i, (int)lanes) : kx_load(L, S->x, i);
        kn_kx *sv = lanes > 1 ? kx_vload(L, S->s, c, (int)lanes) : kx_load(L, S->s, c);
        kl_store(L, (kn_kbuf *)S->t, i, kx_mul(L, xv, sv));
        if (!tail) kl_end(L);
    }
    kl_end(L);
    kl_builder_destroy(L);
}

/* Kernel k is t = x * s as described above: its buffers in *S. */
static bool se_mul(const kn_kprog *p, int k, unsigned char *use, se_ctx *S) {
    const kn_kernel *m = p->kernels[k];
    if (!m->node || m->node->op != KN_OP_MUL || kn_node_attr(m->node, KN_ATTR_EPILOGUE))
        return false;
    memset(use, 0, (size_t)p->nbufs);
    kn_kernel_uses(m->body, use);
    kn_kbuf *rd[2], *t = NULL;
    int nr = 0;
    for (int b = 0; b < p->nbufs; b++) {
        if (use[b] == 1 && nr < 2)
            rd[nr++] = p->bufs[b];
        else if (use[b] == 2 && !t)
            t = p->bufs[b];
        else if (use[b])
            return false;
    }
    if (nr != 2 || !t || t->kind != KB_TEMP || t->dtype != KN_F32 || t->rank != 4 ||
        t->dims[0] != 1)
        return false;
    for (int i = 0; i < 2; i++) { /* channels-last (passes/layout.c): s [1,1,1,C] */
        kn_kbuf *x = rd[i], *s = rd[1 - i];
        if (x->dtype != KN_F32 || s->dtype != KN_F32 || x->rank != 4 || s->rank != 4 ||
            s->numel != t->dims[3] || s->dims[3] != t->dims[3] || t->dims[1] * t->dims[2] < 2 ||
            memcmp(x->dims, t->dims, sizeof(int64_t) * 4))
            continue;
        S->t = t, S->x = x, S->s = s, S->cl = true;
        S->chans = t->dims[3], S->plane = t->dims[1] * t->dims[2];
        return true;
    }
    for (int i = 0; i < 2; i++) {
        kn_kbuf *x = rd[i], *s = rd[1 - i];
        if (x->dtype != KN_F32 || s->dtype != KN_F32 || x->rank != 4 || s->numel != t->dims[1] ||
            s->rank < 3 || s->dims[s->rank - 1] != 1 || s->dims[s->rank - 2] != 1 ||
            memcmp(x->dims, t->dims, sizeof(int64_t) * 4))
            continue;
        S->t = t, S->x = x, S->s = s;
        S->chans = t->dims[1], S->plane = t->dims[2] * t->dims[3];
        return S->plane > 1;
    }
    return false;
}

kn_status kn_kpass_sescale(kn_ctx *cx, kn_kprog *p) {
    if (!p->target || p->target->kind == KN_TARGET_GPU) return KN_OK; /* CPU schedules only */
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    for (int k = 0; k < p->nkernels; k++) {
        se_ctx S = {.w = {note_enter, note_leave, check_expr}, .p = p};
        if (!se_mul(p, k, use, &S)) continue;
        if (S.cl) { /* its reader (a 1x1 convolution's channel tiles) re-reads t */
            rebuild_mul_cl(cx, p, k, &S);
            continue;
        }
        int reader = -1, nreaders = 0;
        for (int j = 0; j < p->nkernels; j++) {
            if (j == k) continue;
            memset(use, 0, (size_t)p->nbufs);
            kn_kernel_uses(p->kernels[j]->body, use);
            if (use[S.t->id]) nreaders++, reader = j;
        }
        /* the x and s the reader will read instead are not written between k and it */
        bool clobbered = nreaders != 1 || reader < k;
        for (int j = k + 1; j < reader && !clobbered; j++) {
            memset(use, 0, (size_t)p->nbufs);
            kn_kernel_uses(p->kernels[j]->body, use);
            clobbered = (use[S.x->id] & 2) || (use[S.s->id] & 2);
        }
        if (clobbered) { /* the Mul stays, as a vector loop */
            rebuild_mul(cx, p, k, &S);
            continue;
        }
        S.extent = malloc((size_t)p->nvars * sizeof *S.extent);
        S.let = calloc((size_t)p->nvars, sizeof *S.let);
        S.nlet = calloc((size_t)p->nvars, 1);
        KN_ASSERT(S.extent && S.let && S.nlet);
        for (int v = 0; v < p->nvars; v++) S.extent[v] = -1;
        S.L = kl_builder(cx, p);
        S.ok = true;
        kn_kwalk(&S.w, p->kernels[reader]->body);
        if (S.ok && S.reads <= SE_REREAD * (double)S.t->numel && S.reads >= 0) {
            rewrite_stmt(&S, p->kernels[reader]->body);
            kl_builder_destroy(kl_builder_rewrite(cx, p, k)); /* the Mul: nothing left */
        } else {
            rebuild_mul(cx, p, k, &S);
        }
        kl_builder_destroy(S.L);
        free(S.extent);
        free(S.let);
        free(S.nlet);
    }
    free(use);
    return KN_OK;
}
