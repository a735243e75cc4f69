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

const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const tls = require('node:tls');
const { EventEmitter } = require('node:events');
const { types } = require('node:util');
const { KakapoError } = require('./errors');

const MAX_REFUSAL_TEXT = 2000;

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

/** A node:https agent whose connections are TLS inside a CONNECT tunnel through Kakapo. */
class TunnelAgent extends https.Agent {
  constructor({ proxyHost, proxyPort, authorization, ca }) {
    super({ keepAlive: true, ca });
    this.proxyHost = proxyHost;
    this.proxyPort = proxyPort;
    this.authorization = authorization;
  }

  createConnection(options, callback) {
    const host = String(options.host || options.hostname || 'localhost').replace(/^\[|\]$/g, '');
    const target = hostForConnect(host, options.port || 443);
    let finished = false;
    const finish = (error, socket) => {
      if (finished) return;
      finished = true;
      callback(error, socket);
    };
    const connect = http.request({
      host: this.proxyHost,
      port: this.proxyPort,
      method: 'CONNECT',
      path: target,
      headers: { Host: target, 'Proxy-Authorization': this.authorization },
      agent: false,
      setHost: false,
    });
    connect.once('connect', (response, socket, head) => {
      if (response.statusCode !== 200) {
        const said = head && head.length ? `: ${head.toString('utf8', 0, MAX_REFUSAL_TEXT).trim()}` : '';
        socket.destroy();
        finish(new KakapoError(`kakapo refused the tunnel to ${target}: ${response.statusCode} ${response.statusMessage}${said}`));
        return;
      }
      if (head && head.length) socket.unshift(head);
      const secure = tls.connect({
        socket,
        host,
        servername: net.isIP(host) ? undefined : options.servername || host,
        ca: options.ca,
        ALPNProtocols: ['http/1.1'],
      });
      secure.once('secureConnect', () => finish(null, secure));
      secure.once('error', (error) => {
        if (!finished) {
          socket.destroy();
          finish(error);
        }
      });
    });
    connect.once('error', (error) => finish(new KakapoError(`cannot reach kakapo at ${this.proxyHost}:${this.proxyPort} for a tunnel to ${target}: ${error.message}`, { cause: error })));
    connect.end();
    return undefined; // the callback gets the socket
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
      this.request = this.makeRequest();
    } catch (error) {
      this.fail(error);
      return;
    }
    this.request.on('response', (response) => this.onResponse(response));
    this.request.on('error', (error) => this.fail(error));
    this.sendBody();
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
    const handler = this.handler;
    const resume = () => {
      if (!this.done) response.resume();
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
      if (more === false) response.pause();
    });
    response.on('end', () => {
      if (this.done) return;
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
    if (goOn === false) response.pause();
  }

  abort(reason) {
    if (this.done) return;
    const error = abortError(reason);
    this.fail(error);
  }

  fail(error) {
    if (this.done) return;
    this.done = true;
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
 * (another dispatcher) instead.
 */
class KakapoDispatcher extends EventEmitter {
  constructor({ proxyUrl, authorization, ca, bypass, fallback }) {
    super();
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
exports.headerPairs = headerPairs;
