/**
 * The API reference teaches: every documented operation lists its error responses through the two
 * shared error bodies, carries the security scheme of its tier, and documents as required only
 * what is; the introduction explains the cross-cutting rules; the examples are valid requests and
 * responses (checked with the project's Ajv); and GET / points to /docs and /dashboard.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import AjvCompiler from '@fastify/ajv-compiler';
import { openApiIntroduction } from '../../src/http/openapi-intro.js';
import { describeRate } from '../../src/http/rate-limit.js';
import { ERROR_BODY_REF, VALIDATION_ERROR_BODY_REF } from '../../src/http/openapi-errors.js';
import { documentRoute, securityOf, withDefaultsOptional } from '../../src/http/openapi.js';
import { isKnownCurrency } from '../../src/shared/currencies.js';
import { MitBody } from '../../src/modules/mit/mit.schemas.js';
import { ERROR_CATALOGUE } from '../../src/shared/errors.js';
import type { RouteDef } from '../../src/shared/route.js';
import { API, startTestRuntime, type TestRuntime } from '../support/harness.js';
import { availableStores } from '../support/stores.js';
import { closed } from '../support/closed-schema.js';

type Json = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The project's validator compiler, without the request-time coercion, defaults and stripping: an example must be valid as written. */
const compile = (AjvCompiler as unknown as () => (externals: object, options: object) => (route: { schema: object }) => ValidateFn)()(
  {},
  {
    customOptions: { allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false },
    onCreate: (ajv: { addFormat(name: string, format: object): void }) => ajv.addFormat('iso4217', { type: 'string', validate: isKnownCurrency }),
  },
);
type ValidateFn = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** Every (path, schema) below `schema` that carries `examples`. */
function schemasWithExamples(schema: unknown, path: string, found: Array<{ path: string; schema: Json }> = []) {
  if (schema === null || typeof schema !== 'object') return found;
  if (Array.isArray((schema as Json).examples)) found.push({ path, schema: schema as Json });
  for (const [key, value] of Object.entries(schema)) if (key !== 'examples') schemasWithExamples(value, `${path}.${key}`, found);
  return found;
}

function operations(doc: Json): Array<{ key: string; op: Json }> {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ key: `${m.toUpperCase()} ${path}`, op: item[m] as Json })),
  );
}

const docKey = (def: RouteDef) => `${def.method} ${(def.root ? def.url : `${API}${def.url}`).replace(/:(\w+)/g, '{$1}')}`;

