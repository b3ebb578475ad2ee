/* Fused epilogues (see epilogue.h): the attribute's text form, the steps' reference
 * semantics for the interpreter, and recognizing an activation node as a step.
 *
 * The reference computes each step in double from the stored value and rounds to the
 * output dtype once at the end, which is what the fused kernels do in f32 (the
 * unfused ops would round after every step; the differences stay far inside the
 * tolerances the tests compare with). An integer contraction's fused float tail
 * (passes/dynq.c) rounds to float32 after every step instead: its bits are the unfused
 * graph's. */
#include "ir/epilogue.h"
#include "ir/ops/nn_attrs.h"
#include "ir/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    kn_epi_op op;
    const char *name;
    int nparams;
    bool operand;
} steps[] = {
    {KN_EPI_RELU, "Relu", 0, false},
    {KN_EPI_CLIP, "Clip", 2, false},
    {KN_EPI_LEAKYRELU, "LeakyRelu", 1, false},
    {KN_EPI_SIGMOID, "Sigmoid", 0, false},
    {KN_EPI_HARDSIGMOID, "HardSigmoid", 2, false},
    {KN_EPI_HARDSWISH, "HardSwish", 0, false},
    {KN_EPI_SILU, "Silu", 0, false},
    {KN_EPI_TANH, "Tanh", 0, false},
    {KN_EPI_GELU, "Gelu", 0, false},
    {KN_EPI_GELU_TANH, "GeluTanh", 0, false},
    {KN_EPI_ADD, "Add", 0, true},
    {KN_EPI_MUL, "Mul", 0, true},
    {KN_EPI_SUB, "Sub", 0, true},
    {KN_EPI_DIV, "Div", 0, true},
    {KN_EPI_RSUB, "RSub", 0, true},
    {KN_EPI_RDIV, "RDiv", 0, true},
    {KN_EPI_NEG, "Neg", 0, false},
    {KN_EPI_ABS, "Abs", 0, false},
    {KN_EPI_EXP, "Exp", 0, false},
    {KN_EPI_LOG, "Log", 0, false},
    {KN_EPI_SQRT, "Sqrt", 0, false},
    {KN_EPI_ERF, "Erf", 0, false},
    {KN_EPI_RECIP, "Reciprocal", 0, false},
    {KN_EPI_POW, "Pow", 1, false},
};

enum { NSTEPS = sizeof steps / sizeof *steps };

void kn_epi_step_str(const kn_epi_step *s, char *buf, size_t cap) {
    for (int i = 0; i < NSTEPS; i++) {
        if (steps[i].op != s->op) continue;
        if (steps[i].operand)
            snprintf(buf, cap, "%s @%d", steps[i].name, s->operand);
        else if (steps[i].nparams == 2)
            snprintf(buf, cap, "%s %.9g %.9g", steps[i].name, s->a, s->b);
        else if (steps[i].nparams == 1)
            snprintf(buf, cap, "%s %.9g", steps[i].name, s->a);
        else
            snprintf(buf, cap, "%s", steps[i].name);
        return;
    }
    snprintf(buf, cap, "?");
}

static bool parse_step(const char *text, int nin, kn_epi_step *s) {
    char name[32];
    int used = 0;
    if (sscanf(text, "%31s%n", name, &used) != 1) return false;
    const char *rest = text + used;
    for (int i = 0; i < NSTEPS; i++) {
        if (strcmp(steps[i].name, name)) continue;
        *s = (kn_epi_step){.op = steps[i].op, .operand = -1};
        int got = 0;
        if (steps[i].operand)
            got = sscanf(rest, " @%d%n", &s->operand, &used) == 1 ? 1 : -1;
        else if (steps[i].nparams == 2)
            got = sscanf(rest, "%lf %lf%n", &s->a, &s->b, &used) == 2 ? 2 : -1;
        else if (steps[i].nparams == 1)
            got = sscanf(rest, "%lf%n", &s->a, &used) == 1 ? 1 : -1;
        else
            used = 0;
        if (got < 0) return false;
        rest += used;
        while (*rest == ' ') rest++;
        if (*rest) return false;
        return !steps[i].operand || (s->operand >= 0 && s->operand < nin);
    }
    return false;
}

kn_status kn_epilogue_of(kn_ctx *cx, const kn_node *n, kn_epilogue *e) {
    e->n = 0;
    const kn_attr *a = kn_node_attr(n, KN_ATTR_EPILOGUE);
    if (!a) return KN_OK;
    if (a->kind != KN_ATTR_STRINGS || a->n > KN_EPI_MAX)
        return kn_diag(cx, n, KN_EINVAL, "attribute %s must list at most %d steps",
                       KN_ATTR_EPILOGUE, KN_EPI_MAX);
    for (int i = 0; i < a->n; i++)
        if (!parse_step(a->strings[i], n->nin, &e->s[e->n++]))
            return kn_diag(cx, n, KN_EINVAL, "attribute %s: bad step '%s'", KN_ATTR_EPILOGUE,
                           a->strings[i]);
    return KN_OK;
}

