-- Issue 31: what each run trained, as its agent measured it before the first epoch (proto::WorkloadFacts as JSON:
-- model_sha256, parameters, forward_macs, dataset_fingerprint, dataset_files, dataset_bytes). NULL for runs not
-- started yet and runs of agents older than the field. analysis_runs reads it (sql/views.sql).
ALTER TABLE runs ADD COLUMN IF NOT EXISTS workload jsonb;
