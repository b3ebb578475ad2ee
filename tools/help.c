/* The one description of kiln's command line (see help.h) and its three printers:
 * --help text wrapped to 80 columns, man(7) for kiln(1) and Markdown for docs/cli.md.
 * Text in the table is plain: no markup, paragraphs unwrapped, "- " starting a list
 * item. The printers add the markup of their format and nothing else, so the three
 * say the same. */
#include "tools/help.h"
#include "tools/cli.h"
#include "passes/pass.h"
#include "targets/target.h"

#include <stdbool.h>
#include <string.h>

/* ---- the table ---- */

/* An option shown as its name and argument. */
#define O(name_, arg_, help_)                                                                      \
    { .name = name_, .arg = arg_, .help = help_ }

/* Warnings, -v and progress (cli_talk_opt). */
#define TALK_OPTIONS                                                                               \
    O("--no-warnings", NULL,                                                                       \
      "Do not print warnings (one line each on stderr: code that differs from what the model "     \
      "may ask for at run time, such as a run-time Dropout mode or a string longer than its "      \
      "storage)."),                                                                                \
        {.name = "-v",                                                                             \
         .help = "Print each stage's and pass's time (and the IR size after a pass) on stderr. "   \
                 "Without it, a terminal shows progress while a large model compiles; nothing "    \
                 "is shown when stderr is not a terminal.",                                        \
         .shown = "-v, --verbose"},                                                                \
    {                                                                                              \
        .name = "--verbose"                                                                        \
    }
/* The pipeline (cli_pipeline_opt): every command that compiles. */
#define PIPELINE_OPTIONS                                                                           \
    O("--passes", "LIST",                                                                          \
      "The pipeline: comma-separated passes, graph passes, then 'lower', then kernel passes "      \
      "(kiln inspect --list-passes lists them with what each needs). Default: the -O "             \
      "level's pipeline."),                                                                        \
        O("--dump-after", "PASS",                                                                  \
          "Print the IR after PASS to stdout: the graph, or the kernel IR once lowered (a comma "  \
          "list of passes, or all)."),                                                             \
        O("--dump-schedule", "FILE",                                                               \
          "Write each kernel's schedule (register tile, parallel tasks, work-group, padding) to "  \
          "FILE, one line per kernel (docs/internals.md, schedule files). With KILN_XCORE=N "      \
          "set, also each kernel's cross-core bytes at N threads, as comments (slow: it runs "     \
          "the model abstractly)."),                                                               \
        O("--schedule", "FILE",                                                                    \
          "Use the schedules in FILE (as --dump-schedule writes them) where they set a value; "    \
          "the passes choose the rest. Refused if FILE names kernels this model does not have."),  \
        O("--tuning", "FILE",                                                                      \
          "Also search the tuning table in FILE (as kiln tune --table-out writes it) for each "    \
          "kernel's register tile, before the table shipped with kiln (docs/tuning.md, tuning "    \
          "tables); --schedule's lines win over both. Leave pass 'tuned' out of --passes to use "  \
          "neither."),                                                                             \
        O("--weights", "f16|bf16",                                                                 \
          "Store float32 weights as float16 or bfloat16 (half the bytes), widened to float32 "     \
          "where the kernels read them. Every backend, the interpreter included, computes with "   \
          "the weights rounded to that precision (docs/quantization.md).")
#define OPT_LEVEL_OPTION                                                                           \
    {                                                                                              \
        .name = "-O",                                                                              \
        .help = "Optimization level (default -O3): -O0 lowers without fusion or register tiles; "  \
                "also LLVM's level for llvm, obj, asm.",                                           \
        .shown = "-O0 .. -O3"                                                                      \
    }

#define QUIET_OPTIONS                                                                              \
    {.name = "-q",                                                                                 \
     .help = "Print nothing on success: no summary, no warnings, no progress.",                    \
     .shown = "-q, --quiet"},                                                                      \
    {                                                                                              \
        .name = "--quiet"                                                                          \
    }

#define LOAD_OPTIONS                                                                               \
    O("--shape", "IN=D,D,..",                                                                      \
      "Fix the whole shape of graph input IN (it must agree with the dimensions the model "        \
      "fixes)."),                                                                                  \
        O("--dim", "NAME=VALUE", "Fix every input dimension whose ONNX dim_param is NAME."),       \
        O("--length", "IN=N|none",                                                                 \
          "Sequence input IN has N elements: it becomes inputs IN_0 .. IN_{N-1} (their shapes "    \
          "from the element type, --shape IN_0=.. or --dim). An optional input holds a value "     \
          "(1, or its sequence's length) or none.")

