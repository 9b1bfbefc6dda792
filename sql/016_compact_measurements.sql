-- Issue 15: campaign-scale storage. Per-minibatch times and telemetry samples are stored in chunks (one row per
-- message the agent sent, at most 4,096 minibatches or 2,048 samples), columns as arrays, in tables partitioned by
-- campaign, so that a 5,000-epoch campaign takes ~8 bytes per minibatch instead of ~135 and a finished campaign is
-- dropped (or archived) in one step. Per-epoch statistics of the minibatches are kept in epochs at ingest, so
-- reports and analyses never read minibatches. Layout:
--   minibatch_chunks (campaign_id, run_id, epoch, first_idx, stall_s real[], compute_s real[], copy_s real[])
--       minibatches first_idx .. first_idx + n - 1 of one epoch, contiguous; copy_s NULL when nothing was copied
--       (elements NULL where a minibatch had none). Times as float4: rounding <= 6e-8 relative (under 4 ns
--       for a 100 ms minibatch), far below the timer's own jitter; readers see the shortest decimal of each.
--   sample_chunks (campaign_id, run_id, t_first, t_last, t_s float8[], cpu_util_pct, cpu_freq_mhz, power_w,
--       temp_max_c real[], mem_used_kb, disk_read_bytes int8[], core_n int2[], core_util_pct real[])
--       samples ordered by t_s; t_s exact (float8); sample i's per-core values are core_n[i] consecutive
--       elements of core_util_pct (the first sample of a run has none).
--   partitions: minibatch_chunks_c<ID>, sample_chunks_c<ID>, made when the campaign row is inserted and
--       dropped before it is deleted (create_/drop_measurement_partitions).
--   views minibatches and samples: the old per-row tables, same columns then campaign_id, expanded from the
--       chunks (ad-hoc queries, tests, samples_aligned, one run's samples for the dashboard: filter on
--       campaign_id too, or every partition is scanned); never read by reports or analyses.
--   epochs: mb_recorded (minibatches stored for the epoch), stall/compute mean, median, p95 (seconds),
--       minibatch_mean_ms (mean of stall + compute), refreshed by refresh_epoch_summary when the epoch or one
--       of its chunks lands.
-- Existing rows are moved into chunks (contiguous runs of indices, cut at multiples of 4,096; samples in
-- 2,048s) and the old tables dropped.

ALTER TABLE epochs
  ADD COLUMN mb_recorded integer NOT NULL DEFAULT 0,
  ADD COLUMN stall_mean_s double precision,
  ADD COLUMN stall_p50_s double precision,
  ADD COLUMN stall_p95_s double precision,
  ADD COLUMN compute_mean_s double precision,
  ADD COLUMN compute_p50_s double precision,
  ADD COLUMN compute_p95_s double precision,
  ADD COLUMN minibatch_mean_ms double precision;

CREATE TABLE minibatch_chunks (
  campaign_id bigint NOT NULL,
  run_id      bigint NOT NULL,
  epoch       integer NOT NULL,
  first_idx   integer NOT NULL CHECK (first_idx >= 0),
  stall_s     real[] NOT NULL,
  compute_s   real[] NOT NULL,
  copy_s      real[],
  CHECK (cardinality(stall_s) > 0 AND cardinality(compute_s) = cardinality(stall_s)
         AND (copy_s IS NULL OR cardinality(copy_s) = cardinality(stall_s))),
  PRIMARY KEY (campaign_id, run_id, epoch, first_idx)
) PARTITION BY LIST (campaign_id);

CREATE TABLE sample_chunks (
  campaign_id     bigint NOT NULL,
  run_id          bigint NOT NULL,
  t_first         double precision NOT NULL,
  t_last          double precision NOT NULL,
  t_s             double precision[] NOT NULL,
  cpu_util_pct    real[] NOT NULL,
  cpu_freq_mhz    real[] NOT NULL,
  mem_used_kb     bigint[] NOT NULL,
  disk_read_bytes bigint[] NOT NULL,
  power_w         real[] NOT NULL,
  temp_max_c      real[] NOT NULL,
  core_n          smallint[] NOT NULL,
  core_util_pct   real[] NOT NULL,
  CHECK (cardinality(t_s) > 0 AND t_first <= t_last
         AND cardinality(cpu_util_pct) = cardinality(t_s) AND cardinality(cpu_freq_mhz) = cardinality(t_s)
         AND cardinality(mem_used_kb) = cardinality(t_s) AND cardinality(disk_read_bytes) = cardinality(t_s)
         AND cardinality(power_w) = cardinality(t_s) AND cardinality(temp_max_c) = cardinality(t_s)
         AND cardinality(core_n) = cardinality(t_s)),
  PRIMARY KEY (campaign_id, run_id, t_first)
) PARTITION BY LIST (campaign_id);

