-- The board an agent drives (jetson: host + sysfs root; sim: host + class/instance; '' = none): the
-- dispatcher runs at most one run per board, however many agents claim it.
ALTER TABLE agents ADD COLUMN IF NOT EXISTS board_id text NOT NULL DEFAULT '';
-- Board classes a run's model does not fit on (the papers' out-of-memory facts): never dispatched there.
ALTER TABLE runs ADD COLUMN unfit_classes text[] NOT NULL DEFAULT '{}';
-- Queued runs stored before this migration: RAM is min_memory_mb only, the fit facts per class.
UPDATE runs SET min_mem_bytes = coalesce((config->>'min_memory_mb')::bigint, 0) * 1048576,
  unfit_classes = CASE
    WHEN config->>'model' IN ('resnet18', 'resnet18_imagenet') THEN '{xavier-nx,nano}'::text[]
    WHEN config->>'model' IN ('mobilenet_v3', 'mobilenet_v3_large') THEN '{nano}'::text[]
    ELSE '{}'::text[] END
WHERE status = 'queued';
