-- The effect of an idempotent request is tagged, in the same commit, with the key's effect key:
-- a request retried after a crash (its claim never completed) finds the effect and returns it
-- instead of moving money a second time.
ALTER TABLE idempotency_keys ADD COLUMN effect_key TEXT;
ALTER TABLE transactions ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX transactions_idempotency ON transactions (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Operations are looked up among their transaction's few operations: no index of their own.
ALTER TABLE operations ADD COLUMN idempotency_key TEXT;
