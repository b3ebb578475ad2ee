/* ONNX Runtime's quantized contrib operators (domain com.microsoft) rewritten at load
 * time into operators kiln already has, so that every later stage (passes, the
 * interpreter, the three emitters) sees standard ONNX plus kiln's own QLinearAdd.
 * The semantics are those of ONNX Runtime's docs/ContribOperators.md:
 *
 *   QuantizeLinear, DequantizeLinear   the ONNX operators (opset 21), attribute axis
 *   QLinearConv                        the ONNX operator; channels_last=1 between two
 *                                      8-bit Transposes
 *   QLinearAdd                         kiln's QLinearAdd: (As (A - Az) + Bs (B - Bz)) / Cs
 *                                      + Cz in float32, rounded half to even, the
 *                                      documented formula in the order it is written
 *   QLinearMul                         DQ(A) * DQ(B) -> QuantizeLinear(Cs, Cz)
 *   QLinearConcat                      Concat of the 8-bit inputs where every input has
 *                                      the output's scale and zero point (constants, the
 *                                      same values: Q(DQ(x)) is then x); else DQ of each,
 *                                      Concat, QuantizeLinear
 *   QLinearGlobalAveragePool           DQ -> GlobalAveragePool (channels_last: ReduceMean
 *                                      over the spatial axes) -> QuantizeLinear
 *   QLinearAveragePool                 DQ -> AveragePool -> QuantizeLinear ("Output =
 *                                      Dequantize(Input) -> AveragePool on fp32 data ->
 *                                      Quantize(output)"), channels_last between Transposes
 *   QLinearSigmoid, QLinearLeakyRelu   DQ -> Sigmoid | LeakyRelu(alpha) -> QuantizeLinear
 *   QLinearSoftmax                     DQ -> Softmax (the node's `opset` attribute chooses
 *                                      the axis semantics) -> QuantizeLinear
 *   QLinearReduceMean                  DQ -> ReduceMean (axes, keepdims) -> QuantizeLinear
 *   QLinearWhere                       Where(condition, DQ(X), DQ(Y)) -> QuantizeLinear
 *   QGemm                              with y_scale, alpha 1 and a bias of one value per
 *                                      column (or none): QLinearMatMul with kiln's int32
 *                                      bias input (requantized in double from the float32
 *                                      scales, ONNX mode); otherwise MatMulInteger [+ C] ->
 *                                      Cast -> Mul by a_scale * b_scale [* alpha]
 *                                      [-> QuantizeLinear]
 *
 * The qdq pass (passes/qdq.c) then fuses what it recognizes (a DQ -> MaxPool -> Q, ...).
 * A zero point the node omits is 0 of its operand's type (a constant where the type is
 * known when loading; otherwise CastLike(0, operand)). ONNX Runtime's own kernels
 * compute some of these differently (lookup tables, float multipliers instead of a
 * division): results can differ from it by one step where a value lies within float32
 * rounding of a tie (docs/quantization.md). */
#include "frontend/onnx_contrib.h"

#include "ir/ops.h"
#include "ir/requant.h"

#include <stdio.h>
#include <string.h>

/* required: a bit per input that may not be omitted (zero points may: their default is
 * 0 of the operand's type) */
static const kn_contrib_op contrib_ops[] = {
    {"DequantizeLinear", 2, 3, 0x3, "DequantizeLinear"},
    {"QGemm", 6, 9, 0x1b,
     "QLinearMatMul with an int32 bias per column (alpha 1, constant B, y_scale); else "
     "MatMulInteger, Add, Cast, Mul [, QuantizeLinear]"},
    {"QLinearAdd", 7, 8, 0x5b, "kiln's QLinearAdd"},
    {"QLinearAveragePool", 4, 5, 0xb, "DequantizeLinear, AveragePool, QuantizeLinear"},
    {"QLinearConcat", 5, 255, 0x1,
     "Concat of the 8-bit inputs (all on the output's scale and zero point); else "
     "DequantizeLinear, Concat, QuantizeLinear"},
    {"QLinearConv", 8, 9, 0xff, "QLinearConv"},
    {"QLinearGlobalAveragePool", 5, 5, 0xb,
     "DequantizeLinear, GlobalAveragePool (channels_last: ReduceMean), QuantizeLinear"},
    {"QLinearLeakyRelu", 4, 5, 0xb, "DequantizeLinear, LeakyRelu, QuantizeLinear"},
    {"QLinearMul", 7, 8, 0x5b, "DequantizeLinear, Mul, QuantizeLinear"},
    {"QLinearReduceMean", 4, 5, 0xb, "DequantizeLinear, ReduceMean, QuantizeLinear"},
    {"QLinearSigmoid", 4, 5, 0xb, "DequantizeLinear, Sigmoid, QuantizeLinear"},
    {"QLinearSoftmax", 4, 5, 0xb, "DequantizeLinear, Softmax, QuantizeLinear"},
    {"QLinearWhere", 9, 9, 0xb7, "DequantizeLinear x2, Where, QuantizeLinear"},
    {"QuantizeLinear", 2, 3, 0x3, "QuantizeLinear"},
};
#define NCONTRIB (int)(sizeof contrib_ops / sizeof contrib_ops[0])