for (const kind of await availableStores()) {
  describe(`OpenAPI document: errors, security, examples and introduction (${kind})`, () => {
    let t: TestRuntime;
    let doc: Json;
    let documented: RouteDef[];
    before(async () => {
      t = await startTestRuntime(kind, {}, { startWorkers: false });
      const res = await t.client(null).get('/openapi.json');
      assert.equal(res.status, 200);
      doc = res.body;
      documented = t.runtime.services.routes.filter((def) => !def.hidden);
    });
    after(() => t.close());

    test('the two error bodies are components with the INTERFACE §3 shape', () => {
      const schemas = doc.components.schemas as Json;
      for (const name of ['ErrorBody', 'ValidationErrorBody']) {
        assert.deepEqual(schemas[name].required, ['success', 'errorCode', 'message'], name);
        assert.deepEqual(Object.keys(schemas[name].properties).slice(0, 3), ['success', 'errorCode', 'message'], name);
        for (const example of schemas[name].examples) assert.ok(compile({ schema: schemas[name] })(example), `${name} example`);
      }
      assert.ok(schemas.ValidationErrorBody.properties.errors, 'field errors on 422');
      assert.equal(schemas.ErrorBody.properties.errors, undefined);
    });

    test('every operation declares 4xx responses, each one a $ref to a shared error body', () => {
      const ops = operations(doc);
      assert.ok(ops.length >= 70, `${ops.length} operations`);
      for (const { key, op } of ops) {
        const errors = Object.entries(op.responses as Json).filter(([status]) => Number(status) >= 400);
        assert.ok(
          errors.some(([status]) => Number(status) < 500),
          `${key} declares a 4xx`,
        );
        for (const [status, response] of errors) {
          const ref = response.content?.['application/json']?.schema?.$ref;
          assert.equal(ref, Number(status) === 422 ? VALIDATION_ERROR_BODY_REF : ERROR_BODY_REF, `${key} ${status}`);
          assert.ok(response.description.length > 10, `${key} ${status} says when`);
        }
        assert.ok(op.responses['401'] && op.responses['403'], `${key}: every documented route needs a credential`);
        assert.ok(
          Object.keys(op.responses).some((status) => status.startsWith('2')),
          `${key} still documents its success`,
        );
        assert.ok(op.responses['503'].headers['Retry-After'], `${key}: 503 says when to retry`);
      }
    });

    test('errors follow what the route is: inputs, path ids, rate limits, capabilities, idempotency', () => {
      for (const def of documented) {
        const op = doc.paths[docKey(def).split(' ')[1]!][def.method.toLowerCase()] as Json;
        const statuses = Object.keys(op.responses);
        if (def.schema.body) assert.ok(statuses.includes('400') && statuses.includes('422'), `${docKey(def)} body → 400, 422`);
        if (def.schema.params) assert.ok(statuses.includes('404'), `${docKey(def)} path id → 404`);
        assert.equal(statuses.includes('429'), Boolean(def.rateLimit), `${docKey(def)} 429 only where rate limited`);
        if (def.rateLimit) assert.ok(op.responses['429'].headers['X-RateLimit-Reset'], `${docKey(def)} 429 headers`);
        if (def.capability) assert.match(op.responses['403'].description, /CAPABILITY_NOT_ENABLED/);
        if (def.idempotent) {
          assert.match(op.responses['409'].description, /IDEMPOTENCY_KEY_IN_USE/, docKey(def));
          assert.match(op.responses['422'].description, /IDEMPOTENCY_KEY_REUSED/, docKey(def));
          const header = (op.parameters as Json[]).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
          assert.ok(header, `${docKey(def)} documents Idempotency-Key`);
          assert.equal(header!.required, false);
        }
      }
    });

    test('the security scheme of the tier is declared and applied on every authenticated operation', () => {
      assert.deepEqual(doc.components.securitySchemes.merchant, {
        type: 'http',
        scheme: 'bearer',
        description: doc.components.securitySchemes.merchant.description,
      });
      assert.equal(doc.components.securitySchemes.operator.scheme, 'bearer');
      assert.equal(doc.security, undefined, 'no global default: each operation says its tier');
      const tiers = new Set<string>();
      for (const def of documented) {
        const op = doc.paths[docKey(def).split(' ')[1]!][def.method.toLowerCase()] as Json;
        assert.deepEqual(op.security, securityOf(def.auth), docKey(def));
        assert.notEqual(def.auth, 'public', `${docKey(def)} is public and documented`);
        tiers.add(Object.keys((op.security as Json[])[0]!)[0]!);
      }
      assert.deepEqual([...tiers].sort(), ['merchant', 'operator']);
      assert.deepEqual(doc.paths[`${API}/partner/accounts`].post.security, [{ operator: [] }]);
      assert.deepEqual(doc.paths['/sandbox/v1/clock'].post.security, [{ operator: [] }]);
      assert.deepEqual(doc.paths[`${API}/mit`].post.security, [{ merchant: [] }]);
      assert.deepEqual(securityOf('public'), []);
    });

    test('only truly required parameters are required: a parameter or field with a default is optional', () => {
      for (const { key, op } of operations(doc)) {
        for (const p of (op.parameters ?? []) as Json[]) {
          if (p.in === 'path') assert.equal(p.required, true, `${key} ${p.name}`);
          else if (p.schema && 'default' in p.schema) assert.equal(p.required, false, `${key} ${p.name}`);
        }
      }
      const list = (doc.paths[`${API}/transactions`].get.parameters as Json[]).filter((p) => p.required);
      assert.deepEqual(list, [], 'GET /transactions needs no parameter');
      // The transform only copies: the route's own schema (validation and serialization) is untouched.
      const schema = { type: 'object', properties: { page: { type: 'integer', default: 1 }, q: { type: 'string' } }, required: ['page', 'q'] };
      assert.deepEqual(withDefaultsOptional(schema), { ...schema, required: ['q'] });
      assert.deepEqual(schema.required, ['page', 'q']);
      const def = documented.find((d) => d.url === '/transactions' && d.method === 'GET')!;
      const before = JSON.stringify(def.schema);
      documentRoute({ ...def.schema }, def);
      assert.equal(JSON.stringify(def.schema), before);
    });

    test('the introduction explains authentication, idempotency, pagination, callbacks, rate limits, test cards and error codes', () => {
      const intro = doc.info.description as string;
      assert.equal(intro, openApiIntroduction());
      for (const heading of ['Authentication', 'Idempotency', 'Pagination', 'Callbacks and webhooks', 'Rate limits', 'Sandbox test cards', 'Errors']) {
        assert.match(intro, new RegExp(`^## ${heading}$`, 'm'), heading);
      }
      for (const words of [
        'Idempotency-Key',
        'Idempotent-Replayed',
        'nextOffset',
        'perPage',
        'X-RateLimit-Remaining',
        'Retry-After',
        'webhookAuthentication',
        'Authorization',
      ]) {
        assert.ok(intro.includes(words), words);
      }
      assert.match(intro, /\| `POST \/mit` \| 5\/s, burst 300 \|/);
      assert.match(intro, /\| list endpoints \| 1 per 5 s, burst 30 \|/);
      assert.match(intro, /\| capture \/ void \/ refund \/ renew \(per transaction\) \| 5 per minute, burst 5 \|/);
      assert.match(intro, /\| `4111111111111111` \| Visa \| approved \|/);
      assert.match(intro, /\| `4000000000009995` \| Visa \| payment declined `INSUFFICIENT_FUNDS` \|/);
      for (const [code, { status }] of Object.entries(ERROR_CATALOGUE)) assert.ok(intro.includes(`| \`${code}\` | ${status} |`), code);
      assert.equal(describeRate({ ratePerSecond: 1, burst: 10 }), '1/s');
    });

    test('every example of a route schema is valid against its schema (the project Ajv, no unknown fields)', () => {
      let checked = 0;
      for (const def of t.runtime.services.routes) {
        const parts = {
          body: def.schema.body,
          querystring: def.schema.querystring,
          params: def.schema.params,
          ...Object.fromEntries(Object.entries(def.schema.response ?? {}).map(([s, r]) => [`response ${s}`, r])),
        };
        for (const [part, schema] of Object.entries(parts)) {
          for (const found of schemasWithExamples(schema, `${def.method} ${def.url} ${part}`)) {
            const validate = compile({ schema: closed(found.schema) as object });
            for (const example of found.schema.examples as unknown[]) {
              checked++;
              assert.ok(validate(example), `${found.path}: ${JSON.stringify(validate.errors)}`);
            }
          }
        }
      }
      assert.ok(checked >= 40, `${checked} examples checked`);
    });

    test('an invalid example would be caught', () => {
      const validate = compile({ schema: closed(MitBody) as object });
      const example = (MitBody as Json).examples[0];
      assert.ok(validate(example));
      assert.equal(validate({ ...example, amount: '1500' }), false, 'a string amount');
      assert.equal(validate({ ...example, currency: 'XXY' }), false, 'an unknown currency');
      assert.equal(validate({ ...example, amonut: 1500 }), false, 'a misspelt field');
    });

    test('the main routes show a request and a response example in EUR minor units', () => {
      const main: Array<[string, string, boolean]> = [
        ['post', `${API}/cit`, true],
        ['post', `${API}/mit`, true],
        ['post', `${API}/mit/batch`, true],
        ['post', `${API}/transactions/{transactionId}/capture`, true],
        ['post', `${API}/transactions/{transactionId}/refund`, true],
        ['post', `${API}/transactions/{transactionId}/void`, true],
        ['post', `${API}/transactions/{transactionId}/renew`, false],
        ['post', `${API}/payment-links`, true],
        ['patch', `${API}/subscriptions/{subscriptionId}`, true],
        ['post', `${API}/subscriptions/billing/agreements`, true],
        ['post', `${API}/webhooks`, true],
        ['get', `${API}/settlements/transfers`, false],
        ['post', `${API}/payout`, true],
        ['post', `${API}/sale`, true],
      ];
      const mediaExamples = (media: Json | undefined): unknown[] =>
        media ? ('example' in media ? [media.example] : Object.values((media.examples ?? {}) as Json).map((e) => e.value)) : [];
      for (const [method, path, withRequest] of main) {
        const op = doc.paths[path]?.[method] as Json;
        assert.ok(op, `${method} ${path}`);
        const responses = mediaExamples(op.responses['200'].content?.['application/json']);
        assert.ok(responses.length > 0, `${method} ${path} response example`);
        if (withRequest) {
          const requests = mediaExamples(op.requestBody.content['application/json']);
          assert.ok(requests.length > 0, `${method} ${path} request example`);
        }
      }
      const cit = mediaExamples(doc.paths[`${API}/cit`].post.requestBody.content['application/json'])[0] as Json;
      assert.equal(cit.currency, 'EUR');
      assert.ok(Number.isInteger(cit.amount));
      assert.ok(JSON.stringify(doc.paths['/sandbox/v1/sessions/{sessionId}/complete']).includes('4111111111111111'), 'the sandbox card pays the window');
    });

    test('real error answers have the documented shapes', async () => {
      const errorBody = compile({ schema: closed(doc.components.schemas.ErrorBody) as object });
      const validationBody = compile({ schema: closed(doc.components.schemas.ValidationErrorBody) as object });
      const unauthorized = await t.client(null).post(`${API}/mit`, {});
      assert.equal(unauthorized.status, 401);
      assert.ok(errorBody(unauthorized.body), JSON.stringify(unauthorized.body));
      const m = await t.createMerchant({ physical: false });
      const invalid = await m.api.post(`${API}/mit`, { amount: 'x' });
      assert.equal(invalid.status, 422);
      assert.ok(validationBody(invalid.body), JSON.stringify(errorBody.errors));
      assert.ok(invalid.body.errors.amount, 'field errors kept');
    });

    test('GET / points to /docs and /dashboard: JSON when asked for, else a small HTML page', async () => {
      const json = await t.client(null).get('/', { headers: { accept: 'application/json' } });
      assert.equal(json.status, 200);
      assert.match(String(json.headers['content-type']), /^application\/json/);
      assert.equal(json.body.docs, 'http://127.0.0.1:8080/docs');
      assert.equal(json.body.dashboard, 'http://127.0.0.1:8080/dashboard');
      assert.equal(json.body.openapi, 'http://127.0.0.1:8080/openapi.json');
      const html = await t.client(null).get('/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      assert.equal(html.status, 200);
      assert.match(String(html.headers['content-type']), /^text\/html/);
      assert.match(html.text, /href="http:\/\/127\.0\.0\.1:8080\/docs"/);
      assert.match(html.text, /href="http:\/\/127\.0\.0\.1:8080\/dashboard"/);
      const plain = await t.client(null).get('/');
      assert.match(String(plain.headers['content-type']), /^text\/html/, 'no Accept: the page');
      assert.equal(doc.paths['/'], undefined, 'not an API operation');
      assert.equal((await t.client(null).request('POST', '/')).status, 404);
    });
  });
}
