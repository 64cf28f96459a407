DELETE FROM events
WHERE id IN (:ids)
