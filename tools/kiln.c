/* kiln: the command-line driver. Dispatches to one function per subcommand, from the
 * table in tools/help.c that also writes --help, kiln(1) and docs/cli.md. */
#include "tools/cli.h"
#include "tools/help.h"

#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int main(int argc, char **argv) {
#if defined(__GLIBC__)
    /* Weights (1 MiB and more) are mapped and unmapped on their own, so memory freed
     * while compiling (the file buffer, weights once repacked or copied into LLVM) goes
     * back to the system. glibc's default threshold rises to 32 MiB after the first
     * big free and then keeps such blocks in the heap, where they add to the peak. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
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
