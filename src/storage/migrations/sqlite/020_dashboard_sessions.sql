-- Dashboard sessions (issue 12), shared by every process of a deployment and kept across restarts.
-- Only a SHA-256 hash of the session id (the cookie) is stored, so a copy of the table cannot be
-- used to sign in; the key the session acts with and its CSRF token are sealed with the vault key
-- (AES-256-GCM, src/security/secret-box.ts). key_hash (SHA-256 of the key) bounds the sessions per
-- key. The same table, with the same constraint names, is in postgres/020_dashboard_sessions.sql.
CREATE TABLE dashboard_sessions (
  id_hash TEXT NOT NULL PRIMARY KEY,
  key_hash TEXT NOT NULL,
  key_sealed TEXT NOT NULL,
  csrf_token_sealed TEXT NOT NULL,
  tier TEXT NOT NULL CONSTRAINT dashboard_sessions_tier_check CHECK (tier IN ('merchant', 'operator')),
  account_id TEXT,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
-- Pruning (absolute and idle expiry) and the per-key bound.
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_last_seen ON dashboard_sessions (last_seen_at);
CREATE INDEX dashboard_sessions_key ON dashboard_sessions (key_hash, created_at);
