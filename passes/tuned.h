/* The tuning table (passes/tuned.c): register-tile choices measured per target and kernel
 * shape, shipped as data (passes/tuned.txt, compiled in) and read from a user's file
 * (--tuning FILE), applied by pass 'tuned' to every model with a kernel of that shape. */
#ifndef KN_TUNED_H
#define KN_TUNED_H

#include "ir/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct kn_contract;
struct kn_kprog;
struct kn_sched;
struct kn_target;
typedef struct kn_tuned kn_tuned;

/* The longest workload key kn_tuned_key writes, with its NUL. */
enum { KN_TUNED_KEY_CAP = 256 };

/* Reads a table from text (name: for messages, "FILE" or "built-in"); *out is the
 * caller's (kn_tuned_destroy). A malformed line is a KN_EINVAL naming name and the line. */
kn_status kn_tuned_parse(kn_ctx *cx, const char *name, const char *text, kn_tuned **out);
kn_status kn_tuned_read(kn_ctx *cx, const char *path, kn_tuned **out);
void kn_tuned_destroy(kn_tuned *t);
/* The table compiled into kiln (passes/tuned.txt), parsed once; never NULL. */
const kn_tuned *kn_tuned_builtin(void);
/* How many entries t holds. */
int kn_tuned_count(const kn_tuned *t);

/* Contraction d's workload key ("conv f32 x=1x144x28x28 y=40x28x28 k=1x1 ..."), the
 * text a table entry names it by; false (buf "") for a kind the table does not key. */
bool kn_tuned_key(const struct kn_contract *d, char *buf, size_t cap);
/* The entry of t for (cpu, key), or NULL. */
const struct kn_sched *kn_tuned_find(const kn_tuned *t, const char *cpu, const char *key);
/* Whether field i of the schedule table (kn_sched_key(i)) is one a table entry may set:
 * the register tile's (tile_rows, tile_vecs, lanes, pad, pf, xpf, serp, mc, span), which
 * pass 'tile' reads, and not the thread split or the work-group. */
bool kn_tuned_field(int i);
/* Writes one entry line: "CPU KEY : field=value..." (fields kn_tuned_field allows that
 * s sets). */
void kn_tuned_print(FILE *f, const char *cpu, const char *key, const struct kn_sched *s);

#endif
