{{- /*
A fragment of job_list_dispatchable: the job "other" has the key of the job
"jobs" and has not ended. The key and status terms stand on their own,
exactly as the partial index jobs_live_key_id says them, so that SQLite
(which uses a partial index only then) and PostgreSQL look such jobs up
there.
*/ -}}
other.job_key = jobs.job_key
        AND other.job_key <> ''
        AND {{statusNoneOf "other.status" "terminal"}}
