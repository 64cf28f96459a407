-- The jobs a batch of starts changed, read back in its transaction as
-- job_update_many_read does, but only what the node that started them runs
-- them by. The parameter is a JSON array of ids.
SELECT {{template "job_columns_started"}}
FROM JSON_TABLE(:ids, '$[*]' COLUMNS (job_id BIGINT PATH '$')) AS x
STRAIGHT_JOIN jobs ON jobs.id = x.job_id
