/* Shared pieces of the kiln command line: exit codes, option matching, model
 * loading with --shape/--dim applied, and printing of diagnostics. Only tools/
 * calls exit(). */
#ifndef KN_CLI_H
#define KN_CLI_H

#include "ir/graph.h"
#include "passes/pass.h"

#include <stdbool.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3, EXIT_SKIPPED = 77 };

/* What a command prints besides its result: warnings (one line each, on unless
 * --no-warnings or -q), -v's per-pass and per-stage times, and progress on a terminal
 * (stderr a tty, not -q, not -v). */
typedef struct cli_talk {
    bool quiet, no_warnings, verbose;
} cli_talk;
/* Consumes -q/--quiet (if quiet is allowed), --no-warnings and -v/--verbose. */
bool cli_talk_opt(const char *arg, cli_talk *t, bool quiet_allowed);
/* kn_ctx_init, with the hooks that print warnings, -v lines and progress as t says. */
void cli_ctx_init(kn_ctx *cx, const char *model, const cli_talk *t);
/* Ends a progress line, if one is shown (call before printing results). */
void cli_progress_end(void);
/* s as a JSON string, quoted, with quotes, backslashes and control characters escaped. */
void cli_json_str(FILE *f, const char *s);

/* "targets: native, generic, ..." from the target table, for messages. Static. */
const char *cli_target_names(void);

/* Exit code for a failed status. */
int cli_exit_code(kn_status st);
/* Prints the context's message as "kiln: MESSAGE" and returns its exit code. */
int cli_fail(const kn_ctx *cx);
/* Prints "kiln CMD: message" and a pointer to --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...);

/* Option matching: "--name VALUE" or "--name=VALUE". Advances *i past the value. */
bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/* A flag without a value: arg is exactly name. */
bool cli_flag(const char *arg, const char *name);
/* -O0 .. -O3: sets *level. */
bool cli_opt_level(const char *arg, int *level);
bool cli_is_help(const char *arg);
/* Prints "kiln CMD: unknown option 'ARG'" and returns EXIT_USAGE. With KILN_CHECK_OPTIONS
 * set in the environment it first compares the options the parser asked for on the
 * way here (an unknown option passes every test of the parser's chain) with the
 * command's table in tools/help.c, prints each difference and returns EXIT_INTERNAL
 * if there is one: the check that --help, kiln(1) and docs/cli.md list exactly the
 * options the command accepts. */
int cli_unknown_option(const char *cmd, const char *arg);

/* Shape bindings collected from --shape, --dim and --length, applied after loading
 * (--length first: a sequence input NAME of length L becomes inputs NAME_0..). */
typedef struct cli_shapes {
    int n;
    const char *spec[64];
    int whole[64]; /* 1 --shape, 0 --dim, 2 --length */
} cli_shapes;
/* Consumes --shape/--dim/--length at argv[*i]; returns true if it did. On overflow
 * prints and sets *err. */
bool cli_shape_opt(int argc, char **argv, int *i, cli_shapes *s, int *err);
/* Loads the model and applies s; from here on cx's warnings go to stderr as
 * "kiln: warning: ...". */
kn_status cli_load(kn_ctx *cx, const char *path, const cli_shapes *s, kn_graph **g);
/* Fails, naming what to pass, on the first tensor input whose shape is not fixed:
 * "input 'x' has symbolic dimension 'batch': pass --dim batch=1 (or --shape x=1,3,..)". */
kn_status cli_require_static_inputs(kn_ctx *cx, const kn_graph *g);
/* Applies --bind NAME=FILE options: each input becomes a constant read from FILE. */
kn_status cli_apply_binds(kn_ctx *cx, kn_graph *g, kn_arena *a, const char *const *binds, int n);
/* Sets in[i] (one per graph input, NULL on entry) from --input NAME=FILE options,
 * and with `random` the others to random values from seed (floats uniform in
 * [-1, 1), integers in [0, 10)), allocated in a. Prints any problem naming cmd or
 * model and returns its exit code; EXIT_OK when every input has a value. */
int cli_inputs(const char *cmd, const char *model, kn_graph *g, kn_arena *a,
               const char *const *inputs, int ninputs, bool random, uint64_t seed, kn_tensor **in);

/* Pipeline options of every command that compiles (compile, run, bench, inspect,
 * check-onnx): --passes LIST, --dump-after PASS[,PASS...|all], -O0..-O3 (the default
 * pipeline, and LLVM's optimization level). -v is cli_talk's. */
typedef struct cli_pipeline {
    const char *passes;     /* NULL: kn_pipeline_default(opt_level) */
    const char *dump_after; /* printed to stdout */
    int opt_level;          /* 3 unless given */
    bool opt_set;
    const char *schedule, *dump_schedule; /* --schedule FILE, --dump-schedule FILE */
    const char *tuning;                   /* --tuning FILE */
    kn_dtype weights;                     /* --weights f16|bf16, else KN_UNDEF */
    bool weights_bad;                     /* --weights with another value (a usage error) */
} cli_pipeline;
/* Consumes a pipeline option at argv[*i]; returns true if it did. */
bool cli_pipeline_opt(int argc, char **argv, int *i, cli_pipeline *po);
/* A usage error's exit code for a bad pipeline option of cmd (--weights), else 0. */
int cli_pipeline_check(const cli_pipeline *po, const char *cmd);
/* The compile options po asks for. */
void cli_compile_opts(const cli_pipeline *po, kn_compile_opts *o);

int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_check_onnx(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_tune(int argc, char **argv);

/* "1000", "64K", "2M", "1G" (binary units) -> bytes; false if malformed or too big. */
bool cli_parse_bytes(const char *s, size_t *out);

#endif
