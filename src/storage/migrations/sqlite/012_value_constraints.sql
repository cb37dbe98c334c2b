-- The database refuses bad values by itself (issue 9): every money, count and attempt column is an
-- integer in its range, every currency three upper-case letters, every state one of its states.
-- SQLite's type affinity would otherwise keep a REAL Infinity, 1.5 or a TEXT 'Infinity' in an
-- INTEGER column, so each integer CHECK also asks typeof() = 'integer'. The same constraints, by the
-- same names, are in postgres/012_value_constraints.sql.
--
-- Ranges (INTERFACE §1, §7): amounts and aggregates 0..999999999 (plan and charge amounts, the agreed
-- subscription amount ≥ 1); counts, attempts and durations 0..999999999 (an attempt number ≥ 1);
-- HTTP statuses three digits; plan and charge maxAttempts 1..31, session maxAttempts 1..10, session
-- timeout 1..43200 minutes, interval frequency 1..31. Settlement rows are signed: gross
-- -999999999..999999999 (negative exactly for REFUND and PAYOUT), fees -999999999..0, and
-- net = gross + fees — so a refund's net may lie below -999999999. Transfer totals are sums over
-- many rows: any safe integer (±9007199254740991, what moneyNumber accepts), fees ≤ 0.
--
-- ALTER TABLE cannot add a CHECK on SQLite: each table is rebuilt (create <t>_new with the same
-- columns plus the CHECKs, copy, drop the old table, rename the new one, recreate its indexes).
-- This order keeps the other tables' REFERENCES pointing at the right name. The runner applies it
-- with foreign_keys off (the documented procedure; a DROP of a parent table would otherwise count
-- its children as violations) and runs PRAGMA foreign_key_check before committing. Before
-- anything is changed, the runner lists the existing rows that would violate a CHECK of this file
-- (src/storage/constraint-report.ts) and stops: no row is ever dropped or altered.

-- accounts
CREATE TABLE accounts_new (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  currency_code TEXT NOT NULL,
  timezone TEXT NOT NULL,
  language TEXT,
  domain TEXT NOT NULL,
  address_line_one TEXT,
  address_line_two TEXT,
  city TEXT,
  postal_code TEXT,
  country_code TEXT,
  phone TEXT,
  invoice_email TEXT,
  invoice_attention TEXT,
  vat TEXT,
  status TEXT NOT NULL,
  cap_moto INTEGER NOT NULL DEFAULT 0,
  cap_sync_payout INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT,
  CONSTRAINT accounts_status_check CHECK (status IN ('PENDING', 'ACTIVE', 'CLOSED')),
  CONSTRAINT accounts_currency_code_check CHECK (typeof(currency_code) = 'text' AND currency_code GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT accounts_cap_moto_check CHECK (cap_moto IN (0, 1)),
  CONSTRAINT accounts_cap_sync_payout_check CHECK (cap_sync_payout IN (0, 1))
);
INSERT INTO accounts_new (id, name, email, currency_code, timezone, language, domain, address_line_one, address_line_two, city, postal_code, country_code, phone, invoice_email, invoice_attention, vat, status, cap_moto, cap_sync_payout, created_at, updated_at, deleted_at)
  SELECT id, name, email, currency_code, timezone, language, domain, address_line_one, address_line_two, city, postal_code, country_code, phone, invoice_email, invoice_attention, vat, status, cap_moto, cap_sync_payout, created_at, updated_at, deleted_at FROM accounts;
DROP TABLE accounts;
ALTER TABLE accounts_new RENAME TO accounts;
CREATE INDEX accounts_created ON accounts (created_at, id);

-- credentials
CREATE TABLE credentials_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  kind TEXT NOT NULL,
  name TEXT,
  secret_hash TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL,
  CONSTRAINT credentials_kind_check CHECK (kind IN ('access_token', 'api_key')),
  CONSTRAINT credentials_environment_check CHECK (environment IN ('test', 'live'))
);
INSERT INTO credentials_new (id, account_id, kind, name, secret_hash, environment, expires_at, revoked_at, created_at)
  SELECT id, account_id, kind, name, secret_hash, environment, expires_at, revoked_at, created_at FROM credentials;
DROP TABLE credentials;
ALTER TABLE credentials_new RENAME TO credentials;
CREATE INDEX credentials_account ON credentials (account_id);

-- points_of_sale
CREATE TABLE points_of_sale_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  domain TEXT NOT NULL,
  descriptor TEXT,
  webhook_authentication_sealed TEXT NOT NULL,
  hosted_configuration TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CONSTRAINT points_of_sale_type_check CHECK (type IN ('ONLINE', 'PHYSICAL'))
);
INSERT INTO points_of_sale_new (id, account_id, name, type, domain, descriptor, webhook_authentication_sealed, hosted_configuration, created_at, updated_at)
  SELECT id, account_id, name, type, domain, descriptor, webhook_authentication_sealed, hosted_configuration, created_at, updated_at FROM points_of_sale;
DROP TABLE points_of_sale;
ALTER TABLE points_of_sale_new RENAME TO points_of_sale;
CREATE INDEX points_of_sale_account ON points_of_sale (account_id, created_at, id);

