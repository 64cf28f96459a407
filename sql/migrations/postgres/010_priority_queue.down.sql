DROP INDEX jobs_status_id;
CREATE INDEX jobs_status_id ON jobs (status, id)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
DROP INDEX jobs_queue_children;
DROP INDEX jobs_queue_load;
DROP INDEX jobs_queue;
ALTER TABLE jobs DROP COLUMN priority;
