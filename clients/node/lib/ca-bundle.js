'use strict';
// The CA bundle a session's clients trust: the system's CAs and Kakapo's.

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
const LOCK_WAIT_MS = 60_000;
const LOCK_STALE_MS = 30_000;

/**
 * Runs `fn` holding a lock shared by every kakapo-proxy of this user: `kakapo ca path` makes the CA on
 * first use, and two processes doing that at once can see each other's half-made CA. The lock is a
 * folder (mkdir is atomic); one older than 30 s was left by a process that died, and is taken.
 */
async function withCaLock(fn) {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const lock = path.join(os.tmpdir(), `kakapo-proxy-ca-${uid}.lock`);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw new KakapoError(`cannot take the lock ${lock}: ${error.message}`);
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > LOCK_STALE_MS) {
          fs.rmdirSync(lock);
          continue;
        }
      } catch {
        continue; // it went away meanwhile
      }
      if (Date.now() > deadline) throw new KakapoError(`another process holds ${lock} for over a minute`);
      await sleep(25);
    }
  }
  try {
    return await fn();
  } finally {
    try {
      fs.rmdirSync(lock);
    } catch {
      // already taken as stale by someone else
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
        execFile(binary, args, { env, timeout: 60_000, maxBuffer: 1024 * 1024 }, (error, out, err) => {
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
exports.systemCertificates = systemCertificates;
