/* Sequences and optionals for the compiling backends (passes/deseq.c).
 *
 * Compiled code holds tensors only. A sequence becomes a compile-time list of
 * tensors (its length and each element's shape fixed when compiling), an optional
 * becomes nothing or its one value. At the ABI a sequence input or output of length
 * L is L consecutive tensor parameters NAME_0 .. NAME_{L-1}; an optional holding a
 * tensor is one parameter NAME, an empty one none (docs/generated-c.md). */
#ifndef KN_DESEQ_H
#define KN_DESEQ_H

#include "ir/graph.h"

/* Replaces sequence/optional graph input i of g by tensor inputs shaped like
 * `structure` (a sequence/optional tensor: its length and its items' types are
 * read, not their data; an item of unknown rank takes the declared element type).
 * The original value is then built from them by nodes at the top of g. Records a
 * kn_iogroup in g. A tensor input is left alone. */
kn_status kn_deseq_expand_input(kn_ctx *cx, kn_graph *g, int i, const kn_tensor *structure);
/* kn_deseq_expand_input for every input, in[k] describing g->inputs[k]. */
kn_status kn_deseq_expand_inputs(kn_ctx *cx, kn_graph *g, kn_tensor *const *in);
/* `kiln compile --length NAME=L`: sequence input NAME has length L (elements of the
 * declared element type); an optional input holds a value (L = 1, or the length of
 * the sequence it holds) or not (L = "none"). */
kn_status kn_deseq_expand_length(kn_ctx *cx, kn_graph *g, const char *spec);

/* The pass: rewrites g (after shape,fold) so that no node reads or writes a
 * sequence or optional. Sequence ops become list operations at compile time (or
 * Concat/Slice/Reshape nodes), SequenceMap and Loops carrying sequences are unrolled,
 * Ifs whose condition is a constant are inlined. Refuses, naming the node, where a
 * length, a position or a condition depends on run-time data. Sequence/optional
 * graph outputs become tensor outputs (NAME_i), recorded as kn_iogroups. Runs
 * shape,fold,shape again when it changed g. */
kn_status kn_pass_deseq(kn_ctx *cx, kn_graph *g);

/* True if input k of n decides the structure (length, position) of a sequence or
 * optional: it must be known at compile time. */
bool kn_deseq_structural(const kn_node *n, int k);

/* Stores the data pointers of t's tensors in ABI order into data[] (NULL: counts
 * only); returns how many. A tensor is one; an empty optional none. */
int kn_deseq_flatten(const kn_tensor *t, const void **data);
/* The model's outputs, from the flat tensor outputs of compiled code: sequences and
 * optionals rebuilt per the output groups (none: out = flat). Sets *nout. */
void kn_deseq_regroup(kn_arena *a, const kn_iogroup *groups, int ngroups, kn_tensor *const *flat,
                      int nflat, kn_tensor **out, int *nout);

#endif
