export interface ExternalStatusCodes {
  terminal: string | null;
  acquirer: string | null;
  network: string | null;
  sca: string | null;
}

export interface Transaction {
  id: string;
  state: string;
  type: string;
  amount: number;
  currency: string;
  reference: string | null;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  paymentMethodType: string | null;
  paymentMethodSubType: string | null;
  customerId: string | null;
  pointOfSaleId: string;
  createdAt: string;
  finalizedAt: string | null;
  [field: string]: unknown;
}

export interface CursorPage<T> {
  currentOffset: string;
  nextOffset: string | null;
  perPage: number;
  hasMore: boolean;
  items: T[];
}

export interface TimelineEntry {
  id: string;
  kind: string;
  at: string;
  state: string | null;
  amount: number | null;
  currency: string | null;
  operationId: string | null;
  operationType: string | null;
  errorCode: string | null;
  externalStatusCodes: ExternalStatusCodes | null;
  acquirerReference: string | null;
  event: string | null;
  url: string | null;
  webhookId: string | null;
  deliveryId: string | null;
  attempt: number | null;
  statusCode: number | null;
  durationMs: number | null;
  excerpt: string | null;
}
