'use strict';
// The text of a session's misses, as pytest-kakapo writes it. The summary is Kakapo's answer: whatever
// is not of the expected shape (a list that is not an array, an entry that is not an object, a field
// that is not text) is shown as it is, never a TypeError.

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function list(value) {
  return Array.isArray(value) ? value : [];
}

/** A field as text: strings and numbers as they are, anything else (absent, an object...) as `fallback`. */
function text(value, fallback = '?') {
  if (typeof value === 'string') return value || fallback;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return fallback;
}

/** An entry that is not what Kakapo sends, shown as JSON. */
function raw(value) {
  let shown;
  try {
    shown = JSON.stringify(value);
  } catch {
    shown = undefined;
  }
  if (shown === undefined) shown = String(value);
  return shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
}

function missReport(summary, { cassette, mode, id } = {}) {
  const facts = isObject(summary) ? summary : {};
  const misses = list(facts.misses);
  if (!misses.length) return null;
  const missCount = Number.isInteger(facts.missCount) && facts.missCount > 0 ? facts.missCount : misses.length;
  const lines = [
    `Kakapo: ${missCount} request(s) missed cassette ${text(facts.cassette, text(cassette))} ` +
      `(mode ${text(facts.mode, text(mode))}, session ${text(facts.id, text(id))}):`,
  ];
  for (const miss of misses.slice(0, 50)) {
    if (!isObject(miss)) {
      lines.push(`  (a miss kakapo described as ${raw(miss)})`);
      continue;
    }
    lines.push(`  ${text(miss.line, `${text(miss.method)} ${text(miss.url)}`)}`);
    const nearest = list(miss.nearest);
    if (!nearest.length) lines.push('    no recording is near it');
    for (const near of nearest.slice(0, 5)) {
      if (!isObject(near)) {
        lines.push(`    nearest: ${raw(near)}`);
        continue;
      }
      lines.push(`    nearest: #${text(near.interaction)} ${text(near.method)} ${text(near.url)}`);
      for (const difference of list(near.differences).slice(0, 10)) {
        lines.push(`      ${typeof difference === 'string' ? difference : raw(difference)}`);
      }
    }
  }
  if (misses.length > 50) lines.push(`  ... and ${misses.length - 50} more`);
  if (typeof facts.warning === 'string' && facts.warning) lines.push(`  (${facts.warning})`);
  lines.push("Record it with KAKAPO_RECORD=new (or the session's mode 'new'), or fix the request.");
  return lines.join('\n');
}

function unusedReport(summary) {
  const unused = list(isObject(summary) ? summary.unused : undefined);
  if (!unused.length) return null;
  return unused
    .slice(0, 100)
    .map((u) =>
      isObject(u)
        ? `  unused: #${text(u.interaction)} ${text(u.method)} ${text(u.url)}${typeof u.label === 'string' && u.label ? ' ' + u.label : ''}`
        : `  unused: ${raw(u)}`,
    )
    .join('\n');
}

exports.missReport = missReport;
exports.unusedReport = unusedReport;
