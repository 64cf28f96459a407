-- Sets or replaces the limit of one type. VALUES() rather than a row
-- alias, which MariaDB lacks.
INSERT INTO type_limits (type, max_running, updated_at)
VALUES (:type, :max_running, {{now}})
ON DUPLICATE KEY UPDATE
max_running = VALUES(max_running), updated_at = VALUES(updated_at)
