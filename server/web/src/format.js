// Number and duration formatting shared by every table (one place, so the
// browser test can parse what it reads back).

const DASH = '—';

// `v` with `digits` decimals; a dash for a missing figure (never a fake 0).
export function fixed(v, digits) {
  return v == null || !Number.isFinite(v) ? DASH : v.toFixed(digits);
}

// A fraction in [0, 1] as a percentage with one decimal.
export function percent(fraction) {
  return fraction == null || !Number.isFinite(fraction) ? DASH : `${(100 * fraction).toFixed(1)} %`;
}

// Seconds as "42 s", "3 min 05 s", "2 h 07 min".
export function duration(s) {
  if (s == null || !Number.isFinite(s)) return DASH;
  s = Math.round(s);
  if (s < 60) return `${s} s`;
  const pad = (n) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
}

// A kernel time with a unit that keeps three significant digits.
export function kernelTime(s) {
  if (s == null || !Number.isFinite(s)) return DASH;
  if (s < 1e-3) return `${(s * 1e6).toPrecision(3)} µs`;
  if (s < 1) return `${(s * 1e3).toPrecision(3)} ms`;
  return `${s.toPrecision(3)} s`;
}

// Knob values as "name=value name=value".
export function knobs(k) {
  return Object.entries(k ?? {}).map(([name, value]) => `${name}=${value}`).join(' ');
}
