ALTER TABLE job_logs DROP CONSTRAINT job_logs_stream, DROP COLUMN stream;
