{{- /*
A fragment: the job is in the queue of the status given as the template's
argument (QUEUED or RESTART). The IN term is written exactly as the WHERE
of the partial indexes jobs_queue and jobs_queue_load (migration 010), so
that SQLite uses them, as PostgreSQL would anyway.
*/ -}}
status = {{.}} AND status IN ('QUEUED', 'RESTART')
