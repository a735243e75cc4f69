'use strict';
// pack.sh packs both packages (with the kakapo binary the tests use), and `npm install --offline` of the
// two tarballs into a fresh project works: there the binary comes from @kakapo-proxy/linux-x64, with no
// KAKAPO_BIN and no kakapo on PATH, and a session records through it.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();

const version = /public static let current = "([^"]+)"/.exec(
  fs.readFileSync(path.join(helpers.REPOSITORY, 'Sources', 'KakapoHTTP', 'KakapoVersion.swift'), 'utf8'),
)[1];

const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64';
const skip = !onLinuxX64 ? 'the platform package is for Linux x64' : !helpers.haveCommand('npm') ? 'needs npm on PATH' : false;

test("the committed package.json files carry Kakapo's version", () => {
  const main = JSON.parse(fs.readFileSync(path.join(helpers.PACKAGE, 'package.json'), 'utf8'));
  const platform = JSON.parse(fs.readFileSync(path.join(helpers.PACKAGE, 'npm', 'linux-x64', 'package.json'), 'utf8'));
  assert.equal(main.version, version);
  assert.equal(platform.version, version);
  assert.deepEqual(main.optionalDependencies, { '@kakapo-proxy/linux-x64': version });
  assert.deepEqual([platform.name, platform.os, platform.cpu], ['@kakapo-proxy/linux-x64', ['linux'], ['x64']]);
  assert.deepEqual(main.dependencies, undefined, 'no runtime dependencies');
});

test('pack.sh packs both packages, and npm installs them offline into a project that finds the binary', { skip, timeout: 600_000 }, async () => {
  const out = helpers.temporaryFolder('kakapo-node-pack-');
  const packed = await helpers.run(path.join(helpers.PACKAGE, 'pack.sh'), [helpers.kakapoBinary(), out]);
  assert.equal(packed.code, 0, packed.stderr);
  const tarballs = packed.stdout.trim().split('\n');
  assert.deepEqual(tarballs, [path.join(out, `kakapo-proxy-linux-x64-${version}.tgz`), path.join(out, `kakapo-proxy-${version}.tgz`)]);
  const listing = await helpers.run('tar', ['tzf', tarballs[1]]);
  const files = listing.stdout.trim().split('\n').sort();
  assert.ok(files.includes('package/lib/dispatcher.js') && files.includes('package/vitest.mjs') && files.includes('package/index.d.ts'), files.join(' '));
  assert.ok(!files.some((file) => file.startsWith('package/test') || file.includes('node_modules')), files.join(' '));

  const project = helpers.temporaryFolder('kakapo-node-install-');
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'installs-kakapo-proxy', private: true }));
  const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_cache: path.join(project, '.npm-cache') };
  const installed = await helpers.run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], { cwd: project, env: npmEnv });
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);
  const binary = path.join(project, 'node_modules', '@kakapo-proxy', 'linux-x64', 'bin', 'kakapo');
  fs.accessSync(binary, fs.constants.X_OK);

  // No KAKAPO_BIN, and a PATH with node and nothing else of ours.
  const env = { ...process.env, PATH: path.dirname(process.execPath) + ':/usr/bin:/bin' };
  delete env.KAKAPO_BIN;
  delete env.NODE_TEST_CONTEXT;
  assert.ok(!fs.existsSync('/usr/bin/kakapo') && !fs.existsSync('/bin/kakapo'), 'a kakapo on the PATH would hide what is tested');
  const api = await helpers.startApi();
  try {
    const script = `
      const kakapo = require('kakapo-proxy');
      (async () => {
        const server = await kakapo.start({ cassetteDir: 'cassettes' });
        const session = await server.open('installed', { mode: 'once' });
        const answer = await fetch(process.env.API + '/users/1');
        const body = await answer.json();
        const summary = await session.close();
        await server.stop();
        console.log(JSON.stringify({ binary: server.binary, found: kakapo.findBinary(), source: answer.headers.get('x-kakapo-source'), body, recorded: summary.recorded }));
      })().catch((error) => { console.error(error); process.exit(1); });
    `;
    const ran = await helpers.run(process.execPath, ['-e', script], { cwd: project, env: { ...env, API: api.url } });
    assert.equal(ran.code, 0, ran.stdout + ran.stderr);
    const said = JSON.parse(ran.stdout.trim().split('\n').pop());
    assert.equal(said.binary, binary);
    assert.equal(said.found, binary);
    assert.equal(said.source, 'upstream');
    assert.deepEqual(said.body, { id: '1', name: 'user 1', via: 'http' });
    assert.equal(said.recorded, 1);
    assert.ok(fs.existsSync(path.join(project, 'cassettes', 'installed.json')));
  } finally {
    await api.close();
  }
  const shim = await helpers.run(path.join(project, 'node_modules', '.bin', 'kakapo'), ['--version'], { cwd: project, env });
  assert.equal(shim.code, 0, shim.stderr);
  assert.equal(shim.stdout.trim(), version);
  const esm = await helpers.run(process.execPath, ['--input-type=module', '-e', "import { start, KakapoError } from 'kakapo-proxy'; import { useKakapo } from 'kakapo-proxy/node-test'; console.log(typeof start, typeof KakapoError, typeof useKakapo);"], { cwd: project, env });
  assert.equal(esm.code, 0, esm.stderr);
  assert.equal(esm.stdout.trim(), 'function function function');
});
