/**
 * First run: a sandbox merchant with an ONLINE point of sale (domain localhost) and a PHYSICAL one
 * with a terminal, and an API key. The key is kept sealed in the settings table so that every
 * later start prints the same one.
 */
import type { Runtime } from './runtime.js';

const SETTING = 'bootstrap.sandbox';

export interface SandboxAccount {
  accountId: string;
  apiKey: string;
  onlinePointOfSaleId: string;
  physicalPointOfSaleId: string;
  terminalId: string;
  created: boolean;
}

export async function ensureSandboxAccount(runtime: Runtime): Promise<SandboxAccount> {
  const { store, services, sealer } = runtime;
  const existing = await store.settings.get(SETTING);
  if (existing) {
    const saved = JSON.parse(sealer.open(existing)) as Omit<SandboxAccount, 'created'>;
    return { ...saved, created: false };
  }
  const account = await services.accounts.create({
    name: 'Sandbox merchant',
    email: 'sandbox@localhost',
    currencyCode: 'DKK',
    timezone: 'UTC',
    domain: 'localhost',
  });
  await services.accounts.activate(account.id);
  await services.accounts.setCapabilities(account.id, { moto: true, syncPayout: true });
  const { key } = await services.accounts.createApiKey(account.id, 'sandbox');
  const online = await services.pointsOfSale.create(account.id, {
    name: 'Sandbox web shop',
    domain: 'localhost',
    webhookAuthentication: 'Bearer sandbox-callback-secret',
    type: 'ONLINE',
  });
  const physical = await services.pointsOfSale.create(account.id, {
    name: 'Sandbox store',
    domain: 'localhost',
    webhookAuthentication: 'Bearer sandbox-callback-secret',
    type: 'PHYSICAL',
  });
  const terminal = await services.terminals.create(account.id, physical.id, { name: 'Till 1' });
  const saved = {
    accountId: account.id,
    apiKey: key,
    onlinePointOfSaleId: online.id,
    physicalPointOfSaleId: physical.id,
    terminalId: terminal.terminal.id,
  };
  await store.settings.set(SETTING, sealer.seal(JSON.stringify(saved)));
  return { ...saved, created: true };
}