/* Post-training quantization (tools/quant.c): compile, run. */
#define QUANT_OPTIONS                                                                              \
    O("--quantize", "int8|auto",                                                                   \
      "Quantize after calibrating on --calibrate's inputs (docs/quantization.md): weights int8 "   \
      "symmetric per output channel, activations 8-bit per tensor, biases int32, for every "       \
      "Conv, MatMul and Gemm with constant weights; other ops stay float. Prints each layer's "    \
      "scales, zero points and SQNR against float. auto: also keep in float the fewest layers "    \
      "(most sensitive first) that bring the output error within --max-drop."),                    \
        O("--calibrate", "PATH",                                                                   \
          "Calibration inputs: one .npy or .pb holding samples stacked on axis 0 (or batches "     \
          "of the input's size), a folder of such .npy files, or a folder of ONNX "                \
          "test_data_set_* folders (input_K.pb, one sample each; models with several inputs)."),   \
        O("--calibration", "METHOD",                                                               \
          "How an activation's range is chosen: minmax (default), percentile[=P] (clip at the "    \
          "P-th percentile of |x|, default 99.99) or entropy (the clip of least KL divergence, "   \
          "as TensorRT)."),                                                                        \
        O("--activations", "uint8|int8", "Activation type (default uint8, asymmetric)."),          \
        O("--keep-float", "NODE,..", "Leave these layers (ONNX node names) in float."),            \
        O("--max-drop", "X",                                                                       \
          "--quantize auto's bound on the output error: the relative RMS error of the graph "      \
          "outputs against float on the calibration inputs (0.01 is 1%)."),                        \
        O("--report", "FILE",                                                                      \
          "Write the report as JSON to FILE (kiln compile writes DIR/NAME_quant.json anyway).")

static const cli_option compile_options[] = {
    O("-o", "DIR", "Output folder (created if missing). Required."),
    O("--name", "N", "C prefix of the generated symbols and files (default: model)."),
    O("--emit", "KIND",
      "c (default): NAME.h and NAME.c, standalone C99. h: NAME.h alone (sizes and entry "
      "points, for build systems). obj, asm, llvm: NAME.o, NAME.s or NAME.ll (textual LLVM IR) "
      "through LLVM, with the same NAME.h. opencl: NAME.cl kernels and NAME.c/NAME.h host code "
      "on kiln's OpenCL runtime layer (docs/opencl.md)."),
    O("--target", "T",
      "What the code is tuned for (docs/targets.md): generic (default for c and h: portable "
      "C99, the same on every build machine), native (default for obj, asm and llvm: the "
      "machine running kiln), x86-64-avx2, x86-64-avx512, x86-64-vnni, x86-64-zen4, aarch64, "
      "cortex-m0plus, cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55. Not for opencl."),
    LOAD_OPTIONS,
    O("--bind", "NAME=FILE",
      "Bake input NAME into the model as a constant read from FILE (.npy or .pb)."),
    O("--weights-section", "NAME", "Put the weight arrays in linker section NAME (GCC/Clang)."),
    O("--weights-file", NULL,
      "Write the weights to NAME.weights instead of C arrays; NAME_run then takes them as a "
      "parameter (for models too large for a C array)."),
    O("--threads", "N",
      "For host programs that run the model on N threads (C only; default 1): NAME.c also "
      "defines NAME_run_parallel, which runs the kernels' parallel loops as tasks through a "
      "parallel-for the caller passes (its own thread pool; docs/generated-c.md), and the arena "
      "holds each thread's scratch. Outputs are the same as NAME_run's, bit for bit. Not for "
      "firmware, which stays single-threaded."),
    O("--arena-in-place-io", NULL,
      "Plan the inputs and outputs inside the arena (C only): NAME.h gives each an offset "
      "(NAME_INPUT_k_OFFSET, NAME_OUTPUT_k_OFFSET); the caller writes the inputs there, passes "
      "pointers to those places and reads the outputs from theirs, so the arena is all the RAM "
      "a run needs. An input stays live until its last reader, an output from its producer "
      "on; NAME_run returns 5 for pointers elsewhere."),
    O("--memory", "NAME=SIZE,...",
      "Split the arena into up to 4 regions, fastest first (C only; e.g. fast=64K,slow=8M: "
      "TCM or on-chip SRAM, then external RAM; sizes with suffix K, M or G). Buffers go, "
      "most estimated traffic per byte first, into the fastest region whose plan still fits "
      "with them; each region "
      "is its own arena: NAME.h gives NAME_ARENA_<region>_SIZE (and _LOWER_BOUND), and "
      "NAME_run takes one pointer per region (arena_<region>). A buffer that fits in no "
      "region is an error (exit 1); docs/firmware.md."),
    O("--max-arena", "BYTES",
      "Refuse a model whose arena needs more than BYTES (suffix K, M or G: units of 1024, "
      "1024^2, 1024^3 bytes); nothing is written."),
    O("--max-weights", "BYTES", "Refuse a model whose weights need more (same suffixes)."),
    O("--max-string-bytes", "N",
      "Storage per string element that a kernel writes whose length is known only at run time "
      "(StringNormalizer's case change), NUL included (default 256); NAME_run returns 2 when a "
      "string does not fit."),
    O("--dump-kir", NULL, "Print the kernel IR program."),
    O("--json", NULL,
      "Print one JSON object instead of the summary lines: model, name, target, emit, "
      "kernels, weights_bytes, code_bytes (the generated code file: NAME.c, the object, "
      "NAME.cl; -1 for h), arena_bytes, arena_lower_bound, and regions (--memory: name, "
      "capacity, bytes, lower_bound, traffic_share each; empty without it)."),
    QUANT_OPTIONS,
    QUIET_OPTIONS,
    TALK_OPTIONS,
    PIPELINE_OPTIONS,
    OPT_LEVEL_OPTION,
    {0},
};

