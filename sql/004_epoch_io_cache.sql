-- Per-epoch storage IO of the dataset's block device and page-cache residency of the dataset files.
ALTER TABLE epochs
  ADD COLUMN read_mb_s double precision,
  ADD COLUMN read_iops double precision,
  ADD COLUMN cache_start_frac double precision,
  ADD COLUMN cache_end_frac double precision;
