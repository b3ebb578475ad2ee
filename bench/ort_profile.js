// ONNX Runtime per-node profile (session option enableProfiling): argv MODEL RUNS THREADS SHAPE
// PREFIX; ORT names the onnxruntime-node folder; writes PREFIX_<date>.json, Chrome trace events
// whose "Node" entries give each node's kernel time in us (wall) run by run (the 3 warm-up
// runs of bench/ort_common.js's session first); prints the file's name where ORT returns it
// (onnxruntime-node 1.30 writes the file and returns nothing).
const { session } = require('./ort_common');
(async () => {
  const { runs, s, feeds } = await session({ enableProfiling: true, profileFilePrefix: process.argv[6] });
  for (let i = 0; i < runs; i++) await s.run(feeds);
  const f = s.endProfiling();
  if (f) console.log(f);
})().catch(e => { console.error(String(e)); process.exit(1); });
