'use strict';
// One cassette session: its cassette, the environment and dispatcher that point clients at it, its
// summary and the report of what it missed.

const fs = require('node:fs');
const path = require('node:path');
const tls = require('node:tls');
const { KakapoError } = require('./errors');
const { KakapoDispatcher, timeoutValue } = require('./dispatcher');
const { missReport, unusedReport } = require('./report');
const { environments } = require('./realm');
const routing = require('./routing');
const { PROXY_VARIABLES, OTHER_PROXY_VARIABLES, recordMode } = require('./server');

const CA_VARIABLES = Object.freeze(['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE']);
const NO_PROXY_VARIABLES = Object.freeze(['NO_PROXY', 'no_proxy']);

/** Whether `url` is one of `hosts` (NO_PROXY's forms: name, .domain or *.domain, host:port, *). */
function listedHost(url, hosts) {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const raw of hosts.flatMap((entry) => String(entry).split(','))) {
    let entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    let entryPort;
    const withPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    if (withPort) {
      entry = withPort[1];
      entryPort = withPort[2];
    }
    entry = entry.replace(/^\[|\]$/g, '').replace(/^\*?\./, '');
    if (entryPort && entryPort !== port) continue;
    if (host === entry || host.endsWith('.' + entry)) return true;
  }
  return false;
}

/** The Proxy-Authorization value of a proxy URL's credentials (`http://ID:@host:port` -> Basic ID:). */
function proxyAuthorization(proxyUrl) {
  const url = new URL(proxyUrl);
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}

// Kakapo's session ids are 16 hex digits; any token of URL-safe characters is taken.
const SESSION_ID = /^[A-Za-z0-9._~-]{1,128}$/;

