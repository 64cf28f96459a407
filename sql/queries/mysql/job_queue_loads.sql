-- What each queue holds, in a few index steps however long it is. For
-- each dispatchable status and each type with jobs in it, the lightest and
-- the heaviest load, and whether any of the jobs has a parent. MySQL reads
-- a GROUP BY on the leading columns of an index with MIN and MAX of the
-- next one by jumping from group to group (a loose index scan), through
-- jobs_queue_load and jobs_queue_children, never reading every queued job.
-- Jobs that cannot start now (run_after, their key) count too; the figures
-- bound what job_list_dispatchable can find, they do not list it.
SELECT l.status AS status, l.type AS type, l.lightest AS lightest, l.heaviest AS heaviest,
       CASE WHEN c.type IS NULL THEN 0 ELSE 1 END AS children
FROM (SELECT queue_status AS status, type, MIN(job_load) AS lightest, MAX(job_load) AS heaviest
      FROM jobs
      WHERE queue_status IN ('QUEUED', 'RESTART')
      GROUP BY queue_status, type) AS l
LEFT JOIN (SELECT queue_child_status AS status, type
           FROM jobs
           WHERE queue_child_status IN ('QUEUED', 'RESTART')
           GROUP BY queue_child_status, type) AS c
       ON c.status = l.status AND c.type = l.type
