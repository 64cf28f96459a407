-- One event per job of the list, each with the job's type, in one
-- statement, so a batch of a thousand submitted jobs costs one INSERT more.
-- A job that does not exist gets no event; the store counts the rows.
INSERT INTO events (created_at, who, verb, job_id, node, type, schedule, detail, reason)
SELECT {{now}}, :who, :verb, id, :node, type, :schedule, :detail, :reason
FROM jobs
WHERE id IN (:ids)
ORDER BY id
