-- A customer's 3-D Secure authentication in the payment window (INTERFACE §13), between the Pay
-- button and the authorization: the 3DS Server's transaction id (the window correlates by it, not by
-- cookies), the version and 3DS Method URL of the card range, when the method's notification came,
-- the challenge's ACS, and the card as typed (with its CVC, needed by the authorization), sealed
-- with the vault key and erased in the commit that ends the attempt. No authentication value is
-- kept: the ARes or RReq goes to the acquirer and is gone. `steps`: what each step answered (a JSON
-- list: PREAUTH, METHOD, ARES, CHALLENGE, RREQ, DECISION with transStatus and reasons, never an
-- authentication value), shown in the timeline of `transaction_id`, the payment it led to.
CREATE TABLE three_ds_attempts (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  session_id TEXT NOT NULL REFERENCES sessions (id),
  three_ds_server_trans_id TEXT NOT NULL,
  message_version TEXT NOT NULL,
  method_url TEXT,
  state TEXT NOT NULL CONSTRAINT three_ds_attempts_state_check CHECK (state IN ('METHOD', 'CHALLENGE', 'DONE')),
  card_sealed TEXT,
  amount INTEGER NOT NULL CONSTRAINT three_ds_attempts_amount_check CHECK (typeof(amount) = 'integer' AND amount BETWEEN 0 AND 999999999),
  acs_url TEXT,
  acs_trans_id TEXT,
  transaction_id TEXT,
  steps TEXT NOT NULL DEFAULT '[]',
  method_completed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CONSTRAINT three_ds_attempts_card_check CHECK ((state = 'DONE') = (card_sealed IS NULL))
);
CREATE UNIQUE INDEX three_ds_attempts_server_trans_id ON three_ds_attempts (three_ds_server_trans_id);
CREATE INDEX three_ds_attempts_transaction ON three_ds_attempts (transaction_id) WHERE transaction_id IS NOT NULL;
