'use strict';
// What is decided before a request is sent: the binary, the record mode, the cassette's name and
// place, the environment; and the report a strict session's misses give.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');
const { findBinary } = require('../lib/binary');
const { listedHost } = require('../lib/session');

let root;
let server;

before(async () => {
  root = helpers.temporaryFolder();
  server = await kakapo.start({ cassetteDir: root });
});

after(async () => {
  await server.stop();
});

test('a miss in a strict session gives the report: the request, the nearest recordings, how they differ', async () => {
  const api = await helpers.startApi();
  const recording = await server.open('strict/users', { mode: 'once' });
  assert.equal((await fetch(`${api.url}/users/1`)).status, 200);
  await recording.close();
  await api.close();

  const replaying = await server.open('strict/users', { mode: 'none', strict: true });
  const missed = await fetch(`${api.url}/users/2`);
  assert.equal(missed.status, 404);
  const answer = await missed.json();
  assert.equal(answer.error.code, 'kakapo_miss');
  const summary = await replaying.close();
  assert.equal(summary.strict, true);
  assert.equal(summary.misses.length, 1);
  const report = replaying.missReport();
  const lines = report.split('\n');
  assert.match(lines[0], new RegExp(`^Kakapo: 1 request\\(s\\) missed cassette strict/users\\.json \\(mode none, session ${replaying.id}\\):$`));
  assert.match(lines[1], new RegExp(`^  GET http://127\\.0\\.0\\.1:${api.port}/users/2: `));
  assert.equal(lines[2], `    nearest: #0 GET http://127.0.0.1:${api.port}/users/1`);
  assert.equal(lines[3], '      path: /users/2 here, /users/1 recorded');
  assert.equal(lines[lines.length - 1], "Record it with KAKAPO_RECORD=new (or the session's mode 'new'), or fix the request.");
  assert.equal(kakapo.missReport(summary), report);
  assert.equal(kakapo.missReport({ misses: [] }), null);
});

test('a record mode that is none of the five is an error naming them', async () => {
  process.env.KAKAPO_RECORD = 'sometimes';
  try {
    await assert.rejects(
      new kakapo.KakapoServer({ cassetteDir: root }).start(),
      (error) => error instanceof kakapo.KakapoError && error.message === 'KAKAPO_RECORD=sometimes: not a record mode; it is one of none, new, all, once, passthrough',
    );
    await assert.rejects(kakapo.start({ cassetteDir: root, mode: undefined, serveArgs: ['--verbose'] }), /KAKAPO_RECORD=sometimes: not a record mode/);
  } finally {
    delete process.env.KAKAPO_RECORD;
  }
  assert.equal(kakapo.recordMode(undefined, {}), 'once');
  assert.equal(kakapo.recordMode(undefined, { KAKAPO_RECORD: 'all' }), 'all');
  assert.equal(kakapo.recordMode('none', { KAKAPO_RECORD: 'all' }), 'none');
  await assert.rejects(server.open('x', { mode: 'sometimes' }), /mode "sometimes" is not a record mode; it is one of none, new, all, once, passthrough/);
});

test('mode none on a cassette that does not exist, and a cassette outside the folder, are errors', async () => {
  await assert.rejects(server.open('nowhere/test', { mode: 'none' }), (error) => {
    assert.match(error.message, /^mode none replays only, and cassette .*nowhere\/test\.json does not exist: record it first \(KAKAPO_RECORD=once\)$/);
    return true;
  });
  await assert.rejects(server.open('../elsewhere.json', { mode: 'new' }), /is outside the cassette folder/);
  await assert.rejects(server.open(path.join(path.dirname(root), 'other.json'), { mode: 'new' }), /is outside the cassette folder/);
});

test('the binary: the option, then KAKAPO_BIN, then the platform package, then PATH; else an error naming them all', () => {
  const binary = helpers.kakapoBinary();
  assert.equal(findBinary({ binary, env: {} }), binary);
  assert.equal(findBinary({ env: { KAKAPO_BIN: binary } }), binary);
  assert.equal(findBinary({ env: { PATH: path.dirname(binary) } }), binary);
  assert.throws(() => findBinary({ binary: path.join(root, 'no-kakapo'), env: {} }), /^KakapoError: binary .*no-kakapo: no executable file there$/);
  assert.throws(() => findBinary({ env: { KAKAPO_BIN: '/nonexistent/kakapo' } }), /KAKAPO_BIN=\/nonexistent\/kakapo: no executable file there/);
  assert.throws(
    () => findBinary({ env: { PATH: root } }),
    (error) =>
      error.message ===
      'kakapo-proxy cannot find the kakapo executable: pass { binary: PATH }, set KAKAPO_BIN, install kakapo-proxy with its ' +
        'optional dependency @kakapo-proxy/linux-x64 (@kakapo-proxy/linux-x64 is not installed), or put kakapo on PATH',
  );
});

