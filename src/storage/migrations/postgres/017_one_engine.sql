-- One payment engine (issue 10): every operation is driven by the `payment.drive` job, every
-- capture and void holds a reservation (pending_amount) while in flight, instant captures included,
-- and what follows an operation is recorded with it instead of living in a request's memory.

-- What an operation's answer starts: INSTANT_CAPTURE marks the capture (and its void) an
-- authorization with instantCapture VOID / NO_VOID drives; VOID_REMAINING a capture whose success
-- voids the uncaptured rest (capture with voidRemaining).
ALTER TABLE operations ADD COLUMN chain TEXT CONSTRAINT operations_chain_check CHECK (chain IS NULL OR chain IN ('INSTANT_CAPTURE', 'VOID_REMAINING'));

-- The effects the flow that started the payment declared for its final answer (session, billing
-- charge or terminal sale), applied in the commit that makes it final.
ALTER TABLE transactions ADD COLUMN effects TEXT CONSTRAINT transactions_effects_check CHECK (effects IS NULL OR effects IN ('SESSION', 'BILLING_CHARGE', 'TERMINAL_SALE'));
UPDATE transactions SET effects = 'SESSION' WHERE flow = 'CIT' AND session_id IS NOT NULL;
UPDATE transactions SET effects = 'BILLING_CHARGE' WHERE billing_agreement_charge_id IS NOT NULL;
UPDATE transactions SET effects = 'TERMINAL_SALE' WHERE flow = 'SALE';

-- Captures and voids an authorization's instant capture started before this version.
UPDATE operations SET chain = 'INSTANT_CAPTURE'
WHERE type IN ('CAPTURE', 'VOID') AND idempotency_key IS NULL
  AND EXISTS (SELECT 1 FROM transactions t WHERE t.id = operations.transaction_id AND t.instant_capture IN ('VOID', 'NO_VOID'))
  AND EXISTS (SELECT 1 FROM operations a WHERE a.transaction_id = operations.transaction_id AND a.type = 'AUTHORIZATION' AND a.finalized_at = operations.created_at);

-- Instant captures in flight held no reservation before; from now on every capture and void in
-- flight is counted in pending_amount.
UPDATE transactions SET pending_amount = (
  SELECT coalesce(sum(o.amount), 0) FROM operations o
  WHERE o.transaction_id = transactions.id AND o.state = 'PROCESSING' AND o.type IN ('CAPTURE', 'VOID')
)
WHERE id IN (SELECT transaction_id FROM operations WHERE state = 'PROCESSING' AND type IN ('CAPTURE', 'VOID'));

-- The lifecycle resolver's jobs become drive jobs (their payload, {operationId}, is one).
UPDATE jobs SET kind = 'payment.drive', dedupe_key = 'payment.drive:' || substr(dedupe_key, 19)
WHERE kind = 'operations.resolve' AND dedupe_key LIKE 'operation-resolve:%';
UPDATE jobs SET kind = 'payment.drive' WHERE kind = 'operations.resolve';
