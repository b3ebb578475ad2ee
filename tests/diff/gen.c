/* Random valid ONNX graphs (see gen.h). Every op generator picks a data value of a
 * rank it accepts, draws attributes inside the op's legal range, computes the output
 * shape itself and appends the node; fresh operands (weights, broadcast operands,
 * runtime B of a MatMul) are initializers or graph inputs at random. Divisors are
 * always fresh positive operands, so no graph divides by a value near zero. */
#include "tests/diff/gen.h"

#include "onnx.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers (splitmix64) */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int rnd(rng *r, int n) { /* 0..n-1 */
    return n <= 1 ? 0 : (int)(next(r) % (uint64_t)n);
}
static int range(rng *r, int lo, int hi) { /* lo..hi */
    return lo + rnd(r, hi - lo + 1);
}
static bool chance(rng *r, int percent) {
    return rnd(r, 100) < percent;
}
static float unif(rng *r, float lo, float hi) {
    return lo + (hi - lo) * (float)((next(r) >> 40) * (1.0 / 16777216.0));
}

/* A dim drawn to hit corners: 1, odd, one past a vector or tile, a full vector. */
static int64_t pick_dim(rng *r, int max) {
    static const int dims[] = {1, 1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 23, 31, 33};
    int64_t d;
    do d = dims[rnd(r, (int)(sizeof dims / sizeof *dims))];
    while (d > max);
    return d;
}

static int64_t numel(const dg_value *v) {
    int64_t n = 1;
    for (int i = 0; i < v->rank; i++) n *= v->dims[i];
    return n;
}

/* ---- building the description */
static int new_value(dg_graph *g, dg_kind kind, int rank, const int64_t *dims) {
    int k = g->nv++;
    dg_value *v = &g->v[k];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->dtype = 1;
    v->rank = rank;
    for (int i = 0; i < rank; i++) v->dims[i] = dims[i];
    return k;
}

/* A fresh input or initializer of float data in [lo, hi]. */
static int fresh(dg_graph *g, rng *r, bool is_const, int rank, const int64_t *dims, float lo,
                 float hi) {
    int k = new_value(g, is_const ? DG_CONST : DG_INPUT, rank, dims);
    dg_value *v = &g->v[k];
    int64_t n = numel(v);
    float *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    for (int64_t i = 0; i < n; i++) d[i] = unif(r, lo, hi);
    v->data = d;
    v->positive = lo >= 0.5f;
    return k;
}

static int const_i64(dg_graph *g, int n, const int64_t *vals) {
    int64_t dims[1] = {n};
    int k = new_value(g, DG_CONST, 1, dims);
    g->v[k].dtype = 7;
    g->v[k].aux = true;
    int64_t *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    memcpy(d, vals, (size_t)n * sizeof *d);
    g->v[k].data = d;
    return k;
}

static int const_scalar(dg_graph *g, float x) {
    int k = new_value(g, DG_CONST, 0, NULL);
    float *d = malloc(sizeof *d);
    *d = x;
    g->v[k].data = d;
    g->v[k].aux = true;
    return k;
}

