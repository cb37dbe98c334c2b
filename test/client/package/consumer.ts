/**
 * Type-checked (never run) twice: by the repository's `tsc` against the client's source, and by
 * test/client/package.test.ts against the `.d.ts` of the packed client installed outside the
 * repository. Each `@ts-expect-error` is a mistake the types must refuse: an unused one fails tsc.
 */
import {
  createPaymentsClient,
  DeliveryVerificationError,
  isApiError,
  PaymentsApiError,
  verifyDelivery,
  type ApiError,
  type components,
  type ListItem,
  type paths,
} from '@payments-service/client';

const api = createPaymentsClient({ baseUrl: 'http://127.0.0.1:8080', token: 'sk_test', retry: { maxRetries: 2 } });
const V1 = '/public/api/v1';

export async function motoCaptureRefund(pointOfSaleId: string): Promise<number> {
  const moto = await api.POST(`${V1}/moto`, {
    body: {
      transaction: { pointOfSaleId, amount: 2500, currency: 'DKK', instantCapture: 'OFF' },
      card: { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123' },
    },
    headers: { 'Idempotency-Key': 'moto-order-1' },
  });
  if (moto.error) {
    const error: ApiError = moto.error;
    throw new PaymentsApiError(moto.response.status, error);
  }
  const transactionId: string = moto.data.transaction.id;
  // @ts-expect-error a transaction id is a string, not a number
  const wrongId: number = moto.data.transaction.id;

  const capture = await api.POST(`${V1}/transactions/{transactionId}/capture`, { params: { path: { transactionId } }, body: { amount: 2500 } });
  if (capture.data && !capture.data.success) return 0;
  // @ts-expect-error amounts are minor units as numbers
  await api.POST(`${V1}/transactions/{transactionId}/refund`, { params: { path: { transactionId } }, body: { amount: '10.00' } });
  // @ts-expect-error a capture needs the transaction id in the path
  await api.POST(`${V1}/transactions/{transactionId}/capture`, { body: { amount: 2500 } });
  // @ts-expect-error a route the service does not have
  await api.GET(`${V1}/payments`);

  const read = await api.GET(`${V1}/transactions/{transactionId}`, { params: { path: { transactionId } } });
  if (isApiError(read.error)) return -1;
  return (read.data?.aggregates.captured ?? 0) + Number(wrongId);
}

export async function everyWebhookUrl(): Promise<string[]> {
  const urls: string[] = [];
  for await (const webhook of api.items(`${V1}/webhooks`)) {
    const item: ListItem<'/public/api/v1/webhooks'> = webhook;
    urls.push(item.url);
  }
  return urls;
}

export type MitBody = paths['/public/api/v1/mit']['post']['requestBody']['content']['application/json'];
export type Schemas = keyof components['schemas'];

export async function unknownFieldsAreRefused(subscriptionId: string): Promise<void> {
  await api.POST(`${V1}/mit`, {
    // @ts-expect-error `currancy` is not a field of a MIT (a misspelt `currency`)
    body: { subscriptionId, amount: 1000, currancy: 'DKK', notificationUrl: 'https://shop.example/callbacks' },
  });
  await api.POST(`${V1}/moto`, {
    body: {
      // @ts-expect-error nested objects too: `amuont` is not a field of the MOTO's transaction
      transaction: { pointOfSaleId: 'pos', amount: 1, amuont: 1, currency: 'DKK' },
      card: { number: '4111111111111111', expiryMonth: 12, expiryYear: 2030, cvc: '123' },
    },
  });
  // @ts-expect-error query parameters too: `perpage` is not `perPage`
  await api.GET(`${V1}/transactions`, { params: { query: { perpage: 10 } } });
  for await (const _ of api.items(`${V1}/transactions`, {
    // @ts-expect-error and the list iterators' queries
    params: { query: { stat: 'SUCCESS' } },
  }));
}

/** A shop's callback handler: the raw body text, the headers (Node's IncomingHttpHeaders or a Fetch Headers), the secret. */
export function authentic(rawBody: string, headers: Record<string, string | string[] | undefined> | Headers, secret: string): boolean {
  try {
    verifyDelivery(rawBody, headers, secret, { toleranceSeconds: 300 });
  } catch (err) {
    if (err instanceof DeliveryVerificationError) return false;
    throw err;
  }
  // @ts-expect-error the body is the raw text as received, not the parsed JSON
  verifyDelivery({ transactionId: 'x' }, headers, secret);
  return true;
}
