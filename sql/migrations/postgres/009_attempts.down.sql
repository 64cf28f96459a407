DROP TRIGGER jobs_record_attempts ON jobs;
DROP FUNCTION jobs_record_attempts();
DROP TABLE job_attempts;
