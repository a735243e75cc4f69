// An example suite for kakapo-proxy/node-test (docs/node.md runs it): every test its own cassette,
// cassettes/users.test/<test name>.json beside this file. API is the demo API's URL
// (python3 tools/demo-api.py 9000); USER_ID picks the user the first test asks for.
const { test } = require('node:test');
const assert = require('node:assert/strict');
require('kakapo-proxy/node-test').useKakapo();

const API = process.env.API || 'http://127.0.0.1:9000';

test('gets a user', async () => {
  const answer = await fetch(`${API}/users/${process.env.USER_ID || '1'}`);
  assert.equal(answer.status, 200);
  assert.equal((await answer.json()).name, 'Ada Lovelace');
});

test('creates a user', async () => {
  const answer = await fetch(`${API}/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Kea' }),
  });
  assert.equal(answer.status, 201);
  assert.deepEqual(await answer.json(), { id: '3', name: 'Kea' });
});
