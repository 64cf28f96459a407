-- The status and version of the jobs of one batch, locked until the
-- transaction ends, so what job_update_many then finds is what this read.
-- The parameter is a JSON array of ids, ascending, so the rows are locked
-- in id order, as every batch locks them, which keeps two batches from
-- deadlocking. With STRAIGHT_JOIN the rows are found by id, never by a
-- scan that would lock every row it passes.
SELECT j.id, j.version, j.status
FROM JSON_TABLE(:ids, '$[*]' COLUMNS (job_id BIGINT PATH '$')) AS x
STRAIGHT_JOIN jobs AS j ON j.id = x.job_id
FOR UPDATE