static const cli_option run_options[] = {
    O("--backend", "B",
      "interp (the reference interpreter; default), c (the generated C, built with $CC into a "
      "temporary shared object and loaded), llvm (LLVM JIT in process) or opencl (OpenCL C "
      "kernels on the first OpenCL device, through the Halide runtime). The compiled backends "
      "fix the input shapes to the given inputs."),
    O("--input", "NAME=FILE",
      "The value of graph input NAME (its ONNX name) from a .npy file (format 1.0 to 3.0, C "
      "order, little-endian numeric and bool dtypes) or an ONNX TensorProto .pb "
      "(SequenceProto/OptionalProto for sequence and optional inputs). Its dimensions must match "
      "what the model fixes."),
    O("--random", "SEED",
      "Random values for every input without --input: floats uniform in [-1, 1), integers in "
      "[0, 10). Needs fixed shapes."),
    O("--bind", "NAME=FILE", "Bake input NAME into the model as a constant before compiling."),
    O("--output-dir", "DIR",
      "Write each output to DIR/<name>.npy (DIR/<name>.pb, an ONNX TensorProto, for float8 "
      "and 4-bit outputs, which NumPy lacks); characters of the ONNX name outside "
      "[A-Za-z0-9._-] become _. Files are written to a temporary name and renamed, so a "
      "failure leaves no partial file."),
    O("--max-memory", "BYTES",
      "Stop with exit 1 and a message naming the node, instead of exhausting memory, when the "
      "interpreter's tensors (inputs, outputs and intermediates of the run; constant folding "
      "while compiling) would need more than BYTES (suffix K, M or G: units of 1024, 1024^2, "
      "1024^3 bytes). For models whose sizes are known only at run time."),
    O("--labels", "FILE",
      "Integer labels (.npy or .pb), one per row of the first output: print the top-1 accuracy "
      "(argmax of each row) as 'top-1: N of M = P%'."),
    QUANT_OPTIONS,
    LOAD_OPTIONS,
    QUIET_OPTIONS,
    TALK_OPTIONS,
    PIPELINE_OPTIONS,
    OPT_LEVEL_OPTION,
    {0},
};

static const cli_option inspect_options[] = {
    O("--passes", "LIST",
      "Comma-separated passes to run (default " KN_GRAPH_PASSES "). A pipeline that names "
      "'lower' and kernel passes after it prints the kernel-IR program instead of the graph."),
    O("--dump-after", "PASS", "Also print the IR after PASS (a comma list, or all)."),
    O("--list-passes", NULL,
      "Print the available passes, then the default pipeline and the -O0 one, and stop."),
    O("--json", NULL,
      "Print a JSON object instead of text: model, opset, parameters, flops, inputs, outputs, "
      "nodes."),
    O("--dot", "FILE",
      "Write the graph in Graphviz dot format: a box per node with its op, name, constant "
      "inputs and FLOPs (integer contractions: their weights with scale and zero point), "
      "values on the edges with dtype and shape (quantized ones with scale and zero point), "
      "elementwise steps fused into their producer drawn as a cluster with it, and a fused "
      "residual Add's operand as a bold edge into that cluster."),
    O("--svg", "FILE",
      "Write the same picture as SVG, through Graphviz's dot program (apt-get install "
      "graphviz). With --memory: draw the memory plan instead, the arena over time (which "
      "buffer occupies which bytes at each kernel) with the bytes live at each kernel and the "
      "lower bound, one panel per memory region."),
    O("--profile", "FILE",
      "Show each node's time, share of the run and GFLOP/s from a profile written by kiln "
      "bench --profile-file, and shade the nodes of --dot and --svg by their share."),
    O("--memory", NULL,
      "Lower the model and print the memory plan: the arena size, its lower bound, and each "
      "temporary's offset, size and lifetime (in kernels)."),
    O("--target", "T",
      "Lower and plan for target T (default generic, as kiln compile's C): with --memory, or "
      "a --passes list that lowers."),
    O("--threads", "N",
      "With --memory: plan for N threads (default 1), as kiln bench --threads N does: each "
      "per-thread scratch (docs/internals.md) holds N copies, in a thread area above the rest "
      "of the arena."),
    TALK_OPTIONS,
    LOAD_OPTIONS,
    {0},
};

