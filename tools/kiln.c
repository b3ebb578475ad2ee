/* kiln: the command-line driver. Dispatches to one function per subcommand. */
#include "tools/cli.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *what;
} commands[] = {
    {"compile", cmd_compile, "compile a model to standalone C"},
    {"run", cmd_run, "run a model on inputs and write its outputs"},
    {"inspect", cmd_inspect, "print the graph after passes: nodes, shapes, parameters, FLOPs"},
    {"bench", cmd_bench, "compile once, time repeated runs: latency, compile time, GFLOP/s"},
    {"check-onnx", cmd_check_onnx, "run ONNX backend test folders and compare outputs"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: kiln COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\n'kiln COMMAND --help' describes a command.\n"
               "Exit codes: 0 ok, 1 bad model or input, 2 usage, 3 internal error.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (cli_is_help(argv[1])) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("kiln 0.1.0\n");
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "kiln: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
