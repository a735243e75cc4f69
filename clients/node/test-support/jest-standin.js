'use strict';
// A minimal stand-in for Jest, enough to run kakapo-proxy/jest as Jest would: NOT Jest.
//
//   node jest-standin.js TEST_FILE     prints one JSON line per test: {"name", "ok", "error"}
//
// Like Jest's node environment it runs the test file, and every module the file requires outside
// Node's core, in a vm context of its own: `globalThis` there is not Node's, `process` is a copy whose
// `env` is a copy too, and the globals are beforeEach, afterEach, describe, test and expect (whose
// getState() gives currentTestName, "describe names then the test's", and testPath). Core modules come
// from Node as they are. Each test runs its beforeEach hooks, itself, then its afterEach hooks; an
// error in any of them fails it.

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { builtinModules, createRequire } = require('node:module');

const testFile = path.resolve(process.argv[2]);
const hooks = { beforeEach: [], afterEach: [] };
const tests = [];
const prefix = [];
let state = { currentTestName: undefined, testPath: testFile };

const sandboxProcess = Object.create(process);
sandboxProcess.env = { ...process.env };

const globals = {
  beforeEach: (fn) => hooks.beforeEach.push(fn),
  afterEach: (fn) => hooks.afterEach.push(fn),
  describe: (name, fn) => {
    prefix.push(name);
    try {
      fn();
    } finally {
      prefix.pop();
    }
  },
  test: (name, fn) => tests.push({ name: [...prefix, name].join(' '), fn }),
  expect: { getState: () => state },
  process: sandboxProcess,
  console,
  Buffer,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  AbortController,
  AbortSignal,
  ReadableStream,
  Blob,
  fetch,
  Headers,
  Request,
  Response,
  FormData,
  queueMicrotask,
  structuredClone,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  clearImmediate,
};
const context = vm.createContext({ ...globals });
context.global = context;

const cache = new Map();
const core = new Set(builtinModules);

function load(file) {
  if (cache.has(file)) return cache.get(file).exports;
  const module = { exports: {}, filename: file };
  cache.set(file, module);
  if (file.endsWith('.json')) {
    module.exports = JSON.parse(fs.readFileSync(file, 'utf8'));
    return module.exports;
  }
  const wrapper = vm.compileFunction(fs.readFileSync(file, 'utf8').replace(/^#!.*/, ''), ['exports', 'require', 'module', '__filename', '__dirname'], {
    parsingContext: context,
    filename: file,
  });
  wrapper.call(module.exports, module.exports, requireFrom(file), module, file, path.dirname(file));
  return module.exports;
}

function requireFrom(file) {
  const resolver = createRequire(file);
  const sandboxRequire = (name) => {
    const bare = name.startsWith('node:') ? name.slice(5) : name;
    if (bare === 'process') return sandboxProcess; // as Jest gives it
    if (name.startsWith('node:') || core.has(name)) return require(name);
    return load(resolver.resolve(name));
  };
  sandboxRequire.resolve = (name) => resolver.resolve(name);
  return sandboxRequire;
}

async function main() {
  load(testFile);
  for (const { name, fn } of tests) {
    state = { currentTestName: name, testPath: testFile };
    let error = null;
    try {
      for (const hook of hooks.beforeEach) await hook();
      await fn();
    } catch (thrown) {
      error = thrown;
    }
    for (const hook of hooks.afterEach) {
      try {
        await hook();
      } catch (thrown) {
        error = error || thrown;
      }
    }
    process.stdout.write(JSON.stringify({ name, ok: !error, error: error ? String(error.message || error) : null }) + '\n');
  }
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ name: '(load)', ok: false, error: String((error && error.stack) || error) }) + '\n');
  process.exitCode = 1;
});