static const cli_option tune_options[] = {
    O("-o", "FILE", "The schedule file to write (required); read back by --schedule."),
    O("--backend", "B",
      "llvm (JIT; default) or c (the generated C built with $CC -O3 "
      "-march=native; one thread)."),
    O("--threads", "N",
      "llvm: tune for N threads (default 1); with more than one, the parallel split (tasks) "
      "is a candidate too and kernels are timed in wall time instead of the calling thread's "
      "CPU time."),
    O("--runs", "N", "Timed runs of each round; each kernel's time is their median (default 5)."),
    O("--target", "T",
      "The target (default native). Tune measures here, so T must be a CPU this machine runs: "
      "its architecture, and features this CPU has (x86-64-avx2 on an AVX-512 host); the "
      "passes tile for T and the JIT builds for T's CPU and features (c: -march=T's CPU)."),
    O("--list", NULL,
      "Under each kernel's row, every candidate measured: its time and its round's "
      "baseline's, in us."),
    O("--budget", "SECONDS",
      "Start no candidate round after SECONDS (default 0: no limit); the confirmation round "
      "and the result still follow."),
    O("--table-out", "FILE",
      "Also write the kept register-tile changes as tuning-table entries (this machine's CPU "
      "and each kernel's workload; docs/tuning.md), for --tuning FILE or kiln's own table "
      "passes/tuned.txt."),
    TALK_OPTIONS,
    LOAD_OPTIONS,
    {0},
};

static const cli_option bench_options[] = {
    O("--backend", "B",
      "llvm (JIT; default), c (the generated C built with $CC -O3 -march=native into a shared "
      "object), opencl (the OpenCL kernels on the first OpenCL device; the time includes "
      "copying inputs and outputs) or interp."),
    O("--runs", "N", "Timed runs (default 10)."),
    O("--warmup", "N",
      "Untimed runs first: at least N (default 2) and, with --warmup-ms, for at least that "
      "long."),
    O("--warmup-ms", "MS",
      "Keep making untimed runs until they have taken MS ms of wall-clock time (default 200; "
      "0: N runs only). A process's first runs are slower (caches, pages, the VM's clocks): "
      "on the Intel Xeon VM a 5.5 ms MatMul's runs 2-11 read 1-5% slower than its runs "
      "60-159 (docs/benchmarks.md, branch gp)."),
    O("--paced", NULL,
      "Let another program pace the timed runs (bench/run.sh interleaves kiln and ONNX Runtime "
      "with it): after the warm-up, print `ready`, then for each line N read on stdin time N "
      "runs and print their latencies in ms on one line; at the end of stdin print the summary "
      "of every timed run (instead of --runs)."),
    O("--threads", "N",
      "llvm and c: run each kernel's parallel loop on N threads (kiln's pool, whose workers "
      "spin during a run; KILN_POOL_TRACE=1 prints how the JIT's tasks were shared; c: the C "
      "compiled with --threads N, run by NAME_run_parallel); interp uses one (default 1)."),
    O("--json", NULL,
      "Print one JSON object: model, backend, threads, runs, warmup (the warm-up runs made), "
      "warmup_ms (their wall-clock time), load_ms, compile_ms, "
      "first_ms, median_ms, min_ms, cpu_ms (CPU time of every thread of the process per timed "
      "run: with an OpenCL driver's worker threads, and less sensitive than latency to other "
      "load), flops, gflops, weights_bytes (the constant data of the compiled code; -1 for "
      "interp)."),
    O("--profile", NULL,
      "Also time each kernel (llvm and c: the code is built with a timing hook around each "
      "kernel, which adds a little to the latency; opencl: the host waits for each kernel) "
      "and print the top kernels: time per run, share, GFLOP/s, op and node."),
    O("--profile-file", "FILE",
      "--profile, and write every kernel's figures to FILE (JSON) for kiln inspect --profile."),
    O("--profile-clock", "wall|cpu",
      "--profile, timing each kernel in wall-clock time (default) or in the CPU time of the "
      "thread that runs it (cpu: --threads 1, llvm or c), which other load on the machine "
      "hardly changes."),
    O("--input", "NAME=FILE", "The value of input NAME from a .npy or ONNX TensorProto .pb file."),
    O("--random", "SEED", "Seed of the random values of the other inputs (default 0)."),
    TALK_OPTIONS,
    LOAD_OPTIONS,
    PIPELINE_OPTIONS,
    OPT_LEVEL_OPTION,
    {0},
};

