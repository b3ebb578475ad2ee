/* A tiny test harness: CHECK(cond) records a failure with file:line and goes on;
 * TEST_MAIN's exit status is the failure count (0 = pass). The last line printed is
 * "N passed, N failed" over the checks. */
#ifndef KN_TEST_H
#define KN_TEST_H

#include <stdio.h>

static int test_pass, test_fail;
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            test_pass++;                                                                           \
        else {                                                                                     \
            test_fail++;                                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)
#define TEST_DONE() (printf("%d passed, %d failed\n", test_pass, test_fail), test_fail != 0)

#endif
