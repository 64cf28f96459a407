{{- /*
job_purge_filter for MySQL, which has no partial index: the virtual
column ended_at (migration 015) is the end time of a job that has ended
and NULL while it has not, and its index jobs_ended stands in for one.
*/ -}}
ended_at IS NOT NULL
  AND status IN (:statuses)
  AND (:creator = '' OR creator = :creator)
{{- if has . "before"}}
  AND ended_at < :finished_before
{{- end}}
{{- if has . "range"}}
  AND id >= :min_id AND id <= :max_id
{{- end}}
{{- if has . "after"}}
  AND ended_at >= :after_ended_at
  AND (ended_at > :after_ended_at OR id > :after_id)
{{- end}}
