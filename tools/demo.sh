#!/bin/sh
# The README's first command: installs what is missing, builds kiln, compiles the
# bundled digits CNN to standalone C, builds that C with the system compiler into a
# small program, and runs it on 48 test images: predictions, accuracy, arena size
# and weights size.
set -e
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target kiln >/dev/null
echo "== kiln compile examples/digits/digits.onnx -o build/demo --name digits --shape image=48,1,8,8"
build/kiln compile examples/digits/digits.onnx -o build/demo --name digits --shape image=48,1,8,8
cmake --build build -j"$(nproc)" --target kiln_core >/dev/null
echo "== cc -std=c99 -O2 -c build/demo/digits.c; cc examples/digits/demo.c digits.o -> build/demo/digits_demo"
cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -c build/demo/digits.c -o build/demo/digits.o
# demo.c reads the .npy test images with kiln's tensor-file reader; the model needs nothing
cc -std=c11 -O2 -I build/demo -I . examples/digits/demo.c build/demo/digits.o \
  build/libkiln_core.a build/libkiln_onnx_proto.a -lprotobuf-c -lm -o build/demo/digits_demo
echo "== build/demo/digits_demo (48 test images)"
build/demo/digits_demo examples/digits/test_images.npy examples/digits/test_labels.npy
