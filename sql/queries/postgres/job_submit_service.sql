-- The service a job of the type takes its defaults from (job_submit).
SELECT CAST(s ->> 'load' AS double precision) AS svc_load,
       CAST(s ->> 'timeout_seconds' AS double precision) AS svc_timeout_seconds,
       CASE WHEN s -> 'timeout' IS NOT NULL AND s -> 'timeout_seconds' IS NULL THEN 1 ELSE 0 END AS old_form
FROM nodes n CROSS JOIN LATERAL jsonb_array_elements(CAST(n.services AS jsonb)) AS s
WHERE s ->> 'type' = :type
ORDER BY n.state = 'ONLINE' AND NOT n.maintenance DESC, n.name
LIMIT 1
