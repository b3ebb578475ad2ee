/* Pictures for kiln inspect (see picture.h): the graph as Graphviz dot, SVG through
 * Graphviz's `dot` program (run as a child process, never linked), and the memory plan
 * as SVG written directly (rectangles on a kernel x byte grid need no layout engine).
 * The profile file of kiln bench --profile-file is read here too: one JSON object per
 * line inside "kernels", so a line-oriented reader that knows its keys suffices. */
#include "tools/picture.h"
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- profile files ---- */

/* The JSON string value of "key" in line, unescaped into buf; false if absent. */
static bool json_string(const char *line, const char *key, char *buf, size_t cap) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *s = strstr(line, pat);
    if (!s) return false;
    s += strlen(pat);
    size_t n = 0;
    for (; *s && *s != '"'; s++) {
        if (*s == '\\' && s[1]) s++;
        if (n + 1 < cap) buf[n++] = *s;
    }
    buf[n] = 0;
    return *s == '"';
}

static bool json_number(const char *line, const char *key, double *out) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *s = strstr(line, pat);
    if (!s) return false;
    char *end;
    *out = strtod(s + strlen(pat), &end);
    return end != s + strlen(pat);
}

kn_status pic_profile_read(kn_ctx *cx, const char *path, pic_profile *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot open profile '%s': %s", path, strerror(errno));
    char line[4096];
    int cap = 0;
    bool header = false;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "\"kiln_profile\": 1")) header = true;
        double ms, share;
        if (!strstr(line, "\"kernel\": ") || !json_number(line, "ms", &ms) ||
            !json_number(line, "share", &share))
            continue;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 64;
            void *k = realloc(out->k, (size_t)cap * sizeof *out->k);
            KN_ASSERT(k);
            out->k = k;
        }
        json_string(line, "node", out->k[out->n].node, sizeof out->k[out->n].node);
        json_string(line, "op", out->k[out->n].op, sizeof out->k[out->n].op);
        out->k[out->n].ms = ms;
        out->k[out->n].share = share;
        out->total_ms += ms;
        out->n++;
    }
    fclose(f);
    if (!header || !out->n) {
        pic_profile_free(out);
        return kn_diag(cx, NULL, KN_EINVAL,
                       "'%s' is not a kiln profile (write one with kiln bench --profile-file)",
                       path);
    }
    return KN_OK;
}

void pic_profile_free(pic_profile *p) {
    free(p->k);
    memset(p, 0, sizeof *p);
}

/* ---- the graph in dot ---- */

/* A dot string: quotes and backslashes escaped; "\n" in s stays a line break. */
/* The steps of n's fused epilogue joined by ", " (ir/epilogue.h), an operand step
 * written as what it does ("Add (residual)" for "Add @3"); false if none. */
static bool epilogue_label(const kn_node *n, char *buf, size_t cap) {
    const kn_attr *a = kn_node_attr(n, KN_ATTR_EPILOGUE);
    if (!a || a->kind != KN_ATTR_STRINGS || !a->n) return false;
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < a->n && at < cap; i++) {
        const char *s = a->strings[i], *op = strchr(s, '@');
        if (op)
            at += (size_t)snprintf(buf + at, cap - at, "%s%.*s (%s)", i ? ", " : "",
                                   (int)(op - s - (op > s && op[-1] == ' ')), s,
                                   !strncmp(s, "Add", 3) ? "residual" : "scale");
        else
            at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", s);
    }
    return true;
}

/* What input k of n does in its fused epilogue: "residual" (Add @k), "scale" (Mul @k). */
static const char *operand_role(const kn_node *n, int k) {
    const kn_attr *a = kn_node_attr(n, KN_ATTR_EPILOGUE);
    for (int i = 0; a && a->kind == KN_ATTR_STRINGS && i < a->n; i++) {
        const char *at = strchr(a->strings[i], '@');
        if (at && atoi(at + 1) == k)
            return !strncmp(a->strings[i], "Add", 3) ? "residual" : "scale";
    }
    return "epilogue operand";
}

