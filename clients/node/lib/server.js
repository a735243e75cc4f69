'use strict';
// The `kakapo serve --proxy --cassette-dir DIR --port 0` process of a test process: found, started,
// asked, stopped. It never outlives the test process: it is stopped (SIGINT, then waited for) when the
// process has nothing left to do, when it exits, or by stop(); on Linux it runs under a small shell
// watchdog started through `setpriv --pdeathsig TERM`, so that Kakapo gets one SIGINT (and saves) even
// when the test process is killed outright.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { setTimeout, clearTimeout } = require('node:timers');
const { KakapoError } = require('./errors');
const { findBinary } = require('./binary');
const { makeCaBundle } = require('./ca-bundle');
const { realProcess, shared } = require('./realm');

const MODES = Object.freeze(['none', 'new', 'all', 'once', 'passthrough']);
const PROXY_VARIABLES = Object.freeze(['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']);
// Variables that would send the server's or the tests' traffic elsewhere; cleared while a session's
// environment is applied, and never given to the server.
const OTHER_PROXY_VARIABLES = Object.freeze(['ALL_PROXY', 'all_proxy']);
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const EXIT_WAIT_MS = 10_000;
const ADMIN_TIMEOUT_MS = 60_000;
// An admin answer larger than this is refused (a session summary lists misses and unused recordings).
const MAX_ADMIN_ANSWER = 64 * 1024 * 1024;
const MAX_ERROR_TEXT = 64 * 1024;
// The longest line of Kakapo's output looked at while waiting for its port.
const MAX_LINE = 64 * 1024;
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'];

/** The record mode: `mode` when given, else KAKAPO_RECORD, else `once`; anything else is an error. */
function recordMode(mode, env = realProcess().env) {
  if (mode !== undefined && mode !== null && mode !== '') {
    if (!MODES.includes(mode)) {
      throw new KakapoError(`mode ${JSON.stringify(mode)} is not a record mode; it is one of ${MODES.join(', ')}`);
    }
    return mode;
  }
  const fromEnv = env.KAKAPO_RECORD;
  if (fromEnv) {
    if (!MODES.includes(fromEnv)) {
      throw new KakapoError(`KAKAPO_RECORD=${fromEnv}: not a record mode; it is one of ${MODES.join(', ')}`);
    }
    return fromEnv;
  }
  return 'once';
}

/** The value of `--name VALUE` or `--name=VALUE` in `args`, if any. */
function argument(args, name) {
  let found;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name && i + 1 < args.length) found = args[i + 1];
    else if (args[i].startsWith(name + '=')) found = args[i].slice(name.length + 1);
  }
  return found;
}

/**
 * Whether the process `pid` has ended (a zombie counts: it is only waiting to be reaped). Where there is
 * a /proc (Linux), its stat file says; elsewhere (macOS, the BSDs), kill(pid, 0) says whether it is
 * there at all, and ps whether it is a zombie.
 */
function hasEnded(pid) {
  if (fs.existsSync('/proc/self/stat')) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state === 'Z' || state === 'X';
    } catch (error) {
      if (error.code === 'ENOENT') return true;
      // unreadable: kill(pid, 0) below
    }
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    return error.code === 'ESRCH'; // EPERM: it is there (another user's)
  }
  // There, or a zombie (kill(pid, 0) succeeds on one too; at exit, Node no longer reaps its children).
  const ps = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] });
  return ps.status === 0 && /^\s*Z/.test(ps.stdout || '');
}

// Kakapo under a watchdog: the test process's death reaches the watchdog as SIGTERM (setpriv's
// parent-death signal, which Linux sends again each time the process it was re-parented to, another
// thread of the dying test process, dies too), and the watchdog passes it on to Kakapo as one SIGINT:
// Kakapo takes a second SIGINT for "exit now, unsaved". (The `stop` guard, not `trap ""`: dash can run a
// trap's action again for a signal that came while it ran.) It ends when Kakapo ends, with its status;
// when it was told to stop, it removes the server's work folder ($0: the CA bundle, Kakapo's log), which
// a test process that was killed could not.
const WATCHDOG = [
  'w=$0 k= stop=',
  'trap \'if [ -z "$stop" ]; then stop=1; [ -n "$k" ] && kill -INT "$k" 2>/dev/null; fi\' INT TERM HUP',
  '"$@" &',
  'k=$!',
  '[ -n "$stop" ] && kill -INT "$k" 2>/dev/null',
  'while :; do',
  '  wait "$k"; s=$?',
  '  kill -0 "$k" 2>/dev/null && continue',
  '  [ -n "$stop" ] && rm -rf "$w"',
  '  exit "$s"',
  'done',
].join('\n');

let wrapper;

