/* Writing a graph as an ONNX model (kiln quantize): the inverse of the loader for the
 * graphs it can express, built with protobuf-c from the same onnx.proto.
 *
 * What is written: the root graph's nodes in order (name, op_type, domain, attributes),
 * its constants that some node reads as initializers (raw data), its inputs and
 * outputs with their element types and shapes (symbolic dimensions by name), the
 * model's IR version and opset imports, producer "kiln". Refused, naming the node:
 * subgraph, sparse-tensor and type-proto attributes, kiln's own attributes ("kn.",
 * written by its fusion passes), sequences and optionals. All protobuf structures
 * live in one scratch arena. */
#include "frontend/onnx.h"
#include "ir/requant.h"
#include "onnx.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct writer {
    kn_ctx *cx;
    kn_arena *a;
} writer;

static void *alloc(writer *w, size_t n) {
    void *p = kn_arena_alloc(w->a, n ? n : 1);
    KN_ASSERT(p);
    memset(p, 0, n ? n : 1);
    return p;
}

static char *str(writer *w, const char *s) {
    return kn_arena_strdup(w->a, s ? s : "");
}

static Onnx__TensorProto *tensor(writer *w, const kn_tensor *t, const char *name) {
    Onnx__TensorProto *tp = alloc(w, sizeof *tp);
    onnx__tensor_proto__init(tp);
    tp->name = str(w, name);
    tp->has_data_type = 1;
    tp->data_type = t->type.dtype;
    tp->n_dims = (size_t)t->type.rank;
    tp->dims = (int64_t *)t->type.dims;
    size_t n = (size_t)kn_tensor_numel(t);
    if (t->type.dtype == KN_STRING) {
        tp->n_string_data = n;
        tp->string_data = alloc(w, n * sizeof *tp->string_data);
        for (size_t i = 0; i < n; i++) {
            char *s = ((char **)t->data)[i];
            tp->string_data[i].data = (uint8_t *)s;
            tp->string_data[i].len = strlen(s);
        }
    } else if (kn_dtype_is_4bit(t->type.dtype)) { /* ONNX packs them two to a byte */
        tp->has_raw_data = 1;
        tp->raw_data.len = (n + 1) / 2;
        tp->raw_data.data = alloc(w, tp->raw_data.len);
        for (size_t i = 0; i < n; i++)
            kn_i4_set(tp->raw_data.data, i, (int)kn_load_i64(t->data, t->type.dtype, i));
    } else {
        tp->has_raw_data = 1;
        tp->raw_data.data = t->data;
        tp->raw_data.len = kn_tensor_nbytes(t);
    }
    return tp;
}