/* Opsets of the nodes made here: the versions whose semantics the rewrite means. */
enum { OPSET_Q = 21, OPSET_POOL = 19, OPSET_OPS = 13, OPSET_QLINEAR = 10 };

const kn_contrib_op *kn_contrib_ops(int *n) {
    *n = NCONTRIB;
    return contrib_ops;
}

const kn_contrib_op *kn_contrib_find(const char *op_type) {
    for (int i = 0; i < NCONTRIB; i++)
        if (!strcmp(contrib_ops[i].name, op_type)) return &contrib_ops[i];
    return NULL;
}

const char *kn_contrib_names(char *buf, size_t size) {
    buf[0] = 0;
    for (int i = 0; i < NCONTRIB; i++) {
        size_t k = strlen(buf);
        snprintf(buf + k, size - k, "%s%s", i ? ", " : "", contrib_ops[i].name);
    }
    return buf;
}

kn_node *kn_contrib_node(kn_graph *g, const char *name, const char *op_type, int nin, kn_value **in,
                         int nout, kn_value **out) {
    kn_node *n = kn_arena_alloc(g->arena, sizeof *n);
    KN_ASSERT(n);
    n->id = -1;
    n->op = KN_OP_COUNT;
    n->name = kn_arena_strdup(g->arena, name ? name : "");
    n->op_type = kn_arena_strdup(g->arena, op_type);
    n->domain = KN_MS_DOMAIN;
    n->graph = g;
    n->nin = nin;
    n->nout = nout;
    n->in = in;
    n->out = out;
    return n;
}

/* The rewrite of one node: its graph and the node, for names and messages. */
typedef struct ex {
    kn_ctx *cx;
    kn_graph *g;
    const kn_node *n;
} ex;

/* Input i of the node, or NULL where it is omitted. */
static kn_value *input(const ex *e, int i) {
    return i < e->n->nin ? e->n->in[i] : NULL;
}

/* A new value named after the node's output, with a suffix, unique in the model. */
static kn_value *value(ex *e, const char *suffix) {
    const char *base = e->n->out[0] ? e->n->out[0]->name : e->n->name;
    char name[512];
    snprintf(name, sizeof name, "%s/%s", base, suffix);
    for (int k = 2; kn_graph_find_value(e->g, name); k++)
        snprintf(name, sizeof name, "%s/%s%d", base, suffix, k);
    return kn_graph_add_value(e->g, name, NULL);
}

static kn_value *constant(ex *e, const char *suffix, kn_tensor *t) {
    KN_ASSERT(t);
    kn_value *v = value(e, suffix);
    v->type = t->type;
    v->constant = t;
    return v;
}

/* A node of op in opset `opset` reading in[0..nin), writing out (a new value if NULL). */
static kn_node *node(ex *e, kn_op op, int opset, int nin, kn_value **in, kn_value *out,
                     const char *suffix) {
    if (!out) out = value(e, suffix);
    kn_node *m = kn_graph_add_node(e->g, op, e->n->name, nin, in, 1, &out);
    m->opset = opset;
    m->attrs = kn_arena_array(e->g->arena, 8, sizeof *m->attrs);
    KN_ASSERT(m->attrs);
    return m;
}

/* Copies the node's attribute `name` to m, if the node has it, after checking its type
 * (a mismatch is reported through cx: kn_contrib_expand returns it). */
