-- Every CHECK that tested a value against a list (`state IN ('PENDING', …)`) tests it against each
-- value in turn (`state = 'PENDING' OR …`), on the tables a payment writes (issue 10). SQLite runs
-- a list as a lookup table built afresh for every row it checks: a MIT's transaction row built
-- seven, its operation three. In a microbench of 500-row inserts (the POST /mit/batch shape) a
-- transactions row took 14.3 → 10.6 µs, an operations row 5.3 → 3.6 µs, a jobs row 3.4 → 2.8 µs.
-- The conditions are the same (a NULL passes both forms), by the same constraint names; PostgreSQL
-- keeps its lists, which it evaluates without building anything.
--
-- SQLite cannot change a CHECK in place: each table is rebuilt as in 012_value_constraints.sql
-- (create <t>_new with the rewritten CHECKs, copy, drop, rename, recreate its indexes as they
-- were), with foreign keys off and PRAGMA foreign_key_check before the commit. The runner first
-- lists any existing row the CHECKs would refuse (constraint-report.ts) and stops.
--
-- The partial indexes' WHERE clauses keep their lists: the planner matches a query's condition to
-- them as written.

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
  effects TEXT CHECK (effects IS NULL OR (effects = 'SESSION' OR effects = 'BILLING_CHARGE' OR effects = 'TERMINAL_SALE')),
  CONSTRAINT transactions_type_check CHECK (type = 'PAYMENT' OR type = 'PAYOUT' OR type = 'MOTO'),
  CONSTRAINT transactions_flow_check CHECK (flow = 'MIT' OR flow = 'CIT' OR flow = 'MOTO' OR flow = 'SALE' OR flow = 'PAYOUT'),
  CONSTRAINT transactions_state_check CHECK (state = 'PENDING' OR state = 'PROCESSING' OR state = 'SUCCESS' OR state = 'FAILED'),
  CONSTRAINT transactions_sca_mode_check CHECK (sca_mode = 'SKIP' OR sca_mode = 'NORMAL' OR sca_mode = 'FORCE'),
  CONSTRAINT transactions_instant_capture_check CHECK (instant_capture = 'OFF' OR instant_capture = 'VOID' OR instant_capture = 'NO_VOID'),
  CONSTRAINT transactions_payment_method_type_check CHECK (payment_method_type = 'CARD' OR payment_method_type = 'VIPPS_MOBILEPAY' OR payment_method_type = 'MOBILEPAY_ONLINE' OR payment_method_type = 'APPLE_PAY' OR payment_method_type = 'GOOGLE_PAY' OR payment_method_type = 'SWISH' OR payment_method_type = 'VIABILL' OR payment_method_type = 'ANYDAY' OR payment_method_type = 'KLARNA'),
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
INSERT INTO transactions_new (id, account_id, point_of_sale_id, terminal_id, session_id, subscription_id, billing_agreement_charge_id, payment_method_id, payment_method_type, payment_method_sub_type, payment_method_expiry, payment_method_display_text, payment_method_holder_name, customer_id, type, flow, state, error_code, external_status_codes, sca_mode, amount, fee, currency, instant_capture, notification_url, reference, text_on_statement, descriptor, exemptions, attributes, client_ip, client_country, acquirer, acquirer_reference, authorized_amount, captured_amount, refunded_amount, voided_amount, paid_out_amount, pending_amount, created_at, updated_at, finalized_at, sca, pending_refund_amount, idempotency_key, effects)
SELECT id, account_id, point_of_sale_id, terminal_id, session_id, subscription_id, billing_agreement_charge_id, payment_method_id, payment_method_type, payment_method_sub_type, payment_method_expiry, payment_method_display_text, payment_method_holder_name, customer_id, type, flow, state, error_code, external_status_codes, sca_mode, amount, fee, currency, instant_capture, notification_url, reference, text_on_statement, descriptor, exemptions, attributes, client_ip, client_country, acquirer, acquirer_reference, authorized_amount, captured_amount, refunded_amount, voided_amount, paid_out_amount, pending_amount, created_at, updated_at, finalized_at, sca, pending_refund_amount, idempotency_key, effects FROM transactions;
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
CREATE INDEX transactions_legacy_display ON transactions (id) WHERE substr(payment_method_display_text, 1, 1) = '•';

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
  chain TEXT CHECK (chain IS NULL OR (chain = 'INSTANT_CAPTURE' OR chain = 'VOID_REMAINING')),
  CONSTRAINT operations_type_check CHECK (type = 'AUTHORIZATION' OR type = 'SALE' OR type = 'CAPTURE' OR type = 'REFUND' OR type = 'VOID' OR type = 'RENEW' OR type = 'PAYOUT'),
  CONSTRAINT operations_state_check CHECK (state = 'PROCESSING' OR state = 'SUCCESS' OR state = 'FAILED'),
  CONSTRAINT operations_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999)
);
INSERT INTO operations_new (id, account_id, transaction_id, point_of_sale_id, type, state, amount, reference_operation_id, error_code, external_status_codes, acquirer_reference, created_at, finalized_at, idempotency_key, chain)
SELECT id, account_id, transaction_id, point_of_sale_id, type, state, amount, reference_operation_id, error_code, external_status_codes, acquirer_reference, created_at, finalized_at, idempotency_key, chain FROM operations;
DROP TABLE operations;
ALTER TABLE operations_new RENAME TO operations;
CREATE INDEX operations_transaction ON operations (transaction_id, created_at, id);
CREATE INDEX operations_final ON operations (account_id, finalized_at, id) WHERE state IN ('SUCCESS', 'FAILED');
CREATE INDEX operations_final_pos ON operations (account_id, point_of_sale_id, finalized_at, id) WHERE state IN ('SUCCESS', 'FAILED');
CREATE INDEX operations_settleable ON operations (account_id, finalized_at, id) WHERE state = 'SUCCESS' AND type IN ('CAPTURE', 'SALE', 'REFUND', 'PAYOUT');

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
  CONSTRAINT jobs_state_check CHECK (state = 'queued' OR state = 'running' OR state = 'done' OR state = 'dead'),
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
  authorization_sealed TEXT,
  UNIQUE (transaction_id, event),
  CONSTRAINT notifications_state_check CHECK (state = 'PENDING' OR state = 'DELIVERED' OR state = 'FAILED'),
  CONSTRAINT notifications_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999),
  CONSTRAINT notifications_last_status_check CHECK (last_status IS NULL OR (typeof(last_status) = 'integer' AND last_status BETWEEN 100 AND 999))
);
INSERT INTO notifications_new (id, account_id, transaction_id, event, url, state, body, attempts, last_status, last_error, next_attempt_at, created_at, updated_at, delivered_at, authorization_sealed)
SELECT id, account_id, transaction_id, event, url, state, body, attempts, last_status, last_error, next_attempt_at, created_at, updated_at, delivered_at, authorization_sealed FROM notifications;
DROP TABLE notifications;
ALTER TABLE notifications_new RENAME TO notifications;
CREATE INDEX notifications_account ON notifications (account_id, transaction_id, created_at);

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
  order_lines TEXT,
  allowed_payment_methods TEXT,
  dynamic_amount INTEGER NOT NULL DEFAULT 0 CONSTRAINT sessions_dynamic_amount_check CHECK (dynamic_amount = 0 OR dynamic_amount = 1),
  minimum_age INTEGER CONSTRAINT sessions_minimum_age_check CHECK (minimum_age IS NULL OR (typeof(minimum_age) = 'integer' AND minimum_age BETWEEN 0 AND 99)),
  age_verification_country TEXT CONSTRAINT sessions_age_verification_country_check CHECK (age_verification_country IS NULL OR (typeof(age_verification_country) = 'text' AND age_verification_country GLOB '[A-Z][A-Z]')),
  age_verified INTEGER NOT NULL DEFAULT 0 CONSTRAINT sessions_age_verified_check CHECK (age_verified = 0 OR age_verified = 1),
  pre_auth_url TEXT,
  retry_url TEXT,
  return_url TEXT,
  report_expired INTEGER NOT NULL DEFAULT 0 CONSTRAINT sessions_report_expired_check CHECK (report_expired = 0 OR report_expired = 1),
  CONSTRAINT sessions_state_check CHECK (state = 'PENDING' OR state = 'PROCESSING' OR state = 'COMPLETED' OR state = 'EXPIRED'),
  CONSTRAINT sessions_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999),
  CONSTRAINT sessions_currency_check CHECK (typeof(currency) = 'text' AND currency GLOB '[A-Z][A-Z][A-Z]'),
  CONSTRAINT sessions_sca_mode_check CHECK (sca_mode = 'SKIP' OR sca_mode = 'NORMAL' OR sca_mode = 'FORCE'),
  CONSTRAINT sessions_timeout_minutes_check CHECK (typeof(timeout_minutes) = 'integer' AND timeout_minutes BETWEEN 1 AND 43200),
  CONSTRAINT sessions_instant_capture_check CHECK (instant_capture = 'OFF' OR instant_capture = 'VOID' OR instant_capture = 'NO_VOID'),
  CONSTRAINT sessions_max_attempts_check CHECK (typeof(max_attempts) = 'integer' AND max_attempts BETWEEN 1 AND 10),
  CONSTRAINT sessions_attempts_check CHECK (typeof(attempts) = 'integer' AND attempts BETWEEN 0 AND 999999999),
  CONSTRAINT sessions_report_failure_check CHECK (report_failure = 0 OR report_failure = 1)
);
INSERT INTO sessions_new (id, account_id, point_of_sale_id, client_key, state, amount, currency, reference, sca_mode, timeout_minutes, instant_capture, exemptions, text_on_statement, attributes, customer_id, max_attempts, attempts, notification_url, success_url, failure_url, report_failure, subscription_request, transaction_id, subscription_id, payment_method_id, error_code, expires_at, created_at, updated_at, finalized_at, order_lines, allowed_payment_methods, dynamic_amount, minimum_age, age_verification_country, age_verified, pre_auth_url, retry_url, return_url, report_expired)
SELECT id, account_id, point_of_sale_id, client_key, state, amount, currency, reference, sca_mode, timeout_minutes, instant_capture, exemptions, text_on_statement, attributes, customer_id, max_attempts, attempts, notification_url, success_url, failure_url, report_failure, subscription_request, transaction_id, subscription_id, payment_method_id, error_code, expires_at, created_at, updated_at, finalized_at, order_lines, allowed_payment_methods, dynamic_amount, minimum_age, age_verification_country, age_verified, pre_auth_url, retry_url, return_url, report_expired FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_account ON sessions (account_id, created_at, id);
CREATE INDEX sessions_open ON sessions (expires_at) WHERE state = 'PENDING';

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
  CONSTRAINT idempotency_keys_state_check CHECK (state = 'in_flight' OR state = 'completed'),
  CONSTRAINT idempotency_keys_response_status_check CHECK (response_status IS NULL OR (typeof(response_status) = 'integer' AND response_status BETWEEN 100 AND 599))
);
INSERT INTO idempotency_keys_new (account_id, method, path, key, request_hash, state, response_status, response_body, response_content_type, locked_until, created_at, expires_at, effect_key)
SELECT account_id, method, path, key, request_hash, state, response_status, response_body, response_content_type, locked_until, created_at, expires_at, effect_key FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- ingestion_counters
CREATE TABLE ingestion_counters_new (
  account_id TEXT NOT NULL REFERENCES accounts (id),
  channel TEXT NOT NULL,
  window_start TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (account_id, channel, window_start),
  CONSTRAINT ingestion_counters_channel_check CHECK (channel = 'mit' OR channel = 'mit_batch'),
  CONSTRAINT ingestion_counters_count_check CHECK (typeof(count) = 'integer' AND count >= 0)
);
INSERT INTO ingestion_counters_new (account_id, channel, window_start, count)
SELECT account_id, channel, window_start, count FROM ingestion_counters;
DROP TABLE ingestion_counters;
ALTER TABLE ingestion_counters_new RENAME TO ingestion_counters;
