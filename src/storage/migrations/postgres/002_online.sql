-- Online payments (PostgreSQL): the card vault / payment methods, callback deliveries with
-- their attempt log, and the SCA result of a transaction.

-- A stored card keeps its number only sealed (AES-256-GCM, pan_sealed); the clear columns hold
-- what PCI DSS allows to show: BIN (first six), last four, length, expiry, scheme data.
CREATE TABLE payment_methods (
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
  created_at TIMESTAMPTZ NOT NULL,
  deleted_at TIMESTAMPTZ
);
CREATE INDEX payment_methods_account ON payment_methods (account_id, created_at, id);
CREATE INDEX payment_methods_customer ON payment_methods (account_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL;

-- One callback per (transaction, final state); its id is the X-Delivery-Id header, and its body
-- is fixed at the first attempt so that every retry sends the same document.
CREATE TABLE notifications (
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
  next_attempt_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  delivered_at TIMESTAMPTZ,
  UNIQUE (transaction_id, event)
);
CREATE INDEX notifications_account ON notifications (account_id, transaction_id, created_at);

CREATE TABLE notification_attempts (
  id TEXT PRIMARY KEY,
  notification_id TEXT NOT NULL REFERENCES notifications (id),
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX notification_attempts_notification ON notification_attempts (notification_id, attempt);

ALTER TABLE transactions ADD COLUMN sca TEXT;
