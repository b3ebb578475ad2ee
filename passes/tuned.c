/* Pass 'tuned': the tuning table, tile choices measured on a machine and shipped as data.
 * requires: kir; breaks: nothing (it only records, per kernel, what pass 'tile' reads).
 *
 * As TVM's tophub logs: an entry names a target's CPU and a kernel's workload, and gives
 * the schedule fields (kn_sched, passes/schedule.c) that measured fastest for it there.
 * Any model with a kernel of that workload, compiled for that CPU, gets them: not only the
 * model that was tuned. One entry a line, '#' a comment:
 *
 *   znver4 conv f32 x=1x144x28x28 y=40x28x28 k=1x1 s=1x1 d=1x1 p=0,0,0,0 g=1 nchw : tile_rows=4
 * tile_vecs=5 lanes=8
 *
 * The CPU is the LLVM CPU name of the target (kn_target_cpu_name: x86-64-zen4's "znver4", and
 * for native what LLVM reports for this machine), so native and the named target find the
 * same entries. The workload key (kn_tuned_key) is what the tile pass's choice depends on:
 * for a convolution (conv, or conv1d over one spatial axis) its dtype, input and output shapes,
 * kernel size, strides, dilations, pads, groups and layout (nchw, or the element strides of x and
 * y); for a matrix product M, K, N, the batch, the transposes and whether B is a constant. It
 * leaves out the fused epilogue: a projection with a residual Add and one without share an entry
 * (they run the same tile). The fields after ':' are those kn_tuned_field allows, as a schedule
 * file writes them.
 *
 * Where: the table shipped with kiln is passes/tuned.txt, compiled in as text (CMake
 * turns it into a C string, passes/tuned_text.cmake); a user's own file comes with
 * --tuning FILE (kiln tune --table-out writes one) and is searched first. Precedence for a
 * kernel: a --schedule file's line > the user's table > the shipped table > the passes'
 * own rules. The pass runs just before 'tile', keys every contraction no earlier pass has
 * tiled (kn_kernel.workload, which kiln tune --table-out writes back) and, where an entry
 * matches and the kernel can take its values (takes() below; otherwise the entry is
 * ignored, as if absent), points kn_kernel.tuned at them; the tile pass reads them as it
 * reads a schedule file's line. Leaving 'tuned' out of --passes switches the table off. */
#include "passes/tuned.h"

#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>
#include <threads.h>

typedef struct tuned_entry {
    char *cpu, *key;
    kn_sched s;
} tuned_entry;

struct kn_tuned {
    int n, cap;
    tuned_entry *v;
};

/* The shipped table's text (generated from passes/tuned.txt). */
extern const char kn_tuned_text[];

static const char *const table_fields[] = {"tile_rows", "tile_vecs", "lanes", "pad", "pf",
                                           "xpf",       "serp",      "mc",    "span"};

bool kn_tuned_field(int i) {
    for (size_t j = 0; j < sizeof table_fields / sizeof *table_fields; j++)
        if (!strcmp(kn_sched_key(i), table_fields[j])) return true;
    return false;
}

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    KN_ASSERT(d);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void kn_tuned_destroy(kn_tuned *t) {
    if (!t) return;
    for (int i = 0; i < t->n; i++) {
        free(t->v[i].cpu);
        free(t->v[i].key);
    }
    free(t->v);
    free(t);
}

int kn_tuned_count(const kn_tuned *t) {
    return t ? t->n : 0;
}

/* Copies s[0..n) to out with runs of blanks as one space, none at either end. */
static void squeeze(const char *s, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        bool blank = s[i] == ' ' || s[i] == '\t';
        if (blank && (o == 0 || out[o - 1] == ' ')) continue;
        out[o++] = blank ? ' ' : s[i];
    }
    while (o && out[o - 1] == ' ') o--;
    out[o] = 0;
}

