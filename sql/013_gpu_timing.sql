-- Issue 11: the GPU timing path. What a minibatch's times mean depends on the run's `timing` key (paper:
-- every minibatch synchronised, as the papers' harness; pipelined: read on the GPU's compute lane, the
-- host-to-device copy its own column), so:
--   minibatches, epochs: copy_s, the host-to-device copy (NULL where nothing was copied: CPU, simulator);
--   analysis views (as in 012, plus): `compute` (cuda, cpu, simulated) and `timing` are configuration axes,
--           so a CPU run on a Jetson or a pipelined run is never pooled with paper-timed GPU runs.

ALTER TABLE minibatches ADD COLUMN IF NOT EXISTS copy_s double precision;
ALTER TABLE epochs ADD COLUMN IF NOT EXISTS copy_s double precision;

DROP VIEW IF EXISTS analysis_mode_profile;
DROP VIEW IF EXISTS analysis_run_profile;
DROP VIEW IF EXISTS analysis_epochs;
DROP VIEW IF EXISTS analysis_runs;

-- This migration also created the views analysis_runs, analysis_epochs, analysis_run_profile,
-- analysis_mode_profile; they are defined once in sql/views.sql, which the controller applies after the migrations.
-- A database that ran this migration kept them until a later migration dropped them or views.sql replaced them.