static void dot_str(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || (*s == '\\' && s[1] != 'n'))
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
}

static void flops_str(int64_t flops, char *buf, size_t cap) {
    if (flops >= 1000000000)
        snprintf(buf, cap, "%.2f GFLOP", (double)flops * 1e-9);
    else if (flops >= 1000000)
        snprintf(buf, cap, "%.2f MFLOP", (double)flops * 1e-6);
    else if (flops >= 1000)
        snprintf(buf, cap, "%.1f kFLOP", (double)flops * 1e-3);
    else
        snprintf(buf, cap, "%lld FLOP", (long long)flops);
}

/* The scale and zero point of a quantized value: the output of QuantizeLinear,
 * DynamicQuantizeLinear (computed at run time), QLinearConv or QLinearMatMul, or the
 * input of DequantizeLinear, QLinearConv or QLinearMatMul (input 0: x's scale and zero
 * point follow it); ConvInteger and MatMulInteger give their input 0 a zero point
 * only (*scale NULL). */
static bool quant_params(const kn_graph *g, const kn_value *v, const kn_value **scale,
                         const kn_value **zp) {
    const kn_node *p = v->producer;
    *scale = *zp = NULL;
    if (p && p->op == KN_OP_QUANTIZELINEAR) {
        *scale = p->in[1], *zp = p->nin > 2 ? p->in[2] : NULL;
        return true;
    }
    if (p && p->op == KN_OP_DYNAMICQUANTIZELINEAR && p->out[0] == v && p->nout == 3) {
        *scale = p->out[1], *zp = p->out[2];
        return true;
    }
    if (p && (p->op == KN_OP_QLINEARCONV || p->op == KN_OP_QLINEARMATMUL)) {
        *scale = p->in[6], *zp = p->in[7];
        return true;
    }
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        if (n->nin < 2 || n->in[0] != v) continue;
        if (n->op == KN_OP_DEQUANTIZELINEAR || n->op == KN_OP_QLINEARCONV ||
            n->op == KN_OP_QLINEARMATMUL) {
            *scale = n->in[1], *zp = n->nin > 2 ? n->in[2] : NULL;
            return true;
        }
        if ((n->op == KN_OP_CONVINTEGER || n->op == KN_OP_MATMULINTEGER) && n->nin > 2 &&
            n->in[2]) {
            *zp = n->in[2];
            return true;
        }
    }
    return false;
}

/* "0.0235" for a constant scalar, "per-channel[64]" for a constant vector, else the
 * name of the value that carries it at run time. */
static void param_str(const kn_value *v, char *buf, size_t cap) {
    if (!v) {
        snprintf(buf, cap, "0");
    } else if (!v->constant || !v->constant->data) {
        snprintf(buf, cap, "'%s'", v->name);
    } else if (kn_tensor_numel(v->constant) == 1) {
        snprintf(buf, cap, "%g", kn_load_f64(v->constant->data, v->constant->type.dtype, 0));
    } else {
        snprintf(buf, cap, "per-channel[%lld]", (long long)kn_tensor_numel(v->constant));
    }
}

/* The edge label of a value: its type, and scale/zero point when quantized. */
static void value_label(FILE *f, const kn_graph *g, const kn_value *v) {
    char buf[160];
    dot_str(f, kn_type_str(&v->type, buf, sizeof buf));
    const kn_value *scale, *zp;
    if (quant_params(g, v, &scale, &zp)) {
        char s[64], z[64];
        param_str(scale, s, sizeof s);
        param_str(zp, z, sizeof z);
        if (scale)
            fprintf(f, "\\nscale %s, zero %s", s, z);
        else
            fprintf(f, "\\nzero %s", z);
    }
}

/* The profile entry of node n (by name, then by op when names are empty), or NULL. */
static int profile_entry(const pic_profile *prof, const kn_node *n) {
    if (!prof || !n->name[0]) return -1;
    for (int i = 0; i < prof->n; i++)
        if (!strcmp(prof->k[i].node, n->name)) return i;
    return -1;
}

