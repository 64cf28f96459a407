{{- /*
The jobs a purge may remove (engine.JobPurgeParams). They have ended,
have one of the statuses asked for, and match the filters. The ended
status term stands exactly as the partial index jobs_ended says it, so
that SQLite and PostgreSQL find the candidates there. A bound on the end
time ("before"), on the ids ("range") or the place a batch before stopped
("after": later end, or the same end and a higher id) is in the text only
when the purge has one: the store renders the queries that use this
fragment once for each combination (queryVariants), so each bound is a
plain range on the index that serves it, never one switched off by a
flag, which SQLite cannot see past.
*/ -}}
{{statusOneOf "status" "terminal"}}
  AND status IN (:statuses)
  AND (:creator = '' OR creator = :creator)
{{- if has . "before"}}
  AND finished_at < :finished_before
{{- end}}
{{- if has . "range"}}
  AND id >= :min_id AND id <= :max_id
{{- end}}
{{- if has . "after"}}
  AND finished_at >= :after_ended_at
  AND (finished_at > :after_ended_at OR id > :after_id)
{{- end}}
