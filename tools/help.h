/* The kiln command line described once: every command's usage, description and
 * options live in one table (tools/help.c), printed as `kiln CMD --help`, as the man
 * page kiln(1) (`kiln help --man`) and as docs/cli.md (`kiln help --markdown`).
 * CTest checks that docs/cli.md is the current output and that each command's parser
 * accepts exactly the options of its table (KILN_CHECK_OPTIONS, see cli_opt()). */
#ifndef KN_HELP_H
#define KN_HELP_H

#include <stdio.h>

typedef struct cli_option {
    const char *name;  /* as matched by the parser: "--shape", "-O" */
    const char *arg;   /* its value's placeholder ("IN=D,D,.."), or NULL for a flag */
    const char *help;  /* one paragraph, unwrapped */
    const char *shown; /* how --help writes it when not name + arg ("-O0 .. -O3"), or NULL */
} cli_option;

typedef struct cli_command {
    const char *name;    /* "compile" */
    const char *summary; /* one line for `kiln --help` */
    const char *usage;   /* "kiln compile MODEL -o DIR [options]" */
    const char *about;   /* paragraphs separated by blank lines, unwrapped; "- " starts an item */
    const cli_option *options; /* ends with a {NULL} entry */
    int (*run)(int argc, char **argv);
} cli_command;

/* The commands, ending with a {NULL} entry. */
extern const cli_command cli_commands[];
const cli_command *cli_command_find(const char *name);

/* `kiln --help`, `kiln CMD --help`. */
void cli_help_main(FILE *f);
void cli_help_command(FILE *f, const cli_command *c);
/* kiln(1) in man(7) format, and docs/cli.md. */
void cli_help_man(FILE *f);
void cli_help_markdown(FILE *f);
/* The target table (targets/targets.c) in Markdown, for docs/targets.md. */
void cli_help_targets(FILE *f);

/* `kiln help [COMMAND | --man | --markdown]`. */
int cmd_help(int argc, char **argv);

#endif