void pic_graph_dot(FILE *f, const kn_graph *g, const pic_profile *prof) {
    int64_t total = 0;
    for (int i = 0; i < g->nnodes; i++) total += kn_node_flops(g->nodes[i]);
    double maxshare = 0;
    for (int i = 0; prof && i < prof->n; i++)
        if (prof->k[i].share > maxshare) maxshare = prof->k[i].share;
    char fl[64];
    flops_str(total, fl, sizeof fl);
    fprintf(f, "digraph kiln {\n  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, "
               "labelloc=t, label=\"");
    dot_str(f, g->name ? g->name : "graph");
    fprintf(f, ": %d nodes, %s per run%s\"];\n", g->nnodes, fl,
            prof ? ", shaded by share of kernel time" : "");
    fprintf(f, "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", "
               "fontname=\"Helvetica\", fontsize=10];\n"
               "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n");
    for (int i = 0; i < g->nin; i++) {
        fprintf(f, "  v%d [shape=ellipse, fillcolor=\"#dde8f5\", label=\"", g->inputs[i]->id);
        dot_str(f, g->inputs[i]->name);
        fprintf(f, "\\n");
        value_label(f, g, g->inputs[i]);
        fprintf(f, "\"];\n");
    }
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        char epi[256];
        bool fused = epilogue_label(n, epi, sizeof epi);
        if (fused)
            fprintf(f,
                    "  subgraph cluster_n%d {\n    label=\"fused\"; style=\"rounded,dashed\"; "
                    "color=\"#b07000\"; fontsize=9;\n  ",
                    n->id);
        fprintf(f, "  n%d [label=\"", n->id);
        dot_str(f, n->op_type);
        if (n->name[0]) {
            fprintf(f, "\\n");
            dot_str(f, n->name);
        }
        /* integer contractions: the weights with their own scale and zero point */
        bool qlinear = n->op == KN_OP_QLINEARCONV || n->op == KN_OP_QLINEARMATMUL;
        bool integer = n->op == KN_OP_CONVINTEGER || n->op == KN_OP_MATMULINTEGER;
        int wi = qlinear ? 3 : 1;
        if ((qlinear || integer) && n->nin > wi && n->in[wi]) {
            char t[128], s[64], z[64];
            fprintf(f, "\\nweights ");
            dot_str(f, kn_type_str(&n->in[wi]->type, t, sizeof t));
            param_str(qlinear ? n->in[4] : NULL, s, sizeof s);
            param_str(qlinear ? n->in[5] : n->nin > 3 ? n->in[3] : NULL, z, sizeof z);
            if (qlinear)
                fprintf(f, "\\nscale %s, zero %s", s, z);
            else
                fprintf(f, ", zero %s", z);
        }
        int w = 0; /* weights: the first two constant inputs */
        for (int k = 0; k < n->nin && !qlinear && !integer; k++) {
            if (!n->in[k] || !n->in[k]->constant || n->in[k]->type.kind != KN_KIND_TENSOR) continue;
            char t[128];
            if (w < 2) {
                fprintf(f, "%s", w ? ", " : "\\nconst ");
                dot_str(f, kn_type_str(&n->in[k]->type, t, sizeof t));
            } else if (w == 2) {
                fprintf(f, ", ...");
            }
            w++;
        }
        int64_t nf = kn_node_flops(n);
        if (nf) {
            flops_str(nf, fl, sizeof fl);
            fprintf(f, "\\n%s", fl);
        }
        int pe = profile_entry(prof, n);
        const char *fill = "#ffffff";
        char color[16];
        if (pe >= 0) {
            double s = prof->k[pe].share, t = maxshare > 0 ? s / maxshare : 0;
            fprintf(f, "\\n%.1f%% of time, %.3g ms", 100 * s, prof->k[pe].ms);
            if (nf && prof->k[pe].ms > 0)
                fprintf(f, ", %.2f GFLOP/s", (double)nf / (prof->k[pe].ms * 1e6));
            snprintf(color, sizeof color, "#%02x%02x%02x", 255 - (int)(10 * t),
                     255 - (int)(125 * t), 255 - (int)(200 * t));
            fill = color;
        }
        fprintf(f, "\", fillcolor=\"%s\"];\n", fill);
        if (fused) {
            fprintf(f, "    n%d_act [label=\"", n->id);
            dot_str(f, epi);
            fprintf(f, " (fused)\", fillcolor=\"%s\"];\n", fill);
            fprintf(f, "    n%d -> n%d_act [style=dashed, arrowhead=none];\n  }\n", n->id, n->id);
        }
    }
    /* edges: from the producer (its fused activation), or the graph input; an
     * epilogue operand (a residual Add fused into a Conv) goes to the fused steps it
     * feeds, drawn bold */
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        bool fused = kn_node_attr(n, KN_ATTR_EPILOGUE) != NULL;
        int own = fused ? kn_node_op_inputs(n) : n->nin;
        for (int k = 0; k < n->nin; k++) {
            const kn_value *v = n->in[k];
            if (!v || v->constant) continue;
            const char *to = k >= own ? "_act" : "";
            if (v->producer)
                fprintf(f, "  n%d%s -> n%d%s [label=\"", v->producer->id,
                        kn_node_attr(v->producer, KN_ATTR_EPILOGUE) ? "_act" : "", n->id, to);
            else
                fprintf(f, "  v%d -> n%d%s [label=\"", v->id, n->id, to);
            if (k >= own) fprintf(f, "%s%s", operand_role(n, k), v->producer ? "\\n" : "");
            if (v->producer) value_label(f, g, v);
            fprintf(f, "\"%s];\n", k >= own ? ", style=bold, color=\"#b07000\"" : "");
        }
    }
    for (int i = 0; i < g->nout; i++) {
        const kn_value *v = g->outputs[i];
        fprintf(f, "  o%d [shape=ellipse, fillcolor=\"#e3f1df\", label=\"", i);
        dot_str(f, v->name);
        fprintf(f, "\"];\n");
        if (v->producer) {
            fprintf(f, "  n%d%s -> o%d [label=\"", v->producer->id,
                    kn_node_attr(v->producer, KN_ATTR_EPILOGUE) ? "_act" : "", i);
            value_label(f, g, v);
            fprintf(f, "\"];\n");
        } else if (!v->constant) {
            fprintf(f, "  v%d -> o%d;\n", v->id, i);
        }
    }
    fprintf(f, "}\n");
}

