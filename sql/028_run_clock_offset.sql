-- The agent's clock offset (its clock minus the controller's, seconds) as estimated when the run's run_started was
-- stored: it puts the run's times (agent_t0_unix_s + t_s) on the controller's clock. Before this column the views
-- used the agent's latest estimate, so a clock step on the board (NTP setting a Jetson's clock long after boot)
-- moved every earlier run of that agent by the step. NULL for runs stored before it: the agent's estimate is used.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS clock_offset_s double precision;