-- A campaign's partitions, made as plain tables and attached (ATTACH takes SHARE UPDATE EXCLUSIVE on the parent,
-- so creating a campaign never waits for, nor blocks, ingest into other campaigns).
CREATE FUNCTION create_measurement_partitions(cid bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['minibatch_chunks', 'sample_chunks'] LOOP
    IF to_regclass(format('%I', t || '_c' || cid)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS, CHECK (campaign_id = %s))',
                     t || '_c' || cid, t, cid);
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES IN (%s)', t, t || '_c' || cid, cid);
    END IF;
  END LOOP;
END
$$;

CREATE FUNCTION drop_measurement_partitions(cid bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS %I, %I', 'minibatch_chunks_c' || cid, 'sample_chunks_c' || cid);
END
$$;

CREATE FUNCTION campaign_partitions_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM create_measurement_partitions(NEW.id);
    RETURN NEW;
  END IF;
  PERFORM drop_measurement_partitions(OLD.id);
  RETURN OLD;
END
$$;
CREATE TRIGGER campaigns_partitions_insert AFTER INSERT ON campaigns
  FOR EACH ROW EXECUTE FUNCTION campaign_partitions_trigger();
-- Before the delete cascades to runs: their rows then go with the partitions, not one run at a time.
CREATE TRIGGER campaigns_partitions_delete BEFORE DELETE ON campaigns
  FOR EACH ROW EXECUTE FUNCTION campaign_partitions_trigger();

SELECT create_measurement_partitions(id) FROM campaigns;

-- Statistics of the minibatches stored for (run, epoch) of campaign cid; n = 0 and NULLs when none is.
CREATE FUNCTION epoch_minibatch_stats(cid bigint, rid bigint, ep integer)
RETURNS TABLE (n integer, stall_mean double precision, stall_p50 double precision, stall_p95 double precision,
               compute_mean double precision, compute_p50 double precision, compute_p95 double precision,
               mb_ms double precision)
LANGUAGE sql STABLE AS $$
  SELECT count(*)::integer, avg(u.st), percentile_cont(0.5) WITHIN GROUP (ORDER BY u.st),
         percentile_cont(0.95) WITHIN GROUP (ORDER BY u.st), avg(u.co),
         percentile_cont(0.5) WITHIN GROUP (ORDER BY u.co), percentile_cont(0.95) WITHIN GROUP (ORDER BY u.co),
         1000.0 * avg(u.st::double precision + u.co::double precision)
  FROM minibatch_chunks c CROSS JOIN LATERAL unnest(c.stall_s, c.compute_s) AS u(st, co)
  WHERE c.campaign_id = cid AND c.run_id = rid AND c.epoch = ep
$$;

-- The statistics kept in the epoch's row (no-op without one): when a chunk lands after its epoch. (An epoch
-- landing computes them in its own INSERT: controller/pg_ingest.cpp.)
CREATE FUNCTION refresh_epoch_summary(cid bigint, rid bigint, ep integer) RETURNS void LANGUAGE sql AS $$
  UPDATE epochs e SET (mb_recorded, stall_mean_s, stall_p50_s, stall_p95_s, compute_mean_s, compute_p50_s,
                       compute_p95_s, minibatch_mean_ms) = (SELECT * FROM epoch_minibatch_stats(cid, rid, ep))
  WHERE e.run_id = rid AND e.epoch = ep;
$$;

-- ---- existing rows into chunks
-- Concatenates arrays of any lengths (array_agg needs equal ones): the per-core values of consecutive samples.
CREATE AGGREGATE array_cat_agg(anycompatiblearray) (SFUNC = array_cat, STYPE = anycompatiblearray, INITCOND = '{}');

INSERT INTO minibatch_chunks (campaign_id, run_id, epoch, first_idx, stall_s, compute_s, copy_s)
SELECT r.campaign_id, m.run_id, m.epoch, min(m.idx),
       array_agg(m.stall_s::real ORDER BY m.idx), array_agg(m.compute_s::real ORDER BY m.idx),
       CASE WHEN bool_or(m.copy_s IS NOT NULL) THEN array_agg(m.copy_s::real ORDER BY m.idx) END
FROM (SELECT *, idx - row_number() OVER (PARTITION BY run_id, epoch ORDER BY idx) AS island FROM minibatches) m
JOIN runs r ON r.id = m.run_id
GROUP BY r.campaign_id, m.run_id, m.epoch, m.island, m.idx / 4096;