int kn_node_op_inputs(const kn_node *n) {
    const kn_attr *a = kn_node_attr(n, KN_ATTR_EPILOGUE);
    int first = n->nin;
    for (int i = 0; a && a->kind == KN_ATTR_STRINGS && i < a->n; i++) {
        kn_epi_step s;
        if (parse_step(a->strings[i], n->nin, &s) && s.operand >= 0 && s.operand < first)
            first = s.operand;
    }
    return first;
}

bool kn_epilogue_room(const kn_node *n) {
    const kn_attr *a = kn_node_attr(n, KN_ATTR_EPILOGUE);
    /* a channels-last Conv (passes/layout.c, after fuse and chain) takes no more steps:
     * its epilogue applies to the channels-first result, which no later reader sees */
    return (!a || a->n < KN_EPI_MAX) && !kn_node_attr(n, KN_ATTR_LAYOUT);
}

void kn_epilogue_append(kn_graph *g, kn_node *n, kn_epi_step s, kn_value *x) {
    if (x) {
        /* the operand goes after every input the op may have: a Conv or Gemm without
         * its optional bias gets an absent input there, so the operand is never read
         * as the bias (found by tests/diff: Conv without bias + residual Add) */
        int first = n->nin, max_in = kn_op_desc(n->op)->max_in;
        if (first == kn_node_op_inputs(n) && max_in > first && max_in <= 8 /* not variadic */)
            first = max_in;
        kn_value **in = kn_arena_array(g->arena, (size_t)first + 1, sizeof *in);
        KN_ASSERT(in);
        memcpy(in, n->in, (size_t)n->nin * sizeof *in); /* the rest: absent (NULL) */
        in[first] = x;
        s.operand = first;
        n->in = in;
        n->nin = first + 1;
    }
    char text[96];
    kn_epi_step_str(&s, text, sizeof text);
    kn_attr *at = (kn_attr *)kn_node_attr(n, KN_ATTR_EPILOGUE);
    if (!at) {
        kn_attr *v = kn_arena_array(g->arena, (size_t)n->nattr + 1, sizeof *v);
        KN_ASSERT(v);
        if (n->nattr) memcpy(v, n->attrs, (size_t)n->nattr * sizeof *v);
        at = &v[n->nattr];
        *at = (kn_attr){.name = KN_ATTR_EPILOGUE, .kind = KN_ATTR_STRINGS};
        n->attrs = v;
        n->nattr++;
    }
    const char **strs = kn_arena_array(g->arena, (size_t)at->n + 1, sizeof *strs);
    KN_ASSERT(strs);
    if (at->n) memcpy(strs, at->strings, (size_t)at->n * sizeof *strs);
    strs[at->n] = kn_arena_strdup(g->arena, text);
    at->strings = strs;
    at->n++;
}

/* Constant scalar input k of m as a double, or def if absent; false if not constant. */
static bool const_scalar(const kn_node *m, int k, double def, double *out) {
    *out = def;
    if (k >= m->nin || !m->in[k]) return true;
    const kn_tensor *t = m->in[k]->constant;
    if (!t || kn_tensor_numel(t) != 1) return false;
    *out = kn_load_f64(t->data, t->type.dtype, 0);
    return true;
}

bool kn_epilogue_step_of(kn_ctx *cx, const kn_node *m, kn_epi_step *s) {
    *s = (kn_epi_step){.operand = -1};
    if (m->nin < 1 || m->nout != 1 || !m->in[0] || !kn_dtype_get(m->in[0]->type.dtype)->is_float)
        return false;
    kn_ctx scratch;
    kn_ctx_init(&scratch, cx ? cx->file : NULL);
    switch (m->op) {
    case KN_OP_RELU: s->op = KN_EPI_RELU; return true;
    case KN_OP_SIGMOID: s->op = KN_EPI_SIGMOID; return true;
    case KN_OP_TANH: s->op = KN_EPI_TANH; return true;
    case KN_OP_HARDSWISH: s->op = KN_EPI_HARDSWISH; return true;
    case KN_OP_GELU: {
        const char *form = kn_attr_str(&scratch, m, "approximate", "none");
        s->op = !strcmp(form, "tanh") ? KN_EPI_GELU_TANH : KN_EPI_GELU;
        return !kn_failed(&scratch) && (!strcmp(form, "tanh") || !strcmp(form, "none"));
    }
    case KN_OP_LEAKYRELU:
        s->op = KN_EPI_LEAKYRELU;
        s->a = kn_attr_float(&scratch, m, "alpha", 0.01f);
        return !kn_failed(&scratch);
    case KN_OP_HARDSIGMOID:
        s->op = KN_EPI_HARDSIGMOID;
        s->a = kn_attr_float(&scratch, m, "alpha", 0.2f);
        s->b = kn_attr_float(&scratch, m, "beta", 0.5f);
        return !kn_failed(&scratch);
    case KN_OP_CLIP:
        s->op = KN_EPI_CLIP;
        if (m->opset < 11 || kn_node_attr(m, "min") || kn_node_attr(m, "max")) {
            s->a = kn_attr_float(&scratch, m, "min", -INFINITY);
            s->b = kn_attr_float(&scratch, m, "max", INFINITY);
            return !kn_failed(&scratch) && m->nin == 1;
        }
        return const_scalar(m, 1, -INFINITY, &s->a) && const_scalar(m, 2, INFINITY, &s->b);
    default: return false;
    }
}

