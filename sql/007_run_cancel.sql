-- Cancelling runs that are already executing: the controller asks their agents to stop (cancel_run) and
-- keeps what they measured; until the agent confirms, cancel_requested records the intent, so a run whose
-- agent vanishes or re-registers is cancelled rather than requeued.
ALTER TABLE runs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
CREATE INDEX runs_cancel_pending ON runs (agent_id) WHERE cancel_requested AND status IN ('assigned', 'running');
