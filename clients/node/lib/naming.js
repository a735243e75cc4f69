'use strict';
// Cassette file names for tests, by pytest-kakapo's rules, so both clients name alike.

const crypto = require('node:crypto');
const path = require('node:path');

/**
 * `name` with each run of characters other than letters, digits, `.`, `_` and `-` made one `_`, and
 * without `.` or `_` at its ends.
 */
function underscored(name) {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+|[._]+$/g, '');
}

/**
 * A file name for a test's (or a test file's) name: letters, digits, `.`, `_` and `-` stay, each run
 * of anything else becomes one `_`. A parametrised name's brackets (`test_get[1]` -> `test_get_1`) go as
 * they are; when anything else had to go (a space, a slash, a backslash), the first 8 hex digits of the
 * name's SHA-256 follow (`gets a user` -> `gets_a_user-` + 8 hex digits), so `a b` and `a/b` never
 * share a cassette. Names over 150 characters are cut to 130 and a 16-digit hash.
 */
function fileSafe(name) {
  name = String(name);
  const plain = name.replace(/\[([\s\S]*)\]$/, '_$1');
  const safe = underscored(plain);
  const digest = crypto.createHash('sha256').update(name, 'utf8').digest('hex');
  if (safe.length > 150) return safe.slice(0, 130) + '_' + digest.slice(0, 16);
  if (safe !== plain) return (safe || 'test') + '-' + digest.slice(0, 8);
  return safe || 'test';
}

/** The file's name without its last extension (`users.test.js` -> `users.test`), as Python's Path.stem. */
function stem(file) {
  const base = path.basename(file);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** `cassettes/<test file stem>/<safe test name>.json` beside the test file. */
function testCassette(testFile, testName) {
  return path.join(path.dirname(path.resolve(testFile)), 'cassettes', fileSafe(stem(testFile)), fileSafe(testName) + '.json');
}

exports.fileSafe = fileSafe;
exports.stem = stem;
exports.testCassette = testCassette;
