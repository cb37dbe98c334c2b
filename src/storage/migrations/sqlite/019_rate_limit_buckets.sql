-- Issue 13 part 5: the request rate limits of INTERFACE §5 for the deployment as a whole.

-- The table of the PostgreSQL limiter (see the PostgreSQL migration), kept in step with it. A
-- SQLite deployment is one process: it keeps its buckets in memory and leaves this table empty.
CREATE TABLE rate_limit_buckets (
  bucket TEXT PRIMARY KEY,
  tokens REAL NOT NULL,
  updated_ms REAL NOT NULL,
  granted INTEGER NOT NULL,
  CONSTRAINT rate_limit_buckets_tokens_check CHECK (tokens >= 0),
  CONSTRAINT rate_limit_buckets_granted_check CHECK (granted IN (0, 1))
);
