-- Due on the database clock, earliest first.
SELECT {{template "schedule_columns"}}
FROM schedules
WHERE NOT paused AND next_fire_at <= {{now}}
ORDER BY next_fire_at, name
LIMIT :limit
