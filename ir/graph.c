/* Graph construction, attribute access, the verifier and the text printer.
 * Growable arrays live in the root arena: a full array is copied to a larger one. */
#include "ir/graph.h"
#include "ir/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kn_graph *kn_graph_create(const char *path) {
    kn_arena *a = kn_arena_create();
    kn_graph *g = kn_arena_alloc(a, sizeof *g);
    g->arena = a;
    g->root = g;
    g->path = path ? kn_arena_strdup(a, path) : "";
    g->name = "";
    g->next_value_id = kn_arena_alloc(a, sizeof(int));
    return g;
}

kn_graph *kn_graph_create_sub(kn_graph *parent, const char *name) {
    kn_graph *g = kn_arena_alloc(parent->arena, sizeof *g);
    g->arena = parent->arena;
    g->parent = parent;
    g->root = parent->root;
    g->path = parent->path;
    g->name = kn_arena_strdup(g->arena, name ? name : "");
    g->next_value_id = parent->next_value_id;
    g->opset = parent->opset;
    g->opset_ml = parent->opset_ml;
    g->opset_training = parent->opset_training;
    g->ir_version = parent->ir_version;
    return g;
}

void kn_graph_destroy(kn_graph *g) {
    if (g) kn_arena_destroy(g->arena);
}

static void *grow(kn_arena *a, void *old, int n, int *cap, size_t elem) {
    if (n < *cap) return old;
    int nc = *cap ? *cap * 2 : 16;
    void *p = kn_arena_array(a, (size_t)nc, elem);
    KN_ASSERT(p);
    if (old) memcpy(p, old, (size_t)n * elem);
    *cap = nc;
    return p;
}

kn_value *kn_graph_add_value(kn_graph *g, const char *name, const kn_type *t) {
    kn_value *v = kn_arena_alloc(g->arena, sizeof *v);
    v->id = (*g->next_value_id)++;
    v->name = kn_arena_strdup(g->arena, name ? name : "");
    if (t)
        v->type = *t;
    else
        v->type = kn_type_unknown(KN_UNDEF);
    v->graph = g;
    g->values = grow(g->arena, g->values, g->nvalues, &g->cap_values, sizeof *g->values);
    g->values[g->nvalues++] = v;
    return v;
}

kn_value *kn_graph_find_value(const kn_graph *g, const char *name) {
    for (; g; g = g->parent)
        for (int i = g->nvalues - 1; i >= 0; i--)
            if (!strcmp(g->values[i]->name, name)) return g->values[i];
    return NULL;
}

kn_node *kn_graph_add_node(kn_graph *g, kn_op op, const char *name, int nin, kn_value **in,
                           int nout, kn_value **out) {
    kn_node *n = kn_arena_alloc(g->arena, sizeof *n);
    n->id = g->nnodes;
    n->op = op;
    n->name = kn_arena_strdup(g->arena, name ? name : "");
    n->op_type = op < KN_OP_COUNT ? kn_op_desc(op)->name : "?";
    n->domain = op < KN_OP_COUNT ? kn_op_desc(op)->domain : "";
    n->opset = g->opset;
    n->graph = g;
    n->nin = nin;
    n->nout = nout;
    n->in = kn_arena_array(g->arena, (size_t)(nin ? nin : 1), sizeof *n->in);
    n->out = kn_arena_array(g->arena, (size_t)(nout ? nout : 1), sizeof *n->out);
    if (nin) memcpy(n->in, in, (size_t)nin * sizeof *in);
    if (nout) memcpy(n->out, out, (size_t)nout * sizeof *out);
    for (int i = 0; i < nout; i++)
        if (out[i]) out[i]->producer = n;
    g->nodes = grow(g->arena, g->nodes, g->nnodes, &g->cap_nodes, sizeof *g->nodes);
    g->nodes[g->nnodes++] = n;
    return n;
}

static void replace_in(kn_graph *g, const kn_value *from, kn_value *to) {
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] == from) n->in[k] = to;
        for (int k = 0; k < n->nattr; k++) {
            if (n->attrs[k].kind == KN_ATTR_GRAPH) replace_in(n->attrs[k].g, from, to);
            for (int j = 0; n->attrs[k].kind == KN_ATTR_GRAPHS && j < n->attrs[k].n; j++)
                replace_in(n->attrs[k].graphs[j], from, to);
        }
    }
    for (int j = 0; j < g->nout; j++)
        if (g->outputs[j] == from) g->outputs[j] = to;
}

void kn_graph_replace_uses(kn_graph *g, const kn_value *from, kn_value *to) {
    replace_in(g->root, from, to);
}

static bool is_output_in(const kn_graph *g, const kn_value *v) {
    for (int j = 0; j < g->nout; j++)
        if (g->outputs[j] == v) return true;
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        for (int k = 0; k < n->nattr; k++) {
            if (n->attrs[k].kind == KN_ATTR_GRAPH && is_output_in(n->attrs[k].g, v)) return true;
            for (int j = 0; n->attrs[k].kind == KN_ATTR_GRAPHS && j < n->attrs[k].n; j++)
                if (is_output_in(n->attrs[k].graphs[j], v)) return true;
        }
    }
    return false;
}

