{{- /*
A fragment: the job is in the queue of the status given as the template's
argument. MySQL has no partial index: the virtual column queue_status
(migration 010) is the status of a dispatchable job and NULL otherwise,
and its indexes stand in for partial ones.
*/ -}}
queue_status = {{.}}
