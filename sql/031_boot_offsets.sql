-- The boot clock's offset of each boot of an agent (its boot clock minus the controller's wall clock), kept past the
-- boot: a run stamped in a boot that is no longer the agent's kept one (a journal replayed after a reboot) is still
-- placed by its boot clock, and a run of a boot read before that boot's first probe is placed again by it once the
-- probe comes (Store::record_clock, Store::record_boot_offset). One row per (agent, boot); agents.boot_offset_s is
-- the kept boot's value, and the row of that boot holds the same.
CREATE TABLE IF NOT EXISTS agent_boot_offsets (
  agent_id bigint NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  boot_id text NOT NULL,
  offset_s double precision NOT NULL,
  PRIMARY KEY (agent_id, boot_id)
);
INSERT INTO agent_boot_offsets (agent_id, boot_id, offset_s)
SELECT id, boot_id, boot_offset_s FROM agents WHERE boot_id IS NOT NULL AND boot_offset_s IS NOT NULL
ON CONFLICT DO NOTHING;
