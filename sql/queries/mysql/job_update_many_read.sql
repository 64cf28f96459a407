-- The jobs a batch changed, read back in its transaction. The parameter
-- is a JSON array of ids.
SELECT {{template "job_columns"}}
FROM JSON_TABLE(:ids, '$[*]' COLUMNS (job_id BIGINT PATH '$')) AS x
STRAIGHT_JOIN jobs ON jobs.id = x.job_id
