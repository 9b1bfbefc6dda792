-- Analysis views (issue 6): runs with their workload, board class and instance, power mode and
-- software; per-epoch rows with epoch 0 (warm-up) apart from epochs 1+; per-mode profiles.
-- Idempotent: CREATE OR REPLACE VIEW only.

-- One row per run. Workload = model[/dataset]; board class = the agent's device_class at run time
-- (runs.facts), else the class the run asked for; instance = the agent's name. Power mode settings
-- come from config.power_mode in MHz (NULL for a named nvpmodel mode or no mode at all).
CREATE OR REPLACE VIEW analysis_runs AS
SELECT r.id AS run_id,
       r.campaign_id,
       c.name AS campaign,
       r.status,
       coalesce(nullif(r.facts->>'device_class', ''), r.device) AS device_class,
       coalesce(r.facts->>'backend', '') AS backend,
       coalesce(a.name, r.facts->>'name', '') AS instance,
       (r.config->>'model') || coalesce('/' || nullif(r.config->>'dataset', ''), '') AS workload,
       r.config->'power_mode'->>'name' AS mode_name,
       (r.config->'power_mode'->>'cores')::integer AS cores,
       (r.config->'power_mode'->>'cpu_khz')::double precision / 1000.0 AS cpu_mhz,
       (r.config->'power_mode'->>'gpu_hz')::double precision / 1000000.0 AS gpu_mhz,
       (r.config->'power_mode'->>'emc_hz')::double precision / 1000000.0 AS emc_mhz,
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

-- One row per epoch. other_s = E2E time not spent in fetch stalls or GPU compute. minibatch_ms is the
-- mean of the minibatches' compute+stall time when they were recorded, else E2E / minibatches.
-- power_w is the epoch's mean power, else energy / E2E time, else the run's mean sampled power.
CREATE OR REPLACE VIEW analysis_epochs AS
SELECT ar.run_id, ar.campaign_id, ar.campaign, ar.status, ar.device_class, ar.backend, ar.instance, ar.workload,
       ar.mode_name, ar.cores, ar.cpu_mhz, ar.gpu_mhz, ar.emc_mhz, ar.software,
       e.epoch,
       e.epoch = 0 AS warmup,
       e.e2e_s,
       e.stall_s,
       e.compute_s,
       greatest(e.e2e_s - e.stall_s - e.compute_s, 0) AS other_s,
       e.minibatches,
       e.energy_j,
       coalesce(mb.minibatch_ms, 1000.0 * e.e2e_s / nullif(e.minibatches, 0)) AS minibatch_ms,
       coalesce(e.mean_power_w, e.energy_j / nullif(e.e2e_s, 0), sp.power_w) AS power_w
FROM analysis_runs ar
JOIN epochs e ON e.run_id = ar.run_id
LEFT JOIN (SELECT run_id, epoch, 1000.0 * avg(compute_s + stall_s) AS minibatch_ms
           FROM minibatches GROUP BY run_id, epoch) mb
       ON mb.run_id = e.run_id AND mb.epoch = e.epoch
LEFT JOIN (SELECT run_id, avg(power_w) AS power_w FROM samples WHERE power_w IS NOT NULL GROUP BY run_id) sp
       ON sp.run_id = e.run_id;

-- Per run: epoch 0 apart from the mean of epochs 1+ (the papers' convention).
CREATE OR REPLACE VIEW analysis_run_profile AS
SELECT run_id, campaign_id, campaign, device_class, backend, instance, workload, mode_name, cores, cpu_mhz, gpu_mhz,
       emc_mhz,
       count(*) FILTER (WHERE NOT warmup) AS later_epochs,
       max(e2e_s) FILTER (WHERE warmup) AS epoch0_e2e_s,
       max(energy_j) FILTER (WHERE warmup) AS epoch0_energy_j,
       avg(e2e_s) FILTER (WHERE NOT warmup) AS later_e2e_s,
       avg(stall_s) FILTER (WHERE NOT warmup) AS later_stall_s,
       avg(compute_s) FILTER (WHERE NOT warmup) AS later_compute_s,
       avg(other_s) FILTER (WHERE NOT warmup) AS later_other_s,
       avg(energy_j) FILTER (WHERE NOT warmup) AS later_energy_j,
       avg(minibatch_ms) FILTER (WHERE NOT warmup) AS later_minibatch_ms,
       avg(power_w) FILTER (WHERE NOT warmup) AS later_power_w
FROM analysis_epochs
GROUP BY run_id, campaign_id, campaign, device_class, backend, instance, workload, mode_name, cores, cpu_mhz, gpu_mhz,
         emc_mhz;

-- Per (campaign, board class, instance, workload, power mode): the profile over epochs 1+ of every
-- run in that mode, with the per-epoch minibatch times (for the sec. 5.7 per-epoch regression).
CREATE OR REPLACE VIEW analysis_mode_profile AS
SELECT campaign_id, campaign, device_class, instance, workload, mode_name, cores, cpu_mhz, gpu_mhz, emc_mhz,
       bool_or(backend = 'sim') AS simulated,
       count(DISTINCT run_id) AS runs,
       count(*) AS epochs,
       avg(minibatch_ms) AS minibatch_ms,
       1000.0 * avg(power_w) AS power_mw,
       avg(e2e_s) AS epoch_s,
       avg(energy_j) AS energy_j,
       array_agg(minibatch_ms ORDER BY run_id, epoch) AS epoch_minibatch_ms
FROM analysis_epochs
WHERE NOT warmup AND minibatch_ms IS NOT NULL
GROUP BY campaign_id, campaign, device_class, instance, workload, mode_name, cores, cpu_mhz, gpu_mhz, emc_mhz;
