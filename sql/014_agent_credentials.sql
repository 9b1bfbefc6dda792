-- Per-agent credentials (issue 12, docs/SECURITY.md): the SHA-256 of the secret the controller issued the agent
-- when it enrolled. A name with a row here is accepted only from an agent presenting that secret; `jetsweep agents
-- revoke NAME` deletes the row, and the next registration of the name enrolls it again. A table of its own so
-- that the hash never reaches runs.facts (claim_run copies the agents row there as provenance).
CREATE TABLE agent_credentials (
  agent_id          bigint PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
  credential_sha256 text NOT NULL CHECK (credential_sha256 ~ '^[0-9a-f]{64}$'),
  issued_at         timestamptz NOT NULL DEFAULT now()
);
