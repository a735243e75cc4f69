'use strict';
// Node's global fetch() through a session: recorded from a local upstream, then replayed with the
// upstream gone, by kakapo-proxy's own dispatcher (no undici package involved).

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');
const routing = require('../lib/routing');

let root;
let server;

before(async () => {
  root = helpers.temporaryFolder();
  server = await kakapo.start({ cassetteDir: root });
});

after(async () => {
  await server.stop();
});

test('a GET through plain fetch() is recorded, then replayed with the upstream closed', async () => {
  const api = await helpers.startApi();
  const recording = await server.open('fetch/get.json', { mode: 'once' });
  assert.equal(recording.mode, 'new');
  const first = await fetch(`${api.url}/users/1`);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-kakapo-source'), 'upstream');
  const recorded = await first.text();
  const summary = await recording.close();
  assert.equal(summary.recorded, 1);
  assert.deepEqual(summary.misses, []);
  assert.equal(api.hits, 1);
  assert.ok(fs.existsSync(path.join(root, 'fetch', 'get.json')), 'the cassette file is there');
  await api.close();

  const replaying = await server.open('fetch/get.json', { mode: 'once' });
  assert.equal(replaying.mode, 'none');
  const again = await fetch(`${api.url}/users/1`);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('x-kakapo-source'), 'cassette');
  assert.equal(await again.text(), recorded);
  assert.deepEqual(JSON.parse(recorded), { id: '1', name: 'user 1', via: 'http' });
  const replayed = await replaying.close();
  assert.equal(replayed.replayed, 1);
  assert.equal(replayed.recorded, 0);
});

