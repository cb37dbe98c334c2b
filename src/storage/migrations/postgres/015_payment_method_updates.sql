-- Issue 11, parts 1 and 4 (INTERFACE §11.1, §11.4).

-- §11.4 account updater: a card enrolled takes the issuer's new expiry or reissued card at once.
-- Booleans as 0/1, as elsewhere. The same column and constraint are in sqlite/015.
ALTER TABLE payment_methods ADD COLUMN account_updates_enabled INTEGER NOT NULL DEFAULT 0
  CONSTRAINT payment_methods_account_updates_enabled_check CHECK (account_updates_enabled IN (0, 1));

-- §11.1 masked numbers (41111111XXXX1111): cards stored before kept a 6-digit BIN and the display
-- text "•••• 1111", and their transactions copied that text. The first 8 digits exist only sealed
-- in the vault, so the service rewrites those rows at start-up (PaymentMethodsService
-- .upgradeLegacyCards); these partial indexes find what is left to rewrite without a table scan,
-- and are empty once it is done.
CREATE INDEX payment_methods_legacy_display ON payment_methods (id) WHERE substr(display_text, 1, 1) = '•';
CREATE INDEX transactions_legacy_display ON transactions (id) WHERE substr(payment_method_display_text, 1, 1) = '•';