int kn_graph_reads(const kn_graph *g, const kn_value *v) {
    int n = 0;
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++) n += g->nodes[i]->in[j] == v;
    for (int i = 0; i < g->nout; i++) n += g->outputs[i] == v;
    return n;
}

bool kn_graph_is_output(const kn_graph *g, const kn_value *v) {
    return is_output_in(g->root, v);
}

int kn_graph_value_count(const kn_graph *g) {
    return *g->next_value_id;
}

kn_status kn_graph_bind_input(kn_ctx *cx, kn_graph *g, const char *name, const kn_tensor *t) {
    for (int i = 0; i < g->nin; i++) {
        kn_value *v = g->inputs[i];
        if (strcmp(v->name, name)) continue;
        const kn_type *want = &v->type;
        bool ok = t->type.kind == want->kind && (!want->dtype || want->dtype == t->type.dtype) &&
                  (want->rank < 0 || want->rank == t->type.rank);
        for (int d = 0; ok && want->rank >= 0 && d < want->rank; d++)
            if (want->dims[d] >= 0 && want->dims[d] != t->type.dims[d]) ok = false;
        if (!ok) {
            char a[128], b[128];
            return kn_diag(cx, NULL, KN_EINVAL, "--bind %s: the value is %s, the input is %s", name,
                           kn_type_str(&t->type, a, sizeof a), kn_type_str(want, b, sizeof b));
        }
        v->constant = kn_tensor_clone(g->arena, t);
        v->type = t->type;
        v->flags &= ~(unsigned)KN_VALUE_INPUT;
        memmove(&g->inputs[i], &g->inputs[i + 1], (size_t)(g->nin - i - 1) * sizeof *g->inputs);
        g->nin--;
        return KN_OK;
    }
    return kn_diag(cx, NULL, KN_EINVAL, "--bind: the model has no input '%s'", name);
}

/* ---- attributes ---- */

const kn_attr *kn_node_attr(const kn_node *n, const char *name) {
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

static const char *kind_name(kn_attr_kind k) {
    static const char *names[] = {"?",
                                  "float",
                                  "int",
                                  "string",
                                  "tensor",
                                  "graph",
                                  "floats",
                                  "ints",
                                  "strings",
                                  "tensors",
                                  "graphs",
                                  "sparse_tensor",
                                  "sparse_tensors",
                                  "type_proto",
                                  "type_protos"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

static const kn_attr *typed(kn_ctx *cx, const kn_node *n, const char *name, kn_attr_kind k) {
    const kn_attr *a = kn_node_attr(n, name);
    if (a && a->kind != k) {
        kn_diag(cx, n, KN_EINVAL, "attribute '%s' has type %s, expected %s", name,
                kind_name(a->kind), kind_name(k));
        return NULL;
    }
    return a;
}

int64_t kn_attr_int(kn_ctx *cx, const kn_node *n, const char *name, int64_t def) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_INT);
    return a ? a->i : def;
}

float kn_attr_float(kn_ctx *cx, const kn_node *n, const char *name, float def) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_FLOAT);
    return a ? a->f : def;
}

const char *kn_attr_str(kn_ctx *cx, const kn_node *n, const char *name, const char *def) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_STRING);
    return a ? a->s : def;
}

int kn_attr_ints(kn_ctx *cx, const kn_node *n, const char *name, const int64_t **v) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_INTS);
    *v = a ? a->ints : NULL;
    return a ? a->n : -1;
}

int kn_attr_floats(kn_ctx *cx, const kn_node *n, const char *name, const float **v) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_FLOATS);
    *v = a ? a->floats : NULL;
    return a ? a->n : -1;
}

int kn_attr_strings(kn_ctx *cx, const kn_node *n, const char *name, const char *const **v) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_STRINGS);
    *v = a ? a->strings : NULL;
    return a ? a->n : -1;
}

kn_tensor *kn_attr_tensor(kn_ctx *cx, const kn_node *n, const char *name) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_TENSOR);
    return a ? a->t : NULL;
}

kn_graph *kn_attr_graph(kn_ctx *cx, const kn_node *n, const char *name) {
    const kn_attr *a = typed(cx, n, name, KN_ATTR_GRAPH);
    return a ? a->g : NULL;
}

/* ---- verifier ---- */

/* A value may be used by a node if it is a graph input/constant of g or an enclosing
 * graph, or produced by an earlier node (its id marked in `seen`). */
