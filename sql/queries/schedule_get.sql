SELECT {{template "schedule_columns"}}
FROM schedules
WHERE name = :name
