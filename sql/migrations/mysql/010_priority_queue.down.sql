ALTER TABLE jobs
    DROP INDEX jobs_queue_children,
    DROP INDEX jobs_queue_load,
    DROP INDEX jobs_queue,
    DROP COLUMN queue_child_status,
    DROP COLUMN queue_status,
    DROP COLUMN priority;
