// curl.js: the command reproduces the request, whatever its bytes. Each command is run through sh with a
// stand-in `curl` that prints the arguments it got, so quoting is checked by a shell, not by eye.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { curlCommand, shellQuote } from '../../Sources/KakapoInspector/Web/curl.js';

const ORIGIN = 'http://127.0.0.1:8080';

// Runs `command` in sh with curl and kakapo replaced; returns {args, stdin} as curl would have seen them.
function run(command) {
  const script = [
    'curl() { s=; for a in "$@"; do printf \'%s\\0\' "$a"; if [ "$a" = "@-" ]; then s=1; fi; done;',
    '  if [ -n "$s" ]; then printf \'STDIN\\0\'; cat; fi; }',
    'kakapo() { echo /home/me/.kakapo/ca/kakapo-ca.pem; }',
    command,
  ].join('\n');
  const syntax = spawnSync('sh', ['-n', '-c', command]);
  assert.equal(syntax.status, 0, `sh -n rejected:\n${command}\n${syntax.stderr}`);
  const done = spawnSync('sh', ['-c', script], { encoding: 'buffer' });
  assert.equal(done.status, 0, `sh failed: ${done.stderr}`);
  const output = done.stdout;
  const marker = output.indexOf(Buffer.from('STDIN\0'));
  const argsPart = marker >= 0 ? output.subarray(0, marker) : output;
  const args = argsPart.toString('utf8').split('\0');
  args.pop();
  return { args, stdin: marker >= 0 ? output.subarray(marker + 6) : null };
}

function request(overrides = {}) {
  return {
    id: 1,
    method: 'GET',
    url: `${ORIGIN}/users/1`,
    target: '/users/1',
    source: 'upstream',
    request: {
      method: 'GET', target: '/users/1', url: `${ORIGIN}/users/1`,
      headers: [['Host', '127.0.0.1:8080'], ['Accept', '*/*']], body: { size: 0, kept: 0, truncated: false, text: '' },
      ...overrides,
    },
  };
}

test('a plain GET goes to the page origin, with its headers and no Host that curl sets itself', () => {
  const command = curlCommand(request(), ORIGIN);
  assert.deepEqual(run(command).args, ['-H', 'Accept: */*', `${ORIGIN}/users/1`]);
});

test('hostile header values, URLs and bodies reach curl byte for byte', () => {
  const hostile = [
    `it's "quoted" $(false) \`x\` \\ & ; ok`,
    "'; rm -rf / #",
    '$HOME ${PATH} $((1+1)) !! *',
    'line one\nline two\r\nthree',
    'kākāpō 🦜 日本語 \u200b',
  ];
  for (const value of hostile) {
    const body = JSON.stringify({ note: value });
    const detail = request({
      method: 'POST', target: `/search?q=${encodeURIComponent(value)}&raw='$(id)'`,
      headers: [['Content-Type', 'application/json'], ['X-Note', value]],
      body: { size: Buffer.byteLength(body), kept: Buffer.byteLength(body), truncated: false, text: body },
    });
    detail.method = 'POST';
    const { args } = run(curlCommand(detail, ORIGIN));
    assert.deepEqual(args, [
      '-X', 'POST', '-H', 'Content-Type: application/json', '-H', `X-Note: ${value}`, '--data-binary', body,
      `${ORIGIN}/search?q=${encodeURIComponent(value)}&raw='$(id)'`,
    ]);
  }
});

test('a binary body goes through base64 -d and arrives unchanged on stdin', () => {
  const bytes = Buffer.from([0, 1, 2, 255, 39, 10, 36, 40]);
  const detail = request({
    method: 'PUT', headers: [['Content-Type', 'application/octet-stream']],
    body: { size: bytes.length, kept: bytes.length, truncated: false, base64: bytes.toString('base64') },
  });
  const { args, stdin } = run(curlCommand(detail, ORIGIN));
  assert.deepEqual(args, ['-X', 'PUT', '-H', 'Content-Type: application/octet-stream', '--data-binary', '@-', `${ORIGIN}/users/1`]);
  assert.deepEqual([...stdin], [...bytes]);
});

test('a text body holding NUL is sent as bytes too, since an argument cannot hold one', () => {
  const text = 'a\u0000b';
  const detail = request({ method: 'POST', headers: [], body: { size: 3, kept: 3, truncated: false, text } });
  const { args, stdin } = run(curlCommand(detail, ORIGIN));
  assert.ok(args.includes('@-'));
  assert.deepEqual([...stdin], [0x61, 0, 0x62]);
});

