// format.js: pure helpers that turn the wire's numbers and times into what the page shows. No DOM here, so
// Node's test runner can import it (Tests/InspectorJS/format.test.mjs).

/** "0 B", "999 B", "1.2 KB", "3.4 MB" (1 KB = 1024 bytes, as the server's limits count); "—" when unknown. */
export function formatBytes(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** "1,234 bytes": the exact count beside a rounded size. */
export function formatByteCount(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes) || bytes < 0) return 'unknown size';
  return `${Math.round(bytes).toLocaleString('en-US')} ${bytes === 1 ? 'byte' : 'bytes'}`;
}

/** "0.42 ms", "12.3 ms", "245 ms", "1.25 s", "2 min 5 s"; "—" when unknown. */
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes >= 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function pad(value, width) {
  return String(value).padStart(width, '0');
}

/**
 * The wall-clock time of an ISO-8601 string, "11:00:00.123", in local time (or UTC with `utc`), because a list
 * row has room for the time and the day is nearly always today. "" for a string that is not a time.
 */
export function formatClock(iso, { utc = false } = {}) {
  const date = parseTime(iso);
  if (!date) return '';
  const [h, m, s, ms] = utc
    ? [date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), date.getUTCMilliseconds()]
    : [date.getHours(), date.getMinutes(), date.getSeconds(), date.getMilliseconds()];
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(ms, 3)}`;
}

/** The full timestamp for a detail view: "2026-11-24 11:00:00.123 UTC". */
export function formatTimestamp(iso) {
  const date = parseTime(iso);
  if (!date) return typeof iso === 'string' ? iso : '';
  const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}`;
  return `${day} ${formatClock(iso, { utc: true })} UTC`;
}

/** "just now", "5 min ago", "3 days ago": how old a recording is. */
export function formatAge(iso, now = Date.now()) {
  const date = parseTime(iso);
  if (!date) return '';
  const seconds = Math.round((now - date.getTime()) / 1000);
  if (seconds < 0) return 'in the future';
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 60) return `${days} days ago`;
  const months = Math.round(days / 30.4);
  if (months < 24) return `${months} months ago`;
  return `${Math.round(days / 365.25)} years ago`;
}

function parseTime(iso) {
  if (typeof iso !== 'string' || iso.length > 64) return null;
  const time = Date.parse(iso);
  return Number.isFinite(time) ? new Date(time) : null;
}

/** "2xx" for 200..299, "fault" for no status (a fault or an aborted exchange), "" for nonsense. */
export function statusClass(status) {
  if (typeof status !== 'number' || !Number.isInteger(status)) return 'fault';
  if (status === 0) return 'fault';
  if (status >= 100 && status <= 599) return `${Math.floor(status / 100)}xx`;
  return 'other';
}

/** The path and query of an entry: its origin-form target, or the URL's path when the target is absolute. */
export function pathOf(entry) {
  const target = typeof entry?.target === 'string' ? entry.target : '';
  if (target.startsWith('/')) return target;
  const url = typeof entry?.url === 'string' ? entry.url : target;
  const match = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*(.*)$/.exec(url);
  if (match) return match[1] || '/';
  return target || url;
}

/** The host of an entry: its `host` field, or the URL's authority. */
export function hostOf(entry) {
  if (typeof entry?.host === 'string' && entry.host !== '') return entry.host;
  const match = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(typeof entry?.url === 'string' ? entry.url : '');
  return match ? match[1] : '';
}

/** A string cut to `max` characters with an ellipsis, so one hostile header cannot stretch a row. */
export function truncate(text, max) {
  const value = String(text ?? '');
  return value.length > max ? `${value.slice(0, Math.max(0, max - 1))}…` : value;
}

/** Source names as the list shows them, with what each means (a badge's title). */
export const SOURCES = Object.freeze({
  cassette: 'replayed from the cassette',
  'cassette-head': 'a HEAD answered from a recorded GET',
  route: 'answered by a route',
  store: 'answered by a Store collection',
  upstream: 'answered live by the upstream (not recorded)',
  recorded: 'answered by the upstream and written into the cassette',
  passthrough: 'passed through to its destination (not recorded)',
  miss: 'no recording matched',
  error: 'Kakapo could not answer (a fault)',
});
