import { PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { EMPTY_BODY, defineRoute, errorExample, type RouteDef } from '../../shared/route.js';
import type { Account } from './account.js';
import {
  AccessTokenBody,
  AccessTokenResponse,
  AccountList,
  AccountParams,
  AccountResponse,
  ActivatedAccountResponse,
  ApiKeyBody,
  ApiKeyResponse,
  CapabilitiesBody,
  CapabilitiesResponse,
  CreateAccountBody,
} from './accounts.schemas.js';
import type { AccountsService } from './accounts.service.js';

const wire = (account: Account) => {
  const { domain: _domain, language: _language, updatedAt: _updatedAt, ...rest } = account;
  return { account: rest };
};

export function accountsRoutes(accounts: AccountsService): RouteDef[] {
  const partner = { auth: 'operator' as const, tags: ['Partner'] };
  return [
    defineRoute({
      ...partner,
      method: 'POST',
      url: '/partner/accounts',
      summary: 'Create a merchant account',
      description:
        'Partner tier (operator key). Creates a merchant account in status `PENDING`, with its settlement `currencyCode`, ' +
        '`timezone` and the first approved `domain`. Activate it with `PATCH .../activate`, then mint an access token for it; ' +
        'capabilities (MOTO, synchronous payouts) start off.',
      idempotent: true,
      schema: { body: CreateAccountBody, response: { 200: AccountResponse } },
      handler: async ({ body }) => wire(await accounts.create(body)),
    }),
    defineRoute({
      ...partner,
      method: 'GET',
      url: '/partner/accounts',
      summary: 'List merchant accounts',
      description: 'Partner tier (operator key). Every merchant account of the deployment, in the page envelope.',
      schema: { querystring: PageQuery, response: { 200: AccountList } },
      handler: async ({ query, baseUrl, path, rawQuery }) => {
        const page = await accounts.list(pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(wire), page.total);
      },
    }),
    defineRoute({
      ...partner,
      method: 'GET',
      url: '/partner/accounts/:accountId',
      summary: 'Get a merchant account',
      description: 'Partner tier (operator key). One merchant account with its `status` (PENDING, ACTIVE, CLOSED) and `capabilities`.',
      schema: { params: AccountParams, response: { 200: AccountResponse } },
      handler: async ({ params }) => wire(await accounts.get(params.accountId)),
    }),
    defineRoute({
      ...partner,
      method: 'PATCH',
      url: '/partner/accounts/:accountId/activate',
      summary: 'Activate a merchant account',
      description: 'Partner tier (operator key). Moves a PENDING account to `ACTIVE`. A deleted (CLOSED) account cannot be activated: 409 ' + '`CONFLICT`.',
      errorExamples: { 409: [errorExample('The account was deleted', 'CONFLICT', 'An account in status CLOSED cannot be activated.')] },
      idempotent: true,
      schema: { params: AccountParams, response: { 200: ActivatedAccountResponse } },
      handler: async ({ params }) => wire(await accounts.activate(params.accountId)),
    }),
    defineRoute({
      ...partner,
      method: 'DELETE',
      url: '/partner/accounts/:accountId',
      summary: 'Delete a merchant account',
      description:
        'Partner tier (operator key). Closes the account (status `CLOSED`): its access tokens and API keys stop working at once ' +
        '(401). Answers 200 with an empty body.',
      errorExamples: { 409: [errorExample('The account was deleted already', 'CONFLICT', 'An account in status CLOSED cannot be deleted.')] },
      idempotent: true,
      schema: { params: AccountParams },
      handler: async ({ params }) => {
        await accounts.close(params.accountId);
        return EMPTY_BODY;
      },
    }),
    defineRoute({
      ...partner,
      method: 'POST',
      url: '/partner/accounts/:accountId/access-token',
      summary: 'Create an access token',
      description:
        'Partner tier (operator key). Mints a bearer token for the merchant tier of the account, valid 8 hours on the service ' +
        'clock (`expiresAt`). For long-lived server credentials, create an API key with it (`POST /management/api-keys`).',
      errorExamples: { 409: [errorExample('The account was deleted', 'CONFLICT', 'A deleted account cannot get access tokens.')] },
      idempotent: true,
      secretResponse: true,
      schema: { params: AccountParams, body: AccessTokenBody, response: { 200: AccessTokenResponse } },
      handler: async ({ params, body }) => accounts.issueAccessToken(params.accountId, body.environment),
    }),
    defineRoute({
      ...partner,
      method: 'PATCH',
      url: '/partner/accounts/:accountId/capabilities',
      summary: 'Set the capabilities of an account',
      description:
        "Partner tier (operator key). Grants or withdraws `moto` (needs the merchant's PCI-DSS documentation) and `syncPayout` " +
        '(needs explicit approval); a field left out keeps its value. Without the capability, `POST /moto` and `POST /payout-sync` ' +
        'answer 403 `CAPABILITY_NOT_ENABLED`. Answers the account.',
      errorExamples: { 409: [errorExample('The account was deleted', 'CONFLICT', 'A deleted account cannot be changed.')] },
      idempotent: true,
      schema: { params: AccountParams, body: CapabilitiesBody, response: { 200: CapabilitiesResponse } },
      handler: async ({ params, body }) => wire(await accounts.setCapabilities(params.accountId, body)),
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Management'],
      method: 'POST',
      url: '/management/api-keys',
      summary: 'Create an API key',
      description:
        'Creates a long-lived merchant credential (`sk_…`) for server-to-server calls, used as `Authorization: Bearer <key>`. The ' +
        'key is shown once in this answer and stored only as a hash: keep it safe.',
      idempotent: true,
      secretResponse: true,
      schema: { body: ApiKeyBody, response: { 200: ApiKeyResponse } },
      handler: async ({ body, accountId }) => accounts.createApiKey(accountId, body.name),
    }),
  ];
}