INSERT INTO sample_chunks
SELECT r.campaign_id, s.run_id, min(s.t_s), max(s.t_s), array_agg(s.t_s ORDER BY s.t_s),
       array_agg(s.cpu_util_pct::real ORDER BY s.t_s), array_agg(s.cpu_freq_mhz::real ORDER BY s.t_s),
       array_agg(s.mem_used_kb ORDER BY s.t_s), array_agg(s.disk_read_bytes ORDER BY s.t_s),
       array_agg(s.power_w::real ORDER BY s.t_s), array_agg(s.temp_max_c::real ORDER BY s.t_s),
       array_agg(cardinality(s.core_util_pct)::smallint ORDER BY s.t_s),
       array_cat_agg(s.core_util_pct::real[] ORDER BY s.t_s)
FROM (SELECT *, (row_number() OVER (PARTITION BY run_id ORDER BY t_s) - 1) / 2048 AS block FROM samples) s
JOIN runs r ON r.id = s.run_id
GROUP BY r.campaign_id, s.run_id, s.block;

UPDATE epochs e SET mb_recorded = s.n, stall_mean_s = s.stall_mean, stall_p50_s = s.stall_p50,
       stall_p95_s = s.stall_p95, compute_mean_s = s.compute_mean, compute_p50_s = s.compute_p50,
       compute_p95_s = s.compute_p95, minibatch_mean_ms = s.mb_ms
FROM (SELECT run_id, epoch, count(*)::integer AS n, avg(stall_s) AS stall_mean,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY stall_s) AS stall_p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY stall_s) AS stall_p95,
             avg(compute_s) AS compute_mean,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY compute_s) AS compute_p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY compute_s) AS compute_p95,
             1000.0 * avg(compute_s + stall_s) AS mb_ms
      FROM minibatches GROUP BY run_id, epoch) s
WHERE e.run_id = s.run_id AND e.epoch = s.epoch;

DROP VIEW IF EXISTS analysis_mode_profile;
DROP VIEW IF EXISTS analysis_run_profile;
DROP VIEW IF EXISTS analysis_epochs;
DROP VIEW IF EXISTS samples_aligned;
DROP TRIGGER IF EXISTS runs_delete_measurements ON runs;
DROP FUNCTION IF EXISTS delete_run_measurements();
DROP TABLE minibatches;
DROP TABLE samples;

-- A deleted run's measurements go with it (a deleted campaign's went with its partitions already).
CREATE FUNCTION delete_run_measurements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM minibatch_chunks WHERE campaign_id = OLD.campaign_id AND run_id = OLD.id;
  DELETE FROM sample_chunks WHERE campaign_id = OLD.campaign_id AND run_id = OLD.id;
  RETURN OLD;
END
$$;
CREATE TRIGGER runs_delete_measurements AFTER DELETE ON runs
  FOR EACH ROW EXECUTE FUNCTION delete_run_measurements();

-- The per-row forms, expanded from the chunks.
CREATE VIEW minibatches AS
SELECT c.run_id, c.epoch, (c.first_idx + u.i - 1)::integer AS idx, u.stall_s, u.compute_s, u.copy_s, c.campaign_id
FROM minibatch_chunks c
CROSS JOIN LATERAL unnest(c.stall_s, c.compute_s, c.copy_s) WITH ORDINALITY AS u(stall_s, compute_s, copy_s, i);

CREATE VIEW samples AS
SELECT c.run_id, u.t_s, u.cpu_util_pct, u.cpu_freq_mhz, u.mem_used_kb, u.disk_read_bytes, u.power_w,
       c.core_util_pct[u.core_off + 1 : u.core_off + u.core_n] AS core_util_pct, u.temp_max_c, c.campaign_id
FROM sample_chunks c
CROSS JOIN LATERAL (
  SELECT v.*, coalesce(sum(v.core_n) OVER (ORDER BY v.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::integer
           AS core_off
  FROM unnest(c.t_s, c.cpu_util_pct, c.cpu_freq_mhz, c.mem_used_kb, c.disk_read_bytes, c.power_w, c.temp_max_c,
              c.core_n) WITH ORDINALITY
       AS v(t_s, cpu_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, power_w, temp_max_c, core_n, i)) u;

-- This migration also created the views samples_aligned, analysis_epochs, analysis_run_profile,
-- analysis_mode_profile; they are defined once in sql/views.sql, which the controller applies after the migrations.
-- A database that ran this migration kept them until a later migration dropped them or views.sql replaced them.
