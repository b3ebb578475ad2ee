/* Loader, shape inference and interpreter tests on small models built in memory
 * with protobuf-c: one valid model checked end to end (values derived by hand),
 * then one malformed model per line of the error table, each with the message it
 * must produce. */
#include "ir/interp.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The base model: y = Relu(Add(x, w)), x: f32[2,3], w: initializer [3]. */
static int64_t d23[] = {2, 3}, d3[] = {3};
static float w3[] = {1, -2, 3};
static char *in_xw[] = {"x", "w"}, *out_s[] = {"s"}, *in_s[] = {"s"}, *out_y[] = {"y"};

static void base(model *md, int opset) {
    model_init(md, opset);
    add_input(md, "x", 2, d23);
    add_init(md, "w", 1, d3, w3, 3);
    add_node(md, "Add", "add0", 2, in_xw, 1, out_s);
    add_node(md, "Relu", "relu0", 1, in_s, 1, out_y);
    add_output(md, "y");
}

static void test_valid(void) {
    model md;
    base(&md, 13);
    kn_ctx cx;
    kn_graph *g;
    CHECK(load(&md, &cx, &g, 0) == KN_OK);
    if (!g) return;
    CHECK(g->nin == 1 && g->nout == 1 && g->nnodes == 2 && g->opset == 13);
    CHECK(kn_pass_run_pipeline(&cx, g, "shape", NULL, NULL) == KN_OK);
    const kn_type *ty = &g->outputs[0]->type;
    CHECK(ty->dtype == KN_F32 && ty->rank == 2 && ty->dims[0] == 2 && ty->dims[1] == 3);
    kn_arena *a = kn_arena_create();
    kn_tensor *x = kn_tensor_make(a, KN_F32, 2, d23), *y = NULL;
    float xv[] = {0, 1, 2, -3, 4, -5};
    memcpy(x->data, xv, sizeof xv);
    CHECK(kn_interp_run(&cx, g, a, &x, &y, 0) == KN_OK);
    /* relu(x + w) by hand: [1, 0, 5, 0, 2, 0] */
    float want[] = {1, 0, 5, 0, 2, 0};
    CHECK(y && !memcmp(y->data, want, sizeof want));
    /* wrong input shape and dtype at run time */
    kn_tensor *bad = kn_tensor_make(a, KN_F32, 2, (int64_t[]){3, 2});
    kn_ctx_init(&cx, "m.onnx");
    CHECK(kn_interp_run(&cx, g, a, &bad, &y, 0) == KN_EINVAL);
    CHECK(strstr(cx.msg, "input 'x' has shape f32[3,2], the model expects f32[2,3]") != NULL);
    bad = kn_tensor_make(a, KN_I64, 2, d23);
    kn_ctx_init(&cx, "m.onnx");
    CHECK(kn_interp_run(&cx, g, a, &bad, &y, 0) == KN_EINVAL);
    CHECK(strstr(cx.msg, "has type i64") != NULL);
    kn_arena_destroy(a);
    kn_graph_destroy(g);
}

/* Each case mutates the base model; the load (or the shape pass) must fail with st
 * and a message containing msg. */
static int64_t huge[] = {1ll << 40, 1ll << 40}, neg[] = {-3}, d4[] = {4};
static char *in_y[] = {"y"}, *in_xs[] = {"x", "s"}, *in_xxx[] = {"x", "x", "x"};

