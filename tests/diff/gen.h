/* Random valid ONNX graphs for differential testing (tests/diff/kiln_diff.c).
 *
 * A dg_graph is a small description of a float graph: values (graph inputs,
 * initializers, node outputs) with static shapes and, for inputs and initializers,
 * their data; nodes with their op, inputs and attributes; and the graph outputs.
 * dg_generate() draws one from a seed (chains and DAGs of ops that matter for fusion,
 * tiling and the memory plan, with shapes that are 1-sized, odd, or leave tails);
 * dg_pack() writes it as a ModelProto through protobuf-c, so the same description
 * is what kiln loads and what a failing case is saved as. The shrinker edits the
 * description (dg_prune, dg_cut) and packs it again. */
#ifndef KN_DIFF_GEN_H
#define KN_DIFF_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DG_MAX_VALUES 256
#define DG_MAX_NODES 64
#define DG_MAX_IN 6
#define DG_MAX_ATTRS 8
#define DG_OPSET 17

typedef enum dg_kind { DG_INPUT, DG_CONST, DG_NODE } dg_kind;

typedef struct dg_value {
    dg_kind kind;
    int dtype; /* ONNX: 1 float, 7 int64 (shape/axes operands) */
    int rank;
    int64_t dims[4];
    void *data;    /* inputs and initializers: numel elements (malloc) */
    bool aux;      /* an int64 or scalar operand, never an op's data input */
    bool positive; /* values in [0.5, 2]: fit as a divisor */
    bool dead;     /* removed by the shrinker */
} dg_value;

typedef struct dg_attr {
    const char *name;
    int type; /* ONNX AttributeType: 1 FLOAT, 2 INT, 7 INTS */
    float f;
    int64_t ints[8];
    int nints;
} dg_attr;

typedef struct dg_node {
    const char *op;
    int in[DG_MAX_IN]; /* value indices; -1: an omitted optional input ("") */
    int nin;
    int out;
    dg_attr attrs[DG_MAX_ATTRS];
    int nattrs;
    bool dead;
} dg_node;

typedef struct dg_graph {
    dg_value v[DG_MAX_VALUES];
    int nv;
    dg_node n[DG_MAX_NODES];
    int nn;
    int out[DG_MAX_VALUES]; /* graph outputs: value indices */
    int nout;
} dg_graph;

/* Fills g from seed with between min_nodes and max_nodes nodes. */
void dg_generate(dg_graph *g, uint64_t seed, int min_nodes, int max_nodes);
/* Frees the data of g's values. */
void dg_free(dg_graph *g);
/* Deep copy (data duplicated). */
void dg_copy(dg_graph *dst, const dg_graph *src);
/* Marks dead every node and constant no output depends on, and every input no live
 * node reads. */
void dg_prune(dg_graph *g);
/* Replaces node k by a graph input of its output's shape (random data from seed). */
void dg_cut(dg_graph *g, int k, uint64_t seed);
/* Serializes the live part of g as an ONNX ModelProto: *buf is malloc'd. */
void dg_pack(const dg_graph *g, uint8_t **buf, size_t *len);
/* Live graph inputs in order (value indices), and how many. */
int dg_inputs(const dg_graph *g, int *idx);
/* Live nodes. */
int dg_live_nodes(const dg_graph *g);
/* One line per node, for messages. */
void dg_print(const dg_graph *g, void *file);

#endif
