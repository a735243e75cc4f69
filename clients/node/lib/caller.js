'use strict';
// The file of the code that called into kakapo-proxy (the test file that called useKakapo()).

const path = require('node:path');
const { fileURLToPath } = require('node:url');

const PACKAGE = path.resolve(__dirname, '..');
const OWN = new Set(['node-test.js', 'jest.js', 'vitest.mjs', 'index.js'].map((name) => path.join(PACKAGE, name)));

function isOwn(file) {
  return file.startsWith(path.join(PACKAGE, 'lib') + path.sep) || OWN.has(file);
}

function callerFile() {
  const original = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  let sites = [];
  try {
    Error.stackTraceLimit = 30;
    Error.prepareStackTrace = (_, stack) => stack;
    const holder = {};
    Error.captureStackTrace(holder, callerFile);
    sites = Array.isArray(holder.stack) ? holder.stack : [];
  } catch {
    sites = [];
  } finally {
    Error.prepareStackTrace = original;
    Error.stackTraceLimit = limit;
  }
  for (const site of sites) {
    let file = typeof site.getFileName === 'function' ? site.getFileName() : undefined;
    if (!file || file.startsWith('node:') || file.startsWith('internal/')) continue;
    if (file.startsWith('file://')) file = fileURLToPath(file);
    if (!path.isAbsolute(file) || isOwn(file)) continue;
    return file;
  }
  return undefined;
}

exports.callerFile = callerFile;
