-- CIT sessions (hosted payment window) and subscriptions (stored payment method + merchant agreement).

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  point_of_sale_id TEXT NOT NULL,
  -- Public client key of the payment window (embedded in the merchant's page, so not a secret).
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
  finalized_at TEXT
);
CREATE INDEX sessions_account ON sessions (account_id, created_at, id);
CREATE INDEX sessions_open ON sessions (expires_at) WHERE state = 'PENDING';

CREATE TABLE subscriptions (
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
  -- Agreed amount (PATCH); not part of the wire record.
  amount INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX subscriptions_page ON subscriptions (account_id, created_at, id);
CREATE INDEX subscriptions_customer ON subscriptions (account_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL;
CREATE INDEX subscriptions_state ON subscriptions (account_id, state, created_at, id);
CREATE INDEX subscriptions_payment_method ON subscriptions (account_id, payment_method_id);
