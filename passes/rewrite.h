/* A small toolkit for graph passes that match patterns and replace nodes
 * (bnfold, act, norm, chain, se): use counts, constants, and a node list rebuilt once
 * at the end so a pass can remove nodes and insert new ones in the middle without
 * shifting the array on every change.
 *
 * kn_rw_begin numbers the graph's nodes by position (node->id = position). A pass
 * then walks positions 0..n0-1 (the nodes that existed at the start), kills nodes
 * it replaced (kn_rw_kill) and adds nodes placed before an existing one
 * (kn_rw_node, anchored at a position). kn_rw_end rebuilds g->nodes: at each
 * position the new nodes anchored there (in creation order), then the old node
 * unless killed; ids are renumbered by position again. A pass must anchor a new node
 * after the producers of its inputs and before the readers of its outputs.
 *
 * Graphs with subgraphs are not rewritten (their bodies may read any outer value):
 * kn_rw_begin returns false for them. */
#ifndef KN_REWRITE_H
#define KN_REWRITE_H

#include "ir/graph.h"

typedef struct kn_rw {
    kn_ctx *cx;
    kn_graph *g;
    int n0;       /* nodes at the start */
    bool *dead;   /* by id (position at the start; new nodes after n0) */
    int *anchor;  /* new node id - n0 -> the position it goes before */
    int cap;      /* entries of dead and, past n0, of anchor */
    bool changed; /* some node was killed or added */
} kn_rw;

/* Starts a rewrite of g (a root or subgraph without subgraphs); false if g has
 * subgraphs (then nothing must be rewritten and kn_rw_end is still called). */
bool kn_rw_begin(kn_rw *rw, kn_ctx *cx, kn_graph *g);
/* Rebuilds g's node list (see above) and frees the rewrite's state. */
void kn_rw_end(kn_rw *rw);

/* Readers of v among the live nodes plus graph outputs of the model. */
int kn_rw_uses(const kn_rw *rw, const kn_value *v);
/* Whether n is killed. */
bool kn_rw_dead(const kn_rw *rw, const kn_node *n);
/* Marks n removed; its outputs lose their producer link. */
void kn_rw_kill(kn_rw *rw, kn_node *n);
/* The only live reader of v (and v is no graph output), or NULL. */
kn_node *kn_rw_only_reader(const kn_rw *rw, const kn_value *v);
/* A new node placed before position `before` (a position < n0, or n0 for the end). */
kn_node *kn_rw_node(kn_rw *rw, int before, kn_op op, const char *name, int nin, kn_value **in,
                    int nout, kn_value **out);
/* A new value of type t named after `like` with a suffix (a unique name). */
kn_value *kn_rw_value(kn_rw *rw, const char *like, const char *suffix, const kn_type *t);
/* A new constant holding t. */
kn_value *kn_rw_const(kn_rw *rw, const char *like, const char *suffix, kn_tensor *t);
/* Makes every reader of `from` (and a graph output) read `to`. */
void kn_rw_replace(kn_rw *rw, kn_value *from, kn_value *to);

/* Whether v is a constant with a single element (any rank); its value in *x. */
bool kn_const_scalar(const kn_value *v, double *x);
/* Whether v is a float tensor of static shape. */
bool kn_float_static(const kn_value *v);

#endif
