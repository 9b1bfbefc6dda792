-- Test fixture: the analysis views as a controller of migrations 013-015 left them (before sql/views.sql existed,
-- each migration that changed a view re-created them all). tests/integration/test_pg_chunks.cpp applies it after
-- migrations 001-015 to stand for such a database before migration 016, which must drop these views before it
-- drops the per-row minibatches and samples tables they read. Copied from migrations 005 (samples_aligned) and 013 as
-- they were; never edit it to follow views.sql.

-- Samples on the controller's clock.
CREATE VIEW samples_aligned AS
SELECT s.*, r.agent_id,
       r.agent_t0_unix_s + s.t_s - coalesce(a.clock_offset_s, 0) AS controller_unix_s
FROM samples s JOIN runs r ON r.id = s.run_id LEFT JOIN agents a ON a.id = r.agent_id;

-- One row per run with every axis of its configuration. The power mode columns come from the applied,
-- read-back state when the agent reported one (named, partial and reference modes alike), else from the
-- requested explicit settings (NULL where neither says).
CREATE VIEW analysis_runs AS
SELECT r.id AS run_id,
       r.campaign_id,
       c.name AS campaign,
       r.status,
       coalesce(nullif(r.facts->>'device_class', ''), r.device) AS device_class,
       coalesce(r.facts->>'backend', '') AS backend,
       coalesce(r.facts->>'backend', '') = 'sim' AS simulated,
       coalesce(a.name, r.facts->>'name', '') AS instance,
       (r.config->>'model') || coalesce('/' || nullif(r.config->>'dataset', ''), '') AS workload,
       r.config->>'model' AS model,
       r.config->>'dataset' AS dataset,
       coalesce(nullif(r.applied->>'mode_name', ''), r.config->'power_mode'->>'name') AS mode_name,
       coalesce(nullif((r.applied->>'cores_online')::integer, 0), (r.config->'power_mode'->>'cores')::integer) AS cores,
       coalesce(nullif((r.applied->>'cpu_khz')::double precision, 0),
                (r.config->'power_mode'->>'cpu_khz')::double precision) / 1000.0 AS cpu_mhz,
       coalesce(nullif((r.applied->>'gpu_hz')::double precision, 0),
                (r.config->'power_mode'->>'gpu_hz')::double precision) / 1000000.0 AS gpu_mhz,
       coalesce(nullif((r.applied->>'emc_hz')::double precision, 0),
                (r.config->'power_mode'->>'emc_hz')::double precision) / 1000000.0 AS emc_mhz,
       coalesce((r.applied->>'clocks_pinned')::boolean, (r.config->>'pin_clocks')::boolean, false) AS pin_clocks,
       coalesce(nullif(r.applied->>'fan', ''), CASE WHEN (r.config->>'fan_max')::boolean THEN 'max' ELSE 'auto' END) AS fan,
       coalesce(r.reference_state, r.config->'power_mode' IS NULL) AS reference_state,
       (r.config->>'batch_size')::integer AS batch_size,
       (r.config->>'workers')::integer AS workers,
       (r.config->>'prefetch')::integer AS prefetch,
       coalesce((r.config->>'threads')::integer, 1) AS threads,
       coalesce((r.config->>'seed')::bigint, 1) AS seed,
       coalesce((r.config->>'repetition')::integer, 0) AS repetition,
       coalesce((r.config->>'max_minibatches')::integer, 0) AS max_minibatches,
       coalesce((r.config->>'drop_caches')::boolean, false) AS drop_caches,
       coalesce(r.storage, nullif(r.config->>'data', ''), 'default') AS storage,
       coalesce(r.storage_device, '') AS storage_device,
       r.page_cache_dropped,
       r.applied,
       coalesce(r.compute_device, '') AS compute_device,
       -- What the run trained on as an axis ("cuda" for any GPU: one board class has one) and what its
       -- stall/compute times mean (agent/compute_timing.hpp): runs differing in either are never pooled.
       CASE WHEN r.compute_device LIKE 'cuda%' THEN 'cuda' ELSE coalesce(r.compute_device, '') END AS compute,
       coalesce(nullif(r.config->>'timing', ''), 'paper') AS timing,
       jsonb_strip_nulls(jsonb_build_object(
         'kernel', r.facts->>'kernel',
         'torch_version', r.facts->>'torch_version',
         'compiler', r.facts->>'compiler',
         'git_sha', r.facts->>'git_sha',
         'l4t', r.facts->>'l4t',
         'jetpack', r.facts->>'jetpack')) AS software
FROM runs r
JOIN campaigns c ON c.id = r.campaign_id
LEFT JOIN agents a ON a.id = r.agent_id;

