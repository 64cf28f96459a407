-- job_list_dispatchable for SQLite, whose planner without statistics
-- would rather read every fitting job of the queue through jobs_queue_load
-- and sort them all for the first page, 96 ms of CPU for a page of 1000 out
-- of 200,000 queued, than read the page in the order of jobs_queue, 2 ms.
-- The load range is tested on the way, as the later pages do.
SELECT {{template "job_columns_queued"}}
FROM jobs INDEXED BY jobs_queue
WHERE {{template "job_queue_match" ":status"}}
  AND type = :type
  AND {{template "job_dispatchable_terms"}}
ORDER BY priority DESC, id
LIMIT :limit
