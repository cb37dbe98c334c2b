/** Shared by the 3-D Secure window suites (window-flow over HTTP, the Chromium one). */
import assert from 'node:assert/strict';
import { luhnValid } from '../../src/modules/payment-methods/card.js';
import type { ClearhausSetup } from '../acquirers/clearhaus-support.js';
import { agreementUrl, ok, putAgreement } from '../acquirers/support.js';
import type { TestMerchant } from '../support/harness.js';
import type { ThreeDSFake } from '../support/threeds-fake.js';

/** A 16-digit Luhn-valid PAN `<prefix><d>1<last4>`: the sandbox's case digits last, a prefix per test keeps the fakes' records apart. */
export function luhnPan(last4: string, prefix = '4000100511'): string {
  for (let d = 0; d <= 9; d++) {
    const pan = `${prefix}${d}1${last4}`;
    if (luhnValid(pan)) return pan;
  }
  throw new Error('no Luhn digit');
}

/** A Clearhaus merchant whose agreement names the fake 3DS Server's 3dsecure.io key. */
export async function merchantWith3DS(ch: ClearhausSetup, fake: ThreeDSFake): Promise<TestMerchant & { apiKey: string }> {
  const m = await ch.merchant();
  ok(
    await putAgreement(ch.t.operator, m.accountId, {
      acquirer: 'clearhaus',
      apiKey: m.apiKey,
      mcc: '5734',
      threeDSecure: { provider: '3dsecure.io', apiKey: fake.apiKeys[0] },
    }),
    'PUT with threeDSecure',
  );
  assert.equal((await ch.t.operator.get(agreementUrl(m.accountId))).status, 200);
  return m;
}
