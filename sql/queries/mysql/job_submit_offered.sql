-- The new job's load, and what the nodes offer its type (job_submit).
SELECT (SELECT job_load FROM jobs WHERE id = :id) AS job_load,
       COUNT(*) > 0 AS offered,
       MAX(CASE WHEN online = 1 THEN max_load END) AS largest_max_load
FROM ({{template "job_submit_offers"}}) AS offers
