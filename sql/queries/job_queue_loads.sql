-- What each queue holds, in a few index steps however long it is. For
-- each dispatchable status and each type with jobs in it, the lightest and
-- the heaviest load, and whether any of the jobs has a parent. The types
-- are found by skipping from one to the next through an index of the
-- queue (a loose index scan), never by reading every queued job; the loads
-- through jobs_queue_load and the children through jobs_queue_children.
-- Jobs that cannot start now (run_after, their key) count too; the figures
-- bound what job_list_dispatchable can find, they do not list it.
--
-- Every step reads its index from the end where the newest jobs are. On
-- PostgreSQL the entries of jobs that have left the queue stay in its
-- indexes until the table is vacuumed, oldest first, and equal keys are
-- in the order the rows were written, so a step from the other end would
-- pass over the entry of every job that has left the queue since. So the
-- types are skipped through from the last one back, the heaviest load is
-- the last entry of its type, and the lightest is the first entry lighter
-- than the heaviest, if any. That probe, a subquery of its own so that the
-- database runs it on the index, stops at the first entry of the heaviest
-- load.
WITH RECURSIVE queues (status, type) AS (
    SELECT s.status,
           (SELECT type FROM jobs WHERE {{template "job_queue_match" "s.status"}} ORDER BY type DESC LIMIT 1)
    FROM (SELECT 'RESTART' AS status UNION ALL SELECT 'QUEUED') AS s
  UNION ALL
    SELECT q.status,
           (SELECT type FROM jobs WHERE {{template "job_queue_match" "q.status"}} AND type < q.type
            ORDER BY type DESC LIMIT 1)
    FROM queues q
    WHERE q.type IS NOT NULL
), loads AS MATERIALIZED (
    SELECT q.status, q.type,
           (SELECT MAX(job_load) FROM jobs WHERE {{template "job_queue_match" "q.status"}} AND type = q.type) AS heaviest,
           (SELECT COUNT(*) FROM (SELECT 1 FROM jobs WHERE {{template "job_queue_child_match" "q.status"}}
                                    AND type = q.type LIMIT 1) AS c) AS children
    FROM queues q
    WHERE q.type IS NOT NULL
)
SELECT l.status AS status, l.type AS type,
       COALESCE((SELECT job_load FROM jobs WHERE {{template "job_queue_match" "l.status"}} AND type = l.type
                                             AND job_load < l.heaviest
                 ORDER BY job_load LIMIT 1), l.heaviest) AS lightest,
       l.heaviest AS heaviest, l.children AS children
FROM loads l