static const cli_option check_options[] = {
    O("--backend", "B",
      "interp (default), c (generated C, compiled with $CC), llvm (JIT) or opencl (OpenCL C on "
      "the first OpenCL device; exit code 77 and every test skipped when there is none)."),
    O("--known-failures", "FILE",
      "Lines 'test_name: reason' (repeatable). A listed test that fails is skipped; a listed "
      "test that passes is a failure (\"remove it from the list\"), so the list only shrinks."),
    O("--timeout", "SECONDS", "Per-test time limit (default 60)."),
    O("--batch", "N",
      "Tests per forked process (default 64; 1 in a sanitizer build): a process starts the "
      "backend once for N tests (PoCL loads its kernel library once); a crash or time-out "
      "fails the test it happened in, and a new process takes the next test."),
    O("--no-fork", NULL, "Run the tests in this process (for debuggers)."),
    O("--operators-md", "FILE", "Write the supported-operator table (docs/operators.md)."),
    {.name = "-v", .help = "Print every test's result.", .shown = "-v, --verbose"},
    {.name = "--verbose"}, /* the same, listed with -v */
    O("--passes", "LIST", "Compiling backends: the pipeline (kiln inspect --list-passes)."),
    O("--schedule", "FILE",
      "Compiling backends: per-kernel schedules read from FILE (written by kiln compile "
      "--dump-schedule for the same model, then edited); for checking one model's folder."),
    O("--tuning", "FILE",
      "Compiling backends: also search the tuning table in FILE (kiln tune --table-out) for "
      "each kernel's register tile, before kiln's own."),
    O("--weights", "f16|bf16",
      "Every backend runs the models with float32 weights rounded to float16 or bfloat16 (the "
      "references must be computed so), compiled ones storing them so (kiln compile --weights)."),
    OPT_LEVEL_OPTION,
    {0},
};

static const cli_option quantize_options[] = {
    O("-o", "FILE", "The quantized model to write (ONNX, QDQ form). Required."),
    O("--quantize", "int8|auto", "int8 (default), or auto with --max-drop (as kiln compile)."),
    O("--calibrate", "PATH", "Calibration inputs, as kiln compile --calibrate. Required."),
    O("--calibration", "METHOD", "minmax (default), percentile[=P] or entropy."),
    O("--activations", "uint8|int8", "Activation type (default uint8)."),
    O("--keep-float", "NODE,..", "Leave these layers in float."),
    O("--max-drop", "X", "--quantize auto's bound on the outputs' relative RMS error."),
    O("--report", "FILE", "Write the report as JSON to FILE."),
    LOAD_OPTIONS,
    QUIET_OPTIONS,
    TALK_OPTIONS,
    {0},
};

static const cli_option help_options[] = {
    O("--man", NULL, "Print the man page kiln(1) in man(7) format."),
    O("--markdown", NULL, "Print this reference as Markdown (docs/cli.md)."),
    O("--targets", NULL,
      "Print the targets of --target as a Markdown table: name, LLVM triple and CPU, vector "
      "width and registers, int8 dot product, bare metal, C compiler flags (docs/targets.md)."),
    O("--cc-flags", "T",
      "Print the options that select target T for the C compiler building the generated code "
      "into firmware (GCC/Clang -mcpu, -mthumb, -mfloat-abi, -mfpu) on one line; an empty "
      "line for a hosted target. CMake's kiln_target_cc_flags() reads it."),
    {0},
};

