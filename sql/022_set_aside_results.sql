-- Results an agent measured for a run it no longer held (issue 29): the run was requeued to another agent, declared
-- lost or cancelled while the agent was away or slow, or the message is a late copy that does not match what is
-- stored. They are never written into the run's rows (results are append-only per attempt) and never dropped
-- unseen: each is kept here once, as the frame it came in (proto::decode reads it back; its id is 0), and counted
-- in its campaign's status (set_aside_results). A resend of one that is here already is a duplicate. Dropping the
-- campaign drops them.
CREATE TABLE set_aside_results (
  id            bigserial PRIMARY KEY,
  campaign_id   bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  run_id        bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  agent_id      bigint NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  message_type  text NOT NULL,          -- proto::type_name: epoch_result, minibatches, samples, run_started, ...
  reason        text NOT NULL,          -- the run's state when it came, e.g. 'the run is running on agent 7'
  frame         jsonb NOT NULL,
  frame_md5     text NOT NULL,          -- of the frame's text: the same message twice is one row
  received_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_id, agent_id, frame_md5)
);
CREATE INDEX set_aside_results_by_campaign ON set_aside_results (campaign_id);