kn_status pic_write_file(kn_ctx *cx, const char *path, const char *text, size_t len) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *o = fopen(tmp, "wb");
    bool ok = o && fwrite(text, 1, len, o) == len;
    if (o && fclose(o) != 0) ok = false;
    if (ok && rename(tmp, path) == 0) return KN_OK;
    remove(tmp);
    return kn_diag(cx, NULL, KN_EIO, "cannot write '%s': %s", path, strerror(errno));
}

kn_status pic_dot_to_svg(kn_ctx *cx, const char *dot_text, size_t len, const char *path) {
    char tmp[4200], src[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    snprintf(src, sizeof src, "%s.dot.tmp%ld", path, (long)getpid());
    if (pic_write_file(cx, src, dot_text, len)) return cx->status;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "w", stdout);
        (void)null;
        execlp("dot", "dot", "-Tsvg", "-o", tmp, src, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    bool ran = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status);
    remove(src);
    if (ran && WEXITSTATUS(status) == 127) {
        remove(tmp);
        return kn_diag(cx, NULL, KN_EUNSUPPORTED,
                       "--svg needs Graphviz's 'dot' program, which is not installed "
                       "(apt-get install graphviz); --dot FILE writes the graph for it");
    }
    if (!ran || WEXITSTATUS(status) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return kn_diag(cx, NULL, KN_EINTERNAL, "Graphviz's dot failed to write '%s'", path);
    }
    return KN_OK;
}

