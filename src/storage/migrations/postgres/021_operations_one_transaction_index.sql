-- An operation is found among its transaction's operations (a handful: the authorization and its
-- captures, refunds, voids) through operations_transaction (transaction_id, created_at, id).
-- operations_transaction_type (transaction_id, type, state) served the same lookups, and cost a
-- B-tree entry at a random place per operation created and another per state change (every
-- answer): issue 10's write cost per payment.
DROP INDEX operations_transaction_type;
