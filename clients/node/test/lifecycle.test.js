'use strict';
// The Kakapo process never outlives the test process: stopped (SIGINT, so it saves open sessions) when
// the process runs out of work, when it calls process.exit(), and, through its watchdog (setpriv
// --pdeathsig on Linux), when it is killed outright: SIGKILL, or the SIGINT of a Ctrl-C, or SIGTERM.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');

function ended(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

async function waitUntilEnded(pid, seconds = 20) {
  const deadline = Date.now() + seconds * 1000;
  while (!ended(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return ended(pid);
}

/** Runs a child that opens a session, records one request and leaves the session open, then `how`. */
function child(root, api, how) {
  const script = `
    const kakapo = require(${JSON.stringify(helpers.PACKAGE)});
    (async () => {
      const server = await kakapo.start({ cassetteDir: ${JSON.stringify(root)} });
      await server.open('left-open', { mode: 'new' });
      await (await fetch(${JSON.stringify(api.url)} + '/users/1')).text();
      process.stdout.write('kakapo ' + server.pid + '\\n');
      if (${JSON.stringify(how)} === 'exit') process.exit(0);
      if (${JSON.stringify(how)}.startsWith('SIG')) setInterval(() => {}, 1000);
    })();
  `;
  const process_ = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = new Promise((resolve, reject) => {
    let out = '';
    process_.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /kakapo (\d+)/.exec(out);
      if (found) resolve(Number(found[1]));
    });
    process_.once('exit', () => reject(new Error(`the child ended before it said its kakapo's pid: ${out}`)));
  });
  const exited = new Promise((resolve) => process_.once('exit', (code, signal) => resolve({ code, signal })));
  return { process: process_, pid, exited };
}

const killed = ['SIGKILL', 'SIGINT', 'SIGTERM'];
for (const how of ['return', 'exit', ...killed]) {
  const what = killed.includes(how) ? `is killed with ${how}` : { return: 'runs out of work', exit: 'calls process.exit()' }[how];
  const skip = killed.includes(how) && !['/usr/bin/setpriv', '/bin/setpriv'].some((file) => fs.existsSync(file)) ? 'needs setpriv (util-linux)' : false;
  test(`Kakapo stops, and saves the open session, when the test process ${what}`, { skip }, async () => {
    const root = helpers.temporaryFolder();
    const api = await helpers.startApi();
    try {
      const run = child(root, api, how);
      const pid = await run.pid;
      if (killed.includes(how)) run.process.kill(how);
      const status = await run.exited;
      assert.deepEqual(status, killed.includes(how) ? { code: null, signal: how } : { code: 0, signal: null });
      assert.ok(await waitUntilEnded(pid), `kakapo (pid ${pid}) is still running`);
      assert.ok(fs.existsSync(path.join(root, 'left-open.json')), `no cassette; the folder has: ${fs.readdirSync(root).join(' ')}`);
      const cassette = JSON.parse(fs.readFileSync(path.join(root, 'left-open.json'), 'utf8'));
      assert.equal(cassette.interactions.length, 1);
    } finally {
      await api.close();
    }
  });
}

test('two servers making a fresh CA at once both get the same CA', async () => {
  const root = helpers.temporaryFolder();
  const caDir = path.join(helpers.temporaryFolder(), 'ca');
  const servers = [0, 1].map(() => new kakapo.KakapoServer({ cassetteDir: root, serveArgs: ['--ca-dir', caDir] }));
  try {
    await Promise.all(servers.map((server) => server.start()));
    assert.equal(servers[0].kakapoCa, path.join(caDir, 'kakapo-ca.pem'));
    assert.equal(servers[0].kakapoCaPem, servers[1].kakapoCaPem);
    assert.ok(fs.readFileSync(servers[1].caBundle, 'utf8').includes(servers[0].kakapoCaPem.trim()));
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
});
