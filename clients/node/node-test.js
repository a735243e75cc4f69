'use strict';
// kakapo-proxy/node-test: every node:test test in the file its own Kakapo cassette session.
//
//   const { test } = require('node:test');
//   const kakapo = require('kakapo-proxy/node-test').useKakapo();
//   test('gets a user', async () => { await fetch('http://127.0.0.1:9000/users/1'); });
//
// The cassette is cassettes/<test file stem>/<safe test name>.json beside the test file.

const nodeTest = require('node:test');
const { createAdapter } = require('./lib/adapter');
const { callerFile } = require('./lib/caller');
const { KakapoError } = require('./lib/errors');

/** Registers beforeEach/afterEach hooks for the file's tests (call it at the top of the test file). */
function useKakapo(options = {}) {
  const file = options.file || callerFile();
  const adapter = createAdapter('node-test', options);
  nodeTest.beforeEach(async (t) => {
    await adapter.before(t, { file: (t && t.filePath) || file, name: t && t.name });
  });
  nodeTest.afterEach(async (t) => {
    try {
      await adapter.after(t);
    } catch (error) {
      // node:test shows a test's first error only: when the test failed already (often on the miss
      // answer itself), the report would be lost. As a diagnostic it is shown with the test either way.
      if (t && typeof t.diagnostic === 'function') t.diagnostic(error.message);
      throw error;
    }
  });
  return adapter.handle;
}

exports.useKakapo = useKakapo;
exports.KakapoError = KakapoError;
