/* Pictures of a compiled model for kiln inspect: the graph as Graphviz dot (and SVG
 * through the `dot` program), the arena over time as SVG, and the per-kernel profile
 * file of kiln bench --profile-file that the graph picture can show. */
#ifndef KN_PICTURE_H
#define KN_PICTURE_H

#include "ir/graph.h"

#include <stdio.h>

struct kn_kprog;

/* Per-node time from a profile file: one entry per kernel, matched to graph nodes by
 * ONNX node name. */
typedef struct pic_profile {
    int n;
    struct {
        char node[256];
        char op[64];
        double ms, share; /* mean ms per run; share of all kernels' time, 0..1 */
    } * k;
    double total_ms; /* the sum over kernels */
} pic_profile;

/* Reads a file written by kiln bench --profile-file. Errors name the file. */
kn_status pic_profile_read(kn_ctx *cx, const char *path, pic_profile *out);
void pic_profile_free(pic_profile *p);

/* The graph in dot: inputs and outputs as ellipses, one box per node with its op, name
 * and FLOPs (and, with prof, its time and share, shaded by share), values on the
 * edges with dtype and shape (quantized ones with scale and zero point), a node with a
 * fused activation drawn as a cluster of the two. prof may be NULL. */
void pic_graph_dot(FILE *f, const kn_graph *g, const pic_profile *prof);

/* Runs Graphviz: `dot -Tsvg` of the dot text in buf into path (through a temporary
 * name, so a failure leaves nothing). A missing `dot` is a KN_EUNSUPPORTED error
 * saying how to install it. */
kn_status pic_dot_to_svg(kn_ctx *cx, const char *dot_text, size_t len, const char *path);

/* The arena over time as SVG: one rectangle per buffer from the kernel that writes it
 * to its last reader, at its offset; the bytes live at each kernel and the lower bound
 * on the same axes; one panel per memory region (today one: the arena). */
void pic_memory_svg(FILE *f, const struct kn_kprog *p, const char *model);

/* Writes text to path through a temporary name renamed on success. */
kn_status pic_write_file(kn_ctx *cx, const char *path, const char *text, size_t len);

#endif