static void copy_attr(ex *e, kn_node *m, const char *name) {
    static const struct {
        const char *name;
        kn_attr_kind kind;
    } kinds[] = {{"alpha", KN_ATTR_FLOAT},
                 {"auto_pad", KN_ATTR_STRING},
                 {"axis", KN_ATTR_INT},
                 {"axes", KN_ATTR_INTS},
                 {"keepdims", KN_ATTR_INT},
                 {"ceil_mode", KN_ATTR_INT},
                 {"count_include_pad", KN_ATTR_INT},
                 {"dilations", KN_ATTR_INTS},
                 {"group", KN_ATTR_INT},
                 {"kernel_shape", KN_ATTR_INTS},
                 {"pads", KN_ATTR_INTS},
                 {"strides", KN_ATTR_INTS}};
    const kn_attr *a = kn_node_attr(e->n, name);
    if (!a) return;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].name, name) && a->kind != kinds[i].kind) {
            const int64_t *v;
            switch (kinds[i].kind) { /* the accessor reports the mismatch */
            case KN_ATTR_FLOAT: kn_attr_float(e->cx, e->n, name, 0); break;
            case KN_ATTR_STRING: kn_attr_str(e->cx, e->n, name, ""); break;
            case KN_ATTR_INTS: kn_attr_ints(e->cx, e->n, name, &v); break;
            default: kn_attr_int(e->cx, e->n, name, 0); break;
            }
            return;
        }
    m->attrs[m->nattr++] = *a;
}

static void set_int(kn_node *m, const char *name, int64_t v) {
    m->attrs[m->nattr++] = (kn_attr){.name = name, .kind = KN_ATTR_INT, .i = v};
}

static void set_ints(ex *e, kn_node *m, const char *name, int n, const int64_t *v) {
    int64_t *c = kn_arena_array(e->g->arena, (size_t)n + 1, sizeof *c);
    KN_ASSERT(c);
    memcpy(c, v, (size_t)n * sizeof *v);
    m->attrs[m->nattr++] = (kn_attr){.name = name, .kind = KN_ATTR_INTS, .ints = c, .n = n};
}

static bool type_known(const kn_value *v) {
    return v && (v->constant || (v->flags & KN_VALUE_INPUT)) && v->type.dtype != KN_UNDEF;
}

/* The element type of v where it follows, before shape inference, from v's declared
 * type or from the quantizing node that makes it (its zero point's type), through
 * type-preserving data movement; KN_UNDEF otherwise. */
static kn_dtype known_dtype(const kn_value *v, int depth) {
    if (!v || depth > 32) return KN_UNDEF;
    if (type_known(v)) return v->type.dtype;
    const kn_node *p = v->producer;
    if (!p) return KN_UNDEF;
    switch (p->op) {
    case KN_OP_QUANTIZELINEAR:
        return p->nin > 2 && p->in[2]            ? known_dtype(p->in[2], depth + 1)
               : kn_node_attr(p, "output_dtype") ? KN_UNDEF
                                                 : KN_U8;
    case KN_OP_QLINEARADD:
    case KN_OP_QLINEARCONV:
    case KN_OP_QLINEARMATMUL:
        return p->nin > 7 && p->in[7] ? known_dtype(p->in[7], depth + 1) : KN_U8;
    case KN_OP_CASTLIKE: return known_dtype(p->in[1], depth + 1);
    case KN_OP_CONCAT:
    case KN_OP_FLATTEN:
    case KN_OP_IDENTITY:
    case KN_OP_MAXPOOL:
    case KN_OP_RESHAPE:
    case KN_OP_SQUEEZE:
    case KN_OP_TRANSPOSE:
    case KN_OP_UNSQUEEZE: return known_dtype(p->in[0], depth + 1);
    default: return KN_UNDEF;
    }
}

/* Zero point z, or where it is omitted a 0 of `like`'s element type (the contrib
 * operators' default: their zero points have their operand's type). */
static kn_value *zero_point(ex *e, kn_value *z, kn_value *like) {
    if (z) return z;
    kn_dtype t = known_dtype(like, 0);
    if (t != KN_UNDEF) return constant(e, "zp", kn_tensor_scalar_i64(e->g->arena, t, 0));
    kn_value *in[2] = {constant(e, "zero", kn_tensor_scalar_i64(e->g->arena, KN_I32, 0)), like};
    return node(e, KN_OP_CASTLIKE, OPSET_Q, 2, in, NULL, "zp")->out[0];
}

