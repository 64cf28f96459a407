-- One guarded transition (job_update_guarded); the number of rows changed
-- tells whether it applied.
{{template "job_update_guarded"}}
