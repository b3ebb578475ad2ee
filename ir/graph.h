/* The graph IR.
 *
 * A model is a root kn_graph; subgraphs (If/Loop/Scan bodies) are kn_graphs whose
 * `parent` is the graph holding the node, sharing the root's arena and value-id
 * counter, so every kn_value in a model has a unique `id` (the interpreter keeps
 * one environment array indexed by it). Values are SSA edges: one producer (a node,
 * or none for graph inputs and constants). A node input from an enclosing graph
 * points at the outer kn_value directly.
 *
 * Invariants (kn_graph_verify): nodes are in topological order; each value has at
 * most one producer; missing optional inputs are NULL; names are unique per graph.
 * All IR objects live in the root arena and are freed by kn_graph_destroy(). */
#ifndef KN_GRAPH_H
#define KN_GRAPH_H

#include "ir/diag.h"
#include "ir/tensor.h"

typedef enum kn_op {
#define OP(id, domain, name, minin, maxin, minout, maxout, flags) KN_OP_##id,
#include "ir/ops.def"
#undef OP
    KN_OP_COUNT
} kn_op;

typedef struct kn_graph kn_graph;
typedef struct kn_node kn_node;

enum {
    KN_VALUE_INPUT = 1,  /* graph input */
    KN_VALUE_OUTPUT = 2, /* graph output */
};

typedef struct kn_value {
    int id;              /* unique across the model */
    const char *name;    /* ONNX name; never NULL, may be "" for a missing value */
    kn_type type;        /* after shape inference; declared type for inputs */
    kn_node *producer;   /* NULL for inputs and constants */
    kn_tensor *constant; /* initializer or folded value, else NULL */
    kn_graph *graph;     /* graph that defines it */
    unsigned flags;      /* KN_VALUE_* */
} kn_value;

typedef enum kn_attr_kind {
    KN_ATTR_FLOAT = 1,
    KN_ATTR_INT = 2,
    KN_ATTR_STRING = 3,
    KN_ATTR_TENSOR = 4,
    KN_ATTR_GRAPH = 5,
    KN_ATTR_FLOATS = 6,
    KN_ATTR_INTS = 7,
    KN_ATTR_STRINGS = 8,
    KN_ATTR_TENSORS = 9,
    KN_ATTR_GRAPHS = 10,
    KN_ATTR_SPARSE_TENSOR = 11,
    KN_ATTR_SPARSE_TENSORS = 12,
    KN_ATTR_TYPE_PROTO = 13,
    KN_ATTR_TYPE_PROTOS = 14,
} kn_attr_kind;

typedef struct kn_attr {
    const char *name;
    kn_attr_kind kind;
    float f;
    int64_t i;
    const char *s; /* NUL-terminated; slen bytes may include NULs */
    size_t slen;
    kn_tensor *t;
    kn_graph *g;
    kn_type tp; /* TYPE_PROTO */
    int n;      /* element count of the list kinds */
    float *floats;
    int64_t *ints;
    const char **strings;
    kn_tensor **tensors;
    kn_graph **graphs;
} kn_attr;

struct kn_node {
    int id;
    kn_op op;
    const char *name;    /* ONNX node name ("" if none) */
    const char *op_type; /* ONNX op_type as written */
    const char *domain;  /* "" for ai.onnx */
    int opset;           /* opset version of the node's domain in this model */
    int nin, nout;
    kn_value **in;  /* NULL entries for omitted optional inputs */
    kn_value **out; /* NULL entries for omitted optional outputs */
    int nattr;
    kn_attr *attrs;
    kn_graph *graph; /* graph holding the node */
};

/* A sequence or optional input/output of the model as compiled code sees it
 * (passes/deseq.c): `count` consecutive tensor inputs/outputs from position `first`,
 * one per element of a sequence of compile-time length, one for an optional that
 * holds a tensor, none for an empty one. */
typedef struct kn_iogroup {
    const char *name; /* ONNX name */
    kn_type type;     /* the value's type: kind KN_KIND_SEQUENCE or KN_KIND_OPTIONAL */
    bool output;
    bool present; /* optional: holds a value */
    int first, count;
} kn_iogroup;

/* A type the model declares for a computed value (ValueInfoProto of value_info or of a
 * graph output); shape inference recomputes every type, and warns where they differ. */
typedef struct kn_type_hint {
    kn_value *v;
    kn_type type;
} kn_type_hint;