-- terminals
CREATE TABLE terminals_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL REFERENCES points_of_sale (id),
  device_id TEXT,
  external_id TEXT,
  name TEXT,
  fallback INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  CONSTRAINT terminals_fallback_check CHECK (fallback IN (0, 1))
);
INSERT INTO terminals_new (id, account_id, point_of_sale_id, device_id, external_id, name, fallback, created_at)
  SELECT id, account_id, point_of_sale_id, device_id, external_id, name, fallback, created_at FROM terminals;
DROP TABLE terminals;
ALTER TABLE terminals_new RENAME TO terminals;
CREATE INDEX terminals_account ON terminals (account_id, created_at, id);
CREATE INDEX terminals_point_of_sale ON terminals (point_of_sale_id, created_at, id);
CREATE UNIQUE INDEX terminals_one_fallback ON terminals (point_of_sale_id) WHERE fallback = 1;

-- transactions
CREATE TABLE transactions_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL,
  terminal_id TEXT,
  session_id TEXT,
  subscription_id TEXT,
  billing_agreement_charge_id TEXT,
  payment_method_id TEXT,
  payment_method_type TEXT,
  payment_method_sub_type TEXT,
  payment_method_expiry TEXT,
  payment_method_display_text TEXT,
  payment_method_holder_name TEXT,
  customer_id TEXT,
  type TEXT NOT NULL,
  flow TEXT NOT NULL,
  state TEXT NOT NULL,
  error_code TEXT,
  external_status_codes TEXT,
  sca_mode TEXT,
  amount INTEGER NOT NULL,
  fee INTEGER NOT NULL DEFAULT 0,
  currency TEXT NOT NULL,
  instant_capture TEXT,
  notification_url TEXT,
  reference TEXT,
  text_on_statement TEXT,
  descriptor TEXT,
  exemptions TEXT,
  attributes TEXT,
  client_ip TEXT,
  client_country TEXT,
  acquirer TEXT,
  acquirer_reference TEXT,
  authorized_amount INTEGER NOT NULL DEFAULT 0,
  captured_amount INTEGER NOT NULL DEFAULT 0,
  refunded_amount INTEGER NOT NULL DEFAULT 0,
  voided_amount INTEGER NOT NULL DEFAULT 0,
  paid_out_amount INTEGER NOT NULL DEFAULT 0,
  pending_amount INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finalized_at TEXT,
  sca TEXT,
  pending_refund_amount INTEGER NOT NULL DEFAULT 0,
  idempotency_key TEXT,
  CONSTRAINT transactions_type_check CHECK (type IN ('PAYMENT', 'PAYOUT', 'MOTO')),
  CONSTRAINT transactions_flow_check CHECK (flow IN ('MIT', 'CIT', 'MOTO', 'SALE', 'PAYOUT')),
  CONSTRAINT transactions_state_check CHECK (state IN ('PENDING', 'PROCESSING', 'SUCCESS', 'FAILED')),
  CONSTRAINT transactions_sca_mode_check CHECK (sca_mode IN ('SKIP', 'NORMAL', 'FORCE')),
  CONSTRAINT transactions_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID')),
  CONSTRAINT transactions_payment_method_type_check CHECK (payment_method_type IN ('CARD', 'VIPPS_MOBILEPAY', 'MOBILEPAY_ONLINE', 'APPLE_PAY', 'GOOGLE_PAY', 'SWISH', 'VIABILL', 'ANYDAY', 'KLARNA')),
  CONSTRAINT transactions_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_fee_check CHECK (typeof(fee) = 'integer' AND fee BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT transactions_authorized_amount_check CHECK (typeof(authorized_amount) = 'integer' AND authorized_amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_captured_amount_check CHECK (typeof(captured_amount) = 'integer' AND captured_amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_refunded_amount_check CHECK (typeof(refunded_amount) = 'integer' AND refunded_amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_voided_amount_check CHECK (typeof(voided_amount) = 'integer' AND voided_amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_paid_out_amount_check CHECK (typeof(paid_out_amount) = 'integer' AND paid_out_amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_pending_amount_check CHECK (typeof(pending_amount) = 'integer' AND pending_amount BETWEEN 0 AND 999999999),
  CONSTRAINT transactions_pending_refund_amount_check CHECK (typeof(pending_refund_amount) = 'integer' AND pending_refund_amount BETWEEN 0 AND 999999999)
);
INSERT INTO transactions_new (id, account_id, point_of_sale_id, terminal_id, session_id, subscription_id, billing_agreement_charge_id, payment_method_id, payment_method_type, payment_method_sub_type, payment_method_expiry, payment_method_display_text, payment_method_holder_name, customer_id, type, flow, state, error_code, external_status_codes, sca_mode, amount, fee, currency, instant_capture, notification_url, reference, text_on_statement, descriptor, exemptions, attributes, client_ip, client_country, acquirer, acquirer_reference, authorized_amount, captured_amount, refunded_amount, voided_amount, paid_out_amount, pending_amount, created_at, updated_at, finalized_at, sca, pending_refund_amount, idempotency_key)
  SELECT id, account_id, point_of_sale_id, terminal_id, session_id, subscription_id, billing_agreement_charge_id, payment_method_id, payment_method_type, payment_method_sub_type, payment_method_expiry, payment_method_display_text, payment_method_holder_name, customer_id, type, flow, state, error_code, external_status_codes, sca_mode, amount, fee, currency, instant_capture, notification_url, reference, text_on_statement, descriptor, exemptions, attributes, client_ip, client_country, acquirer, acquirer_reference, authorized_amount, captured_amount, refunded_amount, voided_amount, paid_out_amount, pending_amount, created_at, updated_at, finalized_at, sca, pending_refund_amount, idempotency_key FROM transactions;
DROP TABLE transactions;
ALTER TABLE transactions_new RENAME TO transactions;
CREATE INDEX transactions_page ON transactions (account_id, created_at, id);
CREATE INDEX transactions_state ON transactions (account_id, state, created_at, id);
CREATE INDEX transactions_state_currency ON transactions (account_id, state, currency, created_at, id);
CREATE INDEX transactions_session ON transactions (account_id, session_id, created_at, id) WHERE session_id IS NOT NULL;
CREATE INDEX transactions_subscription ON transactions (account_id, subscription_id, created_at, id) WHERE subscription_id IS NOT NULL;
CREATE INDEX transactions_charge ON transactions (account_id, billing_agreement_charge_id, created_at, id) WHERE billing_agreement_charge_id IS NOT NULL;
CREATE INDEX transactions_customer ON transactions (account_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL;
CREATE INDEX transactions_reference ON transactions (account_id, reference, created_at, id) WHERE reference IS NOT NULL;
CREATE INDEX transactions_point_of_sale ON transactions (account_id, point_of_sale_id, created_at, id);
CREATE INDEX transactions_terminal ON transactions (account_id, terminal_id, created_at, id) WHERE terminal_id IS NOT NULL;
CREATE UNIQUE INDEX transactions_terminal_busy ON transactions (terminal_id) WHERE flow = 'SALE' AND state IN ('PENDING', 'PROCESSING');
CREATE UNIQUE INDEX transactions_idempotency ON transactions (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- operations
CREATE TABLE operations_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  point_of_sale_id TEXT NOT NULL,
  type TEXT NOT NULL,
  state TEXT NOT NULL,
  amount INTEGER NOT NULL,
  reference_operation_id TEXT,
  error_code TEXT,
  external_status_codes TEXT,
  acquirer_reference TEXT,
  created_at TEXT NOT NULL,
  finalized_at TEXT,
  idempotency_key TEXT,
  CONSTRAINT operations_type_check CHECK (type IN ('AUTHORIZATION', 'SALE', 'CAPTURE', 'REFUND', 'VOID', 'RENEW', 'PAYOUT')),
  CONSTRAINT operations_state_check CHECK (state IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  CONSTRAINT operations_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999)
);
INSERT INTO operations_new (id, account_id, transaction_id, point_of_sale_id, type, state, amount, reference_operation_id, error_code, external_status_codes, acquirer_reference, created_at, finalized_at, idempotency_key)
  SELECT id, account_id, transaction_id, point_of_sale_id, type, state, amount, reference_operation_id, error_code, external_status_codes, acquirer_reference, created_at, finalized_at, idempotency_key FROM operations;
DROP TABLE operations;
ALTER TABLE operations_new RENAME TO operations;
CREATE INDEX operations_transaction ON operations (transaction_id, created_at, id);
CREATE INDEX operations_final ON operations (account_id, finalized_at, id) WHERE state IN ('SUCCESS', 'FAILED');
CREATE INDEX operations_final_pos ON operations (account_id, point_of_sale_id, finalized_at, id) WHERE state IN ('SUCCESS', 'FAILED');
CREATE INDEX operations_transaction_type ON operations (transaction_id, type, state);
CREATE INDEX operations_settleable ON operations (account_id, finalized_at, id) WHERE state = 'SUCCESS' AND type IN ('CAPTURE', 'SALE', 'REFUND', 'PAYOUT');

-- idempotency_keys
CREATE TABLE idempotency_keys_new (
  account_id TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  response_status INTEGER,
  response_body TEXT,
  response_content_type TEXT,
  locked_until TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  effect_key TEXT,
  PRIMARY KEY (account_id, method, path, key),
  CONSTRAINT idempotency_keys_state_check CHECK (state IN ('in_flight', 'completed')),
  CONSTRAINT idempotency_keys_response_status_check CHECK (response_status IS NULL OR (typeof(response_status) = 'integer' AND response_status BETWEEN 100 AND 599))
);
INSERT INTO idempotency_keys_new (account_id, method, path, key, request_hash, state, response_status, response_body, response_content_type, locked_until, created_at, expires_at, effect_key)
  SELECT account_id, method, path, key, request_hash, state, response_status, response_body, response_content_type, locked_until, created_at, expires_at, effect_key FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- jobs
CREATE TABLE jobs_new (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  dedupe_key TEXT UNIQUE,
  run_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  lease_until TEXT,
  leased_by TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT,
  CONSTRAINT jobs_state_check CHECK (state IN ('queued', 'running', 'done', 'dead')),
  CONSTRAINT jobs_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999),
  CONSTRAINT jobs_max_attempts_check CHECK (typeof(max_attempts) = 'integer' AND max_attempts BETWEEN 1 AND 999999999)
);
INSERT INTO jobs_new (id, kind, payload, state, dedupe_key, run_at, attempts, max_attempts, lease_until, leased_by, last_error, created_at, updated_at, finished_at)
  SELECT id, kind, payload, state, dedupe_key, run_at, attempts, max_attempts, lease_until, leased_by, last_error, created_at, updated_at, finished_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_dead ON jobs (updated_at) WHERE state = 'dead';
CREATE INDEX jobs_done ON jobs (finished_at) WHERE state = 'done';

-- payment_methods
CREATE TABLE payment_methods_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  customer_id TEXT,
  type TEXT NOT NULL,
  sub_type TEXT,
  expiry TEXT,
  display_text TEXT,
  holder_name TEXT,
  pan_sealed TEXT,
  card TEXT,
  created_at TEXT NOT NULL,
  deleted_at TEXT,
  CONSTRAINT payment_methods_type_check CHECK (type IN ('CARD', 'VIPPS_MOBILEPAY', 'MOBILEPAY_ONLINE', 'APPLE_PAY', 'GOOGLE_PAY', 'SWISH', 'VIABILL', 'ANYDAY', 'KLARNA'))
);
INSERT INTO payment_methods_new (id, account_id, customer_id, type, sub_type, expiry, display_text, holder_name, pan_sealed, card, created_at, deleted_at)
  SELECT id, account_id, customer_id, type, sub_type, expiry, display_text, holder_name, pan_sealed, card, created_at, deleted_at FROM payment_methods;
DROP TABLE payment_methods;
ALTER TABLE payment_methods_new RENAME TO payment_methods;
CREATE INDEX payment_methods_account ON payment_methods (account_id, created_at, id);
CREATE INDEX payment_methods_customer ON payment_methods (account_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL;

-- notifications
CREATE TABLE notifications_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  event TEXT NOT NULL,
  url TEXT NOT NULL,
  state TEXT NOT NULL,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  delivered_at TEXT,
  UNIQUE (transaction_id, event),
  CONSTRAINT notifications_state_check CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED')),
  CONSTRAINT notifications_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999),
  CONSTRAINT notifications_last_status_check CHECK (last_status IS NULL OR (typeof(last_status) = 'integer' AND last_status BETWEEN 100 AND 999))
);
INSERT INTO notifications_new (id, account_id, transaction_id, event, url, state, body, attempts, last_status, last_error, next_attempt_at, created_at, updated_at, delivered_at)
  SELECT id, account_id, transaction_id, event, url, state, body, attempts, last_status, last_error, next_attempt_at, created_at, updated_at, delivered_at FROM notifications;
DROP TABLE notifications;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX notifications_account ON notifications (account_id, transaction_id, created_at);

-- notification_attempts
CREATE TABLE notification_attempts_new (
  id TEXT PRIMARY KEY,
  notification_id TEXT NOT NULL REFERENCES notifications (id),
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  CONSTRAINT notification_attempts_attempt_check CHECK (typeof(attempt) = 'integer' AND attempt BETWEEN 1 AND 999999999),
  CONSTRAINT notification_attempts_status_code_check CHECK (status_code IS NULL OR (typeof(status_code) = 'integer' AND status_code BETWEEN 100 AND 999)),
  CONSTRAINT notification_attempts_duration_ms_check CHECK (typeof(duration_ms) = 'integer' AND duration_ms BETWEEN 0 AND 999999999)
);
INSERT INTO notification_attempts_new (id, notification_id, attempt, status_code, error, duration_ms, created_at)
  SELECT id, notification_id, attempt, status_code, error, duration_ms, created_at FROM notification_attempts;
DROP TABLE notification_attempts;
ALTER TABLE notification_attempts_new RENAME TO notification_attempts;
CREATE INDEX notification_attempts_notification ON notification_attempts (notification_id, attempt);

-- sessions
CREATE TABLE sessions_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL,
  client_key TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  reference TEXT,
  sca_mode TEXT NOT NULL,
  timeout_minutes INTEGER NOT NULL,
  instant_capture TEXT NOT NULL,
  exemptions TEXT NOT NULL,
  text_on_statement TEXT,
  attributes TEXT,
  customer_id TEXT,
  max_attempts INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  notification_url TEXT,
  success_url TEXT,
  failure_url TEXT,
  report_failure INTEGER NOT NULL DEFAULT 0,
  subscription_request TEXT,
  transaction_id TEXT,
  subscription_id TEXT,
  payment_method_id TEXT,
  error_code TEXT,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finalized_at TEXT,
  CONSTRAINT sessions_state_check CHECK (state IN ('PENDING', 'PROCESSING', 'COMPLETED', 'EXPIRED')),
  CONSTRAINT sessions_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999),
  CONSTRAINT sessions_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT sessions_sca_mode_check CHECK (sca_mode IN ('SKIP', 'NORMAL', 'FORCE')),
  CONSTRAINT sessions_timeout_minutes_check CHECK (typeof(timeout_minutes) = 'integer' AND timeout_minutes BETWEEN 1 AND 43200),
  CONSTRAINT sessions_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID')),
  CONSTRAINT sessions_max_attempts_check CHECK (typeof(max_attempts) = 'integer' AND max_attempts BETWEEN 1 AND 10),
  CONSTRAINT sessions_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999),
  CONSTRAINT sessions_report_failure_check CHECK (report_failure IN (0, 1))
);
INSERT INTO sessions_new (id, account_id, point_of_sale_id, client_key, state, amount, currency, reference, sca_mode, timeout_minutes, instant_capture, exemptions, text_on_statement, attributes, customer_id, max_attempts, attempts, notification_url, success_url, failure_url, report_failure, subscription_request, transaction_id, subscription_id, payment_method_id, error_code, expires_at, created_at, updated_at, finalized_at)
  SELECT id, account_id, point_of_sale_id, client_key, state, amount, currency, reference, sca_mode, timeout_minutes, instant_capture, exemptions, text_on_statement, attributes, customer_id, max_attempts, attempts, notification_url, success_url, failure_url, report_failure, subscription_request, transaction_id, subscription_id, payment_method_id, error_code, expires_at, created_at, updated_at, finalized_at FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_account ON sessions (account_id, created_at, id);
