'use strict';
// bin/kakapo.js (`npx kakapo`): runs the binary, passes SIGINT, SIGTERM and SIGHUP on to it, and exits
// as it exits, or dies of the signal that killed it. A stand-in binary (a Node script) says which
// signals it got; the real kakapo is stopped through the shim too.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();

const SHIM = path.join(helpers.PACKAGE, 'bin', 'kakapo.js');
const haveProc = fs.existsSync('/proc/self/stat');
// A hang guard only (a shim that does not pass a signal on leaves its binary running).
const HANG_GUARD = { timeout: 60_000 };

/** Ends what a test left running (a binary the shim failed to stop). */
function cleanUp(...pids) {
  for (const pid of pids) {
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** A stand-in kakapo: prints `ready PID`, then on a signal prints `got SIGNAL` and does what FAKE_ON_SIGNAL says. */
function standIn() {
  const file = path.join(helpers.temporaryFolder('kakapo-node-shim-'), 'kakapo');
  fs.writeFileSync(
    file,
    `#!${process.execPath}
'use strict';
const how = process.env.FAKE_ON_SIGNAL || 'exit:40';
if (how.startsWith('status:')) process.exit(Number(how.slice(7)));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    process.stdout.write('got ' + signal + '\\n');
    if (how === 'raise') {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(Number(how.slice(5)));
    }
  });
}
process.stdout.write('ready ' + process.pid + '\\n');
setInterval(() => {}, 1000);
`,
    { mode: 0o755 },
  );
  return file;
}

/** Runs the shim with `args`; { process, ready (the binary's pid, once it said so), exited, output() }. */
function runShim(args, env, options = {}) {
  const child = spawn(process.execPath, [SHIM, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const ready = new Promise((resolve, reject) => {
    const look = () => {
      const found = /ready (\d+)\n/.exec(out);
      if (found) resolve(Number(found[1]));
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.once('exit', () => reject(new Error(`the shim ended before its binary was ready: ${out}`)));
  });
  ready.catch(() => {});
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { process: child, ready, exited, output: () => out };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!haveProc) return true;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

function processGroup(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

test('the shim exits with the status of the binary', HANG_GUARD, async () => {
  const binary = standIn();
  const run = runShim([], { KAKAPO_BIN: binary, FAKE_ON_SIGNAL: 'status:7' });
  assert.deepEqual(await run.exited, { code: 7, signal: null });
  const missing = runShim([], { KAKAPO_BIN: path.join(path.dirname(binary), 'nothing') });
  assert.deepEqual(await missing.exited, { code: 127, signal: null });
  assert.match(missing.output(), /KAKAPO_BIN=.*nothing: no executable file there/);
});

for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT']) {
  test(`${signal} to the shim reaches the binary, and the shim exits as the binary does`, HANG_GUARD, async () => {
    const run = runShim(['serve'], { KAKAPO_BIN: standIn(), FAKE_ON_SIGNAL: 'exit:40' });
    const pid = await run.ready;
    try {
      run.process.kill(signal);
      assert.deepEqual(await run.exited, { code: 40, signal: null }, run.output());
      assert.ok(run.output().includes(`got ${signal}\n`), run.output());
      assert.ok(!alive(pid), `the binary (pid ${pid}) is still running`);
    } finally {
      cleanUp(pid);
    }
  });
}

test('the shim dies of the signal that killed the binary', HANG_GUARD, async () => {
  const run = runShim([], { KAKAPO_BIN: standIn(), FAKE_ON_SIGNAL: 'raise' });
  const pid = await run.ready;
  try {
    run.process.kill('SIGHUP');
    assert.deepEqual(await run.exited, { code: null, signal: 'SIGHUP' }, run.output());
    assert.ok(!alive(pid));
  } finally {
    cleanUp(pid);
  }
});

test("with no terminal, the binary has a process group of its own: a signal to the shim's group reaches it once, through the shim", { ...HANG_GUARD, skip: !haveProc && 'needs /proc' }, async () => {
  // The shim leads a group of its own here, as under timeout(1) or a `kill -TERM -PGID`.
  const run = runShim([], { KAKAPO_BIN: standIn(), FAKE_ON_SIGNAL: 'exit:41' }, { detached: true });
  const pid = await run.ready;
  try {
    assert.equal(processGroup(run.process.pid), run.process.pid);
    assert.notEqual(processGroup(pid), run.process.pid, "the binary is not in the shim's group");
    process.kill(-run.process.pid, 'SIGTERM');
    assert.deepEqual(await run.exited, { code: 41, signal: null }, run.output());
    assert.equal(run.output().match(/got /g).length, 1, run.output());
  } finally {
    cleanUp(pid);
  }
});

test('SIGTERM to the shim stops the real kakapo, which exits cleanly', { ...HANG_GUARD, skip: !haveProc && 'needs /proc' }, async () => {
  const root = helpers.temporaryFolder();
  const run = spawn(process.execPath, [SHIM, 'serve', '--proxy', '--cassette-dir', root, '--port', '0'], {
    env: { ...process.env, KAKAPO_BIN: helpers.kakapoBinary() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  run.stdout.on('data', (chunk) => (out += chunk));
  run.stderr.on('data', (chunk) => (out += chunk));
  const exited = new Promise((resolve) => run.once('exit', (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    const look = () => /listening on http:\/\/127\.0\.0\.1:\d+/.test(out) && resolve();
    run.stdout.on('data', look);
    run.stderr.on('data', look);
    run.once('exit', () => reject(new Error(`kakapo ended before it listened: ${out}`)));
  });
  const children = fs.readFileSync(`/proc/${run.pid}/task/${run.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  assert.equal(children.length, 1, `the shim's children: ${children}`);
  const kakapo = children[0];
  try {
    run.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null }, out);
    assert.ok(!alive(kakapo), `kakapo (pid ${kakapo}) is still running`);
  } finally {
    cleanUp(kakapo);
  }
});