function shown(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * What is wrong with Kakapo's answer to POST /__kakapo/sessions (a string), or null when it is usable:
 * `id` a token of URL-safe characters, `proxy` an http: URL on 127.0.0.1 with a port, whose user name
 * (decoded) is the id (or ends with `+ID`: Kakapo's forward-proxy user, `USER+ID`).
 */
function answerProblem(answer) {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return 'it is not an object';
  const { id, proxy } = answer;
  if (typeof id !== 'string' || !SESSION_ID.test(id)) return `its id ${shown(id)} is not a session id (letters, digits, . _ ~ -)`;
  if (typeof proxy !== 'string') return `its proxy ${shown(proxy)} is not a URL`;
  let url;
  let user;
  try {
    url = new URL(proxy);
    user = decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch (error) {
    return `its proxy ${shown(proxy)} is not a URL kakapo-proxy can use (${error.message})`;
  }
  if (url.protocol !== 'http:' || url.hostname !== '127.0.0.1' || !url.port || url.pathname !== '/' || url.search || url.hash) {
    return `its proxy ${shown(proxy)} is not http://ID:@127.0.0.1:PORT`;
  }
  if (user !== id && !user.endsWith(`+${id}`)) return `its proxy ${shown(proxy)} does not name the session ${id}`;
  return null;
}

class Session {
  constructor(server, { cassette, answer, strict, ignoreHosts, headersTimeout, bodyTimeout }) {
    this.server = server;
    /** The cassette file (absolute path). */
    this.cassette = cassette;
    /** The session's id, as Kakapo knows it. */
    this.id = String(answer.id);
    /** The proxy URL that names the session (`http://ID:@127.0.0.1:PORT`). */
    this.proxy = String(answer.proxy);
    /** The Proxy-Authorization header value that names the session (for clients given proxy and header apart). */
    this.proxyAuthorization = proxyAuthorization(this.proxy);
    /** Kakapo's own URL, for clients pointed straight at it (they send `headers` with every request). */
    this.url = server.url;
    /** The header that names the session, for clients pointed at `url`. */
    this.headers = Object.freeze({ 'X-Kakapo-Session': this.id });
    /** The mode Kakapo chose (`once` becomes `none` or `new`). */
    this.mode = String(answer.mode || '');
    /** Whether a miss should fail the test (the adapters do; close() only reports). */
    this.strict = strict;
    /** The CA bundle (the system's CAs and Kakapo's) the environment points clients at. */
    this.caBundle = server.caBundle;
    /** Hosts reached directly: NO_PROXY in `env`, and fetch() sends them past Kakapo. */
    this.ignoreHosts = ignoreHosts;
    /** The summary Kakapo answered when the session ended (null while it is open). */
    this.summary = null;
    const ownAddress = new URL(server.url);
    /** A dispatcher in undici's sense for this session: fetch(url, { dispatcher }), undici.request(...). */
    this.dispatcher = new KakapoDispatcher({
      proxyUrl: server.url,
      authorization: this.proxyAuthorization,
      ca: [...tls.rootCertificates, server.kakapoCaPem],
      bypass: (url) =>
        (url.port === ownAddress.port && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) ||
        listedHost(url, this.ignoreHosts),
      fallback: () => routing.original(),
      headersTimeout,
      bodyTimeout,
    });
    this.savedEnv = null;
    this.routed = false;
    this.closing = null;
  }

  /**
   * The environment that points a child process's clients at the session: HTTP_PROXY, HTTPS_PROXY and
   * their lower-case twins name the session's proxy; NODE_EXTRA_CA_CERTS, SSL_CERT_FILE,
   * REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE the CA bundle; NO_PROXY and no_proxy the ignored hosts.
   */
  get env() {
    const env = {};
    for (const name of PROXY_VARIABLES) env[name] = this.proxy;
    for (const name of CA_VARIABLES) env[name] = this.caBundle;
    for (const name of NO_PROXY_VARIABLES) env[name] = this.ignoreHosts.join(',');
    return env;
  }

  /** Puts `env` into process.env (and takes ALL_PROXY out) until close() or restoreEnv(). */
  applyEnv() {
    if (this.savedEnv) return this;
    const values = this.env;
    const names = [...Object.keys(values), ...OTHER_PROXY_VARIABLES];
    this.savedEnv = environments().map((target) => {
      const saved = names.map((name) => [name, Object.prototype.hasOwnProperty.call(target, name), target[name]]);
      for (const name of OTHER_PROXY_VARIABLES) delete target[name];
      Object.assign(target, values);
      return [target, saved];
    });
    return this;
  }

  /** Puts back what applyEnv() changed. */
  restoreEnv() {
    if (!this.savedEnv) return;
    for (const [target, saved] of this.savedEnv) {
      for (const [name, had, value] of saved) {
        if (had) target[name] = value;
        else delete target[name];
      }
    }
    this.savedEnv = null;
  }

  /** Makes Node's global fetch() send its requests through this session (open() does, unless fetch: false). */
  routeFetch() {
    if (!this.routed && !this.summary) {
      routing.install(this.dispatcher);
      this.routed = true;
    }
    return this;
  }

  /** Gives fetch() back the dispatcher it had. */
  unrouteFetch() {
    if (this.routed) {
      routing.uninstall(this.dispatcher);
      this.routed = false;
    }
  }

  /**
   * How many requests Kakapo saw matching `method` (any when omitted) and `path` (the router's
   * patterns: /users/:id, *, **) since the journal was last cleared (the adapters clear it before each
   * test). The count is the whole server's, not this session's alone.
   */
  async count(method, pathPattern = '/') {
    const body = { path: pathPattern };
    if (method) body.method = String(method).toUpperCase();
    const answer = await this.server.admin('POST', '/__kakapo/requests/count', body);
    const count = answer && answer.count;
    if (!Number.isInteger(count) || count < 0) throw new KakapoError(`kakapo's count answer has no count: ${JSON.stringify(answer)}`);
    return count;
  }

  /**
   * Ends the session: fetch() and the environment go back to what they were, connections of the
   * session close, Kakapo saves the cassette and answers the summary, which this returns:
   * { id, cassette, mode, strict, replayed, recorded, misses: [...], unused: [...] }.
   */
  close() {
    if (!this.closing) {
      this.closing = (async () => {
        this.unrouteFetch();
        this.restoreEnv();
        await this.dispatcher.destroy();
        const answer = await this.server.admin('DELETE', `/__kakapo/sessions/${encodeURIComponent(this.id)}`);
        this.summary = answer && typeof answer === 'object' ? answer : {};
        return this.summary;
      })();
    }
    return this.closing;
  }

  /** Kakapo's report of the misses (each request, its nearest recordings and how they differ), or null. */
  missReport(summary = this.summary) {
    return missReport(summary, { cassette: this.cassette, mode: this.mode, id: this.id });
  }

  /** The recordings the session never used, one line each, or null. */
  unusedReport(summary = this.summary) {
    return unusedReport(summary);
  }
}

/**
 * Opens a session of `server` on `cassette`: a path relative to the server's cassetteDir (or absolute,
 * inside it); `.json` is added when it has no extension. Options: mode (else the server's), strict
 * (default true), match, store, ignoreHosts, fetch (default true: route fetch() through it), env
 * (default false: applyEnv()), requireCassette (default true: mode none on a cassette that does not
 * exist is an error; false opens it, and every request misses), headersTimeout and bodyTimeout (the
 * dispatcher's, in ms; else the server's options', else 300 s each; 0: none).
 *
 * Kakapo's answer is checked before it is used: when it is not usable, or anything fails after Kakapo
 * opened the session, the session is ended (DELETE) before the error is thrown.
 */
async function openSession(server, cassette, options = {}) {
  const mode = options.mode !== undefined && options.mode !== null ? recordMode(options.mode) : server.mode;
  let file = path.resolve(server.cassetteDir, String(cassette));
  if (!path.extname(file)) file += '.json';
  const relative = path.relative(server.cassetteDir, file);
  if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new KakapoError(
      `cassette ${file} is outside the cassette folder ${server.cassetteDir} (cassetteDir, by default the working directory)`,
    );
  }
  if (mode === 'none' && options.requireCassette !== false && !fs.existsSync(file)) {
    throw new KakapoError(
      `mode none replays only, and cassette ${file} does not exist: record it first (KAKAPO_RECORD=once)`,
    );
  }
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true }); // Kakapo refuses a cassette in a folder that does not exist
  } catch (error) {
    throw new KakapoError(`cannot create the cassette folder ${path.dirname(file)}: ${error.message}`);
  }
  const strict = options.strict === undefined ? true : Boolean(options.strict);
  const serverOptions = server.options || {};
  let headersTimeout;
  let bodyTimeout;
  try {
    headersTimeout = timeoutValue(options.headersTimeout, timeoutValue(serverOptions.headersTimeout, undefined, 'headersTimeout'), 'headersTimeout');
    bodyTimeout = timeoutValue(options.bodyTimeout, timeoutValue(serverOptions.bodyTimeout, undefined, 'bodyTimeout'), 'bodyTimeout');
  } catch (error) {
    throw new KakapoError(error.message.replace(/^kakapo-proxy: /, ''));
  }
  const body = { cassette: relative.split(path.sep).join('/'), mode, strict };
  if (options.match) body.match = options.match;
  if (options.store) body.store = options.store;
  const answer = await server.admin('POST', '/__kakapo/sessions', body);
  let session;
  try {
    const problem = answerProblem(answer);
    if (problem) throw new KakapoError(`kakapo's answer to POST /__kakapo/sessions is not usable: ${problem}`);
    const ignoreHosts = [...server.ignoreHosts, ...(options.ignoreHosts || []).map(String)];
    session = new Session(server, { cassette: file, answer, strict, ignoreHosts, headersTimeout, bodyTimeout });
    if (options.fetch !== false) session.routeFetch();
    if (options.env) session.applyEnv();
    return session;
  } catch (error) {
    // Kakapo holds the session open: end it, so that it is not left open (nor its cassette locked).
    if (session) {
      session.unrouteFetch();
      session.restoreEnv();
      session.dispatcher.destroy().catch(() => {});
    }
    const id = answer && typeof answer === 'object' ? answer.id : undefined;
    let ended = '';
    if (typeof id === 'string' && id) {
      try {
        await server.admin('DELETE', `/__kakapo/sessions/${encodeURIComponent(id)}`);
        ended = ` (session ${shown(id)} ended)`;
      } catch (deleting) {
        ended = ` (and ending session ${shown(id)} failed: ${deleting.message})`;
      }
    }
    const message = error instanceof KakapoError ? error.message : `cannot use kakapo's answer to POST /__kakapo/sessions: ${error.message}`;
    throw new KakapoError(message + ended, { cause: error });
  }
}

exports.Session = Session;
exports.openSession = openSession;
exports.listedHost = listedHost;
exports.answerProblem = answerProblem;
exports.CA_VARIABLES = CA_VARIABLES;
