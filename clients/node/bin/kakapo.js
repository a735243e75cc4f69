#!/usr/bin/env node
'use strict';
// `kakapo` from npm: runs the binary of the platform package (@kakapo-proxy/linux-x64), KAKAPO_BIN, or
// the kakapo on PATH, with these arguments, and exits as it exits (dies of the signal that killed it).
//
// Signals: SIGINT, SIGTERM and SIGHUP sent to this script are passed on to kakapo, once. Kakapo takes a
// second SIGINT or SIGTERM for "exit now, unsaved", so kakapo must not get one signal twice, once from
// here and once straight:
// - Standard input not a terminal (scripts, CI, process managers): kakapo runs in a process group of
//   its own, which signals sent to this script's group (`kill -TERM -PGID`, timeout(1)) do not reach;
//   this script passes them on.
// - Standard input a terminal: kakapo stays in this script's group, to read the terminal and be stopped
//   by job control. A Ctrl-C or a hangup there reaches kakapo straight from the terminal, so SIGINT and
//   SIGHUP are passed on only while this script is not in the terminal's foreground group; SIGTERM
//   (which no terminal sends) always is.
// - The same signal again within a second is taken for the same one delivered twice (npm, running this
//   script for npx, passes on the SIGINT and SIGTERM it gets too) and is not passed on.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { findBinary } = require('../lib/binary');

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const SAME_SIGNAL_MS = 1000;

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

/** Whether this process is in its terminal's foreground process group (/proc tells; elsewhere: assumed). */
function inForeground() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state ppid pgrp session tty_nr tpgid ...
    return Number(fields[5]) > 0 && fields[5] === fields[2];
  } catch {
    return true;
  }
}

const interactive = Boolean(process.stdin.isTTY);
let child;
try {
  child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', detached: !interactive });
} catch (error) {
  process.stderr.write(`kakapo-proxy: cannot run ${binary}: ${error.message}\n`);
  process.exit(127);
}

const lastSent = new Map();
function forward(signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (interactive && signal !== 'SIGTERM' && inForeground()) return; // the terminal sent it to kakapo too
  const now = Date.now();
  if (now - (lastSent.get(signal) ?? -Infinity) < SAME_SIGNAL_MS) return;
  lastSent.set(signal, now);
  try {
    child.kill(signal);
  } catch {
    // it is gone
  }
}
for (const signal of FORWARDED) process.on(signal, forward);

child.once('error', (error) => {
  process.stderr.write(`kakapo-proxy: cannot run ${binary}: ${error.message}\n`);
  process.exit(127);
});
child.once('exit', (code, signal) => {
  for (const name of FORWARDED) process.removeListener(name, forward);
  if (signal) {
    // Dies of the same signal, as a shell would see kakapo die (128 + its number if it cannot).
    try {
      process.kill(process.pid, signal);
    } catch {
      // cannot raise it
    }
    process.exit(128 + (require('node:os').constants.signals[signal] || 0));
  }
  process.exit(code === null ? 1 : code);
});
