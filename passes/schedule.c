/* Schedules as data: each kernel's schedule record (kn_sched, ir/kir.h) written to a
 * text file by --dump-schedule and read back by --schedule, so a schedule can be tuned
 * by hand or by a search and reproduced exactly.
 *
 * One line per kernel: its index, the node it was lowered from (name and op, for a
 * check that the file belongs to this model and pipeline), then key=value fields;
 * '#' starts a comment:
 *
 *   kernel 3 'conv_3' Conv tile_rows=6 tile_vecs=2 lanes=8 tasks=16
 *
 * A field absent or 0 leaves the pass to choose. Passes consult the override for a
 * kernel (kn_schedule_for) before choosing themselves and record what they used in the
 * kernel's schedule, so dumping after compiling with --schedule gives back the file's
 * values wherever they applied. */
#include "passes/schedule.h"

#include "ir/kir.h"
#include "targets/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sched_line {
    int kernel;
    char *node; /* "name" (Op), as written */
    kn_sched s;
} sched_line;

struct kn_schedule {
    char *path; /* as given to kn_schedule_read, for messages */
    int n, cap;
    sched_line *v;
};

static const struct {
    const char *key;
    size_t off;
} fields[] = {
    {"tile_rows", offsetof(kn_sched, tile_rows)},
    {"tile_vecs", offsetof(kn_sched, tile_vecs)},
    {"lanes", offsetof(kn_sched, lanes)},
    {"tasks", offsetof(kn_sched, tasks)},
    {"wg", offsetof(kn_sched, wg)},
    {"pad", offsetof(kn_sched, pad)},
    {"dot", offsetof(kn_sched, dot)},
    {"split", offsetof(kn_sched, split)},
    {"wino", offsetof(kn_sched, wino)},
    {"fblock", offsetof(kn_sched, fblock)},
    {"pf", offsetof(kn_sched, pf)},
    {"wchunk", offsetof(kn_sched, wchunk)},
    {"wcob", offsetof(kn_sched, wcob)},
    {"span", offsetof(kn_sched, span)},
    {"mc", offsetof(kn_sched, mc)},
    {"xpf", offsetof(kn_sched, xpf)},
    {"serp", offsetof(kn_sched, serp)},
    {"tblock", offsetof(kn_sched, tblock)},
    {"smrows", offsetof(kn_sched, smrows)},
};
enum { NFIELDS = sizeof fields / sizeof *fields };

int kn_sched_nfields(void) {
    return NFIELDS;
}

const char *kn_sched_key(int i) {
    return fields[i].key;
}

int kn_sched_get(const kn_sched *s, int i) {
    return *(const int *)((const char *)s + fields[i].off);
}

void kn_sched_set(kn_sched *s, int i, int v) {
    *(int *)((char *)s + fields[i].off) = v;
}

void kn_sched_print(FILE *f, const kn_sched *s) {
    for (int i = 0; i < NFIELDS; i++)
        if (kn_sched_get(s, i)) fprintf(f, " %s=%d", fields[i].key, kn_sched_get(s, i));
}

/* "'name' Op" of kernel k, as the file writes it. */
static void node_label(const kn_kernel *k, char *buf, size_t cap) {
    if (k->node)
        snprintf(buf, cap, "'%s' %s", k->node->name, k->node->op_type);
    else
        snprintf(buf, cap, "'' -");
}

/* With KILN_XCORE set (to a thread count, 2 if it is not one of 2 or more): the
 * cross-core bytes of each kernel (kn_xcore_bytes), as comment lines after the
 * schedules: a load-independent figure of what the splits make the cores exchange.
 * Kernels with none are left out. Off by default: it runs the model abstractly, which
 * takes seconds on the larger benchmark models (30 s on ResNet-50). */
static void write_xcore(FILE *f, const kn_kprog *p, int threads) {
    double *rd = malloc(((size_t)p->nkernels + 1) * sizeof *rd);
    double *wr = malloc(((size_t)p->nkernels + 1) * sizeof *wr);
    KN_ASSERT(rd && wr);
    double total = kn_xcore_bytes(p, threads, rd, wr), wtotal = 0;
    for (int k = 0; k < p->nkernels; k++) wtotal += wr[k];
    fprintf(f,
            "# cross-core bytes at %d threads (read: lines a thread loads that another wrote; "
            "write: lines it stores that another holds): read %.0f write %.0f\n",
            threads, total, wtotal);
    for (int k = 0; k < p->nkernels; k++) {
        if (!rd[k] && !wr[k]) continue;
        char label[600];
        node_label(p->kernels[k], label, sizeof label);
        fprintf(f, "#   kernel %d %s in %d: read %.0f write %.0f\n", k, label,
                p->kernels[k]->sched.tasks, rd[k], wr[k]);
    }
    free(rd);
    free(wr);
}

kn_status kn_schedule_write(kn_ctx *cx, const kn_kprog *p, const char *path) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    fprintf(f, "# kiln schedule of '%s' for target %s: kernel INDEX 'NODE' OP field=value...\n",
            p->name, p->target ? p->target->name : "generic");
    for (int k = 0; k < p->nkernels; k++) {
        char label[600];
        node_label(p->kernels[k], label, sizeof label);
        fprintf(f, "kernel %d %s", k, label);
        kn_sched_print(f, &p->kernels[k]->sched);
        fputc('\n', f);
    }
    const char *xc = getenv("KILN_XCORE"); /* a run of the model: seconds on big ones */
    if (xc && *xc) write_xcore(f, p, atoi(xc) >= 2 ? atoi(xc) : 2);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    }
    return KN_OK;
}

void kn_schedule_destroy(kn_schedule *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) free(s->v[i].node);
    free(s->v);
    free(s->path);
    free(s);
}

