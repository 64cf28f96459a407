ALTER TABLE jobs DROP COLUMN dispatcher, DROP COLUMN lease_term;
ALTER TABLE lease DROP COLUMN term, DROP COLUMN acquired_at;
ALTER TABLE nodes DROP COLUMN lease_ms, DROP COLUMN host_id, DROP COLUMN hostname, DROP COLUMN pid, DROP COLUMN proc_start;
