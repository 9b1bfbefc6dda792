-- Issue 29: the seconds a run waited for room in its agent's outbox before an epoch began (agents before this
-- column send none: NULL). The column is named as the measure in proto::EpochMeasures (common/protocol.hpp).
ALTER TABLE epochs ADD COLUMN IF NOT EXISTS paused_before_s double precision;
