DROP TRIGGER jobs_record_attempt;
DROP TABLE job_attempts;
