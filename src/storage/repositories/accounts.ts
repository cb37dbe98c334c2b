import { sql, type Kysely, type Selectable } from 'kysely';
import type { Account, AccountStatus, Capabilities } from '../../modules/accounts/account.js';
import type { AccountsRepository, CredentialOwner, NewAccount } from '../../modules/accounts/accounts.repository.js';
import type { AccountsTable, Database } from '../schema.js';
import { queryTemplate, type Params } from '../query-template.js';

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    currencyCode: row.currencyCode,
    timezone: row.timezone,
    language: row.language,
    domain: row.domain,
    addressLineOne: row.addressLineOne,
    addressLineTwo: row.addressLineTwo,
    city: row.city,
    postalCode: row.postalCode,
    countryCode: row.countryCode,
    phone: row.phone,
    invoiceEmail: row.invoiceEmail,
    invoiceAttention: row.invoiceAttention,
    vat: row.vat,
    status: row.status as AccountStatus,
    capabilities: { moto: row.capMoto === 1, syncPayout: row.capSyncPayout === 1 },
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The credential lookup of every API request, compiled once (query-template.ts). */
const selectCredentialOwner = queryTemplate((db: Kysely<Database>, p: Params<{ secretHash: string; now: string }>) =>
  db
    .selectFrom('credentials')
    .innerJoin('accounts', 'accounts.id', 'credentials.accountId')
    .select(['credentials.id as credentialId', 'credentials.expiresAt', 'accounts.id as accountId', 'accounts.capMoto', 'accounts.capSyncPayout'])
    .where('credentials.secretHash', '=', p.secretHash)
    .where('credentials.revokedAt', 'is', null)
    .where((eb) => eb.or([eb('credentials.expiresAt', 'is', null), eb('credentials.expiresAt', '>', p.now)]))
    .where('accounts.status', '!=', 'CLOSED'),
);

export class KyselyAccountsRepository implements AccountsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(account: NewAccount): Promise<Account> {
    const row = await this.db
      .insertInto('accounts')
      .values({ ...account, status: 'PENDING', capMoto: 0, capSyncPayout: 0, updatedAt: account.createdAt })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAccount(row);
  }

  async findById(id: string): Promise<Account | null> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toAccount(row) : null;
  }

  async list(offset: number, limit: number): Promise<{ items: Account[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db.selectFrom('accounts').selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute(),
      this.db
        .selectFrom('accounts')
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toAccount), total: Number(count.n) };
  }

  async setStatus(id: string, status: AccountStatus, at: string): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({ status, updatedAt: at, ...(status === 'CLOSED' ? { deletedAt: at } : {}) })
      .where('id', '=', id)
      .execute();
  }

  async setCapabilities(id: string, capabilities: Partial<Capabilities>, at: string): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({
        updatedAt: at,
        ...(capabilities.moto === undefined ? {} : { capMoto: capabilities.moto ? 1 : 0 }),
        ...(capabilities.syncPayout === undefined ? {} : { capSyncPayout: capabilities.syncPayout ? 1 : 0 }),
      })
      .where('id', '=', id)
      .execute();
  }

  async insertCredential(credential: Parameters<AccountsRepository['insertCredential']>[0]): Promise<void> {
    await this.db
      .insertInto('credentials')
      .values({ ...credential, revokedAt: null })
      .execute();
  }

  async findCredentialOwner(secretHash: string, now: string): Promise<CredentialOwner | null> {
    const row = await selectCredentialOwner.executeTakeFirst(this.db, { secretHash, now });
    if (!row) return null;
    return {
      credentialId: row.credentialId,
      accountId: row.accountId,
      capabilities: { moto: row.capMoto === 1, syncPayout: row.capSyncPayout === 1 },
      expiresAt: row.expiresAt,
    };
  }

  async revokeCredentials(accountId: string, at: string): Promise<void> {
    await this.db.updateTable('credentials').set({ revokedAt: at }).where('accountId', '=', accountId).where('revokedAt', 'is', null).execute();
  }
}