/* DequantizeLinear(x, s, z) into a new float32 value. */
static kn_value *dq(ex *e, kn_value *x, kn_value *s, kn_value *z) {
    kn_value *in[3] = {x, s, z};
    return node(e, KN_OP_DEQUANTIZELINEAR, OPSET_Q, z ? 3 : 2, in, NULL, "dq")->out[0];
}

/* QuantizeLinear(f, s, z) into out; z omitted: 0 of like's type. */
static void q(ex *e, kn_value *f, kn_value *s, kn_value *z, kn_value *like, kn_value *out) {
    kn_value *in[3] = {f, s, zero_point(e, z, like)};
    node(e, KN_OP_QUANTIZELINEAR, OPSET_Q, 3, in, out, "q");
}

/* Transpose of x by perm (rank r) into out (a new value if NULL). */
static kn_value *transpose(ex *e, kn_value *x, int r, const int64_t *perm, kn_value *out) {
    kn_node *t = node(e, KN_OP_TRANSPOSE, OPSET_OPS, 1, &x, out, "t");
    set_ints(e, t, "perm", r, perm);
    return t->out[0];
}

/* NHWC <-> NCHW permutations of rank r: to_first moves the last axis to 1. */
static void perm_cl(int r, bool to_first, int64_t *p) {
    p[0] = 0;
    for (int i = 1; i < r; i++)
        p[i] = to_first ? (i == 1 ? r - 1 : i - 1) : (i == r - 1 ? 1 : i + 1);
}

/* Whether scalar constants a and b hold the same value in the same type (both NULL:
 * the default zero point; one NULL: no, its type being the operand's). */
static bool same_scalar(const kn_value *a, const kn_value *b) {
    if (a == b) return true;
    if (!a || !b) return false;
    const kn_value *c[2] = {a, b};
    double x[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        if (!c[i]->constant || !c[i]->constant->data || kn_tensor_numel(c[i]->constant) != 1)
            return false;
        x[i] = kn_tensor_get_f64(c[i]->constant, 0);
    }
    return a->type.dtype == b->type.dtype && x[0] == x[1];
}

/* DQ -> op -> Q for the elementwise and pooling operators: x, xs, xz at inputs 0-2,
 * ys, yz at 3-4. */
static kn_status unary(ex *e, kn_op op, int opset, const char *const *attrs) {
    kn_value *x = input(e, 0);
    kn_value *f = dq(e, x, input(e, 1), input(e, 2));
    kn_node *m = node(e, op, opset, 1, &f, NULL, "f");
    for (int i = 0; attrs && attrs[i]; i++) copy_attr(e, m, attrs[i]);
    q(e, m->out[0], input(e, 3), input(e, 4), x, e->n->out[0]);
    return KN_OK;
}

static kn_status average_pool(ex *e) {
    static const char *const attrs[] = {
        "auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides", NULL};
    const int64_t *ks;
    int nk = kn_attr_ints(e->cx, e->n, "kernel_shape", &ks);
    if (nk < 1 || nk > KN_MAX_RANK - 2)
        return kn_diag(e->cx, e->n, KN_EINVAL, "kernel_shape must have 1 to %d entries",
                       KN_MAX_RANK - 2);
    if (!kn_attr_int(e->cx, e->n, "channels_last", 0))
        return unary(e, KN_OP_AVERAGEPOOL, OPSET_POOL, attrs);
    int r = nk + 2;
    int64_t to[KN_MAX_RANK], back[KN_MAX_RANK];
    perm_cl(r, true, to);
    perm_cl(r, false, back);
    kn_value *x = input(e, 0);
    kn_value *xt = transpose(e, x, r, to, NULL);
    kn_value *f = dq(e, xt, input(e, 1), input(e, 2));
    kn_node *m = node(e, KN_OP_AVERAGEPOOL, OPSET_POOL, 1, &f, NULL, "f");
    for (int i = 0; attrs[i]; i++) copy_attr(e, m, attrs[i]);
    kn_value *yt = value(e, "y");
    q(e, m->out[0], input(e, 3), input(e, 4), x, yt);
    transpose(e, yt, r, back, e->n->out[0]);
    return KN_OK;
}

