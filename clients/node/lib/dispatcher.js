'use strict';
// A dispatcher in undici's sense (what Node's fetch() calls), with no dependency: it sends each request
// to Kakapo's forward proxy in a session.
//
// - http: origins: an absolute-form request (`GET http://host/path HTTP/1.1`) to the proxy, with
//   `Proxy-Authorization: Basic base64("ID:")`, through a keep-alive node:http agent.
// - https: origins: `CONNECT host:port` to the proxy with the same credentials, then TLS inside the
//   tunnel, trusting the system's roots and Kakapo's CA (Kakapo decrypts the tunnel with a certificate
//   from its CA). The tunnels are pooled by a node:https agent whose createConnection makes them.
//
// The handler protocol is undici's (Dispatcher.dispatch(opts, handler)): onConnect(abort), then
// onHeaders(statusCode, rawHeaders as Buffers [name, value, ...], resume, statusText) (false: pause until
// resume()), onData(chunk) (false: pause), onComplete(trailers), or onError(error) once instead.
//
// Timeouts, as undici's (dispatch options headersTimeout and bodyTimeout, else the dispatcher's, else
// 300 s each; 0 turns one off): the connection to Kakapo, and for https: the CONNECT tunnel and the TLS
// handshake inside it, within headersTimeout (else UND_ERR_CONNECT_TIMEOUT); the response headers
// within headersTimeout of the request's end (UND_ERR_HEADERS_TIMEOUT); then each piece of the body
// within bodyTimeout of the one before, not counting time the handler keeps it paused
// (UND_ERR_BODY_TIMEOUT). They fail the request through onError, as any error does.

const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const tls = require('node:tls');
const { EventEmitter } = require('node:events');
const { types } = require('node:util');
const { KakapoError } = require('./errors');

const MAX_REFUSAL_TEXT = 2000;
// undici's defaults.
const DEFAULT_HEADERS_TIMEOUT_MS = 300_000;
const DEFAULT_BODY_TIMEOUT_MS = 300_000;

/** A timeout option: `value` (ms; 0: none) when given, else `fallback`; anything else is a TypeError. */
function timeoutValue(value, fallback, name) {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    const error = new TypeError(`kakapo-proxy: ${name} must be a number of milliseconds, 0 or more (0: no timeout), not ${String(value)}`);
    error.code = 'UND_ERR_INVALID_ARG';
    throw error;
  }
  return value;
}

function timeoutError(name, code, message) {
  const error = new Error(message);
  error.name = name;
  error.code = code;
  return error;
}

function connectTimeoutError(what, ms) {
  return timeoutError('ConnectTimeoutError', 'UND_ERR_CONNECT_TIMEOUT', `Connect Timeout Error: ${what} within ${ms} ms (headersTimeout)`);
}

function startTimer(ms, onTimeout) {
  if (!(ms > 0)) return null;
  const timer = setTimeout(onTimeout, ms);
  if (typeof timer.unref === 'function') timer.unref(); // the request's socket keeps the process up
  return timer;
}

function abortError(reason) {
  if (reason instanceof Error) return reason;
  const error = new Error(reason === undefined ? 'The operation was aborted' : String(reason));
  error.name = 'AbortError';
  error.code = 'UND_ERR_ABORTED';
  return error;
}

function closedError() {
  const error = new Error('The kakapo-proxy dispatcher is closed (its session ended)');
  error.name = 'ClientClosedError';
  error.code = 'UND_ERR_CLOSED';
  return error;
}

/** [[name, value], ...] from any form undici accepts: an object, a flat array, or pairs. */
function headerPairs(headers) {
  const pairs = [];
  if (headers == null) return pairs;
  const add = (name, value) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const one of value) pairs.push([String(name), String(one)]);
    } else {
      pairs.push([String(name), String(value)]);
    }
  };
  if (Array.isArray(headers)) {
    if (headers.length && Array.isArray(headers[0])) {
      for (const [name, value] of headers) add(name, value);
    } else {
      for (let i = 0; i + 1 < headers.length; i += 2) add(headers[i], headers[i + 1]);
    }
  } else if (typeof headers[Symbol.iterator] === 'function' && typeof headers !== 'string') {
    for (const [name, value] of headers) add(name, value);
  } else {
    for (const name of Object.keys(headers)) add(name, headers[name]);
  }
  return pairs;
}

