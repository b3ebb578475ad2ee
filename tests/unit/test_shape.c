/* Unit tests of static shape and type inference (kn_pass_shape), one case a line.
 *
 * Each case builds a one-node graph with the IR API and compares the inferred output
 * types, printed by kn_type_str, with the expectation; or, for an expectation "!text",
 * checks that inference fails with a message containing text. Every expected shape is
 * derived by hand from the ONNX operator definitions, not from kiln's output.
 *
 * Case format: T(op, opset, attributes, expected outputs, inputs...).
 *   input     "f32[1,3,224,224]" a graph input; dims may be symbolic ("N"), unknown ("?"),
 *             or the rank unknown ("f32[*]"); "f32[]" is a scalar.
 *             "i64:{0,-1}" a 1-D constant, "i64:3" a scalar constant.
 *             "" an omitted optional input.
 *   attribute "name=value" separated by spaces: "3" int, "0.5" float, "3,3" or "[1]"
 *             ints, anything else a string ("auto_pad=SAME_UPPER").
 *   expected  output types separated by spaces ("f32[3,4] i64[3,4]"); their count is
 *             the node's output count. */
#include "ir/ops.h"
#include "passes/pass.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CASE_IN 6

typedef struct shape_case {
    int line;
    const char *op;
    int opset;
    const char *attrs;
    const char *want;
    const char *in[MAX_CASE_IN]; /* NULL ends the list */
} shape_case;