static kn_status global_average_pool(ex *e) {
    if (!kn_attr_int(e->cx, e->n, "channels_last", 0))
        return unary(e, KN_OP_GLOBALAVERAGEPOOL, OPSET_OPS, NULL);
    /* N x D1 x ... x Dn x C: the mean over axes 1..n. The rank is X's declared one
     * (a graph input or constant), else 4 (the documented image case). */
    kn_value *x = input(e, 0);
    int r = type_known(x) && x->type.rank >= 3 ? x->type.rank : 4;
    int64_t axes[KN_MAX_RANK];
    for (int i = 1; i < r - 1; i++) axes[i - 1] = i;
    kn_value *f = dq(e, x, input(e, 1), input(e, 2));
    kn_node *m = node(e, KN_OP_REDUCEMEAN, OPSET_OPS, 1, &f, NULL, "f");
    set_ints(e, m, "axes", r - 2, axes);
    set_int(m, "keepdims", 1);
    q(e, m->out[0], input(e, 3), input(e, 4), x, e->n->out[0]);
    return KN_OK;
}

static kn_status qlinear_add(ex *e) {
    kn_value *a = input(e, 0), *b = input(e, 3);
    kn_value *in[8] = {a,
                       input(e, 1),
                       zero_point(e, input(e, 2), a),
                       b,
                       input(e, 4),
                       zero_point(e, input(e, 5), b),
                       input(e, 6),
                       zero_point(e, input(e, 7), a)};
    kn_node *m = node(e, KN_OP_QLINEARADD, e->g->opset, 8, in, e->n->out[0], "c");
    set_int(m, KN_QADD_F64_ATTR, 1); /* the documented formula, not float32 steps */
    return KN_OK;
}

static kn_status qlinear_mul(ex *e) {
    kn_value *in[2] = {dq(e, input(e, 0), input(e, 1), input(e, 2)),
                       dq(e, input(e, 3), input(e, 4), input(e, 5))};
    kn_node *m = node(e, KN_OP_MUL, 14, 2, in, NULL, "f");
    q(e, m->out[0], input(e, 6), input(e, 7), input(e, 0), e->n->out[0]);
    return KN_OK;
}

/* Z = quantize(where(condition, dequantize(X), dequantize(Y))) at (z_scale, z_zp). */
static kn_status qlinear_where(ex *e) {
    kn_value *in[3] = {input(e, 0), dq(e, input(e, 1), input(e, 2), input(e, 3)),
                       dq(e, input(e, 4), input(e, 5), input(e, 6))};
    kn_node *m = node(e, KN_OP_WHERE, 16, 3, in, NULL, "f");
    q(e, m->out[0], input(e, 7), input(e, 8), input(e, 1), e->n->out[0]);
    return KN_OK;
}

static kn_status qlinear_concat(ex *e) {
    int nin = e->n->nin;
    if ((nin - 2) % 3)
        return kn_diag(e->cx, e->n, KN_EINVAL,
                       "has %d inputs; expected Y_scale, Y_zero_point and then (X, X_scale, "
                       "X_zero_point) triples",
                       nin);
    int k = (nin - 2) / 3;
    kn_value *ys = input(e, 0), *yz = input(e, 1);
    bool same = true; /* every input already on the output's grid */
    for (int i = 0; i < k; i++) {
        if (!input(e, 2 + 3 * i) || !input(e, 3 + 3 * i))
            return kn_diag(e->cx, e->n, KN_EINVAL, "input %d (X) or %d (X_scale) is missing",
                           2 + 3 * i, 3 + 3 * i);
        same = same && same_scalar(input(e, 3 + 3 * i), ys) && same_scalar(input(e, 4 + 3 * i), yz);
    }
    kn_value **in = kn_arena_array(e->g->arena, (size_t)k, sizeof *in);
    KN_ASSERT(in);
    for (int i = 0; i < k; i++)
        in[i] = same ? input(e, 2 + 3 * i)
                     : dq(e, input(e, 2 + 3 * i), input(e, 3 + 3 * i), input(e, 4 + 3 * i));
    kn_node *c = node(e, KN_OP_CONCAT, OPSET_OPS, k, in, same ? e->n->out[0] : NULL, "f");
    copy_attr(e, c, "axis");
    if (!same) q(e, c->out[0], ys, yz, input(e, 2), e->n->out[0]);
    return KN_OK;
}

