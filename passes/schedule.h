/* Schedule files (passes/schedule.c): each kernel's kn_sched as text, written by
 * --dump-schedule and read by --schedule. */
#ifndef KN_SCHEDULE_H
#define KN_SCHEDULE_H

#include "ir/diag.h"

#include <stddef.h>
#include <stdio.h>

struct kn_kprog;
struct kn_sched;
typedef struct kn_schedule kn_schedule;

/* Span tiles (kn_sched.span, passes/tile.c conv_span_rows) cover an output plane in at
 * most this many register tiles (they are unrolled). */
enum { KN_SPAN_MAX_TILES = 8 };

/* The register tiles a schedule file may ask for (passes/tile.c): at most
 * KN_SCHED_MAX_ROWS rows (tile_rows), KN_SCHED_MAX_VECS vectors of a tile with lanes, and
 * KN_SCHED_MAX_NV columns of a scalar tile or vectors of an integer one (tile_vecs). */
enum { KN_SCHED_MAX_ROWS = 16, KN_SCHED_MAX_VECS = 8, KN_SCHED_MAX_NV = 4 };

/* Reads a schedule file; *out is the caller's (kn_schedule_destroy). A malformed line
 * is a KN_EINVAL naming the file and line. */
kn_status kn_schedule_read(kn_ctx *cx, const char *path, kn_schedule **out);
void kn_schedule_destroy(kn_schedule *s);
/* Whether every kernel s names exists in p and was lowered from the node s says. */
kn_status kn_schedule_check(kn_ctx *cx, const kn_schedule *s, const struct kn_kprog *p);
/* The override for kernel k of p (from p->schedule), or NULL. */
const struct kn_sched *kn_schedule_for(const struct kn_kprog *p, int k);
/* After the pipeline: refuses (exit code 1, naming the file, the kernel and the value) a
 * line's `lanes` that its kernel did not take, that is, lanes other than those the passes
 * recorded in the kernel's schedule: wider than the target's vectors, 1 on a vector tile,
 * or on a kernel without vector tiles. The passes' own choice repeated (a dump read back)
 * and the narrower float tiles of passes/tile.c (kt_choose; kiln tune's half-width tiles)
 * are taken. */
kn_status kn_schedule_check_taken(kn_ctx *cx, const kn_schedule *s, const struct kn_kprog *p);
/* The path s was read from (borrowed), "" for NULL. */
const char *kn_schedule_path(const kn_schedule *s);
/* Writes p's kernel schedules to path (through a temporary name). */
kn_status kn_schedule_write(kn_ctx *cx, const struct kn_kprog *p, const char *path);

/* The kn_sched fields a schedule file names, in the order it writes them: how many, the
 * key of field i, and its value in s (0: left to the passes), read or set. kn_sched_print writes
 * " key=value" for each field s sets, as a line of the file does. */
int kn_sched_nfields(void);
const char *kn_sched_key(int i);
int kn_sched_get(const struct kn_sched *s, int i);
/* Sets field i of s to v (0: left to the passes). */
void kn_sched_set(struct kn_sched *s, int i, int v);
void kn_sched_print(FILE *f, const struct kn_sched *s);

/* Cross-core bytes of p's parallel splits at `threads` threads (passes/xcore.c): per
 * kernel, read[k] the bytes (64-byte lines) its threads load that another thread wrote
 * and write[k] those they store into lines another thread holds, in the steady state of
 * repeated runs; each array p->nkernels long. Returns the sum of read. */
double kn_xcore_bytes(const struct kn_kprog *p, int threads, double *read, double *write);

#endif
