-- Scheduling by storage medium and memory: what each agent offers, what each run needs.
ALTER TABLE agents ADD COLUMN storage text[] NOT NULL DEFAULT '{}';   -- media from --storage NAME=DIR
ALTER TABLE runs
  ADD COLUMN min_mem_bytes bigint NOT NULL DEFAULT 0,   -- the agent's MemTotal must be at least this
  ADD COLUMN storage text;                              -- medium its data is on (data: "@NAME"), NULL = none
