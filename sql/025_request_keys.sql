-- Issue 32: use cases idempotent under retry. The controller mints a key once per submission and once per claim,
-- before the database work; a retry of the same use case (its first attempt committed, its answer lost) finds
-- what that attempt did by its key instead of doing it again: one campaign per submission, one claim per ask.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS request_key text;
CREATE UNIQUE INDEX IF NOT EXISTS campaigns_request_key ON campaigns (request_key) WHERE request_key IS NOT NULL;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS claim_key text;
