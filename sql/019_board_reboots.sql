-- Reboots for nvpmodel modes whose GPU masks differ from the booted ones (issue 28, proto::RebootPending,
-- docs/DEPLOY.md "Reboots").
-- An agent that reboots its board for a run is away until away_until: the lease sweep keeps its runs (and so
-- its board) until then, and requeues them, naming the reboot, if it has not come back. Registration clears it.
ALTER TABLE agents ADD COLUMN away_until timestamptz;
-- The nvpmodel modes (names and ids) that apply on the board as booted (proto::DeviceFacts::live_modes): claims
-- hand the board runs of these modes first, so it reboots as rarely as possible.
ALTER TABLE agents ADD COLUMN live_modes text[] NOT NULL DEFAULT '{}';

-- One row per reboot an agent announced; a resend of the same announcement (journal replay) is the same row.
CREATE TABLE board_reboots (
  run_id            bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  agent_id          bigint NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  requested_unix_s  double precision NOT NULL,   -- the agent's clock when it asked
  mode_name         text NOT NULL,
  nvpmodel_id       integer NOT NULL,
  tpc_pg_mask_from  bigint,
  tpc_pg_mask_to    bigint,
  fbp_pg_mask_from  bigint,
  fbp_pg_mask_to    bigint,
  expected_back_s   double precision NOT NULL,
  recorded_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, agent_id, requested_unix_s)
);
CREATE INDEX board_reboots_by_agent ON board_reboots (agent_id);
