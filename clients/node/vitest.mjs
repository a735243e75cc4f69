// kakapo-proxy/vitest: every Vitest test in the file its own Kakapo cassette session.
//
//   import { test } from 'vitest';
//   import { useKakapo } from 'kakapo-proxy/vitest';
//   const kakapo = useKakapo();
//   test('gets a user', async () => { await fetch('http://127.0.0.1:9000/users/1'); });
//
// The cassette is cassettes/<test file stem>/<safe test name>.json beside the test file, the name
// being the test's (ctx.task.name), after its describe blocks' names.

import { beforeEach, afterEach } from 'vitest';
import adapterModule from './lib/adapter.js';
import errors from './lib/errors.js';

const { createAdapter } = adapterModule;
export const { KakapoError } = errors;

/** The test's name after the names of the describe blocks around it, as Jest names it. */
function fullName(task) {
  const names = [task.name];
  for (let suite = task.suite; suite && suite !== task.file && !suite.filepath; suite = suite.suite) {
    if (suite.name) names.unshift(suite.name);
  }
  return names.join(' ');
}

/** Registers beforeEach/afterEach hooks for the file's tests (call it at the top of the test file). */
export function useKakapo(options = {}) {
  const adapter = createAdapter('vitest', options);
  beforeEach(async (context) => {
    const task = context && context.task;
    if (!task) throw new KakapoError('kakapo-proxy/vitest: the hook got no test context (context.task)');
    const file = options.file || (task.file && task.file.filepath);
    await adapter.before(task, { file, name: fullName(task) });
  });
  afterEach(async (context) => {
    await adapter.after(context && context.task);
  });
  return adapter.handle;
}