test('cassette names follow pytest-kakapo: brackets kept as _, a hash when anything else is lost', () => {
  assert.equal(kakapo.fileSafe('test_get'), 'test_get');
  assert.equal(kakapo.fileSafe('test_get[1]'), 'test_get_1');
  // The names pytest-kakapo's _file_safe gives these (checked against it).
  assert.equal(kakapo.fileSafe('test_get[a/b]'), 'test_get_a_b-56ceed7d');
  assert.equal(kakapo.fileSafe('gets a user'), 'gets_a_user-7297dd8b');
  assert.equal(kakapo.fileSafe('ünï code'), 'n_code-cf620527');
  assert.notEqual(kakapo.fileSafe('a b'), kakapo.fileSafe('a/b'));
  assert.equal(kakapo.fileSafe('...'), 'test-' + require('node:crypto').createHash('sha256').update('...').digest('hex').slice(0, 8));
  const long = kakapo.fileSafe('x'.repeat(200));
  assert.equal(long.length, 130 + 1 + 16);
  assert.equal(
    kakapo.testCassette('/p/tests/users.test.js', 'gets a user'),
    `/p/tests/cassettes/users.test/${kakapo.fileSafe('gets a user')}.json`,
  );
});

test('session.env names the proxy, the CA bundle and the ignored hosts', async () => {
  const session = await server.open('env/names', { mode: 'all', ignoreHosts: ['internal.example', 'localhost:3000'] });
  try {
    const env = session.env;
    assert.deepEqual(Object.keys(env).sort(), [
      'CURL_CA_BUNDLE', 'HTTPS_PROXY', 'HTTP_PROXY', 'NODE_EXTRA_CA_CERTS', 'NO_PROXY', 'REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE', 'http_proxy', 'https_proxy', 'no_proxy',
    ]);
    assert.equal(env.HTTP_PROXY, `http://${session.id}:@127.0.0.1:${server.port}`);
    assert.equal(env.HTTPS_PROXY, env.HTTP_PROXY);
    assert.equal(env.SSL_CERT_FILE, server.caBundle);
    assert.ok(fs.existsSync(env.SSL_CERT_FILE));
    assert.equal(env.NO_PROXY, 'internal.example,localhost:3000');
    assert.equal(session.proxyAuthorization, `Basic ${Buffer.from(`${session.id}:`).toString('base64')}`);
    assert.deepEqual(session.headers, { 'X-Kakapo-Session': session.id });
  } finally {
    await session.close();
  }
  const listed = (url, hosts) => listedHost(new URL(url), hosts);
  assert.ok(listed('http://api.internal.example/x', ['internal.example']));
  assert.ok(listed('http://internal.example/x', ['.internal.example']));
  assert.ok(listed('https://a.b.example:8443/', ['*.example']));
  assert.ok(!listed('http://notinternal.example/', ['internal.example']));
  assert.ok(listed('http://localhost:3000/', ['localhost:3000']));
  assert.ok(!listed('http://localhost:3001/', ['localhost:3000']));
  assert.ok(listed('http://[::1]:80/', ['::1']));
  assert.ok(listed('http://anything/', ['*']));
  assert.ok(listed('http://b.test/', ['a.test, b.test']));
});

test('session.count() counts the requests Kakapo saw', async () => {
  const api = await helpers.startApi();
  const session = await server.open('count/users', { mode: 'all' });
  try {
    await server.admin('DELETE', '/__kakapo/requests');
    for (const id of [1, 2, 3]) await (await fetch(`${api.url}/users/${id}`)).text();
    await (await fetch(`${api.url}/things`, { method: 'POST', body: '{}' })).text();
    assert.equal(await session.count('GET', '/users/:id'), 3);
    assert.equal(await session.count(undefined, '**'), 4);
    assert.equal(await session.count('post', '/things'), 1);
  } finally {
    await session.close();
    await api.close();
  }
});

test('start() gives the same server for the same options, and a stopped server is started afresh', async () => {
  const again = await kakapo.start({ cassetteDir: root });
  assert.equal(again, server);
  const other = await kakapo.start({ cassetteDir: root, serveArgs: ['--no-http2'] });
  assert.notEqual(other, server);
  assert.ok(other.port > 0 && other.port !== server.port);
  const pid = other.pid;
  await other.stop();
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
  const restarted = await kakapo.start({ cassetteDir: root, serveArgs: ['--no-http2'] });
  assert.notEqual(restarted, other);
  await restarted.stop();
});
