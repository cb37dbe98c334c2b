/**
 * Property: bad input never produces a 500. For every registered route (the foundation's and
 * every module's), garbage path parameters, query strings and bodies — random, schema-shaped with
 * wrong types and extreme values, or not JSON at all — get a 4xx (or a 2xx), never a 5xx.
 * Deterministic: the seed is printed with any failure so that it can be replayed.
 */
import assert from 'node:assert/strict';
import { FIELD_RULE_PATTERN } from '../../src/shared/errors.js';
import { after, before, describe, test } from 'node:test';
import type { RouteDef } from '../../src/shared/route.js';
import { API_PREFIX } from '../../src/http/app.js';
import { availableStores } from '../support/stores.js';
import { startTestRuntime, type TestMerchant, type TestRuntime } from '../support/harness.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

/** mulberry32: small, seedable, good enough for picking cases. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof rng>;

const STRINGS = [
  '',
  ' ',
  'x',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '💳',
  'Ω≈ç√',
  '\u0000',
  '\\',
  '"',
  "'; drop table transactions; --",
  '../../etc/passwd',
  '%00',
  '<script>alert(1)</script>',
  'x'.repeat(5000),
  '4111111111111111',
  '2016-12-31T23:59:60Z',
  '2024-02-30',
  '9999-12-31T23:59:59.999Z',
  '0000-01-01T00:00:00Z',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-4fff-bfff-ffffffffffff',
  'ABCDEFGHJKM',
  'http://169.254.169.254/latest',
  'javascript:alert(1)',
  'DKK',
  'dkk',
  'ZZZ',
];
const NUMBERS = [0, -1, 1, 0.5, -0.0001, 999_999_999, 1_000_000_000, 2 ** 31, 2 ** 53, 2 ** 63, 1e308, -1e308, Number.MIN_VALUE];

function randomJson(r: Rng, depth = 0): Json {
  switch (r.int(depth > 3 ? 4 : 7)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick(NUMBERS);
    case 3:
      return r.pick(STRINGS);
    case 4:
      return Array.from({ length: r.int(4) }, () => randomJson(r, depth + 1));
    case 5:
      return Object.fromEntries(
        Array.from({ length: r.int(4) }, () => [r.pick(['a', 'amount', 'id', '__proto__x', 'constructorx', '']), randomJson(r, depth + 1)]),
      );
    default:
      return r.pick(STRINGS);
  }
}

/** A value shaped by the schema, mutated now and then into the wrong type or an extreme value. */
function fromSchema(schema: Schema | undefined, r: Rng, depth = 0): Json {
  if (!schema || depth > 6 || r.chance(0.15)) return randomJson(r, depth);
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) return fromSchema(r.pick(union), r, depth);
  if (Array.isArray(schema.enum)) return r.chance(0.8) ? (r.pick(schema.enum) as Json) : 'NOT_IN_ENUM';
  if ('const' in schema) return schema.const as Json;
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const out: Record<string, Json> = {};
      for (const [key, sub] of Object.entries(props)) if (r.chance(0.8)) out[key] = fromSchema(sub, r, depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: r.pick([0, 1, 2, 3, 600]) === 600 && r.chance(0.2) ? 600 : r.int(4) }, () =>
        fromSchema(schema.items as Schema, r, depth + 1),
      );
    case 'integer':
    case 'number':
      return r.chance(0.6) ? r.pick([0, 1, 100, 999_999_999, Number(schema.minimum ?? 0), Number(schema.maximum ?? 10)]) : r.pick(NUMBERS);
    case 'boolean':
      return r.chance(0.8) ? r.chance(0.5) : r.pick(['yes', 2]);
    case 'string': {
      if (schema.format === 'uuid') return r.chance(0.7) ? crypto.randomUUID() : r.pick(STRINGS);
      if (schema.format === 'date-time') return r.chance(0.7) ? new Date(r.int(4e12)).toISOString() : r.pick(STRINGS);
      if (schema.format === 'uri') return r.pick(['https://localhost/cb', 'http://localhost:9/x', 'http://10.0.0.1/', 'notaurl', 'https://evil.example/']);
      return r.pick(STRINGS);
    }
    default:
      return randomJson(r, depth);
  }
}

