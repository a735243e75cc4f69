'use strict';
// kakapo-proxy/node-test end to end: `node --test` on a generated project (kakapo-proxy in its
// node_modules), recording from a local upstream, then replaying with the upstream closed; then a
// changed request fails its test with Kakapo's report, and a bad KAKAPO_RECORD fails the file.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const { fileSafe } = require('../lib/naming');
const { KakapoError } = require('../lib/errors');

const skip = helpers.haveCommand('curl') ? false : 'needs curl on PATH';

const CJS_TESTS = `
const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const kakapo = require('kakapo-proxy/node-test').useKakapo();

const API = process.env.API;
const source = process.env.KAKAPO_RECORD === 'none' ? 'cassette' : 'upstream';

test('gets a user', async () => {
  const answer = await fetch(API + '/users/' + (process.env.CHANGED ? '3' : '1'));
  assert.equal(answer.status, 200); // the miss answers 404: the test fails, and the report is shown too
  assert.equal(answer.headers.get('x-kakapo-source'), source);
  assert.deepEqual(await answer.json(), { id: '1', name: 'user 1', via: 'http' });
});

test('curl in a child process [2]', () => {
  assert.equal(process.env.HTTP_PROXY, kakapo.session.proxy);
  const out = execFileSync('curl', ['-sS', '--fail-with-body', API + '/users/2']);
  assert.deepEqual(JSON.parse(out), { id: '2', name: 'user 2', via: 'http' });
});

describe('posts', () => {
  test('a JSON body', async () => {
    const answer = await fetch(API + '/things', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    assert.equal(answer.status, 201);
    assert.equal((await answer.json()).body, '{"n":1}');
    assert.equal(await kakapo.session.count('POST', '/things'), 1);
  });
});

test('sends nothing', () => {
  assert.equal(typeof kakapo.session.id, 'string');
});
`;

const ESM_TESTS = `
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useKakapo } from 'kakapo-proxy/node-test';

const kakapo = useKakapo();

test('from ESM', async () => {
  const answer = await fetch(process.env.API + '/users/5');
  assert.equal(answer.status, 200);
  assert.equal((await answer.json()).id, '5');
  assert.ok(kakapo.session.cassette.endsWith('/cassettes/esm.test/from_ESM-' + process.env.ESM_HASH + '.json'), kakapo.session.cassette);
});
`;

// Tests of one name: in two describe blocks (told apart where node:test gives hooks the full name), and
// twice at the top (never told apart). HIDE_FULL_NAME makes this Node look like one whose hooks get a
// test's own name only (Node 18, Node 20 before 20.16).
const SAME_NAMES_TESTS = `
const nodeTest = require('node:test');
const { test, describe } = nodeTest;
const assert = require('node:assert/strict');
if (process.env.HIDE_FULL_NAME) {
  nodeTest.beforeEach((t) => {
    Object.defineProperty(Object.getPrototypeOf(t), 'fullName', { get() { return undefined; }, configurable: true });
  });
}
require('kakapo-proxy/node-test').useKakapo();

const API = process.env.API;
const get = async (id) => {
  const answer = await fetch(API + '/users/' + id);
  assert.equal(answer.status, 200);
  assert.equal((await answer.json()).id, String(id));
};

describe('users', () => {
  test('gets one', () => get(1));
});
describe('admins', () => {
  test('gets one', () => get(2));
});
test('twice', () => get(3));
test('twice', () => get(4));
`;

let project;
let api;

before(async () => {
  project = helpers.projectWithPackage();
  fs.mkdirSync(path.join(project, 'tests'));
  fs.writeFileSync(path.join(project, 'tests', 'api.test.js'), CJS_TESTS);
  fs.writeFileSync(path.join(project, 'tests', 'esm.test.mjs'), ESM_TESTS);
  fs.writeFileSync(path.join(project, 'tests', 'same-names.test.js'), SAME_NAMES_TESTS);
  api = await helpers.startApi();
});

after(async () => {
  if (api) await api.close();
});

