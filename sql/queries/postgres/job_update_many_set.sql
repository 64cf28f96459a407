-- Many guarded transitions in one statement, each exactly as job_update
-- applies it alone. Each parameter is an array with one element per
-- transition; a NULL node, exit code, message or run_after_seconds leaves
-- that field alone, a NULL cpu_seconds the whole usage of the run the
-- transition ends, and a NULL flag is off. An array that would hold only
-- NULLs comes empty, and unnest pads it with them. A start under a lease term (a dispatcher and its term,
-- both set) records them and applies only while that term is the current,
-- unexpired lease of that dispatcher. A transition whose job is no longer
-- at its status and version matches no row, and only the changed rows come
-- back.
UPDATE jobs AS j SET
    status           = x.to_status,
    version          = j.version + 1,
    node             = COALESCE(x.new_node, j.node),
    attempt          = j.attempt + CASE WHEN x.increment_attempt THEN 1 ELSE 0 END,
    attempt_base     = CASE WHEN x.rebase_attempts THEN j.attempt ELSE j.attempt_base END,
    exit_code        = CASE WHEN x.new_exit_code IS NOT NULL THEN x.new_exit_code
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE j.exit_code END,
    cpu_seconds      = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_cpu_seconds
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE j.cpu_seconds END,
    peak_memory      = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_peak_memory
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE j.peak_memory END,
    wall_seconds     = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_wall_seconds
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE j.wall_seconds END,
    oom_killed       = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_oom_killed
                            WHEN x.clear_result OR x.increment_attempt THEN FALSE
                            ELSE j.oom_killed END,
    message          = COALESCE(x.new_message, j.message),
    run_after        = CASE WHEN x.run_after_seconds IS NOT NULL THEN {{nowPlus "x.run_after_seconds"}}
                            WHEN x.clear_result THEN NULL
                            ELSE j.run_after END,
    progress         = CASE WHEN x.clear_result THEN 0 ELSE j.progress END,
    progress_message = CASE WHEN x.clear_result THEN '' ELSE j.progress_message END,
    rollback_job_id  = CASE WHEN x.clear_result THEN NULL ELSE j.rollback_job_id END,
    finished_at      = CASE WHEN x.mark_finished THEN {{now}}
                            WHEN x.clear_result THEN NULL
                            ELSE j.finished_at END,
    queued_at        = CASE WHEN x.mark_queued THEN {{now}} ELSE j.queued_at END,
    started_at       = CASE WHEN x.mark_started THEN {{now}} ELSE j.started_at END,
    dispatcher       = COALESCE(x.new_dispatcher, j.dispatcher),
    lease_term       = COALESCE(x.new_lease_term, j.lease_term)
FROM unnest(
    CAST(:ids AS bigint[]), CAST(:versions AS bigint[]), CAST(:from_statuses AS text[]), CAST(:to_statuses AS text[]),
    CAST(:nodes AS text[]), CAST(:increment_attempts AS boolean[]), CAST(:rebase_attempts AS boolean[]),
    CAST(:exit_codes AS integer[]), CAST(:messages AS text[]), CAST(:run_after_seconds AS double precision[]),
    CAST(:clear_results AS boolean[]), CAST(:mark_queued AS boolean[]), CAST(:mark_started AS boolean[]),
    CAST(:mark_finished AS boolean[]), CAST(:lease_owners AS text[]), CAST(:lease_terms AS bigint[]),
    CAST(:cpu_seconds AS double precision[]), CAST(:peak_memory AS bigint[]),
    CAST(:wall_seconds AS double precision[]), CAST(:oom_killed AS boolean[])
) AS x(job_id, expected_version, from_status, to_status, new_node, increment_attempt, rebase_attempts,
       new_exit_code, new_message, run_after_seconds, clear_result, mark_queued, mark_started, mark_finished,
       new_dispatcher, new_lease_term, new_cpu_seconds, new_peak_memory, new_wall_seconds, new_oom_killed)
WHERE j.id = x.job_id AND j.version = x.expected_version AND j.status = x.from_status
  AND {{template "lease_current"}}
