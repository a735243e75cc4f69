'use strict';
// kakapo-proxy/jest: every Jest test in the file its own Kakapo cassette session.
//
//   const { useKakapo } = require('kakapo-proxy/jest');
//   const kakapo = useKakapo();
//   test('gets a user', async () => { await fetch('http://127.0.0.1:9000/users/1'); });
//
// The cassette is cassettes/<test file stem>/<safe test name>.json beside the test file, the name
// being Jest's currentTestName (describe blocks' names, then the test's). Call useKakapo() at the top of
// a test file, or in a file of setupFilesAfterEnv for every test file.

const { createAdapter } = require('./lib/adapter');
const { KakapoError } = require('./lib/errors');

function jestApi() {
  const g = globalThis;
  if (typeof g.beforeEach === 'function' && typeof g.afterEach === 'function' && g.expect && typeof g.expect.getState === 'function') {
    return { beforeEach: g.beforeEach, afterEach: g.afterEach, expect: g.expect };
  }
  try {
    return require('@jest/globals');
  } catch {
    throw new KakapoError(
      'kakapo-proxy/jest: Jest\'s beforeEach, afterEach and expect are not here: call useKakapo() from a test file, or from a file of setupFilesAfterEnv',
    );
  }
}

/** Registers beforeEach/afterEach hooks (for the file, or for every file from setupFilesAfterEnv). */
function useKakapo(options = {}) {
  const { beforeEach, afterEach, expect } = jestApi();
  const adapter = createAdapter('jest', options);
  const key = {};
  beforeEach(async () => {
    const state = expect.getState();
    await adapter.before(key, { file: options.file || state.testPath, name: state.currentTestName });
  });
  afterEach(async () => {
    await adapter.after(key);
  });
  return adapter.handle;
}

exports.useKakapo = useKakapo;
exports.KakapoError = KakapoError;
