// bench/quant_compare.sh's ONNX Runtime timer: argv MODEL RUNS THREADS SHAPE (ort_common.js);
// prints "median_ms min_ms version cpu_ms_per_run".
const { session, median } = require('./ort_common.js');
(async () => {
  const { runs, s, feeds, version } = await session();
  const t = [], c0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const c = process.cpuUsage(c0);
  const med = median(t);
  console.log(med.toFixed(4), t[0].toFixed(4), version, ((c.user + c.system) / 1000 / runs).toFixed(4));
})().catch(e => { console.error(String(e)); process.exit(1); });
