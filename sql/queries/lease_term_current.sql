-- Whether a lease term is the current, unexpired lease of its owner, so
-- that a start made under it may apply.
SELECT COUNT(*) FROM lease
WHERE id = 1 AND owner = :owner AND term = :term AND expires_at > {{now}}
