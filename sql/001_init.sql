-- jetsweep schema v1: fleet, campaigns, runs and their measurements.

CREATE TABLE agents (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL UNIQUE,
  hostname      text NOT NULL,
  cpus          integer NOT NULL,
  mem_bytes     bigint NOT NULL,
  backend       text NOT NULL,            -- host | jetson | sim
  device_class  text NOT NULL,
  kernel        text NOT NULL,
  torch_version text NOT NULL,
  compiler      text NOT NULL,
  git_sha       text NOT NULL,
  connected     boolean NOT NULL DEFAULT false,
  first_seen    timestamptz NOT NULL DEFAULT now(),
  last_seen     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE campaigns (
  id           bigserial PRIMARY KEY,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  source_file  text NOT NULL,
  source_yaml  text NOT NULL,
  run_count    integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_name ON campaigns (name, id);

CREATE TABLE runs (
  id           bigserial PRIMARY KEY,
  campaign_id  bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  ordinal      integer NOT NULL,
  config       jsonb NOT NULL,
  device       text NOT NULL,
  epochs       integer NOT NULL,
  status       text NOT NULL DEFAULT 'queued'
               CHECK (status IN ('queued', 'assigned', 'running', 'done', 'failed', 'lost')),
  agent_id     bigint REFERENCES agents(id),
  facts        jsonb,                     -- the agent's device facts when it ran (provenance)
  attempts     integer NOT NULL DEFAULT 0,
  error        text NOT NULL DEFAULT '',
  queued_at    timestamptz NOT NULL DEFAULT now(),
  assigned_at  timestamptz,
  started_at   timestamptz,
  finished_at  timestamptz,
  wall_s       double precision,
  UNIQUE (campaign_id, ordinal)
);
CREATE INDEX runs_queue ON runs (status, id) WHERE status = 'queued';
CREATE INDEX runs_agent ON runs (agent_id) WHERE status IN ('assigned', 'running');

CREATE TABLE epochs (
  run_id        bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  epoch         integer NOT NULL,
  e2e_s         double precision NOT NULL,
  stall_s       double precision NOT NULL,
  compute_s     double precision NOT NULL,
  minibatches   integer NOT NULL,
  energy_j      double precision,         -- NULL: no power sensor
  mean_power_w  double precision,
  loss          double precision NOT NULL,
  PRIMARY KEY (run_id, epoch)
);

CREATE TABLE minibatches (
  run_id     bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  epoch      integer NOT NULL,
  idx        integer NOT NULL,
  stall_s    double precision NOT NULL,
  compute_s  double precision NOT NULL,
  PRIMARY KEY (run_id, epoch, idx)
);

CREATE TABLE samples (
  run_id           bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  t_s              double precision NOT NULL,   -- seconds since the run started on the agent
  cpu_util_pct     double precision NOT NULL,
  cpu_freq_mhz     double precision,
  mem_used_kb      bigint NOT NULL,
  disk_read_bytes  bigint NOT NULL,
  power_w          double precision,
  PRIMARY KEY (run_id, t_s)
);

-- Per-run summary the papers report: epoch 0 apart from the mean of epochs 1+.
CREATE VIEW run_epoch_summary AS
SELECT r.id AS run_id, r.campaign_id,
       max(e.e2e_s)  FILTER (WHERE e.epoch = 0) AS epoch0_e2e_s,
       max(e.stall_s) FILTER (WHERE e.epoch = 0) AS epoch0_stall_s,
       max(e.compute_s) FILTER (WHERE e.epoch = 0) AS epoch0_compute_s,
       max(e.energy_j) FILTER (WHERE e.epoch = 0) AS epoch0_energy_j,
       avg(e.e2e_s)  FILTER (WHERE e.epoch >= 1) AS later_e2e_s,
       avg(e.stall_s) FILTER (WHERE e.epoch >= 1) AS later_stall_s,
       avg(e.compute_s) FILTER (WHERE e.epoch >= 1) AS later_compute_s,
       avg(e.energy_j) FILTER (WHERE e.epoch >= 1) AS later_energy_j,
       count(e.epoch) AS epochs_done
FROM runs r LEFT JOIN epochs e ON e.run_id = r.id
GROUP BY r.id, r.campaign_id;
