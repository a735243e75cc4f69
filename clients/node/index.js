'use strict';
// kakapo-proxy: Kakapo cassette sessions for Node tests, whatever runs them.
//
//   const kakapo = require('kakapo-proxy');
//   const server = await kakapo.start();                  // one `kakapo serve --proxy` per process
//   const session = await server.open('users/get', { mode: 'once' });
//   await fetch('https://api.example.com/users/1');       // recorded, then replayed
//   const summary = await session.close();                // { replayed, recorded, misses, unused, ... }

const { KakapoError } = require('./lib/errors');
const { KakapoServer, MODES, recordMode, start, stopAll } = require('./lib/server');
const { Session } = require('./lib/session');
const { KakapoDispatcher } = require('./lib/dispatcher');
const { findBinary } = require('./lib/binary');
const { fileSafe, testCassette } = require('./lib/naming');
const { missReport } = require('./lib/report');

/** Opens a session on the process's server for the default options (started on first use). */
async function open(cassette, options = {}) {
  const server = await start();
  return server.open(cassette, options);
}

exports.start = start;
exports.open = open;
exports.stop = stopAll;
exports.KakapoServer = KakapoServer;
exports.Session = Session;
exports.KakapoDispatcher = KakapoDispatcher;
exports.KakapoError = KakapoError;
exports.MODES = MODES;
exports.recordMode = recordMode;
exports.findBinary = findBinary;
exports.fileSafe = fileSafe;
exports.testCassette = testCassette;
exports.missReport = missReport;