static double sigmoid(double v) {
    return 1 / (1 + exp(-v));
}

/* One step on one value; x is the operand's element (Add, Mul). */
static double apply(const kn_epi_step *s, double v, double x) {
    switch (s->op) {
    case KN_EPI_RELU: return v < 0 ? 0 : v; /* NaN stays NaN */
    case KN_EPI_CLIP: return v < s->a ? s->a : v > s->b ? s->b : v;
    case KN_EPI_LEAKYRELU: return v < 0 ? s->a * v : v;
    case KN_EPI_SIGMOID: return sigmoid(v);
    case KN_EPI_HARDSIGMOID: return fmax(0, fmin(1, s->a * v + s->b));
    case KN_EPI_HARDSWISH: return v * fmax(0, fmin(1, v / 6 + 0.5));
    case KN_EPI_SILU: return v * sigmoid(v);
    case KN_EPI_TANH: return tanh(v);
    case KN_EPI_GELU: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case KN_EPI_GELU_TANH: return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case KN_EPI_ADD: return v + x;
    case KN_EPI_MUL: return v * x;
    case KN_EPI_SUB: return v - x;
    case KN_EPI_DIV: return v / x;
    case KN_EPI_RSUB: return x - v;
    case KN_EPI_RDIV: return x / v;
    case KN_EPI_NEG: return -v;
    case KN_EPI_ABS: return fabs(v);
    case KN_EPI_EXP: return exp(v);
    case KN_EPI_LOG: return log(v);
    case KN_EPI_SQRT: return sqrt(v);
    case KN_EPI_ERF: return erf(v);
    case KN_EPI_RECIP: return 1 / v;
    case KN_EPI_POW: return pow(v, s->a);
    }
    return v;
}

kn_status kn_epilogue_eval(kn_ctx *cx, const kn_node *n, const kn_epilogue *e, kn_tensor *y,
                           kn_tensor *const *in) {
    if (!e->n) return KN_OK;
    int rank = y->type.rank;
    int64_t numel = kn_tensor_numel(y), ystr[KN_MAX_RANK];
    kn_strides(rank, y->type.dims, ystr);
    /* per operand: its strides against y's axes (0 where it broadcasts) */
    int64_t ost[KN_EPI_MAX][KN_MAX_RANK];
    for (int k = 0; k < e->n; k++) {
        int op = e->s[k].operand;
        if (op < 0) continue;
        const kn_tensor *x = in[op];
        if (!x || x->type.rank > rank)
            return kn_diag(cx, n, KN_EINVAL, "epilogue operand %d does not broadcast", op);
        int64_t xs[KN_MAX_RANK];
        kn_strides(x->type.rank, x->type.dims, xs);
        for (int d = 0; d < rank; d++) {
            int xd = d - (rank - x->type.rank);
            int64_t ext = xd >= 0 ? x->type.dims[xd] : 1;
            if (ext != 1 && ext != y->type.dims[d])
                return kn_diag(cx, n, KN_EINVAL, "epilogue operand %d does not broadcast", op);
            ost[k][d] = ext == 1 ? 0 : xs[xd];
        }
    }
    /* an integer contraction's fused float tail (passes/dynq.c): every step rounded to
     * float32, as the unfused float32 ops round (+, -, *, / of two float32 values in
     * double, then rounded to float32, is the float32 operation's result) */
    bool f32_steps = y->type.dtype == KN_F32 && in[0] && !kn_dtype_get(in[0]->type.dtype)->is_float;
    for (int64_t i = 0; i < numel; i++) {
        double v = kn_load_f64(y->data, y->type.dtype, (size_t)i);
        for (int k = 0; k < e->n; k++) {
            double x = 0;
            int op = e->s[k].operand;
            if (op >= 0) {
                int64_t off = 0, r = i;
                for (int d = 0; d < rank; d++) {
                    off += (r / ystr[d]) * ost[k][d];
                    r %= ystr[d];
                }
                x = kn_load_f64(in[op]->data, in[op]->type.dtype, (size_t)off);
            }
            v = apply(&e->s[k], v, x);
            if (f32_steps) v = (float)v;
        }
        kn_store_f64(y->data, y->type.dtype, (size_t)i, v);
    }
    return KN_OK;
}
