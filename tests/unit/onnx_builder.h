/* A small ONNX model builder for unit tests: a `model` holds the protobuf-c
 * structs of one graph in fixed arrays (no allocation), filled by the add_*
 * helpers, then packed and loaded through kn_onnx_load_memory by load().
 *
 * Capacity: 8 nodes, 4 initializers, 4 graph inputs and outputs, 8 typed values,
 * 8 attributes in all and 6 per node, rank 4 for typed values. Every string and
 * array passed in is borrowed and must outlive the model. The functions are
 * `static inline` so a test that uses only some of them compiles warning-free. */
#ifndef KN_ONNX_BUILDER_H
#define KN_ONNX_BUILDER_H

#include "frontend/onnx.h"
#include "onnx.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct model {
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
    Onnx__NodeProto nodes[8], *pnodes[8];
    Onnx__TensorProto inits[4], *pinits[4];
    Onnx__ValueInfoProto vin[4], *pvin[4], vout[4], *pvout[4];
    Onnx__TypeProto types[8];
    Onnx__TypeProto__Tensor ttypes[8];
    Onnx__TensorShapeProto shapes[8];
    Onnx__TensorShapeProto__Dimension dims[8][4], *pdims[8][4];
    Onnx__AttributeProto attrs[8], *pattrs[8][6];
    Onnx__StringStringEntryProto ext[2], *pext[2];
    char *names[8][2][4]; /* per-node copies of input/output name arrays */
    int ntypes;
} model;

static inline void model_init(model *md, int opset) {
    memset(md, 0, sizeof *md);
    onnx__model_proto__init(&md->m);
    onnx__graph_proto__init(&md->g);
    onnx__operator_set_id_proto__init(&md->opset);
    md->opset.domain = "";
    md->opset.has_version = 1;
    md->opset.version = opset;
    md->opsets[0] = &md->opset;
    md->m.has_ir_version = 1;
    md->m.ir_version = 8;
    md->m.n_opset_import = 1;
    md->m.opset_import = md->opsets;
    md->m.graph = &md->g;
    md->g.name = "g";
    md->g.node = md->pnodes;
    md->g.initializer = md->pinits;
    md->g.input = md->pvin;
    md->g.output = md->pvout;
}

static inline Onnx__TypeProto *ttype(model *md, int dtype, int rank, const int64_t *dims) {
    int k = md->ntypes++;
    Onnx__TypeProto *t = &md->types[k];
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(&md->ttypes[k]);
    onnx__tensor_shape_proto__init(&md->shapes[k]);
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = &md->ttypes[k];
    md->ttypes[k].has_elem_type = 1;
    md->ttypes[k].elem_type = dtype;
    md->ttypes[k].shape = &md->shapes[k];
    md->shapes[k].n_dim = (size_t)rank;
    md->shapes[k].dim = md->pdims[k];
    for (int i = 0; i < rank; i++) {
        onnx__tensor_shape_proto__dimension__init(&md->dims[k][i]);
        md->dims[k][i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        md->dims[k][i].dim_value = dims[i];
        md->pdims[k][i] = &md->dims[k][i];
    }
    return t;
}

/* A graph input of ONNX element type dtype (TensorProto.DataType) and static shape. */
static inline void add_input_typed(model *md, const char *name, int dtype, int rank,
                                   const int64_t *dims) {
    size_t k = md->g.n_input++;
    onnx__value_info_proto__init(&md->vin[k]);
    md->vin[k].name = (char *)name;
    md->vin[k].type = ttype(md, dtype, rank, dims);
    md->pvin[k] = &md->vin[k];
}

/* A float graph input. */
static inline void add_input(model *md, const char *name, int rank, const int64_t *dims) {
    add_input_typed(md, name, 1, rank, dims);
}

static inline void add_output(model *md, const char *name) {
    size_t k = md->g.n_output++;
    onnx__value_info_proto__init(&md->vout[k]);
    md->vout[k].name = (char *)name;
    md->pvout[k] = &md->vout[k];
}

static inline Onnx__TensorProto *add_init(model *md, const char *name, int rank, int64_t *dims,
                                          float *data, size_t n) {
    size_t k = md->g.n_initializer++;
    Onnx__TensorProto *t = &md->inits[k];
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = 1;
    t->n_dims = (size_t)rank;
    t->dims = dims;
    t->n_float_data = n;
    t->float_data = data;
    md->pinits[k] = t;
    return t;
}

static inline Onnx__NodeProto *add_node(model *md, const char *op, const char *name, int nin,
                                        char **in, int nout, char **out) {
    size_t k = md->g.n_node++;
    Onnx__NodeProto *n = &md->nodes[k];
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)name;
    n->n_input = (size_t)nin;
    n->input = md->names[k][0];
    n->n_output = (size_t)nout;
    n->output = md->names[k][1];
    if (nin) memcpy(n->input, in, (size_t)nin * sizeof *in); /* in may be NULL for none */
    if (nout) memcpy(n->output, out, (size_t)nout * sizeof *out);
    n->attribute = md->pattrs[k];
    md->pnodes[k] = n;
    return n;
}

static inline Onnx__AttributeProto *add_attr(model *md, Onnx__NodeProto *n, const char *name,
                                             int type) {
    int k = 0;
    while (md->attrs[k].name) k++;
    Onnx__AttributeProto *a = &md->attrs[k];
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = type;
    n->attribute[n->n_attribute++] = a;
    return a;
}

/* An INTS attribute of n: the n_ints values of ints (borrowed). */
static inline void add_ints(model *md, Onnx__NodeProto *n, const char *name, size_t n_ints,
                            int64_t *ints) {
    Onnx__AttributeProto *a = add_attr(md, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n_ints, a->ints = ints;
}

/* Packs the model (cut to its first `truncate` bytes if nonzero) and loads it;
 * re-initializes cx. */
static inline kn_status load(model *md, kn_ctx *cx, kn_graph **g, size_t truncate) {
    size_t len = onnx__model_proto__get_packed_size(&md->m);
    uint8_t *buf = malloc(len + 1);
    onnx__model_proto__pack(&md->m, buf);
    kn_ctx_init(cx, "m.onnx");
    kn_status st = kn_onnx_load_memory(cx, buf, truncate ? truncate : len, "/tmp", "m.onnx", g);
    free(buf);
    return st;
}

/* Packs the model into a temporary file and loads it from there with kn_onnx_load_file
 * (the path that reads large initializers into the loader's chunks); re-initializes cx
 * and removes the file. */
static inline kn_status load_file(model *md, kn_ctx *cx, kn_graph **g) {
    char path[] = "/tmp/kiln-model-XXXXXX";
    kn_ctx_init(cx, "m.onnx");
    int fd = mkstemp(path);
    if (fd < 0) return kn_diag(cx, NULL, KN_EIO, "cannot create %s", path);
    size_t len = onnx__model_proto__get_packed_size(&md->m);
    uint8_t *buf = malloc(len);
    bool ok =
        buf && onnx__model_proto__pack(&md->m, buf) == len && write(fd, buf, len) == (ssize_t)len;
    close(fd);
    free(buf);
    kn_status st =
        ok ? kn_onnx_load_file(cx, path, g) : kn_diag(cx, NULL, KN_EIO, "cannot write %s", path);
    unlink(path);
    return st;
}

#endif
