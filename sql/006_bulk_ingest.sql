-- Bulk measurement tables (samples, minibatches): ownership is checked once per ingested chunk, with the
-- run's row locked FOR SHARE in the ingest transaction, instead of by a per-row foreign-key trigger that
-- halved COPY throughput. Deleting a run still deletes its rows.
ALTER TABLE samples DROP CONSTRAINT samples_run_id_fkey;
ALTER TABLE minibatches DROP CONSTRAINT minibatches_run_id_fkey;

CREATE FUNCTION delete_run_measurements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM samples WHERE run_id = OLD.id;
  DELETE FROM minibatches WHERE run_id = OLD.id;
  RETURN OLD;
END
$$;
CREATE TRIGGER runs_delete_measurements AFTER DELETE ON runs
  FOR EACH ROW EXECUTE FUNCTION delete_run_measurements();
