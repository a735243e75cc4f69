// miss-view.js's model: the side-by-side rows of a request and its nearest recording, and field labels.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { comparisonRows, fieldKey, fieldLabel, pathPart, queryPairs } from '../../Sources/KakapoInspector/Web/miss-view.js';

test('query pairs are decoded, and an undecodable one stays as written', () => {
  assert.deepEqual(queryPairs('/u?page=2&q=a%20b&flag&x=%E0%A4%A'), [['page', '2'], ['q', 'a b'], ['flag', ''], ['x', '%E0%A4%A']]);
  assert.deepEqual(queryPairs('/u'), []);
  assert.deepEqual(queryPairs('/u?a=1#frag'), [['a', '1']]);
  assert.equal(pathPart('http://h:1/users/2?page=2'), '/users/2');
  assert.equal(pathPart('/users/2?page=2'), '/users/2');
});

test('rows pair both sides by name: method, host, path, each query parameter, each header', () => {
  const here = {
    method: 'GET', target: '/users/2?page=2&sort=asc', url: 'http://127.0.0.1:8080/users/2?page=2&sort=asc',
    headers: [['Accept', 'application/json'], ['X-Trace', '1'], ['x-trace', '2']],
  };
  const recorded = { method: 'GET', target: '/users/1?page=1', url: 'http://127.0.0.1:8080/users/1?page=1', headers: [['accept', '*/*']] };
  const rows = comparisonRows(here, recorded).map(({ key, here: a, recorded: b }) => [key, a, b]);
  assert.deepEqual(rows, [
    ['method', 'GET', 'GET'],
    ['host', '127.0.0.1:8080', '127.0.0.1:8080'],
    ['path', '/users/2', '/users/1'],
    ['query:page', '2', '1'],
    ['query:sort', 'asc', undefined],
    ['header:accept', 'application/json', '*/*'],
    ['header:x-trace', '1, 2', undefined],
  ]);
});

test('field labels and the rows they mark', () => {
  assert.equal(fieldLabel({ part: 'query', name: 'page', here: '2', recorded: '1' }), 'query page');
  assert.equal(fieldLabel({ part: 'body', pointer: '/user/name' }), 'body /user/name');
  assert.equal(fieldLabel({ part: 'other', text: 'the body is not JSON' }), 'the body is not JSON');
  assert.equal(fieldLabel({ part: 'path', here: '/a', recorded: '/b' }), 'path');
  assert.equal(fieldKey({ part: 'header', name: 'Accept' }), 'header:accept');
  assert.equal(fieldKey({ part: 'query', name: 'page' }), 'query:page');
  assert.equal(fieldKey({ part: 'method' }), 'method');
});
