import { defineRoute, type RouteDef } from '../../shared/route.js';
import type { AcquirerAgreementView } from './acquirer-agreement.js';
import { AccountParams, AcquirerAgreementResponse, PutAcquirerAgreementBody } from './acquirer-agreements.schemas.js';
import type { AcquirerAgreementsService } from './acquirer-agreements.service.js';

const wire = (acquirerAgreement: AcquirerAgreementView) => ({ acquirerAgreement });

const URL = '/partner/accounts/:accountId/acquirer-agreement';

export function acquirerAgreementsRoutes(agreements: AcquirerAgreementsService): RouteDef[] {
  const partner = { auth: 'operator' as const, tags: ['Partner'] };
  return [
    defineRoute({
      ...partner,
      method: 'PUT',
      url: URL,
      summary: 'Set the acquirer agreement of an account',
      description:
        'Replaces the account\'s acquirer agreement (INTERFACE §12.1): `{acquirer: "sandbox"}` (optional `mcc`, default 5999, and ' +
        '`textOnStatement`), or `{acquirer: "clearhaus", apiKey, mcc, textOnStatement?}`. The API key is sealed at rest and never ' +
        'returned, logged or shown. `clearhaus` is refused (422 on `acquirer`) while the deployment has no Clearhaus signing key. ' +
        'Payments already authorized keep the agreement that authorized them for their captures, refunds and voids. ' +
        'Another process of the deployment may use the previous agreement for up to one second.',
      idempotent: true,
      schema: { params: AccountParams, body: PutAcquirerAgreementBody, response: { 200: AcquirerAgreementResponse } },
      handler: async ({ params, body }) => wire(await agreements.put(params.accountId, body)),
    }),
    defineRoute({
      ...partner,
      method: 'GET',
      url: URL,
      summary: 'Get the acquirer agreement of an account',
      description: "The account's current acquirer agreement, without its API key; 404 `NOT_FOUND` when it has none.",
      schema: { params: AccountParams, response: { 200: AcquirerAgreementResponse } },
      handler: async ({ params }) => wire(await agreements.get(params.accountId)),
    }),
    defineRoute({
      ...partner,
      method: 'DELETE',
      url: URL,
      summary: 'Remove the acquirer agreement of an account',
      description:
        "Removes the account's acquirer agreement and answers with the removed record (404 `NOT_FOUND` when it has none). " +
        "Without an agreement the account's card payments use the sandbox while `PAYMENTS_SANDBOX=1`, and fail " +
        '`MISSING_ACQUIRER_AGREEMENT` otherwise; payments it authorized keep it for their later operations.',
      idempotent: true,
      schema: { params: AccountParams, response: { 200: AcquirerAgreementResponse } },
      handler: async ({ params }) => wire(await agreements.remove(params.accountId)),
    }),
  ];
}