const cli_command cli_commands[] = {
    {"compile", "compile a model to C99, an object file, LLVM IR or OpenCL",
     "kiln compile MODEL -o DIR [options]",
     "Compiles MODEL ahead of time. With --emit c (the default) it writes DIR/NAME.h and "
     "DIR/NAME.c: C99 that calls no allocator and writes no global, with the arena size a "
     "macro (docs/generated-c.md has the contract). With --emit obj, asm or llvm LLVM builds "
     "the same program for --target; NAME.h is the same.\n\n"
     "Inputs must have fixed shapes (--shape, --dim); inputs that carry shapes (Reshape's "
     "shape, Slice's starts) can be baked in with --bind. On success it prints the files "
     "written and the target, then the kernel count, the arena size, its lower bound (the "
     "largest total of bytes live at once) and the weights size. On failure nothing is "
     "written.",
     compile_options, cmd_compile},
    {"run", "run a model on inputs and write its outputs", "kiln run MODEL [options]",
     "Runs MODEL with a backend and prints each output as name: f32[48,10] [first values...].",
     run_options, cmd_run},
    {"inspect", "print the graph after passes: nodes, shapes, parameters, FLOPs",
     "kiln inspect MODEL [options]",
     "Prints the graph after the passes in the text format of docs/ir-format.md, then the "
     "FLOPs of each node that computes (its count and share of the total) and "
     "'; N nodes, N parameters, N FLOPs per run'. FLOPs count a multiply-add as 2 and are an "
     "estimate for Conv, ConvTranspose, Gemm and MatMul (their integer forms too) plus one per "
     "output element of a bias add and of elementwise ops; fused epilogues, pooling and data "
     "movement count 0. A node whose "
     "output shape is symbolic shows '?' and the total is unknown: fix the shapes with --dim "
     "or --shape.",
     inspect_options, cmd_inspect},
    {"bench", "compile once, time repeated runs: latency, compile time, GFLOP/s",
     "kiln bench MODEL [options]",
     "Compiles MODEL once, runs it untimed for at least --warmup runs and --warmup-ms ms, then "
     "--runs times timed on the same "
     "inputs, and prints the load and compile times, the first run, the median and minimum "
     "latency, the FLOPs of one run and GFLOP/s at the median. FLOPs are counted as kiln "
     "inspect estimates them (2 per multiply-add of a convolution or matrix product, 1 per "
     "bias add and per output of an elementwise op) on the graph after shape inference and "
     "constant folding for the benchmarked shapes. Compile time covers passes, lowering and "
     "planning and, for c, "
     "emitting and $CC; for llvm, optimization and the JIT. bench/run.sh compares kiln with "
     "ONNX Runtime (not part of CTest).",
     bench_options, cmd_bench},
    {"tune", "measure candidate schedules per kernel and write the fastest as a schedule file",
     "kiln tune MODEL -o FILE.sched [options]",
     "Takes the passes' own schedule of each kernel as the baseline (as --dump-schedule writes "
     "it) and builds a few candidates per kernel: the register tile one row or one vector "
     "smaller or larger, on a float pointwise convolution or MatMul/Gemm tiles of vectors of "
     "half the lanes (about twice the vectors, the rows cut to fit the registers), the "
     "other Winograd tiles (1, 2, 4) where the kernel has one, the "
     "Winograd tiles where a 3x3 the winograd pass can take is direct, span tiles against "
     "tiles of one row where a float convolution's output rows are narrower than its tile, the "
     "GotoBLAS order's blocks of rows (mc) for a float MatMul or Gemm, the "
     "other padding or prefetch choice where it has one, an integer stem's channel words "
     "where it has merged words (split), a Transpose's blocks of output columns (tblock) and "
     "a Softmax's rows a step (smrows), and with --threads above 1 the "
     "parallel split halved and doubled. Round j compiles the model once with candidate j of "
     "every kernel and runs it beside the baseline (compiled once), run by run interleaved, "
     "timing each kernel over --runs runs (a hook around each kernel, as bench --profile); "
     "per kernel the candidate with the best ratio to its round's baseline wins if it is at "
     "least 1% faster. A confirmation round runs the winners together beside the baseline "
     "and keeps a change only if it is 1% faster there too. A candidate whose compile or "
     "run fails is dropped (its kernel's, where the message names the kernel's node; else "
     "its round's), listed under its kernel in the table, and never written. The result is "
     "compiled once more "
     "and its schedule written to FILE (through a temporary name: a failure leaves no file). "
     "Prints a table (kernel, node, the baseline's and the best candidate's time in us in "
     "the winner's round and in the confirmation, the fields changed) and the whole model's "
     "median time with the default and with FILE, run by run interleaved. Compiling with "
     "--schedule FILE gives the same code every time; docs/tuning.md describes the search and "
     "a measured example.",
     tune_options, cmd_tune},
    {"check-onnx", "run ONNX backend test folders and compare outputs",
     "kiln check-onnx DIR... [options]",
     "Runs ONNX backend tests: each DIR is a test folder (model.onnx and "
     "test_data_set_N/{input,output}_K.pb) or a folder of them. Outputs are compared with "
     "rtol 1e-3 and atol 1e-5 (|got - want| <= atol + rtol * |want|), NaN equal to NaN, "
     "infinities exact, integers and strings exact, dtype and shape exact. Tests run in "
     "forked processes (--batch), each test with its own time limit, so a crash or hang is "
     "that test's failure.\n\n"
     "Each failure is printed as 'FAIL name: reason'; the last line is 'N passed, N failed', "
     "with ', N skipped' when --known-failures skipped listed failures.",
     check_options, cmd_check_onnx},
    {"quantize", "quantize a model after calibration and write it as a QDQ ONNX model",
     "kiln quantize MODEL --calibrate PATH -o FILE [options]",
     "Calibrates MODEL on --calibrate's inputs and quantizes it as kiln compile --quantize does "
     "(docs/quantization.md), then writes the quantized model as standard ONNX in QDQ form: "
     "QuantizeLinear/DequantizeLinear around each quantized Conv, MatMul and Gemm, weights "
     "int8 per output channel and biases int32 as initializers with their DequantizeLinear. "
     "Other runtimes (ONNX Runtime) run the same quantization from it; kiln compiles it to the "
     "same integer kernels as --quantize. BatchNormalization is folded into the weights first. "
     "Prints the report table (as --quantize), then the file written. Needs opset 13 or later "
     "(per-channel DequantizeLinear).",
     quantize_options, cmd_quantize},
    {"help", "print this reference, the man page or docs/cli.md",
     "kiln help [COMMAND | --man | --markdown | --targets | --cc-flags T]",
     "Prints the help of COMMAND (as kiln COMMAND --help), or of kiln.", help_options, cmd_help},
    {0},
};

/* What every command shares: printed after the command list of `kiln --help`, as the
 * DESCRIPTION of kiln(1) and as the opening of docs/cli.md. */
static const char *general =
    "kiln is an ahead-of-time compiler for ONNX models: it compiles a model to standalone C99 "
    "for firmware, to native code through LLVM (JIT in process, or object files for x86-64, "
    "AArch64 and Cortex-M) or to OpenCL kernels.\n\n"
    "Models are ONNX files (opsets 1 to 21, IR versions up to 10). Tensor files are NumPy .npy or "
    "ONNX TensorProto "
    ".pb. Every command takes --help; every command that loads a model takes --shape, --dim "
    "and --length.\n\n"
    "Exit codes: 0 success; 1 bad model or bad input, with one line on stderr naming the "
    "file, and the node and its op where there is one (kiln: FILE: node 'NAME' (OP): "
    "problem); 2 usage error; 3 internal error.";

