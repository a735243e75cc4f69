'use strict';
// The text of a session's misses, as pytest-kakapo writes it.

function missReport(summary, { cassette, mode, id } = {}) {
  const misses = (summary && summary.misses) || [];
  if (!misses.length) return null;
  const lines = [
    `Kakapo: ${summary.missCount || misses.length} request(s) missed cassette ${summary.cassette || cassette} ` +
      `(mode ${summary.mode || mode}, session ${summary.id || id}):`,
  ];
  for (const miss of misses.slice(0, 50)) {
    lines.push(`  ${miss.line || `${miss.method || '?'} ${miss.url || '?'}`}`);
    const nearest = miss.nearest || [];
    if (!nearest.length) lines.push('    no recording is near it');
    for (const near of nearest.slice(0, 5)) {
      lines.push(`    nearest: #${near.interaction ?? '?'} ${near.method || '?'} ${near.url || '?'}`);
      for (const difference of (near.differences || []).slice(0, 10)) lines.push(`      ${difference}`);
    }
  }
  if (misses.length > 50) lines.push(`  ... and ${misses.length - 50} more`);
  if (summary.warning) lines.push(`  (${summary.warning})`);
  lines.push("Record it with KAKAPO_RECORD=new (or the session's mode 'new'), or fix the request.");
  return lines.join('\n');
}

function unusedReport(summary) {
  const unused = (summary && summary.unused) || [];
  if (!unused.length) return null;
  return unused
    .slice(0, 100)
    .map((u) => `  unused: #${u.interaction ?? '?'} ${u.method || '?'} ${u.url || '?'}${u.label ? ' ' + u.label : ''}`)
    .join('\n');
}

exports.missReport = missReport;
exports.unusedReport = unusedReport;
