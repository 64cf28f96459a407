-- A name already taken inserts nothing, which the store reports as a
-- conflict. Not INSERT IGNORE, which would also turn a bad value into a
-- warning; two adds racing for one name deadlock on the gap lock, and the
-- one the database aborts finds the name taken when it is run again.
INSERT INTO schedules ({{template "schedule_columns"}})
SELECT :name, :cron, :tz, :overlap, :paused, :job, :next_fire_at, NULL, :creator, {{now}}, {{now}}
FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM schedules WHERE name = :name)
