-- Ended jobs found by when they ended, so a prune costs each batch its own
-- size however long the table's history. Without it a purge read every
-- ended job in id order per batch.
--
-- MySQL has no partial index: the virtual column ended_at is the end time
-- of a job that has ended and NULL while it has not, and its index stands
-- in for one. An ended job without an end time (none that jobctl writes)
-- counts as ended last. The column is computed, never stored or written,
-- and only mysql/job_purge_filter.sql reads it.
ALTER TABLE jobs
    ADD COLUMN ended_at DATETIME(6) AS (CASE WHEN status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
        THEN COALESCE(finished_at, TIMESTAMP '9999-12-31 00:00:00') END) VIRTUAL,
    ADD INDEX jobs_ended (ended_at, id);
