-- Sets or replaces the limit of one type.
INSERT INTO type_limits (type, max_running, updated_at)
VALUES (:type, :max_running, {{now}})
ON CONFLICT (type) DO UPDATE
SET max_running = excluded.max_running, updated_at = excluded.updated_at
