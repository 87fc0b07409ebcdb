// The mtune dashboard page: polls the coordinator's JSON API and redraws the
// tables and charts. ?poll=MS sets the polling period (default 1000 ms);
// #job=ID selects a job (default: the newest).
import { getJson } from './api.js';
import { createRoofline, updateConvergence, updateRoofline } from './charts.js';
import {
  renderFailures, renderJobs, renderProblems, renderTrials, renderWorkers,
} from './tables.js';

const $ = (id) => document.getElementById(id);

const params = new URLSearchParams(location.search);
const pollMs = Math.max(200, Number(params.get('poll')) || 1000);

// Page state, also read by the browser test (tests/dashboard_browser_test.cjs).
const state = {
  updates: 0, // completed polls
  renderedJob: null, // the job summary the job section was last drawn from
  detailKey: '', // what the job section shows: id, trials done, state
  charts: { roofline: null, convergence: new Map() },
};
window.mtune = state;

function selectedJobId(jobs) {
  const match = /job=(\d+)/.exec(location.hash);
  if (match) return Number(match[1]);
  return jobs.length ? jobs[jobs.length - 1].id : null;
}

function select(id) {
  location.hash = `job=${id}`;
}

// Redraws the job section; only when the job changed since the last draw.
async function refreshJob(job) {
  const key = `${job.id}:${job.trials_done}:${job.state}`;
  if (key === state.detailKey) return;
  const [detail, results] = await Promise.all([
    getJson(`/api/jobs/${job.id}`),
    getJson(`/api/results?job=${job.id}`),
  ]);
  const lines = {};
  await Promise.all(detail.problem_details.map(async (p) => {
    lines[p.problem] = await getJson(`/api/convergence?problem=${encodeURIComponent(p.problem)}`);
  }));

  $('job').hidden = false;
  $('job-id').textContent = String(detail.id);
  $('job-state').textContent = detail.state;
  $('job-state').className = `badge state-${detail.state}`;
  $('job-message').textContent = detail.message;
  renderProblems($('problems'), detail);
  const failures = renderFailures($('failures'), detail, results.results);
  $('failures').hidden = failures === 0;
  $('failures-none').hidden = failures !== 0;
  renderTrials($('trials'), results.results);
  state.charts.roofline ??= createRoofline($('roofline'));
  $('roofline-note').textContent = updateRoofline(state.charts.roofline, detail, results.results);
  updateConvergence($('convergence'), state.charts.convergence, detail, lines);
  state.detailKey = key;
  state.renderedJob = detail;
}

async function poll() {
  try {
    const [jobs, workers] = await Promise.all([getJson('/api/jobs'), getJson('/api/workers')]);
    const selected = selectedJobId(jobs.jobs);
    renderJobs($('jobs'), jobs.jobs, selected, select);
    $('jobs-empty').hidden = jobs.jobs.length > 0;
    renderWorkers($('workers'), workers.workers);
    $('workers-empty').hidden = workers.workers.length > 0;
    const job = jobs.jobs.find((j) => j.id === selected);
    if (job) await refreshJob(job);
    $('error').hidden = true;
    $('status').textContent = `updated ${new Date().toLocaleTimeString()} · every ${pollMs / 1000} s`;
    state.updates += 1;
  } catch (error) {
    $('error').textContent = `Cannot read the coordinator: ${error.message}`;
    $('error').hidden = false;
  }
  setTimeout(poll, pollMs);
}

window.addEventListener('hashchange', () => {
  state.detailKey = '';
});
poll();