/* Parses one entry line (no comment, no newline) into E; false with a reason in why. */
static bool parse_entry(const char *line, tuned_entry *E, char *why, size_t cap) {
    memset(E, 0, sizeof *E);
    const char *colon = strstr(line, " : ");
    if (!colon) {
        snprintf(why, cap, "expected 'CPU KIND DTYPE ... : field=value...'");
        return false;
    }
    char head[KN_TUNED_KEY_CAP + 64];
    if ((size_t)(colon - line) >= sizeof head) {
        snprintf(why, cap, "the CPU and workload take over %d characters", (int)sizeof head - 1);
        return false;
    }
    squeeze(line, (size_t)(colon - line), head, sizeof head);
    const char *sp = strchr(head, ' ');
    if (!sp) {
        snprintf(why, cap, "expected a CPU name and a workload before ':'");
        return false;
    }
    char fields[1024];
    squeeze(colon + 3, strlen(colon + 3), fields, sizeof fields);
    if (!fields[0]) {
        snprintf(why, cap, "no field=value after ':'");
        return false;
    }
    for (char *tok = strtok(fields, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        int f = -1;
        for (int i = 0; eq && i < kn_sched_nfields(); i++)
            if (strlen(kn_sched_key(i)) == (size_t)(eq - tok) &&
                !strncmp(tok, kn_sched_key(i), (size_t)(eq - tok)))
                f = i;
        if (f < 0 || !kn_tuned_field(f)) {
            int at = snprintf(why, cap, "unknown field '%s' (fields:", tok);
            for (size_t j = 0;
                 j < sizeof table_fields / sizeof *table_fields && at >= 0 && (size_t)at < cap; j++)
                at += snprintf(why + at, cap - (size_t)at, "%s %s", j ? "," : "", table_fields[j]);
            if (at >= 0 && (size_t)at < cap) snprintf(why + at, cap - (size_t)at, ")");
            return false;
        }
        char *e;
        long v = strtol(eq + 1, &e, 10);
        if (*e || e == eq + 1 || v < 0 || v > 1 << 20) {
            snprintf(why, cap, "bad value in '%s'", tok);
            return false;
        }
        kn_sched_set(&E->s, f, (int)v);
    }
    E->cpu = dup_n(head, (size_t)(sp - head));
    E->key = dup_n(sp + 1, strlen(sp + 1));
    return true;
}

kn_status kn_tuned_parse(kn_ctx *cx, const char *name, const char *text, kn_tuned **out) {
    *out = NULL;
    kn_tuned *t = calloc(1, sizeof *t);
    KN_ASSERT(t);
    int lineno = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char line[2048], why[300];
        const char *hash = memchr(p, '#', len);
        size_t keep = hash ? (size_t)(hash - p) : len;
        if (keep >= sizeof line) {
            kn_tuned_destroy(t);
            return kn_diag(cx, NULL, KN_EINVAL, "tuning table '%s' line %d: line too long", name,
                           lineno);
        }
        memcpy(line, p, keep);
        line[keep] = 0;
        if (keep && line[keep - 1] == '\r') line[keep - 1] = 0;
        p = nl ? nl + 1 : NULL;
        if (!line[strspn(line, " \t")]) continue;
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 16;
            t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
            KN_ASSERT(t->v);
        }
        if (!parse_entry(line, &t->v[t->n], why, sizeof why)) {
            kn_tuned_destroy(t);
            return kn_diag(cx, NULL, KN_EINVAL, "tuning table '%s' line %d: %s", name, lineno, why);
        }
        t->n++;
    }
    *out = t;
    return KN_OK;
}

kn_status kn_tuned_read(kn_ctx *cx, const char *path, kn_tuned **out) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot open tuning table '%s'", path);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    KN_ASSERT(buf);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            if (cap >= (size_t)64 << 20) {
                fclose(f);
                free(buf);
                return kn_diag(cx, NULL, KN_EINVAL, "tuning table '%s': larger than 64 MB", path);
            }
            buf = realloc(buf, cap *= 2);
            KN_ASSERT(buf);
        }
    }
    fclose(f);
    buf[n] = 0;
    if (memchr(buf, 0, n)) {
        free(buf);
        return kn_diag(cx, NULL, KN_EINVAL, "tuning table '%s': not a text file", path);
    }
    kn_status st = kn_tuned_parse(cx, path, buf, out);
    free(buf);
    return st;
}

static kn_tuned *builtin;
static once_flag builtin_once = ONCE_FLAG_INIT;

static void parse_builtin(void) {
    kn_ctx cx;
    kn_ctx_init(&cx, "built-in tuning table");
    /* the shipped text is checked by tests (cli_tuned): a malformed line is kiln's bug */
    KN_ASSERT(kn_tuned_parse(&cx, "built-in", kn_tuned_text, &builtin) == KN_OK);
}

const kn_tuned *kn_tuned_builtin(void) {
    call_once(&builtin_once, parse_builtin);
    return builtin;
}

bool kn_tuned_key(const kn_contract *d, char *buf, size_t cap) {
    int n = -1;
    buf[0] = 0;
    const char *dt = kn_dtype_name(d->x->dtype);
    if (d->kind == KN_CONTRACT_CONV) {
        char lay[160] = "nchw";
        if (!kn_contract_nchw(d)) {
            int64_t xs[4], ys[4];
            kn_contract_strides(d, xs, ys);
            snprintf(lay, sizeof lay, "xs=%lld,%lld,%lld,%lld ys=%lld,%lld,%lld,%lld",
                     (long long)xs[0], (long long)xs[1], (long long)xs[2], (long long)xs[3],
                     (long long)ys[0], (long long)ys[1], (long long)ys[2], (long long)ys[3]);
        }
        n = snprintf(buf, cap,
                     "%s %s x=%lldx%lldx%lldx%lld y=%lldx%lldx%lld k=%lldx%lld s=%lldx%lld "
                     "d=%lldx%lld p=%lld,%lld,%lld,%lld g=%lld %s",
                     d->nsp == 1 ? "conv1d" : "conv", dt, (long long)d->n, (long long)d->c,
                     (long long)d->h, (long long)d->w_, (long long)d->m, (long long)d->oh,
                     (long long)d->ow, (long long)d->kh, (long long)d->kw, (long long)d->sh,
                     (long long)d->sw, (long long)d->dh, (long long)d->dw, (long long)d->ph,
                     (long long)d->pw, (long long)d->peh, (long long)d->pew, (long long)d->group,
                     lay);
    } else if (d->kind == KN_CONTRACT_MATMUL) {
        n = snprintf(buf, cap, "matmul %s M=%lld K=%lld N=%lld batch=%lld ta=%d tb=%d b=%s", dt,
                     (long long)d->M, (long long)d->K, (long long)d->N, (long long)d->batch, d->ta,
                     d->tb, d->w && d->w->kind == KB_CONST ? "const" : "var");
    }
    if (n < 0 || (size_t)n >= cap) {
        buf[0] = 0;
        return false;
    }
    return true;
}