/** Header pairs as the object node:http takes (a name given twice becomes an array of values). */
function headerObject(pairs) {
  const object = {};
  const names = new Map();
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    const first = names.get(lower);
    if (first === undefined) {
      names.set(lower, name);
      object[name] = value;
    } else if (Array.isArray(object[first])) {
      object[first].push(value);
    } else {
      object[first] = [object[first], value];
    }
  }
  return object;
}

function asBuffer(chunk) {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  if (types.isArrayBufferView(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (types.isAnyArrayBuffer(chunk)) return Buffer.from(chunk);
  throw new TypeError(`kakapo-proxy: a request body chunk must be a string or bytes, not ${typeof chunk}`);
}

function rawBuffers(list) {
  const out = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = Buffer.from(list[i], 'latin1');
  return out;
}

function hostForConnect(host, port) {
  const bare = host.replace(/^\[|\]$/g, '');
  return net.isIPv6(bare) ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/**
 * A node:https agent whose connections are TLS inside a CONNECT tunnel through Kakapo. A tunnel is made
 * within the request's `setupTimeout` (ms; 0: no limit), else the request fails with a ConnectTimeoutError;
 * destroy() ends the tunnels being made too.
 */
class TunnelAgent extends https.Agent {
  constructor({ proxyHost, proxyPort, authorization, ca }) {
    super({ keepAlive: true, ca });
    this.proxyHost = proxyHost;
    this.proxyPort = proxyPort;
    this.authorization = authorization;
    this.setups = new Set();
  }

  createConnection(options, callback) {
    const host = String(options.host || options.hostname || 'localhost').replace(/^\[|\]$/g, '');
    const target = hostForConnect(host, options.port || 443);
    const setupTimeout = typeof options.setupTimeout === 'number' ? options.setupTimeout : DEFAULT_HEADERS_TIMEOUT_MS;
    let finished = false;
    let tunnel = null;
    let secure = null;
    const abandon = () => {
      connect.destroy();
      if (tunnel) tunnel.destroy();
      if (secure) secure.destroy();
    };
    const finish = (error, socket) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      this.setups.delete(abort);
      if (error) abandon();
      callback(error, socket);
    };
    const abort = (error) => finish(error || new KakapoError(`the tunnel to ${target} was abandoned: the dispatcher closed`));
    const connect = http.request({
      host: this.proxyHost,
      port: this.proxyPort,
      method: 'CONNECT',
      path: target,
      headers: { Host: target, 'Proxy-Authorization': this.authorization },
      agent: false,
      setHost: false,
    });
    const timer = startTimer(setupTimeout, () =>
      finish(connectTimeoutError(`no tunnel to ${target} through kakapo at ${this.proxyHost}:${this.proxyPort} (CONNECT and TLS handshake)`, setupTimeout)),
    );
    this.setups.add(abort);
    connect.once('connect', (response, socket, head) => {
      tunnel = socket;
      if (finished) {
        socket.destroy();
        return;
      }
      if (response.statusCode !== 200) {
        const said = head && head.length ? `: ${head.toString('utf8', 0, MAX_REFUSAL_TEXT).trim()}` : '';
        finish(new KakapoError(`kakapo refused the tunnel to ${target}: ${response.statusCode} ${response.statusMessage}${said}`));
        return;
      }
      if (head && head.length) socket.unshift(head);
      secure = tls.connect({
        socket,
        host,
        servername: net.isIP(host) ? undefined : options.servername || host,
        ca: options.ca,
        ALPNProtocols: ['http/1.1'],
      });
      secure.once('secureConnect', () => finish(null, secure));
      secure.once('error', (error) => finish(error));
    });
    connect.once('error', (error) => finish(new KakapoError(`cannot reach kakapo at ${this.proxyHost}:${this.proxyPort} for a tunnel to ${target}: ${error.message}`, { cause: error })));
    connect.end();
    return undefined; // the callback gets the socket
  }

  destroy() {
    for (const abort of [...this.setups]) abort();
    super.destroy();
  }
}

/** One request from dispatch() to its end: onComplete or onError, once. */
class Exchange {
  constructor(dispatcher, origin, opts, handler) {
    this.dispatcher = dispatcher;
    this.origin = origin;
    this.opts = opts;
    this.handler = handler;
    this.done = false;
    this.request = null;
    this.response = null;
    this.timer = null;
    this.phase = null; // what the timer waits for: 'connect', 'headers' or 'body'
    this.headersTimeout = DEFAULT_HEADERS_TIMEOUT_MS;
    this.bodyTimeout = DEFAULT_BODY_TIMEOUT_MS;
  }

  /** The one timer of the exchange's present phase: connecting, waiting for headers, for body data. */
  setTimer(phase, ms, makeError) {
    this.clearTimer();
    this.phase = phase;
    this.timer = startTimer(ms, () => {
      this.timer = null;
      this.fail(makeError());
    });
  }

  clearTimer() {
    this.phase = null;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  start() {
    const handler = this.handler;
    try {
      if (typeof handler.onConnect === 'function') handler.onConnect((reason) => this.abort(reason));
    } catch (error) {
      this.fail(error);
      return;
    }
    if (this.done) return; // aborted in onConnect
    try {
      this.headersTimeout = timeoutValue(this.opts.headersTimeout, this.dispatcher.headersTimeout, 'headersTimeout');
      this.bodyTimeout = timeoutValue(this.opts.bodyTimeout, this.dispatcher.bodyTimeout, 'bodyTimeout');
      this.request = this.makeRequest();
    } catch (error) {
      this.fail(error);
      return;
    }
    const request = this.request;
    request.on('response', (response) => this.onResponse(response));
    request.on('error', (error) => this.fail(error));
    if (this.origin.protocol === 'http:') {
      // The connection to Kakapo (the tunnel of an https: request is bounded by its agent).
      request.on('socket', (socket) => {
        if (this.done || !socket.connecting) return;
        const what = `cannot connect to kakapo at ${this.dispatcher.proxyHost}:${this.dispatcher.proxyPort}`;
        this.setTimer('connect', this.headersTimeout, () => connectTimeoutError(what, this.headersTimeout));
        socket.once('connect', () => {
          if (this.phase === 'connect') this.clearTimer();
        });
      });
    }
    // The request is all sent: the response headers are due.
    request.on('finish', () => {
      if (this.done || this.response) return;
      const ms = this.headersTimeout;
      this.setTimer('headers', ms, () =>
        timeoutError('HeadersTimeoutError', 'UND_ERR_HEADERS_TIMEOUT', `Headers Timeout Error: no response headers from kakapo within ${ms} ms of the request (headersTimeout)`),
      );
    });
    this.sendBody();
  }

  /** Waits for the next piece of the body (while the handler does not keep it paused). */
  awaitBody() {
    const ms = this.bodyTimeout;
    this.setTimer('body', ms, () =>
      timeoutError('BodyTimeoutError', 'UND_ERR_BODY_TIMEOUT', `Body Timeout Error: no response body data from kakapo for ${ms} ms (bodyTimeout)`),
    );
  }

  makeRequest() {
    const { opts, origin, dispatcher } = this;
    if (opts.upgrade) throw new KakapoError(`kakapo-proxy's dispatcher does not do upgrades (${opts.upgrade})`);
    const method = String(opts.method || 'GET').toUpperCase();
    if (method === 'CONNECT') throw new KakapoError("kakapo-proxy's dispatcher does not send CONNECT requests");
    let requestPath = String(opts.path || '/');
    if (!requestPath.startsWith('/')) requestPath = '/' + requestPath;
    if (opts.query && typeof opts.query === 'object') {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(opts.query)) {
        for (const one of Array.isArray(value) ? value : [value]) query.append(name, String(one));
      }
      const text = query.toString();
      if (text) requestPath += (requestPath.includes('?') ? '&' : '?') + text;
    }
    const pairs = headerPairs(opts.headers).filter(([name]) => name.toLowerCase() !== 'proxy-authorization');
    if (!pairs.some(([name]) => name.toLowerCase() === 'host')) pairs.unshift(['Host', origin.host]);
    if (origin.protocol === 'http:') {
      pairs.push(['Proxy-Authorization', dispatcher.authorization]);
      return http.request({
        host: dispatcher.proxyHost,
        port: dispatcher.proxyPort,
        method,
        path: origin.origin + requestPath,
        headers: headerObject(pairs),
        agent: dispatcher.httpAgent,
        setHost: false,
      });
    }
    if (origin.protocol === 'https:') {
      const host = origin.hostname.replace(/^\[|\]$/g, '');
      return https.request({
        host,
        port: Number(origin.port) || 443,
        servername: net.isIP(host) ? '' : host,
        method,
        path: requestPath,
        headers: headerObject(pairs),
        agent: dispatcher.tunnelAgent,
        setHost: false,
        setupTimeout: this.headersTimeout, // the tunnel's CONNECT and TLS handshake (TunnelAgent)
      });
    }
    throw new KakapoError(`kakapo-proxy cannot send a request to ${origin.origin}: only http: and https: origins`);
  }

  sendBody() {
    const { request, handler } = this;
    const body = this.opts.body;
    const sent = (bytes) => {
      if (typeof handler.onBodySent === 'function') handler.onBodySent(bytes);
    };
    const ended = () => {
      if (typeof handler.onRequestSent === 'function') handler.onRequestSent();
    };
    try {
      if (body == null) {
        request.end();
        ended();
        return;
      }
      if (typeof body === 'string' || types.isArrayBufferView(body) || types.isAnyArrayBuffer(body)) {
        const bytes = asBuffer(body);
        request.end(bytes);
        if (bytes.length) sent(bytes);
        ended();
        return;
      }
    } catch (error) {
      this.abort(error);
      return;
    }
    let source = body;
    if (typeof body.stream === 'function' && typeof body[Symbol.asyncIterator] !== 'function') source = body.stream(); // a Blob
    if (typeof source[Symbol.asyncIterator] !== 'function' && typeof source[Symbol.iterator] !== 'function') {
      this.abort(new TypeError('kakapo-proxy: a request body must be a string, bytes, or an (async) iterable of them'));
      return;
    }
    (async () => {
      for await (const chunk of source) {
        if (this.done) return;
        const bytes = asBuffer(chunk);
        if (!bytes.length) continue;
        sent(bytes);
        if (!request.write(bytes)) {
          await new Promise((resolve) => {
            const go = () => {
              request.off('drain', go);
              request.off('close', go);
              resolve();
            };
            request.on('drain', go);
            request.on('close', go);
          });
        }
      }
      if (this.done) return;
      request.end();
      ended();
    })().catch((error) => this.abort(error));
  }

  onResponse(response) {
    if (this.done) {
      response.destroy();
      return;
    }
    this.response = response;
    this.clearTimer();
    const handler = this.handler;
    let paused = false;
    const resume = () => {
      if (this.done || !paused) return;
      paused = false;
      this.awaitBody();
      response.resume();
    };
    const pause = () => {
      paused = true;
      this.clearTimer(); // a paused body is the handler's wait, not Kakapo's
      response.pause();
    };
    let goOn;
    try {
      if (typeof handler.onResponseStarted === 'function') handler.onResponseStarted();
      goOn = handler.onHeaders(response.statusCode, rawBuffers(response.rawHeaders), resume, response.statusMessage || '');
    } catch (error) {
      this.abort(error);
      return;
    }
    response.on('data', (chunk) => {
      if (this.done) return;
      let more;
      try {
        more = handler.onData(chunk);
      } catch (error) {
        this.abort(error);
        return;
      }
      if (this.done) return;
      if (more === false) pause();
      else if (this.timer) this.timer.refresh();
    });
    response.on('end', () => {
      if (this.done) return;
      this.clearTimer();
      this.done = true;
      this.dispatcher.finished(this);
      try {
        handler.onComplete(rawBuffers(response.rawTrailers || []));
      } catch (error) {
        // the handler's own trouble: nothing is left to tell it
        this.dispatcher.emit('handlerError', error);
      }
    });
    response.on('error', (error) => this.fail(error));
    response.on('close', () => {
      if (!this.done) {
        const error = new Error('other side closed: the response from kakapo ended early');
        error.name = 'SocketError';
        error.code = 'UND_ERR_SOCKET';
        this.fail(error);
      }
    });
    if (goOn === false) pause();
    else this.awaitBody();
  }

  abort(reason) {
    if (this.done) return;
    const error = abortError(reason);
    this.fail(error);
  }

  fail(error) {
    if (this.done) return;
    this.done = true;
    this.clearTimer();
    this.dispatcher.finished(this);
    if (this.response) this.response.destroy();
    if (this.request) this.request.destroy();
    try {
      if (typeof this.handler.onError === 'function') this.handler.onError(error);
    } catch (thrown) {
      this.dispatcher.emit('handlerError', thrown);
    }
  }
}

/**
 * Sends every request to Kakapo's forward proxy in one session. `proxyUrl` is the proxy
 * (http://127.0.0.1:PORT), `authorization` the Proxy-Authorization value that names the session,
 * `ca` the certificates trusted inside tunnels, `bypass(url)` says which origins go to `fallback()`
 * (another dispatcher) instead. `headersTimeout` and `bodyTimeout` (ms, 0: none; default 300 s each, as
 * undici's) apply to requests whose dispatch options do not name their own.
 */
class KakapoDispatcher extends EventEmitter {
  constructor({ proxyUrl, authorization, ca, bypass, fallback, headersTimeout, bodyTimeout }) {
    super();
    this.headersTimeout = timeoutValue(headersTimeout, DEFAULT_HEADERS_TIMEOUT_MS, 'headersTimeout');
    this.bodyTimeout = timeoutValue(bodyTimeout, DEFAULT_BODY_TIMEOUT_MS, 'bodyTimeout');
    const proxy = new URL(proxyUrl);
    this.proxyHost = proxy.hostname.replace(/^\[|\]$/g, '');
    this.proxyPort = Number(proxy.port) || 80;
    this.authorization = authorization;
    this.bypass = bypass || (() => false);
    this.fallback = fallback || (() => undefined);
    this.httpAgent = new http.Agent({ keepAlive: true });
    this.tunnelAgent = new TunnelAgent({
      proxyHost: this.proxyHost,
      proxyPort: this.proxyPort,
      authorization,
      ca: ca || tls.rootCertificates.slice(),
    });
    this.inFlight = new Set();
    this.closed = false;
    this.destroyed = false;
    this.idle = [];
  }

  dispatch(opts, handler) {
    if (!handler || typeof handler !== 'object') throw new TypeError('kakapo-proxy: dispatch needs a handler');
    if (this.closed) {
      const error = closedError();
      queueMicrotask(() => handler.onError && handler.onError(error));
      return false;
    }
    let origin;
    try {
      origin = new URL(String(opts.origin));
    } catch {
      const error = new TypeError(`kakapo-proxy: invalid origin ${opts.origin}`);
      queueMicrotask(() => handler.onError && handler.onError(error));
      return false;
    }
    if (this.bypass(origin)) {
      const other = this.fallback();
      if (other && other !== this) return other.dispatch(opts, handler);
    }
    const exchange = new Exchange(this, origin, opts, handler);
    this.inFlight.add(exchange);
    exchange.start();
    return true;
  }

  finished(exchange) {
    this.inFlight.delete(exchange);
    if (this.inFlight.size === 0 && this.idle.length) {
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /** Takes no more requests, lets those in flight end, then closes the connections. */
  close(callback) {
    this.closed = true;
    const done = (this.inFlight.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve))).then(() =>
      this.dropConnections(),
    );
    if (typeof callback === 'function') {
      done.then(() => callback(null), callback);
      return undefined;
    }
    return done;
  }

  /** Takes no more requests, fails those in flight with `error`, and closes the connections. */
  destroy(error, callback) {
    if (typeof error === 'function') {
      callback = error;
      error = undefined;
    }
    this.closed = true;
    this.destroyed = true;
    const reason = error || closedError();
    for (const exchange of [...this.inFlight]) exchange.fail(reason);
    this.dropConnections();
    if (typeof callback === 'function') {
      queueMicrotask(() => callback(null));
      return undefined;
    }
    return Promise.resolve();
  }

  dropConnections() {
    this.httpAgent.destroy();
    this.tunnelAgent.destroy();
  }
}

exports.KakapoDispatcher = KakapoDispatcher;
exports.timeoutValue = timeoutValue;
exports.DEFAULT_HEADERS_TIMEOUT_MS = DEFAULT_HEADERS_TIMEOUT_MS;
exports.DEFAULT_BODY_TIMEOUT_MS = DEFAULT_BODY_TIMEOUT_MS;
exports.headerPairs = headerPairs;
