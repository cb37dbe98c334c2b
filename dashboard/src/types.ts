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

/** GET /transactions/{id} `aggregates` (minor units): sums of the SUCCESS operations; `remaining` = authorized − captured − voided. */
export interface Aggregates {
  authorized: number;
  captured: number;
  refunded: number;
  voided: number;
  remaining: number;
  paidOut: number;
}

export interface Operation {
  id: string;
  type: string;
  state: string;
  amount: number;
  errorCode: string | null;
  createdAt: string;
  finalizedAt: string | null;
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

/** The page envelope of INTERFACE §6 (subscriptions, agreements, webhooks, links, points of sale…). */
export interface PageEnvelope<T> {
  page: number;
  perPage: number;
  lastPage: number;
  total: number;
  from: number | null;
  to: number | null;
  nextPage: number | null;
  previousPage: number | null;
  items: T[];
}

export interface Interval {
  period: string;
  frequency: number;
}

export interface Subscription {
  id: string;
  paymentMethodId: string;
  currency: string;
  customerId: string | null;
  pointOfSaleId: string;
  reference: string | null;
  description: string | null;
  state: string;
  statusReason: string | null;
  type: string;
  expiryDate: string | null;
  interval: Interval | null;
  createdAt: string;
}

export interface PaymentMethod {
  id: string;
  type: string;
  subType: string | null;
  expiry: string | null;
  displayText: string | null;
  holderName: string | null;
  customerId: string | null;
  createdAt: string;
}

export interface BillingAgreement {
  id: string;
  billingPlanId: string;
  subscriptionId: string | null;
  sessionId: string | null;
  customerId: string | null;
  nextChargeAt: string | null;
  lastChargeAt: string | null;
  desiredDate: number | null;
  state: string;
  stateChangedAt: string;
  reference: string | null;
  createdAt: string;
}

export interface BillingPlan {
  id: string;
  name: string;
  amount: number;
  currency: string;
  interval: Interval;
}

export interface BillingCharge {
  id: string;
  state: string;
  transactionId: string | null;
  attempts: number;
  deadlineAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

export interface PaymentLink {
  id: string;
  sessionId: string;
  url: string;
  state: string;
  amount: number;
  currency: string;
  reference: string | null;
  pointOfSaleId: string;
  customerId: string | null;
  transactionId: string | null;
  expiresAt: string;
  createdAt: string;
}

export interface MultiLinkRecord {
  id: string;
  pointOfSaleId: string;
  state: string;
  amount: number;
  currency: string;
  dynamicAmount: boolean | null;
  createdAt: string;
}

export interface MultiLink {
  multiLink: MultiLinkRecord;
  url: string;
  qrUrl: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  pausedAt: string | null;
  pauseReason: string | null;
  createdAt: string;
}

export interface DeliveryAttempt {
  attempt: number;
  attemptedAt: string;
  success: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

export interface Delivery {
  id: string;
  event: string;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  createdAt: string;
  attemptLog: DeliveryAttempt[];
}

export interface Adjustment {
  type: string;
  amount: string;
  description: string;
}

export interface SettlementTransfer {
  id: string;
  acquirer: string;
  settlementName: string;
  postingDate: string;
  netAmount: string;
  currency: string;
  acquirerReference: string;
  adjustments: Adjustment[];
  adjustmentSums: Adjustment[];
  createdAt: string;
}

export interface SettlementTransaction {
  id: string;
  transactionId: string;
  merchantReference: string | null;
  acquirerReference: string | null;
  postingDate: string;
  settlementNetAmount: string;
  settlementCurrency: string;
  adjustments: Adjustment[];
  createdAt: string;
}

export interface PointOfSale {
  id: string;
  name: string;
  type: string;
  domain: string;
  descriptor: string | null;
  createdAt: string;
  updatedAt: string;
  /** GET /management/point-of-sales/{id} only: the Authorization value its callbacks carry, and the secret that signs them (whsec_…). */
  webhookAuthentication?: string;
  signingSecret?: string;
}

export interface HostedConfiguration {
  instantCapture: string;
  scaMode: string;
  timeout: number;
  maxAttempts: number;
  notificationUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
}

export interface Terminal {
  id: string;
  pointOfSaleId: string;
  deviceId: string | null;
  externalId: string | null;
  name: string | null;
  fallback: boolean;
  createdAt: string;
}

export interface Device {
  id: string;
  description: string;
  createdAt: string;
}
