-- The 3-D Secure provider of an acquirer agreement (INTERFACE §13): which 3DS Server runs the
-- EMV 3-D Secure for the account, with the API key of the merchant there sealed with the
-- vault key as the acquirer key is. Both null: no provider (the simulated step of the sandbox, or no
-- 3-D Secure). Rows stay append-only: a PUT writes them with the rest of the agreement.
-- The same columns are in sqlite/026_three_d_secure_agreements.sql.
ALTER TABLE acquirer_agreements ADD COLUMN three_ds_provider TEXT
  CONSTRAINT acquirer_agreements_three_ds_provider_check CHECK (three_ds_provider IS NULL OR three_ds_provider IN ('3dsecure.io'));
ALTER TABLE acquirer_agreements ADD COLUMN three_ds_api_key_sealed TEXT
  CONSTRAINT acquirer_agreements_three_ds_api_key_sealed_check CHECK ((three_ds_api_key_sealed IS NULL) = (three_ds_provider IS NULL));
