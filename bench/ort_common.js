// ONNX Runtime for the bench scripts (bench/ort_pair.js for bench/run.sh, bench/ort_time.js
// for bench/quant_compare.sh); ORT names the onnxruntime-node folder.
const ort = require(require('path').resolve(process.env.ORT));

// argv MODEL RUNS THREADS SHAPE: one session on THREADS intra-op threads, a random input of
// SHAPE (comma-separated) in [-1, 1), 3 warm-up runs; extra: more session options.
async function session(extra = {}) {
  const [model, runs, threads, shape] = [process.argv[2], +process.argv[3], +process.argv[4],
                                         process.argv[5].split(',').map(Number)];
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads,
                                                       interOpNumThreads: 1,
                                                       executionMode: 'sequential',
                                                       ...extra });
  const x = new Float32Array(shape.reduce((a, b) => a * b)).map(() => Math.random() * 2 - 1);
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, shape) };
  for (let i = 0; i < 3; i++) await s.run(feeds);
  return { runs, s, feeds, version: ort.env.versions ? ort.env.versions.common : '?' };
}

// The median of t (sorted in place).
function median(t) {
  t.sort((a, b) => a - b);
  const n = t.length;
  return n % 2 ? t[n >> 1] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

module.exports = { session, median };
