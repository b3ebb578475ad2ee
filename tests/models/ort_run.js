// Authoring-time reference runner (not used by the tests): runs an ONNX model with
// ONNX Runtime (npm's onnxruntime-node) on inputs given as raw little-endian files and
// writes each output the same way. usage: node ort_run.js MANIFEST.json
// The manifest: {"model": path, "inputs": [{"name", "type", "dims", "file"}],
//                "out_dir": path}; writes out_dir/outputs.json listing the outputs.
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');
const arrays = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array, float16: Uint16Array, int16: Int16Array,
};
(async () => {
  const m = JSON.parse(fs.readFileSync(process.argv[2]));
  const opts = {graphOptimizationLevel: m.opt || 'disabled', intraOpNumThreads: 1};
  const s = await ort.InferenceSession.create(m.model, opts);
  const feeds = {};
  for (const i of m.inputs) {
    const buf = fs.readFileSync(i.file);
    const A = arrays[i.type];
    const data = new A(buf.buffer, buf.byteOffset, buf.byteLength / A.BYTES_PER_ELEMENT);
    feeds[i.name] = new ort.Tensor(i.type, data, i.dims);
  }
  const r = await s.run(feeds);
  const outs = [];
  for (const name of s.outputNames) {
    const t = r[name];
    const file = path.join(m.out_dir, 'out_' + outs.length + '.bin');
    const d = t.data;
    fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    outs.push({name, type: t.type, dims: t.dims.map(Number), file});
  }
  fs.writeFileSync(path.join(m.out_dir, 'outputs.json'), JSON.stringify(outs));
})().catch(e => { console.error(String(e)); process.exit(1); });
