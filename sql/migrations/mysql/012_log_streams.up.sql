-- Each log chunk names its stream (engine.LogStream): the job's own output,
-- its protocol lines (jobctl:progress, jobctl:warning), or jobctl's notes
-- about the run. Chunks stored before hold all three mixed, as output.
--
-- Added without a CHECK of the names: with one, MySQL and MariaDB copy the
-- whole table, where a column with a constant default alone is added in
-- place. The store refuses any other stream before it writes.
ALTER TABLE job_logs ADD COLUMN stream VARCHAR(16) NOT NULL DEFAULT 'output';