#define T(op, opset, attrs, want, ...)                                                             \
    {                                                                                              \
        __LINE__, op, opset, attrs, want, {                                                        \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

/* clang-format off */
static const shape_case cases[] = {
    /* Multidirectional broadcasting: align right, a 1 stretches. */
    T("Add", 13, "", "f32[2,3,4]", "f32[2,1,4]", "f32[3,1]"),
    T("Add", 13, "", "f32[5]", "f32[5]", "f32[]"),
    T("Mul", 13, "", "f32[N,3,8,8]", "f32[N,3,1,1]", "f32[1,3,8,8]"),
    T("Sub", 13, "", "f32[N,4]", "f32[N,4]", "f32[4]"),
    /* a valid model has ? in {1, 3}, so the result is 3 */
    T("Add", 13, "", "f32[3,4]", "f32[?,4]", "f32[3,1]"),
    T("Equal", 13, "", "bool[2,3]", "f32[2,3]", "f32[3]"),
    T("Where", 16, "", "f32[2,3]", "bool[2,1]", "f32[3]", "f32[1,1]"),
    T("Add", 13, "", "!cannot be broadcast", "f32[2,3]", "f32[4,3]"),
    T("Add", 13, "", "!input 1 is i64", "f32[2]", "i64[2]"),
    T("Relu", 14, "", "f32[N,3,?,?]", "f32[N,3,?,?]"),

    /* Conv: out = floor((in + pad_begin + pad_end - ((k - 1) * dilation + 1)) / stride) + 1 */
    /* floor((224 + 2*3 - 7) / 2) + 1 = 112 */
    T("Conv", 11, "kernel_shape=7,7 pads=3,3,3,3 strides=2,2", "f32[1,64,112,112]",
      "f32[1,3,224,224]", "f32[64,3,7,7]"),
    T("Conv", 11, "", "f32[1,16,30,30]", "f32[1,3,32,32]", "f32[16,3,3,3]"),
    /* effective kernel (3-1)*2+1 = 5: 10 - 5 + 1 = 6 */
    T("Conv", 11, "dilations=2,2", "f32[1,4,6,6]", "f32[1,1,10,10]", "f32[4,1,3,3]"),
    /* W is [M, C/group, kH, kW]: 8/2 = 4 */
    T("Conv", 11, "group=2 pads=1,1,1,1", "f32[2,4,16,16]", "f32[2,8,16,16]", "f32[4,4,3,3]"),
    /* SAME_UPPER: ceil(15/2) = 8 */
    T("Conv", 11, "auto_pad=SAME_UPPER strides=2,2", "f32[1,8,8,8]", "f32[1,3,15,15]",
      "f32[8,3,3,3]"),
    /* VALID: ceil((15 - 3 + 1)/2) = 7 */
    T("Conv", 11, "auto_pad=VALID strides=2,2", "f32[1,8,7,7]", "f32[1,3,15,15]", "f32[8,3,3,3]"),
    /* pads [H_begin, W_begin, H_end, W_end]: H 5+0+2-3+1 = 5, W 5+1+0-3+1 = 4 */
    T("Conv", 11, "pads=0,1,2,0", "f32[1,1,5,4]", "f32[1,1,5,5]", "f32[1,1,3,3]"),
    /* 1-D: floor((10 - 3)/3) + 1 = 3 */
    T("Conv", 11, "strides=[3]", "f32[1,3,3]", "f32[1,2,10]", "f32[3,2,3]"),
    T("Conv", 11, "", "f32[N,16,?,?]", "f32[N,3,?,?]", "f32[16,3,3,3]", "f32[16]"),
    T("Conv", 11, "", "!input has 3 channels", "f32[1,3,8,8]", "f32[4,2,3,3]"),
    /* out = stride*(in-1) + output_padding + (k-1)*dilation + 1 - pads = 2*2 + 0 + 3 - 0 = 7 */
    T("ConvTranspose", 11, "strides=2,2", "f32[1,2,7,7]", "f32[1,1,3,3]", "f32[1,2,3,3]"),

    /* Pooling: as Conv, ceil instead of floor with ceil_mode=1 */
    /* floor((112 + 2 - 3)/2) + 1 = 56 */
    T("MaxPool", 12, "kernel_shape=3,3 strides=2,2 pads=1,1,1,1", "f32[1,64,56,56]",
      "f32[1,64,112,112]"),
    /* floor((6 - 3)/2) + 1 = 2; ceil((6 - 3)/2) + 1 = 3 */
    T("MaxPool", 12, "kernel_shape=3,3 strides=2,2", "f32[1,1,2,2]", "f32[1,1,6,6]"),
    T("MaxPool", 12, "kernel_shape=3,3 strides=2,2 ceil_mode=1", "f32[1,1,3,3]", "f32[1,1,6,6]"),
    /* effective kernel (2-1)*2+1 = 3: 8 - 3 + 1 = 6 */
    T("MaxPool", 12, "kernel_shape=2,2 dilations=2,2", "f32[1,1,6,6]", "f32[1,1,8,8]"),
    /* ceil(5/2) = 3 */
    T("MaxPool", 12, "kernel_shape=2,2 strides=2,2 auto_pad=SAME_UPPER", "f32[1,1,3,3]",
      "f32[1,1,5,5]"),
    T("MaxPool", 12, "kernel_shape=2,2 strides=2,2", "f32[1,1,2,2] i64[1,1,2,2]", "f32[1,1,4,4]"),
    /* floor((7 - 2)/2) + 1 = 3; ceil(5/2) + 1 = 4, the last window starts at 6 < 7 */
    T("AveragePool", 11, "kernel_shape=2,2 strides=2,2", "f32[1,3,3,3]", "f32[1,3,7,7]"),
    T("AveragePool", 11, "kernel_shape=2,2 strides=2,2 ceil_mode=1", "f32[1,3,4,4]",
      "f32[1,3,7,7]"),
    T("GlobalAveragePool", 1, "", "f32[N,512,1,1]", "f32[N,512,7,7]"),
    T("GlobalMaxPool", 1, "", "f32[2,3,1]", "f32[2,3,5]"),

    /* Gemm: A' [M,K] x B' [K,N] = [M,N] */
    T("Gemm", 13, "", "f32[4,5]", "f32[4,3]", "f32[3,5]", "f32[5]"),
    T("Gemm", 13, "transA=1", "f32[4,5]", "f32[3,4]", "f32[3,5]"),
    T("Gemm", 13, "transB=1", "f32[4,5]", "f32[4,3]", "f32[5,3]", "f32[1,5]"),
    T("Gemm", 13, "transA=1 transB=1", "f32[4,5]", "f32[3,4]", "f32[5,3]"),
    T("Gemm", 13, "", "!inner dimensions differ", "f32[4,3]", "f32[4,5]"),

    /* MatMul: numpy.matmul; 1-D operands get a dim prepended/appended, then removed */
    T("MatMul", 13, "", "f32[2,4]", "f32[2,3]", "f32[3,4]"),
    T("MatMul", 13, "", "f32[4]", "f32[3]", "f32[3,4]"),
    T("MatMul", 13, "", "f32[2]", "f32[2,3]", "f32[3]"),
    T("MatMul", 13, "", "f32[]", "f32[3]", "f32[3]"),
    /* batch [2,1] x [5] -> [2,5] */
    T("MatMul", 13, "", "f32[2,5,3,6]", "f32[2,1,3,4]", "f32[5,4,6]"),
    T("MatMul", 13, "", "f32[N,3,5]", "f32[N,3,4]", "f32[4,5]"),
    T("MatMul", 13, "", "!inner dimensions differ", "f32[2,3]", "f32[4,5]"),

    /* Reshape: 0 copies the input dim, -1 takes the rest: 24 / (4*3) = 2 */
    T("Reshape", 14, "", "f32[2,12]", "f32[2,3,4]", "i64:{0,-1}"),
    T("Reshape", 14, "", "f32[4,2,3]", "f32[2,3,4]", "i64:{4,-1,3}"),
    T("Reshape", 14, "", "f32[24]", "f32[2,3,4]", "i64:{-1}"),
    T("Reshape", 14, "", "f32[N,12]", "f32[N,3,4]", "i64:{0,12}"),
    T("Reshape", 14, "", "f32[*]", "f32[2,3,4]", "i64[?]"),
    T("Reshape", 14, "", "!cannot reshape", "f32[2,3,4]", "i64:{5,-1}"),
    /* an input of unknown rank: rank unknown, the dtype kept where the op decides it */
    T("Relu", 14, "", "f32[*]", "f32[*]"),
    T("Unsqueeze", 13, "", "i32[*]", "i32[*]", "i64:{0}"),
    T("Equal", 13, "", "bool[*]", "f32[*]", "f32[3]"),
    T("Cast", 13, "to=7", "i64[*]", "f32[*]"),
    T("Shape", 13, "", "i64[?]", "f32[*]"),
    T("Size", 13, "", "i64[]", "f32[*]"),
    T("Where", 13, "", "i64[*]", "bool[*]", "i64[3]", "i64[3]"),

    /* Flatten: [prod(d[0:axis]), prod(d[axis:])] */
    T("Flatten", 13, "", "f32[2,60]", "f32[2,3,4,5]"),
    T("Flatten", 13, "axis=0", "f32[1,120]", "f32[2,3,4,5]"),
    T("Flatten", 13, "axis=-1", "f32[24,5]", "f32[2,3,4,5]"),
    T("Flatten", 13, "", "f32[N,12]", "f32[N,3,4]"),
    T("Flatten", 13, "axis=2", "f32[6,N]", "f32[2,3,N]"),

    T("Transpose", 13, "", "f32[4,3,2]", "f32[2,3,4]"),
    T("Transpose", 13, "perm=0,2,3,1", "f32[N,8,9,3]", "f32[N,3,8,9]"),
    T("Transpose", 13, "perm=0,0", "!not a permutation", "f32[2,3]"),

    /* Squeeze/Unsqueeze: axes an attribute up to opset 12, an input from 13 */
    T("Squeeze", 11, "axes=0,2", "f32[3,5]", "f32[1,3,1,5]"),
    T("Squeeze", 13, "", "f32[1,3,5]", "f32[1,3,1,5]", "i64:{-2}"),
    T("Squeeze", 13, "", "f32[3,5]", "f32[1,3,1,5]"),
    T("Squeeze", 11, "axes=[1]", "!cannot squeeze", "f32[1,3]"),
    /* output rank 4, ones at 0 and 3 */
    T("Unsqueeze", 11, "axes=0,3", "f32[1,3,4,1]", "f32[3,4]"),
    /* -1 of output rank 3 is 2 */
    T("Unsqueeze", 13, "", "f32[3,4,1]", "f32[3,4]", "i64:{-1}"),

    T("Concat", 13, "axis=1", "f32[2,8]", "f32[2,3]", "f32[2,5]"),
    T("Concat", 13, "axis=-1", "f32[N,7]", "f32[N,3]", "f32[N,4]"),
    /* N + 2 is not a named dim */
    T("Concat", 13, "axis=0", "f32[?,3]", "f32[N,3]", "f32[2,3]"),
    T("Concat", 13, "axis=0", "!has dim 1", "f32[2,3]", "f32[2,4]"),

    /* Split: equal parts without sizes; sizes an attribute up to opset 12, an input from 13 */
    T("Split", 13, "", "f32[3,4] f32[3,4]", "f32[6,4]"),
    T("Split", 13, "axis=1", "f32[2,3] f32[2,7]", "f32[2,10]", "i64:{3,7}"),
    T("Split", 11, "split=2,4", "f32[2] f32[4]", "f32[6]"),

    /* Slice: negative starts/ends add the dim, then clamp to [0, dim] ([-1, dim-1] for a
     * negative step); extent ceil((end - start) / step) */
    T("Slice", 13, "", "f32[8,19]", "f32[10,20]", "i64:{1,0}", "i64:{9,-1}"),
    /* start -3 -> 17, end 100 -> 20 */
    T("Slice", 13, "", "f32[10,3]", "f32[10,20]", "i64:{-3}", "i64:{100}", "i64:{-1}"),
    /* start 9, end -100 -> -90 -> -1: ceil(-10 / -2) = 5 */
    T("Slice", 13, "", "f32[5]", "f32[10]", "i64:{9}", "i64:{-100}", "i64:{0}", "i64:{-2}"),
    /* axis 0: ceil((0 - 4)/-1) = 4; axis 1: ceil((5 - 1)/2) = 2 */
    T("Slice", 13, "", "f32[4,2]", "f32[5,6]", "i64:{4,1}", "i64:{0,5}", "i64:{0,1}",
      "i64:{-1,2}"),
    T("Slice", 13, "", "f32[N,5]", "f32[N,20]", "i64:{0}", "i64:{5}", "i64:{1}"),

    /* Gather: d[:axis] + indices.shape + d[axis+1:] */
    T("Gather", 13, "axis=1", "f32[5,2,7,3]", "f32[5,4,3]", "i64[2,7]"),
    T("Gather", 13, "axis=-1", "f32[5]", "f32[5,4]", "i64[]"),

    /* Reduce: axes an attribute up to opset 12 (17 for most), an input from 13 (ReduceSum)
     * and 18 (the rest); no axes reduces everything */
    T("ReduceMean", 13, "axes=[1]", "f32[2,1,4]", "f32[2,3,4]"),
    T("ReduceSum", 13, "keepdims=0", "f32[3]", "f32[2,3,4]", "i64:{0,-1}"),
    T("ReduceMax", 13, "keepdims=0", "f32[]", "f32[2,3,4]"),
    T("ReduceMin", 13, "", "f32[1,1,1]", "f32[2,3,4]"),
    T("ReduceMean", 18, "keepdims=0", "f32[2,4]", "f32[2,3,4]", "i64:{1}"),
    T("ReduceSum", 13, "noop_with_empty_axes=1", "f32[2,3,4]", "f32[2,3,4]"),
    T("ReduceSum", 13, "keepdims=0", "f32[N,4]", "f32[N,3,4]", "i64:{1}"),
    T("ArgMax", 13, "axis=1", "i64[2,1,4]", "f32[2,3,4]"),
    T("ArgMax", 13, "axis=1 keepdims=0", "i64[2,4]", "f32[2,3,4]"),
    T("ArgMin", 13, "", "i64[1,3,4]", "f32[2,3,4]"),

    /* Pad: pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...] */
    T("Pad", 13, "", "f32[1,3,6,8]", "f32[1,3,4,4]", "i64:{0,0,1,2,0,0,1,2}"),
    T("Pad", 2, "pads=0,1,0,2", "f32[3,7]", "f32[3,4]"),
    /* 5 - 1 + 2 = 6 */
    T("Pad", 13, "", "f32[6]", "f32[5]", "i64:{-1,2}"),
    T("Tile", 13, "", "f32[4,9]", "f32[2,3]", "i64:{2,3}"),
    /* broadcast [3,1] with [2,1,6] */
    T("Expand", 13, "", "f32[2,3,6]", "f32[3,1]", "i64:{2,1,6}"),

    T("Shape", 13, "", "i64[3]", "f32[N,3,8]"),
    T("Shape", 15, "start=1", "i64[2]", "f32[N,3,8]"),
    T("Shape", 15, "start=1 end=-1", "i64[1]", "f32[N,3,8]"),
    T("Cast", 13, "to=7", "i64[2,3]", "f32[2,3]"),
    T("Cast", 13, "to=1", "f32[N]", "i32[N]"),
    T("Softmax", 13, "", "f32[N,10]", "f32[N,10]"),
    T("BatchNormalization", 15, "", "f32[N,64,56,56]", "f32[N,64,56,56]", "f32[64]", "f32[64]",
      "f32[64]", "f32[64]"),

    /* Resize: floor(in * scale): floor(5 * 1.5) = 7 */
    T("Resize", 13, "", "f32[1,3,8,8]", "f32[1,3,4,4]", "", "f32:{1,1,2,2}"),
    T("Resize", 13, "", "f32[1,1,7,7]", "f32[1,1,5,5]", "", "f32:{1,1,1.5,1.5}"),
    T("Resize", 13, "", "f32[1,3,5,7]", "f32[1,3,4,4]", "", "", "i64:{1,3,5,7}"),
    T("Resize", 10, "", "f32[1,1,4,6]", "f32[1,1,2,3]", "f32:{1,1,2,2}"),

    T("TopK", 11, "", "f32[3,4] i64[3,4]", "f32[3,10]", "i64:{4}"),
    T("TopK", 11, "axis=0", "f32[2,2] i64[2,2]", "f32[5,2]", "i64:{2}"),
    T("TopK", 1, "k=3", "f32[4,3] i64[4,3]", "f32[4,5]"),
    /* [rank, number of nonzeros] */
    T("NonZero", 13, "", "i64[2,?]", "f32[3,4]"),
};
/* clang-format on */

/* "f32[1,N,?]", "f32[]" or "f32[*]" into t; syms are copied into g's arena. */
static bool parse_type(kn_graph *g, const char *s, kn_type *t) {
    const char *lb = strchr(s, '[');
    if (!lb) return false;
    char name[16];
    size_t nl = (size_t)(lb - s);
    if (nl >= sizeof name) return false;
    memcpy(name, s, nl);
    name[nl] = 0;
    kn_dtype dt = kn_dtype_parse(name);
    if (dt == KN_UNDEF) return false;
    if (!strcmp(lb, "[*]")) {
        *t = kn_type_unknown(dt);
        return true;
    }
    *t = kn_type_make(dt, 0, NULL);
    const char *p = lb + 1;
    while (*p && *p != ']') {
        if (t->rank == KN_MAX_RANK) return false;
        size_t len = strcspn(p, ",]");
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p + len && len) {
            t->dims[t->rank] = d;
        } else {
            t->dims[t->rank] = -1;
            if (!(len == 1 && *p == '?')) t->sym[t->rank] = kn_arena_strndup(g->arena, p, len);
        }
        t->rank++;
        p += len;
        if (*p == ',') p++;
    }
    return *p == ']' && p[1] == 0;
}

/* "i64:{0,-1}" (1-D) or "i64:3" (scalar) into a constant tensor. */
static kn_tensor *parse_const(kn_graph *g, const char *s) {
    const char *colon = strchr(s, ':');
    char name[16];
    size_t nl = (size_t)(colon - s);
    if (nl >= sizeof name) return NULL;
    memcpy(name, s, nl);
    name[nl] = 0;
    kn_dtype dt = kn_dtype_parse(name);
    if (dt == KN_UNDEF) return NULL;
    const char *p = colon + 1;
    bool list = *p == '{';
    double fv[64];
    int64_t iv[64];
    int64_t cnt = 0;
    if (list) p++;
    while (*p && *p != '}' && cnt < 64) {
        char *end;
        if (kn_dtype_get(dt)->is_float)
            fv[cnt] = strtod(p, &end);
        else
            iv[cnt] = strtoll(p, &end, 10);
        if (end == p) return NULL;
        cnt++;
        p = *end == ',' ? end + 1 : end;
    }
    kn_tensor *t = kn_tensor_make(g->arena, dt, list ? 1 : 0, &cnt);
    for (int64_t i = 0; i < cnt; i++) {
        if (kn_dtype_get(dt)->is_float)
            kn_store_f64(t->data, dt, (size_t)i, fv[i]);
        else
            kn_store_i64(t->data, dt, (size_t)i, iv[i]);
    }
    return t;
}

/* "kernel_shape=3,3 auto_pad=VALID" into n->attrs. */
static bool parse_attrs(kn_graph *g, kn_node *n, const char *s) {
    int cnt = 0;
    for (const char *p = s; *p; p++) cnt += *p == '=';
    n->attrs = kn_arena_array(g->arena, (size_t)cnt + 1, sizeof *n->attrs);
    n->nattr = 0;
    const char *p = s;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        if (!eq) return false;
        kn_attr *a = &n->attrs[n->nattr++];
        a->name = kn_arena_strndup(g->arena, p, (size_t)(eq - p));
        char *v = kn_arena_strndup(g->arena, eq + 1, len - (size_t)(eq + 1 - p));
        char *end;
        if (*v == '[' || strchr(v, ',')) {
            a->kind = KN_ATTR_INTS;
            a->ints = kn_arena_array(g->arena, strlen(v) + 1, sizeof *a->ints);
            char *q = v + (*v == '[');
            while (*q && *q != ']') {
                a->ints[a->n++] = strtoll(q, &end, 10);
                if (end == q) return false;
                q = *end == ',' ? end + 1 : end;
            }
        } else if (strtoll(v, &end, 10), *v && !*end) {
            a->kind = KN_ATTR_INT;
            a->i = strtoll(v, NULL, 10);
        } else if (strtod(v, &end), *v && !*end) {
            a->kind = KN_ATTR_FLOAT;
            a->f = strtof(v, NULL);
        } else {
            a->kind = KN_ATTR_STRING;
            a->s = v;
            a->slen = strlen(v);
        }
        p += len;
    }
    return true;
}

