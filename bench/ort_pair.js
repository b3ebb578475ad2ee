// bench/run.sh's interleaved timer: argv MODEL RUNS THREADS SHAPE (ort_common.js), then the
// `kiln bench --paced` command line. One ORT session and the kiln process take turns of one
// untimed and CHUNK timed runs each, kiln first on even turns; prints "kiln_median
// ort_median ort_version" and the kiln JSON summary on a second line.
const { session, median } = require('./ort_common.js');
const { spawn } = require('child_process');
const readline = require('readline');
(async () => {
  const runs = +process.argv[3];
  const chunk = Math.max(1, +(process.env.CHUNK || 2));
  const k = spawn(process.argv[6], process.argv.slice(7), { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: k.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    if (r.done) throw new Error('kiln bench ended');
    return r.value;
  };
  const { s, feeds, version } = await session();
  while ((await next()) !== 'ready');
  const tk = [], to = [];
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const kiln = async n => { // the first of n + 1 runs untimed
    k.stdin.write(`${n + 1}\n`);
    tk.push(...(await next()).trim().split(' ').slice(1).map(Number));
  };
  const onnx = async n => {
    await s.run(feeds);
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await s.run(feeds);
      to.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  // after its runs ORT's pool keeps a core spinning for about 30 ms (kiln's: 0.2 ms)
  const settle = +(process.env.ORT_SETTLE_MS || 50);
  for (let turn = 0, left = runs; left > 0; turn++, left -= chunk) {
    const n = Math.min(chunk, left);
    if (turn % 2 === 0) { await kiln(n); await sleep(1); await onnx(n); await sleep(settle); }
    else { await onnx(n); await sleep(settle); await kiln(n); await sleep(1); }
  }
  k.stdin.end();
  let json = '';
  for (let r; !(r = await lines.next()).done;) json = r.value;
  console.log(median(tk).toFixed(4), median(to).toFixed(4), version);
  console.log(json);
})().catch(e => { console.error(String(e)); process.exit(1); });
