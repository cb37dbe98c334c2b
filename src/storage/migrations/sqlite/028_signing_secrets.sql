-- Signing secrets of signed deliveries (INTERFACE §11.10, src/shared/signing.ts): a point of sale's
-- signs its callbacks, a webhook's its deliveries. Each is a `whsec_` secret sealed with the vault
-- key (never in clear). After a rotation the replaced secret keeps signing until
-- previous_signing_secret_expires_at (24 h of service time); both previous columns are null otherwise.
-- signing_secret_sealed is null only in rows written before this migration: the service gives such a
-- row its secret on first need, with an update that only fills a null (so every process ends up with
-- the same one). The same columns, with the same constraint names, are in postgres/028_signing_secrets.sql.
ALTER TABLE points_of_sale ADD COLUMN signing_secret_sealed TEXT;
ALTER TABLE points_of_sale ADD COLUMN previous_signing_secret_sealed TEXT
  CONSTRAINT points_of_sale_previous_signing_secret_check CHECK (previous_signing_secret_sealed IS NULL OR signing_secret_sealed IS NOT NULL);
ALTER TABLE points_of_sale ADD COLUMN previous_signing_secret_expires_at TEXT
  CONSTRAINT points_of_sale_previous_signing_secret_expires_check CHECK ((previous_signing_secret_expires_at IS NULL) = (previous_signing_secret_sealed IS NULL));
ALTER TABLE webhooks ADD COLUMN signing_secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_signing_secret_sealed TEXT
  CONSTRAINT webhooks_previous_signing_secret_check CHECK (previous_signing_secret_sealed IS NULL OR signing_secret_sealed IS NOT NULL);
ALTER TABLE webhooks ADD COLUMN previous_signing_secret_expires_at TEXT
  CONSTRAINT webhooks_previous_signing_secret_expires_check CHECK ((previous_signing_secret_expires_at IS NULL) = (previous_signing_secret_sealed IS NULL));
