'use strict';
// Other clients than the global fetch(): an undici ProxyAgent given session.env.HTTP_PROXY, undici's
// own request() and fetch() given session.dispatcher, and curl in a child process with session.env,
// each recorded and then replayed with the upstream closed. The undici is Debian's (node-undici, in
// /usr/share/nodejs), never a dependency of the package.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const Module = require('node:module');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');

// Debian's undici needs its own dependencies (busboy...) from /usr/share/nodejs: that folder goes on
// NODE_PATH for this process, as `NODE_PATH=/usr/share/nodejs node` would put it.
const UNDICI = process.env.KAKAPO_TEST_UNDICI || '/usr/share/nodejs/undici';
let undici = null;
let undiciProblem = '';
try {
  process.env.NODE_PATH = [path.dirname(UNDICI), process.env.NODE_PATH].filter(Boolean).join(path.delimiter);
  Module._initPaths();
  undici = require(path.basename(UNDICI));
  assert.equal(typeof undici.ProxyAgent, 'function');
} catch (error) {
  undiciProblem = `undici is not at ${UNDICI} (apt-get install node-undici, or set KAKAPO_TEST_UNDICI): ${error.message}`;
}
const skipUndici = undici ? false : undiciProblem;
const skipCurl = helpers.haveCommand('curl') ? false : 'needs curl on PATH';

let root;
let server;

before(async () => {
  root = helpers.temporaryFolder();
  server = await kakapo.start({ cassetteDir: root });
});

after(async () => {
  await server.stop();
});

/** Records `exchange(session)` from a live upstream, then replays it with the upstream closed. */
async function recordThenReplay(name, exchange) {
  const api = await helpers.startApi();
  const recording = await server.open(name, { mode: 'once' });
  assert.equal(recording.mode, 'new');
  const live = await exchange(recording, api.url);
  const recorded = await recording.close();
  assert.ok(recorded.recorded > 0, JSON.stringify(recorded));
  const hits = api.hits;
  assert.equal(hits, recorded.recorded);
  await api.close();
  const replaying = await server.open(name, { mode: 'once' });
  assert.equal(replaying.mode, 'none');
  const replayed = await exchange(replaying, api.url);
  const summary = await replaying.close();
  assert.deepEqual(summary.misses, []);
  assert.equal(summary.replayed, recorded.recorded);
  assert.equal(api.hits, hits, 'nothing reached the closed upstream');
  return { live, replayed };
}

test('an undici ProxyAgent given session.env.HTTP_PROXY', { skip: skipUndici }, async () => {
  const { live, replayed } = await recordThenReplay('clients/proxy-agent', async (session, url) => {
    // undici 5 reads no credentials from the proxy URL: the session's go in the token.
    const agent = new undici.ProxyAgent({ uri: session.env.HTTP_PROXY, token: session.proxyAuthorization });
    try {
      const got = await undici.request(`${url}/users/4`, { dispatcher: agent });
      const posted = await undici.request(`${url}/things`, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ b: 2 }),
      });
      return { got: { status: got.statusCode, body: await got.body.json() }, posted: { status: posted.statusCode, body: await posted.body.json() } };
    } finally {
      await agent.close();
    }
  });
  assert.deepEqual(live.got, { status: 200, body: { id: '4', name: 'user 4', via: 'http' } });
  assert.equal(live.posted.status, 201);
  assert.equal(live.posted.body.body, '{"b":2}');
  assert.deepEqual(replayed, live);
});

test("undici's request() and fetch() given session.dispatcher", { skip: skipUndici }, async () => {
  const { live, replayed } = await recordThenReplay('clients/undici-dispatcher', async (session, url) => {
    const got = await undici.request(`${url}/users/5`, { dispatcher: session.dispatcher });
    const streamed = await undici.request(`${url}/upload`, {
      dispatcher: session.dispatcher,
      method: 'PUT',
      body: (async function* () {
        yield 'one,';
        yield Buffer.from('two,');
        yield new Uint8Array([116, 104, 114, 101, 101]);
      })(),
    });
    const fetched = await undici.fetch(`${url}/users/6`, { dispatcher: session.dispatcher });
    return {
      got: { status: got.statusCode, body: await got.body.json() },
      streamed: (await streamed.body.json()).body,
      fetched: { status: fetched.status, body: await fetched.json() },
    };
  });
  assert.deepEqual(live.got, { status: 200, body: { id: '5', name: 'user 5', via: 'http' } });
  assert.equal(live.streamed, 'one,two,three');
  assert.deepEqual(live.fetched, { status: 200, body: { id: '6', name: 'user 6', via: 'http' } });
  assert.deepEqual(replayed, live);
});

test('curl in a child process with session.env', { skip: skipCurl }, async () => {
  const { live, replayed } = await recordThenReplay('clients/curl', async (session, url) => {
    const env = { ...process.env, ...session.env };
    const got = await helpers.run('curl', ['-sS', '--fail-with-body', `${url}/users/9`], { env });
    assert.equal(got.code, 0, got.stderr);
    const posted = await helpers.run('curl', ['-sS', '--fail-with-body', '-H', 'Content-Type: application/json', '-d', '{"c":3}', `${url}/things`], { env });
    assert.equal(posted.code, 0, posted.stderr);
    return { got: JSON.parse(got.stdout), posted: JSON.parse(posted.stdout).body };
  });
  assert.deepEqual(live.got, { id: '9', name: 'user 9', via: 'http' });
  assert.equal(live.posted, '{"c":3}');
  assert.deepEqual(replayed, live);
});

test('applyEnv() points child processes that inherit the environment at the session, and close() puts it back', { skip: skipCurl }, async () => {
  process.env.ALL_PROXY = 'http://127.0.0.1:9';
  process.env.NO_PROXY = 'example.com';
  try {
    const { live, replayed } = await recordThenReplay('clients/inherited', async (session, url) => {
      session.applyEnv();
      assert.equal(process.env.HTTP_PROXY, session.proxy);
      assert.equal(process.env.https_proxy, session.proxy);
      assert.equal(process.env.CURL_CA_BUNDLE, session.caBundle);
      assert.equal(process.env.NODE_EXTRA_CA_CERTS, session.caBundle);
      assert.equal(process.env.ALL_PROXY, undefined);
      assert.equal(process.env.NO_PROXY, '');
      const got = await helpers.run('curl', ['-sS', '--fail-with-body', `${url}/users/10`]);
      assert.equal(got.code, 0, got.stderr);
      return JSON.parse(got.stdout);
    });
    assert.deepEqual(live, { id: '10', name: 'user 10', via: 'http' });
    assert.deepEqual(replayed, live);
    assert.equal(process.env.HTTP_PROXY, undefined);
    assert.equal(process.env.CURL_CA_BUNDLE, undefined);
    assert.equal(process.env.ALL_PROXY, 'http://127.0.0.1:9');
    assert.equal(process.env.NO_PROXY, 'example.com');
  } finally {
    delete process.env.ALL_PROXY;
    delete process.env.NO_PROXY;
  }
});
