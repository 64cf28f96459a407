-- What each queue holds, in a few index steps however long it is. For
-- each dispatchable status and each type with jobs in it, the lightest and
-- the heaviest load, and whether any of the jobs has a parent. The types
-- are found by skipping from one to the next through jobs_queue (a loose
-- index scan), never by reading every queued job; the loads through
-- jobs_queue_load and the children through jobs_queue_children. Jobs that
-- cannot start now (run_after, their key) count too; the figures bound
-- what job_list_dispatchable can find, they do not list it.
WITH RECURSIVE queues (status, type) AS (
    SELECT s.status,
           (SELECT type FROM jobs WHERE {{template "job_queue_match" "s.status"}} ORDER BY type LIMIT 1)
    FROM (SELECT 'RESTART' AS status UNION ALL SELECT 'QUEUED') AS s
  UNION ALL
    SELECT q.status,
           (SELECT type FROM jobs WHERE {{template "job_queue_match" "q.status"}} AND type > q.type ORDER BY type LIMIT 1)
    FROM queues q
    WHERE q.type IS NOT NULL
)
SELECT q.status AS status, q.type AS type,
       (SELECT MIN(job_load) FROM jobs WHERE {{template "job_queue_match" "q.status"}} AND type = q.type) AS lightest,
       (SELECT MAX(job_load) FROM jobs WHERE {{template "job_queue_match" "q.status"}} AND type = q.type) AS heaviest,
       (SELECT COUNT(*) FROM (SELECT 1 FROM jobs WHERE {{template "job_queue_child_match" "q.status"}}
                                AND type = q.type LIMIT 1) AS c) AS children
FROM queues q
WHERE q.type IS NOT NULL
