UPDATE lease
SET term        = CASE WHEN owner = :owner AND expires_at >= {{now}} THEN term ELSE term + 1 END,
    acquired_at = CASE WHEN owner = :owner AND expires_at >= {{now}} THEN acquired_at ELSE {{now}} END,
    owner       = :owner,
    expires_at  = {{nowPlus ":ttl_seconds"}}
WHERE id = 1 AND (owner = :owner OR owner IS NULL OR expires_at < {{now}})
