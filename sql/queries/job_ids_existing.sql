SELECT id
FROM jobs
WHERE id IN (:ids)
