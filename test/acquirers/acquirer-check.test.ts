/**
 * `payments acquirer check --account <id>` (issue 44): Clearhaus GET /account with the agreement's
 * API key, opened from the vault; it prints the merchant's data or the exact error, never the key.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { CLEARHAUS_DOCS_KEY } from '../support/clearhaus-fake.js';
import { availableStores, TEST_DATABASE_URL } from '../support/stores.js';
import { type ClearhausSetup, startClearhaus } from './clearhaus-support.js';
import { createAccount, newApiKey, ok, putAgreement } from './support.js';

async function cli(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(...l.split('\n')) });
  return { code, out, err, all: [...out, ...err].join('\n') };
}

for (const kind of await availableStores()) {
  describe(`payments acquirer check (${kind})`, () => {
    let s: ClearhausSetup;
    let env: Record<string, string>;
    let keyFile: string;
    before(async () => {
      s = await startClearhaus(kind);
      keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ch-key-')), 'signing.pem');
      fs.writeFileSync(keyFile, CLEARHAUS_DOCS_KEY.privateKeyPem, { mode: 0o600 });
      const db = s.t.database;
      env = {
        ...(db.config.kind === 'sqlite'
          ? { DATABASE_URL: db.config.path }
          : {
              DATABASE_URL: `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${db.schema}`)}`,
              PAYMENTS_DATA_DIR: db.dataDir,
            }),
        CLEARHAUS_SIGNING_KEY_ID: CLEARHAUS_DOCS_KEY.id,
        CLEARHAUS_SIGNING_KEY_FILE: keyFile,
        CLEARHAUS_URL: s.fake.url,
      };
    });
    after(() => s.close());

    test('prints the merchant id, descriptor, currency and MCC Clearhaus knows, never the key', async () => {
      const m = await s.merchant();
      const res = await cli(['acquirer', 'check', '--account', m.accountId], env);
      assert.equal(res.code, 0, res.all);
      assert.match(res.all, /merchant id\s+0?[0-9]{14,15}/);
      assert.match(res.all, /descriptor\s+\S/);
      assert.match(res.all, /currency\s+[A-Z]{3}/);
      assert.match(res.all, /mcc\s+5734/);
      assert.ok(!res.all.includes(m.apiKey), 'the API key is never printed');
      assert.equal(s.fake.requestsTo('/account', 'GET').length, 1);
    });

    test('a key Clearhaus refuses: the exact error, exit 1', async () => {
      const accountId = await createAccount(s.t);
      const apiKey = newApiKey();
      ok(await putAgreement(s.t.operator, accountId, { acquirer: 'clearhaus', apiKey, mcc: '5734' }), 'PUT');
      const res = await cli(['acquirer', 'check', '--account', accountId], env);
      assert.equal(res.code, 1);
      assert.match(res.all, /refused the API key \(HTTP 401\)/);
      assert.ok(!res.all.includes(apiKey));
    });

    test('no agreement, a sandbox agreement, a missing --account', async () => {
      const accountId = await createAccount(s.t);
      const none = await cli(['acquirer', 'check', '--account', accountId], env);
      assert.equal(none.code, 1);
      assert.match(none.all, /has no acquirer agreement/);
      ok(await putAgreement(s.t.operator, accountId, { acquirer: 'sandbox' }), 'PUT sandbox');
      const sandbox = await cli(['acquirer', 'check', '--account', accountId], env);
      assert.equal(sandbox.code, 0);
      assert.match(sandbox.all, /sandbox/);
      assert.equal((await cli(['acquirer', 'check'], env)).code, 2);
    });
  });
}
