{{- /*
A fragment of job_list_dispatchable: the job "other" has the key of the job
"jobs" and has not ended. MySQL has no partial index: the virtual column
live_key (migration 004) is the key of a keyed job that has not ended and
NULL otherwise, and its index jobs_live_key_id stands in for one.
*/ -}}
other.live_key = jobs.job_key
