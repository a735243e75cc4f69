'use strict';
// Answers of Kakapo's admin API that are not what Kakapo sends: a session answer kakapo-proxy cannot use
// fails open() with a KakapoError, after it ended the session Kakapo opened (DELETE), with fetch() and
// the environment untouched; a summary of odd shapes still gives a report. A fake admin server (node:http
// on port 0) answers in Kakapo's place.

const { test, before, after, beforeEach } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const { KakapoServer } = require('../lib/server');
const { openSession } = require('../lib/session');
const { KakapoError } = require('../lib/errors');
const { missReport, unusedReport } = require('../lib/report');
const routing = require('../lib/routing');

const ID = '0123456789abcdef';

let admin;
let server;

/** The fake admin API: POST /__kakapo/sessions answers `admin.answer` (raw text when a string), DELETE answers `admin.summary`. */
async function startAdmin() {
  const fake = { requests: [], answer: null, summary: {}, port: 0 };
  fake.server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      fake.requests.push({ method: request.method, url: request.url, body });
      const reply = request.method === 'POST' ? fake.answer : fake.summary;
      response.writeHead(request.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json' });
      response.end(typeof reply === 'string' ? reply : JSON.stringify(reply));
    });
  });
  await new Promise((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  fake.port = fake.server.address().port;
  return fake;
}

before(async () => {
  admin = await startAdmin();
  // A server object talking to the fake, as a started one talks to Kakapo (nothing is spawned).
  server = new KakapoServer({ cassetteDir: helpers.temporaryFolder() });
  server.port = admin.port;
  server.mode = 'new';
  server.caBundle = '/nonexistent/ca-bundle.pem';
  server.kakapoCaPem = '';
});

after(async () => {
  server.adminAgent.destroy();
  await new Promise((resolve) => admin.server.close(resolve));
});

beforeEach(() => {
  admin.requests = [];
  admin.summary = {};
});

const deletes = () => admin.requests.filter((request) => request.method === 'DELETE').map((request) => request.url);

const HOSTILE = [
  // [what, answer, the problem named, whether a DELETE can name the session]
  ['a proxy whose user name is not valid percent-encoding', { id: ID, proxy: 'http://%E0:@127.0.0.1:1' }, /its proxy "http:\/\/%E0:@127\.0\.0\.1:1" is not a URL kakapo-proxy can use \(URI malformed\)/, true],
  ['a proxy that is not http:', { id: ID, proxy: `https://${ID}:@127.0.0.1:1` }, /is not http:\/\/ID:@127\.0\.0\.1:PORT/, true],
  ['a proxy elsewhere than 127.0.0.1', { id: ID, proxy: `http://${ID}:@example.com:8080` }, /is not http:\/\/ID:@127\.0\.0\.1:PORT/, true],
  ['a proxy with no port', { id: ID, proxy: `http://${ID}:@127.0.0.1` }, /is not http:\/\/ID:@127\.0\.0\.1:PORT/, true],
  ['a proxy naming another session', { id: ID, proxy: 'http://ffffffffffffffff:@127.0.0.1:1' }, /does not name the session 0123456789abcdef/, true],
  ['a proxy that is not text', { id: ID, proxy: 42 }, /its proxy 42 is not a URL/, true],
  ['a proxy that is not a URL', { id: ID, proxy: 'not a url' }, /its proxy "not a url" is not a URL kakapo-proxy can use/, true],
  ['an id with a slash', { id: '../../x', proxy: 'http://..%2F..%2Fx:@127.0.0.1:1' }, /its id "\.\.\/\.\.\/x" is not a session id/, true],
  ['no id', { proxy: `http://${ID}:@127.0.0.1:1` }, /its id undefined is not a session id/, false],
  ['an id that is not text', { id: { a: 1 }, proxy: `http://${ID}:@127.0.0.1:1` }, /its id \{"a":1\} is not a session id/, false],
  ['an array', [], /it is not an object/, false],
  ['no answer', '', /it is not an object/, false],
  ['a string', '"text"', /it is not an object/, false],
];

for (const [what, answer, problem, named] of HOSTILE) {
  test(`an answer with ${what} fails open() with a KakapoError${named ? ', after it ended the session' : ''}`, async () => {
    admin.answer = answer;
    const dispatcherBefore = routing.current();
    const proxyBefore = process.env.HTTP_PROXY;
    await assert.rejects(openSession(server, 'hostile/answer', { mode: 'new', env: true }), (error) => {
      assert.ok(error instanceof KakapoError, `${error.name}: ${error.message}`);
      assert.match(error.message, /^kakapo's answer to POST \/__kakapo\/sessions is not usable: /);
      assert.match(error.message, problem);
      if (named) assert.match(error.message, /\(session ".*" ended\)$/);
      return true;
    });
    const id = answer && typeof answer === 'object' ? answer.id : undefined;
    assert.deepEqual(deletes(), named ? [`/__kakapo/sessions/${encodeURIComponent(id)}`] : []);
    assert.equal(routing.current(), dispatcherBefore, 'fetch() is not routed');
    assert.equal(process.env.HTTP_PROXY, proxyBefore, 'the environment is not changed');
  });
}

test('a DELETE that fails too is named in the error', async () => {
  admin.answer = { id: ID, proxy: 'http://%E0:@127.0.0.1:1' };
  admin.summary = '{"error": broken'; // not JSON
  await assert.rejects(openSession(server, 'hostile/answer', { mode: 'new' }), /URI malformed.*\(and ending session "0123456789abcdef" failed: kakapo's answer to DELETE \/__kakapo\/sessions\/0123456789abcdef is not JSON/);
});

test("Kakapo's answers are taken: http://ID:@127.0.0.1:PORT, and its forward-proxy form http://USER+ID@127.0.0.1:PORT", async () => {
  for (const proxy of [`http://${ID}:@127.0.0.1:${admin.port}`, `http://ci%20user+${ID}@127.0.0.1:${admin.port}`]) {
    admin.answer = { id: ID, proxy, mode: 'new' };
    const session = await openSession(server, 'fine/answer', { mode: 'new' });
    try {
      assert.equal(session.id, ID);
      assert.equal(session.proxy, proxy);
      assert.equal(routing.current(), session.dispatcher);
    } finally {
      await session.close();
    }
    assert.deepEqual(deletes(), [`/__kakapo/sessions/${ID}`]);
    admin.requests = [];
  }
});

test('a summary of odd shapes gives a report, not a TypeError', async () => {
  admin.answer = { id: ID, proxy: `http://${ID}:@127.0.0.1:${admin.port}`, mode: 'none' };
  admin.summary = {
    misses: [
      null,
      { method: 'GET', url: 'http://api.test/a', nearest: {} },
      { line: { not: 'text' }, method: 7, nearest: [null, 'near', { interaction: '3', method: 'GET', url: 'http://api.test/b', differences: 'not a list' }] },
      { method: 'POST', url: 'http://api.test/c', nearest: [{ interaction: 0, method: 'POST', url: 'http://api.test/c', differences: ['body: 1 here', { odd: true }] }] },
    ],
    unused: { not: 'a list' },
    missCount: 'many',
    warning: { not: 'text' },
  };
  const session = await openSession(server, 'odd/summary', { mode: 'none', requireCassette: false });
  const summary = await session.close();
  assert.equal(session.unusedReport(summary), null);
  assert.equal(
    session.missReport(summary),
    [
      `Kakapo: 4 request(s) missed cassette ${session.cassette} (mode none, session ${ID}):`,
      '  (a miss kakapo described as null)',
      '  GET http://api.test/a',
      '    no recording is near it',
      '  7 ?',
      '    nearest: null',
      '    nearest: "near"',
      '    nearest: #3 GET http://api.test/b',
      '  POST http://api.test/c',
      '    nearest: #0 POST http://api.test/c',
      '      body: 1 here',
      '      {"odd":true}',
      "Record it with KAKAPO_RECORD=new (or the session's mode 'new'), or fix the request.",
    ].join('\n'),
  );
});

test('missReport() and unusedReport() take any value', () => {
  for (const summary of [null, undefined, 'text', 42, [], {}, { misses: 'x' }, { misses: {} }, { misses: [] }]) {
    assert.equal(missReport(summary), null, JSON.stringify(summary));
    assert.equal(unusedReport(summary), null, JSON.stringify(summary));
  }
  assert.equal(missReport({ misses: [null] }, { cassette: 'c.json', mode: 'none', id: ID }).split('\n')[1], '  (a miss kakapo described as null)');
  assert.equal(missReport({ misses: [{ nearest: {} }] }).split('\n').slice(0, 3).join('\n'), 'Kakapo: 1 request(s) missed cassette ? (mode ?, session ?):\n  ? ?\n    no recording is near it');
  assert.equal(
    unusedReport({ unused: [null, 5, { interaction: 2, method: 'GET', url: 'http://api.test/', label: { x: 1 } }, { interaction: 1, method: 'GET', url: 'http://api.test/l', label: 'named' }] }),
    '  unused: null\n  unused: 5\n  unused: #2 GET http://api.test/\n  unused: #1 GET http://api.test/l named',
  );
});
