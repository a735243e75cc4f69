'use strict';
// The CA bundle a session's clients trust: the system's CAs and Kakapo's.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');
const { execFile } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');
const { KakapoError } = require('./errors');

const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Alpine
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL
  '/etc/ssl/cert.pem', // macOS, BSDs
  '/etc/ssl/ca-bundle.pem', // openSUSE
];
// `kakapo ca path` may take this long (it makes the CA on first use).
const CA_PATH_TIMEOUT_MS = 60_000;
// How long a process waits for another's lock: longer than the holder may need (CA_PATH_TIMEOUT_MS).
const LOCK_WAIT_MS = 120_000;
// A lock that names no holder (one left by a process that died between making the folder and writing
// its name in it, or by an older kakapo-proxy) is stale after this: longer than any holder runs.
const LOCK_STALE_MS = 2 * CA_PATH_TIMEOUT_MS;
const LOCK_POLL_MS = 25;
const OWNER = 'owner';

/** The process's start time (field 22 of /proc/PID/stat, in clock ticks since boot), where /proc tells it. */
function startTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] || '';
  } catch {
    return '';
  }
}

/** Whether process `pid` is there (EPERM: it is, another user's). */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Who holds `lock`: { pid, start, token } from its owner file (start: '-' where /proc does not tell it;
 * token: this holding's own), or null when it names nobody (yet).
 */
function lockHolder(lock) {
  let text;
  try {
    text = fs.readFileSync(path.join(lock, OWNER), 'utf8');
  } catch {
    return null;
  }
  const found = /^(\d+) (\S+) (\S+)\n/.exec(text);
  if (!found) return null;
  return { pid: Number(found[1]), start: found[2], token: found[3] };
}

/**
 * Why `lock` may be taken from whoever made it (a string), or null while its holder may still be
 * using it: a holder whose process is gone; with no holder named, a folder older than `staleMs`.
 */
function staleness(lock, holder, staleMs) {
  let stat;
  try {
    stat = fs.lstatSync(lock);
  } catch {
    return null; // it went away meanwhile: mkdir again
  }
  if (!stat.isDirectory()) return 'it is not a folder';
  if (holder) {
    if (!isAlive(holder.pid)) return `its holder, process ${holder.pid}, is gone`;
    const start = holder.start !== '-' && startTime(holder.pid);
    if (start && start !== holder.start) return `its holder, process ${holder.pid}, is gone (the pid is another process's now)`;
    return null;
  }
  const age = Date.now() - stat.mtimeMs;
  return age > staleMs ? `it names no holder and is ${Math.round(age / 1000)} s old` : null;
}

/**
 * Removes the stale `lock`: renamed aside first (atomic: of two processes that found it stale, one
 * takes it), then deleted. A lock someone made again meanwhile (its holder is not the one judged gone)
 * is put back. Throws what the file system said when it cannot be removed.
 */
function removeStale(lock, judged) {
  const aside = `${lock}.stale-${process.pid}-${Date.now()}`;
  try {
    fs.renameSync(lock, aside);
  } catch (error) {
    if (error.code === 'ENOENT') return;
    throw error;
  }
  const now = lockHolder(aside);
  if (judged && (!now || now.token !== judged.token)) {
    try {
      fs.renameSync(aside, lock); // not the lock judged stale: someone's fresh one
      return;
    } catch {
      // taken again meanwhile: the fresh one is lost, as if its holder had been slow
    }
  }
  fs.rmSync(aside, { recursive: true, force: true });
}

/** The lock every kakapo-proxy of this user takes around `kakapo ca path`. */
function caLockPath() {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return path.join(os.tmpdir(), `kakapo-proxy-ca-${uid}.lock`);
}

/**
 * Runs `fn` holding a lock shared by every kakapo-proxy of this user: `kakapo ca path` makes the CA on
 * first use, and two processes doing that at once can see each other's half-made CA. The lock is a
 * folder (mkdir is atomic) holding the holder's pid (and start time, where /proc tells it): it is taken
 * from a holder whose process is gone, never from a live one. Every turn of the wait sleeps and looks at
 * the deadline, whatever happened; past it, the error names the lock and what holds it.
 * options (for tests): lock (the path), waitMs, staleMs, pollMs.
 */
async function withCaLock(fn, options = {}) {
  const lock = options.lock || caLockPath();
  const waitMs = options.waitMs ?? LOCK_WAIT_MS;
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const pollMs = options.pollMs ?? LOCK_POLL_MS;
  const deadline = Date.now() + waitMs;
  const token = crypto.randomBytes(8).toString('hex');
  let why = 'another process holds it';
  for (;;) {
    try {
      fs.mkdirSync(lock);
      try {
        fs.writeFileSync(path.join(lock, OWNER), `${process.pid} ${startTime(process.pid) || '-'} ${token}\n`);
      } catch (error) {
        try {
          fs.rmSync(lock, { recursive: true, force: true });
        } catch {
          // left to go stale
        }
        throw new KakapoError(`cannot take the lock ${lock}: ${error.message}`);
      }
      break;
    } catch (error) {
      if (error instanceof KakapoError) throw error;
      if (error.code !== 'EEXIST') throw new KakapoError(`cannot take the lock ${lock}: ${error.message}`);
      const holder = lockHolder(lock);
      why = holder ? `process ${holder.pid} holds it` : 'another process holds it';
      const stale = staleness(lock, holder, staleMs);
      if (stale) {
        try {
          removeStale(lock, holder);
          why = `it was stale (${stale})`;
        } catch (removal) {
          why = `it is stale (${stale}) but cannot be removed: ${removal.message}`;
        }
      }
    }
    // Whatever happened above: the deadline, then a pause (the event loop runs meanwhile).
    if (Date.now() >= deadline) {
      throw new KakapoError(
        `cannot take the lock ${lock} within ${waitMs / 1000} s (${why}); ` +
          'if no kakapo-proxy is starting, remove it',
      );
    }
    await sleep(pollMs);
  }
  try {
    return await fn();
  } finally {
    const holder = lockHolder(lock);
    if (holder && holder.token === token) {
      try {
        fs.rmSync(lock, { recursive: true, force: true });
      } catch {
        // left to go stale: its holder (this process) will be gone
      }
    }
  }
}

/** The path of Kakapo's CA certificate (PEM), made by `kakapo ca path` on first use. */
async function kakapoCaPath(binary, caDir, env) {
  const args = ['ca', 'path'];
  if (caDir) args.push('--ca-dir', caDir);
  const { stdout } = await withCaLock(
    () =>
      new Promise((resolve, reject) => {
        execFile(binary, args, { env, timeout: CA_PATH_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (error, out, err) => {
          if (error) {
            reject(new KakapoError(`${binary} ${args.join(' ')} failed: ${String(err || error.message).trim()}`));
          } else {
            resolve({ stdout: String(out) });
          }
        });
      }),
  );
  const lines = stdout.trim().split('\n');
  const file = lines[lines.length - 1].trim();
  if (!file || !fs.existsSync(file)) throw new KakapoError(`${binary} ca path printed no CA file: ${stdout.trim()}`);
  return file;
}

/** The system's CA certificates as PEM: the first system bundle there, else Node's own roots. */
function systemCertificates() {
  for (const candidate of SYSTEM_BUNDLES) {
    try {
      return fs.readFileSync(candidate, 'utf8');
    } catch {
      // the next one
    }
  }
  return tls.rootCertificates.join('\n');
}

/**
 * Writes `folder/ca-bundle.pem`: the system's CA certificates and Kakapo's CA, the bundle every client
 * of a session is pointed at. Returns { bundle, kakapoCa, kakapoCaPem }.
 */
async function makeCaBundle(binary, folder, { caDir, env } = {}) {
  const kakapoCa = await kakapoCaPath(binary, caDir, env);
  const kakapoCaPem = fs.readFileSync(kakapoCa, 'utf8');
  const parts = [systemCertificates(), kakapoCaPem].map((part) => part.replace(/\n+$/, ''));
  const bundle = path.join(folder, 'ca-bundle.pem');
  fs.writeFileSync(bundle, parts.join('\n') + '\n');
  return { bundle, kakapoCa, kakapoCaPem };
}

exports.makeCaBundle = makeCaBundle;
exports.withCaLock = withCaLock;
exports.caLockPath = caLockPath;
exports.LOCK_STALE_MS = LOCK_STALE_MS;
exports.CA_PATH_TIMEOUT_MS = CA_PATH_TIMEOUT_MS;
exports.systemCertificates = systemCertificates;
