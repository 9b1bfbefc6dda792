-- The agent's clock offset (its clock minus the controller's, seconds) as estimated when the run's run_started was
-- stored: it puts the run's times (agent_t0_unix_s + t_s) on the controller's clock. Before this column the views
-- used the agent's latest estimate, so a clock step on the board (NTP setting a Jetson's clock long after boot)
-- moved every earlier run of that agent by the step. NULL until its agent has an estimate (record_clock fills it in).
ALTER TABLE runs ADD COLUMN IF NOT EXISTS clock_offset_s double precision;
-- Runs already started take their agent's estimate now: they stop moving with its later ones.
UPDATE runs r SET clock_offset_s = a.clock_offset_s FROM agents a
WHERE a.id = r.agent_id AND r.agent_t0_unix_s IS NOT NULL AND r.clock_offset_s IS NULL;
