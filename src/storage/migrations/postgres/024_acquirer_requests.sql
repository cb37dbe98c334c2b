-- Real acquirers (INTERFACE §12): at most once on the wire, in doubt until resolved.

-- A request to an acquirer that does not take the same request twice (Clearhaus), written in a
-- commit of its own BEFORE the request goes out: a process that dies between sending and recording
-- the answer leaves this row behind, so nobody sends it again. `in_doubt_at`: no answer came (or
-- none was recorded); the operation stays PROCESSING until an operator resolves it. Repeatable
-- acquirers (the simulator) write no row.
CREATE TABLE acquirer_requests (
  operation_id TEXT PRIMARY KEY REFERENCES operations (id),
  account_id TEXT NOT NULL REFERENCES accounts (id),
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  acquirer TEXT NOT NULL,
  call TEXT NOT NULL CONSTRAINT acquirer_requests_call_check CHECK (call IN ('authorize', 'capture', 'refund', 'void', 'renew', 'payout')),
  amount BIGINT NOT NULL CONSTRAINT acquirer_requests_amount_check CHECK (amount >= 0 AND amount <= 999999999),
  currency TEXT NOT NULL,
  sent_at TIMESTAMPTZ NOT NULL,
  in_doubt_at TIMESTAMPTZ,
  in_doubt_reason TEXT,
  -- The id the acquirer named in an answer that left the outcome in doubt (a Clearhaus 50000).
  acquirer_reference TEXT,
  resolved_at TIMESTAMPTZ,
  resolution TEXT CONSTRAINT acquirer_requests_resolution_check CHECK (resolution IS NULL OR resolution IN ('SUCCEEDED', 'FAILED'))
);
-- The operator's list of payments in doubt.
CREATE INDEX acquirer_requests_in_doubt ON acquirer_requests (in_doubt_at, operation_id) WHERE in_doubt_at IS NOT NULL AND resolved_at IS NULL;

-- The acquirer agreement (023) that authorized the transaction: its later operations go to the
-- same acquirer with the same credentials, whatever the account's agreement is now. Null: the
-- sandbox simulator (no agreement). No foreign key: agreement rows are never deleted.
ALTER TABLE transactions ADD COLUMN acquirer_agreement_id TEXT;

-- A stored card's series at the acquirer (Clearhaus series[]): its type, set by the first approved
-- payment that stored it, and the latest approved authorization id, which each later
-- merchant-initiated payment references and moves on when approved.
ALTER TABLE payment_methods ADD COLUMN series_type TEXT CONSTRAINT payment_methods_series_type_check CHECK (series_type IS NULL OR series_type IN ('recurring', 'unscheduled'));
ALTER TABLE payment_methods ADD COLUMN series_reference TEXT;
ALTER TABLE payment_methods ADD COLUMN series_agreement_id TEXT;
