-- The service a job of the type takes its defaults from (job_submit).
SELECT json_extract(s.value, '$.load') AS svc_load,
       json_extract(s.value, '$.timeout_seconds') AS svc_timeout_seconds,
       json_type(s.value, '$.timeout') IS NOT NULL AND json_type(s.value, '$.timeout_seconds') IS NULL AS old_form
FROM nodes n, json_each(n.services) AS s
WHERE json_extract(s.value, '$.type') = :type
ORDER BY n.state = 'ONLINE' AND NOT n.maintenance DESC, n.name
LIMIT 1
