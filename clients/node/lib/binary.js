'use strict';
// Which kakapo executable to run: opts.binary, then KAKAPO_BIN, then the platform package's
// (@kakapo-proxy/linux-x64, an optional dependency, installed on Linux x64 only), then kakapo on PATH.

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');
const { KakapoError } = require('./errors');
const { realProcess } = require('./realm');

/** The platform packages that carry the binary, by `${process.platform}-${process.arch}`. */
const PLATFORM_PACKAGES = { 'linux-x64': '@kakapo-proxy/linux-x64' };

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function executable(given, named, cwd) {
  const expanded = given.startsWith('~/') ? path.join(require('node:os').homedir(), given.slice(2)) : given;
  const file = path.resolve(cwd, expanded);
  if (!isExecutableFile(file)) throw new KakapoError(`${named}: no executable file there`);
  return file;
}

/**
 * The platform package's binary: its path, or the reason there is none (not this platform, not
 * installed, installed without bin/kakapo).
 */
function platformBinary(platform, arch) {
  const proc = realProcess();
  const key = `${platform || proc.platform}-${arch || proc.arch}`;
  const name = PLATFORM_PACKAGES[key];
  if (!name) return { problem: `there is no platform package for ${key}` };
  let file;
  try {
    file = createRequire(__filename).resolve(`${name}/bin/kakapo`);
  } catch {
    return { problem: `${name} is not installed` };
  }
  if (!isExecutableFile(file)) return { problem: `${file} is not an executable file` };
  return { file };
}

function onPath(pathVariable) {
  for (const folder of (pathVariable || '').split(path.delimiter)) {
    if (!folder) continue;
    const file = path.join(folder, 'kakapo');
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

/** The kakapo executable: `binary`, then KAKAPO_BIN, then @kakapo-proxy/linux-x64, then kakapo on PATH. */
function findBinary(options = {}) {
  const proc = realProcess();
  const env = options.env || proc.env;
  const cwd = options.cwd || proc.cwd();
  if (options.binary) return executable(String(options.binary), `binary ${options.binary}`, cwd);
  if (env.KAKAPO_BIN) return executable(env.KAKAPO_BIN, `KAKAPO_BIN=${env.KAKAPO_BIN}`, cwd);
  const platform = platformBinary();
  if (platform.file) return platform.file;
  const found = onPath(env.PATH);
  if (found) return found;
  throw new KakapoError(
    'kakapo-proxy cannot find the kakapo executable: pass { binary: PATH }, set KAKAPO_BIN, ' +
      `install kakapo-proxy with its optional dependency @kakapo-proxy/linux-x64 (${platform.problem}), ` +
      'or put kakapo on PATH',
  );
}

exports.findBinary = findBinary;
exports.platformBinary = platformBinary;
exports.PLATFORM_PACKAGES = PLATFORM_PACKAGES;
