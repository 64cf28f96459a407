-- One page of one type's queue (a status, QUEUED or RESTART, and a type)
-- holding the jobs that may start now (job_dispatchable_terms) and whose load is
-- in the range asked for, in dispatch order, higher priority first and
-- then lower id, after the place (after_priority, after_id) of the last job
-- of the page before. The place is two branches, each in the order of the
-- index jobs_queue, so neither reads what an earlier page read; the rest
-- of after_priority past after_id, then the lower priorities.
SELECT {{template "job_columns_brief"}}
FROM (
    SELECT {{template "job_columns_brief"}}
    FROM jobs
    WHERE {{template "job_queue_match" ":status"}}
      AND type = :type
      AND priority = :after_priority AND id > :after_id
      AND {{template "job_dispatchable_terms"}}
    ORDER BY id
    LIMIT :limit
) AS same_priority
UNION ALL
SELECT {{template "job_columns_brief"}}
FROM (
    SELECT {{template "job_columns_brief"}}
    FROM jobs
    WHERE {{template "job_queue_match" ":status"}}
      AND type = :type
      AND priority < :after_priority
      AND {{template "job_dispatchable_terms"}}
    ORDER BY priority DESC, id
    LIMIT :limit
) AS lower_priority
ORDER BY priority DESC, id
LIMIT :limit
