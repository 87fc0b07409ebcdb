// Headless Chromium loads the dashboard of a real coordinator while a real
// worker tunes a small matmul, then checks what the page shows against the
// JSON API: the job appears and ends without a reload (polling), the roofline
// chart draws one point per measured candidate with the best highlighted, and
// the tables show the API's numbers. Saves a screenshot as a test artifact.
//
// Run by ctest (tests/CMakeLists.txt) with NODE_PATH pointing at the
// dashboard's node_modules (playwright-core). Exit 0 = pass, 1 = fail,
// 77 = skipped because Chromium is absent.
'use strict';

const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// The problem tuned: --problem, default an f32 matmul. A bf16 one (a second ctest)
// checks the AMX bf16 ceiling too: drawn where the worker's CPU has AMX, not elsewhere.
let PROBLEM = 'matmul:m=64,n=64,k=64:f32';
const TRIALS = 8;
const DEADLINE_MS = 180_000;

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) {
      throw new Error(`usage: dashboard_browser_test.cjs --coordinator BIN --worker BIN --cli BIN --chromium PATH --artifacts DIR [--problem KEY] (bad argument '${argv[i]}')`);
    }
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const name of ['coordinator', 'worker', 'cli', 'chromium', 'artifacts']) {
    if (!args[name]) throw new Error(`missing --${name}`);
  }
  if (args.problem) PROBLEM = args.problem;
  return args;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, fn, timeoutMs = 60_000, intervalMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

// A child process with its output in a log file.
function start(name, argv, dir) {
  const log = path.join(dir, `${name}.log`);
  const out = fs.openSync(log, 'a');
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', out, out] });
  child.logPath = log;
  return child;
}

