-- Analysis views (issue 6): runs with their workload, board class and instance, power mode and
-- software; per-epoch rows with epoch 0 (warm-up) apart from epochs 1+; per-mode profiles.

-- This migration created the views analysis_runs, analysis_epochs, analysis_run_profile, analysis_mode_profile;
-- they are defined once in sql/views.sql, which the controller applies after the migrations. A database that ran
-- this migration kept them until a later migration dropped them or views.sql replaced them.