static kn_status verify_graph(kn_ctx *cx, const kn_graph *g, unsigned char *seen) {
    for (int i = 0; i < g->nvalues; i++) {
        const kn_value *v = g->values[i];
        if (!v->producer) seen[v->id] = 1;
    }
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        for (int k = 0; k < n->nin; k++) {
            const kn_value *v = n->in[k];
            if (v && !seen[v->id])
                return kn_diag(cx, n, KN_EINVAL,
                               "input '%s' is not defined before use (cycle or dangling edge)",
                               v->name);
        }
        for (int k = 0; k < n->nattr; k++) {
            const kn_attr *a = &n->attrs[k];
            if (a->kind == KN_ATTR_GRAPH && verify_graph(cx, a->g, seen)) return cx->status;
            for (int j = 0; a->kind == KN_ATTR_GRAPHS && j < a->n; j++)
                if (verify_graph(cx, a->graphs[j], seen)) return cx->status;
        }
        for (int k = 0; k < n->nout; k++) {
            const kn_value *v = n->out[k];
            if (!v) continue;
            if (v->producer != n)
                return kn_diag(cx, n, KN_EINVAL, "output '%s' has another producer", v->name);
            seen[v->id] = 1;
        }
    }
    for (int i = 0; i < g->nout; i++)
        if (!seen[g->outputs[i]->id])
            return kn_diag(cx, NULL, KN_EINVAL, "graph output '%s' is never computed",
                           g->outputs[i]->name);
    return KN_OK;
}

kn_status kn_graph_verify(kn_ctx *cx, const kn_graph *g) {
    unsigned char *seen = calloc((size_t)kn_graph_value_count(g) + 1, 1);
    KN_ASSERT(seen);
    kn_status st = verify_graph(cx, g, seen);
    free(seen);
    return st;
}

/* ---- printer ---- */

static void print_value(FILE *f, const kn_value *v) {
    char buf[256];
    fprintf(f, "%%%s: %s", v->name, kn_type_str(&v->type, buf, sizeof buf));
}

static void print_graph(FILE *f, const kn_graph *g, int indent);

static void print_attr(FILE *f, const kn_attr *a, int indent) {
    fprintf(f, "%s=", a->name);
    switch (a->kind) {
    case KN_ATTR_FLOAT: fprintf(f, "%g", (double)a->f); break;
    case KN_ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
    case KN_ATTR_STRING: fprintf(f, "\"%s\"", a->s); break;
    case KN_ATTR_FLOATS:
        fputc('[', f);
        for (int i = 0; i < a->n; i++) fprintf(f, "%s%g", i ? "," : "", (double)a->floats[i]);
        fputc(']', f);
        break;
    case KN_ATTR_INTS:
        fputc('[', f);
        for (int i = 0; i < a->n; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)a->ints[i]);
        fputc(']', f);
        break;
    case KN_ATTR_STRINGS:
        fputc('[', f);
        for (int i = 0; i < a->n; i++) fprintf(f, "%s\"%s\"", i ? "," : "", a->strings[i]);
        fputc(']', f);
        break;
    case KN_ATTR_TENSOR: {
        char buf[256];
        fprintf(f, "tensor<%s>", kn_type_str(&a->t->type, buf, sizeof buf));
        break;
    }
    case KN_ATTR_GRAPH:
        fprintf(f, "{\n");
        print_graph(f, a->g, indent + 4);
        fprintf(f, "%*s}", indent, "");
        break;
    default: fprintf(f, "<%d>", a->kind); break;
    }
}

static void print_graph(FILE *f, const kn_graph *g, int indent) {
    fprintf(f, "%*sgraph %s(", indent, "", g->name);
    for (int i = 0; i < g->nin; i++) {
        if (i) fprintf(f, ", ");
        print_value(f, g->inputs[i]);
    }
    fprintf(f, ")\n");
    for (int i = 0; i < g->nvalues; i++) {
        const kn_value *v = g->values[i];
        if (!v->constant || (v->flags & KN_VALUE_INPUT)) continue;
        fprintf(f, "%*s  const ", indent, "");
        print_value(f, v);
        fputc('\n', f);
    }
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        fprintf(f, "%*s  ", indent, "");
        for (int k = 0; k < n->nout; k++) {
            if (k) fprintf(f, ", ");
            if (n->out[k])
                print_value(f, n->out[k]);
            else
                fprintf(f, "_");
        }
        fprintf(f, " = %s(", n->op_type);
        for (int k = 0; k < n->nin; k++)
            fprintf(f, "%s%%%s", k ? ", " : "", n->in[k] ? n->in[k]->name : "_");
        fprintf(f, ")");
        if (n->nattr) {
            fprintf(f, " {");
            for (int k = 0; k < n->nattr; k++) {
                if (k) fprintf(f, ", ");
                print_attr(f, &n->attrs[k], indent + 2);
            }
            fprintf(f, "}");
        }
        if (n->name[0]) fprintf(f, "  # %s", n->name);
        fputc('\n', f);
    }
    fprintf(f, "%*s  return ", indent, "");
    for (int i = 0; i < g->nout; i++) fprintf(f, "%s%%%s", i ? ", " : "", g->outputs[i]->name);
    fputc('\n', f);
}

void kn_graph_print(const kn_graph *g, void *file) {
    print_graph(file, g, 0);
}