/* ---- the memory plan ---- */

static size_t bytes_of(const kn_kbuf *b) {
    return (size_t)b->numel * kn_dtype_get(b->dtype)->size;
}

static void xml_str(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
}

static void bytes_str(size_t n, char *buf, size_t cap) {
    if (n >= (size_t)10 << 20)
        snprintf(buf, cap, "%.1f MiB", (double)n / (1 << 20));
    else if (n >= (size_t)10 << 10)
        snprintf(buf, cap, "%.1f KiB", (double)n / (1 << 10));
    else
        snprintf(buf, cap, "%zu B", n);
}

/* A fill color per buffer: hues spread by the golden angle, pale enough for text. */
static void buf_color(int i, char *buf, size_t cap) {
    double h = (double)((i * 137) % 360) / 60.0, s = 0.45, v = 0.92;
    int hi = (int)h % 6;
    double fr = h - (int)h, p = v * (1 - s), q = v * (1 - s * fr), t = v * (1 - s * (1 - fr));
    double r = hi == 0 ? v : hi == 1 ? q : hi == 2 ? p : hi == 3 ? p : hi == 4 ? t : v;
    double g = hi == 0 ? t : hi == 1 ? v : hi == 2 ? v : hi == 3 ? q : hi == 4 ? p : p;
    double b = hi == 0 ? p : hi == 1 ? p : hi == 2 ? t : hi == 3 ? v : hi == 4 ? v : q;
    snprintf(buf, cap, "#%02x%02x%02x", (int)(r * 255), (int)(g * 255), (int)(b * 255));
}

