// Run with: node --test
const test = require('node:test');
const assert = require('node:assert');
const { handler } = require('./index.js');

test('a plain HTTP request', async () => {
  const event = {
    version: '2.0', rawPath: '/', rawQueryString: 'name=ada',
    queryStringParameters: { name: 'ada' },
    requestContext: { http: { method: 'GET', path: '/' } },
  };
  assert.deepStrictEqual(await handler(event, {}), { hello: 'ada' });
});

test('a CloudEvent', async () => {
  const event = { id: '1', source: '/test', type: 'com.example.greet', data: { name: 'ada' } };
  assert.deepStrictEqual(await handler(event, {}), { hello: 'ada' });
});

test('nobody named', async () => {
  assert.deepStrictEqual(await handler({ id: '1', source: '/test', type: 'com.example.greet' }, {}), { hello: 'world' });
});
