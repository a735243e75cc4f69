'use strict';
// What kakapo-proxy's own tests share: the kakapo binary, local upstreams on port 0, temporary folders,
// and running commands. (Outside test/: `node --test test/` runs every .js file under test/.)

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { execFile, spawn } = require('node:child_process');

const PACKAGE = path.resolve(__dirname, '..');
const REPOSITORY = path.resolve(PACKAGE, '..', '..');

/** The kakapo binary the tests run: KAKAPO_BIN, else the repository's debug build. */
function kakapoBinary() {
  const binary = process.env.KAKAPO_BIN || path.join(REPOSITORY, '.build', 'debug', 'kakapo');
  try {
    fs.accessSync(binary, fs.constants.X_OK);
  } catch {
    throw new Error(`the tests need the kakapo binary: set KAKAPO_BIN (tried ${binary}); build it with swift build`);
  }
  return path.resolve(binary);
}

/** The environment every test file starts from: KAKAPO_BIN set, no proxy, no record mode. */
function cleanEnvironment() {
  process.env.KAKAPO_BIN = kakapoBinary();
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy', 'KAKAPO_RECORD', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'CURL_CA_BUNDLE', 'REQUESTS_CA_BUNDLE']) {
    delete process.env[name];
  }
}

const made = [];
process.on('exit', () => {
  for (const folder of made) fs.rmSync(folder, { recursive: true, force: true });
});

/** A temporary folder, removed when the process exits. */
function temporaryFolder(prefix = 'kakapo-node-test-') {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(folder);
  return folder;
}

/**
 * A local JSON API: GET /users/:id, POST echoes, /missing is 404, /big streams `bigSize` bytes in
 * pieces, /slow sends a piece and holds the rest until the client leaves, /hold answers nothing until
 * the API closes. `hits` counts requests.
 */
function handleApi(api, request, response) {
  api.hits += 1;
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    const url = new URL(request.url, 'http://x');
    if (url.pathname === '/missing') {
      response.writeHead(404, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: 'no such thing' }));
    } else if (url.pathname === '/big') {
      response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      let sent = 0;
      const piece = () => {
        while (sent < api.bigSize) {
          const size = Math.min(64 * 1024, api.bigSize - sent);
          const bytes = Buffer.alloc(size);
          for (let i = 0; i < size; i++) bytes[i] = (sent + i) % 251;
          sent += size;
          if (!response.write(bytes)) {
            response.once('drain', piece);
            return;
          }
        }
        response.end();
      };
      piece();
    } else if (url.pathname === '/hold') {
      api.held.push(response);
    } else if (url.pathname === '/slow') {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.write('first piece\n');
      api.held.push(response);
    } else if (request.method === 'GET' && url.pathname.startsWith('/users/')) {
      const id = url.pathname.split('/')[2];
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ id, name: `user ${id}`, via: api.name }));
    } else {
      response.writeHead(request.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json' });
      response.end(
        JSON.stringify({
          method: request.method,
          path: request.url,
          contentType: request.headers['content-type'] || null,
          length: body.length,
          sha256: crypto.createHash('sha256').update(body).digest('hex'),
          body: body.length <= 4096 ? body.toString('utf8') : null,
        }),
      );
    }
  });
}

function listen(server, api, scheme) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      api.port = server.address().port;
      api.url = `${scheme}://${api.host}:${api.port}`;
      resolve(api);
    });
  });
}

function makeApi(name, host) {
  const api = {
    name,
    host,
    hits: 0,
    bigSize: 3 * 1024 * 1024 + 17,
    held: [],
    sockets: new Set(),
    server: null,
    close() {
      for (const response of api.held.splice(0)) response.destroy();
      for (const socket of api.sockets) socket.destroy();
      return new Promise((resolve) => api.server.close(() => resolve()));
    },
  };
  return api;
}

/** A plain HTTP upstream on 127.0.0.1, port 0. */
async function startApi() {
  const api = makeApi('http', '127.0.0.1');
  api.server = http.createServer((request, response) => handleApi(api, request, response));
  api.server.on('connection', (socket) => {
    api.sockets.add(socket);
    socket.on('close', () => api.sockets.delete(socket));
  });
  return listen(api.server, api, 'http');
}

function run(file, args, options = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 64 * 1024 * 1024, timeout: 300_000, ...options }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, error, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

function haveCommand(name) {
  return (process.env.PATH || '').split(path.delimiter).some((folder) => {
    try {
      fs.accessSync(path.join(folder, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * An HTTPS upstream on 127.0.0.1, port 0, named `localhost` in its URL, with a CA of its own made by
 * openssl: { url, caFile, ... }. Kakapo is told to trust the CA with --upstream-ca.
 */
async function startHttpsApi() {
  const folder = temporaryFolder('kakapo-node-tls-');
  const at = (name) => path.join(folder, name);
  fs.writeFileSync(at('leaf.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  const steps = [
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=kakapo-proxy test upstream CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', at('leaf.key'), '-out', at('leaf.csr'), '-subj', '/CN=localhost'],
    ['x509', '-req', '-in', at('leaf.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('leaf.pem'), '-days', '2', '-extfile', at('leaf.ext')],
  ];
  for (const args of steps) {
    const done = await run('openssl', args);
    assert.equal(done.code, 0, `openssl ${args.join(' ')}: ${done.stderr}`);
  }
  const api = makeApi('https', 'localhost');
  api.caFile = at('ca.pem');
  api.server = https.createServer({ key: fs.readFileSync(at('leaf.key')), cert: fs.readFileSync(at('leaf.pem')) }, (request, response) => handleApi(api, request, response));
  api.server.on('secureConnection', (socket) => {
    api.sockets.add(socket);
    socket.on('close', () => api.sockets.delete(socket));
  });
  return listen(api.server, api, 'https');
}

/** Runs `node --test` on `files` in `cwd` with `env`; { code, stdout, stderr, output }. */
function nodeTest(cwd, files, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...files], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr, output: stdout + stderr }));
  });
}

function sha256(bytes) {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/** The bytes /big sends. */
function bigBody(size) {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = i % 251;
  return bytes;
}

module.exports = {
  PACKAGE,
  REPOSITORY,
  kakapoBinary,
  cleanEnvironment,
  temporaryFolder,
  startApi,
  startHttpsApi,
  run,
  haveCommand,
  nodeTest,
  sha256,
  bigBody,
};

/**
 * A project folder with kakapo-proxy in node_modules: a copy of the files package.json's "files"
 * names (a copy, not a link, so that its imports resolve from the project as an installed package's do).
 */
function projectWithPackage(prefix = 'kakapo-node-project-') {
  const project = temporaryFolder(prefix);
  const target = path.join(project, 'node_modules', 'kakapo-proxy');
  fs.mkdirSync(target, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
  for (const entry of ['package.json', ...manifest.files]) {
    fs.cpSync(path.join(PACKAGE, entry), path.join(target, entry), { recursive: true });
  }
  return project;
}

/** The JSON lines a stand-in runner printed, by test name. */
function results(stdout) {
  const byName = {};
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    const result = JSON.parse(line);
    byName[result.name] = result;
  }
  return byName;
}

module.exports.projectWithPackage = projectWithPackage;
module.exports.results = results;
