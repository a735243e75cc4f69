'use strict';
// kakapo-proxy/jest and kakapo-proxy/vitest, run by minimal stand-ins of their hook APIs
// (test-support/jest-standin.js and vitest-standin.mjs): NOT by Jest or Vitest, which cannot be
// installed here (no npm registry). The Jest stand-in runs the test file in a vm context of its own with
// a copied process.env, as Jest's node environment does, so the adapter has to route Node's own fetch()
// and environment, not the sandbox's copies.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const { fileSafe } = require('../lib/naming');

const skip = helpers.haveCommand('curl') ? false : 'needs curl on PATH';

// The same tests for both runners, after each one's imports.
const USERS_TESTS = `
const kakapo = useKakapo();
const API = process.env.API;
const source = process.env.KAKAPO_RECORD === 'none' ? 'cassette' : 'upstream';

test('gets a user', async () => {
  const answer = await fetch(API + '/users/' + (process.env.CHANGED ? '3' : '1'));
  if (process.env.CHANGED) return;
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('x-kakapo-source'), source);
  assert.deepEqual(await answer.json(), { id: '1', name: 'user 1', via: 'http' });
});

describe('users', () => {
  test('curl in a child process', () => {
    assert.equal(process.env.HTTP_PROXY, kakapo.session.proxy); // under Jest, the sandbox's copy of the environment
    const out = execFileSync('curl', ['-sS', '--fail-with-body', API + '/users/2']); // Node's own environment
    assert.deepEqual(JSON.parse(out), { id: '2', name: 'user 2', via: 'http' });
  });
});
`;

// Loose deepEqual: the answers' objects come from Node's realm, the literals from the sandbox's, whose
// prototypes differ (Jest's own toEqual ignores that too).
const JEST_TESTS = `
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const { useKakapo } = require('kakapo-proxy/jest');
${USERS_TESTS}`;

const VITEST_TESTS = `
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'vitest';
import { useKakapo } from 'kakapo-proxy/vitest';
${USERS_TESTS}`;

// The stand-in \`vitest\` package: the hooks register on the runner's registry.
const VITEST_STAND_IN = `
const registry = () => globalThis.__vitestStandIn;
const suites = [];
export function beforeEach(fn) { registry().beforeEach.push(fn); }
export function afterEach(fn) { registry().afterEach.push(fn); }
export function test(name, fn) { registry().tests.push({ name, suites: [...suites], fn }); }
export function describe(name, fn) { suites.push(name); try { fn(); } finally { suites.pop(); } }
`;

let project;
let api;

before(async () => {
  project = helpers.projectWithPackage();
  fs.mkdirSync(path.join(project, 'tests'));
  fs.writeFileSync(path.join(project, 'tests', 'users.test.js'), JEST_TESTS);
  fs.writeFileSync(path.join(project, 'tests', 'users.spec.mjs'), VITEST_TESTS);
  const vitest = path.join(project, 'node_modules', 'vitest');
  fs.mkdirSync(vitest, { recursive: true });
  fs.writeFileSync(path.join(vitest, 'package.json'), JSON.stringify({ name: 'vitest', version: '0.0.0-stand-in', type: 'module', exports: { '.': './index.js' } }));
  fs.writeFileSync(path.join(vitest, 'index.js'), VITEST_STAND_IN);
  api = await helpers.startApi();
});

after(async () => {
  if (api) await api.close();
});

function runStandIn(runner, file, extra = {}) {
  const env = { ...process.env, API: api.url, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return helpers.run(process.execPath, [path.join(helpers.PACKAGE, 'test-support', runner), path.join(project, 'tests', file)], { cwd: project, env });
}

for (const { runner, file, stem } of [
  { runner: 'jest-standin.js', file: 'users.test.js', stem: 'users.test' },
  { runner: 'vitest-standin.mjs', file: 'users.spec.mjs', stem: 'users.spec' },
]) {
  const which = runner.split('-')[0];
  test(`the ${which} adapter records each test in its own cassette, replays them, and fails a test that missed`, { skip }, async () => {
    const names = ['gets a user', 'users curl in a child process'];
    const recording = await runStandIn(runner, file);
    const recorded = helpers.results(recording.stdout);
    assert.deepEqual(Object.keys(recorded).sort(), names, recording.stdout + recording.stderr);
    for (const name of names) assert.ok(recorded[name].ok, `${name}: ${recorded[name].error}`);
    const folder = path.join(project, 'tests', 'cassettes', stem);
    assert.deepEqual(fs.readdirSync(folder).sort(), names.map((name) => fileSafe(name) + '.json').sort());

    const hits = api.hits;
    const replaying = await runStandIn(runner, file, { KAKAPO_RECORD: 'none' });
    const replayed = helpers.results(replaying.stdout);
    for (const name of names) assert.ok(replayed[name] && replayed[name].ok, `${name}: ${JSON.stringify(replayed[name])}`);
    assert.equal(api.hits, hits, 'replayed, not sent');

    const changed = await runStandIn(runner, file, { KAKAPO_RECORD: 'none', CHANGED: '1' });
    const failed = helpers.results(changed.stdout);
    assert.ok(failed['users curl in a child process'].ok);
    const report = failed['gets a user'].error || '';
    assert.ok(!failed['gets a user'].ok);
    assert.ok(report.startsWith(`Kakapo: 1 request(s) missed cassette tests/cassettes/${stem}/${fileSafe('gets a user')}.json (mode none, session `), report);
    assert.ok(report.includes('path: /users/3 here, /users/1 recorded'), report);

    const badMode = await runStandIn(runner, file, { KAKAPO_RECORD: 'sometimes' });
    const loading = helpers.results(badMode.stdout)['(load)'];
    assert.ok(loading && !loading.ok);
    assert.ok(loading.error.includes('KAKAPO_RECORD=sometimes: not a record mode; it is one of none, new, all, once, passthrough'), loading.error);
  });
}
