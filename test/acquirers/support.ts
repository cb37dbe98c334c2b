/** Shared helpers of the acquirer agreement suites (INTERFACE §12.1). */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { API, type TestClient, type TestResponse, type TestRuntime } from '../support/harness.js';

export const AGREEMENT_KEYS = ['acquirer', 'createdAt', 'mcc', 'textOnStatement', 'updatedAt'];

export const agreementUrl = (accountId: string) => `${API}/partner/accounts/${accountId}/acquirer-agreement`;

/** A fresh Clearhaus-style API key (a UUID). */
export const newApiKey = (): string => randomUUID();

/** A merchant account through the partner API (no points of sale: agreements need none). */
export async function createAccount(t: TestRuntime): Promise<string> {
  const tag = randomBytes(4).toString('hex');
  const res = await t.operator.post(`${API}/partner/accounts`, {
    name: `Acquired ${tag}`,
    email: `a-${tag}@example.com`,
    currencyCode: 'DKK',
    timezone: 'UTC',
    domain: 'localhost',
  });
  assert.equal(res.status, 200, res.text);
  return res.body.account.id as string;
}

export function putAgreement(client: TestClient, accountId: string, body: unknown, idempotencyKey?: string): Promise<TestResponse> {
  return client.request('PUT', agreementUrl(accountId), { body, ...(idempotencyKey ? { idempotencyKey } : {}) });
}

export function ok(res: TestResponse, what: string): any {
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text}`);
  return res.body;
}
