-- Analysis views (issue 6): runs with their workload, board class and instance, power mode and
-- software; per-epoch rows with epoch 0 (warm-up) apart from epochs 1+; per-mode profiles.
-- (Its views are now defined in sql/views.sql: see below.)

-- This migration also created the views analysis_runs, analysis_epochs, analysis_run_profile, analysis_mode_profile;
-- they are defined once in sql/views.sql, which the controller applies after the migrations (a database
-- migrated before keeps its views until then).
