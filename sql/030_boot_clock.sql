-- The boot clock (CLOCK_BOOTTIME, which steps of a board's wall clock do not move) beside the wall clock.
-- agents.boot_id, agents.boot_offset_s: the boot the agent's kept clock estimate was taken in and, from the same
-- probe, its boot clock minus the controller's wall clock (NULL from agents that do not send it).
-- runs.agent_boot_id, runs.agent_t0_boot_s: the run's start on its agent's boot clock and the boot it counts from
-- (RunStarted). A run started in the boot of its agent's kept estimate gets its clock_offset_s from the boot clock
-- (agent_t0_unix_s - (agent_t0_boot_s - boot_offset_s)), so a step of the wall clock between the agent's last
-- probe and the run's start no longer leaves the run with the offset before the step (Store::record_clock).
ALTER TABLE agents ADD COLUMN IF NOT EXISTS boot_id text;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS boot_offset_s double precision;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS agent_boot_id text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS agent_t0_boot_s double precision;
