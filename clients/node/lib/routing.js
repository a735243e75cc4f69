'use strict';
// Routing Node's global fetch() through a session while it is open.
//
// Node's fetch() (its bundled undici) takes its dispatcher from
// globalThis[Symbol.for('undici.globalDispatcher.1')]; undici's setGlobalDispatcher() writes the same
// slot, so any undici a test loads shares it. Sessions stack: opening one puts its dispatcher on top,
// closing it puts back the one below (or the dispatcher that was there before the first), whatever
// order they close in. The stack lives on the real global object, so every copy of this package in the
// process (Jest loads one per test file) sees the same.

const { realGlobal, shared } = require('./realm');

const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

function state() {
  return shared('fetchRouting', () => ({ original: undefined, stack: [] }));
}

function current() {
  return realGlobal()[GLOBAL_DISPATCHER];
}

function set(value) {
  const global = realGlobal();
  const descriptor = Object.getOwnPropertyDescriptor(global, GLOBAL_DISPATCHER);
  if (!descriptor) {
    // undici defines it this way (writable, not configurable) when it loads
    Object.defineProperty(global, GLOBAL_DISPATCHER, { value, writable: true, enumerable: false, configurable: false });
  } else if (descriptor.writable || descriptor.set) {
    global[GLOBAL_DISPATCHER] = value;
  }
}

/** Node's bundled undici sets its Agent as the global dispatcher when it loads (on first use of fetch,
 * Headers, Request...): make it load now, so there is a dispatcher to put back and to send bypassed
 * hosts to. */
function loadNodeUndici() {
  const global = realGlobal();
  if (global[GLOBAL_DISPATCHER] === undefined) {
    try {
      void global.Headers;
    } catch {
      // no fetch in this Node
    }
  }
}

/** The dispatcher fetch() used before any session routed it. */
function original() {
  const routing = state();
  return routing.stack.length ? routing.original : current();
}

function install(dispatcher) {
  const routing = state();
  loadNodeUndici();
  if (!routing.stack.length) routing.original = current();
  routing.stack.push(dispatcher);
  set(dispatcher);
}

function uninstall(dispatcher) {
  const routing = state();
  const index = routing.stack.indexOf(dispatcher);
  if (index < 0) return;
  const now = current();
  const ours = now === dispatcher || routing.stack.includes(now);
  routing.stack.splice(index, 1);
  if (ours) set(routing.stack.length ? routing.stack[routing.stack.length - 1] : routing.original);
  if (!routing.stack.length) routing.original = undefined;
}

exports.GLOBAL_DISPATCHER = GLOBAL_DISPATCHER;
exports.install = install;
exports.uninstall = uninstall;
exports.current = current;
exports.original = original;
