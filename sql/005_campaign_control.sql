-- Campaign control (priority, pause/resume/cancel), lost/cancelled runs, clock offsets, sample alignment.
ALTER TABLE campaigns
  ADD COLUMN state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'cancelled')),
  ADD COLUMN priority integer NOT NULL DEFAULT 0;

ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('queued', 'assigned', 'running', 'done', 'failed', 'lost', 'cancelled'));
-- The agent's wall clock (Unix seconds) at t_s = 0 of the run's samples; with the agent's clock offset
-- this puts samples from different boards on the controller's time line.
ALTER TABLE runs ADD COLUMN agent_t0_unix_s double precision;

-- NTP-style estimate with the smallest round trip seen: agent clock minus controller clock.
ALTER TABLE agents
  ADD COLUMN clock_offset_s double precision,
  ADD COLUMN clock_rtt_s double precision,
  ADD COLUMN clock_measured_at timestamptz;

-- Samples on the controller's clock.
CREATE VIEW samples_aligned AS
SELECT s.*, r.agent_id,
       r.agent_t0_unix_s + s.t_s - coalesce(a.clock_offset_s, 0) AS controller_unix_s
FROM samples s JOIN runs r ON r.id = s.run_id LEFT JOIN agents a ON a.id = r.agent_id;