void pic_memory_svg(FILE *f, const kn_kprog *p, const char *model) {
    const int left = 120, top = 70, map_h = 360, axis_h = 80, live_h = 110, gap = 40;
    int nk = p->nkernels > 0 ? p->nkernels : 1;
    double col = nk <= 8 ? 70 : nk <= 300 ? 560.0 / nk < 2.4 ? 2.4 : 560.0 / nk : 2.4;
    int plot_w = (int)(col * nk + 0.5), width = left + (plot_w > 560 ? plot_w : 560) + 40;
    int regions = 1; /* one region, the arena, until the plan has more */
    int region_h = map_h + axis_h + live_h + gap + 50;
    int height = top + regions * region_h + 10;
    size_t arena = p->arena_size ? p->arena_size : 1;
    double yscale = (double)map_h / (double)arena, lscale = (double)live_h / (double)arena;
    size_t *live = calloc((size_t)nk, sizeof *live);
    KN_ASSERT(live);
    size_t peak = 0;
    for (int k = 0; k < nk; k++) { /* bytes live at kernel k, each storage counted once */
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if ((b->kind == KB_TEMP || b->kind == KB_SCRATCH) && !b->alias && b->first >= 0 &&
                b->first <= k && k <= b->last)
                live[k] += (bytes_of(b) + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
        }
        if (live[k] > peak) peak = live[k];
    }
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    char a[32], lb[32];
    bytes_str(p->arena_size, a, sizeof a);
    bytes_str(p->arena_lower_bound, lb, sizeof lb);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
            "font-size=\"11\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            width, height, width, height);
    fprintf(f, "<text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">");
    xml_str(f, base);
    fprintf(f,
            ": memory plan</text>\n<text x=\"10\" y=\"40\">arena %s (%zu bytes), lower bound "
            "%s (%zu bytes), ratio %.3f, %d kernels</text>\n",
            a, p->arena_size, lb, p->arena_lower_bound,
            p->arena_lower_bound ? (double)p->arena_size / (double)p->arena_lower_bound : 1.0,
            p->nkernels);
    for (int r = 0; r < regions; r++) {
        int y0 = top + r * region_h;
        fprintf(f,
                "<g id=\"region-arena\">\n<text x=\"10\" y=\"%d\" font-weight=\"bold\">region "
                "'arena': which buffer holds which bytes, from the kernel that writes it to "
                "its last reader</text>\n",
                y0 - 8);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" "
                "stroke=\"#999999\"/>\n",
                left, y0, plot_w, map_h);
        for (int t = 0; t <= 4; t++) { /* y axis: offsets, 0 at the top like addresses */
            size_t v = arena * (size_t)t / 4;
            char s[32];
            bytes_str(v, s, sizeof s);
            double y = y0 + (double)v * yscale;
            fprintf(f,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999999\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    left - 4, y, left, y, left - 6, y + 4, s);
        }
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if ((b->kind != KB_TEMP && b->kind != KB_SCRATCH) || b->first < 0) continue;
            double x = left + col * b->first, w = col * (b->last - b->first + 1);
            double y = y0 + (double)kn_kbuf_arena_offset(b) * yscale,
                   h = (double)bytes_of(b) * yscale;
            if (h < 1) h = 1;
            char c[16], sz[32];
            buf_color(i, c, sizeof c);
            bytes_str(bytes_of(b), sz, sizeof sz);
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                    "stroke=\"#333333\" stroke-width=\"0.5\"%s><title>",
                    x, y, w, h, c, b->alias ? " fill-opacity=\"0.6\"" : "");
            xml_str(f, b->name);
            fprintf(f, " (");
            xml_str(f, b->onnx ? b->onnx : b->kind == KB_SCRATCH ? "kernel scratch" : "temporary");
            fprintf(f, "): %s at offset %zu, kernels %d..%d%s%s</title></rect>\n", sz,
                    kn_kbuf_arena_offset(b), b->first, b->last, b->alias ? ", in place of " : "",
                    b->alias ? b->alias->name : "");
            if (h >= 12 && w >= 30) {
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">", x + 2, y + 10);
                xml_str(f, b->name);
                fprintf(f, "</text>\n");
            }
        }
        int every = nk <= 50 ? 1 : nk / 50 + 1; /* x axis: kernels with their ops */
        for (int k = 0; k < p->nkernels; k += every) {
            const kn_node *n = p->kernels[k]->node;
            fprintf(f, "<text transform=\"translate(%.1f,%d) rotate(60)\" font-size=\"9\">%d ",
                    left + col * (k + 0.5) - 3, y0 + map_h + 6, k);
            xml_str(f, n ? n->op_type : "");
            fprintf(f, "</text>\n");
        }
        /* below: the bytes live at each kernel against the lower bound and the arena */
        int ly = y0 + map_h + axis_h + gap, lbase = ly + live_h;
        fprintf(f,
                "<text x=\"10\" y=\"%d\" font-weight=\"bold\">bytes live at each kernel "
                "(peak %s): the lower bound is the highest bar</text>\n",
                ly - 10, lb);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" "
                "stroke=\"#999999\"/>\n",
                left, ly, plot_w, live_h);
        for (int k = 0; k < nk; k++) {
            double h = (double)live[k] * lscale;
            char sz[32];
            bytes_str(live[k], sz, sizeof sz);
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"#e59866\"><title>kernel %d: %s live</title></rect>\n",
                    left + col * k + col * 0.1, lbase - h, col * 0.8, h, k, sz);
        }
        double yl = lbase - (double)p->arena_lower_bound * lscale,
               ya = lbase - (double)arena * lscale;
        bool same = p->arena_size == p->arena_lower_bound;
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c0392b\" "
                "stroke-dasharray=\"6,3\"/>\n",
                left, yl, left + plot_w, yl);
        if (!same)
            fprintf(f,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333333\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">arena %s</text>\n",
                    left, ya, left + plot_w, ya, left - 6, ya + 4, a);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#c0392b\">%s%s</text>\n",
                left + plot_w - 2, yl - 3, same ? "arena = lower bound " : "lower bound ", lb);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n</g>\n", left - 6, lbase);
        (void)peak;
    }
    fprintf(f, "</svg>\n");
    free(live);
}
