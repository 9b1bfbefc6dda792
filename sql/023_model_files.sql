-- Model files users bring (TorchScript exports; docs/WORKLOADS.md "Your own model", issue 31), kept once by the
-- SHA-256 of their bytes, in chunks of proto::kModelChunkBytes (the last one shorter). A file is uploaded chunk by
-- chunk, then completed: the controller checks the chunks' sizes and hash before it sets bytes and chunks, and only a
-- completed file is served to agents (fetch_model) or accepted in a campaign (model: torchscript:<sha256>).
CREATE TABLE model_files (
  sha256        text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes         bigint CHECK (bytes >= 0),        -- NULL until the upload is complete
  chunks        integer CHECK (chunks >= 0),
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz
);
CREATE TABLE model_file_chunks (
  sha256  text NOT NULL REFERENCES model_files(sha256) ON DELETE CASCADE,
  idx     integer NOT NULL CHECK (idx >= 0),
  data    bytea NOT NULL,
  PRIMARY KEY (sha256, idx)
);
