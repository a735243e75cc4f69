'use strict';
// What the node:test, Jest and Vitest adapters share: before each test, a session on the test's own
// cassette with fetch() and the environment pointed at it; after it, the session's end, and the test
// fails with Kakapo's report when a strict session missed.

const path = require('node:path');
const { KakapoError } = require('./errors');
const { start, recordMode } = require('./server');
const { testCassette } = require('./naming');

const SERVER_OPTIONS = ['binary', 'cassetteDir', 'serveArgs', 'startTimeout'];

/**
 * options: mode, strict (default true), match, store, ignoreHosts, cassette (({ file, name }) => path,
 * relative to the cassettes/ folder beside the test file), fetch (default true), env (default true),
 * headersTimeout and bodyTimeout (the sessions' dispatchers', ms), and for the server: binary,
 * cassetteDir (default: the working directory), serveArgs.
 */
function createAdapter(runner, options = {}) {
  // A record mode that is none of the five (KAKAPO_RECORD=sometimes) fails the test file as it loads,
  // before any test.
  recordMode(options.mode);
  const serverOptions = {};
  for (const name of SERVER_OPTIONS) if (options[name] !== undefined) serverOptions[name] = options[name];
  const open = new Map();
  let latest = null;
  let lastSummary = null;

  const handle = {
    /** The session of the test running now (null between tests). */
    get session() {
      return latest;
    },
    /** The summary of the last session that ended. */
    get summary() {
      return lastSummary;
    },
    /** The process's Kakapo server (after the first test started). */
    server: null,
  };

  function cassetteFor(file, name) {
    if (typeof options.cassette === 'function') {
      const chosen = options.cassette({ file, name });
      return path.resolve(path.dirname(path.resolve(file)), 'cassettes', String(chosen));
    }
    return testCassette(file, name);
  }

  async function before(key, { file, name }) {
    if (!file) {
      throw new KakapoError(`kakapo-proxy/${runner}: cannot tell which file the test is in; pass useKakapo({ file: __filename })`);
    }
    if (!name) throw new KakapoError(`kakapo-proxy/${runner}: the test has no name`);
    const server = await start(serverOptions);
    handle.server = server;
    const session = await server.open(cassetteFor(file, name), {
      mode: options.mode,
      strict: options.strict === undefined ? true : options.strict,
      match: options.match,
      store: options.store,
      ignoreHosts: options.ignoreHosts,
      fetch: options.fetch !== false,
      env: options.env !== false,
      headersTimeout: options.headersTimeout,
      bodyTimeout: options.bodyTimeout,
      // A test that sends nothing records no cassette: replaying it must not fail. Its requests, if it
      // sends any, miss, and the report says the cassette does not exist.
      requireCassette: false,
    });
    open.set(key, session);
    latest = session;
    try {
      await server.admin('DELETE', '/__kakapo/requests'); // session.count() counts this test's requests
    } catch (error) {
      await after(key).catch(() => {});
      throw error;
    }
  }

  async function after(key) {
    const session = open.get(key);
    if (!session) return;
    open.delete(key);
    if (latest === session) latest = null;
    const summary = await session.close();
    lastSummary = summary;
    if (session.strict) {
      const report = session.missReport(summary);
      if (report) throw new KakapoError(report);
    }
  }

  return { handle, before, after, cassetteFor };
}

exports.createAdapter = createAdapter;
