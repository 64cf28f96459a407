-- The transitions of a batch that start no attempt and clear no result
-- (engine.OutcomeUpdate above all, a node recording the ends of runs) in
-- one statement, returning only the ids of the rows it changed, as one
-- array, and notifying the dispatchers itself, as job_update_many_ids
-- does. It is
-- job_update_many_set for such transitions, its parameters only the arrays
-- they fill, and each other field left as they leave it (the attempt, its
-- start, the progress and the lease term). A NULL node, exit code, message
-- or run_after_seconds leaves that field alone, and a NULL cpu_seconds the
-- whole usage of the run; finished_at is set where mark_finished is. An
-- array that would hold only NULLs (the usage of builtins, the nodes of
-- ends) comes empty, and unnest pads it with them.
WITH j AS (
    UPDATE jobs AS j SET
        status       = x.to_status,
        version      = j.version + 1,
        node         = COALESCE(x.new_node, j.node),
        exit_code    = COALESCE(x.new_exit_code, j.exit_code),
        cpu_seconds  = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_cpu_seconds ELSE j.cpu_seconds END,
        peak_memory  = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_peak_memory ELSE j.peak_memory END,
        wall_seconds = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_wall_seconds ELSE j.wall_seconds END,
        oom_killed   = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_oom_killed ELSE j.oom_killed END,
        message      = COALESCE(x.new_message, j.message),
        run_after    = CASE WHEN x.run_after_seconds IS NOT NULL THEN {{nowPlus "x.run_after_seconds"}}
                            ELSE j.run_after END,
        finished_at  = CASE WHEN x.mark_finished THEN {{now}} ELSE j.finished_at END
    FROM unnest(
        CAST(:ids AS bigint[]), CAST(:versions AS bigint[]), CAST(:from_statuses AS text[]), CAST(:to_statuses AS text[]),
        CAST(:nodes AS text[]), CAST(:exit_codes AS integer[]), CAST(:messages AS text[]),
        CAST(:run_after_seconds AS double precision[]), CAST(:mark_finished AS boolean[]),
        CAST(:cpu_seconds AS double precision[]), CAST(:peak_memory AS bigint[]),
        CAST(:wall_seconds AS double precision[]), CAST(:oom_killed AS boolean[])
    ) AS x(job_id, expected_version, from_status, to_status, new_node, new_exit_code, new_message, run_after_seconds,
           mark_finished, new_cpu_seconds, new_peak_memory, new_wall_seconds, new_oom_killed)
    WHERE j.id = x.job_id AND j.version = x.expected_version AND j.status = x.from_status
    RETURNING id, status
)
SELECT array_agg(id ORDER BY id) AS ids FROM j WHERE {{template "jobs_changed_notify"}}