CREATE INDEX sessions_open ON sessions (expires_at) WHERE state = 'PENDING';

-- subscriptions
CREATE TABLE subscriptions_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL,
  payment_method_id TEXT NOT NULL,
  session_id TEXT,
  customer_id TEXT,
  currency TEXT NOT NULL,
  reference TEXT,
  description TEXT,
  state TEXT NOT NULL,
  status_reason TEXT,
  type TEXT NOT NULL,
  expiry_date TEXT,
  interval_period TEXT,
  interval_frequency INTEGER,
  amount INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CONSTRAINT subscriptions_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT subscriptions_state_check CHECK (state IN ('PENDING', 'ACTIVE', 'INVALID', 'DISABLED')),
  CONSTRAINT subscriptions_type_check CHECK (type IN ('SCHEDULED', 'UNSCHEDULED')),
  CONSTRAINT subscriptions_interval_period_check CHECK (interval_period IN ('DAY', 'WEEK', 'MONTH', 'YEAR')),
  CONSTRAINT subscriptions_interval_frequency_check CHECK (interval_frequency IS NULL OR (typeof(interval_frequency) = 'integer' AND interval_frequency BETWEEN 1 AND 31)),
  CONSTRAINT subscriptions_amount_check CHECK (amount IS NULL OR (typeof(amount) = 'integer' AND amount BETWEEN 1 AND 999999999))
);
INSERT INTO subscriptions_new (id, account_id, point_of_sale_id, payment_method_id, session_id, customer_id, currency, reference, description, state, status_reason, type, expiry_date, interval_period, interval_frequency, amount, created_at, updated_at)
  SELECT id, account_id, point_of_sale_id, payment_method_id, session_id, customer_id, currency, reference, description, state, status_reason, type, expiry_date, interval_period, interval_frequency, amount, created_at, updated_at FROM subscriptions;
