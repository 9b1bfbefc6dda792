-- The hottest thermal zone of the board at each telemetry sample (degrees C; proto::Sample::temp_max_c). NULL where
-- the board has no readable zone, on simulated boards (no thermal model), and in samples of agents older than this.
ALTER TABLE samples ADD COLUMN temp_max_c double precision;
