-- Issue 28: the GPU's power gating is part of the state a run executes in. The agent reports the TPC and FBP
-- masks it read back from the board in run_started's applied state (runs.applied ->> 'tpc_pg_mask',
-- 'fbp_pg_mask'); the analysis views get a `gpu_gating` column from them ('tpc_pg=240', '' when the board showed
-- none) and group by it, so a sweep on a default-booted AGX Orin (MODE_30W's 4 of 8 TPCs) is never pooled with
-- one on all 8. The views are as in 013 (analysis_runs), 016 (analysis_epochs, analysis_run_profile) and 017
-- (analysis_mode_profile), plus that column.

DROP VIEW IF EXISTS analysis_mode_profile;
DROP VIEW IF EXISTS analysis_run_profile;
DROP VIEW IF EXISTS analysis_epochs;
DROP VIEW IF EXISTS analysis_runs;

-- This migration also created the views analysis_runs, analysis_epochs, analysis_run_profile,
-- analysis_mode_profile; they are defined once in sql/views.sql, which the controller applies after the migrations.
-- A database that ran this migration kept them until a later migration dropped them or views.sql replaced them.