function environment(extra) {
  const env = { ...process.env, API: api.url, ESM_HASH: fileSafe('from ESM').split('-').pop(), ...extra };
  for (const name of ['NODE_TEST_CONTEXT', 'NODE_OPTIONS']) delete env[name]; // this test's own runner's
  return env;
}

test('node --test records each test in its own cassette, then replays them with the upstream closed', { skip }, async (t) => {
  // Where node:test gives hooks the full name (Node 22.3 and 20.16 on), a test's describe blocks name its cassette too.
  const fullNames = typeof t.fullName === 'string';
  const files = ['tests/api.test.js', 'tests/esm.test.mjs'];
  const recording = await helpers.nodeTest(project, files, environment({}));
  assert.equal(recording.code, 0, recording.output);
  assert.match(recording.output, /pass 5/);
  const folder = path.join(project, 'tests', 'cassettes');
  const expected = {
    'api.test': ['gets a user', 'curl in a child process [2]', fullNames ? 'posts > a JSON body' : 'a JSON body'], // 'sends nothing' records nothing
    'esm.test': ['from ESM'],
  };
  for (const [stem, names] of Object.entries(expected)) {
    assert.deepEqual(fs.readdirSync(path.join(folder, stem)).sort(), names.map((name) => fileSafe(name) + '.json').sort());
  }
  const cassette = JSON.parse(fs.readFileSync(path.join(folder, 'api.test', fileSafe('gets a user') + '.json'), 'utf8'));
  assert.deepEqual(cassette.interactions.map((i) => i.request.url), [`${api.url}/users/1`]);
  const hits = api.hits;
  assert.equal(hits, 4);
  await api.close();

  const replaying = await helpers.nodeTest(project, files, environment({ KAKAPO_RECORD: 'none' }));
  assert.equal(replaying.code, 0, replaying.output);
  assert.match(replaying.output, /pass 5/);
  assert.equal(api.hits, hits);

  const changed = await helpers.nodeTest(project, ['tests/api.test.js'], environment({ KAKAPO_RECORD: 'none', CHANGED: '1' }));
  assert.equal(changed.code, 1, changed.output);
  assert.match(changed.output, /pass 3/);
  assert.match(changed.output, /fail 1/);
  const cassetteName = `tests/cassettes/api.test/${fileSafe('gets a user')}.json`;
  assert.ok(changed.output.includes(`Kakapo: 1 request(s) missed cassette ${cassetteName} (mode none, session `), changed.output);
  assert.ok(changed.output.includes(`nearest: #0 GET ${api.url}/users/1`), changed.output);
  assert.ok(changed.output.includes('path: /users/3 here, /users/1 recorded'), changed.output);
  assert.ok(changed.output.includes('404 !== 200'), changed.output);

  const badMode = await helpers.nodeTest(project, ['tests/api.test.js'], environment({ KAKAPO_RECORD: 'sometimes' }));
  assert.equal(badMode.code, 1, badMode.output);
  assert.ok(badMode.output.includes('KAKAPO_RECORD=sometimes: not a record mode; it is one of none, new, all, once, passthrough'), badMode.output);
  assert.doesNotMatch(badMode.output, /pass [1-9]/);
});