DROP TABLE subscriptions;
ALTER TABLE subscriptions_new RENAME TO subscriptions;
CREATE INDEX subscriptions_page ON subscriptions (account_id, created_at, id);
CREATE INDEX subscriptions_customer ON subscriptions (account_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL;
CREATE INDEX subscriptions_state ON subscriptions (account_id, state, created_at, id);
CREATE INDEX subscriptions_payment_method ON subscriptions (account_id, payment_method_id);
CREATE INDEX subscriptions_live_payment_method ON subscriptions (payment_method_id) WHERE state IN ('ACTIVE', 'PENDING');

-- webhooks
CREATE TABLE webhooks_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  paused_at TEXT,
  pause_reason TEXT,
  resumed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT,
  CONSTRAINT webhooks_pause_reason_check CHECK (pause_reason IN ('ERROR_RATE_TOO_HIGH', 'PAUSED_BY_MERCHANT'))
);
INSERT INTO webhooks_new (id, account_id, url, events, secret_sealed, paused_at, pause_reason, resumed_at, created_at, updated_at, deleted_at)
  SELECT id, account_id, url, events, secret_sealed, paused_at, pause_reason, resumed_at, created_at, updated_at, deleted_at FROM webhooks;
DROP TABLE webhooks;
ALTER TABLE webhooks_new RENAME TO webhooks;
CREATE INDEX webhooks_account ON webhooks (account_id, created_at, id) WHERE deleted_at IS NULL;

