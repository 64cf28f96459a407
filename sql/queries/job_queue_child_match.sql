{{- /*
A fragment: the job has a parent and is in the queue of the status given
as the template's argument, in the terms of the partial index
jobs_queue_children (migration 010).
*/ -}}
status = {{.}} AND parent_id IS NOT NULL AND status IN ('QUEUED', 'RESTART')
