// A minimal stand-in for Vitest's runner, enough to run kakapo-proxy/vitest as Vitest would: NOT Vitest.
//
//   node vitest-standin.mjs TEST_FILE     prints one JSON line per test: {"name", "ok", "error"}
//
// The test file imports `vitest` from a stand-in package (node_modules/vitest beside it, written by the
// test) that gives beforeEach, afterEach, describe and test, and registers them on
// globalThis.__vitestStandIn. Each hook gets a context whose `task` has Vitest's shape: `name`, `suite`
// (the describe block, whose `suite` leads up to the file) and `file` ({ filepath, name }).

import path from 'node:path';
import { pathToFileURL } from 'node:url';

const testFile = path.resolve(process.argv[2]);
const registry = { beforeEach: [], afterEach: [], tests: [] };
globalThis.__vitestStandIn = registry;

async function main() {
  await import(pathToFileURL(testFile).href);
  const file = { type: 'suite', name: path.basename(testFile), filepath: testFile, tasks: [] };
  for (const { name, suites, fn } of registry.tests) {
    let suite = file;
    for (const suiteName of suites) suite = { type: 'suite', name: suiteName, suite, file };
    const task = { type: 'test', name, suite, file };
    const context = { task };
    let error = null;
    try {
      for (const hook of registry.beforeEach) await hook(context);
      await fn(context);
    } catch (thrown) {
      error = thrown;
    }
    for (const hook of registry.afterEach) {
      try {
        await hook(context);
      } catch (thrown) {
        error = error || thrown;
      }
    }
    const fullName = [...suites, name].join(' ');
    process.stdout.write(JSON.stringify({ name: fullName, ok: !error, error: error ? String(error.message || error) : null }) + '\n');
  }
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ name: '(load)', ok: false, error: String((error && error.stack) || error) }) + '\n');
  process.exitCode = 1;
});
