-- An empty owner releases the lease whoever holds it (operator override).
UPDATE lease
SET owner = NULL, expires_at = {{now}}
WHERE id = 1 AND owner IS NOT NULL AND (:owner = '' OR owner = :owner)
