'use strict';
// Node's own global object and process, also from inside a sandbox.
//
// Jest runs each test file in a vm context of its own: there `globalThis` is the sandbox's, `process`
// a copy whose `env` is a copy too, and `setTimeout` may be faked. Node's fetch() reads its dispatcher
// from the real global object, and child processes inherit the real process.env, so that is where
// kakapo-proxy routes fetch() and sets the environment. vm.runInThisContext runs in Node's main
// context whatever context calls it. In plain Node all of these are simply globalThis and process.

const vm = require('node:vm');

let cached;

function realGlobal() {
  if (cached === undefined) {
    try {
      cached = vm.runInThisContext('globalThis');
    } catch {
      cached = globalThis;
    }
  }
  return cached;
}

function realProcess() {
  return realGlobal().process || process;
}

/** The environment objects to change: the real one (children inherit it) and the one this code sees. */
function environments() {
  const found = [realProcess().env];
  if (typeof process !== 'undefined' && process.env && !found.includes(process.env)) found.push(process.env);
  return found;
}

/** One value per process (per Node realm), shared by every copy of this package a sandbox loads. */
function shared(name, make) {
  const global = realGlobal();
  const key = Symbol.for(`kakapo-proxy.${name}`);
  if (!Object.prototype.hasOwnProperty.call(global, key)) {
    Object.defineProperty(global, key, { value: make(), enumerable: false, configurable: true, writable: false });
  }
  return global[key];
}

exports.realGlobal = realGlobal;
exports.realProcess = realProcess;
exports.environments = environments;
exports.shared = shared;