-- webhook_deliveries
CREATE TABLE webhook_deliveries_new (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks (id),
  account_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_attempt_at TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (event_id, webhook_id),
  CONSTRAINT webhook_deliveries_state_check CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED', 'CANCELLED')),
  CONSTRAINT webhook_deliveries_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999)
);
INSERT INTO webhook_deliveries_new (id, webhook_id, account_id, event_id, event, body, state, attempts, next_attempt_at, last_attempt_at, created_at, finished_at)
  SELECT id, webhook_id, account_id, event_id, event, body, state, attempts, next_attempt_at, last_attempt_at, created_at, finished_at FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_page ON webhook_deliveries (webhook_id, created_at, id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id) WHERE state = 'PENDING';

-- webhook_delivery_attempts
CREATE TABLE webhook_delivery_attempts_new (
  id TEXT PRIMARY KEY,
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
  webhook_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  success INTEGER NOT NULL,
  http_status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  attempted_at TEXT NOT NULL,
  UNIQUE (delivery_id, attempt),
  CONSTRAINT webhook_delivery_attempts_attempt_check CHECK (typeof(attempt) = 'integer' AND attempt BETWEEN 1 AND 999999999),
  CONSTRAINT webhook_delivery_attempts_success_check CHECK (success IN (0, 1)),
  CONSTRAINT webhook_delivery_attempts_http_status_check CHECK (http_status IS NULL OR (typeof(http_status) = 'integer' AND http_status BETWEEN 100 AND 999)),
  CONSTRAINT webhook_delivery_attempts_duration_ms_check CHECK (typeof(duration_ms) = 'integer' AND duration_ms BETWEEN 0 AND 999999999)
);
INSERT INTO webhook_delivery_attempts_new (id, delivery_id, webhook_id, attempt, success, http_status, error, duration_ms, attempted_at)
  SELECT id, delivery_id, webhook_id, attempt, success, http_status, error, duration_ms, attempted_at FROM webhook_delivery_attempts;
