-- Each log chunk names its stream (engine.LogStream): the job's own output,
-- its protocol lines (jobctl:progress, jobctl:warning), or jobctl's notes
-- about the run. Chunks stored before hold all three mixed, as output.
--
-- A column with a constant default is added without rewriting the table;
-- the check is NOT VALID so that adding it does not scan the old chunks
-- either (they all hold the default), while every new chunk is checked.
ALTER TABLE job_logs
    ADD COLUMN stream TEXT NOT NULL DEFAULT 'output',
    ADD CONSTRAINT job_logs_stream CHECK (stream IN ('output', 'protocol', 'note')) NOT VALID;