struct kn_graph {
    kn_arena *arena;  /* the root's arena */
    kn_graph *parent; /* enclosing graph of a subgraph, NULL for the root */
    kn_graph *root;
    const char *name;
    const char *path;   /* model file, for messages; borrowed from the root */
    int *next_value_id; /* shared counter, in the root */
    int nvalues, cap_values;
    kn_value **values; /* every value defined in this graph */
    int nnodes, cap_nodes;
    kn_node **nodes; /* topological order */
    int nin, nout;
    kn_value **inputs;
    kn_value **outputs;
    int opset;                /* ai.onnx opset of the model */
    int opset_ml;             /* ai.onnx.ml opset, 0 if not imported */
    int opset_training;       /* ai.onnx.preview.training opset, 0 if not imported */
    int64_t max_string_bytes; /* compile option (root): bytes of storage per new string
                                 element whose length is known only at run time, NUL
                                 included; 0: the default (KN_MAX_STRING_BYTES, ir/kir.h) */
    int ir_version;
    kn_dtype weights;           /* root: KN_F16/KN_BF16 to store representable float32 weights in
                                   (passes/lowp.c), else KN_UNDEF */
    bool weights_round;         /* root: the pass 'weights' rounds float32 constants to `weights`
                                   (--weights); false: only the storage (kn_weights_detect) */
    const char *invalid;        /* an If branch whose static inference failed for the fixed
                                   input shapes (the condition being unknown): why. Compiled
                                   code returns KN_STATUS_INVALID_BRANCH if it is taken */
    int nhints;                 /* root: value_info and declared output types, checked */
    struct kn_type_hint *hints; /* against the first shape inference (ir/infer.c) */
    int ngroups;                /* root: sequence/optional inputs and outputs, flattened */
    kn_iogroup *groups;         /* to tensors by passes/deseq.c; NULL until then */
};

/* A new root graph with its own arena. Destroy with kn_graph_destroy(). */
kn_graph *kn_graph_create(const char *path);
/* A subgraph of parent, owned by parent's root. */
kn_graph *kn_graph_create_sub(kn_graph *parent, const char *name);
void kn_graph_destroy(kn_graph *g);

/* New value named name (copied) defined in g. */
kn_value *kn_graph_add_value(kn_graph *g, const char *name, const kn_type *t);
/* Value named name visible in g (g, then enclosing graphs), or NULL. */
kn_value *kn_graph_find_value(const kn_graph *g, const char *name);
/* New node; inputs/outputs arrays are copied. Appended to g's node list. */
kn_node *kn_graph_add_node(kn_graph *g, kn_op op, const char *name, int nin, kn_value **in,
                           int nout, kn_value **out);
/* Makes every node of g's model (all graphs) that reads `from` read `to` instead, and
 * every graph output that is `from` be `to`. */
void kn_graph_replace_uses(kn_graph *g, const kn_value *from, kn_value *to);
/* How many times v is read in g itself: its nodes' inputs and g's own outputs. */
int kn_graph_reads(const kn_graph *g, const kn_value *v);
/* Whether some graph of g's model lists v among its outputs. */
bool kn_graph_is_output(const kn_graph *g, const kn_value *v);
/* Total values created in the model (size for id-indexed arrays). */
int kn_graph_value_count(const kn_graph *g);

/* Makes graph input `name` a constant with value t (copied into the graph): it is
 * no longer an input. Reports an unknown name or a value that contradicts the
 * input's declared dtype or dims. */
kn_status kn_graph_bind_input(kn_ctx *cx, kn_graph *g, const char *name, const kn_tensor *t);

/* Attribute lookup: NULL if absent. */
const kn_attr *kn_node_attr(const kn_node *n, const char *name);

/* Typed attribute getters. A present attribute of the wrong kind records an error
 * in cx (sticky: check kn_failed(cx) after a series of calls) and returns def. */
int64_t kn_attr_int(kn_ctx *cx, const kn_node *n, const char *name, int64_t def);
float kn_attr_float(kn_ctx *cx, const kn_node *n, const char *name, float def);
const char *kn_attr_str(kn_ctx *cx, const kn_node *n, const char *name, const char *def);
/* INTS attribute: returns its count and sets *v (borrowed), or -1 if absent. */
int kn_attr_ints(kn_ctx *cx, const kn_node *n, const char *name, const int64_t **v);
int kn_attr_floats(kn_ctx *cx, const kn_node *n, const char *name, const float **v);
int kn_attr_strings(kn_ctx *cx, const kn_node *n, const char *name, const char *const **v);
kn_tensor *kn_attr_tensor(kn_ctx *cx, const kn_node *n, const char *name);
kn_graph *kn_attr_graph(kn_ctx *cx, const kn_node *n, const char *name);

/* Checks the invariants above; reports the first violation. */
kn_status kn_graph_verify(kn_ctx *cx, const kn_graph *g);
/* Text form (docs/ir-format.md), for golden tests and --dump-after. */
void kn_graph_print(const kn_graph *g, void *file /* FILE * */);

#endif