DROP TABLE webhook_delivery_attempts;
ALTER TABLE webhook_delivery_attempts_new RENAME TO webhook_delivery_attempts;
CREATE INDEX webhook_delivery_attempts_window ON webhook_delivery_attempts (webhook_id, attempted_at);

-- webhook_event_fanouts
CREATE TABLE webhook_event_fanouts_new (
  event_id TEXT PRIMARY KEY,
  event_created_at TEXT NOT NULL,
  deliveries INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  CONSTRAINT webhook_event_fanouts_deliveries_check CHECK (typeof(deliveries) = 'integer' AND deliveries BETWEEN 0 AND 999999999)
);
INSERT INTO webhook_event_fanouts_new (event_id, event_created_at, deliveries, created_at)
  SELECT event_id, event_created_at, deliveries, created_at FROM webhook_event_fanouts;
DROP TABLE webhook_event_fanouts;
ALTER TABLE webhook_event_fanouts_new RENAME TO webhook_event_fanouts;
CREATE INDEX webhook_event_fanouts_event_created ON webhook_event_fanouts (event_created_at);

-- terminal_sales
CREATE TABLE terminal_sales_new (
  transaction_id TEXT PRIMARY KEY REFERENCES transactions (id),
  account_id TEXT NOT NULL REFERENCES accounts (id),
  terminal_id TEXT NOT NULL REFERENCES terminals (id),
  stage TEXT NOT NULL,
  dispatched_at TEXT,
  expires_at TEXT,
  card_presented_at TEXT,
  ended_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CONSTRAINT terminal_sales_stage_check CHECK (stage IN ('QUEUED', 'WAITING_FOR_CARD', 'CARD_PRESENTED', 'COMPLETED', 'ABORTED', 'EXPIRED'))
);
INSERT INTO terminal_sales_new (transaction_id, account_id, terminal_id, stage, dispatched_at, expires_at, card_presented_at, ended_at, created_at, updated_at)
  SELECT transaction_id, account_id, terminal_id, stage, dispatched_at, expires_at, card_presented_at, ended_at, created_at, updated_at FROM terminal_sales;
DROP TABLE terminal_sales;
ALTER TABLE terminal_sales_new RENAME TO terminal_sales;
CREATE INDEX terminal_sales_terminal ON terminal_sales (terminal_id, stage, created_at);

-- billing_plans
CREATE TABLE billing_plans_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  name TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  max_attempts INTEGER NOT NULL,
  interval_period TEXT NOT NULL,
  interval_frequency INTEGER NOT NULL,
  instant_capture TEXT NOT NULL,
  color TEXT,
  emoji TEXT,
  created_at TEXT NOT NULL,
  CONSTRAINT billing_plans_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 1 AND 999999999),
  CONSTRAINT billing_plans_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT billing_plans_max_attempts_check CHECK (typeof(max_attempts) = 'integer' AND max_attempts BETWEEN 1 AND 31),
  CONSTRAINT billing_plans_interval_period_check CHECK (interval_period IN ('DAY', 'WEEK', 'MONTH', 'YEAR')),
  CONSTRAINT billing_plans_interval_frequency_check CHECK (typeof(interval_frequency) = 'integer' AND interval_frequency BETWEEN 1 AND 31),
  CONSTRAINT billing_plans_instant_capture_check CHECK (instant_capture IN ('OFF', 'VOID', 'NO_VOID'))
);
INSERT INTO billing_plans_new (id, account_id, name, amount, currency, max_attempts, interval_period, interval_frequency, instant_capture, color, emoji, created_at)
  SELECT id, account_id, name, amount, currency, max_attempts, interval_period, interval_frequency, instant_capture, color, emoji, created_at FROM billing_plans;
DROP TABLE billing_plans;
ALTER TABLE billing_plans_new RENAME TO billing_plans;
CREATE INDEX billing_plans_page ON billing_plans (account_id, created_at, id);

-- billing_agreements
CREATE TABLE billing_agreements_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  billing_plan_id TEXT NOT NULL REFERENCES billing_plans (id),
  subscription_id TEXT,
  session_id TEXT,
  customer_id TEXT,
  state TEXT NOT NULL,
  next_charge_at TEXT,
  last_charge_at TEXT,
  desired_date TEXT,
  reference TEXT,
  state_changed_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CONSTRAINT billing_agreements_state_check CHECK (state IN ('PENDING', 'ACTIVE', 'STOPPED'))
);
INSERT INTO billing_agreements_new (id, account_id, billing_plan_id, subscription_id, session_id, customer_id, state, next_charge_at, last_charge_at, desired_date, reference, state_changed_at, created_at, updated_at)
  SELECT id, account_id, billing_plan_id, subscription_id, session_id, customer_id, state, next_charge_at, last_charge_at, desired_date, reference, state_changed_at, created_at, updated_at FROM billing_agreements;
