'use strict';
// The lock around `kakapo ca path`: taken from a holder that is gone, never from a live one, and the
// wait for it always ends (the event loop running meanwhile), with an error naming the lock.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFile } = require('node:child_process');
const helpers = require('../test-support/helpers');

helpers.cleanEnvironment();
const { withCaLock, LOCK_STALE_MS, CA_PATH_TIMEOUT_MS } = require('../lib/ca-bundle');
const { KakapoError } = require('../lib/errors');

// Hang guard only: every wait below ends long before it unless something is broken.
const HANG_GUARD_MS = 60_000;

/** The pid of a process that has ended (and been reaped). */
async function deadPid() {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid;
}

function lockIn(folder) {
  return path.join(folder, 'ca.lock');
}

function holdLock(lock, owner) {
  fs.mkdirSync(lock);
  if (owner !== undefined) fs.writeFileSync(path.join(lock, 'owner'), owner);
}

/** The event loop's turns during `promise`: a stuck loop gives none. */
async function ticksDuring(promise) {
  let ticks = 0;
  const timer = setInterval(() => (ticks += 1), 1);
  try {
    await promise;
  } catch {
    // the caller looks at the promise itself
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

test('the stale limit is longer than the `kakapo ca path` it guards', () => {
  assert.ok(LOCK_STALE_MS > CA_PATH_TIMEOUT_MS, `${LOCK_STALE_MS} <= ${CA_PATH_TIMEOUT_MS}`);
});

test('a lock whose holder process is gone is taken at once, and released after', async () => {
  const lock = lockIn(helpers.temporaryFolder());
  holdLock(lock, `${await deadPid()} - 0123456789abcdef\n`);
  let ran = false;
  const result = await withCaLock(
    async () => {
      ran = true;
      const owner = fs.readFileSync(path.join(lock, 'owner'), 'utf8');
      assert.match(owner, new RegExp(`^${process.pid} \\S+ [0-9a-f]{16}\\n$`));
      return 'done';
    },
    { lock, waitMs: HANG_GUARD_MS },
  );
  assert.equal(result, 'done');
  assert.ok(ran);
  assert.ok(!fs.existsSync(lock), 'released');
  assert.deepEqual(fs.readdirSync(path.dirname(lock)), [], 'nothing left aside');
});

test('a lock held by a live process is never taken: the wait ends with an error naming the lock and its holder', async () => {
  const lock = lockIn(helpers.temporaryFolder());
  holdLock(lock, `${process.pid} - 0123456789abcdef\n`);
  let ran = false;
  const waiting = withCaLock(() => (ran = true), { lock, waitMs: 200 });
  assert.ok((await ticksDuring(waiting)) > 0, 'the event loop ran while it waited');
  await assert.rejects(waiting, (error) => {
    assert.ok(error instanceof KakapoError);
    assert.match(error.message, /^cannot take the lock .* within 0\.2 s \(process \d+ holds it\)/);
    assert.ok(error.message.includes(lock), error.message);
    assert.ok(error.message.includes(`process ${process.pid} holds it`), error.message);
    return true;
  });
  assert.equal(ran, false);
  assert.ok(fs.existsSync(path.join(lock, 'owner')), "the live holder's lock is left alone");
});

test('a holder whose pid is now another process (another start time) is gone', { skip: !fs.existsSync('/proc/self/stat') && 'needs /proc' }, async () => {
  const lock = lockIn(helpers.temporaryFolder());
  holdLock(lock, `${process.pid} 1 0123456789abcdef\n`);
  assert.equal(await withCaLock(() => 'taken', { lock, waitMs: HANG_GUARD_MS }), 'taken');
});

test('a lock that names no holder is stale only when older than the stale limit', async () => {
  const lock = lockIn(helpers.temporaryFolder());
  holdLock(lock);
  await assert.rejects(withCaLock(() => 'no', { lock, waitMs: 150 }), /cannot take the lock .* \(another process holds it\)/);
  const old = (Date.now() - LOCK_STALE_MS - 60_000) / 1000;
  fs.utimesSync(lock, old, old);
  assert.equal(await withCaLock(() => 'taken', { lock, waitMs: HANG_GUARD_MS }), 'taken');
  assert.ok(!fs.existsSync(lock));
});

test('callers take the lock one at a time', async () => {
  const lock = lockIn(helpers.temporaryFolder());
  const events = [];
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const first = withCaLock(
    async () => {
      events.push('first in');
      await gate;
      events.push('first out');
    },
    { lock, waitMs: HANG_GUARD_MS },
  );
  const second = withCaLock(
    async () => {
      events.push('second in');
    },
    { lock, waitMs: HANG_GUARD_MS },
  );
  while (!events.length) await new Promise((resolve) => setTimeout(resolve, 5));
  release();
  await Promise.all([first, second]);
  assert.deepEqual(events, ['first in', 'first out', 'second in']);
});

// In a child process: a lock loop that spins would block its event loop for good, and the test runner's
// own timeout could not fire. The child is killed by execFile's timeout (a hang guard) if it does.
function lockChild(script) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { timeout: HANG_GUARD_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      resolve({ error, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const CHILD_PRELUDE = `
  const fs = require('node:fs');
  const path = require('node:path');
  const { withCaLock } = require(${JSON.stringify(path.join(helpers.PACKAGE, 'lib', 'ca-bundle.js'))});
  const report = (result) => process.stdout.write(JSON.stringify(result) + '\\n');
  async function attempt(options) {
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    try {
      return { ok: await withCaLock(() => 'taken', options), ticks };
    } catch (error) {
      return { message: error.message, name: error.name, ticks };
    } finally {
      clearInterval(timer);
    }
  }
`;

test('a stale lock that cannot be removed (EPERM) ends the wait at its deadline, the event loop running, with an error naming it', async () => {
  const lock = lockIn(helpers.temporaryFolder());
  const run = await lockChild(`${CHILD_PRELUDE}
    const lock = ${JSON.stringify(lock)};
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'owner'), '999999999 - 0123456789abcdef\\n'); // no such pid
    // As when another user made the folder in a sticky /tmp: it cannot be renamed or removed.
    for (const name of ['renameSync', 'rmSync', 'rmdirSync', 'unlinkSync']) {
      const real = fs[name];
      fs[name] = function (target, ...rest) {
        if (String(target).startsWith(lock)) {
          const error = new Error('EPERM: operation not permitted, ' + name + " '" + target + "'");
          error.code = 'EPERM';
          throw error;
        }
        return real.call(this, target, ...rest);
      };
    }
    attempt({ lock, waitMs: 300 }).then(report);
  `);
  assert.equal(run.error, null, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.name, 'KakapoError', run.stdout);
  assert.ok(result.message.startsWith(`cannot take the lock ${lock} within 0.3 s (it is stale (its holder, process 999999999, is gone) but cannot be removed: EPERM`), result.message);
  assert.ok(result.ticks > 0, 'the event loop ran while it waited');
});

test('a lock path that is a file, not a folder, is stale and taken (it made the old loop spin)', async () => {
  const lock = lockIn(helpers.temporaryFolder());
  const run = await lockChild(`${CHILD_PRELUDE}
    const lock = ${JSON.stringify(lock)};
    fs.writeFileSync(lock, 'not a folder');
    const old = (Date.now() - 3600_000) / 1000;
    fs.utimesSync(lock, old, old);
    attempt({ lock, waitMs: 30_000 }).then(report);
  `);
  assert.equal(run.error, null, run.stderr);
  assert.equal(JSON.parse(run.stdout).ok, 'taken', run.stdout);
  assert.ok(!fs.existsSync(lock));
});
