-- Foundation schema (embedded SQLite). Timestamps are RFC 3339 UTC strings with milliseconds
-- (fixed width, so text order is time order); money is INTEGER minor units; JSON is TEXT.

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE accounts (
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
  deleted_at TEXT
);
CREATE INDEX accounts_created ON accounts (created_at, id);

CREATE TABLE credentials (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  kind TEXT NOT NULL,
  name TEXT,
  secret_hash TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX credentials_account ON credentials (account_id);

CREATE TABLE points_of_sale (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  domain TEXT NOT NULL,
  descriptor TEXT,
  webhook_authentication_sealed TEXT NOT NULL,
  hosted_configuration TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX points_of_sale_account ON points_of_sale (account_id, created_at, id);

CREATE TABLE terminals (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL REFERENCES points_of_sale (id),
  device_id TEXT,
  external_id TEXT,
  name TEXT,
  fallback INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX terminals_account ON terminals (account_id, created_at, id);
CREATE INDEX terminals_point_of_sale ON terminals (point_of_sale_id, created_at, id);
CREATE UNIQUE INDEX terminals_one_fallback ON terminals (point_of_sale_id) WHERE fallback = 1;

-- One row per payment of any flow: MIT, CIT, MOTO, physical SALE, PAYOUT.
-- The *_amount columns are the running aggregates of the transaction's SUCCESS operations,
-- updated in the same database transaction as the operation, with conditional updates that
-- keep captured <= authorized - voided and refunded <= captured.
CREATE TABLE transactions (
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
  finalized_at TEXT
);
-- Keyset pagination: every list is (account, [filter], created_at desc, id desc).
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

CREATE TABLE operations (
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
  finalized_at TEXT
);
CREATE INDEX operations_transaction ON operations (transaction_id, created_at, id);
CREATE INDEX operations_final ON operations (account_id, finalized_at, id) WHERE state IN ('SUCCESS', 'FAILED');
CREATE INDEX operations_final_pos ON operations (account_id, point_of_sale_id, finalized_at, id) WHERE state IN ('SUCCESS', 'FAILED');

CREATE TABLE idempotency_keys (
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
  PRIMARY KEY (account_id, method, path, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Durable jobs and outbox: written in the same database transaction as the change that causes them.
CREATE TABLE jobs (
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
  finished_at TEXT
);
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_state ON jobs (state, kind, updated_at);
