'use strict';
// The dispatcher's timeouts, undici's: headersTimeout (the response headers; the connection and, for
// https:, the CONNECT tunnel and its TLS handshake too) and bodyTimeout (between pieces of the body),
// default 300 s each, 0 for none, from the dispatch options, else the dispatcher's (a session's, from
// open() or the server's options). A fake proxy stands in for Kakapo where Kakapo would answer; the last
// tests go through Kakapo itself.
//
// No test depends on how fast the machine is: where a request must outlive a timeout, the test waits
// three times as long before it lets the request go on (a timer due earlier fires first); where a
// request must fail on the response headers, it goes over a connection a first request opened (else a
// stalled process could see the connection's own bound, the same headersTimeout, pass first).

const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');
const { KakapoDispatcher } = require('../lib/dispatcher');

const SHORT = 100; // ms: the timeouts the tests set
const HANG_GUARD = { timeout: 60_000 };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** dispatch() as a promise: { status, body } at onComplete, the error of onError. */
function send(dispatcher, opts, { onFirstData } = {}) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let status;
    let resume;
    dispatcher.dispatch(opts, {
      onConnect() {},
      onHeaders(code, headers, resumeFn) {
        status = code;
        resume = resumeFn;
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        if (onFirstData && chunks.length === 1) return onFirstData(resume);
        return true;
      },
      onComplete() {
        resolve({ status, body: Buffer.concat(chunks).toString() });
      },
      onError(error) {
        reject(error);
      },
    });
  });
}

/**
 * Starts `server` on a free port and keeps its open connections: `{url, sockets, close()}`, `sockets` a Set
 * with `opened`, how many it has had; `close()` drops them and stops the server.
 */
