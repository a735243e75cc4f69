// events.js: the SSE parser takes the stream in any pieces, and only well-formed entries reach the page.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { interpret, MAX_LINE, SSEParser } from '../../Sources/KakapoInspector/Web/events.js';

const STREAM = 'id: 41\nevent: request\ndata: {"id":41,"method":"GET"}\n\n: keep-alive\n\n'
  + 'id: 42\r\nevent: request\r\ndata: {"id":42,\r\ndata: "method":"POST"}\r\n\r\n'
  + 'event: dropped\rdata: {"dropped":120,"after":42}\r\r';

function parseAll(pieces) {
  const parser = new SSEParser();
  return pieces.flatMap((piece) => parser.feed(piece));
}

test('parses request and dropped events with \\n, \\r\\n and \\r line ends, skipping comments', () => {
  const events = parseAll([STREAM]);
  assert.deepEqual(events, [
    { type: 'request', data: '{"id":41,"method":"GET"}', id: '41' },
    { type: 'request', data: '{"id":42,\n"method":"POST"}', id: '42' },
    { type: 'dropped', data: '{"dropped":120,"after":42}', id: '42' },
  ]);
});

test('gives the same events however the stream is cut, one character at a time included', () => {
  const whole = parseAll([STREAM]);
  assert.deepEqual(parseAll([...STREAM]), whole);
  for (let cut = 1; cut < STREAM.length; cut += 1) {
    assert.deepEqual(parseAll([STREAM.slice(0, cut), STREAM.slice(cut)]), whole, `cut at ${cut}`);
  }
});

test('an event is not complete until its blank line arrives', () => {
  const parser = new SSEParser();
  assert.deepEqual(parser.feed('id: 1\nevent: request\ndata: {"id":1}\n'), []);
  assert.equal(parser.feed('\n').length, 1);
});

test('a field without a space after the colon, a field without a colon, and an unknown field', () => {
  const events = parseAll(['data:x\ndata\nretry: 10\nfoo: bar\n\n']);
  assert.deepEqual(events, [{ type: 'message', data: 'x\n', id: '' }]);
});

test('an endless line is refused instead of filling memory', () => {
  const parser = new SSEParser();
  const piece = 'x'.repeat(1024 * 1024);
  assert.throws(() => {
    for (let index = 0; index <= MAX_LINE / piece.length; index += 1) parser.feed(piece);
  }, /longer than 4 MiB/);
});

test('interpret keeps entries with an id and dropped notes; it drops anything malformed', () => {
  assert.deepEqual(interpret({ type: 'request', data: '{"id":7,"method":"GET"}' }), { kind: 'entry', entry: { id: 7, method: 'GET' } });
  assert.deepEqual(interpret({ type: 'dropped', data: '{"dropped":3,"after":6}' }), { kind: 'dropped', dropped: 3, after: 6 });
  assert.deepEqual(interpret({ type: 'dropped', data: '{"dropped":-1}' }), { kind: 'dropped', dropped: 0, after: null });
  for (const data of ['', 'not json', '[]', 'null', '{"id":"7"}', '{"id":-1}', '{"id":1.5}', '{"id":1e300}']) {
    assert.equal(interpret({ type: 'request', data }), null, data);
  }
  assert.equal(interpret({ type: 'other', data: '{"id":1}' }), null);
});

test('a big chunk of many events parses in time linear in its size (no rescans per line)', () => {
  const event = 'id: 1\nevent: request\ndata: {"id":1,"method":"GET","url":"http://127.0.0.1:8080/users/1"}\n\n';
  const chunk = event.repeat(80_000); // 7 MB, 320,000 lines: a rescan per line reads about a terabyte (11 s here).
  const started = performance.now();
  const events = new SSEParser().feed(chunk);
  const took = performance.now() - started;
  assert.equal(events.length, 80_000);
  assert.ok(took < 3000, `took ${Math.round(took)} ms`);
});
