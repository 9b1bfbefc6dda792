-- Per-core CPU utilisation of each telemetry sample (percent, cpu0 first).
ALTER TABLE samples ADD COLUMN core_util_pct double precision[] NOT NULL DEFAULT '{}';