/* Builds and infers the case's graph; returns 0 if it matched, printing the mismatch. */
static int run_case(const shape_case *c) {
    kn_graph *g = kn_graph_create("case");
    g->opset = c->opset;
    kn_value *in[MAX_CASE_IN] = {0};
    int nin = 0;
    int bad = 0;
    g->inputs = kn_arena_array(g->arena, MAX_CASE_IN, sizeof *g->inputs);
    for (; nin < MAX_CASE_IN && c->in[nin]; nin++) {
        const char *s = c->in[nin];
        char name[8];
        snprintf(name, sizeof name, "x%d", nin);
        if (!*s) continue; /* omitted optional input */
        if (strchr(s, ':')) {
            kn_tensor *t = parse_const(g, s);
            if (!t) goto bad_case;
            in[nin] = kn_graph_add_value(g, name, &t->type);
            in[nin]->constant = t;
        } else {
            kn_type t;
            if (!parse_type(g, s, &t)) goto bad_case;
            in[nin] = kn_graph_add_value(g, name, &t);
            in[nin]->flags |= KN_VALUE_INPUT;
            g->inputs[g->nin++] = in[nin];
        }
    }
    char want[256];
    snprintf(want, sizeof want, "%s", c->want);
    bool expect_err = want[0] == '!';
    int nout = 1;
    if (!expect_err)
        for (const char *p = want; *p; p++) nout += *p == ' ';
    kn_value *out[4] = {0};
    if (nout > 4) goto bad_case;
    g->outputs = kn_arena_array(g->arena, (size_t)nout, sizeof *g->outputs);
    for (int j = 0; j < nout; j++) {
        char name[8];
        snprintf(name, sizeof name, "y%d", j);
        out[j] = kn_graph_add_value(g, name, NULL);
        out[j]->flags |= KN_VALUE_OUTPUT;
        g->outputs[g->nout++] = out[j];
    }
    kn_op op = kn_op_lookup("", c->op);
    if (op == KN_OP_COUNT) goto bad_case;
    kn_node *n = kn_graph_add_node(g, op, "n", nin, in, nout, out);
    n->opset = c->opset;
    if (!parse_attrs(g, n, c->attrs)) goto bad_case;

    kn_ctx cx;
    kn_ctx_init(&cx, "case");
    kn_status st = kn_pass_shape(&cx, g);
    if (expect_err) {
        if (st == KN_OK || !strstr(cx.msg, want + 1)) {
            fprintf(stderr, "%s:%d: %s: expected error '%s', got %s\n", __FILE__, c->line, c->op,
                    want + 1, st ? cx.msg : "success");
            bad = 1;
        }
    } else if (st != KN_OK) {
        fprintf(stderr, "%s:%d: %s: expected %s, got error: %s\n", __FILE__, c->line, c->op,
                c->want, cx.msg);
        bad = 1;
    } else {
        char got[256] = "";
        size_t len = 0;
        for (int j = 0; j < nout; j++) {
            char buf[128];
            len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", j ? " " : "",
                                    kn_type_str(&out[j]->type, buf, sizeof buf));
        }
        if (strcmp(got, want)) {
            fprintf(stderr, "%s:%d: %s: expected %s, got %s\n", __FILE__, c->line, c->op, want,
                    got);
            bad = 1;
        }
    }
    kn_graph_destroy(g);
    return bad;

bad_case:
    fprintf(stderr, "%s:%d: malformed case\n", __FILE__, c->line);
    kn_graph_destroy(g);
    return 1;
}

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) CHECK(run_case(&cases[i]) == 0);
    return TEST_DONE();
}
