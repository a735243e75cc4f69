// filters.js: each filter narrows by its field, words combine, and the body search looks inside bodies.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { compileFilter, detailBodyMatches, emptyFilter, isActive, parseText } from '../../Sources/KakapoInspector/Web/filters.js';

const ENTRIES = [
  { id: 1, method: 'GET', url: 'http://127.0.0.1:8080/users/1', host: '127.0.0.1:8080', status: 200, source: 'cassette' },
  { id: 2, method: 'POST', url: 'http://127.0.0.1:8080/orders', host: '127.0.0.1:8080', status: 201, source: 'upstream' },
  { id: 3, method: 'GET', url: 'http://127.0.0.1:8080/users/2?page=2', host: '127.0.0.1:8080', status: 404, source: 'miss' },
  { id: 4, method: 'DELETE', url: 'http://api.example.com/orders/9', host: 'api.example.com', status: 503, source: 'passthrough' },
  { id: 5, method: 'GET', url: 'http://127.0.0.1:8080/boom', host: '127.0.0.1:8080', status: 0, source: 'error' },
];

function ids(filter) {
  return ENTRIES.filter(compileFilter({ ...emptyFilter(), ...filter })).map((entry) => entry.id);
}

test('an empty filter lets everything through and is not active', () => {
  assert.deepEqual(ids({}), [1, 2, 3, 4, 5]);
  assert.equal(isActive(emptyFilter()), false);
  assert.equal(isActive({ ...emptyFilter(), text: ' x ' }), true);
});

test('by source, status class, method and host', () => {
  assert.deepEqual(ids({ source: 'miss' }), [3]);
  assert.deepEqual(ids({ status: '2xx' }), [1, 2]);
  assert.deepEqual(ids({ status: '5xx' }), [4]);
  assert.deepEqual(ids({ status: 'fault' }), [5]);
  assert.deepEqual(ids({ method: 'get' }), [1, 3, 5]);
  assert.deepEqual(ids({ host: 'EXAMPLE' }), [4]);
  assert.deepEqual(ids({ method: 'GET', source: 'cassette' }), [1]);
});

test('free text: every word must occur, -word must not, without case', () => {
  assert.deepEqual(ids({ text: 'orders' }), [2, 4]);
  assert.deepEqual(ids({ text: 'ORDERS delete' }), [4]);
  assert.deepEqual(ids({ text: 'users -page' }), [1]);
  assert.deepEqual(ids({ text: '404' }), [3]);
  assert.deepEqual(ids({ text: '  ' }), [1, 2, 3, 4, 5]);
  assert.deepEqual(parseText(' a -b - C '), { include: ['a', 'c'], exclude: ['b'] });
});

test('the body search keeps only the ids it matched', () => {
  assert.deepEqual(ids({ bodyMatches: new Set([2, 5]) }), [2, 5]);
  assert.deepEqual(ids({ bodyMatches: new Set([2, 5]), method: 'GET' }), [5]);
});

test('detailBodyMatches looks in text and binary bodies, stream chunks and WebSocket messages', () => {
  const text = { request: { body: { size: 20, text: '{"item":"Needle-7f3a"}' } } };
  assert.equal(detailBodyMatches(text, 'needle-7F3A'), true);
  assert.equal(detailBodyMatches(text, 'haystack'), false);
  const binary = { response: { body: { size: 9, base64: Buffer.from('\u0000\u0001Token!x').toString('base64') } } };
  assert.equal(detailBodyMatches(binary, 'token'), true);
  assert.equal(detailBodyMatches(binary, 'nope'), false);
  assert.equal(detailBodyMatches({ response: { chunks: [{ text: 'data: hello\n\n' }] } }, 'HELLO'), true);
  assert.equal(detailBodyMatches({ webSocket: { messages: [{ text: 'ping 42' }] } }, 'ping 4'), true);
  assert.equal(detailBodyMatches({ response: { body: { base64: '!!not base64!!' } } }, 'x'), false);
  assert.equal(detailBodyMatches(null, 'x'), false);
  assert.equal(detailBodyMatches(text, ''), false);
});