-- One row per epoch with every configuration column of analysis_runs. other_s = E2E time not spent in fetch
-- stalls or compute. minibatch_ms is the mean of the minibatches' compute+stall time when they were recorded,
-- else E2E / minibatches. power_w is the epoch's mean power, else energy / E2E time (never a run-wide mean:
-- an epoch without its own power stays NULL). start_unix_s/end_unix_s: the window on the controller's clock.
CREATE VIEW analysis_epochs AS
SELECT ar.*,
       e.epoch,
       e.epoch = 0 AS warmup,
       e.e2e_s,
       e.stall_s,
       e.compute_s,
       e.copy_s,
       greatest(e.e2e_s - e.stall_s - e.compute_s, 0) AS other_s,
       e.minibatches,
       e.energy_j,
       e.loss,
       coalesce(mb.minibatch_ms, 1000.0 * e.e2e_s / nullif(e.minibatches, 0)) AS minibatch_ms,
       coalesce(e.mean_power_w, e.energy_j / nullif(e.e2e_s, 0)) AS power_w,
       e.power_coverage,
       e.t_start_s,
       e.t_end_s,
       r.agent_t0_unix_s + e.t_start_s - coalesce(ag.clock_offset_s, 0) AS start_unix_s,
       r.agent_t0_unix_s + e.t_end_s - coalesce(ag.clock_offset_s, 0) AS end_unix_s,
       e.cores_start, e.cores_end,
       e.cpu_khz_start, e.cpu_khz_end, e.gpu_hz_start, e.gpu_hz_end, e.emc_hz_start, e.emc_hz_end,
       e.throttled,
       e.throttle_reason,
       e.read_mb_s, e.read_iops, e.cache_start_frac, e.cache_end_frac
FROM analysis_runs ar
JOIN runs r ON r.id = ar.run_id
LEFT JOIN agents ag ON ag.id = r.agent_id
JOIN epochs e ON e.run_id = ar.run_id
LEFT JOIN (SELECT run_id, epoch, 1000.0 * avg(compute_s + stall_s) AS minibatch_ms
           FROM minibatches GROUP BY run_id, epoch) mb
       ON mb.run_id = e.run_id AND mb.epoch = e.epoch;

-- Per run: epoch 0 apart from the mean of epochs 1+ (the papers' convention).
CREATE VIEW analysis_run_profile AS
SELECT run_id, campaign_id, campaign, device_class, backend, simulated, instance, workload, mode_name, cores, cpu_mhz,
       gpu_mhz, emc_mhz, pin_clocks, fan, batch_size, workers, prefetch, threads, seed, repetition, max_minibatches,
       drop_caches, storage, compute, timing,
       count(*) FILTER (WHERE NOT warmup) AS later_epochs,
       max(e2e_s) FILTER (WHERE warmup) AS epoch0_e2e_s,
       max(energy_j) FILTER (WHERE warmup) AS epoch0_energy_j,
       avg(e2e_s) FILTER (WHERE NOT warmup) AS later_e2e_s,
       avg(stall_s) FILTER (WHERE NOT warmup) AS later_stall_s,
       avg(compute_s) FILTER (WHERE NOT warmup) AS later_compute_s,
       avg(other_s) FILTER (WHERE NOT warmup) AS later_other_s,
       avg(energy_j) FILTER (WHERE NOT warmup) AS later_energy_j,
       avg(minibatch_ms) FILTER (WHERE NOT warmup) AS later_minibatch_ms,
       avg(power_w) FILTER (WHERE NOT warmup) AS later_power_w,
       bool_or(throttled) AS throttled
FROM analysis_epochs
GROUP BY run_id, campaign_id, campaign, device_class, backend, simulated, instance, workload, mode_name, cores, cpu_mhz,
         gpu_mhz, emc_mhz, pin_clocks, fan, batch_size, workers, prefetch, threads, seed, repetition, max_minibatches,
         drop_caches, storage, compute, timing;

-- Per (campaign, board class, instance, workload, full configuration): the profile over epochs 1+ of every
-- run in that configuration (repetitions pooled: they are the same configuration), with the per-epoch
-- minibatch times (for the sec. 5.7 per-epoch regression).
CREATE VIEW analysis_mode_profile AS
SELECT campaign_id, campaign, device_class, instance, workload, mode_name, cores, cpu_mhz, gpu_mhz, emc_mhz,
       pin_clocks, fan, batch_size, workers, prefetch, threads, seed, max_minibatches, drop_caches, storage, compute,
       timing,
       bool_or(simulated) AS simulated,
       count(DISTINCT run_id) AS runs,
       count(*) AS epochs,
       avg(minibatch_ms) AS minibatch_ms,
       1000.0 * avg(power_w) AS power_mw,
       avg(e2e_s) AS epoch_s,
       avg(energy_j) AS energy_j,
       array_agg(minibatch_ms ORDER BY run_id, epoch) AS epoch_minibatch_ms,
       bool_or(throttled) AS throttled
FROM analysis_epochs
WHERE NOT warmup AND minibatch_ms IS NOT NULL
GROUP BY campaign_id, campaign, device_class, instance, workload, mode_name, cores, cpu_mhz, gpu_mhz, emc_mhz,
         pin_clocks, fan, batch_size, workers, prefetch, threads, seed, max_minibatches, drop_caches, storage, compute,
         timing;
