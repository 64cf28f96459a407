SELECT COALESCE(owner, '') AS owner, expires_at, term, acquired_at, {{now}} AS db_now
FROM lease
WHERE id = 1
