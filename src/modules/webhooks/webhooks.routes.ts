import { PageEnvelope, PageQuery, pageEnvelope, pageOffset } from '../../shared/pagination.js';
import { defineRoute, EMPTY_BODY, type RouteDef } from '../../shared/route.js';
import {
  CreateWebhookBody,
  DeliveryResponse,
  deliveryWire,
  WebhookParams,
  WebhookRecord,
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
      summary: "List the merchant's webhooks (paused ones included)",
      rateLimit: 'list',
      schema: { querystring: PageQuery, response: { 200: PageEnvelope(WebhookRecord) } },
      handler: async ({ query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.list(accountId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(webhookRecord), page.total);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/webhooks/:webhookId',
      summary: 'Get a webhook, with the secret that signs its deliveries',
      schema: { params: WebhookParams, response: { 200: WebhookDetailResponse } },
      handler: async ({ params, accountId }) => webhookDetailWire(await service.detail(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/webhooks/:webhookId/signing-secret',
      summary: 'Rotate the signing secret; the old one keeps signing (a second signature) for 24 hours',
      idempotent: true,
      secretResponse: true,
      schema: { params: WebhookParams, response: { 200: WebhookDetailResponse } },
      handler: async ({ params, accountId }) => webhookDetailWire(await service.rotateSigningSecret(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      url: '/webhooks/:webhookId',
      summary: 'Delete a webhook; its pending deliveries stop at once',
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
      summary: 'Pause a webhook (PAUSED_BY_MERCHANT)',
      idempotent: true,
      schema: { params: WebhookParams, response: { 200: WebhookResponse } },
      handler: async ({ params, accountId }) => webhookWire(await service.pause(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/webhooks/:webhookId/resume',
      summary: 'Resume a paused webhook',
      idempotent: true,
      schema: { params: WebhookParams, response: { 200: WebhookResponse } },
      handler: async ({ params, accountId }) => webhookWire(await service.resume(accountId, params.webhookId)),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/webhooks/:webhookId/deliveries',
      summary: "A webhook's deliveries with every attempt, newest first",
      rateLimit: 'list',
      schema: { params: WebhookParams, querystring: PageQuery, response: { 200: PageEnvelope(DeliveryResponse) } },
      handler: async ({ params, query, accountId, baseUrl, path, rawQuery }) => {
        const page = await service.deliveries(accountId, params.webhookId, pageOffset(query.page, query.perPage), query.perPage);
        return pageEnvelope({ ...query, url: baseUrl + path, query: rawQuery }, page.items.map(deliveryWire), page.total);
      },
    }),
  ];
}