DROP TABLE billing_agreements;
ALTER TABLE billing_agreements_new RENAME TO billing_agreements;
CREATE INDEX billing_agreements_page ON billing_agreements (account_id, created_at, id);
CREATE INDEX billing_agreements_session ON billing_agreements (session_id) WHERE session_id IS NOT NULL;

-- billing_agreement_charges
CREATE TABLE billing_agreement_charges_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  billing_agreement_id TEXT NOT NULL REFERENCES billing_agreements (id),
  billing_plan_id TEXT NOT NULL,
  period_start TEXT NOT NULL,
  state TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  max_attempts INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  transaction_id TEXT,
  deadline_at TEXT NOT NULL,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finalized_at TEXT,
  CONSTRAINT billing_agreement_charges_state_check CHECK (state IN ('PROCESSING', 'SUCCESS', 'FAILED')),
  CONSTRAINT billing_agreement_charges_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 1 AND 999999999),
  CONSTRAINT billing_agreement_charges_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT billing_agreement_charges_max_attempts_check CHECK (typeof(max_attempts) = 'integer' AND max_attempts BETWEEN 1 AND 31),
  CONSTRAINT billing_agreement_charges_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999)
);
INSERT INTO billing_agreement_charges_new (id, account_id, billing_agreement_id, billing_plan_id, period_start, state, amount, currency, max_attempts, attempts, transaction_id, deadline_at, next_attempt_at, created_at, updated_at, finalized_at)
  SELECT id, account_id, billing_agreement_id, billing_plan_id, period_start, state, amount, currency, max_attempts, attempts, transaction_id, deadline_at, next_attempt_at, created_at, updated_at, finalized_at FROM billing_agreement_charges;
DROP TABLE billing_agreement_charges;
ALTER TABLE billing_agreement_charges_new RENAME TO billing_agreement_charges;
CREATE UNIQUE INDEX billing_charges_one_per_period ON billing_agreement_charges (billing_agreement_id, period_start);
CREATE INDEX billing_charges_page ON billing_agreement_charges (account_id, created_at, id);
CREATE INDEX billing_charges_agreement ON billing_agreement_charges (account_id, billing_agreement_id, created_at, id);

-- settlement_transfers
CREATE TABLE settlement_transfers_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  currency TEXT NOT NULL,
  state TEXT NOT NULL,
  acquirer TEXT NOT NULL,
  settlement_name TEXT NOT NULL,
  settlement_ids TEXT NOT NULL,
  posting_date TEXT NOT NULL,
  acquirer_reference TEXT NOT NULL,
  transactions_count INTEGER NOT NULL DEFAULT 0,
  gross_amount INTEGER NOT NULL DEFAULT 0,
  acquirer_fee_amount INTEGER NOT NULL DEFAULT 0,
  interchange_fee_amount INTEGER NOT NULL DEFAULT 0,
  scheme_fee_amount INTEGER NOT NULL DEFAULT 0,
  transactions_net_amount INTEGER NOT NULL DEFAULT 0,
  adjustments TEXT NOT NULL DEFAULT '[]',
  net_amount INTEGER NOT NULL DEFAULT 0,
  opened_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  created_at TEXT,
  CONSTRAINT settlement_transfers_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT settlement_transfers_state_check CHECK (state IN ('OPEN', 'READY')),
  CONSTRAINT settlement_transfers_transactions_count_check CHECK (typeof(transactions_count) = 'integer' AND transactions_count BETWEEN 0 AND 999999999),
  CONSTRAINT settlement_transfers_gross_amount_check CHECK (typeof(gross_amount) = 'integer' AND gross_amount BETWEEN -9007199254740991 AND 9007199254740991),
  CONSTRAINT settlement_transfers_acquirer_fee_amount_check CHECK (typeof(acquirer_fee_amount) = 'integer' AND acquirer_fee_amount BETWEEN -9007199254740991 AND 0),
  CONSTRAINT settlement_transfers_interchange_fee_amount_check CHECK (typeof(interchange_fee_amount) = 'integer' AND interchange_fee_amount BETWEEN -9007199254740991 AND 0),
  CONSTRAINT settlement_transfers_scheme_fee_amount_check CHECK (typeof(scheme_fee_amount) = 'integer' AND scheme_fee_amount BETWEEN -9007199254740991 AND 0),
  CONSTRAINT settlement_transfers_transactions_net_amount_check CHECK (typeof(transactions_net_amount) = 'integer' AND transactions_net_amount = gross_amount + acquirer_fee_amount + interchange_fee_amount + scheme_fee_amount),
  CONSTRAINT settlement_transfers_net_amount_check CHECK (typeof(net_amount) = 'integer' AND net_amount BETWEEN -9007199254740991 AND 9007199254740991)
);
INSERT INTO settlement_transfers_new (id, account_id, currency, state, acquirer, settlement_name, settlement_ids, posting_date, acquirer_reference, transactions_count, gross_amount, acquirer_fee_amount, interchange_fee_amount, scheme_fee_amount, transactions_net_amount, adjustments, net_amount, opened_at, updated_at, created_at)
  SELECT id, account_id, currency, state, acquirer, settlement_name, settlement_ids, posting_date, acquirer_reference, transactions_count, gross_amount, acquirer_fee_amount, interchange_fee_amount, scheme_fee_amount, transactions_net_amount, adjustments, net_amount, opened_at, updated_at, created_at FROM settlement_transfers;
