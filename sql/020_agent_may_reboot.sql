-- Whether an agent may reboot its board into an nvpmodel mode with other GPU masks (agent --allow-reboot,
-- proto::DeviceFacts::may_reboot): with the live modes of sql/019, `jetsweep validate --estimate` refuses runs
-- of modes that no enrolled board of their class runs as booted or may reboot into (issue 28).
ALTER TABLE agents ADD COLUMN may_reboot boolean NOT NULL DEFAULT false;
