/* kiln: the command-line driver. Dispatches to one function per subcommand, from the
 * table in tools/help.c that also writes --help, kiln(1) and docs/cli.md. */
#include "tools/cli.h"
#include "tools/help.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        cli_help_main(stderr);
        return EXIT_USAGE;
    }
    if (cli_is_help(argv[1])) {
        cli_help_main(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("kiln " KILN_VERSION "\n");
        return EXIT_OK;
    }
    const cli_command *c = cli_command_find(argv[1]);
    if (c) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "kiln: unknown command '%s'\n", argv[1]);
    cli_help_main(stderr);
    return EXIT_USAGE;
}
