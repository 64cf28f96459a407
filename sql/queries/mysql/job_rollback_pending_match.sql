{{- /*
A fragment of job_list_dispatchable: the job "other" has the key of the job
"jobs", failed finally and awaits its rollback job. MySQL has no partial
index: the virtual column rollback_pending_key (migration 008) is the key of
such a job and NULL otherwise, and its index stands in for one.
*/ -}}
other.rollback_pending_key = jobs.job_key
