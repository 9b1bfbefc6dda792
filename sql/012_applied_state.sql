-- Issues 10 and 11: every number carries the board state it was taken in and the device it trained on, and
-- analysis never pools unlike configurations.
--   runs: the state the run executed in, applied and read back by the agent (run_started message);
--   epochs: the epoch's window on the run's monotonic timeline, power coverage, clocks read back at its start
--           and end, and whether a clock left the applied setting (throttled);
--   agents: what each trains on and the readiness checks that failed (jetsweep-agent doctor);
--   analysis views: every matrix axis as a column, the power mode from the applied state.

ALTER TABLE agents
  ADD COLUMN IF NOT EXISTS accelerator text NOT NULL DEFAULT '',      -- "cuda:0 (NAME)", "cpu", "simulated", "none: WHY"
  ADD COLUMN IF NOT EXISTS not_ready text[] NOT NULL DEFAULT '{}';    -- failed readiness checks, "name: detail"

ALTER TABLE runs
  ADD COLUMN IF NOT EXISTS applied jsonb,                  -- proto::BoardState read back; NULL = not reported
  ADD COLUMN IF NOT EXISTS reference_state boolean,        -- the run named no power mode (class reference state)
  ADD COLUMN IF NOT EXISTS storage_device text,            -- block device backing the dataset ('' = unknown)
  ADD COLUMN IF NOT EXISTS page_cache_dropped boolean,
  ADD COLUMN IF NOT EXISTS compute_device text;            -- what the run trained on: "cpu", "cuda:0 (NAME)", ...

ALTER TABLE epochs
  ADD COLUMN IF NOT EXISTS t_start_s double precision,     -- seconds since t_s = 0 of the run (agent monotonic)
  ADD COLUMN IF NOT EXISTS t_end_s double precision,
  ADD COLUMN IF NOT EXISTS power_coverage double precision,
  ADD COLUMN IF NOT EXISTS cores_start integer,
  ADD COLUMN IF NOT EXISTS cores_end integer,
  ADD COLUMN IF NOT EXISTS cpu_khz_start double precision,
  ADD COLUMN IF NOT EXISTS cpu_khz_end double precision,
  ADD COLUMN IF NOT EXISTS gpu_hz_start double precision,
  ADD COLUMN IF NOT EXISTS gpu_hz_end double precision,
  ADD COLUMN IF NOT EXISTS emc_hz_start double precision,
  ADD COLUMN IF NOT EXISTS emc_hz_end double precision,
  ADD COLUMN IF NOT EXISTS throttled boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS throttle_reason text NOT NULL DEFAULT '';

DROP VIEW IF EXISTS analysis_mode_profile;
DROP VIEW IF EXISTS analysis_run_profile;
DROP VIEW IF EXISTS analysis_epochs;
DROP VIEW IF EXISTS analysis_runs;

-- This migration also created the views analysis_runs, analysis_epochs, analysis_run_profile,
-- analysis_mode_profile; they are defined once in sql/views.sql, which the controller applies after the migrations.
-- A database that ran this migration kept them until a later migration dropped them or views.sql replaced them.
