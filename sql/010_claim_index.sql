-- Claiming a run looks, campaign by campaign (priority first), for the lowest-id queued run of each device
-- value the agent matches ('any', its class, its name): one short range scan each instead of sorting
-- every queued run.
CREATE INDEX runs_queued_by_campaign ON runs (campaign_id, device, id) WHERE status = 'queued';
