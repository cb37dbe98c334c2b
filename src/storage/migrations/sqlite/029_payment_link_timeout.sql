-- Payment links live up to 86,400 minutes (60 days, INTERFACE §11.2), which is also their default;
-- the sessions they start were held to 43,200. SQLite cannot change a CHECK in place: the table is
-- rebuilt as in 022_check_lists_as_comparisons.sql, by the same constraint names, with its indexes.

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
  CONSTRAINT sessions_timeout_minutes_check CHECK (typeof(timeout_minutes) = 'integer' AND timeout_minutes BETWEEN 1 AND 86400),
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
