-- Payment links: a shareable URL to the hosted payment window of one CIT session. The session
-- holds the payment; the link mirrors its outcome (PAID / EXPIRED) or is CANCELLED by the merchant.
-- The session's immutable facts (amount, currency, reference, point of sale, client key, expiry)
-- are copied so that reads and lists need no join.
CREATE TABLE payment_links (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  session_id TEXT NOT NULL UNIQUE REFERENCES sessions (id),
  -- The session's public client key: the link's URL is the payment window /pay/{clientKey}.
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
  updated_at TEXT NOT NULL
);
CREATE INDEX payment_links_page ON payment_links (account_id, created_at, id);
CREATE INDEX payment_links_state ON payment_links (account_id, state, created_at, id);

-- The daily sweep looks for live subscriptions by payment method across accounts.
CREATE INDEX subscriptions_live_payment_method ON subscriptions (payment_method_id) WHERE state IN ('ACTIVE', 'PENDING');
