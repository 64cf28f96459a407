-- The service a job of the type takes its defaults from (job_submit).
-- Types compare as bytes, as everywhere else.
SELECT s.svc_load, s.svc_timeout_seconds,
       s.svc_timeout IS NOT NULL AND s.svc_timeout_seconds IS NULL AS old_form
FROM nodes n, JSON_TABLE(n.services, '$[*]' COLUMNS (
    svc_type VARCHAR(255) PATH '$.type', svc_load DOUBLE PATH '$.load',
    svc_timeout_seconds DOUBLE PATH '$.timeout_seconds', svc_timeout VARCHAR(64) PATH '$.timeout')) AS s
WHERE CAST(s.svc_type AS BINARY) = CAST(:type AS BINARY)
ORDER BY n.state = 'ONLINE' AND NOT n.maintenance DESC, n.name
LIMIT 1