/**
 * util-linux's setpriv, when it can give Kakapo a parent-death signal (Linux; util-linux 2.33 or later):
 * the kernel then sends Kakapo SIGINT when the test process dies, however it dies. Probed once.
 */
function pdeathsigWrapper() {
  if (wrapper === undefined) {
    wrapper = null;
    const file = process.platform === 'linux' ? SETPRIV.find((candidate) => fs.existsSync(candidate)) : undefined;
    if (file) {
      const probe = spawnSync(file, ['--pdeathsig', 'TERM', '--', '/bin/sh', '-c', 'exit 0'], { stdio: 'ignore', timeout: 10_000 });
      if (probe.status === 0) wrapper = file;
    }
  }
  return wrapper;
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

class KakapoServer {
  /**
   * options: binary (else KAKAPO_BIN, the platform package, PATH), cassetteDir (default: the working
   * directory), mode (the sessions' default; else KAKAPO_RECORD, else once), serveArgs (more
   * `kakapo serve` arguments), ignoreHosts (hosts fetch() and the environment's clients reach directly),
   * startTimeout (ms), headersTimeout and bodyTimeout (ms, 0: none; the sessions' dispatchers', default
   * 300 s each).
   */
  constructor(options = {}) {
    const proc = realProcess();
    this.options = { ...options };
    this.cassetteDir = path.resolve(proc.cwd(), options.cassetteDir || '.');
    this.serveArgs = (options.serveArgs || []).map(String);
    this.ignoreHosts = (options.ignoreHosts || []).map(String);
    this.startTimeout = options.startTimeout || START_TIMEOUT_MS;
    this.mode = undefined;
    this.binary = undefined;
    this.port = 0;
    this.child = null;
    this.pid = undefined;
    this.exitStatus = undefined;
    this.caBundle = '';
    this.kakapoCa = '';
    this.kakapoCaPem = '';
    this.logFile = undefined;
    this.watched = false;
    this.workdir = undefined;
    this.starting = null;
    this.stopping = null;
    this.adminAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    this.onBeforeExit = () => {
      if (this.child && !this.stopping) this.stop().catch(() => {});
    };
    this.onExit = () => this.stopSync();
  }

  /** Kakapo's own URL (its admin API, and the address clients pointed straight at it use). */
  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  get running() {
    return Boolean(this.child) && this.exitStatus === undefined;
  }

  /** Starts Kakapo (once; later calls wait for the same start). */
  start() {
    if (!this.starting) {
      this.starting = this.launch().then(
        () => this,
        (error) => {
          this.starting = null;
          throw error;
        },
      );
    }
    return this.starting;
  }

  async launch() {
    const proc = realProcess();
    this.mode = recordMode(this.options.mode, proc.env);
    this.binary = findBinary({ binary: this.options.binary });
    try {
      fs.mkdirSync(this.cassetteDir, { recursive: true });
    } catch (error) {
      throw new KakapoError(`cannot create the cassette folder ${this.cassetteDir}: ${error.message}`);
    }
    const env = { ...proc.env };
    for (const name of [...PROXY_VARIABLES, ...OTHER_PROXY_VARIABLES]) delete env[name];
    this.workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'kakapo-node-'));
    try {
      const ca = await makeCaBundle(this.binary, this.workdir, { caDir: argument(this.serveArgs, '--ca-dir'), env });
      this.caBundle = ca.bundle;
      this.kakapoCa = ca.kakapoCa;
      this.kakapoCaPem = ca.kakapoCaPem;
      await this.spawnServer(env);
    } catch (error) {
      this.removeWorkdir();
      throw error;
    }
    proc.on('beforeExit', this.onBeforeExit);
    proc.on('exit', this.onExit);
    // The process may end while Kakapo runs: it is stopped then, at beforeExit or exit.
    this.child.unref();
  }

  spawnServer(env) {
    const command = ['serve', '--proxy', '--cassette-dir', this.cassetteDir, '--port', '0', ...this.serveArgs];
    const described = [this.binary, ...command].join(' ');
    let file = this.binary;
    let args = command;
    const setpriv = env.KAKAPO_NO_PDEATHSIG ? undefined : pdeathsigWrapper();
    this.watched = Boolean(setpriv);
    if (setpriv) {
      file = setpriv;
      args = ['--pdeathsig', 'TERM', '--', '/bin/sh', '-c', WATCHDOG, this.workdir, this.binary, ...command];
    }
    // Kakapo's output goes to a file, not a pipe: a pipe breaks when the test process dies, and Kakapo,
    // writing its shutdown lines to it, would die before it saved the open sessions.
    this.logFile = path.join(this.workdir, 'kakapo.log');
    const log = fs.openSync(this.logFile, 'a');
    return new Promise((resolve, reject) => {
      let settled = false;
      let read = 0;
      let pending = '';
      const settle = (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(poll);
        if (error) reject(error);
        else resolve();
      };
      let child;
      try {
        // The watchdog leads a process group of its own: a Ctrl-C in the terminal reaches Kakapo through
        // it, once, when the test process dies of it.
        child = spawn(file, args, { env, stdio: ['ignore', log, log], windowsHide: true, detached: this.watched });
      } finally {
        fs.closeSync(log);
      }
      this.child = child;
      const timer = setTimeout(() => {
        this.stop().catch(() => {});
        settle(new KakapoError(`${described} did not say which port it listens on within ${this.startTimeout / 1000} s; its output:\n${this.tail()}`));
      }, this.startTimeout);
      // Reads what Kakapo wrote since the last look, for the line that says its port.
      const poll = setInterval(() => {
        let text = '';
        try {
          const fd = fs.openSync(this.logFile, 'r');
          try {
            const buffer = Buffer.alloc(MAX_LINE);
            let got;
            while ((got = fs.readSync(fd, buffer, 0, buffer.length, read)) > 0) {
              read += got;
              text += buffer.toString('utf8', 0, got);
              if (text.length > 16 * MAX_LINE) break;
            }
          } finally {
            fs.closeSync(fd);
          }
        } catch {
          return;
        }
        pending += text;
        const lines = pending.split('\n');
        pending = lines.pop().slice(-MAX_LINE);
        for (const line of lines) {
          const found = /listening on https?:\/\/127\.0\.0\.1:(\d{1,5})\b/.exec(line);
          if (found && !this.port && Number(found[1]) > 0 && Number(found[1]) < 65536) {
            this.port = Number(found[1]);
            settle();
            return;
          }
        }
      }, 20);
      child.once('error', (error) => {
        this.exitStatus = error.code || 'error';
        settle(new KakapoError(`cannot start ${this.binary}: ${error.message}`, { cause: error }));
      });
      child.once('spawn', () => {
        this.pid = child.pid;
      });
      child.once('exit', (code, signal) => {
        this.exitStatus = signal || code;
        settle(new KakapoError(`${described} exited (${signal || `status ${code}`}) before it listened; its output:\n${this.tail()}`));
      });
    });
  }

  /** Kakapo's last lines of output (from its log file, while it is there). */
  tail(lines = 20) {
    let text = '';
    try {
      const fd = fs.openSync(this.logFile, 'r');
      try {
        const size = fs.fstatSync(fd).size;
        const length = Math.min(size, 64 * 1024);
        const buffer = Buffer.alloc(length);
        fs.readSync(fd, buffer, 0, length, size - length);
        text = buffer.toString('utf8');
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return '(its output is gone)';
    }
    return text.replace(/\n+$/, '').split('\n').slice(-lines).join('\n');
  }

  exitedProblem() {
    if (this.child && this.exitStatus !== undefined) {
      return `kakapo (pid ${this.pid}) exited (${this.exitStatus}) during the run; its last output:\n${this.tail()}`;
    }
    return null;
  }

  /** Calls Kakapo's admin API directly (never through a proxy); the decoded JSON answer. */
  admin(method, apiPath, body) {
    if (!this.port) return Promise.reject(new KakapoError(`kakapo is not started: cannot ${method} ${apiPath}`));
    const exited = this.exitedProblem();
    if (exited) return Promise.reject(new KakapoError(exited));
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers = { Accept: 'application/json' };
    if (data) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(data.length);
    }
    const token = realProcess().env.KAKAPO_ADMIN_TOKEN;
    if (token) headers.Authorization = `Bearer ${token}`;
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port: this.port, method, path: apiPath, headers, agent: this.adminAgent });
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${ADMIN_TIMEOUT_MS / 1000} s`)), ADMIN_TIMEOUT_MS);
      const fail = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      request.on('error', (error) => {
        const exited = this.exitedProblem();
        fail(new KakapoError(exited || `kakapo at ${this.url} did not answer ${method} ${apiPath}: ${error.message}`, { cause: error }));
      });
      request.on('response', (response) => {
        const chunks = [];
        let size = 0;
        response.on('data', (chunk) => {
          size += chunk.length;
          if (size > MAX_ADMIN_ANSWER) {
            response.destroy();
            request.destroy();
            fail(new KakapoError(`kakapo's answer to ${method} ${apiPath} is larger than ${MAX_ADMIN_ANSWER} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', (error) => fail(new KakapoError(`kakapo's answer to ${method} ${apiPath} broke off: ${error.message}`)));
        response.on('end', () => {
          clearTimeout(timer);
          if (size > MAX_ADMIN_ANSWER) return;
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode >= 400) {
            reject(new KakapoError(`kakapo answered ${response.statusCode} to ${method} ${apiPath}: ${text.slice(0, MAX_ERROR_TEXT).trim()}`));
            return;
          }
          if (!text.trim()) {
            resolve(null);
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch (error) {
            reject(new KakapoError(`kakapo's answer to ${method} ${apiPath} is not JSON: ${error.message}`));
          }
        });
      });
      request.end(data || undefined);
    });
  }

  /** Opens a session on `cassette` (relative to cassetteDir); see Session. Starts Kakapo if needed. */
  async open(cassette, options = {}) {
    await this.start();
    return require('./session').openSession(this, cassette, options);
  }

  /** Stops Kakapo: SIGINT (it saves open sessions and exits), then waits; SIGKILL after 30 s. */
  stop() {
    if (this.stopping) return this.stopping;
    const proc = realProcess();
    proc.removeListener('beforeExit', this.onBeforeExit);
    proc.removeListener('exit', this.onExit);
    const child = this.child;
    this.stopping = (async () => {
      if (child && this.exitStatus === undefined && child.exitCode === null && child.signalCode === null) {
        child.ref();
        this.adminAgent.destroy();
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        let timer;
        const late = new Promise((resolve) => {
          timer = setTimeout(resolve, STOP_TIMEOUT_MS, 'late');
        });
        if ((await Promise.race([exited, late])) === 'late') {
          this.killHard();
          await exited;
        }
        clearTimeout(timer);
      }
      this.adminAgent.destroy();
      this.removeWorkdir();
    })();
    return this.stopping;
  }

  /** At the process's exit, where nothing can be awaited: SIGINT, then up to 10 s for it to end. */
  stopSync() {
    const child = this.child;
    const proc = realProcess();
    proc.removeListener('beforeExit', this.onBeforeExit);
    proc.removeListener('exit', this.onExit);
    this.adminAgent.destroy(); // its idle connections would keep Kakapo finishing
    if (child && this.exitStatus === undefined && child.exitCode === null && child.signalCode === null && this.pid) {
      try {
        process.kill(this.pid, 'SIGINT');
        const deadline = Date.now() + EXIT_WAIT_MS;
        while (!hasEnded(this.pid) && Date.now() < deadline) sleepSync(20);
        if (!hasEnded(this.pid)) this.killHard();
      } catch {
        // it is gone
      }
    }
    this.removeWorkdir();
  }

  /** SIGKILL to Kakapo (to the watchdog's whole process group, Kakapo in it). */
  killHard() {
    try {
      if (this.watched) process.kill(-this.pid, 'SIGKILL');
      else process.kill(this.pid, 'SIGKILL');
    } catch {
      // it is gone
    }
  }

  removeWorkdir() {
    if (this.workdir) {
      fs.rmSync(this.workdir, { recursive: true, force: true });
      this.workdir = undefined;
    }
  }
}

