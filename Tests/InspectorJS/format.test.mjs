// format.js: sizes, durations and times as the list shows them; nonsense shows as a dash, never a crash.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  formatAge, formatByteCount, formatBytes, formatClock, formatDuration, formatTimestamp, hostOf, pathOf, statusClass, truncate,
} from '../../Sources/KakapoInspector/Web/format.js';

test('sizes', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1024), '1.0 KB');
  assert.equal(formatBytes(1536), '1.5 KB');
  assert.equal(formatBytes(123 * 1024), '123 KB');
  assert.equal(formatBytes(5 * 1024 * 1024), '5.0 MB');
  assert.equal(formatBytes(2 ** 60), '1048576 TB');
  for (const bad of [null, undefined, -1, NaN, Infinity, '12']) assert.equal(formatBytes(bad), '—');
  assert.equal(formatByteCount(1234567), '1,234,567 bytes');
  assert.equal(formatByteCount(1), '1 byte');
});

test('durations', () => {
  assert.equal(formatDuration(0.4234), '0.42 ms');
  assert.equal(formatDuration(12.34), '12.3 ms');
  assert.equal(formatDuration(245.6), '246 ms');
  assert.equal(formatDuration(1250), '1.25 s');
  assert.equal(formatDuration(12_500), '12.5 s');
  assert.equal(formatDuration(125_000), '2 min 5 s');
  assert.equal(formatDuration(3 * 3600_000 + 60_000), '3 h 1 min');
  for (const bad of [null, -1, NaN, 'x']) assert.equal(formatDuration(bad), '—');
});

test('times', () => {
  assert.equal(formatClock('2026-11-24T11:00:00.123Z', { utc: true }), '11:00:00.123');
  assert.equal(formatClock('2026-11-24T11:00:00.123+02:00', { utc: true }), '09:00:00.123');
  assert.equal(formatTimestamp('2026-11-24T11:00:00.123Z'), '2026-11-24 11:00:00.123 UTC');
  assert.equal(formatClock('yesterday'), '');
  assert.equal(formatClock(42), '');
  assert.equal(formatClock('9'.repeat(10_000)), '');
  const now = Date.parse('2026-11-24T12:00:00Z');
  assert.equal(formatAge('2026-11-24T11:59:50Z', now), 'just now');
  assert.equal(formatAge('2026-11-24T11:30:00Z', now), '30 min ago');
  assert.equal(formatAge('2026-11-14T12:00:00Z', now), '10 days ago');
  assert.equal(formatAge('2026-11-25T12:00:00Z', now), 'in the future');
});

test('status classes', () => {
  assert.equal(statusClass(200), '2xx');
  assert.equal(statusClass(404), '4xx');
  assert.equal(statusClass(599), '5xx');
  assert.equal(statusClass(0), 'fault');
  assert.equal(statusClass(null), 'fault');
  assert.equal(statusClass(700), 'other');
});

test('paths and hosts from origin-form and absolute-form entries', () => {
  assert.equal(pathOf({ target: '/users?x=1', url: 'http://h/users?x=1' }), '/users?x=1');
  assert.equal(pathOf({ target: 'http://api.example.com/v1?q', url: 'http://api.example.com/v1?q' }), '/v1?q');
  assert.equal(pathOf({ url: 'https://api.example.com' }), '/');
  assert.equal(hostOf({ host: 'a:1', url: 'http://b/' }), 'a:1');
  assert.equal(hostOf({ url: 'http://user@b:8/x' }), 'user@b:8');
  assert.equal(hostOf({}), '');
  assert.equal(truncate('abcdef', 4), 'abc…');
  assert.equal(truncate(undefined, 4), '');
});
