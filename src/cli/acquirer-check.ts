/**
 * `payments acquirer check --account <id>`: asks the account's acquirer whether the agreement works
 * (Clearhaus `GET /account` with the merchant's API key) and prints what it knows of the merchant,
 * or the exact error. The API key is opened from the vault for the call and never printed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { ClearhausAcquirer } from '../connectors/clearhaus/connector.js';
import { loadSigningKey } from '../connectors/clearhaus/signing.js';
import { SecretBox } from '../security/secret-box.js';
import type { Store } from '../storage/store.js';

export interface CheckIo {
  out(line: string): void;
  err(line: string): void;
}

export const ACQUIRER_USAGE = 'payments acquirer check --account <account id>';

/** The vault key of the deployment, read, never created: a check on a fresh data directory has nothing to open. */
function vaultOf(config: Config): SecretBox {
  if (config.vaultKey) return new SecretBox(config.vaultKey);
  const file = path.join(config.dataDir, 'vault.key');
  if (!fs.existsSync(file)) throw new Error(`no vault key: PAYMENTS_VAULT_KEY is unset and ${file} does not exist`);
  return new SecretBox(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex'));
}

export async function acquirerCheck(config: Config, store: Store, args: string[], io: CheckIo): Promise<number> {
  const at = args.indexOf('--account');
  const accountId = at >= 0 ? args[at + 1] : undefined;
  if (args[0] !== 'check' || !accountId) {
    io.err(`usage: ${ACQUIRER_USAGE}`);
    return 2;
  }
  const agreement = await store.acquirerAgreements.current(accountId);
  if (!agreement) {
    io.err(`account ${accountId} has no acquirer agreement (PUT /public/api/v1/partner/accounts/${accountId}/acquirer-agreement)`);
    return 1;
  }
  if (agreement.acquirer !== 'clearhaus' || !agreement.apiKeySealed) {
    io.out(`acquirer   ${agreement.acquirer} (the built-in simulator: nothing to check)`);
    io.out(`mcc        ${agreement.mcc}`);
    return 0;
  }
  if (!config.clearhaus) {
    io.err('Clearhaus is not configured: set CLEARHAUS_SIGNING_KEY_ID and CLEARHAUS_SIGNING_KEY_FILE (and CLEARHAUS_URL for another host)');
    return 1;
  }
  const connector = new ClearhausAcquirer({
    baseUrl: config.clearhaus.url,
    signingKeyId: config.clearhaus.signingKeyId,
    signingKey: loadSigningKey(config.clearhaus.signingKeyFile),
    timeoutMs: config.clearhaus.timeoutMs,
    maxInFlight: 1,
  });
  try {
    const found = await connector.account(vaultOf(config).open(agreement.apiKeySealed));
    if (!found.ok) {
      io.err(`clearhaus ${config.clearhaus.url}: ${found.message} (${found.error})`);
      return 1;
    }
    const a = found.account;
    io.out(`acquirer     clearhaus ${config.clearhaus.url}`);
    io.out(`merchant id  ${a.merchantId}`);
    io.out(`name         ${a.name}`);
    io.out(`descriptor   ${a.descriptor}`);
    io.out(`country      ${a.country}`);
    io.out(`currency     ${a.currency ?? '(not given)'}`);
    io.out(`mcc          ${a.mcc}${a.mcc === agreement.mcc ? '' : `  (the agreement says ${agreement.mcc})`}`);
    return 0;
  } finally {
    await connector.close();
  }
}