static dg_node *new_node(dg_graph *g, const char *op, int nin, const int *in, int rank,
                         const int64_t *dims) {
    dg_node *n = &g->n[g->nn++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->nin = nin;
    for (int i = 0; i < nin; i++) n->in[i] = in[i];
    n->out = new_value(g, DG_NODE, rank, dims);
    return n;
}

static void attr_i(dg_node *n, const char *name, int64_t x) {
    dg_attr *a = &n->attrs[n->nattrs++];
    a->name = name;
    a->type = 2;
    a->ints[0] = x;
}
static void attr_f(dg_node *n, const char *name, float x) {
    dg_attr *a = &n->attrs[n->nattrs++];
    a->name = name;
    a->type = 1;
    a->f = x;
}
static void attr_ints(dg_node *n, const char *name, int cnt, const int64_t *x) {
    dg_attr *a = &n->attrs[n->nattrs++];
    a->name = name;
    a->type = 7;
    a->nints = cnt;
    memcpy(a->ints, x, (size_t)cnt * sizeof *x);
}

/* A data value to build on: mostly the newest (chains), else any (DAGs), rarely a
 * constant; of rank in [lo, hi], or -1. */
static int pick(const dg_graph *g, rng *r, int lo, int hi) {
    int cand[DG_MAX_VALUES], nc = 0;
    bool consts = chance(r, 5); /* ops on constants only exercise folding */
    for (int i = 0; i < g->nv; i++)
        if (!g->v[i].aux && g->v[i].rank >= lo && g->v[i].rank <= hi && numel(&g->v[i]) > 0 &&
            (consts || g->v[i].kind != DG_CONST))
            cand[nc++] = i;
    if (!nc) return -1;
    if (chance(r, 60)) return cand[nc - 1];
    return cand[rnd(r, nc)];
}

static int64_t max_numel = 6000;

/* ---- the ops */
static bool gen_conv(dg_graph *g, rng *r) {
    int x = pick(g, r, 4, 4);
    if (x < 0) return false;
    const int64_t *d = g->v[x].dims;
    int64_t N = d[0], C = d[1], H = d[2], W = d[3];
    int64_t grp = 1;
    int kind = rnd(r, 3);
    if (kind == 1) grp = C; /* depthwise */
    if (kind == 2)
        for (int t = 0; t < 4; t++) {
            int64_t c = range(r, 1, (int)C);
            if (C % c == 0) grp = c;
        }
    int64_t M = grp * range(r, 1, grp == 1 ? 9 : 3);
    int64_t pads[4], k[2], s[2], dil[2], out[2];
    int64_t sp[2] = {H, W};
    for (int i = 0; i < 2; i++) {
        pads[i] = rnd(r, 3) ? rnd(r, 2) : range(r, 0, 2);
        pads[i + 2] = chance(r, 70) ? pads[i] : rnd(r, 2);
        dil[i] = chance(r, 10) ? 2 : 1;
        k[i] = range(r, 1, 3);
        while (k[i] > 1 && dil[i] * (k[i] - 1) + 1 > sp[i] + pads[i] + pads[i + 2]) k[i]--;
        if (dil[i] * (k[i] - 1) + 1 > sp[i] + pads[i] + pads[i + 2]) dil[i] = 1;
        s[i] = chance(r, 70) ? 1 : range(r, 2, 3);
        out[i] = (sp[i] + pads[i] + pads[i + 2] - dil[i] * (k[i] - 1) - 1) / s[i] + 1;
    }
    int64_t od[4] = {N, M, out[0], out[1]};
    if (N * M * out[0] * out[1] > max_numel) return false;
    int64_t wd[4] = {M, C / grp, k[0], k[1]};
    int in[3] = {x, fresh(g, r, chance(r, 85), 4, wd, -1, 1), -1};
    int nin = 2;
    if (chance(r, 60)) in[nin++] = fresh(g, r, chance(r, 85), 1, &M, -1, 1);
    dg_node *n = new_node(g, "Conv", nin, in, 4, od);
    if (grp != 1 || chance(r, 20)) attr_i(n, "group", grp);
    if (chance(r, 70)) attr_ints(n, "kernel_shape", 2, k);
    if (pads[0] | pads[1] | pads[2] | pads[3]) attr_ints(n, "pads", 4, pads);
    if (s[0] != 1 || s[1] != 1) attr_ints(n, "strides", 2, s);
    if (dil[0] != 1 || dil[1] != 1) attr_ints(n, "dilations", 2, dil);
    return true;
}

static bool gen_gemm(dg_graph *g, rng *r) {
    int x = pick(g, r, 2, 2);
    if (x < 0) return false;
    bool ta = chance(r, 20), tb = chance(r, 40);
    int64_t M = g->v[x].dims[ta], K = g->v[x].dims[!ta], N = pick_dim(r, 33);
    if (M * N > max_numel) return false;
    int64_t bd[2] = {tb ? N : K, tb ? K : N};
    int in[3] = {x, fresh(g, r, chance(r, 75), 2, bd, -1, 1), -1};
    int nin = 2;
    int cform = rnd(r, 5); /* none, [N], [1,N], [M,N], [M,1] */
    if (cform) {
        int64_t cd[2] = {cform == 1 ? N : cform == 4 ? M : cform == 2 ? 1 : M, cform == 4 ? 1 : N};
        in[nin++] = cform == 1 ? fresh(g, r, chance(r, 80), 1, &N, -1, 1)
                               : fresh(g, r, chance(r, 80), 2, cd, -1, 1);
    }
    int64_t od[2] = {M, N};
    dg_node *n = new_node(g, "Gemm", nin, in, 2, od);
    if (ta) attr_i(n, "transA", 1);
    if (tb) attr_i(n, "transB", 1);
    if (chance(r, 20)) attr_f(n, "alpha", chance(r, 50) ? 0.5f : 2.0f);
    if (cform && chance(r, 20)) attr_f(n, "beta", chance(r, 50) ? 0.5f : -1.0f);
    return true;
}

static bool gen_matmul(dg_graph *g, rng *r) {
    int x = pick(g, r, 2, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int rank = a->rank;
    int64_t K = a->dims[rank - 1], N = pick_dim(r, 33);
    int64_t bd[4], od[4];
    int brank = 2;
    if (rank > 2 && chance(r, 40)) { /* batched B, broadcasting on some batch dims */
        brank = range(r, 3, rank);
        for (int i = 0; i < brank - 2; i++) bd[i] = chance(r, 70) ? a->dims[rank - brank + i] : 1;
    }
    bd[brank - 2] = K;
    bd[brank - 1] = N;
    for (int i = 0; i < rank - 1; i++) od[i] = a->dims[i];
    od[rank - 1] = N;
    int64_t n = N;
    for (int i = 0; i < rank - 1; i++) n *= od[i];
    if (n > max_numel) return false;
    int in[2] = {x, fresh(g, r, chance(r, 65), brank, bd, -1, 1)};
    new_node(g, "MatMul", 2, in, rank, od);
    return true;
}

static bool gen_binary(dg_graph *g, rng *r) {
    static const char *ops[] = {"Add", "Sub", "Mul", "Div"};
    const char *op = ops[rnd(r, 4)];
    int x = pick(g, r, 0, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int other = -1;
    if (strcmp(op, "Div") && chance(r, 15)) {
        other = x;                                   /* shared input */
    } else if (strcmp(op, "Div") && chance(r, 35)) { /* another value, broadcastable */
        int cand[DG_MAX_VALUES], nc = 0;
        for (int i = 0; i < g->nv; i++) {
            const dg_value *b = &g->v[i];
            if (b->aux || i == x || b->rank > a->rank) continue;
            bool ok = true;
            for (int j = 0; j < b->rank && ok; j++)
                ok = b->dims[j] == 1 || b->dims[j] == a->dims[a->rank - b->rank + j];
            if (ok) cand[nc++] = i;
        }
        if (nc) other = cand[rnd(r, nc)];
    }
    if (other < 0) { /* fresh, broadcast: some dims 1, leading ones dropped */
        int64_t bd[4];
        int brank = chance(r, 25) ? rnd(r, a->rank + 1) : a->rank;
        for (int j = 0; j < brank; j++) {
            int64_t d = a->dims[a->rank - brank + j];
            bd[j] = chance(r, 30) ? 1 : d;
            if (d == 1 && chance(r, 15)) bd[j] = range(r, 2, 5); /* widens the output */
        }
        bool div = !strcmp(op, "Div");
        other = fresh(g, r, chance(r, 60), brank, bd, div ? 0.5f : -1, div ? 2 : 1);
    }
    const dg_value *b = &g->v[other];
    int64_t od[4];
    for (int j = 0; j < a->rank; j++) {
        od[j] = a->dims[j];
        int bj = j - (a->rank - b->rank);
        if (bj >= 0 && b->dims[bj] != 1) od[j] = b->dims[bj];
    }
    int64_t n = 1;
    for (int j = 0; j < a->rank; j++) n *= od[j];
    if (n > max_numel) return false;
    int in[2] = {x, other};
    if (strcmp(op, "Div") && chance(r, 30)) in[0] = other, in[1] = x;
    new_node(g, op, 2, in, a->rank, od);
    return true;
}

static bool gen_unary(dg_graph *g, rng *r) {
    static const char *ops[] = {"Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSwish"};
    const char *op = ops[rnd(r, 6)];
    int x = pick(g, r, 0, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int in[3] = {x, -1, -1}, nin = 1;
    if (!strcmp(op, "Clip")) {
        int form = rnd(r, 4); /* both, min, max, none */
        float lo = chance(r, 50) ? 0.0f : unif(r, -1, 0),
              hi = chance(r, 50) ? 6.0f : unif(r, 0.1f, 1);
        if (form == 0 || form == 1) in[1] = const_scalar(g, lo), nin = 2;
        if (form == 0 || form == 2) in[2] = const_scalar(g, hi), nin = 3;
    }
    dg_node *n = new_node(g, op, nin, in, a->rank, a->dims);
    if (!strcmp(op, "LeakyRelu") && chance(r, 70)) attr_f(n, "alpha", chance(r, 50) ? 0.1f : 0.3f);
    return true;
}

static bool gen_batchnorm(dg_graph *g, rng *r) {
    int x = pick(g, r, 2, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int64_t C = a->dims[1];
    bool c = chance(r, 85);
    int in[5] = {x, fresh(g, r, c, 1, &C, -1, 1), fresh(g, r, c, 1, &C, -1, 1),
                 fresh(g, r, c, 1, &C, -1, 1), fresh(g, r, c, 1, &C, 0.5f, 2)};
    dg_node *n = new_node(g, "BatchNormalization", 5, in, a->rank, a->dims);
    if (chance(r, 20)) attr_f(n, "epsilon", 1e-3f);
    return true;
}

static bool gen_pool(dg_graph *g, rng *r) {
    int x = pick(g, r, 4, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int which = rnd(r, 4);
    if (which >= 2) {
        int64_t od[4] = {a->dims[0], a->dims[1], 1, 1};
        new_node(g, which == 2 ? "GlobalAveragePool" : "GlobalMaxPool", 1, &x, 4, od);
        return true;
    }
    int64_t k[2], s[2], pads[4], od[4] = {a->dims[0], a->dims[1], 0, 0};
    bool ceil_mode = chance(r, 15);
    for (int i = 0; i < 2; i++) {
        int64_t d = a->dims[2 + i];
        k[i] = range(r, 1, 3);
        pads[i] = rnd(r, (int)k[i]);
        pads[i + 2] = chance(r, 70) ? pads[i] : rnd(r, (int)k[i]);
        if (k[i] > d + pads[i] + pads[i + 2]) k[i] = 1, pads[i] = pads[i + 2] = 0;
        s[i] = chance(r, 40) ? 1 : range(r, 2, 3);
        int64_t span = d + pads[i] + pads[i + 2] - k[i];
        od[2 + i] = (ceil_mode ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
        /* ONNX: with ceil_mode the last window must start inside input or left pad */
        if (ceil_mode && (od[2 + i] - 1) * s[i] >= d + pads[i]) od[2 + i]--;
    }
    dg_node *n = new_node(g, which ? "AveragePool" : "MaxPool", 1, &x, 4, od);
    attr_ints(n, "kernel_shape", 2, k);
    if (s[0] != 1 || s[1] != 1 || chance(r, 20)) attr_ints(n, "strides", 2, s);
    if (pads[0] | pads[1] | pads[2] | pads[3]) attr_ints(n, "pads", 4, pads);
    if (ceil_mode) attr_i(n, "ceil_mode", 1);
    if (which == 1 && chance(r, 40)) attr_i(n, "count_include_pad", 1);
    return true;
}

static bool gen_concat(dg_graph *g, rng *r) {
    int x = pick(g, r, 1, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int axis = rnd(r, a->rank);
    int in[4] = {x}, nin = range(r, 2, 4);
    int64_t od[4];
    memcpy(od, a->dims, sizeof od);
    for (int i = 1; i < nin; i++) {
        if (chance(r, 25)) {
            in[i] = x;
        } else {
            int64_t d[4];
            memcpy(d, a->dims, sizeof d);
            d[axis] = pick_dim(r, 9);
            in[i] = fresh(g, r, chance(r, 50), a->rank, d, -1, 1);
        }
        od[axis] += g->v[in[i]].dims[axis];
    }
    if (chance(r, 20)) { /* shuffle x away from the front */
        int j = rnd(r, nin), t = in[0];
        in[0] = in[j], in[j] = t;
    }
    int64_t n = 1;
    for (int j = 0; j < a->rank; j++) n *= od[j];
    if (n > max_numel) return false;
    dg_node *nd = new_node(g, "Concat", nin, in, a->rank, od);
    attr_i(nd, "axis", chance(r, 30) ? axis - a->rank : axis);
    return true;
}

static bool gen_reshape(dg_graph *g, rng *r) {
    int x = pick(g, r, 1, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int64_t n = numel(a), od[4], rest = n;
    int rank = range(r, 1, 4);
    for (int i = 0; i < rank - 1; i++) { /* a random divisor of what is left */
        int64_t d = 1;
        for (int t = 0; t < 6; t++) {
            int64_t c = range(r, 1, (int)(rest < 40 ? rest : 40));
            if (rest % c == 0) d = c;
        }
        od[i] = d;
        rest /= d;
    }
    od[rank - 1] = rest;
    int64_t sv[4];
    memcpy(sv, od, sizeof sv);
    int neg = chance(r, 40) ? rnd(r, rank) : -1;
    if (neg >= 0) sv[neg] = -1;
    for (int i = 0; i < rank && i < a->rank; i++)
        if (i != neg && od[i] == a->dims[i] && chance(r, 30)) sv[i] = 0;
    int in[2] = {x, const_i64(g, rank, sv)};
    new_node(g, "Reshape", 2, in, rank, od);
    return true;
}

static bool gen_transpose(dg_graph *g, rng *r) {
    int x = pick(g, r, 2, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int64_t perm[4] = {0}, od[4] = {0};
    for (int i = 0; i < a->rank; i++) perm[i] = i;
    bool given = chance(r, 85);
    if (given)
        for (int i = a->rank - 1; i > 0; i--) {
            int j = rnd(r, i + 1);
            int64_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
    else
        for (int i = 0; i < a->rank; i++) perm[i] = a->rank - 1 - i;
    for (int i = 0; i < a->rank; i++) od[i] = a->dims[perm[i]];
    dg_node *n = new_node(g, "Transpose", 1, &x, a->rank, od);
    if (given) attr_ints(n, "perm", a->rank, perm);
    return true;
}

static bool gen_flatten(dg_graph *g, rng *r) {
    int x = pick(g, r, 1, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int axis = rnd(r, a->rank + 1);
    int64_t od[2] = {1, 1};
    for (int i = 0; i < a->rank; i++) od[i >= axis] *= a->dims[i];
    dg_node *n = new_node(g, "Flatten", 1, &x, 2, od);
    if (axis != 1 || chance(r, 30)) attr_i(n, "axis", axis);
    return true;
}

static bool gen_softmax(dg_graph *g, rng *r) {
    int x = pick(g, r, 1, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    dg_node *n = new_node(g, "Softmax", 1, &x, a->rank, a->dims);
    if (chance(r, 70)) attr_i(n, "axis", range(r, -a->rank, a->rank - 1));
    return true;
}

static bool gen_reducemean(dg_graph *g, rng *r) {
    int x = pick(g, r, 1, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    bool red[4] = {0}, all = chance(r, 10);
    int64_t axes[4];
    int na = 0;
    for (int i = 0; i < a->rank; i++)
        if (all || chance(r, 40)) red[i] = true;
    for (int i = 0; i < a->rank; i++)
        if (red[i]) axes[na++] = chance(r, 30) ? i - a->rank : i;
    if (!na) red[a->rank - 1] = true, axes[na++] = a->rank - 1;
    bool keep = chance(r, 50) || na == a->rank;
    int64_t od[4];
    int rank = 0;
    for (int i = 0; i < a->rank; i++)
        if (!red[i])
            od[rank++] = a->dims[i];
        else if (keep)
            od[rank++] = 1;
    dg_node *n = new_node(g, "ReduceMean", 1, &x, rank, od);
    if (!(all && na == a->rank && chance(r, 50))) attr_ints(n, "axes", na, axes);
    if (!keep || chance(r, 30)) attr_i(n, "keepdims", keep);
    return true;
}

static bool gen_slice(dg_graph *g, rng *r) {
    int x = pick(g, r, 1, 4);
    if (x < 0) return false;
    const dg_value *a = &g->v[x];
    int64_t st[4], en[4], ax[4], sp[4], od[4];
    memcpy(od, a->dims, sizeof od);
    int na = 0;
    for (int i = 0; i < a->rank; i++) {
        if (!chance(r, 50) && !(i == a->rank - 1 && !na)) continue;
        int64_t d = a->dims[i], s, e,
                step = chance(r, 60) ? 1 : (int64_t[]){2, -1, -2, 3}[rnd(r, 4)];
        for (int t = 0;; t++) {
            s = range(r, -(int)d - 1, (int)d + 1);
            e = chance(r, 10) ? (step > 0 ? INT64_MAX : INT64_MIN)
                              : range(r, -(int)d - 1, (int)d + 1);
            int64_t len, S = s < 0 ? s + d : s, E = e < 0 && e != INT64_MIN ? e + d : e;
            if (e == INT64_MIN) E = -1;
            if (step > 0) {
                S = S < 0 ? 0 : S > d ? d : S;
                E = E < 0 ? 0 : E > d ? d : E;
                len = E > S ? (E - S + step - 1) / step : 0;
            } else {
                S = S < 0 ? 0 : S > d - 1 ? d - 1 : S;
                E = E < -1 ? -1 : E > d - 1 ? d - 1 : E;
                len = S > E ? (S - E - step - 1) / -step : 0;
            }
            if (len > 0) {
                od[i] = len;
                break;
            }
            if (t > 20) return false;
        }
        st[na] = s, en[na] = e, sp[na] = step;
        ax[na++] = chance(r, 30) ? i - a->rank : i;
    }
    bool steps = false;
    for (int i = 0; i < na; i++) steps |= sp[i] != 1;
    int in[5] = {x, const_i64(g, na, st), const_i64(g, na, en), const_i64(g, na, ax), -1};
    int nin = 4;
    if (steps || chance(r, 30)) in[nin++] = const_i64(g, na, sp);
    new_node(g, "Slice", nin, in, a->rank, od);
    return true;
}

typedef bool (*gen_fn)(dg_graph *, rng *);
static const struct {
    gen_fn fn;
    int weight;
} ops[] = {
    {gen_conv, 14},     {gen_gemm, 6},    {gen_matmul, 7},     {gen_binary, 18}, {gen_unary, 16},
    {gen_batchnorm, 5}, {gen_pool, 7},    {gen_concat, 5},     {gen_reshape, 5}, {gen_transpose, 4},
    {gen_flatten, 3},   {gen_softmax, 3}, {gen_reducemean, 3}, {gen_slice, 4},
};

void dg_generate(dg_graph *g, uint64_t seed, int min_nodes, int max_nodes) {
    rng r = {seed * 0x2545f4914f6cdd1dull + 1};
    memset(g, 0, sizeof *g);
    int ninputs = chance(&r, 70) ? 1 : range(&r, 2, 3);
    for (int i = 0; i < ninputs; i++) {
        int rank = chance(&r, 55) ? 4 : range(&r, 1, 3);
        int64_t d[4];
        for (int t = 0;; t++) {
            int64_t n = 1;
            for (int j = 0; j < rank; j++) n *= d[j] = pick_dim(&r, j == 0 && rank == 4 ? 3 : 33);
            if (n <= 3000 || t > 50) break;
        }
        fresh(g, &r, false, rank, d, -1, 1);
    }
    int want = range(&r, min_nodes, max_nodes), total = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) total += ops[i].weight;
    for (int tries = 0; g->nn < want && tries < 400; tries++) {
        if (g->nv > DG_MAX_VALUES - 16) break;
        int w = rnd(&r, total);
        size_t i = 0;
        while (w >= ops[i].weight) w -= ops[i++].weight;
        ops[i].fn(g, &r);
    }
    /* outputs: every unread node output, and some read ones */
    bool read[DG_MAX_VALUES] = {0};
    for (int i = 0; i < g->nn; i++)
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] >= 0) read[g->n[i].in[j]] = true;
    for (int i = 0; i < g->nn; i++) {
        int o = g->n[i].out;
        if (!read[o] || chance(&r, 15)) g->out[g->nout++] = o;
    }
    dg_prune(g);
}

void dg_free(dg_graph *g) {
    for (int i = 0; i < g->nv; i++) free(g->v[i].data), g->v[i].data = NULL;
}

void dg_copy(dg_graph *dst, const dg_graph *src) {
    memcpy(dst, src, sizeof *dst);
    for (int i = 0; i < src->nv; i++)
        if (src->v[i].data) {
            size_t n = (size_t)numel(&src->v[i]) * (src->v[i].dtype == 7 ? 8 : 4);
            dst->v[i].data = malloc(n ? n : 1);
            memcpy(dst->v[i].data, src->v[i].data, n);
        }
}

void dg_prune(dg_graph *g) {
    bool need[DG_MAX_VALUES] = {0};
    for (int i = 0; i < g->nout; i++) need[g->out[i]] = true;
    for (int i = g->nn - 1; i >= 0; i--) {
        dg_node *n = &g->n[i];
        n->dead = n->dead || !need[n->out];
        if (n->dead) continue;
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] >= 0) need[n->in[j]] = true;
    }
    for (int i = 0; i < g->nv; i++)
        if (g->v[i].kind != DG_NODE || !need[i]) g->v[i].dead = !need[i];
    for (int i = 0; i < g->nn; i++) g->v[g->n[i].out].dead = g->n[i].dead;
}

void dg_cut(dg_graph *g, int k, uint64_t seed) {
    rng r = {seed};
    dg_node *n = &g->n[k];
    dg_value *v = &g->v[n->out];
    n->dead = true;
    v->kind = DG_INPUT;
    int64_t c = numel(v);
    float *d = malloc((size_t)(c ? c : 1) * sizeof *d);
    for (int64_t i = 0; i < c; i++) d[i] = unif(&r, -1, 1);
    v->data = d;
    dg_prune(g);
}

int dg_inputs(const dg_graph *g, int *idx) {
    int k = 0;
    for (int i = 0; i < g->nv; i++)
        if (!g->v[i].dead && g->v[i].kind == DG_INPUT) idx[k++] = i;
    return k;
}

int dg_live_nodes(const dg_graph *g) {
    int k = 0;
    for (int i = 0; i < g->nn; i++) k += !g->n[i].dead;
    return k;
}

/* ---- ONNX through protobuf-c. Everything packed is allocated from one pool. */
typedef struct pool {
    void *p[16384];
    int n;
} pool;

static void *pz(pool *pl, size_t size) {
    void *p = calloc(1, size ? size : 1);
    pl->p[pl->n++] = p;
    return p;
}

static char *vname(pool *pl, int k) {
    char *s = pz(pl, 16);
    snprintf(s, 16, "v%d", k);
    return s;
}

static Onnx__TypeProto *ttype(pool *pl, const dg_value *v) {
    Onnx__TypeProto *t = pz(pl, sizeof *t);
    Onnx__TypeProto__Tensor *tt = pz(pl, sizeof *tt);
    Onnx__TensorShapeProto *sh = pz(pl, sizeof *sh);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = v->dtype;
    tt->shape = sh;
    sh->n_dim = (size_t)v->rank;
    sh->dim = pz(pl, 4 * sizeof *sh->dim);
    for (int i = 0; i < v->rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = pz(pl, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = v->dims[i];
        sh->dim[i] = d;
    }
    return t;
}

static Onnx__ValueInfoProto *vinfo(pool *pl, const dg_graph *g, int k) {
    Onnx__ValueInfoProto *vi = pz(pl, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = vname(pl, k);
    vi->type = ttype(pl, &g->v[k]);
    return vi;
}

void dg_pack(const dg_graph *g, uint8_t **buf, size_t *len) {
    pool *pl = calloc(1, sizeof *pl);
    Onnx__ModelProto m;
    Onnx__GraphProto gr;
    Onnx__OperatorSetIdProto opset, *opsets[1] = {&opset};
    onnx__model_proto__init(&m);
    onnx__graph_proto__init(&gr);
    onnx__operator_set_id_proto__init(&opset);
    opset.domain = "";
    opset.has_version = 1;
    opset.version = DG_OPSET;
    m.has_ir_version = 1;
    m.ir_version = 8;
    m.n_opset_import = 1;
    m.opset_import = opsets;
    m.producer_name = "kiln_diff";
    m.graph = &gr;
    gr.name = "diff";
    gr.node = pz(pl, DG_MAX_NODES * sizeof *gr.node);
    gr.initializer = pz(pl, DG_MAX_VALUES * sizeof *gr.initializer);
    gr.input = pz(pl, DG_MAX_VALUES * sizeof *gr.input);
    gr.output = pz(pl, DG_MAX_VALUES * sizeof *gr.output);
    for (int i = 0; i < g->nv; i++) {
        const dg_value *v = &g->v[i];
        if (v->dead) continue;
        if (v->kind == DG_INPUT) gr.input[gr.n_input++] = vinfo(pl, g, i);
        if (v->kind != DG_CONST) continue;
        Onnx__TensorProto *t = pz(pl, sizeof *t);
        onnx__tensor_proto__init(t);
        t->name = vname(pl, i);
        t->has_data_type = 1;
        t->data_type = v->dtype;
        t->n_dims = (size_t)v->rank;
        t->dims = (int64_t *)v->dims;
        size_t n = (size_t)numel(v);
        if (v->dtype == 7)
            t->n_int64_data = n, t->int64_data = v->data;
        else
            t->n_float_data = n, t->float_data = v->data;
        gr.initializer[gr.n_initializer++] = t;
    }
    for (int i = 0; i < g->nn; i++) {
        const dg_node *d = &g->n[i];
        if (d->dead) continue;
        Onnx__NodeProto *n = pz(pl, sizeof *n);
        onnx__node_proto__init(n);
        n->op_type = (char *)d->op;
        n->name = pz(pl, 16);
        snprintf(n->name, 16, "n%d", i);
        n->n_input = (size_t)d->nin;
        n->input = pz(pl, DG_MAX_IN * sizeof *n->input);
        for (int j = 0; j < d->nin; j++) n->input[j] = d->in[j] < 0 ? "" : vname(pl, d->in[j]);
        n->n_output = 1;
        n->output = pz(pl, sizeof *n->output);
        n->output[0] = vname(pl, d->out);
        n->n_attribute = (size_t)d->nattrs;
        n->attribute = pz(pl, DG_MAX_ATTRS * sizeof *n->attribute);
        for (int j = 0; j < d->nattrs; j++) {
            const dg_attr *at = &d->attrs[j];
            Onnx__AttributeProto *a = pz(pl, sizeof *a);
            onnx__attribute_proto__init(a);
            a->name = (char *)at->name;
            a->has_type = 1;
            a->type = at->type;
            if (at->type == 1) a->has_f = 1, a->f = at->f;
            if (at->type == 2) a->has_i = 1, a->i = at->ints[0];
            if (at->type == 7) a->n_ints = (size_t)at->nints, a->ints = (int64_t *)at->ints;
            n->attribute[j] = a;
        }
        gr.node[gr.n_node++] = n;
    }
    for (int i = 0; i < g->nout; i++) {
        bool dup = false; /* an output listed twice is kept once */
        for (int j = 0; j < i; j++) dup |= g->out[j] == g->out[i];
        if (!dup) gr.output[gr.n_output++] = vinfo(pl, g, g->out[i]);
    }
    *len = onnx__model_proto__get_packed_size(&m);
    *buf = malloc(*len);
    onnx__model_proto__pack(&m, *buf);
    for (int i = 0; i < pl->n; i++) free(pl->p[i]);
    free(pl);
}

void dg_print(const dg_graph *g, void *file) {
    FILE *f = file;
    for (int i = 0; i < g->nn; i++) {
        const dg_node *n = &g->n[i];
        if (n->dead) continue;
        const dg_value *o = &g->v[n->out];
        fprintf(f, "  v%d = %s(", n->out, n->op);
        for (int j = 0; j < n->nin; j++) {
            int k = n->in[j];
            if (k < 0) {
                fprintf(f, "%s-", j ? ", " : "");
                continue;
            }
            const dg_value *v = &g->v[k];
            fprintf(f, "%s%s%d", j ? ", " : "", v->kind == DG_CONST ? "c" : "v", k);
            if (v->kind == DG_INPUT) fprintf(f, "(in)");
        }
        fprintf(f, ") ->");
        for (int j = 0; j < o->rank; j++) fprintf(f, " %lld", (long long)o->dims[j]);
        for (int j = 0; j < n->nattrs; j++) {
            const dg_attr *a = &n->attrs[j];
            fprintf(f, " %s=", a->name);
            if (a->type == 1) fprintf(f, "%g", a->f);
            if (a->type == 2) fprintf(f, "%lld", (long long)a->ints[0]);
            for (int t = 0; a->type == 7 && t < a->nints; t++)
                fprintf(f, "%s%lld", t ? "," : "", (long long)a->ints[t]);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "  outputs:");
    for (int i = 0; i < g->nout; i++) fprintf(f, " v%d", g->out[i]);
    fprintf(f, "\n");
}
