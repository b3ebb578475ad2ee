// Writes the standalone Halide runtime object that kiln's OpenCL host code links
// against (thread pool, device interface, OpenCL loader). Run at build time by
// runtime/CMakeLists.txt; the only C++ in kiln, because Halide's compiler API is C++.
//
// usage: halide_runtime_gen OUT.o [TARGET]   (TARGET defaults to host-opencl)
#include <Halide.h>

#include <cstdio>
#include <exception>

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s OUT.o [TARGET]\n", argv[0]);
        return 2;
    }
    const char *target = argc == 3 ? argv[2] : "host-opencl";
    try {
        Halide::Target t(target);
        if (!t.has_feature(Halide::Target::OpenCL)) {
            std::fprintf(stderr, "halide_runtime_gen: target '%s' lacks the opencl feature\n",
                         target);
            return 1;
        }
        Halide::compile_standalone_runtime(argv[1], t);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "halide_runtime_gen: %s\n", e.what());
        return 1;
    }
    return 0;
}
