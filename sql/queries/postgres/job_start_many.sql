-- The starts of a batch (engine.QueuedStartUpdate, under a lease term or
-- not) in one statement, job_update_many_set for that one kind of
-- transition. Its parameters are only the arrays a start fills, and each
-- other field is written as a start leaves it. A start moves the job to
-- RUNNING on its node with its attempt moved on, the last run exit code
-- and usage cleared, and started_at set; a start under a lease term
-- records it and applies only while it is the current, unexpired lease of
-- its dispatcher. A third of the arrays of the general statement are sent
-- and parsed (the two of the lease term empty for starts under none), and
-- no CASE is judged per row. A RUNNING job wakes no
-- dispatcher, so unlike the other writes of jobs it notifies no one. It
-- reads back of each job only what the node that started it runs it by
-- (engine.Job.Started), less what the start itself wrote (the status, the
-- node and the version), which the store sets from the update, two texts
-- fewer for the node to decode for every job it starts.
UPDATE jobs AS j SET
    status       = 'RUNNING',
    version      = j.version + 1,
    node         = x.new_node,
    attempt      = j.attempt + 1,
    exit_code    = NULL,
    cpu_seconds  = NULL,
    peak_memory  = NULL,
    wall_seconds = NULL,
    oom_killed   = FALSE,
    message      = COALESCE(x.new_message, j.message),
    started_at   = {{now}},
    dispatcher   = COALESCE(x.new_dispatcher, j.dispatcher),
    lease_term   = COALESCE(x.new_lease_term, j.lease_term)
FROM unnest(
    CAST(:ids AS bigint[]), CAST(:versions AS bigint[]), CAST(:from_statuses AS text[]),
    CAST(:nodes AS text[]), CAST(:messages AS text[]), CAST(:lease_owners AS text[]), CAST(:lease_terms AS bigint[])
) AS x(job_id, expected_version, from_status, new_node, new_message, new_dispatcher, new_lease_term)
WHERE j.id = x.job_id AND j.version = x.expected_version AND j.status = x.from_status
  AND {{template "lease_current"}}
RETURNING id, type, operation, args, payload, job_load, job_key, parent_id, attempt, max_attempts, attempt_base,
    backoff_seconds, timeout_seconds, priority, memory_limit, {{template "job_waited"}} AS waited_seconds
