/**
 * Row types of every table, as Kysely sees them through CamelCasePlugin (snake_case in SQL,
 * camelCase here). Timestamps are ISO strings on both dialects (see connect.ts), money columns
 * are numbers (integers, minor units; PostgreSQL int8 is parsed to a safe integer), JSON is text.
 */
import type { ColumnType, Generated } from 'kysely';

export interface SettingsTable {
  key: string;
  value: string;
}

export interface AccountsTable {
  id: string;
  name: string;
  email: string;
  currencyCode: string;
  timezone: string;
  language: string | null;
  domain: string;
  addressLineOne: string | null;
  addressLineTwo: string | null;
  city: string | null;
  postalCode: string | null;
  countryCode: string | null;
  phone: string | null;
  invoiceEmail: string | null;
  invoiceAttention: string | null;
  vat: string | null;
  status: string;
  capMoto: number;
  capSyncPayout: number;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export interface CredentialsTable {
  id: string;
  accountId: string;
  kind: string;
  name: string | null;
  secretHash: string;
  environment: string;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export interface PointsOfSaleTable {
  id: string;
  accountId: string;
  name: string;
  type: string;
  domain: string;
  descriptor: string | null;
  webhookAuthenticationSealed: string;
  hostedConfiguration: string;
  createdAt: string;
  updatedAt: string;
  /** Migration 028: null only in rows written before it (given a secret on first need). */
  signingSecretSealed: string | null;
  previousSigningSecretSealed: string | null;
  previousSigningSecretExpiresAt: string | null;
}

export interface TerminalsTable {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  deviceId: string | null;
  externalId: string | null;
  name: string | null;
  fallback: number;
  createdAt: string;
}

export interface TransactionsTable {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  terminalId: string | null;
  sessionId: string | null;
  subscriptionId: string | null;
  billingAgreementChargeId: string | null;
  paymentMethodId: string | null;
  paymentMethodType: string | null;
  paymentMethodSubType: string | null;
  paymentMethodExpiry: string | null;
  paymentMethodDisplayText: string | null;
  paymentMethodHolderName: string | null;
  customerId: string | null;
  type: string;
  flow: string;
  state: string;
  errorCode: string | null;
  externalStatusCodes: string | null;
  scaMode: string | null;
  amount: number;
  fee: Generated<number>;
  currency: string;
  instantCapture: string | null;
  notificationUrl: string | null;
  reference: string | null;
  textOnStatement: string | null;
  descriptor: string | null;
  exemptions: string | null;
  attributes: string | null;
  clientIp: string | null;
  clientCountry: string | null;
  acquirer: string | null;
  acquirerReference: string | null;
  authorizedAmount: Generated<number>;
  capturedAmount: Generated<number>;
  refundedAmount: Generated<number>;
  voidedAmount: Generated<number>;
  paidOutAmount: Generated<number>;
  pendingAmount: Generated<number>;
  /** Refunds in flight (004_lifecycle). */
  pendingRefundAmount: Generated<number>;
  /** SCA result as JSON {rejected, type, verification} (002_online). */
  sca: ColumnType<string | null, string | null | undefined, string | null>;
  /** Effect key of the idempotent request that created it (010_idempotency_effects). */
  idempotencyKey: ColumnType<string | null, string | null | undefined, string | null>;
  /** The effects its flow declared for the final answer (017_one_engine): SESSION | BILLING_CHARGE | TERMINAL_SALE. */
  effects: ColumnType<string | null, string | null | undefined, string | null>;
  /** The acquirer agreement that authorized it (024_acquirer_requests); null: the sandbox simulator. */
  acquirerAgreementId: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

export interface OperationsTable {
  id: string;
  accountId: string;
  transactionId: string;
  pointOfSaleId: string;
  type: string;
  state: string;
  amount: number;
  referenceOperationId: string | null;
  errorCode: string | null;
  externalStatusCodes: string | null;
  acquirerReference: string | null;
  /** Effect key of the idempotent request that created it (010_idempotency_effects). */
  idempotencyKey: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the operation's answer starts (017_one_engine): INSTANT_CAPTURE | VOID_REMAINING. */
  chain: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: string;
  finalizedAt: string | null;
}

export interface IdempotencyKeysTable {
  accountId: string;
  method: string;
  path: string;
  key: string;
  requestHash: string;
  state: string;
  responseStatus: number | null;
  responseBody: string | null;
  responseContentType: string | null;
  lockedUntil: string;
  createdAt: string;
  expiresAt: string;
  /** Tags the effect of this claim's execution; kept when a crashed execution is taken over (010). */
  effectKey: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface JobsTable {
  id: string;
  kind: string;
  payload: string;
  state: string;
  dedupeKey: string | null;
  runAt: string;
  attempts: Generated<number>;
  maxAttempts: number;
  leaseUntil: string | null;
  leasedBy: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface SessionsTable {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  clientKey: string;
  state: string;
  amount: number;
  currency: string;
  reference: string | null;
  scaMode: string;
  timeoutMinutes: number;
  instantCapture: string;
  exemptions: string;
  textOnStatement: string | null;
  attributes: string | null;
  customerId: string | null;
  maxAttempts: number;
  attempts: Generated<number>;
  notificationUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
  reportFailure: number;
  subscriptionRequest: string | null;
  /** JSON array of order lines (014_multi_links): a session started by a multi-link. */
  orderLines: ColumnType<string | null, string | null | undefined, string | null>;
  /** INTERFACE §11.2 (018_cit_sessions): JSON array of paymentMethodType or NULL; booleans 0/1. */
  allowedPaymentMethods: ColumnType<string | null, string | null | undefined, string | null>;
  dynamicAmount: ColumnType<number, number | undefined, number>;
  minimumAge: ColumnType<number | null, number | null | undefined, number | null>;
  ageVerificationCountry: ColumnType<string | null, string | null | undefined, string | null>;
  ageVerified: ColumnType<number, number | undefined, number>;
  preAuthUrl: ColumnType<string | null, string | null | undefined, string | null>;
  retryUrl: ColumnType<string | null, string | null | undefined, string | null>;
  returnUrl: ColumnType<string | null, string | null | undefined, string | null>;
  reportExpired: ColumnType<number, number | undefined, number>;
  transactionId: string | null;
  subscriptionId: string | null;
  paymentMethodId: string | null;
  errorCode: string | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

export interface SubscriptionsTable {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  paymentMethodId: string;
  sessionId: string | null;
  customerId: string | null;
  currency: string;
  reference: string | null;
  description: string | null;
  state: string;
  statusReason: string | null;
  type: string;
  expiryDate: string | null;
  intervalPeriod: string | null;
  intervalFrequency: number | null;
  amount: number | null;
  createdAt: string;
  updatedAt: string;
}

/** Event outbox (004_lifecycle): one row per domain event, written with the change it reports. */
export interface EventsTable {
  id: string;
  accountId: string;
  event: string;
  data: string;
  createdAt: string;
}

/** Terminal side of an in-person sale (006_sales.sql). */
export interface TerminalSalesTable {
  transactionId: string;
  accountId: string;
  terminalId: string;
  stage: string;
  dispatchedAt: string | null;
  expiresAt: string | null;
  cardPresentedAt: string | null;
  endedAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** The sale's terminal request (016_ingestion_caps, INTERFACE §11.6); booleans as 0/1. */
  suppressAppNotifications: ColumnType<number, number | undefined, number>;
  switchBackTimeout: ColumnType<number | null, number | null | undefined, number | null>;
  activityToResume: ColumnType<string | null, string | null | undefined, string | null>;
  surcharge: ColumnType<number | null, number | null | undefined, number | null>;
  dcc: ColumnType<number | null, number | null | undefined, number | null>;
}

/** MIT transactions accepted per merchant, channel and minute (016_ingestion_caps, INTERFACE §11.8). */
export interface IngestionCountersTable {
  accountId: string;
  channel: string;
  windowStart: string;
  count: number;
}

export interface Database {
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  webhookDeliveryAttempts: WebhookDeliveryAttemptsTable;
  webhookEventFanouts: WebhookEventFanoutsTable;
  settings: SettingsTable;
  accounts: AccountsTable;
  credentials: CredentialsTable;
  pointsOfSale: PointsOfSaleTable;
  terminals: TerminalsTable;
  transactions: TransactionsTable;
  operations: OperationsTable;
  idempotencyKeys: IdempotencyKeysTable;
  jobs: JobsTable;
  terminalSales: TerminalSalesTable;
  ingestionCounters: IngestionCountersTable;
  events: EventsTable;
  sessions: SessionsTable;
  subscriptions: SubscriptionsTable;
  paymentMethods: PaymentMethodsTable;
  notifications: NotificationsTable;
  notificationAttempts: NotificationAttemptsTable;
  billingPlans: BillingPlansTable;
  billingAgreements: BillingAgreementsTable;
  billingAgreementCharges: BillingAgreementChargesTable;
  settlementTransfers: SettlementTransfersTable;
  settlementTransactions: SettlementTransactionsTable;
  paymentLinks: PaymentLinksTable;
  multiLinks: MultiLinksTable;
  multiLinkOrderLines: MultiLinkOrderLinesTable;
  dashboardSessions: DashboardSessionsTable;
  acquirerAgreements: AcquirerAgreementsTable;
  acquirerRequests: AcquirerRequestsTable;
  threeDsAttempts: ThreeDsAttemptsTable;
}

/** The payment window's 3-D Secure attempts (027_three_ds_attempts). */
export interface ThreeDsAttemptsTable {
  id: string;
  accountId: string;
  sessionId: string;
  threeDsServerTransId: string;
  messageVersion: string;
  methodUrl: string | null;
  state: string;
  cardSealed: string | null;
  amount: number;
  acsUrl: string | null;
  acsTransId: string | null;
  transactionId: string | null;
  steps: string;
  methodCompletedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A request to an acquirer that is never repeated, written before it goes out (024_acquirer_requests). */
export interface AcquirerRequestsTable {
  operationId: string;
  accountId: string;
  transactionId: string;
  acquirer: string;
  call: string;
  amount: number;
  currency: string;
  sentAt: string;
  inDoubtAt: string | null;
  inDoubtReason: string | null;
  acquirerReference: string | null;
  resolvedAt: string | null;
  resolution: string | null;
}

/** Dashboard sign-ins (020_dashboard_sessions): the session id only hashed, the key and CSRF token sealed. */
export interface DashboardSessionsTable {
  idHash: string;
  keyHash: string;
  keySealed: string;
  csrfTokenSealed: string;
  tier: string;
  accountId: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

/** Card vault and payment methods (002_online); the card number only sealed. */
export interface PaymentMethodsTable {
  id: string;
  accountId: string;
  customerId: string | null;
  type: string;
  subType: string | null;
  expiry: string | null;
  displayText: string | null;
  holderName: string | null;
  panSealed: string | null;
  /** JSON of the displayable card details (BIN, last four, expiry, scheme data). */
  card: string | null;
  /** Enrolled in the account updater, 0/1 (015_payment_method_updates). */
  accountUpdatesEnabled: ColumnType<number, number | undefined, number>;
  /** The card's series at the acquirer (024_acquirer_requests): type, latest approved authorization id, the agreement it lives under. */
  seriesType: ColumnType<string | null, string | null | undefined, string | null>;
  seriesReference: ColumnType<string | null, string | null | undefined, string | null>;
  seriesAgreementId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The operation that may be on the wire for the series, and since when (025_series_claims); null: none. */
  seriesClaimedBy: ColumnType<string | null, string | null | undefined, string | null>;
  seriesClaimedAt: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: string;
  deletedAt: string | null;
}

/** Callbacks to a transaction's notificationUrl (002_online). */
export interface NotificationsTable {
  id: string;
  accountId: string;
  transactionId: string;
  event: string;
  url: string;
  state: string;
  body: string;
  attempts: Generated<number>;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  /** The point of sale's webhookAuthentication, sealed (null in rows written before migration 013). */
  authorizationSealed: Generated<string | null>;
}

export interface NotificationAttemptsTable {
  id: string;
  notificationId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  createdAt: string;
}

/** Subscription billing (007_billing). */
export interface BillingPlansTable {
  id: string;
  accountId: string;
  name: string;
  amount: number;
  currency: string;
  maxAttempts: number;
  intervalPeriod: string;
  intervalFrequency: number;
  instantCapture: string;
  color: string | null;
  emoji: string | null;
  createdAt: string;
}

export interface BillingAgreementsTable {
  id: string;
  accountId: string;
  billingPlanId: string;
  subscriptionId: string | null;
  sessionId: string | null;
  customerId: string | null;
  state: string;
  nextChargeAt: string | null;
  lastChargeAt: string | null;
  /** Day of the month (1–31) monthly charges aim for; null for other periods (016_ingestion_caps). */
  desiredDate: number | null;
  reference: string | null;
  stateChangedAt: string;
  createdAt: string;
  updatedAt: string;
}

export interface BillingAgreementChargesTable {
  id: string;
  accountId: string;
  billingAgreementId: string;
  billingPlanId: string;
  periodStart: string;
  state: string;
  amount: number;
  currency: string;
  maxAttempts: number;
  attempts: number;
  transactionId: string | null;
  deadlineAt: string;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

/** Registered webhooks (005_webhooks); the secret only sealed; soft-deleted. */
export interface WebhooksTable {
  id: string;
  accountId: string;
  url: string;
  /** JSON array of event names. */
  events: string;
  secretSealed: string;
  pausedAt: string | null;
  pauseReason: string | null;
  resumedAt: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
  /** Migration 028: null only in rows written before it (given a secret on first need). */
  signingSecretSealed: string | null;
  previousSigningSecretSealed: string | null;
  previousSigningSecretExpiresAt: string | null;
}

/** One per (outbox event, webhook) (005_webhooks). */
export interface WebhookDeliveriesTable {
  id: string;
  webhookId: string;
  accountId: string;
  eventId: string;
  event: string;
  body: string;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface WebhookDeliveryAttemptsTable {
  id: string;
  deliveryId: string;
  webhookId: string;
  attempt: number;
  success: number;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
}

/** Outbox events the webhook relay has handled (005_webhooks). */
export interface WebhookEventFanoutsTable {
  eventId: string;
  eventCreatedAt: string;
  deliveries: number;
  createdAt: string;
}

/** Settlement transfers (008_settlements): OPEN while a run fills them, READY once complete. */
export interface SettlementTransfersTable {
  id: string;
  accountId: string;
  currency: string;
  state: string;
  acquirer: string;
  settlementName: string;
  /** JSON array of acquirer merchant ids. */
  settlementIds: string;
  postingDate: string;
  acquirerReference: string;
  transactionsCount: ColumnType<number, number | undefined, number>;
  grossAmount: ColumnType<number, number | undefined, number>;
  acquirerFeeAmount: ColumnType<number, number | undefined, number>;
  interchangeFeeAmount: ColumnType<number, number | undefined, number>;
  schemeFeeAmount: ColumnType<number, number | undefined, number>;
  transactionsNetAmount: ColumnType<number, number | undefined, number>;
  /** JSON array of transfer-level adjustments. */
  adjustments: ColumnType<string, string | undefined, string>;
  netAmount: ColumnType<number, number | undefined, number>;
  openedAt: string;
  updatedAt: string;
  createdAt: string | null;
}

/** One row per settled operation (008_settlements); operation_id is unique (settled once). */
export interface SettlementTransactionsTable {
  id: string;
  settlementTransferId: string;
  accountId: string;
  operationId: string;
  operationType: string;
  transactionId: string;
  agreementId: string;
  merchantReference: string | null;
  acquirerReference: string | null;
  postingDate: string;
  currency: string;
  grossAmount: number;
  acquirerFee: number;
  interchangeFee: number;
  schemeFee: number;
  netAmount: number;
  createdAt: string;
}

/** Payment links (009_payment_links): one per CIT session; immutable session facts copied. */
export interface PaymentLinksTable {
  id: string;
  accountId: string;
  sessionId: string;
  clientKey: string;
  pointOfSaleId: string;
  state: string;
  amount: number;
  currency: string;
  reference: string | null;
  customerId: string | null;
  transactionId: string | null;
  expiresAt: string;
  stateChangedAt: string;
  createdAt: string;
  updatedAt: string;
}

/** Multi-links (014_multi_links): settings left out are NULL; booleans as 0/1; JSON as text. */
export interface MultiLinksTable {
  id: string;
  accountId: string;
  pointOfSaleId: string;
  state: string;
  amount: number;
  currency: string;
  reference: string | null;
  scaMode: string | null;
  timeoutMinutes: number | null;
  instantCapture: string | null;
  textOnStatement: string | null;
  attributes: string | null;
  reportFailure: number | null;
  reportExpired: number | null;
  dynamicAmount: number | null;
  notificationUrl: string | null;
  successUrl: string | null;
  failureUrl: string | null;
  retryUrl: string | null;
  returnUrl: string | null;
  allowedPaymentMethods: string | null;
  ageMinimum: number | null;
  ageCountry: string | null;
  subscriptionType: string | null;
  subscriptionAmount: number | null;
  subscriptionExpiryDate: string | null;
  subscriptionIntervalPeriod: string | null;
  subscriptionIntervalFrequency: number | null;
  billingPlanId: string | null;
  billingNextChargeAt: string | null;
  idempotencyKey: string | null;
  stateChangedAt: string;
  createdAt: string;
  updatedAt: string;
}

/** A multi-link's order lines (014_multi_links), by position from 0. */
export interface MultiLinkOrderLinesTable {
  multiLinkId: string;
  position: number;
  description: string;
  imageUrl: string | null;
  quantity: number;
  unitPrice: number;
  totalAmount: number;
  type: string;
}

/** An account's acquirer agreements (023_acquirer_agreements): append-only, the API key only sealed; removedAt null = current. */
export interface AcquirerAgreementsTable {
  id: string;
  accountId: string;
  acquirer: string;
  apiKeySealed: string | null;
  mcc: string;
  textOnStatement: string | null;
  createdAt: string;
  updatedAt: string;
  removedAt: string | null;
  /** 026_three_d_secure_agreements: the 3DS Server and the merchant's key there (sealed); both null without one. */
  threeDsProvider: string | null;
  threeDsApiKeySealed: string | null;
}
