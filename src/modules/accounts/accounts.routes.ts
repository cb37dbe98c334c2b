import { PageEnvelope, PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { EMPTY_BODY, defineRoute, type RouteDef } from '../../shared/route.js';
import type { Account } from './account.js';
import {
  AccessTokenBody,
  AccessTokenResponse,
  AccountParams,
  AccountResponse,
  ApiKeyBody,
  ApiKeyResponse,
  CapabilitiesBody,
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
      idempotent: true,
      schema: { body: CreateAccountBody, response: { 200: AccountResponse } },
      handler: async ({ body }) => wire(await accounts.create(body)),
    }),
    defineRoute({
      ...partner,
      method: 'GET',
      url: '/partner/accounts',
      summary: 'List merchant accounts',
      schema: { querystring: PageQuery, response: { 200: PageEnvelope(AccountResponse) } },
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
      schema: { params: AccountParams, response: { 200: AccountResponse } },
      handler: async ({ params }) => wire(await accounts.get(params.accountId)),
    }),
    defineRoute({
      ...partner,
      method: 'PATCH',
      url: '/partner/accounts/:accountId/activate',
      summary: 'Activate a merchant account',
      idempotent: true,
      schema: { params: AccountParams, response: { 200: AccountResponse } },
      handler: async ({ params }) => wire(await accounts.activate(params.accountId)),
    }),
    defineRoute({
      ...partner,
      method: 'DELETE',
      url: '/partner/accounts/:accountId',
      summary: 'Delete a merchant account; its credentials stop working at once',
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
      summary: 'Mint an access token (valid 8 h)',
      idempotent: true,
      secretResponse: true,
      schema: { params: AccountParams, body: AccessTokenBody, response: { 200: AccessTokenResponse } },
      handler: async ({ params, body }) => accounts.issueAccessToken(params.accountId, body.environment),
    }),
    defineRoute({
      ...partner,
      method: 'PATCH',
      url: '/partner/accounts/:accountId/capabilities',
      summary: 'Grant or withdraw MOTO and synchronous payouts',
      idempotent: true,
      schema: { params: AccountParams, body: CapabilitiesBody, response: { 200: AccountResponse } },
      handler: async ({ params, body }) => wire(await accounts.setCapabilities(params.accountId, body)),
    }),
    defineRoute({
      auth: 'merchant',
      tags: ['Management'],
      method: 'POST',
      url: '/management/api-keys',
      summary: 'Create an API key (shown once)',
      idempotent: true,
      secretResponse: true,
      schema: { body: ApiKeyBody, response: { 200: ApiKeyResponse } },
      handler: async ({ body, accountId }) => accounts.createApiKey(accountId, body.name),
    }),
  ];
}
