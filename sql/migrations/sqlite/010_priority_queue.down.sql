DROP INDEX jobs_queue_children;
DROP INDEX jobs_queue_load;
DROP INDEX jobs_queue;
ALTER TABLE jobs DROP COLUMN priority;
