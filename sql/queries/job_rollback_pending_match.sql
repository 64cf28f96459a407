{{- /*
A fragment of job_list_dispatchable: the job "other" has the key of the job
"jobs", failed finally and awaits its rollback job (engine.Job.
RollbackPending). The terms stand on their own, exactly as the partial
index jobs_rollback_pending says them, so that SQLite and PostgreSQL look
such jobs up there.
*/ -}}
other.job_key = jobs.job_key
        AND other.status = 'FAILED' AND other.rollback <> '' AND other.rollback_job_id IS NULL
