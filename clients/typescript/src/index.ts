/** @payments-service/client — typed client for the Payments Service Interface v1. */
export { createPaymentsClient, type PaymentsClient, type PaymentsClientOptions } from './client.js';
export { isApiError, PaymentsApiError, type ApiError } from './errors.js';
export { listItems, listPages, type ListInit, type ListItem, type ListPage, type ListPath } from './pagination.js';
export { newIdempotencyKey, paymentsFetch, retryAfterSeconds, type FetchFn, type RetryOptions } from './retry.js';
export type { components, paths } from './generated/openapi.js';
export { DeliveryVerificationError, verifyDelivery, type VerifyDeliveryOptions } from './verify-delivery.js';
