// ONNX Runtime per-node profile (session option enableProfiling): argv MODEL RUNS THREADS SHAPE
// PREFIX; ORT names the onnxruntime-node folder; writes PREFIX_<date>.json, Chrome trace events
// whose "Node" entries give each node's kernel time in us (wall) run by run.
const ort = require(require('path').resolve(process.env.ORT));
(async () => {
  const [model, runs, threads, shape, prefix] = [process.argv[2], +process.argv[3], +process.argv[4],
      process.argv[5].split(',').map(Number), process.argv[6]];
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1,
      executionMode: 'sequential', enableProfiling: true, profileFilePrefix: prefix });
  const x = new Float32Array(shape.reduce((a, b) => a * b)).map(() => Math.random() * 2 - 1);
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, shape) };
  for (let i = 0; i < runs; i++) await s.run(feeds);
  const f = s.endProfiling ? s.endProfiling() : null;
  if (f) console.log(f);
})().catch(e => { console.error(String(e)); process.exit(1); });
