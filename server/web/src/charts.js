// The page's two charts, drawn with Chart.js: the roofline (log-log arithmetic
// intensity vs GFLOP/s, measured ceilings and every measured candidate) and
// convergence (best GFLOP/s so far vs trial, one line per job on the problem; GB/s
// for a transpose or a copy, which have no arithmetic).
import {
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
} from 'chart.js';
import { fixed, knobs } from './format.js';

Chart.register(ScatterController, LineController, PointElement, LineElement, LinearScale,
  LogarithmicScale, Legend, Tooltip);

const LEVEL_COLORS = { L1: '#2b8a3e', L2: '#1971c2', L3: '#7048e8', DRAM: '#c2255c' };
const JOB_COLORS = ['#1f6feb', '#e8590c', '#2b8a3e', '#9c36b5', '#c2255c', '#0c8599', '#5c940d', '#495057'];

// Every chart: no animation (live data would never settle), size from its box.
const COMMON = { animation: false, responsive: true, maintainAspectRatio: false };

function tooltipLabel(ctx) {
  return ctx.raw?.label ?? ctx.dataset.label;
}

// How a ceiling's fastest loop ran, for its legend: " (streaming stores, 8 streams)";
// empty for ordinary stores over one stream (or a worker that did not record it).
function loopNote(streamingStores, streams) {
  const parts = [];
  if (streamingStores) parts.push('streaming stores');
  if (streams > 1) parts.push(`${streams} streams`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

// Log axes label powers of ten only (1-2-5 labels crowd a small chart).
function decadeLabel(value) {
  const exponent = Math.log10(value);
  return Math.abs(exponent - Math.round(exponent)) < 1e-9 ? String(Number(value.toPrecision(1))) : '';
}

export function createRoofline(canvas) {
  return new Chart(canvas, {
    type: 'scatter',
    data: { datasets: [] },
    options: {
      ...COMMON,
      scales: {
        x: {
          type: 'logarithmic',
          title: { display: true, text: 'arithmetic intensity (FLOP per compulsory byte)' },
          ticks: { callback: decadeLabel, maxRotation: 0 },
        },
        y: {
          type: 'logarithmic',
          title: { display: true, text: 'GFLOP/s' },
          ticks: { callback: decadeLabel },
        },
      },
      plugins: {
        legend: { position: 'bottom' },
        tooltip: { callbacks: { label: tooltipLabel } },
      },
    },
  });
}

// The target whose ceilings are drawn: the one that measured the best result,
// else any that measured the job.
function pickTarget(detail) {
  const best = detail.problem_details.find((p) => p.best)?.best;
  if (best && detail.targets[best.target_id]) return [best.target_id, detail.targets[best.target_id]];
  const first = Object.entries(detail.targets)[0];
  return first ?? [null, null];
}

// The bf16 ceiling of a job with bf16 problems on `target`: {value (0: none), label}.
function bf16PeakOf(detail, target) {
  if (!detail.problem_details.some((p) => p.problem.endsWith(':bf16'))) return { value: 0, label: '' };
  const amx = target?.calibration.peak_gflops_amx_bf16 ?? 0;
  if (amx > 0) return { value: amx, label: 'AMX peak bf16' };
  return { value: target?.calibration.peak_gflops_bf16_dot ?? 0, label: 'AVX512-BF16 dot peak bf16' };
}

// Replaces the roofline's datasets with `detail`'s ceilings and `results`' points.
// Returns a sentence saying what is drawn.
export function updateRoofline(chart, detail, results) {
  const measured = results.filter((r) => r.status === 'ok' && r.gflops > 0 && r.arithmetic_intensity > 0);
  const bestKeys = new Set(detail.problem_details
    .filter((p) => p.best).map((p) => `${p.problem}|${p.best.candidate_hash}`));
  const isBest = (r) => bestKeys.has(`${r.problem}|${r.candidate_hash}`);
  const point = (r) => ({
    x: r.arithmetic_intensity,
    y: r.gflops,
    label: `trial ${r.trial}: ${fixed(r.gflops, 2)} GFLOP/s, ${r.problem}, ${knobs(r.knobs)}`,
  });

  const [targetId, target] = pickTarget(detail);
  const peak = target?.calibration.peak_gflops_f32 ?? 0;
  // bf16 problems are held against the fastest bf16 multiply the target has (AMX
  // tiles, else AVX512-BF16 dot products; worker/roofline.h PeakGflopsFor): drawn as
  // a second ceiling for such jobs.
  const bf16Peak = bf16PeakOf(detail, target);
  const top = Math.max(peak, bf16Peak.value);
  const levels = target?.calibration.bandwidth.filter((b) => b.gbps > 0) ?? [];
  // The x range spans every ridge point and every problem, with a decade to spare.
  const intensities = detail.problem_details
    .map((p) => p.figures?.arithmetic_intensity).filter((a) => a > 0);
  const ridges = levels.map((b) => top / b.gbps).filter((r) => r > 0);
  const xmin = Math.min(0.1, ...intensities.map((a) => a / 10), ...ridges.map((r) => r / 10));
  const xmax = Math.max(100, ...intensities.map((a) => a * 10), ...ridges.map((r) => r * 10));

  const datasets = [];
  if (target) {
    for (const b of levels) {
      const ridge = Math.min(top / b.gbps, xmax);
      datasets.push({
        mtuneKind: 'ceiling',
        // The copy is the fastest of ordinary and streaming stores over one stream or
        // several (worker/calibration.h kCopyVariants).
        label: `${b.level} ${fixed(b.gbps, 1)} GB/s${loopNote(b.streaming_stores, b.copy_streams)}`,
        data: [{ x: xmin, y: xmin * b.gbps }, { x: ridge, y: ridge * b.gbps }],
        showLine: true, pointRadius: 0, pointHitRadius: 0, borderWidth: 1.5,
        borderColor: LEVEL_COLORS[b.level] ?? '#868e96', backgroundColor: LEVEL_COLORS[b.level] ?? '#868e96',
      });
      // Dashed: the level's read bandwidth, the ceiling of a kernel that only reads
      // (a reduction); one that reads and writes lies between the two lines.
      if (b.read_gbps > 0) {
        const readRidge = Math.min(top / b.read_gbps, xmax);
        datasets.push({
          mtuneKind: 'read_ceiling',
          label: `${b.level} read ${fixed(b.read_gbps, 1)} GB/s${loopNote(false, b.read_streams)}`,
          data: [{ x: xmin, y: xmin * b.read_gbps }, { x: readRidge, y: readRidge * b.read_gbps }],
          showLine: true, pointRadius: 0, pointHitRadius: 0, borderWidth: 1, borderDash: [6, 4],
          borderColor: LEVEL_COLORS[b.level] ?? '#868e96', backgroundColor: LEVEL_COLORS[b.level] ?? '#868e96',
        });
      }
    }
    const peakLine = (value, label, color) => {
      const firstRidge = Math.min(xmax, ...levels.map((b) => value / b.gbps));
      datasets.push({
        mtuneKind: 'ceiling',
        label: `${label} ${fixed(value, 1)} GFLOP/s`,
        data: [{ x: levels.length ? firstRidge : xmin, y: value }, { x: xmax, y: value }],
        showLine: true, pointRadius: 0, pointHitRadius: 0, borderWidth: 2,
        borderColor: color, backgroundColor: color,
      });
    };
    peakLine(peak, 'FMA peak f32', '#212529');
    if (bf16Peak.value > 0) peakLine(bf16Peak.value, bf16Peak.label, '#862e9c');
  }
  datasets.push({
    mtuneKind: 'candidate',
    label: 'measured candidates',
    data: measured.filter((r) => !isBest(r)).map(point),
    pointRadius: 4, backgroundColor: 'rgba(31, 111, 235, 0.45)', borderColor: 'rgba(31, 111, 235, 0.9)',
  });
  datasets.push({
    mtuneKind: 'best',
    label: 'best',
    data: measured.filter(isBest).map(point),
    pointRadius: 9, pointStyle: 'star', borderWidth: 2, backgroundColor: '#e8590c', borderColor: '#e8590c',
  });
  chart.data.datasets = datasets;
  chart.update('none');

  const types = new Set(detail.problem_details.map((p) => p.figures?.element_type).filter(Boolean));
  const note = [`${measured.length} measured candidates (failed ones have no GFLOP/s).`];
  if (targetId) note.push(`Ceilings of ${targetId}.`);
  else note.push('No calibration yet: ceilings appear with the first result.');
  if ([...types].some((t) => t !== 'f32')) note.push(`The FMA peak is measured for f32; these problems use ${[...types].join(', ')}.`);
  if (bf16Peak.value > 0) note.push(`bf16 problems are held against the ${bf16Peak.label}.`);
  return note.join(' ');
}

function createConvergence(canvas) {
  return new Chart(canvas, {
    type: 'line',
    data: { datasets: [] },
    options: {
      ...COMMON,
      parsing: false,
      scales: {
        x: { type: 'linear', title: { display: true, text: 'trial' }, ticks: { precision: 0 } },
        y: { type: 'linear', beginAtZero: true, title: { display: true, text: 'best GFLOP/s so far' } },
      },
      plugins: { legend: { position: 'bottom' }, tooltip: { callbacks: { label: tooltipLabel } } },
    },
  });
}

// One convergence chart per problem of the selected job, inside `container`;
// `charts` (problem -> Chart) keeps them across updates.
export function updateConvergence(container, charts, detail, lines) {
  const problems = detail.problem_details.map((p) => p.problem);
  for (const [problem, chart] of charts) {
    if (!problems.includes(problem)) {
      chart.destroy();
      charts.delete(problem);
      container.querySelector(`figure[data-problem="${CSS.escape(problem)}"]`)?.remove();
    }
  }
  for (const problem of problems) {
    let chart = charts.get(problem);
    if (!chart) {
      const figure = document.createElement('figure');
      figure.dataset.problem = problem;
      const caption = document.createElement('figcaption');
      caption.textContent = `Convergence: ${problem}`;
      const box = document.createElement('div');
      box.className = 'chart-box';
      const canvas = document.createElement('canvas');
      box.append(canvas);
      figure.append(caption, box);
      container.append(figure);
      chart = createConvergence(canvas);
      charts.set(problem, chart);
    }
    const datasets = [];
    // What the search maximizes: GFLOP/s, or GB/s for a problem without arithmetic.
    const unit = lines[problem]?.unit ?? 'GFLOP/s';
    chart.options.scales.y.title.text = `best ${unit} so far`;
    (lines[problem]?.jobs ?? []).forEach((job, i) => {
      const selected = job.job_id === detail.id;
      const color = JOB_COLORS[i % JOB_COLORS.length];
      datasets.push({
        mtuneKind: 'best_so_far',
        jobId: job.job_id,
        label: `job ${job.job_id} · ${job.search}${job.search === 'random' ? ` (seed ${job.seed})` : ''}`,
        data: job.points.filter((p) => p.best_so_far != null).map((p) => ({
          x: p.trial, y: p.best_so_far, label: `job ${job.job_id}, trial ${p.trial}: best ${fixed(p.best_so_far, 2)} ${unit}`,
        })),
        stepped: 'after', borderColor: color, backgroundColor: color,
        borderWidth: selected ? 3 : 1.5, pointRadius: selected ? 2 : 0,
      });
      if (selected) {
        datasets.push({
          mtuneKind: 'trial',
          jobId: job.job_id,
          type: 'scatter',
          label: `job ${job.job_id}: each trial`,
          data: job.points.filter((p) => p.figure != null).map((p) => ({
            x: p.trial, y: p.figure, label: `trial ${p.trial}: ${fixed(p.figure, 2)} ${unit}`,
          })),
          pointRadius: 3, backgroundColor: 'rgba(134, 142, 150, 0.6)', borderColor: 'rgba(134, 142, 150, 0.6)',
        });
      }
    });
    chart.data.datasets = datasets;
    chart.update('none');
  }
}