function tail(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function run(bin, args) {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${bin} ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

async function api(base, route) {
  const response = await fetch(base + route);
  const body = await response.json();
  if (!response.ok) throw new Error(`GET ${route}: HTTP ${response.status}: ${body.error}`);
  return body;
}

const failures = [];
function check(condition, message) {
  if (!condition) failures.push(message);
}

// A displayed number agrees with the API's value at the shown precision.
function checkNumber(shown, expected, digits, what) {
  const value = Number.parseFloat(shown);
  const tolerance = 0.5 * 10 ** -digits + 1e-9;
  check(Number.isFinite(value) && Math.abs(value - expected) <= tolerance,
    `${what}: page shows '${shown}', API says ${expected}`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.chromium)) {
    console.log(`SKIPPED: no Chromium at ${args.chromium} (deploy/install-deps.sh installs Debian's chromium; or configure with -DMTUNE_CHROMIUM=PATH)`);
    return 77;
  }
  const { chromium } = require('playwright-core');

  // Only this run's artifacts: a stale failure screenshot would mislead.
  fs.rmSync(args.artifacts, { recursive: true, force: true });
  fs.mkdirSync(args.artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mtune-browser-'));
  const children = [];
  let browser = null;
  let page = null;
  let completed = false;
  try {
    const coordinator = start('coordinator', [args.coordinator,
      '--listen', '127.0.0.1:0', '--port-file', path.join(dir, 'port'),
      '--http', '127.0.0.1:0', '--http-port-file', path.join(dir, 'http-port'),
      '--db', path.join(dir, 'mtune.sqlite'), '--min-measure', '0.02'], dir);
    children.push(coordinator);
    const readPort = (file) => {
      try {
        return fs.readFileSync(path.join(dir, file), 'utf8').trim();
      } catch {
        return '';
      }
    };
    const grpcPort = await waitFor('the coordinator to listen', () => readPort('port'), 20_000)
      .catch((e) => { throw new Error(`${e.message}\n${tail(coordinator.logPath)}`); });
    const httpPort = await waitFor('the dashboard to listen', () => readPort('http-port'), 20_000);
    const address = `127.0.0.1:${grpcPort}`;
    const base = `http://127.0.0.1:${httpPort}`;

    browser = await chromium.launch({ executablePath: args.chromium, headless: true });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });

    // Loaded before there is any job: everything after this arrives by polling.
    await page.goto(`${base}/?poll=250`);
    await page.waitForFunction(() => window.mtune?.updates > 0, null, { timeout: 20_000 });
    check(await page.isVisible('#jobs-empty'), 'the page should say there is no job yet');

    const worker = start('worker', [args.worker, '--coordinator', address, '--cpu', '0',
      '--name', 'w0', '--give-up-after', '60'], dir);
    children.push(worker);
    // Calibration comes first: 35 s alone on a Zen 5 VM that reports a 508 MiB L3, so
    // 120 s, as tests/integration_test.cc waits for its workers.
    await page.waitForSelector('#workers tbody tr[data-worker="w0"]', { timeout: 120_000 })
      .catch((e) => { throw new Error(`${e.message}\n${tail(worker.logPath)}`); });

    const submitted = await run(args.cli, ['submit', '--coordinator', address, '--problem', PROBLEM,
      '--search', 'random', '--trials', String(TRIALS), '--seed', '5']);
    const jobId = Number(/job (\d+) submitted/.exec(submitted)?.[1]);
    if (!jobId) throw new Error(`cannot read the job id from: ${submitted}`);

    await page.waitForFunction((id) => window.mtune?.renderedJob?.id === id
      && window.mtune.renderedJob.state !== 'running', jobId, { timeout: DEADLINE_MS })
      .catch((e) => { throw new Error(`${e.message}\n${tail(coordinator.logPath)}\n${tail(worker.logPath)}`); });

    // The jobs table and the job detail come from separate requests of a poll: wait
    // until the table has caught up with the end of the job too.
    await page.waitForFunction((id) => {
      const cell = document.querySelector(`#jobs tbody tr[data-job-id="${id}"] [data-field=state]`);
      return cell && cell.textContent.trim() !== 'running';
    }, jobId, { timeout: 20_000 });

    // --- the JSON API, the reference for everything the page shows ----------
    const detail = await api(base, `/api/jobs/${jobId}`);
    const { results } = await api(base, `/api/results?job=${jobId}`);
    const { jobs } = await api(base, '/api/jobs');
    const { workers } = await api(base, '/api/workers');
    const ok = results.filter((r) => r.status === 'ok');
    check(detail.state === 'succeeded', `job ${jobId} ended ${detail.state}: ${detail.message}`);
    check(results.length === TRIALS, `${results.length} results stored, ${TRIALS} expected`);
    check(ok.length > 0, 'no candidate succeeded: nothing to draw');
    const best = detail.problem_details[0].best;

    // --- roofline: one point per measured candidate, the best highlighted ----
    const roofline = await page.evaluate(() => {
      const chart = window.mtune.charts.roofline;
      const area = chart.chartArea;
      return chart.data.datasets.map((dataset, i) => ({
        kind: dataset.mtuneKind,
        label: dataset.label,
        values: dataset.data.map((p) => [p.x, p.y]),
        // What Chart.js laid out: one element per point, inside the plot area.
        drawn: chart.getDatasetMeta(i).data.filter((e) => Number.isFinite(e.x) && Number.isFinite(e.y)
          && e.x >= area.left - 1 && e.x <= area.right + 1
          && e.y >= area.top - 1 && e.y <= area.bottom + 1).length,
        hidden: !chart.isDatasetVisible(i),
      }));
    });
    const points = roofline.filter((d) => d.kind === 'candidate' || d.kind === 'best');
    const drawn = points.reduce((n, d) => n + (d.hidden ? 0 : d.drawn), 0);
    check(drawn === ok.length, `roofline draws ${drawn} candidate points, the API has ${ok.length} measured candidates`);
    const bestSet = roofline.find((d) => d.kind === 'best');
    check(bestSet?.values.length === 1 && bestSet.values[0][1] === best.gflops,
      `the highlighted point should be the best (${best.gflops} GFLOP/s), got ${JSON.stringify(bestSet?.values)}`);
    const plotted = points.flatMap((d) => d.values.map((v) => v[1])).sort((a, b) => a - b);
    const measured = ok.map((r) => r.gflops).sort((a, b) => a - b);
    check(JSON.stringify(plotted) === JSON.stringify(measured),
      `roofline points ${JSON.stringify(plotted)} differ from the API's GFLOP/s ${JSON.stringify(measured)}`);
    const calibration = detail.targets[best.target_id].calibration;
    const ceilings = roofline.filter((d) => d.kind === 'ceiling');
    // bf16 problems: a second ceiling, the fastest bf16 multiply of the target.
    const bf16 = !PROBLEM.endsWith(':bf16') ? null
      : calibration.peak_gflops_amx_bf16 > 0 ? { value: calibration.peak_gflops_amx_bf16, label: 'AMX peak bf16' }
      : calibration.peak_gflops_bf16_dot > 0 ? { value: calibration.peak_gflops_bf16_dot, label: 'AVX512-BF16 dot peak bf16' }
      : null;
    check(ceilings.length === calibration.bandwidth.length + 1 + (bf16 ? 1 : 0),
      `${ceilings.length} ceilings drawn; ${calibration.bandwidth.length} bandwidth levels + the FMA peak` +
      `${bf16 ? ` + the ${bf16.label}` : ''} expected`);
    const bf16Line = ceilings.find((d) => d.label.includes('peak bf16'));
    check(bf16 ? bf16Line && bf16Line.label.startsWith(bf16.label) && bf16Line.values.every((v) => v[1] === bf16.value)
               : !bf16Line,
      bf16 ? `the ${bf16.label} line should sit at ${bf16.value} GFLOP/s, got ${JSON.stringify(bf16Line)}`
           : 'no bf16 peak line for this problem and target');
    const reads = roofline.filter((d) => d.kind === 'read_ceiling');
    const withRead = calibration.bandwidth.filter((b) => b.read_gbps > 0);
    check(withRead.length === calibration.bandwidth.length,
      `every level should have a read bandwidth, ${withRead.length} of ${calibration.bandwidth.length} do`);
    check(reads.length === withRead.length, `${reads.length} read ceilings drawn, ${withRead.length} expected`);
    const peak = ceilings.find((d) => d.label.startsWith('FMA peak'));
    check(peak && peak.values.every((v) => v[1] === calibration.peak_gflops_f32),
      `the FMA peak line should sit at ${calibration.peak_gflops_f32} GFLOP/s`);

    // --- convergence: the job's best-so-far line ends at the best -----------
    const convergence = await page.evaluate((id) => {
      const charts = [...window.mtune.charts.convergence.values()];
      return charts.map((c) => c.data.datasets.filter((d) => d.mtuneKind === 'best_so_far' && d.jobId === id)
        .map((d) => d.data.map((p) => p.y)));
    }, jobId);
    const line = convergence[0]?.[0] ?? [];
    check(convergence.length === 1, `${convergence.length} convergence charts, 1 expected (one problem)`);
    check(line.length === detail.problem_details[0].convergence.filter((p) => p.best_so_far != null).length,
      `the convergence line has ${line.length} points`);
    check(line.at(-1) === best.gflops, `convergence ends at ${line.at(-1)}, the best is ${best.gflops}`);

    // --- tables against the API ----------------------------------------------
    const jobRow = `#jobs tbody tr[data-job-id="${jobId}"]`;
    const summary = jobs.find((j) => j.id === jobId);
    check(await page.textContent(`${jobRow} [data-field=progress]`) === `${summary.trials_done} / ${summary.trials_total}`,
      'jobs table progress differs from the API');
    checkNumber(await page.textContent(`${jobRow} [data-field=best_gflops]`), best.gflops, 2, 'jobs table best GFLOP/s');
    check((await page.textContent(`${jobRow} [data-field=state]`)).trim() === summary.state, 'jobs table state');

    const problemRow = `#problems tbody tr[data-problem="${PROBLEM}"]`;
    checkNumber(await page.textContent(`${problemRow} [data-field=gflops]`), best.gflops, 2, 'best GFLOP/s');
    checkNumber(await page.textContent(`${problemRow} [data-field=gbps]`), best.gbps, 2, 'best GB/s');
    checkNumber(await page.textContent(`${problemRow} [data-field=roofline_gflops]`), best.roofline_gflops, 2, 'roofline GFLOP/s');
    checkNumber(await page.textContent(`${problemRow} [data-field=fraction_of_roofline]`),
      100 * best.fraction_of_roofline, 1, 'fraction of roofline (%)');
    checkNumber(await page.textContent(`${problemRow} [data-field=arithmetic_intensity]`),
      detail.problem_details[0].figures.arithmetic_intensity, 2, 'arithmetic intensity');
    check(await page.textContent(`${problemRow} [data-field=ok]`) === String(ok.length), 'trials ok');
    // The job names no template: the one chosen for the worker's CPU, as stored.
    const template = (await page.textContent(`${problemRow} [data-field=template]`)).trim();
    check(template !== '' && template === detail.problem_details[0].template && template === best.template,
      `template column ${template}, API ${detail.problem_details[0].template}, best's ${best.template}`);

    const trialRows = await page.$$eval('#trials tbody tr', (rows) => rows.map((row) => ({
      trial: row.querySelector('[data-field=trial]').textContent,
      status: row.querySelector('[data-field=status]').textContent,
      gflops: row.querySelector('[data-field=gflops]').textContent,
      gbps: row.querySelector('[data-field=gbps]').textContent,
    })));
    check(trialRows.length === results.length, `trials table has ${trialRows.length} rows, the API ${results.length}`);
    results.forEach((r, i) => {
      const row = trialRows[i];
      if (!row) return;
      check(row.trial === String(r.trial) && row.status === r.status, `trials row ${i}: ${JSON.stringify(row)} vs trial ${r.trial} ${r.status}`);
      if (r.status === 'ok') {
        checkNumber(row.gflops, r.gflops, 2, `trial ${r.trial} GFLOP/s`);
        checkNumber(row.gbps, r.gbps, 2, `trial ${r.trial} GB/s`);
      }
    });

    const failedRows = await page.$$eval('#failures tbody tr', (rows) => rows.map((row) =>
      [row.dataset.status, row.querySelector('[data-field=count]').textContent]));
    check(JSON.stringify(Object.fromEntries(failedRows.map(([s, n]) => [s, Number(n)])))
      === JSON.stringify(detail.failed_by_status), `failures table ${JSON.stringify(failedRows)} vs API ${JSON.stringify(detail.failed_by_status)}`);

    const w = workers.find((x) => x.name === 'w0');
    const workerRow = '#workers tbody tr[data-worker="w0"]';
    check(await page.textContent(`${workerRow} [data-field=cpu]`) === String(w.cpu), 'worker core');
    checkNumber(await page.textContent(`${workerRow} [data-field=peak_gflops_f32]`), w.calibration.peak_gflops_f32, 1, 'worker FMA peak');
    for (const level of w.calibration.bandwidth) {
      checkNumber(await page.textContent(`${workerRow} [data-field=gbps_${level.level}]`), level.gbps, 1, `worker ${level.level} GB/s`);
    }

    // A confirmation job is listed as one, not under an empty search name.
    const confirmed = await run(args.cli, ['confirm', '--coordinator', address, '--problem', PROBLEM, '--top', '1']);
    const confirmId = Number(/job (\d+) submitted/.exec(confirmed)?.[1]);
    if (!confirmId) throw new Error(`cannot read the confirmation job's id from: ${confirmed}`);
    const confirmCell = `#jobs tbody tr[data-job-id="${confirmId}"] [data-field=search]`;
    await page.waitForSelector(confirmCell, { timeout: 20_000 });
    check((await page.textContent(confirmCell)) === 'confirm best 1',
      `the confirmation job's search cell reads "${await page.textContent(confirmCell)}"`);
    check(pageErrors.length === 0, `the page logged errors: ${pageErrors.join('; ')}`);

    const shot = path.join(args.artifacts, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`job ${jobId}: ${drawn} of ${ok.length} measured candidates drawn, best ${best.gflops.toFixed(2)} GFLOP/s `
      + `(${(100 * best.fraction_of_roofline).toFixed(1)} % of roofline); screenshot ${shot}`);
    completed = true;
  } finally {
    if (page && (!completed || failures.length)) {
      await page.screenshot({ path: path.join(args.artifacts, 'dashboard-failed.png'), fullPage: true }).catch(() => {});
    }
    if (browser) await browser.close().catch(() => {});
    for (const child of children.reverse()) {
      child.kill('SIGTERM');
      await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    if (!completed || failures.length) {
      for (const child of children) fs.copyFileSync(child.logPath, path.join(args.artifacts, path.basename(child.logPath)));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length) {
    console.error(`FAILED (${failures.length}):\n  ${failures.join('\n  ')}`);
    return 1;
  }
  console.log('PASSED');
  return 0;
}

main().then((code) => process.exit(code), (error) => {
  console.error(`FAILED: ${error.stack ?? error}`);
  process.exit(1);
});