static kn_status qlinear_conv(ex *e) {
    static const char *const attrs[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                        "pads",     "strides",   NULL};
    kn_value *in[9];
    for (int i = 0; i < 9; i++) in[i] = input(e, i);
    int nin = e->n->nin;
    if (!kn_attr_int(e->cx, e->n, "channels_last", 0)) {
        kn_node *m = node(e, KN_OP_QLINEARCONV, OPSET_QLINEAR, nin, in, e->n->out[0], "y");
        for (int i = 0; attrs[i]; i++) copy_attr(e, m, attrs[i]);
        return KN_OK;
    }
    const int64_t *ks;
    int nk = kn_attr_ints(e->cx, e->n, "kernel_shape", &ks);
    int r = type_known(in[3]) ? in[3]->type.rank : nk > 0 ? nk + 2 : -1;
    if (r < 3 || r > KN_MAX_RANK)
        return kn_diag(e->cx, e->n, KN_EINVAL,
                       "channels_last=1 needs a constant w or kernel_shape to know the rank");
    int64_t to[KN_MAX_RANK], back[KN_MAX_RANK];
    perm_cl(r, true, to);
    perm_cl(r, false, back);
    in[0] = transpose(e, in[0], r, to, NULL);
    kn_node *m = node(e, KN_OP_QLINEARCONV, OPSET_QLINEAR, nin, in, NULL, "y");
    for (int i = 0; attrs[i]; i++) copy_attr(e, m, attrs[i]);
    transpose(e, m->out[0], r, back, e->n->out[0]);
    return KN_OK;
}

static kn_status qgemm(ex *e) {
    kn_ctx *cx = e->cx;
    kn_value *a = input(e, 0), *as = input(e, 1), *az = input(e, 2);
    kn_value *b = input(e, 3), *bs = input(e, 4), *bz = input(e, 5);
    kn_value *c = input(e, 6), *ys = input(e, 7), *yz = input(e, 8);
    if (yz && !ys) return kn_diag(cx, e->n, KN_EINVAL, "has y_zero_point but no y_scale");
    float alpha = kn_attr_float(cx, e->n, "alpha", 1.0f);
    bool ta = kn_attr_int(cx, e->n, "transA", 0) != 0;
    bool tb = kn_attr_int(cx, e->n, "transB", 0) != 0;
    static const int64_t swap[2] = {1, 0};
    if (ta) a = transpose(e, a, 2, swap, NULL);
    /* a constant B stays one constant (no unused initializer); the fold pass folds its
     * Transpose before the QLinearMatMul is lowered */
    bool bconst = b->constant && b->constant->data && b->type.rank == 2;
    int64_t ncol = bconst ? b->constant->type.dims[tb ? 0 : 1] : -1;
    if (tb) b = transpose(e, b, 2, swap, NULL);
    bool col_bias =
        !c || (c->constant && c->constant->data && c->type.dtype == KN_I32 && ncol > 0 &&
               kn_tensor_numel(c->constant) == ncol && c->type.dims[c->type.rank - 1] == ncol);
    if (ys && alpha == 1.0f && bconst && col_bias) {
        /* QLinearMatMul (ONNX mode: acc * a_scale * b_scale / y_scale in double) with
         * kiln's ninth input, an int32 bias per column added to the accumulator */
        kn_value *bias = c;
        if (c && c->type.rank != 1) {
            int64_t d = ncol;
            kn_tensor *t = kn_tensor_make(e->g->arena, KN_I32, 1, &d);
            KN_ASSERT(t && t->data);
            memcpy(t->data, c->constant->data, (size_t)ncol * sizeof(int32_t));
            bias = constant(e, "bias", t);
        }
        kn_value *in[9] = {a,
                           as,
                           zero_point(e, az, a),
                           b,
                           bs,
                           zero_point(e, bz, b),
                           ys,
                           zero_point(e, yz, input(e, 0)),
                           bias};
        node(e, KN_OP_QLINEARMATMUL, OPSET_QLINEAR, bias ? 9 : 8, in, e->n->out[0], "y");
        return KN_OK;
    }
    /* (acc + C) * (a_scale * b_scale [* alpha]) in float32, then quantized if y_scale */
    kn_value *in4[4] = {a, b, az, bz};
    kn_value *acc = node(e, KN_OP_MATMULINTEGER, OPSET_OPS,
                         bz   ? 4
                         : az ? 3
                              : 2,
                         in4, NULL, "acc")
                        ->out[0];
    if (c) {
        kn_value *in2[2] = {acc, c};
        acc = node(e, KN_OP_ADD, 14, 2, in2, NULL, "acc")->out[0];
    }
    kn_node *cast = node(e, KN_OP_CAST, OPSET_OPS, 1, &acc, NULL, "f");
    set_int(cast, "to", KN_F32);
    kn_value *in2[2] = {as, bs};
    kn_value *s = node(e, KN_OP_MUL, 14, 2, in2, NULL, "scale")->out[0];
    if (alpha != 1.0f) {
        in2[0] = s;
        in2[1] = constant(e, "alpha", kn_tensor_scalar_f64(e->g->arena, KN_F32, alpha));
        s = node(e, KN_OP_MUL, 14, 2, in2, NULL, "scale")->out[0];
    }
    in2[0] = cast->out[0];
    in2[1] = s;
    kn_node *y = node(e, KN_OP_MUL, 14, 2, in2, ys ? NULL : e->n->out[0], "y");
    if (ys) q(e, y->out[0], ys, yz, input(e, 0), e->n->out[0]);
    return KN_OK;
}