DROP TABLE settlement_transfers;
ALTER TABLE settlement_transfers_new RENAME TO settlement_transfers;
CREATE UNIQUE INDEX settlement_transfers_open ON settlement_transfers (account_id, currency) WHERE state = 'OPEN';
CREATE INDEX settlement_transfers_page ON settlement_transfers (account_id, created_at, id) WHERE state = 'READY';

-- settlement_transactions
CREATE TABLE settlement_transactions_new (
  id TEXT PRIMARY KEY,
  settlement_transfer_id TEXT NOT NULL REFERENCES settlement_transfers (id),
  account_id TEXT NOT NULL REFERENCES accounts (id),
  operation_id TEXT NOT NULL UNIQUE REFERENCES operations (id),
  operation_type TEXT NOT NULL,
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  agreement_id TEXT NOT NULL,
  merchant_reference TEXT,
  acquirer_reference TEXT,
  posting_date TEXT NOT NULL,
  currency TEXT NOT NULL,
  gross_amount INTEGER NOT NULL,
  acquirer_fee INTEGER NOT NULL,
  interchange_fee INTEGER NOT NULL,
  scheme_fee INTEGER NOT NULL,
  net_amount INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  CONSTRAINT settlement_transactions_operation_type_check CHECK (operation_type IN ('CAPTURE', 'SALE', 'REFUND', 'PAYOUT')),
  CONSTRAINT settlement_transactions_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT settlement_transactions_gross_amount_check CHECK (typeof(gross_amount) = 'integer' AND gross_amount BETWEEN -999999999 AND 999999999),
  CONSTRAINT settlement_transactions_gross_sign_check CHECK ((operation_type IN ('CAPTURE', 'SALE') AND gross_amount >= 0) OR (operation_type IN ('REFUND', 'PAYOUT') AND gross_amount <= 0)),
  CONSTRAINT settlement_transactions_acquirer_fee_check CHECK (typeof(acquirer_fee) = 'integer' AND acquirer_fee BETWEEN -999999999 AND 0),
  CONSTRAINT settlement_transactions_interchange_fee_check CHECK (typeof(interchange_fee) = 'integer' AND interchange_fee BETWEEN -999999999 AND 0),
  CONSTRAINT settlement_transactions_scheme_fee_check CHECK (typeof(scheme_fee) = 'integer' AND scheme_fee BETWEEN -999999999 AND 0),
  CONSTRAINT settlement_transactions_net_amount_check CHECK (typeof(net_amount) = 'integer' AND net_amount = gross_amount + acquirer_fee + interchange_fee + scheme_fee)
);
INSERT INTO settlement_transactions_new (id, settlement_transfer_id, account_id, operation_id, operation_type, transaction_id, agreement_id, merchant_reference, acquirer_reference, posting_date, currency, gross_amount, acquirer_fee, interchange_fee, scheme_fee, net_amount, created_at)
  SELECT id, settlement_transfer_id, account_id, operation_id, operation_type, transaction_id, agreement_id, merchant_reference, acquirer_reference, posting_date, currency, gross_amount, acquirer_fee, interchange_fee, scheme_fee, net_amount, created_at FROM settlement_transactions;
DROP TABLE settlement_transactions;
ALTER TABLE settlement_transactions_new RENAME TO settlement_transactions;
CREATE INDEX settlement_transactions_page ON settlement_transactions (settlement_transfer_id, created_at, id);

-- payment_links
CREATE TABLE payment_links_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  session_id TEXT NOT NULL UNIQUE REFERENCES sessions (id),
  client_key TEXT NOT NULL,
  point_of_sale_id TEXT NOT NULL,
  state TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  reference TEXT,
  customer_id TEXT,
  transaction_id TEXT,
  expires_at TEXT NOT NULL,
  state_changed_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CONSTRAINT payment_links_state_check CHECK (state IN ('ACTIVE', 'PAID', 'CANCELLED', 'EXPIRED')),
  CONSTRAINT payment_links_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999),
  CONSTRAINT payment_links_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]')
);
INSERT INTO payment_links_new (id, account_id, session_id, client_key, point_of_sale_id, state, amount, currency, reference, customer_id, transaction_id, expires_at, state_changed_at, created_at, updated_at)
  SELECT id, account_id, session_id, client_key, point_of_sale_id, state, amount, currency, reference, customer_id, transaction_id, expires_at, state_changed_at, created_at, updated_at FROM payment_links;
DROP TABLE payment_links;
ALTER TABLE payment_links_new RENAME TO payment_links;
CREATE INDEX payment_links_page ON payment_links (account_id, created_at, id);
CREATE INDEX payment_links_state ON payment_links (account_id, state, created_at, id);