test('two tests whose names give one cassette: the second fails with an error saying so', { skip }, async (t) => {
  const fullNames = typeof t.fullName === 'string';
  const folder = path.join(project, 'tests', 'cassettes', 'same-names.test');
  const sharing = /kakapo-proxy\/node-test: two tests named "twice" in .*same-names\.test\.js would share the cassette .*twice\.json, each overwriting what the other recorded\. Give them distinct names, or choose each test's cassette with useKakapo\(\{ cassette: \(\{ file, name \}\) => \.\.\. \}\)\./;
  const ownNameOnly = "This Node's node:test tells hooks a test's own name only, not its describe blocks' (Node 22.3 and 20.16 on tell both).";
  const own = await helpers.startApi(); // the first test closed the shared one
  const run = (extra) => helpers.nodeTest(project, ['tests/same-names.test.js'], environment({ KAKAPO_RECORD: 'new', API: own.url, ...extra }));
  try {
    const native = await run({});
    assert.equal(native.code, 1, native.output);
    if (fullNames) {
      // The describe blocks tell `gets one` apart; the second `twice` fails.
      assert.match(native.output, /pass 3/);
      assert.match(native.output, /fail 1/);
      assert.match(native.output, sharing);
      assert.deepEqual(fs.readdirSync(folder).sort(), ['admins > gets one', 'twice', 'users > gets one'].map((name) => fileSafe(name) + '.json').sort());
    } else {
      assert.match(native.output, /pass 2/);
      assert.match(native.output, /fail 2/);
    }
    fs.rmSync(folder, { recursive: true, force: true });

    // A Node whose hooks know a test's own name only: the second `gets one` fails too, and says why.
    const ownNames = await run({ HIDE_FULL_NAME: '1' });
    assert.equal(ownNames.code, 1, ownNames.output);
    assert.match(ownNames.output, /pass 2/);
    assert.match(ownNames.output, /fail 2/);
    assert.ok(ownNames.output.includes('two tests named "gets one" in '), ownNames.output);
    assert.ok(ownNames.output.includes(ownNameOnly), ownNames.output);
    assert.deepEqual(fs.readdirSync(folder).sort(), ['gets one', 'twice'].map((name) => fileSafe(name) + '.json').sort());
    const kept = JSON.parse(fs.readFileSync(path.join(folder, fileSafe('gets one') + '.json'), 'utf8'));
    assert.deepEqual(kept.interactions.map((i) => i.request.url), [`${own.url}/users/1`], "the first test's recording is kept");
  } finally {
    await own.close();
  }
});

test("a test's cassette name: its full name where node:test gives it, else its own; two tests on one cassette are refused", () => {
  const { testName, CassetteClaims } = require('../lib/node-test-naming');
  // Node 18, and 20 before 20.16: hooks get the test's own name only.
  const old = (name) => ({ name });
  const current = (name, fullName) => ({ name, fullName });
  assert.equal(testName(old('x')), 'x');
  assert.equal(testName(current('x', 'users > x')), 'users > x');
  assert.equal(testName(current('x', '')), 'x');

  const claims = new CassetteClaims();
  const first = old('gets one');
  const second = old('gets one');
  claims.claim('/c/gets_one.json', first, 'gets one', '/t/a.test.js');
  claims.claim('/c/gets_one.json', first, 'gets one', '/t/a.test.js'); // the same test again (a second useKakapo())
  assert.throws(
    () => claims.claim('/c/gets_one.json', second, 'gets one', '/t/a.test.js'),
    (error) =>
      error instanceof KakapoError &&
      error.message ===
        'kakapo-proxy/node-test: two tests named "gets one" in /t/a.test.js would share the cassette /c/gets_one.json, each overwriting ' +
          "what the other recorded. This Node's node:test tells hooks a test's own name only, not its describe blocks' (Node 22.3 " +
          "and 20.16 on tell both). Give them distinct names, or choose each test's cassette with useKakapo({ cassette: ({ file, name }) => ... }).",
  );
  // Two names that give one file name (brackets become _): refused, unless the cassette option chose it.
  claims.claim('/c/get_1.json', current('get[1]', 'get[1]'), 'get[1]', '/t/a.test.js');
  assert.throws(() => claims.claim('/c/get_1.json', current('get_1', 'get_1'), 'get_1', '/t/a.test.js'), /the tests "get\[1\]" and "get_1" in \/t\/a\.test\.js would share the cassette/);
  claims.claim('/c/shared.json', current('a', 'a'), 'a', '/t/a.test.js', { chosen: true });
  claims.claim('/c/shared.json', current('b', 'b'), 'b', '/t/a.test.js', { chosen: true });
  assert.throws(() => claims.claim('/c/shared.json', current('a', 'a'), 'a', '/t/a.test.js', { chosen: true }), /two tests named "a"/);
});