test('a POST with a JSON body, a 404 and a large streamed answer are recorded and replayed', async () => {
  const api = await helpers.startApi();
  const payload = { name: 'Ada', tags: ['a', 'b'], n: 3 };
  const exchange = async () => {
    const posted = await fetch(`${api.url}/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(payload),
    });
    const missing = await fetch(`${api.url}/missing`);
    const big = await fetch(`${api.url}/big`);
    return {
      posted: { status: posted.status, body: await posted.json() },
      missing: { status: missing.status, body: await missing.json() },
      big: { status: big.status, bytes: Buffer.from(await big.arrayBuffer()) },
    };
  };
  const recording = await server.open('fetch/post-404-big', { mode: 'new' });
  const live = await exchange();
  const summary = await recording.close();
  assert.equal(summary.recorded, 3);
  assert.equal(live.posted.status, 201);
  assert.equal(live.posted.body.method, 'POST');
  assert.equal(live.posted.body.contentType, 'application/json');
  assert.deepEqual(JSON.parse(live.posted.body.body), payload);
  assert.equal(live.missing.status, 404);
  assert.deepEqual(live.missing.body, { error: 'no such thing' });
  assert.equal(live.big.status, 200);
  assert.equal(live.big.bytes.length, api.bigSize);
  assert.equal(helpers.sha256(live.big.bytes), helpers.sha256(helpers.bigBody(api.bigSize)));
  await api.close();

  const replaying = await server.open('fetch/post-404-big', { mode: 'none' });
  const replayed = await exchange();
  const again = await replaying.close();
  assert.equal(again.replayed, 3);
  assert.deepEqual(again.misses, []);
  assert.deepEqual(replayed.posted, live.posted);
  assert.deepEqual(replayed.missing, live.missing);
  assert.equal(replayed.big.status, 200);
  assert.equal(helpers.sha256(replayed.big.bytes), helpers.sha256(live.big.bytes));
});

test('a request body from a stream reaches the upstream whole', async () => {
  const api = await helpers.startApi();
  const session = await server.open('fetch/stream-body', { mode: 'all' });
  const pieces = [];
  for (let i = 0; i < 40; i++) pieces.push(Buffer.alloc(16 * 1024, i));
  const whole = Buffer.concat(pieces);
  const body = new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(new Uint8Array(piece));
      controller.close();
    },
  });
  const answer = await fetch(`${api.url}/upload`, { method: 'PUT', body, duplex: 'half', headers: { 'Content-Type': 'application/octet-stream' } });
  const echoed = await answer.json();
  assert.equal(answer.status, 200);
  assert.equal(echoed.length, whole.length);
  assert.equal(echoed.sha256, helpers.sha256(whole));
  assert.equal((await session.close()).recorded, 1);
  await api.close();
});

test('an aborted fetch() rejects with AbortError, and the session still ends', async () => {
  const api = await helpers.startApi();
  const session = await server.open('fetch/abort', { mode: 'all' });
  const controller = new AbortController();
  const answer = await fetch(`${api.url}/slow`, { signal: controller.signal });
  assert.equal(answer.status, 200);
  const reader = answer.body.getReader();
  const { value } = await reader.read();
  assert.equal(Buffer.from(value).toString(), 'first piece\n');
  controller.abort();
  await assert.rejects(reader.read(), (error) => error.name === 'AbortError');
  const early = new AbortController();
  early.abort();
  await assert.rejects(fetch(`${api.url}/users/2`, { signal: early.signal }), (error) => error.name === 'AbortError');
  const summary = await session.close();
  assert.equal(summary.id, session.id);
  await api.close();
});

test('fetch() gets its own dispatcher back when the session closes, whatever order sessions close in', async () => {
  const before = routing.current();
  assert.ok(before, 'Node has a global dispatcher');
  const one = await server.open('fetch/order-1', { mode: 'all' });
  assert.equal(routing.current(), one.dispatcher);
  const two = await server.open('fetch/order-2', { mode: 'all' });
  assert.equal(routing.current(), two.dispatcher);
  await one.close();
  assert.equal(routing.current(), two.dispatcher);
  await two.close();
  assert.equal(routing.current(), before);
  const unrouted = await server.open('fetch/unrouted', { mode: 'all', fetch: false });
  assert.equal(routing.current(), before);
  await unrouted.close();
});

test('hosts in ignoreHosts, and Kakapo itself, are reached directly', async () => {
  const api = await helpers.startApi();
  const session = await server.open('fetch/ignored', { mode: 'all', ignoreHosts: [`127.0.0.1:${api.port}`] });
  const direct = await fetch(`${api.url}/users/3`);
  assert.equal(direct.status, 200);
  assert.equal(direct.headers.get('x-kakapo-source'), null);
  await direct.text();
  const health = await fetch(`${server.url}/__kakapo/health`);
  assert.equal(health.status, 200);
  await health.json();
  assert.equal(session.env.NO_PROXY, `127.0.0.1:${api.port}`);
  const summary = await session.close();
  assert.equal(summary.recorded, 0);
  assert.equal(api.hits, 1);
  await api.close();
});

test('a request in a session that ended fails instead of leaving Kakapo', async () => {
  const api = await helpers.startApi();
  const session = await server.open('fetch/closed', { mode: 'all' });
  await session.close();
  await assert.rejects(
    new Promise((resolve, reject) =>
      session.dispatcher.dispatch({ origin: api.url, path: '/users/1', method: 'GET', headers: {} }, { onConnect() {}, onHeaders() {}, onData() {}, onComplete: resolve, onError: reject }),
    ),
    /closed/,
  );
  assert.equal(api.hits, 0);
  await api.close();
});

/** Sends one request through `dispatcher` with a handler of undici's protocol, noting each call. */
function dispatchOnce(dispatcher, opts, { pauseFirst = false } = {}) {
  return new Promise((resolve, reject) => {
    const calls = [];
    const chunks = [];
    let resumeLater = null;
    dispatcher.dispatch(opts, {
      onConnect(abort) {
        calls.push(['onConnect', typeof abort]);
      },
      onHeaders(status, rawHeaders, resume, statusText) {
        calls.push(['onHeaders', status, statusText, rawHeaders.every((item) => Buffer.isBuffer(item)), typeof resume]);
        this.headers = rawHeaders;
        if (pauseFirst) {
          resumeLater = resume;
          setTimeout(() => resumeLater(), 50);
          return false;
        }
        return true;
      },
      onData(chunk) {
        chunks.push(Buffer.from(chunk));
        return true;
      },
      onComplete(trailers) {
        calls.push(['onComplete', Array.isArray(trailers)]);
        const headers = {};
        for (let i = 0; i < this.headers.length; i += 2) headers[this.headers[i].toString('latin1').toLowerCase()] = this.headers[i + 1].toString('latin1');
        resolve({ calls, headers, body: Buffer.concat(chunks) });
      },
      onError(error) {
        calls.push(['onError', error.message]);
        reject(error);
      },
    });
  });
}

test("the dispatcher follows undici's handler protocol with every kind of request body", async () => {
  const api = await helpers.startApi();
  const session = await server.open('fetch/raw-dispatch', { mode: 'all', fetch: false });
  try {
    const bodies = {
      none: null,
      string: 'plain text ✓',
      buffer: Buffer.from('a buffer'),
      uint8array: new Uint8Array([98, 121, 116, 101, 115]),
      iterable: ['it', Buffer.from('er'), new Uint8Array([97, 98, 108, 101])],
      async: (async function* () {
        yield 'as';
        yield Buffer.from('ync');
      })(),
    };
    const expected = { none: '', string: 'plain text ✓', buffer: 'a buffer', uint8array: 'bytes', iterable: 'iterable', async: 'async' };
    for (const [kind, body] of Object.entries(bodies)) {
      const answer = await dispatchOnce(
        session.dispatcher,
        { origin: api.url, path: `/echo/${kind}?q=1`, method: body === null ? 'GET' : 'PUT', headers: ['X-Kind', kind, 'Accept', 'application/json'], body },
        { pauseFirst: kind === 'string' },
      );
      assert.deepEqual(answer.calls, [['onConnect', 'function'], ['onHeaders', 200, 'OK', true, 'function'], ['onComplete', true]], kind);
      assert.equal(answer.headers['x-kakapo-source'], 'upstream', kind);
      const echoed = JSON.parse(answer.body.toString('utf8'));
      assert.equal(echoed.path, `/echo/${kind}?q=1`);
      assert.equal(echoed.body, expected[kind], kind);
    }
    const big = await dispatchOnce(session.dispatcher, { origin: api.url, path: '/big', method: 'GET', headers: { accept: '*/*' } }, { pauseFirst: true });
    assert.equal(helpers.sha256(big.body), helpers.sha256(helpers.bigBody(api.bigSize)));
    // The abort function onConnect was given ends the exchange with onError, whatever the handler stores.
    const stored = await new Promise((resolve) => {
      let abort;
      session.dispatcher.dispatch(
        { origin: api.url, path: '/slow', method: 'GET', headers: {} },
        {
          onConnect(fn) {
            abort = fn;
          },
          onHeaders() {
            return true;
          },
          onData() {
            abort(new Error('enough'));
            return true;
          },
          onComplete() {
            resolve('completed');
          },
          onError(error) {
            resolve(error.message);
          },
        },
      );
    });
    assert.equal(stored, 'enough');
  } finally {
    await session.close();
    await api.close();
  }
});
