/* KILN_POOL_TRACE: how the JIT's parallel loops share their tasks between threads
 * (diagnostics for `kiln bench --threads N`; docs/benchmarks.md, "Why two threads
 * gained little"). */
#ifndef KN_POOL_TRACE_H
#define KN_POOL_TRACE_H

#include "codegen/llvm/llvm.h"

/* A par_for that runs `inner` and times each task: on which thread (the loop's caller
 * or a worker), for how long in wall-clock and in thread CPU time. At exit it prints a
 * summary to stderr and, when KILN_POOL_TRACE is a file name rather than 1, each
 * loop's figures per run (by its position in the run) to that file. One wrapped
 * par_for per process. */
kn_par_for pool_trace_wrap(kn_par_for inner);

/* Called before each run: loops are numbered from here. */
void pool_trace_run_begin(void);

#endif
