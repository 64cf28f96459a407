-- Each log chunk names its stream (engine.LogStream): the job's own output,
-- its protocol lines (jobctl:progress, jobctl:warning), or jobctl's notes
-- about the run. Chunks stored before hold all three mixed, as output.
ALTER TABLE job_logs ADD COLUMN stream TEXT NOT NULL DEFAULT 'output'
    CHECK (stream IN ('output', 'protocol', 'note'));
