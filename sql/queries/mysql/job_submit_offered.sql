-- Whether any registered node offers jobs of the type (job_submit).
SELECT COUNT(*) > 0
FROM nodes n, JSON_TABLE(n.services, '$[*]' COLUMNS (svc_type VARCHAR(255) PATH '$.type')) AS s
WHERE CAST(s.svc_type AS BINARY) = CAST(:type AS BINARY)
