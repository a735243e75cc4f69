'use strict';
// kakapo-proxy/node-test: every node:test test in the file its own Kakapo cassette session.
//
//   const { test } = require('node:test');
//   const kakapo = require('kakapo-proxy/node-test').useKakapo();
//   test('gets a user', async () => { await fetch('http://127.0.0.1:9000/users/1'); });
//
// The cassette is cassettes/<test file stem>/<safe test name>.json beside the test file. The test's
// name is its full name (`describe block > test`) where node:test tells hooks that (Node 22.3 and 20.16
// on), else its own name; two different tests whose names give one cassette fail the second with an
// error saying so.

const nodeTest = require('node:test');
const { createAdapter } = require('./lib/adapter');
const { callerFile } = require('./lib/caller');
const { KakapoError } = require('./lib/errors');
const { CassetteClaims, testName } = require('./lib/node-test-naming');

const claims = new CassetteClaims();

/** Registers beforeEach/afterEach hooks for the file's tests (call it at the top of the test file). */
function useKakapo(options = {}) {
  const file = options.file || callerFile();
  const adapter = createAdapter('node-test', options);
  nodeTest.beforeEach(async (t) => {
    const testFile = (t && t.filePath) || file;
    const name = testName(t);
    if (testFile && name) {
      claims.claim(adapter.cassetteFor(testFile, name), t, name, testFile, { chosen: typeof options.cassette === 'function' });
    }
    await adapter.before(t, { file: testFile, name });
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
