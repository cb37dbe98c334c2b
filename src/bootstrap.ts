/**
 * First run: a sandbox merchant with an ONLINE point of sale (domain localhost) and a PHYSICAL one
 * with a terminal, and an API key. The key is kept sealed in the settings table so that every
 * later start prints the same one. The callback credentials of its points of sale (the
 * Authorization value and the signing secrets, which a rotation changes) are read at every start.
 */
import type { Runtime } from './runtime.js';

const SETTING = 'bootstrap.sandbox';

/** What the settings table keeps of the sandbox merchant. */
interface SavedSandboxAccount {
  accountId: string;
  apiKey: string;
  onlinePointOfSaleId: string;
  physicalPointOfSaleId: string;
  terminalId: string;
}

export interface SandboxAccount extends SavedSandboxAccount {
  created: boolean;
  /** The Authorization header value of the callbacks of both points of sale. */
  webhookAuthentication: string;
  /** The secrets that sign the callbacks of each point of sale (INTERFACE §11.10). */
  onlineSigningSecret: string;
  physicalSigningSecret: string;
}

export async function ensureSandboxAccount(runtime: Runtime): Promise<SandboxAccount> {
  const saved = await ensureSavedSandboxAccount(runtime);
  const [online, physical] = await Promise.all([
    runtime.services.pointsOfSale.detail(saved.accountId, saved.onlinePointOfSaleId),
    runtime.services.pointsOfSale.detail(saved.accountId, saved.physicalPointOfSaleId),
  ]);
  return {
    ...saved,
    webhookAuthentication: online.webhookAuthentication,
    onlineSigningSecret: online.signingSecret,
    physicalSigningSecret: physical.signingSecret,
  };
}

async function ensureSavedSandboxAccount(runtime: Runtime): Promise<SavedSandboxAccount & { created: boolean }> {
  const { store, services, sealer } = runtime;
  const saved = async (): Promise<(SavedSandboxAccount & { created: boolean }) | null> => {
    const existing = await store.settings.get(SETTING);
    return existing ? { ...(JSON.parse(sealer.open(existing)) as SavedSandboxAccount), created: false } : null;
  };
  const known = await saved();
  if (known) return known;
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
  const mine: SavedSandboxAccount = {
    accountId: account.id,
    apiKey: key,
    onlinePointOfSaleId: online.id,
    physicalPointOfSaleId: physical.id,
    terminalId: terminal.terminal.id,
  };
  if (await store.settings.setIfAbsent(SETTING, sealer.seal(JSON.stringify(mine)))) return { ...mine, created: true };
  // Another process of the deployment started at the same moment and saved its merchant first: use that one.
  await services.accounts.close(account.id);
  return (await saved())!;
}
