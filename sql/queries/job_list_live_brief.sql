-- job_list_live reading only the brief columns (engine.JobListParams.Brief).
{{template "job_list_live" "brief"}}
