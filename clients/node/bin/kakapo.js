#!/usr/bin/env node
'use strict';
// `kakapo` from npm: runs the binary of the platform package (@kakapo-proxy/linux-x64), KAKAPO_BIN, or
// the kakapo on PATH, with these arguments, and exits as it exits.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { findBinary } = require('../lib/binary');

let binary;
try {
  const env = { ...process.env };
  // The shim itself is `kakapo` on PATH (node_modules/.bin): skip it there.
  const own = path.resolve(__dirname, '..', '..', '.bin');
  env.PATH = (env.PATH || '').split(path.delimiter).filter((folder) => path.resolve(folder || '.') !== own).join(path.delimiter);
  binary = findBinary({ env });
  if (fs.realpathSync(binary) === fs.realpathSync(__filename)) {
    throw new Error('kakapo-proxy: the only kakapo found is this script; install @kakapo-proxy/linux-x64 or set KAKAPO_BIN');
  }
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(127);
}
const done = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit' });
if (done.error) {
  process.stderr.write(`kakapo-proxy: cannot run ${binary}: ${done.error.message}\n`);
  process.exit(127);
}
if (done.signal) process.kill(process.pid, done.signal);
process.exit(done.status === null ? 1 : done.status);