function queryString(schema: Schema | undefined, r: Rng): string {
  const value = fromSchema(schema ?? { type: 'object', properties: {} }, r);
  const params = new URLSearchParams();
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      for (const item of Array.isArray(v) ? v : [v]) params.append(k, typeof item === 'string' ? item : JSON.stringify(item));
    }
  }
  if (r.chance(0.2)) params.append(r.pick(['perPage', 'page', 'offset', 'x']), r.pick(STRINGS));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function pathFor(def: RouteDef, r: Rng, known: Record<string, string[]>): string {
  const url = def.root ? def.url : `${API_PREFIX}${def.url}`;
  return url.replace(/:(\w+)/g, (_m, name: string) => {
    const candidates = known[name] ?? [];
    const choice = r.int(5);
    if (choice === 0 && candidates.length) return encodeURIComponent(r.pick(candidates));
    if (choice === 1) return crypto.randomUUID();
    if (choice === 2) return 'ABCDEFGHJKM';
    return encodeURIComponent(r.pick(STRINGS) || 'x');
  });
}

const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 8);

for (const kind of await availableStores()) {
  describe(`no 500 for any input to any route (${kind})`, () => {
    let t: TestRuntime;
    let m: TestMerchant;
    const known: Record<string, string[]> = {};
    before(async () => {
      t = await startTestRuntime(kind);
      m = await t.createMerchant();
      known.pointOfSaleId = [m.onlinePointOfSaleId, m.physicalPointOfSaleId!];
      known.terminalId = m.terminalIds;
      known.accountId = [m.accountId];
    });
    after(() => t.close());

    test('every registered route, garbage in, no 5xx out', async () => {
      const routes = t.runtime.services.routes;
      assert.ok(routes.length >= 10, 'the route list is the registered one');
      const failures: string[] = [];
      const seed = Number(process.env.FUZZ_SEED ?? 20261121);
      for (const [index, def] of routes.entries()) {
        const r = rng(seed + index);
        const token = def.auth === 'merchant' ? m.token : def.auth === 'public' ? null : t.operatorKey;
        for (let round = 0; round < ROUNDS; round++) {
          const url = pathFor(def, r, known) + queryString(def.schema.querystring as Schema | undefined, r);
          const headers: Record<string, string> = {};
          if (token) headers.authorization = `Bearer ${token}`;
          if (r.chance(0.3)) headers['idempotency-key'] = r.pick(['k1', 'x'.repeat(300), 'key with space', crypto.randomUUID()]);
          let payload: string | undefined;
          if (def.method !== 'GET') {
            const shape = r.int(10);
            if (shape < 6) payload = JSON.stringify(fromSchema(def.schema.body as Schema | undefined, r));
            else if (shape < 8) payload = JSON.stringify(randomJson(r));
            else if (shape === 8) payload = r.pick(['{', '{"a":', 'nul', '[1,]', '\u0000', '{"a":1}{"b":2}']);
            if (payload !== undefined)
              headers['content-type'] = r.chance(0.9) ? 'application/json' : r.pick(['text/plain', 'application/json; charset=latin1', 'multipart/form-data']);
          }
          const res = await t.runtime.app.inject({ method: def.method, url, headers, ...(payload === undefined ? {} : { payload }) });
          if (res.statusCode >= 500) {
            failures.push(
              `${def.method} ${url} body=${(payload ?? '').slice(0, 300)} → ${res.statusCode} ${res.body.slice(0, 200)} (seed ${seed + index}, round ${round})`,
            );
          } else if (res.statusCode >= 400 && !String(res.headers['content-type']).startsWith('text/html')) {
            // Pages answer in HTML; everything else refuses with the JSON error body.
            let body: { success?: unknown; errorCode?: unknown; errors?: Record<string, unknown> } = {};
            try {
              body = res.json();
            } catch {
              body = {};
            }
            if (body.success !== false || typeof body.errorCode !== 'string')
              failures.push(`${def.method} ${url} → ${res.statusCode} without the error body: ${res.body.slice(0, 200)}`);
            // Every field error names one of the contract's rules (INTERFACE §3).
            for (const [field, messages] of Object.entries(body.errors ?? {})) {
              for (const message of Array.isArray(messages) ? messages : [messages]) {
                if (typeof message !== 'string' || !FIELD_RULE_PATTERN.test(message)) failures.push(`${def.method} ${url} → errors.${field}: ${JSON.stringify(message)} is not "[rule]: text" with a contract rule`);
              }
            }
          }
        }
      }
      assert.deepEqual(failures, []);
    });
  });
}