static Onnx__ValueInfoProto *value_info(writer *w, const kn_value *v) {
    Onnx__ValueInfoProto *vi = alloc(w, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = str(w, v->name);
    Onnx__TypeProto *tp = alloc(w, sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = alloc(w, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = v->type.dtype;
    if (v->type.rank >= 0) {
        Onnx__TensorShapeProto *sh = alloc(w, sizeof *sh);
        onnx__tensor_shape_proto__init(sh);
        sh->n_dim = (size_t)v->type.rank;
        sh->dim = alloc(w, sh->n_dim * sizeof *sh->dim);
        for (int d = 0; d < v->type.rank; d++) {
            Onnx__TensorShapeProto__Dimension *dm = alloc(w, sizeof *dm);
            onnx__tensor_shape_proto__dimension__init(dm);
            if (v->type.dims[d] >= 0) {
                dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                dm->dim_value = v->type.dims[d];
            } else if (v->type.sym[d]) {
                dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                dm->dim_param = str(w, v->type.sym[d]);
            }
            sh->dim[d] = dm;
        }
        tt->shape = sh;
    }
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    return vi;
}

static kn_status attribute(writer *w, const kn_node *n, const kn_attr *at,
                           Onnx__AttributeProto **out) {
    if (!strncmp(at->name, "kn.", 3))
        return kn_diag(w->cx, n, KN_EUNSUPPORTED,
                       "has kiln's own attribute '%s', which ONNX does not know", at->name);
    Onnx__AttributeProto *ap = alloc(w, sizeof *ap);
    onnx__attribute_proto__init(ap);
    ap->name = str(w, at->name);
    ap->has_type = 1;
    ap->type = (Onnx__AttributeProto__AttributeType)at->kind;
    switch (at->kind) {
    case KN_ATTR_FLOAT: ap->has_f = 1, ap->f = at->f; break;
    case KN_ATTR_INT: ap->has_i = 1, ap->i = at->i; break;
    case KN_ATTR_STRING: ap->has_s = 1, ap->s.data = (uint8_t *)at->s, ap->s.len = at->slen; break;
    case KN_ATTR_TENSOR: ap->t = tensor(w, at->t, ""); break;
    case KN_ATTR_FLOATS: ap->n_floats = (size_t)at->n, ap->floats = at->floats; break;
    case KN_ATTR_INTS: ap->n_ints = (size_t)at->n, ap->ints = at->ints; break;
    case KN_ATTR_STRINGS:
        ap->n_strings = (size_t)at->n;
        ap->strings = alloc(w, (size_t)at->n * sizeof *ap->strings);
        for (int i = 0; i < at->n; i++)
            ap->strings[i].data = (uint8_t *)at->strings[i],
            ap->strings[i].len = strlen(at->strings[i]);
        break;
    case KN_ATTR_TENSORS:
        ap->n_tensors = (size_t)at->n;
        ap->tensors = alloc(w, (size_t)at->n * sizeof *ap->tensors);
        for (int i = 0; i < at->n; i++) ap->tensors[i] = tensor(w, at->tensors[i], "");
        break;
    default:
        return kn_diag(w->cx, n, KN_EUNSUPPORTED,
                       "attribute '%s' (a subgraph, sparse tensor or type) cannot be written",
                       at->name);
    }
    *out = ap;
    return KN_OK;
}

static kn_status graph(writer *w, const kn_graph *g, Onnx__GraphProto *gp) {
    onnx__graph_proto__init(gp);
    gp->name = str(w, g->name ? g->name : "main");
    gp->n_node = (size_t)g->nnodes;
    gp->node = alloc(w, gp->n_node * sizeof *gp->node);
    int nv = kn_graph_value_count(g);
    bool *read = alloc(w, ((size_t)nv + 1) * sizeof *read);
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        Onnx__NodeProto *np = alloc(w, sizeof *np);
        onnx__node_proto__init(np);
        np->name = str(w, n->name);
        np->op_type = str(w, n->op_type);
        np->domain = str(w, n->domain);
        np->n_input = (size_t)n->nin;
        np->input = alloc(w, np->n_input * sizeof *np->input);
        for (int k = 0; k < n->nin; k++) {
            np->input[k] = str(w, n->in[k] ? n->in[k]->name : "");
            if (n->in[k]) read[n->in[k]->id] = true;
            if (n->in[k] && n->in[k]->type.kind != KN_KIND_TENSOR)
                return kn_diag(w->cx, n, KN_EUNSUPPORTED,
                               "reads a sequence or optional, which kiln cannot write");
        }
        np->n_output = (size_t)n->nout;
        np->output = alloc(w, np->n_output * sizeof *np->output);
        for (int k = 0; k < n->nout; k++) np->output[k] = str(w, n->out[k] ? n->out[k]->name : "");
        np->attribute = alloc(w, (size_t)n->nattr * sizeof *np->attribute);
        np->n_attribute = 0;
        for (int k = 0; k < n->nattr; k++) {
            /* --quantize's mark on its QuantizeLinear nodes (ir/requant.h) stays out of
               the file: ONNX does not know it (the file's adds compile in float32) */
            if (!strcmp(n->attrs[k].name, KN_PTQ_ATTR)) continue;
            if (attribute(w, n, &n->attrs[k], &np->attribute[np->n_attribute++]))
                return w->cx->status;
        }
        gp->node[i] = np;
    }
    for (int i = 0; i < g->nout; i++) read[g->outputs[i]->id] = true;
    gp->initializer = alloc(w, (size_t)g->nvalues * sizeof *gp->initializer);
    for (int i = 0; i < g->nvalues; i++) {
        const kn_value *v = g->values[i];
        if (!v->constant || !read[v->id] || v->producer) continue;
        if (v->constant->type.kind != KN_KIND_TENSOR || !v->constant->data)
            return kn_diag(w->cx, NULL, KN_EUNSUPPORTED,
                           "constant '%s' is no tensor with data: it cannot be written", v->name);
        gp->initializer[gp->n_initializer++] = tensor(w, v->constant, v->name);
    }
    gp->n_input = (size_t)g->nin;
    gp->input = alloc(w, gp->n_input * sizeof *gp->input);
    for (int i = 0; i < g->nin; i++) gp->input[i] = value_info(w, g->inputs[i]);
    gp->n_output = (size_t)g->nout;
    gp->output = alloc(w, gp->n_output * sizeof *gp->output);
    for (int i = 0; i < g->nout; i++) {
        if (g->outputs[i]->type.kind != KN_KIND_TENSOR)
            return kn_diag(w->cx, NULL, KN_EUNSUPPORTED,
                           "output '%s' is a sequence or optional, which kiln cannot write",
                           g->outputs[i]->name);
        gp->output[i] = value_info(w, g->outputs[i]);
    }
    return KN_OK;
}

static Onnx__OperatorSetIdProto *opset(writer *w, const char *domain, int version) {
    Onnx__OperatorSetIdProto *o = alloc(w, sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = str(w, domain);
    o->has_version = 1;
    o->version = version;
    return o;
}

kn_status kn_onnx_write_file(kn_ctx *cx, const kn_graph *g, const char *path) {
    writer w = {cx, kn_arena_create()};
    Onnx__ModelProto mp;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1;
    mp.ir_version = g->ir_version > 0 ? g->ir_version : 8;
    mp.producer_name = "kiln";
    mp.producer_version = "0.1.0";
    Onnx__OperatorSetIdProto *ops[3];
    ops[mp.n_opset_import++] = opset(&w, "", g->opset);
    if (g->opset_ml) ops[mp.n_opset_import++] = opset(&w, "ai.onnx.ml", g->opset_ml);
    if (g->opset_training)
        ops[mp.n_opset_import++] = opset(&w, "ai.onnx.preview.training", g->opset_training);
    mp.opset_import = ops;
    Onnx__GraphProto gp;
    kn_status st = graph(&w, g, &gp);
    mp.graph = &gp;
    if (!st) {
        size_t len = onnx__model_proto__get_packed_size(&mp);
        uint8_t *buf = malloc(len + 1);
        KN_ASSERT(buf);
        onnx__model_proto__pack(&mp, buf);
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        bool ok = f && fwrite(buf, 1, len, f) == len;
        if (f && fclose(f) != 0) ok = false;
        if (!ok || rename(tmp, path) != 0) {
            remove(tmp);
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
        }
        free(buf);
    }
    kn_arena_destroy(w.a);
    return st;
}
