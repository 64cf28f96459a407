SELECT {{template "schedule_columns"}}
FROM schedules
ORDER BY name
