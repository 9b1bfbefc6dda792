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

-- This migration also created the view samples_aligned; it is defined once in sql/views.sql, which the controller
-- applies after the migrations. A database that ran this migration kept it until a later migration dropped it or
-- views.sql replaced it.