test('hop-by-hop headers and Content-Length are left out; a body without a type keeps curl from adding one', () => {
  const detail = request({
    method: 'POST',
    headers: [['Connection', 'keep-alive'], ['Content-Length', '2'], ['Transfer-Encoding', 'chunked'], ['TE', 'trailers'],
      ['Keep-Alive', 'timeout=5'], ['Upgrade', 'h2c'], ['Expect', '100-continue'], ['X-Kept', 'yes']],
    body: { size: 2, kept: 2, truncated: false, text: 'hi' },
  });
  const { args } = run(curlCommand(detail, ORIGIN));
  assert.deepEqual(args, ['-X', 'POST', '-H', 'X-Kept: yes', '-H', 'Content-Type:', '--data-binary', 'hi', `${ORIGIN}/users/1`]);
});

test('an absolute-form target goes through Kakapo as a proxy', () => {
  const detail = request({ target: 'http://api.example.com/v1/users?x=1', url: 'http://api.example.com/v1/users?x=1', headers: [['Host', 'api.example.com']] });
  const { args } = run(curlCommand(detail, ORIGIN));
  assert.deepEqual(args, ['-x', ORIGIN, 'http://api.example.com/v1/users?x=1']);
});

test('an intercepted https request goes through the proxy trusting Kakapo\u2019s CA', () => {
  const detail = request({ target: '/v1/me', url: 'https://api.example.com/v1/me', headers: [['Host', 'api.example.com']] });
  const { args } = run(curlCommand(detail, ORIGIN));
  assert.deepEqual(args, ['-x', ORIGIN, '--cacert', '/home/me/.kakapo/ca/kakapo-ca.pem', 'https://api.example.com/v1/me']);
});

test('a Host that named another host is kept, and a session the server took out is put back', () => {
  const detail = request({ headers: [['Host', 'api.local:9000']] });
  detail.session = '36a7cdf5933c0bb4';
  const { args } = run(curlCommand(detail, ORIGIN));
  assert.deepEqual(args, ['-H', 'Host: api.local:9000', '-H', 'X-Kakapo-Session: 36a7cdf5933c0bb4', `${ORIGIN}/users/1`]);
});

test('HEAD uses --head; a GET with a body says -X GET; an empty header value is sent empty', () => {
  assert.deepEqual(run(curlCommand(request({ method: 'HEAD', headers: [] }), ORIGIN)).args, ['--head', `${ORIGIN}/users/1`]);
  const withBody = request({ headers: [['X-Empty', '']], body: { size: 1, kept: 1, truncated: false, text: 'x' } });
  assert.deepEqual(run(curlCommand(withBody, ORIGIN)).args, ['-X', 'GET', '-H', 'X-Empty;', '-H', 'Content-Type:', '--data-binary', 'x', `${ORIGIN}/users/1`]);
});

test('brackets in the URL turn globbing off and dot segments are sent as they are', () => {
  const detail = request({ target: '/a/../b?ids[]=1&x={y}', headers: [] });
  const { args } = run(curlCommand(detail, ORIGIN));
  assert.deepEqual(args, ['--globoff', '--path-as-is', `${ORIGIN}/a/../b?ids[]=1&x={y}`]);
});

test('a cut body says so in a comment line that sh ignores', () => {
  const detail = request({ method: 'POST', headers: [['Content-Type', 'text/plain']], body: { size: 5000000, kept: 3, truncated: true, text: 'abc' } });
  const command = curlCommand(detail, ORIGIN);
  assert.match(command, /^# the body was cut: 3 of 5000000 bytes kept\n/);
  assert.deepEqual(run(command).args.slice(-3), ['--data-binary', 'abc', `${ORIGIN}/users/1`]);
});

test('without a detail (no longer held), the event fields still make a command', () => {
  const { args } = run(curlCommand({ method: 'DELETE', target: '/orders/9', url: `${ORIGIN}/orders/9` }, ORIGIN));
  assert.deepEqual(args, ['-X', 'DELETE', `${ORIGIN}/orders/9`]);
});

test('options appended after the command still reach curl (the browser test appends -sS -o /dev/null)', () => {
  const { args } = run(`${curlCommand(request(), ORIGIN)} -sS`);
  assert.equal(args.at(-1), '-sS');
});

test('shellQuote leaves plain words alone and quotes everything else', () => {
  assert.equal(shellQuote('abc-1.2/x'), 'abc-1.2/x');
  assert.equal(shellQuote(''), "''");
  assert.equal(shellQuote('-rf'), "'-rf'");
  assert.equal(shellQuote("a'b"), `'a'\\''b'`);
  assert.equal(shellQuote('a b'), "'a b'");
});
