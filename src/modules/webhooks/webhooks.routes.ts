import { PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import {
  CreateWebhookBody,
  DeliveryList,
  deliveryWire,
  PausedWebhookResponse,
  WebhookList,
  WebhookParams,
  webhookRecord,
  WebhookDetailResponse,
  webhookDetailWire,
  WebhookResponse,
  webhookWire,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

export function webhooksRoutes(service: WebhooksService): RouteDef[] {
  const common = { auth: 'merchant' as const, tags: ['Webhooks'] };
  return [
    defineRoute({
      ...common,
      method: 'POST',
      url: '/webhooks',
      summary: 'Register a webhook',
      description:
        'Subscribes a URL to system-wide events of the merchant — for systems other than the one that made the payment (an ERP, ' +
        "a CRM); payment outcomes themselves go to each request's `notificationUrl`. Each delivery POSTs `{event, data}` with " +
        '`Authorization: <secret>` and Standard Webhooks signature headers (the `signingSecret` in the answer). `url` must be on an ' +
        'approved domain; at most 10 active webhooks per merchant (422). A webhook failing more than half of its deliveries over 7 days ' +
        '(at least 20) is paused with `ERROR_RATE_TOO_HIGH`.',
      errorExamples: {
        422: [
          fieldErrorExample('Ten webhooks are active already', 'webhooks', 'max:10', 'a merchant has at most 10 active webhooks; delete or pause one first'),
        ],
      },
      idempotent: true,
      // The answer carries the signing secret: a replay's stored copy is sealed.
      secretResponse: true,
      schema: { body: CreateWebhookBody, response: { 200: WebhookDetailResponse } },
      handler: async ({ body, accountId }) => webhookDetailWire(await service.create(accountId, body)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/webhooks',
      summary: 'List webhooks',
      description:
        "The merchant's webhooks, paused ones included, as bare records in the page envelope (no signing secret: read one webhook " +
        'for it). Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { querystring: PageQuery, response: { 200: WebhookList } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(webhookRecord), page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/webhooks/:webhookId',
      summary: 'Get a webhook',
      description: 'One webhook with its events, pause state and the `signingSecret` that signs its deliveries.',
      schema: { params: WebhookParams, response: { 200: WebhookDetailResponse } },
      handler: async ({ params, accountId }) => webhookDetailWire(await service.detail(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/webhooks/:webhookId/signing-secret',
      summary: 'Rotate the signing secret of a webhook',
      description:
        "Replaces the webhook's `signingSecret` and answers the webhook with the new one. For 24 hours the old secret keeps signing " +
        'too (a second signature in `webhook-signature`), so the receiver can switch without losing a delivery.',
      idempotent: true,
      secretResponse: true,
      schema: { params: WebhookParams, response: { 200: WebhookDetailResponse } },
      handler: async ({ params, accountId }) => webhookDetailWire(await service.rotateSigningSecret(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/webhooks/:webhookId',
      summary: 'Delete a webhook',
      description: 'Deletes the webhook: nothing more is delivered to its URL, and its pending deliveries stop at once. Answers 200 with an empty body.',
      idempotent: true,
      schema: { params: WebhookParams },
      handler: async ({ params, accountId }) => {
        await service.delete(accountId, params.webhookId);
        return EMPTY_BODY;
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/webhooks/:webhookId/pause',
      summary: 'Pause a webhook',
      description:
        'Stops deliveries to the webhook (`pauseReason` `PAUSED_BY_MERCHANT`) until it is resumed; it stays listed and no longer ' +
        'counts against the 10 active webhooks. Answers the webhook.',
      idempotent: true,
      schema: { params: WebhookParams, response: { 200: PausedWebhookResponse } },
      handler: async ({ params, accountId }) => webhookWire(await service.pause(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/webhooks/:webhookId/resume',
      summary: 'Resume a webhook',
      description:
        'Resumes deliveries to a paused webhook (paused by the merchant or for `ERROR_RATE_TOO_HIGH`): `pausedAt` and `pauseReason` ' +
        'become null. It counts against the 10 active webhooks again (422 when that is full). Answers the webhook.',
      errorExamples: {
        422: [
          fieldErrorExample('Ten webhooks are active already', 'webhooks', 'max:10', 'a merchant has at most 10 active webhooks; delete or pause one first'),
        ],
      },
      idempotent: true,
      schema: { params: WebhookParams, response: { 200: WebhookResponse } },
      handler: async ({ params, accountId }) => webhookWire(await service.resume(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/webhooks/:webhookId/deliveries',
      summary: 'List the deliveries of a webhook',
      description:
        'The deliveries of one webhook, newest first, in the page envelope, each with every attempt: HTTP status, error, duration. ' +
        '`state` is PENDING while retries remain (`nextAttemptAt`), then DELIVERED, FAILED, or CANCELLED (the webhook was deleted). ' +
        'Rate limited as a list endpoint.',
      rateLimit: 'list',
      schema: { params: WebhookParams, querystring: PageQuery, response: { 200: DeliveryList } },
      handler: async ({ params, query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.deliveries(accountId, params.webhookId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(deliveryWire), page.total);
      },
    }),
  ];
}
