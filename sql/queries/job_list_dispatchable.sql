-- The first page of one type's queue (a status, QUEUED or RESTART, and a
-- type) holding the jobs that may start now (job_dispatchable_terms) and
-- whose load is in the range asked for, in dispatch order, higher priority
-- first and then lower id, as the index jobs_queue holds them. Later pages
-- are job_list_dispatchable_after's; one branch is half the planning of a
-- statement the database plans anew each time.
SELECT {{template "job_columns_queued"}}
FROM jobs
WHERE {{template "job_queue_match" ":status"}}
  AND type = :type
  AND {{template "job_dispatchable_terms"}}
ORDER BY priority DESC, id
LIMIT :limit
