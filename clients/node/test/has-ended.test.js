'use strict';
// Whether Kakapo's process has ended, where there is no /proc (macOS, the BSDs): kill(pid, 0), and ps
// for a zombie. Here /proc is hidden from kakapo-proxy (fs answers ENOENT for it), so the test runs
// what macOS runs; stopSync(), which the process's exit runs, then still waits for Kakapo to end.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const kakapo = require('..');
const { hasEnded } = require('../lib/server');

const linux = fs.existsSync('/proc/self/stat');
const skip = !linux ? 'compares with /proc' : !helpers.haveCommand('ps') ? 'needs ps' : false;

/** Runs `fn` with /proc hidden from this process's fs calls, as on a system that has none. */
function withoutProc(fn) {
  const { readFileSync, existsSync } = fs;
  const hidden = (file) => String(file) === '/proc' || String(file).startsWith('/proc/');
  fs.readFileSync = function (file, ...rest) {
    if (hidden(file)) {
      const error = new Error(`ENOENT: no such file or directory, open '${file}'`);
      error.code = 'ENOENT';
      throw error;
    }
    return readFileSync.call(this, file, ...rest);
  };
  fs.existsSync = (file) => (hidden(file) ? false : existsSync(file));
  try {
    return fn();
  } finally {
    fs.readFileSync = readFileSync;
    fs.existsSync = existsSync;
  }
}

/** `sh` that starts a child it never reaps (a zombie once it ends), then becomes `sleep 30`: { sleeper, zombie }. */
async function sleeperWithZombie() {
  const child = spawn('/bin/sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  for await (const chunk of child.stdout) {
    out += chunk;
    if (out.includes('\n')) break;
  }
  const zombie = Number(out.trim());
  // Until it has ended (and is a zombie): /proc tells.
  while (!hasEnded(zombie)) await new Promise((resolve) => setTimeout(resolve, 10));
  return { sleeper: child, zombie };
}

test('without /proc: a running process has not ended, a zombie and a reaped one have', { skip, timeout: 60_000 }, async () => {
  const { sleeper, zombie } = await sleeperWithZombie();
  try {
    assert.equal(hasEnded(sleeper.pid), false);
    assert.equal(withoutProc(() => hasEnded(sleeper.pid)), false, 'a running process (the old code took a missing /proc for "ended")');
    assert.equal(withoutProc(() => hasEnded(zombie)), true, 'a zombie (kill(pid, 0) succeeds on it; ps tells)');
  } finally {
    const exited = new Promise((resolve) => sleeper.once('exit', resolve));
    sleeper.kill('SIGKILL');
    await exited; // and reaped
  }
  assert.equal(withoutProc(() => hasEnded(sleeper.pid)), true);
});

test('without /proc, stopSync() still waits for Kakapo to end', { skip, timeout: 120_000 }, async () => {
  const server = new kakapo.KakapoServer({ cassetteDir: helpers.temporaryFolder() });
  await server.start();
  const pid = server.pid;
  try {
    assert.equal(hasEnded(pid), false);
    withoutProc(() => server.stopSync());
    assert.equal(hasEnded(pid), true, `kakapo (pid ${pid}) had not ended when stopSync() returned`);
  } finally {
    await server.stop();
  }
});
