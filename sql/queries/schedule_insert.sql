-- A name already taken inserts nothing, which the store reports as a conflict.
INSERT INTO schedules ({{template "schedule_columns"}})
VALUES (:name, :cron, :tz, :overlap, :paused, :job, :next_fire_at, NULL, :creator, {{now}}, {{now}})
ON CONFLICT (name) DO NOTHING
