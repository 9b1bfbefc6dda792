-- Issue 33: adaptive profiling in campaigns. A plan (power_mode: {generate: adaptive}) profiles a few of its
-- candidate modes for one (board class, workload) in rounds the controller chooses; each round is created once
-- (its runs with it, in one transaction) and the plan's state is here, so a controller restarted mid-round
-- neither loses nor repeats a round. `spec`: common/adaptive_plan.hpp (to_json). `fit`: the latest predictor
-- summary (controller/adaptive_planner.hpp: its LOO errors, the predicted front and the picks per budget).
CREATE TABLE IF NOT EXISTS adaptive_plans (
  id bigserial PRIMARY KEY,
  campaign_id bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  plan_index integer NOT NULL,
  device_class text NOT NULL,
  workload text NOT NULL,
  spec jsonb NOT NULL,
  state text NOT NULL DEFAULT 'profiling' CHECK (state IN ('profiling', 'done', 'failed')),
  rounds integer NOT NULL DEFAULT 0,
  error text,
  fit jsonb,
  UNIQUE (campaign_id, plan_index)
);
CREATE TABLE IF NOT EXISTS adaptive_rounds (
  plan_id bigint NOT NULL REFERENCES adaptive_plans(id) ON DELETE CASCADE,
  round integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  runs integer NOT NULL,
  fit jsonb,
  PRIMARY KEY (plan_id, round)
);
ALTER TABLE runs ADD COLUMN IF NOT EXISTS adaptive_plan_id bigint REFERENCES adaptive_plans(id) ON DELETE CASCADE;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS adaptive_round integer;
CREATE INDEX IF NOT EXISTS runs_adaptive_plan ON runs (adaptive_plan_id) WHERE adaptive_plan_id IS NOT NULL;