async function served(server) {
  const sockets = new Set();
  sockets.opened = 0;
  server.on('connection', (socket) => {
    sockets.opened += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    sockets,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A proxy that answers GET http://api.test/warm at once, and does what `handle(request, response)` says with other requests. */
async function fakeProxy(handle) {
  const server = http.createServer((request, response) => {
    if (request.url === 'http://api.test/warm') {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end('warm');
    } else {
      handle(request, response);
    }
  });
  return served(server);
}

/** A TCP server in Kakapo's place, for tunnels: `onSocket(socket)` with each connection. */
async function fakeTunnelProxy(onSocket) {
  const server = net.createServer(onSocket);
  return served(server);
}

/** Waits until the fake's connections are all closed (the dispatcher dropped them). */
async function allClosed(fake) {
  while (fake.sockets.size) await sleep(10);
}

/** A request that opens a keep-alive connection, for the next request to go over. */
async function warmUp(dispatcher) {
  assert.deepEqual(await send(dispatcher, { origin: 'http://api.test', path: '/warm', method: 'GET' }), { status: 200, body: 'warm' });
}

function dispatcherFor(fake, options = {}) {
  return new KakapoDispatcher({ proxyUrl: fake.url, authorization: 'Basic dGVzdDo=', ...options });
}

test("undici's defaults: 300 s each; a value that is not a number of ms is refused", () => {
  const dispatcher = new KakapoDispatcher({ proxyUrl: 'http://127.0.0.1:1', authorization: 'x' });
  assert.equal(dispatcher.headersTimeout, 300_000);
  assert.equal(dispatcher.bodyTimeout, 300_000);
  assert.throws(() => new KakapoDispatcher({ proxyUrl: 'http://127.0.0.1:1', authorization: 'x', bodyTimeout: -1 }), /bodyTimeout must be a number of milliseconds/);
  assert.throws(() => new KakapoDispatcher({ proxyUrl: 'http://127.0.0.1:1', authorization: 'x', headersTimeout: '5' }), /headersTimeout must be a number of milliseconds/);
});

test('response headers that do not come fail the request with UND_ERR_HEADERS_TIMEOUT, and its connection is closed', HANG_GUARD, async () => {
  const fake = await fakeProxy(() => {}); // never answers
  const dispatcher = dispatcherFor(fake, { headersTimeout: SHORT });
  try {
    await warmUp(dispatcher);
    await assert.rejects(send(dispatcher, { origin: 'http://api.test', path: '/x', method: 'GET' }), (error) => {
      assert.equal(error.code, 'UND_ERR_HEADERS_TIMEOUT');
      assert.equal(error.name, 'HeadersTimeoutError');
      assert.match(error.message, /within 100 ms .*headersTimeout/);
      return true;
    });
    assert.equal(fake.sockets.opened, 1, 'it went over the connection the first request opened');
    await allClosed(fake);
    // fetch() gets it the way it gets any error of its dispatcher: as the cause of its TypeError.
    await warmUp(dispatcher);
    await assert.rejects(fetch('http://api.test/y', { dispatcher }), (error) => {
      assert.equal(error.name, 'TypeError');
      assert.equal(error.cause && error.cause.code, 'UND_ERR_HEADERS_TIMEOUT');
      return true;
    });
  } finally {
    await dispatcher.destroy();
    await fake.close();
  }
});

test("the dispatch options' timeouts come before the dispatcher's, and 0 turns one off", HANG_GUARD, async () => {
  const waiting = [];
  const fake = await fakeProxy((request, response) => waiting.push(response));
  const answer = (response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    response.end('late but fine');
  };
  const quick = dispatcherFor(fake, { headersTimeout: SHORT });
  const patient = dispatcherFor(fake); // 300 s
  try {
    const unlimited = send(quick, { origin: 'http://api.test', path: '/a', method: 'GET', headersTimeout: 0 });
    while (!waiting.length) await sleep(5);
    await sleep(3 * SHORT); // past the dispatcher's own headersTimeout
    answer(waiting.shift());
    assert.deepEqual(await unlimited, { status: 200, body: 'late but fine' });

    await warmUp(patient);
    await assert.rejects(send(patient, { origin: 'http://api.test', path: '/b', method: 'GET', headersTimeout: SHORT }), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  } finally {
    await quick.destroy();
    await patient.destroy();
    await fake.close();
  }
});

test('a body that stops fails with UND_ERR_BODY_TIMEOUT; one the handler keeps paused does not', HANG_GUARD, async () => {
  const started = [];
  const fake = await fakeProxy((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    response.write('first|');
    started.push(response); // the rest when the test says
  });
  const dispatcher = dispatcherFor(fake, { bodyTimeout: SHORT });
  try {
    await assert.rejects(send(dispatcher, { origin: 'http://api.test', path: '/stops', method: 'GET' }), (error) => {
      assert.equal(error.code, 'UND_ERR_BODY_TIMEOUT');
      assert.equal(error.name, 'BodyTimeoutError');
      assert.match(error.message, /for 100 ms .*bodyTimeout/);
      return true;
    });
    await allClosed(fake);

    const paused = send(
      dispatcher,
      { origin: 'http://api.test', path: '/paused', method: 'GET' },
      {
        onFirstData(resume) {
          setTimeout(() => {
            // Three bodyTimeouts later: had the timer run while paused, the request would have failed.
            started[started.length - 1].end('rest');
            resume();
          }, 3 * SHORT);
          return false;
        },
      },
    );
    assert.deepEqual(await paused, { status: 200, body: 'first|rest' });
  } finally {
    await dispatcher.destroy();
    await fake.close();
  }
});

test('a CONNECT that Kakapo does not answer fails with UND_ERR_CONNECT_TIMEOUT, and the half-made tunnel is closed', HANG_GUARD, async () => {
  const fake = await fakeTunnelProxy((socket) => socket.on('data', () => {})); // reads, never answers
  const dispatcher = dispatcherFor(fake, { headersTimeout: SHORT });
  try {
    await assert.rejects(send(dispatcher, { origin: 'https://api.test', path: '/x', method: 'GET' }), (error) => {
      assert.equal(error.code, 'UND_ERR_CONNECT_TIMEOUT');
      assert.equal(error.name, 'ConnectTimeoutError');
      assert.match(error.message, /no tunnel to api\.test:443 through kakapo at 127\.0\.0\.1:\d+ \(CONNECT and TLS handshake\) within 100 ms/);
      return true;
    });
    await allClosed(fake);
  } finally {
    await dispatcher.destroy();
    await fake.close();
  }
});

test('a TLS handshake that does not end inside the tunnel fails with UND_ERR_CONNECT_TIMEOUT', HANG_GUARD, async () => {
  const fake = await fakeTunnelProxy((socket) => {
    socket.once('data', () => socket.write('HTTP/1.1 200 Connection established\r\n\r\n')); // then silence
  });
  const dispatcher = dispatcherFor(fake);
  try {
    await assert.rejects(send(dispatcher, { origin: 'https://api.test', path: '/x', method: 'GET', headersTimeout: SHORT }), { code: 'UND_ERR_CONNECT_TIMEOUT' });
    await allClosed(fake);
  } finally {
    await dispatcher.destroy();
    await fake.close();
  }
});

test('destroy() ends a tunnel still being made', HANG_GUARD, async () => {
  const fake = await fakeTunnelProxy((socket) => socket.on('data', () => {}));
  const dispatcher = dispatcherFor(fake); // 300 s: only destroy() ends it
  const pending = send(dispatcher, { origin: 'https://api.test', path: '/x', method: 'GET' });
  while (!fake.sockets.size) await sleep(5);
  await dispatcher.destroy();
  await assert.rejects(pending, { code: 'UND_ERR_CLOSED' });
  await allClosed(fake);
  await fake.close();
});

describe('through Kakapo', () => {
  let root;
  let server;
  let api;

  before(async () => {
    root = helpers.temporaryFolder();
    server = await kakapo.start({ cassetteDir: root, headersTimeout: 250 });
    api = await helpers.startApi();
  });

  after(async () => {
    if (api) await api.close();
    if (server) await server.stop();
  });

  test("a session's timeouts: open()'s options, else the server's", async () => {
    const fromServer = await server.open('timeouts/server', { mode: 'all' });
    assert.equal(fromServer.dispatcher.headersTimeout, 250);
    assert.equal(fromServer.dispatcher.bodyTimeout, 300_000);
    await fromServer.close();
    const own = await server.open('timeouts/own', { mode: 'all', headersTimeout: 0, bodyTimeout: 1000 });
    assert.equal(own.dispatcher.headersTimeout, 0);
    assert.equal(own.dispatcher.bodyTimeout, 1000);
    await own.close();
    await assert.rejects(server.open('timeouts/bad', { mode: 'all', bodyTimeout: 'soon' }), (error) => {
      assert.ok(error instanceof kakapo.KakapoError);
      assert.match(error.message, /^bodyTimeout must be a number of milliseconds/);
      return true;
    });
  });

  test('fetch() in a session with a short headersTimeout: an upstream that never answers', HANG_GUARD, async () => {
    const session = await server.open('timeouts/headers', { mode: 'all', headersTimeout: SHORT });
    try {
      const warm = await fetch(`${api.url}/users/1`); // opens the connection the next request goes over
      assert.equal(warm.status, 200);
      await warm.text();
      await assert.rejects(fetch(`${api.url}/hold`), (error) => error.cause && error.cause.code === 'UND_ERR_HEADERS_TIMEOUT');
    } finally {
      await session.close();
    }
  });

  test('fetch() in a session with a short bodyTimeout: an upstream that stops mid-body', HANG_GUARD, async () => {
    const session = await server.open('timeouts/body', { mode: 'all', bodyTimeout: SHORT });
    try {
      const answer = await fetch(`${api.url}/slow`);
      assert.equal(answer.status, 200);
      const reader = answer.body.getReader();
      // Its first piece, and then nothing: the read that waits for more fails.
      await assert.rejects(
        (async () => {
          for (;;) if ((await reader.read()).done) return;
        })(),
        (error) => error.cause && error.cause.code === 'UND_ERR_BODY_TIMEOUT',
      );
    } finally {
      await session.close();
    }
  });
});
