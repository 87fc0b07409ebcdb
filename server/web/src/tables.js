// Renders the page's tables from API JSON. Cells carry data-field so that the
// browser test can read a figure back and compare it with the API.
import { duration, fixed, kernelTime, knobs, percent } from './format.js';

function cell(text, { num = false, field = null, title = null, className = null } = {}) {
  const td = document.createElement('td');
  td.textContent = text;
  if (num) td.classList.add('num');
  if (className) td.classList.add(className);
  if (field) td.dataset.field = field;
  if (title) td.title = title;
  return td;
}

function replaceRows(table, rows) {
  table.tBodies[0].replaceChildren(...rows);
}

function progressCell(job) {
  const td = document.createElement('td');
  const bar = document.createElement('span');
  bar.className = 'progress';
  const fill = document.createElement('span');
  const total = Math.max(job.trials_total, 1);
  fill.style.width = `${Math.min(100, (100 * job.trials_done) / total)}%`;
  bar.append(fill);
  const text = document.createElement('span');
  text.dataset.field = 'progress';
  text.textContent = `${job.trials_done} / ${job.trials_total}`;
  td.append(bar, text);
  return td;
}

function stateBadge(state) {
  const span = document.createElement('span');
  span.className = `badge state-${state}`;
  span.textContent = state;
  return span;
}

// Best GFLOP/s over the job's problems (the jobs table has one column for it);
// none for a job of transposes or copies only, which have no arithmetic (their
// GB/s are in the problems table).
export function bestGflops(job) {
  const computing = job.best.map((b) => b.gflops).filter((g) => g > 0);
  return computing.length ? Math.max(...computing) : null;
}

export function renderJobs(table, jobs, selectedId, onSelect) {
  const rows = [...jobs].reverse().map((job) => {
    const tr = document.createElement('tr');
    tr.dataset.jobId = job.id;
    if (job.id === selectedId) tr.classList.add('selected');
    const state = document.createElement('td');
    state.append(stateBadge(job.state));
    state.dataset.field = 'state';
    tr.append(
      cell(String(job.id), { field: 'id' }),
      state,
      cell(job.problems.join(', '), { field: 'problems', className: 'knobs' }),
      // A confirmation job does not search: it measures the best stored candidates again.
      cell(job.confirm_top > 0 ? `confirm best ${job.confirm_top}` : job.search, { field: 'search' }),
      progressCell(job),
      cell(String(job.trials_failed), { num: true, field: 'trials_failed' }),
      cell(fixed(bestGflops(job), 2), { num: true, field: 'best_gflops' }),
      cell(duration(job.elapsed_s), { num: true, field: 'elapsed' }),
      cell(job.state === 'running' ? duration(job.eta_s) : '', { num: true, field: 'eta' }),
    );
    tr.addEventListener('click', () => onSelect(job.id));
    return tr;
  });
  replaceRows(table, rows);
}

export function renderProblems(table, detail) {
  const rows = detail.problem_details.map((p) => {
    const tr = document.createElement('tr');
    tr.dataset.problem = p.problem;
    const failed = Object.values(p.failed_by_status).reduce((a, b) => a + b, 0);
    tr.append(
      cell(p.problem, { field: 'problem', className: 'knobs' }),
      cell(p.template ?? '', { field: 'template' }),
      cell(fixed(p.figures?.arithmetic_intensity, 2), { num: true, field: 'arithmetic_intensity' }),
      cell(fixed(p.best?.gflops, 2), { num: true, field: 'gflops' }),
      cell(fixed(p.best?.gbps, 2), { num: true, field: 'gbps' }),
      cell(fixed(p.best?.roofline_gflops, 2), { num: true, field: 'roofline_gflops' }),
      cell(p.best?.roofline_level ?? '', { field: 'roofline_level' }),
      cell(percent(p.best?.fraction_of_roofline), { num: true, field: 'fraction_of_roofline' }),
      cell(String(p.ok), { num: true, field: 'ok' }),
      cell(String(failed), { num: true, field: 'failed' }),
    );
    return tr;
  });
  replaceRows(table, rows);
}

export function renderFailures(table, detail, results) {
  const latestError = {};
  for (const r of results) if (r.status !== 'ok') latestError[r.status] = r.error;
  const rows = Object.entries(detail.failed_by_status).map(([status, count]) => {
    const tr = document.createElement('tr');
    tr.dataset.status = status;
    tr.append(
      cell(status, { field: 'status' }),
      cell(String(count), { num: true, field: 'count' }),
      cell(latestError[status] ?? '', { className: 'error-text' }),
    );
    return tr;
  });
  replaceRows(table, rows);
  return rows.length;
}

export function renderTrials(table, results) {
  const rows = results.map((r) => {
    const tr = document.createElement('tr');
    tr.dataset.trial = r.trial;
    tr.dataset.problem = r.problem;
    tr.append(
      cell(String(r.trial ?? ''), { num: true, field: 'trial' }),
      cell(r.status, { field: 'status', title: r.error || null }),
      cell(r.problem, { className: 'knobs' }),
      cell(fixed(r.gflops, 2), { num: true, field: 'gflops' }),
      cell(fixed(r.gbps, 2), { num: true, field: 'gbps' }),
      cell(percent(r.fraction_of_roofline), { num: true, field: 'fraction_of_roofline' }),
      cell(kernelTime(r.median_s), { num: true, field: 'median' }),
      cell(knobs(r.knobs), { className: 'knobs' }),
      cell(r.worker),
    );
    return tr;
  });
  replaceRows(table, rows);
}

function levelGbps(calibration, level) {
  return calibration.bandwidth.find((b) => b.level === level)?.gbps ?? null;
}

export function renderWorkers(table, workers) {
  const rows = workers.map((w) => {
    const tr = document.createElement('tr');
    tr.dataset.worker = w.name;
    const task = w.current_task;
    const taskText = task
      ? `task ${task.task_id}` + (task.job_id ? ` · job ${task.job_id} · ${task.problem} · ${knobs(task.knobs)}` : '')
      : '';
    tr.append(
      cell(w.name, { field: 'name' }),
      cell(w.state, { field: 'state' }),
      cell(String(w.cpu), { num: true, field: 'cpu' }),
      cell(w.target.cpu || w.target.id, { field: 'target', title: w.target.id }),
      cell(fixed(w.calibration.peak_gflops_f32, 1), { num: true, field: 'peak_gflops_f32' }),
      ...['L1', 'L2', 'L3', 'DRAM'].map((level) =>
        cell(fixed(levelGbps(w.calibration, level), 1), { num: true, field: `gbps_${level}` })),
      cell(taskText, { className: 'knobs', field: 'current_task' }),
      cell(String(w.tasks_done), { num: true, field: 'tasks_done' }),
      cell(`${fixed(w.last_seen_s_ago, 1)} s ago`, { num: true }),
    );
    return tr;
  });
  replaceRows(table, rows);
}
