// bench/ort_contrib.py's runner: argv MODEL IN.json OUT.json. Runs MODEL once in ONNX Runtime
// (ORT names the onnxruntime-node folder, 1 thread, optimizations off so that each contrib
// operator runs as its own kernel) on the inputs of IN.json ({name: {type, dims, data
// (base64 of the raw little-endian elements)}}) and writes its outputs in the same form.
const fs = require('fs');
const ort = require(require('path').resolve(process.env.ORT));
const arrays = { bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, float32: Float32Array, int32: Int32Array };
(async () => {
  const [model, inp, out] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1,
                                                       graphOptimizationLevel: 'disabled' });
  const feeds = {};
  for (const [k, v] of Object.entries(JSON.parse(fs.readFileSync(inp)))) {
    const b = Buffer.from(v.data, 'base64');
    const A = arrays[v.type];
    const a = new A(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    feeds[k] = new ort.Tensor(v.type, a, v.dims);
  }
  const r = await s.run(feeds);
  const res = {};
  for (const [k, t] of Object.entries(r))
    res[k] = { type: t.type, dims: t.dims,
               data: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)
                         .toString('base64') };
  fs.writeFileSync(out, JSON.stringify(res));
  console.log(ort.env.versions ? ort.env.versions.common : '?');
})().catch(e => { console.error(e.message || e); process.exit(1); });
