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

let project;
let api;

before(async () => {
  project = helpers.projectWithPackage();
  fs.mkdirSync(path.join(project, 'tests'));
  fs.writeFileSync(path.join(project, 'tests', 'api.test.js'), CJS_TESTS);
  fs.writeFileSync(path.join(project, 'tests', 'esm.test.mjs'), ESM_TESTS);
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

test('node --test records each test in its own cassette, then replays them with the upstream closed', { skip }, async () => {
  const files = ['tests/api.test.js', 'tests/esm.test.mjs'];
  const recording = await helpers.nodeTest(project, files, environment({}));
  assert.equal(recording.code, 0, recording.output);
  assert.match(recording.output, /pass 5/);
  const folder = path.join(project, 'tests', 'cassettes');
  const expected = {
    'api.test': ['gets a user', 'curl in a child process [2]', 'a JSON body'], // 'sends nothing' records nothing
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