/* Parses one non-comment line into L; false with a reason in why. */
static bool parse_line(char *line, sched_line *L, char *why, size_t cap) {
    memset(L, 0, sizeof *L);
    int used = 0;
    if (sscanf(line, "kernel %d %n", &L->kernel, &used) != 1 || L->kernel < 0) {
        snprintf(why, cap, "expected 'kernel INDEX 'NODE' OP field=value...'");
        return false;
    }
    char *p = line + used;
    if (*p != '\'') {
        snprintf(why, cap, "expected the node's name in quotes after the kernel index");
        return false;
    }
    char *q = strchr(p + 1, '\'');
    if (!q) {
        snprintf(why, cap, "unterminated node name");
        return false;
    }
    char *op = q + 1;
    while (*op == ' ') op++;
    char *end = op + strcspn(op, " \t\n");
    size_t len = (size_t)(end - p);
    L->node = malloc(len + 1);
    KN_ASSERT(L->node);
    memcpy(L->node, p, len);
    L->node[len] = 0;
    for (char *tok = strtok(end, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
        char *eq = strchr(tok, '=');
        bool known = false;
        for (int i = 0; eq && i < NFIELDS; i++) {
            if (strlen(fields[i].key) != (size_t)(eq - tok) ||
                strncmp(tok, fields[i].key, (size_t)(eq - tok)))
                continue;
            char *e;
            long v = strtol(eq + 1, &e, 10);
            if (*e || v < 0 || v > 1 << 20) {
                snprintf(why, cap, "bad value in '%s'", tok);
                return false;
            }
            *(int *)((char *)&L->s + fields[i].off) = (int)v;
            known = true;
        }
        if (!known) {
            int at = snprintf(why, cap, "unknown field '%s' (fields:", tok);
            for (int i = 0; i < NFIELDS && at >= 0 && (size_t)at < cap; i++)
                at += snprintf(why + at, cap - (size_t)at, "%s %s", i ? "," : "", fields[i].key);
            if (at >= 0 && (size_t)at < cap) snprintf(why + at, cap - (size_t)at, ")");
            return false;
        }
    }
    return true;
}

kn_status kn_schedule_read(kn_ctx *cx, const char *path, kn_schedule **out) {
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot open schedule '%s'", path);
    kn_schedule *s = calloc(1, sizeof *s);
    KN_ASSERT(s);
    s->path = malloc(strlen(path) + 1);
    KN_ASSERT(s->path);
    memcpy(s->path, path, strlen(path) + 1);
    char line[2048], why[200];
    int lineno = 0;
    kn_status st = KN_OK;
    while (!st && fgets(line, sizeof line, f)) {
        lineno++;
        char *c = line + strspn(line, " \t");
        if (*c == '#' || *c == '\n' || !*c) continue;
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
            KN_ASSERT(s->v);
        }
        if (!parse_line(c, &s->v[s->n], why, sizeof why)) {
            free(s->v[s->n].node);
            st = kn_diag(cx, NULL, KN_EINVAL, "schedule '%s' line %d: %s", path, lineno, why);
        } else {
            s->n++;
        }
    }
    fclose(f);
    if (st) {
        kn_schedule_destroy(s);
        return st;
    }
    *out = s;
    return KN_OK;
}

kn_status kn_schedule_check(kn_ctx *cx, const kn_schedule *s, const kn_kprog *p) {
    for (int i = 0; s && i < s->n; i++) {
        const sched_line *L = &s->v[i];
        char label[600];
        if (L->kernel >= p->nkernels)
            return kn_diag(cx, NULL, KN_EINVAL,
                           "the schedule names kernel %d, but this model compiles to %d kernels "
                           "(was it written for another model or pipeline?)",
                           L->kernel, p->nkernels);
        node_label(p->kernels[L->kernel], label, sizeof label);
        if (strcmp(label, L->node))
            return kn_diag(cx, NULL, KN_EINVAL,
                           "the schedule's kernel %d is %s, but this model's kernel %d is %s "
                           "(was it written for another model or pipeline?)",
                           L->kernel, L->node, L->kernel, label);
    }
    return KN_OK;
}

kn_status kn_schedule_check_taken(kn_ctx *cx, const kn_schedule *s, const kn_kprog *p) {
    for (int i = 0; s && i < s->n; i++) {
        const sched_line *L = &s->v[i];
        if (!L->s.lanes || L->kernel >= p->nkernels) continue;
        const kn_kernel *k = p->kernels[L->kernel];
        int used = k->sched.lanes;
        if (used == L->s.lanes) continue;
        /* named by its node, as the passes' refusals are (kiln tune drops that kernel's
         * candidate only, docs/tuning.md) */
        if (!used)
            return kn_diag(cx, k->node, KN_EINVAL,
                           "schedule '%s': kernel %d: lanes=%d not taken: with this schedule the "
                           "kernel has no vector tiles",
                           s->path, L->kernel, L->s.lanes);
        return kn_diag(cx, k->node, KN_EINVAL,
                       "schedule '%s': kernel %d: lanes=%d not taken: its tiles have vectors of "
                       "%d lanes (a schedule may narrow a float tile's vectors, not widen them "
                       "past the target's or make them scalar)",
                       s->path, L->kernel, L->s.lanes, used);
    }
    return KN_OK;
}

const char *kn_schedule_path(const kn_schedule *s) {
    return s ? s->path : "";
}

const kn_sched *kn_schedule_for(const kn_kprog *p, int k) {
    const kn_schedule *s = p->schedule;
    for (int i = 0; s && i < s->n; i++)
        if (s->v[i].kernel == k) return &s->v[i].s;
    return NULL;
}
