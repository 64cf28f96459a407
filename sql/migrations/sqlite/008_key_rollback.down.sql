DROP INDEX jobs_rollback_pending;
ALTER TABLE jobs DROP COLUMN rollback_of;
ALTER TABLE jobs DROP COLUMN rollback_job_id;
ALTER TABLE jobs DROP COLUMN rollback_type;
ALTER TABLE jobs DROP COLUMN key_position;
