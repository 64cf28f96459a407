-- A page of one type's queue as job_list_dispatchable reads it, after the
-- place (after_priority, after_id) of the last job of the page before. The
-- place is two branches, each in the order of the index jobs_queue, so
-- neither reads what an earlier page read; the rest of after_priority past
-- after_id, then the lower priorities.
SELECT {{template "job_columns_queued"}}
FROM (
    SELECT {{template "job_columns_queued"}}
    FROM jobs
    WHERE {{template "job_queue_match" ":status"}}
      AND type = :type
      AND priority = :after_priority AND id > :after_id
      AND {{template "job_dispatchable_terms"}}
    ORDER BY id
    LIMIT :limit
) AS same_priority
UNION ALL
SELECT {{template "job_columns_queued"}}
FROM (
    SELECT {{template "job_columns_queued"}}
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
