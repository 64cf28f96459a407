-- job_list reading only the brief columns (engine.JobListParams.Brief).
{{template "job_list" "brief"}}
