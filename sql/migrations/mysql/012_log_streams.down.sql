ALTER TABLE job_logs DROP COLUMN stream;
