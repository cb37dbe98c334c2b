-- Issue 13 part 5: the request rate limits of INTERFACE §5 for the deployment as a whole.

-- One token bucket per (category, merchant[, transaction]) as "category:key". A take is one
-- INSERT ... ON CONFLICT DO UPDATE that refills by the time since `updated_ms` and takes a token
-- under the row's lock, so the processes of a deployment share every bucket. `granted` is the
-- answer of the latest take (RETURNING sees only the new row). Rows not touched for longer than
-- the slowest refill are full buckets and are swept.
--
-- UNLOGGED: a take writes no WAL, so its commit does not wait for a WAL flush (measured: a take
-- costs about one round trip instead of a disk flush, bench/rate-limit.bench.ts). The price is
-- that a database crash empties the table — every bucket is full again — which a rate limit can
-- afford; the table is not on streaming replicas either (after a failover the buckets start full).
CREATE UNLOGGED TABLE rate_limit_buckets (
  bucket TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,
  updated_ms DOUBLE PRECISION NOT NULL,
  granted BOOLEAN NOT NULL,
  CONSTRAINT rate_limit_buckets_tokens_check CHECK (tokens >= 0)
);
