-- The holder renews; anyone takes a lease that expired or was released. Time
-- is the database's clock only, so nodes with skewed clocks still agree.
UPDATE lease
SET owner = :owner, expires_at = {{nowPlus ":ttl_seconds"}}
WHERE id = 1 AND (owner = :owner OR owner IS NULL OR expires_at < {{now}})
