-- The board an agent drives (jetson: host + sysfs root; sim: host + class/instance; '' = none): the
-- dispatcher runs at most one run per board, however many agents claim it.
ALTER TABLE agents ADD COLUMN board_id text NOT NULL DEFAULT '';
-- Board classes a run's model does not fit on (the papers' out-of-memory facts): never dispatched there.
ALTER TABLE runs ADD COLUMN unfit_classes text[] NOT NULL DEFAULT '{}';