static kn_status expand(kn_ctx *cx, kn_graph *g, const kn_node *n) {
    ex e = {.cx = cx, .g = g, .n = n};
    const char *op = n->op_type;
    if (n->nout != 1 || !n->out[0])
        return kn_diag(cx, n, KN_EINVAL, "has %d outputs, expected 1", n->nout);
    const kn_contrib_op *c = kn_contrib_find(op);
    KN_ASSERT(c);
    for (int i = 0; i < 9; i++)
        if ((c->required >> i & 1) && (i >= n->nin || !n->in[i]))
            return kn_diag(cx, n, KN_EINVAL, "input %d is required (it is omitted)", i);
    if (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear")) {
        kn_op k = op[0] == 'Q' ? KN_OP_QUANTIZELINEAR : KN_OP_DEQUANTIZELINEAR;
        kn_node *m = node(&e, k, OPSET_Q, n->nin, n->in, n->out[0], "y");
        copy_attr(&e, m, "axis");
        return KN_OK;
    }
    if (!strcmp(op, "QLinearAdd")) return qlinear_add(&e);
    if (!strcmp(op, "QLinearMul")) return qlinear_mul(&e);
    if (!strcmp(op, "QLinearConcat")) return qlinear_concat(&e);
    if (!strcmp(op, "QLinearConv")) return qlinear_conv(&e);
    if (!strcmp(op, "QGemm")) return qgemm(&e);
    if (!strcmp(op, "QLinearGlobalAveragePool")) return global_average_pool(&e);
    if (!strcmp(op, "QLinearAveragePool")) return average_pool(&e);
    if (!strcmp(op, "QLinearSigmoid")) return unary(&e, KN_OP_SIGMOID, OPSET_OPS, NULL);
    if (!strcmp(op, "QLinearReduceMean")) {
        static const char *const red[] = {"axes", "keepdims", NULL};
        const int64_t *ax;
        if (kn_attr_ints(cx, n, "axes", &ax) < 0 || !kn_node_attr(n, "keepdims"))
            return kn_diag(cx, n, KN_EINVAL, "attributes 'axes' and 'keepdims' are required");
        return unary(&e, KN_OP_REDUCEMEAN, OPSET_OPS, red);
    }
    if (!strcmp(op, "QLinearWhere")) return qlinear_where(&e);
    if (!strcmp(op, "QLinearLeakyRelu")) {
        static const char *const alpha[] = {"alpha", NULL};
        return unary(&e, KN_OP_LEAKYRELU, 16, alpha);
    }
    if (!strcmp(op, "QLinearSoftmax")) {
        int64_t v = kn_attr_int(cx, n, "opset", 0);
        if (v < 1 || v > 21)
            return kn_diag(cx, n, KN_EINVAL,
                           "attribute 'opset' (the Softmax opset whose axis semantics apply) "
                           "must be 1 to 21, not %lld",
                           (long long)v);
        static const char *const axis[] = {"axis", NULL};
        return unary(&e, KN_OP_SOFTMAX, (int)v, axis);
    }
    return kn_diag(cx, n, KN_EUNSUPPORTED, "operator '%s' (domain '%s') is not supported", op,
                   KN_MS_DOMAIN);
}

kn_status kn_contrib_expand(kn_ctx *cx, kn_graph *g, const kn_node *n) {
    kn_status st = expand(cx, g, n);
    return st ? st : cx->status; /* an attribute of the wrong type (kn_attr_int, ...) */
}
