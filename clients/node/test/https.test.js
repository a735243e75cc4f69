'use strict';
// HTTPS: fetch() goes through a CONNECT tunnel that Kakapo decrypts with a certificate from its CA;
// curl in a child process does the same from session.env (HTTPS_PROXY and the CA bundle). The upstream
// is a local node:https server with a CA of its own (made by openssl), which Kakapo is told to trust
// with --upstream-ca.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');

const missing = ['openssl', 'curl'].filter((name) => !helpers.haveCommand(name));
const skip = missing.length ? `needs ${missing.join(' and ')} on PATH` : false;

let root;
let server;
let api;

before(async () => {
  if (skip) return;
  root = helpers.temporaryFolder();
  api = await helpers.startHttpsApi();
  server = await kakapo.start({ cassetteDir: root, serveArgs: ['--upstream-ca', api.caFile] });
});

after(async () => {
  if (server) await server.stop();
  if (api) await api.close().catch(() => {});
});

test('fetch() and curl reach an HTTPS upstream through the session, then replay it with the upstream closed', { skip }, async () => {
  const curl = (session, url) =>
    helpers.run('curl', ['-sS', '--fail-with-body', url], { env: { ...process.env, ...session.env, PATH: process.env.PATH } });
  const exchange = async (session) => {
    const got = await fetch(`${api.url}/users/7`);
    const posted = await fetch(`${api.url}/things`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' });
    const child = await curl(session, `${api.url}/users/8`);
    assert.equal(child.code, 0, child.stderr);
    return {
      got: { status: got.status, source: got.headers.get('x-kakapo-source'), body: await got.json() },
      posted: { status: posted.status, body: await posted.json() },
      curl: JSON.parse(child.stdout),
    };
  };

  const recording = await server.open('https/api', { mode: 'once' });
  assert.equal(recording.mode, 'new');
  const caText = fs.readFileSync(recording.caBundle, 'utf8');
  assert.ok(caText.includes(fs.readFileSync(server.kakapoCa, 'utf8').trim()), "the bundle holds Kakapo's CA");
  assert.ok((caText.match(/BEGIN CERTIFICATE/g) || []).length > 10, "and the system's CAs");
  const live = await exchange(recording);
  const recorded = await recording.close();
  assert.equal(recorded.recorded, 3, JSON.stringify(recorded));
  assert.equal(live.got.source, 'upstream');
  assert.deepEqual(live.got.body, { id: '7', name: 'user 7', via: 'https' });
  assert.equal(live.posted.status, 201);
  assert.equal(live.posted.body.body, '{"a":1}');
  assert.deepEqual(live.curl, { id: '8', name: 'user 8', via: 'https' });
  const cassette = JSON.parse(fs.readFileSync(path.join(root, 'https', 'api.json'), 'utf8'));
  assert.ok(cassette.interactions.every((i) => i.request.url.startsWith(`https://localhost:${api.port}/`)), 'recorded through the tunnel');
  const hits = api.hits;
  await api.close();

  const replaying = await server.open('https/api', { mode: 'once' });
  assert.equal(replaying.mode, 'none');
  const replayed = await exchange(replaying);
  const summary = await replaying.close();
  assert.equal(summary.replayed, 3);
  assert.deepEqual(summary.misses, []);
  assert.equal(api.hits, hits);
  assert.equal(replayed.got.source, 'cassette');
  assert.deepEqual(replayed.got.body, live.got.body);
  assert.deepEqual(replayed.posted, live.posted);
  assert.deepEqual(replayed.curl, live.curl);
});