static void mut_unknown_op(model *md) {
    md->nodes[1].op_type = "FooBar";
}
static void mut_dangling(model *md) {
    md->nodes[0].input[1] = "nope";
}
static void mut_cycle(model *md) {
    md->nodes[0].input[1] = in_xs[1];
}
static char *in_xy[] = {"x", "y"};
static void mut_cycle2(model *md) {
    md->nodes[0].input[1] = in_xy[1];
    (void)in_y;
}
static void mut_dup(model *md) {
    md->nodes[1].output[0] = out_s[0];
}
static void mut_overflow(model *md) {
    md->inits[0].dims = huge;
    md->inits[0].n_dims = 2;
}
static void mut_negdim(model *md) {
    md->inits[0].dims = neg;
}
static void mut_size(model *md) {
    md->inits[0].dims = d4;
}
static void mut_opset(model *md) {
    md->opset.version = 99;
}
static void mut_arity(model *md) {
    md->nodes[0].input[2] = in_xxx[2];
    md->nodes[0].n_input = 3;
}
static void mut_dtype(model *md) {
    md->inits[0].data_type = 42;
}
static void mut_domain(model *md) {
    md->nodes[1].domain = "com.example";
}
static void mut_noout(model *md) {
    md->vout[0].name = "zzz";
}
static void mut_dupinit(model *md) {
    add_init(md, "w", 1, d3, w3, 3);
}
static void mut_attr(model *md) {
    Onnx__AttributeProto *a =
        add_attr(md, &md->nodes[1], "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    add_attr(md, &md->nodes[1], "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)->has_f = 1;
}
static void mut_attr_type(model *md) {
    md->nodes[1].op_type = "LeakyRelu";
    Onnx__AttributeProto *a =
        add_attr(md, &md->nodes[1], "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.data = (uint8_t *)"big";
    a->s.len = 3;
}
static void mut_external(model *md) {
    Onnx__TensorProto *t = &md->inits[0];
    t->n_float_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    onnx__string_string_entry_proto__init(&md->ext[0]);
    md->ext[0].key = "location";
    md->ext[0].value = "../../etc/passwd";
    md->pext[0] = &md->ext[0];
    t->n_external_data = 1;
    t->external_data = md->pext;
}
static void mut_external_abs(model *md) {
    mut_external(md);
    md->ext[0].value = "/etc/passwd";
}
static void mut_external_missing(model *md) {
    mut_external(md);
    md->ext[0].value = "kiln-no-such-file.bin";
}

static void test_errors(void) {
    static const struct {
        const char *what;
        void (*mutate)(model *);
        kn_status st;
        const char *msg;
    } cases[] = {
        {"unknown op", mut_unknown_op, KN_EUNSUPPORTED,
         "m.onnx: node 'relu0' (FooBar): operator 'FooBar' is not supported"},
        {"unknown domain", mut_domain, KN_EUNSUPPORTED,
         "node 'relu0' (Relu): domain 'com.example' is not supported"},
        {"dangling input", mut_dangling, KN_EINVAL,
         "node 'add0' (Add): input 'nope' is never defined"},
        {"use before definition", mut_cycle, KN_EINVAL,
         "the graph has a cycle: node 'add0' (Add) -> node 'add0' (Add)"},
        {"cycle", mut_cycle2, KN_EINVAL,
         "the graph has a cycle: node 'add0' (Add) -> node 'relu0' (Relu) -> node 'add0' (Add)"},
        {"duplicate value", mut_dup, KN_EINVAL,
         "node 'relu0' (Relu): output 's' is already defined"},
        {"duplicate initializer", mut_dupinit, KN_EINVAL, "initializer 'w' is defined twice"},
        {"dims overflow", mut_overflow, KN_EINVAL, "tensor 'w': product of dimensions overflows"},
        {"negative dim", mut_negdim, KN_EINVAL, "tensor 'w' has negative dimension -3"},
        {"data size", mut_size, KN_EINVAL,
         "tensor 'w' has 3 elements of data, its shape f32[4] needs 4"},
        {"future opset", mut_opset, KN_EUNSUPPORTED, "opset 99 is newer than the newest supported"},
        {"arity", mut_arity, KN_EINVAL, "node 'add0' (Add): has 3 inputs, expected 2 to 2"},
        {"bad dtype", mut_dtype, KN_EUNSUPPORTED, "tensor 'w' has unsupported data type 42"},
        {"missing output", mut_noout, KN_EINVAL, "graph output 'zzz' is never computed"},
        {"duplicate attribute", mut_attr, KN_EINVAL,
         "node 'relu0' (Relu): attribute 'alpha' appears twice"},
        {"attribute type", mut_attr_type, KN_EINVAL, "node 'relu0' (LeakyRelu): attribute 'alpha'"},
        {"external ..", mut_external, KN_EINVAL,
         "external data path '../../etc/passwd' leaves the model's folder"},
        {"external absolute", mut_external_abs, KN_EINVAL,
         "external data path '/etc/passwd' leaves the model's folder"},
        {"external missing", mut_external_missing, KN_EIO,
         "cannot open external data 'kiln-no-such-file.bin'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        model md;
        base(&md, 13);
        cases[i].mutate(&md);
        kn_ctx cx;
        kn_graph *g = NULL;
        kn_status st = load(&md, &cx, &g, 0);
        if (!st) st = kn_pass_run_pipeline(&cx, g, "shape", NULL, NULL);
        bool ok = st == cases[i].st && strstr(cx.msg, cases[i].msg);
        if (!ok) fprintf(stderr, "case '%s': status %d, message: %s\n", cases[i].what, st, cx.msg);
        CHECK(ok);
        kn_graph_destroy(g);
    }
    /* truncated and non-protobuf bytes */
    model md;
    base(&md, 13);
    kn_ctx cx;
    kn_graph *g = NULL;
    size_t len = onnx__model_proto__get_packed_size(&md.m);
    for (size_t cut = 1; cut < len; cut += 7) {
        kn_status st = load(&md, &cx, &g, cut);
        CHECK(st == KN_EINVAL || st == KN_EUNSUPPORTED || st == KN_OK); /* never a crash */
        kn_graph_destroy(g);
        g = NULL;
    }
    kn_ctx_init(&cx, "junk.onnx");
    CHECK(kn_onnx_load_memory(&cx, "\xff\xff\xff\xff garbage", 12, NULL, "junk.onnx", &g) ==
          KN_EINVAL);
    CHECK(strstr(cx.msg, "junk.onnx: not an ONNX model") != NULL);
}

static void test_shape_bind(void) {
    model md;
    base(&md, 13);
    md.dims[0][0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    md.dims[0][0].dim_param = "batch";
    kn_ctx cx;
    kn_graph *g;
    CHECK(load(&md, &cx, &g, 0) == KN_OK);
    if (!g) return;
    CHECK(g->inputs[0]->type.dims[0] == -1 && !strcmp(g->inputs[0]->type.sym[0], "batch"));
    CHECK(kn_shape_bind(&cx, g, "batch=5", 0) == KN_OK && g->inputs[0]->type.dims[0] == 5);
    CHECK(kn_shape_bind(&cx, g, "x=5,4", 1) == KN_EINVAL);
    CHECK(strstr(cx.msg, "conflicts with dim 1 = 3") != NULL);
    kn_ctx_init(&cx, "m");
    CHECK(kn_shape_bind(&cx, g, "nope=2", 0) == KN_EINVAL);
    kn_graph_destroy(g);
}

/* External data beside the model: a file in the folder loads; a symlink in the
 * folder that points outside it is refused. */
static void test_external_files(void) {
    char dir[] = "/tmp/kiln-ext-XXXXXX", path[600];
    if (!mkdtemp(dir)) return;
    snprintf(path, sizeof path, "%s/w.bin", dir);
    FILE *f = fopen(path, "wb");
    float w[] = {1, -2, 3};
    CHECK(f && fwrite(w, sizeof w, 1, f) == 1);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/escape.bin", dir);
    CHECK(symlink("/etc/hostname", path) == 0);
    static const struct {
        const char *location;
        kn_status st;
        const char *msg;
    } cases[] = {
        {"w.bin", KN_OK, ""},
        {"escape.bin", KN_EINVAL, "external data 'escape.bin' resolves outside the model's folder"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        model md;
        base(&md, 13);
        mut_external(&md);
        md.ext[0].value = (char *)cases[i].location;
        size_t len = onnx__model_proto__get_packed_size(&md.m);
        uint8_t *buf = malloc(len);
        onnx__model_proto__pack(&md.m, buf);
        kn_ctx cx;
        kn_ctx_init(&cx, "m.onnx");
        kn_graph *g = NULL;
        kn_status st = kn_onnx_load_memory(&cx, buf, len, dir, "m.onnx", &g);
        free(buf);
        CHECK(st == cases[i].st && strstr(cx.msg, cases[i].msg));
        if (g && st == KN_OK) {
            kn_value *v = kn_graph_find_value(g, "w");
            CHECK(v && v->constant && !memcmp(v->constant->data, w, sizeof w));
        }
        kn_graph_destroy(g);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Subgraphs nested far deeper than protobuf-c's recursive unpacking can take on the
 * stack: refused by the nesting scan before unpacking (this crashed kiln before). */
static void test_deep_nesting(void) {
    enum { LEVELS = 20000 }; /* message levels: graph -> node -> attribute -> graph ... */
    size_t cap = (size_t)LEVELS * 8 + 64, n = 0;
    uint8_t *buf = malloc(cap), *tmp = malloc(cap);
    if (!buf || !tmp) return;
    /* from the outside: ModelProto.graph (7), then GraphProto.node (1),
     * NodeProto.attribute (5), AttributeProto.g (6), node, attribute, g, ... */
    static const uint8_t fields[3] = {(1 << 3) | 2, (5 << 3) | 2, (6 << 3) | 2};
    for (int level = 0; level < LEVELS; level++) { /* wrap the message built so far */
        int k = LEVELS - 1 - level;                /* position counted from the outermost field */
        size_t m = 0;
        tmp[m++] = k == 0 ? (7 << 3) | 2 : fields[(k - 1) % 3];
        for (size_t len = n;; len >>= 7) {
            tmp[m++] = (uint8_t)((len & 0x7f) | (len >= 0x80 ? 0x80 : 0));
            if (len < 0x80) break;
        }
        memcpy(tmp + m, buf, n);
        n += m;
        memcpy(buf, tmp, n);
    }
    kn_ctx cx;
    kn_ctx_init(&cx, "deep.onnx");
    kn_graph *g = NULL;
    CHECK(kn_onnx_load_memory(&cx, buf, n, NULL, "deep.onnx", &g) == KN_ELIMIT);
    CHECK(strstr(cx.msg, "deep.onnx: messages are nested more than") != NULL);
    free(buf);
    free(tmp);
}

/* A model file with initializers of a MiB and more, loaded from the file
 * (kn_onnx_load_file): protobuf-c unpacks their data into blocks of the loader's own;
 * the graph adopts a raw-data initializer's block where it lies (64-byte aligned), and
 * copies the others (float_data, a Constant's raw tensor), whose blocks go back with
 * the unpacked model. y = x + w + v + c, values derived by hand. */
static void test_big_initializers(void) {
    enum { N = 300000 }; /* 1.2 MB a tensor */
    static float w[N], v[N], c[N], x[N];
    for (int i = 0; i < N; i++) w[i] = (float)i, v[i] = (float)(2 * i), c[i] = -1.0f, x[i] = 0.5f;
    static int64_t dn[] = {N};
    static char *in_a[] = {"x", "w"}, *in_b[] = {"s", "v"}, *in_c[] = {"t", "c"};
    static char *out_a[] = {"s"}, *out_b[] = {"t"}, *out_c[] = {"y"}, *out_k[] = {"c"};
    model md;
    model_init(&md, 13);
    add_input(&md, "x", 1, dn);
    Onnx__TensorProto *tw = add_init(&md, "w", 1, dn, NULL, 0);
    tw->has_raw_data = 1;
    tw->raw_data = (ProtobufCBinaryData){sizeof w, (uint8_t *)w};
    add_init(&md, "v", 1, dn, v, N);
    Onnx__TensorProto tc;
    onnx__tensor_proto__init(&tc);
    tc.has_data_type = 1, tc.data_type = 1, tc.n_dims = 1, tc.dims = dn;
    tc.has_raw_data = 1;
    tc.raw_data = (ProtobufCBinaryData){sizeof c, (uint8_t *)c};
    Onnx__NodeProto *k = add_node(&md, "Constant", "const0", 0, NULL, 1, out_k);
    add_attr(&md, k, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = &tc;
    add_node(&md, "Add", "add0", 2, in_a, 1, out_a);
    add_node(&md, "Add", "add1", 2, in_b, 1, out_b);
    add_node(&md, "Add", "add2", 2, in_c, 1, out_c);
    add_output(&md, "y");
    kn_ctx cx;
    kn_graph *g = NULL;
    CHECK(load_file(&md, &cx, &g) == KN_OK);
    if (!g) return;
    kn_value *vw = kn_graph_find_value(g, "w"), *vv = kn_graph_find_value(g, "v");
    CHECK(vw && vw->constant && (uintptr_t)vw->constant->data % 64 == 0);
    CHECK(vw && vw->constant && !memcmp(vw->constant->data, w, sizeof w));
    CHECK(vv && vv->constant && !memcmp(vv->constant->data, v, sizeof v));
    kn_arena *a = kn_arena_create();
    kn_tensor *tx = kn_tensor_make(a, KN_F32, 1, dn), *ty = NULL;
    memcpy(tx->data, x, sizeof x);
    CHECK(kn_interp_run(&cx, g, a, &tx, &ty, 0) == KN_OK);
    int bad = 0;
    for (int i = 0; ty && i < N; i++)
        bad += ((float *)ty->data)[i] != 0.5f + 3.0f * (float)i - 1.0f;
    CHECK(ty && bad == 0);
    kn_arena_destroy(a);
    kn_graph_destroy(g);
}

int main(void) {
    test_valid();
    test_errors();
    test_shape_bind();
    test_external_files();
    test_deep_nesting();
    test_big_initializers();
    return TEST_DONE();
}
