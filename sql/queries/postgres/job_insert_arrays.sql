-- A whole chunk of JobInsertMany in one statement of fixed text. Each
-- parameter is an array with one element per job, in the columns of
-- job_insert_row. PostgreSQL parses and plans it once, where a multi-row
-- VALUES list of a thousand rows is fifteen thousand parameters to bind
-- and a new statement to plan for every size. The rows are inserted, and
-- their ids drawn, in the order of the arrays.
-- The fields most jobs leave at their zero value (the operation, key,
-- parent, rollback and its type, delay, backoff and memory limit) come as
-- NULL for it, read back here as the zero value, and as an empty array
-- when no job of the chunk sets them, which unnest pads with NULLs.
-- The statement notifies the dispatchers itself (jobs_changed_notify); the
-- ids come back as one array, in the order the rows went in, which is the
-- order of the ids drawn.
WITH j AS (
    INSERT INTO jobs (type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                      backoff_seconds, rollback, run_after, timeout_seconds, creator, created_at, queued_at,
                      rollback_type, priority, memory_limit)
    SELECT x.type, COALESCE(x.operation, ''), x.args, x.payload, x.job_load, x.status, COALESCE(x.job_key, ''),
           x.parent_id, x.max_attempts, COALESCE(x.backoff_seconds, 0), COALESCE(x.rollback, ''), x.run_after,
           x.timeout_seconds, x.creator, {{now}}, CASE WHEN x.status = 'QUEUED' THEN {{now}} END,
           COALESCE(x.rollback_type, ''), x.priority, COALESCE(x.memory_limit, 0)
    FROM unnest(
        CAST(:types AS text[]), CAST(:operations AS text[]), CAST(:args AS text[]), CAST(:payloads AS text[]),
        CAST(:loads AS double precision[]), CAST(:statuses AS text[]), CAST(:job_keys AS text[]),
        CAST(:parent_ids AS bigint[]), CAST(:max_attempts AS integer[]), CAST(:backoff_seconds AS double precision[]),
        CAST(:rollbacks AS text[]), CAST(:run_afters AS timestamptz[]), CAST(:timeout_seconds AS double precision[]),
        CAST(:creators AS text[]), CAST(:rollback_types AS text[]),
        CAST(:priorities AS integer[]), CAST(:memory_limits AS bigint[])
    ) WITH ORDINALITY AS x(type, operation, args, payload, job_load, status, job_key, parent_id, max_attempts,
                           backoff_seconds, rollback, run_after, timeout_seconds, creator, rollback_type,
                           priority, memory_limit, n)
    ORDER BY x.n
    RETURNING id, status
)
SELECT array_agg(id ORDER BY id) AS ids FROM j WHERE {{template "jobs_changed_notify"}}