const cli_command *cli_command_find(const char *name) {
    for (const cli_command *c = cli_commands; c->name; c++)
        if (!strcmp(c->name, name)) return c;
    return NULL;
}

/* ---- --help: plain text, 80 columns ---- */

/* Writes text from column `col` (the cursor's), wrapping at 80 to `indent`. */
static void wrap(FILE *f, const char *s, size_t len, int col, int indent) {
    const char *end = s + len;
    while (s < end) {
        while (s < end && *s == ' ') s++;
        const char *w = s;
        while (w < end && *w != ' ') w++;
        int n = (int)(w - s);
        if (n == 0) break;
        if (col > indent && col + 1 + n > 80) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(s, 1, (size_t)n, f);
        col += n;
        s = w;
    }
}

/* Paragraphs of text (blank-line separated, "- " items hanging) wrapped at 80. */
static void text_paragraphs(FILE *f, const char *text, int indent) {
    for (const char *p = text; *p;) {
        const char *e = strstr(p, "\n\n");
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool item = !strncmp(p, "- ", 2);
        fprintf(f, "%*s", indent, "");
        wrap(f, p, len, indent, indent + (item ? 2 : 0));
        fputc('\n', f);
        if (!e) break;
        p = e + 2;
        fputc('\n', f);
    }
}

static void option_label(const cli_option *o, char *buf, size_t cap) {
    if (o->shown)
        snprintf(buf, cap, "%s", o->shown);
    else
        snprintf(buf, cap, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void cli_help_command(FILE *f, const cli_command *c) {
    fprintf(f, "usage: %s\n", c->usage);
    text_paragraphs(f, c->about, 0);
    fputc('\n', f);
    for (const cli_option *o = c->options; o->name; o++) {
        if (!o->help) continue;
        char label[64];
        option_label(o, label, sizeof label);
        int col = fprintf(f, "  %s", label);
        if (col > 24) {
            fprintf(f, "\n%*s", 26, "");
        } else {
            fprintf(f, "%*s", 26 - col, "");
        }
        wrap(f, o->help, strlen(o->help), 26, 26);
        fputc('\n', f);
    }
}

void cli_help_main(FILE *f) {
    fprintf(f, "usage: kiln COMMAND [options]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-11s %s\n", c->name, c->summary);
    fprintf(f, "\n'kiln COMMAND --help' describes a command; 'man kiln' all of them.\n\n");
    text_paragraphs(f, general, 0);
}

/* ---- kiln(1) ---- */

/* man(7) text: backslashes escaped, hyphens as \-, a leading dot or quote guarded, a
 * break point (\:) after a comma inside a word (the long default pass lists). */
static void man_text(FILE *f, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\')
            fputs("\\e", f);
        else if (s[i] == ',' && i + 1 < len && s[i + 1] != ' ' && s[i + 1] != '\n')
            fputs(",\\:", f);
        else if (s[i] == '-')
            fputs("\\-", f);
        else if ((s[i] == '.' || s[i] == '\'') && (i == 0 || s[i - 1] == '\n'))
            fprintf(f, "\\&%c", s[i]);
        else
            fputc(s[i], f);
    }
}

static void man_paragraphs(FILE *f, const char *text) {
    for (const char *p = text; *p;) {
        const char *e = strstr(p, "\n\n");
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!strncmp(p, "- ", 2)) {
            fputs(".IP \\(bu 2\n", f);
            man_text(f, p + 2, len - 2);
        } else {
            fputs(".PP\n", f);
            man_text(f, p, len);
        }
        fputc('\n', f);
        if (!e) break;
        p = e + 2;
    }
}

void cli_help_man(FILE *f) {
    fputs(".TH KILN 1 \"\" \"kiln " KILN_VERSION "\" \"User Commands\"\n"
          ".SH NAME\nkiln \\- ahead\\-of\\-time compiler for ONNX models\n.SH SYNOPSIS\n",
          f);
    for (const cli_command *c = cli_commands; c->name; c++) {
        fputs(".B ", f);
        man_text(f, c->usage, strlen(c->usage));
        fputs("\n.br\n", f);
    }
    fputs(".SH DESCRIPTION\n", f);
    man_paragraphs(f, general);
    fputs(".SH COMMANDS\n", f);
    for (const cli_command *c = cli_commands; c->name; c++) {
        fputs(".SS ", f);
        man_text(f, c->usage, strlen(c->usage));
        fputc('\n', f);
        man_paragraphs(f, c->about);
        for (const cli_option *o = c->options; o->name; o++) {
            if (!o->help) continue;
            char label[64];
            option_label(o, label, sizeof label);
            fputs(".TP\n\\fB", f);
            man_text(f, label, strlen(label));
            fputs("\\fR\n", f);
            man_text(f, o->help, strlen(o->help));
            fputc('\n', f);
        }
    }
    fputs(".SH SEE ALSO\nThe documentation installed with kiln (share/doc/kiln), starting with "
          "README.md.\n",
          f);
}

