{{- /*
A fragment: the job has a parent and is in the queue of the status given
as the template's argument; queue_child_status (migration 010) stands in
for the partial index of the other backends.
*/ -}}
queue_child_status = {{.}}