const kn_sched *kn_tuned_find(const kn_tuned *t, const char *cpu, const char *key) {
    for (int i = 0; t && i < t->n; i++)
        if (!strcmp(t->v[i].cpu, cpu) && !strcmp(t->v[i].key, key)) return &t->v[i].s;
    return NULL;
}

void kn_tuned_print(FILE *f, const char *cpu, const char *key, const kn_sched *s) {
    fprintf(f, "%s %s :", cpu, key); /* no field (trace): no entry */
    for (int i = 0; i < kn_sched_nfields(); i++)
        if (kn_tuned_field(i) && kn_sched_get(s, i))
            fprintf(f, " %s=%d", kn_sched_key(i), kn_sched_get(s, i));
    fputc('\n', f);
}

/* Whether contraction d on target t can take entry s: the register tile within the bounds
 * a schedule file may ask for (passes/schedule.h), a vector width the target has (a power
 * of two from 2 to its f32 lanes; integer tiles choose their own), the tile's accumulators,
 * one broadcast a row and a spare within its vector registers, and the other fields among
 * the values the tile pass knows. An entry failing any of these is ignored whole. */
static bool takes(const kn_target *t, const kn_contract *d, const kn_sched *s) {
    bool flt = d->x->dtype == KN_F32;
    int f32_lanes = t->vector_bits / 32;
    if (s->tile_rows > KN_SCHED_MAX_ROWS) return false;
    if (s->tile_vecs > (flt ? KN_SCHED_MAX_VECS : KN_SCHED_MAX_NV)) return false;
    if (s->lanes) {
        if (!flt || s->lanes < 2 || s->lanes > f32_lanes || (s->lanes & (s->lanes - 1)))
            return false;
        int rows = s->tile_rows ? s->tile_rows : 1, vecs = s->tile_vecs ? s->tile_vecs : 1;
        if (rows * vecs + vecs + 1 > t->vector_registers) return false;
    }
    if (s->pad > 3 || s->pf > 2 || s->serp > 2 || s->span > 2) return false;
    if (d->kind != KN_CONTRACT_CONV && s->pad) return false;
    if (d->kind != KN_CONTRACT_MATMUL && s->mc) return false;
    if (d->kind != KN_CONTRACT_CONV && s->span) return false;
    return true;
}

kn_status kn_kpass_tuned(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    const kn_target *t = p->target;
    if (!t || t->kind != KN_TARGET_CPU) return KN_OK;
    const char *cpu = kn_target_cpu_name(t);
    const char *tr = getenv("KILN_TUNED_TRACE");
    bool trace = tr && *tr && strcmp(tr, "0");
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_contract *d = kern->contract;
        if (!d || kern->sched.tile_rows) continue; /* none, or tiled by an earlier pass */
        char key[KN_TUNED_KEY_CAP];
        if (!kn_tuned_key(d, key, sizeof key)) continue;
        size_t len = strlen(key) + 1;
        char *w = kn_arena_alloc(p->arena, len);
        KN_ASSERT(w);
        memcpy(w, key, len);
        kern->workload = w;
        const kn_sched *s = NULL;
        if (!kn_schedule_for(p, k)) { /* a schedule file's line wins */
            /* the user's table first; an entry the kernel cannot take is as if absent */
            s = kn_tuned_find(p->tuning, cpu, key);
            if (!s || !takes(t, d, s)) s = kn_tuned_find(kn_tuned_builtin(), cpu, key);
            if (s && !takes(t, d, s)) s = NULL;
        }
        if (trace) { /* KILN_TUNED_TRACE=1: each kernel's key, and the entry it got */
            fprintf(stderr, "kiln tuned: kernel %d (%s): ", k, kern->name);
            kn_tuned_print(stderr, cpu, key, s ? s : &(kn_sched){0});
        }
        if (!s) continue;
        kn_sched *c = kn_arena_alloc(p->arena, sizeof *c);
        KN_ASSERT(c);
        *c = *s;
        kern->tuned = c;
    }
    return KN_OK;
}
