-- Ended jobs found by when they ended, so a prune costs each batch its own
-- size however long the table's history. Without it a purge read every
-- ended job in id order per batch. Only ended jobs are in it: a job gets
-- its one entry with its final write. SQLite uses a partial index only for
-- a query that repeats its WHERE term as written, which job_purge_filter
-- does.
CREATE INDEX jobs_ended ON jobs (finished_at, id)
    WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