/* ---- docs/cli.md ---- */

/* Markdown text: "docs/X.md" becomes a link to X.md (the page is in docs/); '<' is
 * escaped so DIR/<name>.npy is not read as HTML. */
static void md_text(FILE *f, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (!strncmp(s + i, "docs/", 5) && i + 5 < len) {
            size_t j = i + 5;
            while (j < len && (s[j] == '-' || s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z'))) j++;
            if (j + 3 <= len && !strncmp(s + j, ".md", 3)) {
                int n = (int)(j + 3 - (i + 5));
                fprintf(f, "[%.*s](%.*s)", n, s + i + 5, n, s + i + 5);
                i = j + 2;
                continue;
            }
        }
        if (s[i] == '<') fputc('\\', f);
        fputc(s[i], f);
    }
}

static void md_paragraphs(FILE *f, const char *text) {
    for (const char *p = text; *p;) {
        const char *e = strstr(p, "\n\n");
        size_t len = e ? (size_t)(e - p) : strlen(p);
        md_text(f, p, len);
        fputs("\n\n", f);
        if (!e) break;
        p = e + 2;
    }
}

void cli_help_markdown(FILE *f) {
    fputs("# The kiln command line\n\n"
          "<!-- Generated by `kiln help --markdown` from tools/help.c, the table behind --help "
          "and the man page; CTest checks it is current. Do not edit. -->\n\n",
          f);
    md_paragraphs(f, general);
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "- [kiln %s](#kiln-%s): %s\n", c->name, c->name, c->summary);
    for (const cli_command *c = cli_commands; c->name; c++) {
        fprintf(f, "\n## kiln %s\n\n```\n%s\n```\n\n", c->name, c->usage);
        md_paragraphs(f, c->about);
        for (const cli_option *o = c->options; o->name; o++) {
            if (!o->help) continue;
            char label[64];
            option_label(o, label, sizeof label);
            fprintf(f, "- `%s`: ", label);
            md_text(f, o->help, strlen(o->help));
            fputc('\n', f);
        }
    }
}

void cli_help_targets(FILE *f) {
    fputs("| target | LLVM triple | CPU | vector bits | vector registers | int8 dot product | "
          "bare metal | C compiler flags | what it is |\n"
          "| --- | --- | --- | ---: | ---: | --- | --- | --- | --- |\n",
          f);
    for (const kn_target *const *t = kn_target_list(); *t; t++) {
        char bits[16] = "measured", regs[16] = "measured";
        if ((*t)->vector_bits) { /* "native" leaves them to kn_target_resolve() */
            snprintf(bits, sizeof bits, "%d", (*t)->vector_bits);
            snprintf(regs, sizeof regs, "%d", (*t)->vector_registers);
        }
        bool dev = (*t)->kind == KN_TARGET_GPU; /* OpenCL: vectors inside a work-item; the
                                                   device's compiler allocates registers */
        if (dev) snprintf(regs, sizeof regs, "-");
        char cc[128] = "-";
        if ((*t)->cc_flags) snprintf(cc, sizeof cc, "`%s`", (*t)->cc_flags);
        fprintf(f, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n", (*t)->name,
                dev            ? "-"
                : (*t)->triple ? (*t)->triple
                               : "the host's",
                dev         ? "-"
                : (*t)->cpu ? (*t)->cpu
                            : "the host's",
                bits, regs,
                dev                  ? "-"
                : !(*t)->vector_bits ? "measured"
                                     : kn_dot_name((*t)->int8_dot),
                (*t)->embedded ? "yes" : "no", cc, (*t)->description);
    }
}

int cmd_help(int argc, char **argv) {
    const char *value;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("help"));
            return EXIT_OK;
        } else if (cli_flag(argv[i], "--man")) {
            cli_help_man(stdout);
            return EXIT_OK;
        } else if (cli_flag(argv[i], "--markdown")) {
            cli_help_markdown(stdout);
            return EXIT_OK;
        } else if (cli_flag(argv[i], "--targets")) {
            cli_help_targets(stdout);
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "--cc-flags", &value)) {
            const kn_target *t = kn_target_find(value);
            if (!t)
                return cli_usage_error("help", "unknown target '%s' (%s)", value,
                                       cli_target_names());
            printf("%s\n", t->cc_flags ? t->cc_flags : "");
            return EXIT_OK;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("help", argv[i]);
        } else {
            const cli_command *c = cli_command_find(argv[i]);
            if (!c) return cli_usage_error("help", "unknown command '%s'", argv[i]);
            cli_help_command(stdout, c);
            return EXIT_OK;
        }
    }
    cli_help_main(stdout);
    return EXIT_OK;
}