function serverKey(options) {
  const proc = realProcess();
  return JSON.stringify({
    binary: options.binary || null,
    cassetteDir: path.resolve(proc.cwd(), options.cassetteDir || '.'),
    mode: options.mode || null,
    serveArgs: (options.serveArgs || []).map(String),
    ignoreHosts: (options.ignoreHosts || []).map(String),
    headersTimeout: options.headersTimeout ?? null,
    bodyTimeout: options.bodyTimeout ?? null,
  });
}

function servers() {
  return shared('servers', () => new Map());
}

/**
 * The Kakapo server of this process for these options, started on first use: every later call with the
 * same options (binary, cassetteDir, mode, serveArgs, ignoreHosts, headersTimeout, bodyTimeout) gets the
 * same one.
 */
async function start(options = {}) {
  const key = serverKey(options);
  const all = servers();
  let server = all.get(key);
  if (!server || server.stopping || (server.child && server.exitStatus !== undefined)) {
    server = new KakapoServer(options);
    all.set(key, server);
  }
  try {
    return await server.start();
  } catch (error) {
    if (all.get(key) === server) all.delete(key);
    throw error;
  }
}

/** Stops every server start() started. */
async function stopAll() {
  const all = servers();
  const list = [...all.values()];
  all.clear();
  await Promise.all(list.map((server) => server.stop()));
}

exports.KakapoServer = KakapoServer;
exports.MODES = MODES;
exports.PROXY_VARIABLES = PROXY_VARIABLES;
exports.OTHER_PROXY_VARIABLES = OTHER_PROXY_VARIABLES;
exports.recordMode = recordMode;
exports.start = start;
exports.stopAll = stopAll;
exports.hasEnded = hasEnded;
