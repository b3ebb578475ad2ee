/* kiln compile/run --quantize and kiln quantize: options and the quantization step
 * (tools/quant.c over passes/ptq.c). */
#ifndef KN_TOOLS_QUANT_H
#define KN_TOOLS_QUANT_H

#include "passes/ptq.h"
#include "tools/cli.h"

typedef struct cli_quant {
    int mode;              /* 0 none, 1 int8, 2 auto */
    const char *calibrate; /* --calibrate PATH */
    kn_calib_method method;
    double percentile;
    const char *keep;   /* --keep-float NODE,... */
    double max_drop;    /* --max-drop X; < 0 if not given */
    kn_dtype act;       /* --activations: KN_U8 (0 = default) or KN_I8 */
    const char *report; /* --report FILE */
} cli_quant;

#define CLI_QUANT_INIT                                                                             \
    { .max_drop = -1 }

/* Consumes one quantization option at argv[*i]; *err is set to the exit code of a
 * malformed value (printed). */
bool cli_quant_opt(int argc, char **argv, int *i, cli_quant *q, const char *cmd, int *err);
/* Checks the combination of options; EXIT_OK or the usage error printed. */
int cli_quant_check(const cli_quant *q, const char *cmd);
/* Loads model (with the shapes s), calibrates on o->calibrate, quantizes and measures:
 * *out is the QDQ graph (kn_graph_destroy). Prints the report table unless quiet and
 * writes the JSON report to o->report, or to `report` if that is NULL (NULL: none). */
kn_status cli_quantize(kn_ctx *cx, const char *model, const cli_shapes *s, const cli_quant *o,
                       bool quiet, const char *report, kn_graph **out);

#endif
