-- Many guarded transitions in one statement, each exactly as job_update
-- applies it alone. The parameter is a JSON array with one array per
-- transition, its fields by position (jobUpdateTuplesJSON in dbstore's
-- batch_params.go); a null leaves its field alone (a null cpu_seconds the
-- whole usage of the run the transition ends), and the flags are the bits
-- of one number (tupleIncrementAttempt and the others there). A
-- transition whose job is no longer at its status and version matches no
-- row, and only the changed rows come back. A start under a lease term (a
-- dispatcher and its term, both set) records them and applies only while
-- that term is the current, unexpired lease of that dispatcher, read once
-- per statement (lease_current).
--
-- The transitions are read once each, into a table of their own, as SQLite
-- would otherwise flatten the subquery and extract a field again at every
-- use of it in the SET list. jsonb_each hands each transition over as
-- binary JSON, which ->> reads as it is; json_each's text would be parsed
-- anew by every ->>. The paths are written out, as ->> given a bare number
-- builds the path text from it at every call.
WITH t AS MATERIALIZED (
    SELECT value ->> '$[0]'  AS job_id,
           value ->> '$[1]'  AS expected_version,
           value ->> '$[2]'  AS from_status,
           value ->> '$[3]'  AS to_status,
           value ->> '$[4]'  AS new_node,
           value ->> '$[5]'  AS new_exit_code,
           value ->> '$[6]'  AS new_message,
           value ->> '$[7]'  AS run_after_seconds,
           value ->> '$[8]'  AS flags,
           value ->> '$[9]'  AS new_dispatcher,
           value ->> '$[10]' AS new_lease_term,
           value ->> '$[11]' AS new_cpu_seconds,
           value ->> '$[12]' AS new_peak_memory,
           value ->> '$[13]' AS new_wall_seconds,
           value ->> '$[14]' AS new_oom_killed
    FROM jsonb_each(:updates)
), x AS (
    SELECT t.*,
           flags & 1  AS increment_attempt,
           flags & 2  AS rebase_attempts,
           flags & 4  AS clear_result,
           flags & 8  AS mark_queued,
           flags & 16 AS mark_started,
           flags & 32 AS mark_finished
    FROM t
)
UPDATE jobs SET
    status           = x.to_status,
    version          = version + 1,
    node             = COALESCE(x.new_node, node),
    attempt          = attempt + CASE WHEN x.increment_attempt THEN 1 ELSE 0 END,
    attempt_base     = CASE WHEN x.rebase_attempts THEN attempt ELSE attempt_base END,
    exit_code        = CASE WHEN x.new_exit_code IS NOT NULL THEN x.new_exit_code
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE exit_code END,
    cpu_seconds      = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_cpu_seconds
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE cpu_seconds END,
    peak_memory      = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_peak_memory
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE peak_memory END,
    wall_seconds     = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_wall_seconds
                            WHEN x.clear_result OR x.increment_attempt THEN NULL
                            ELSE wall_seconds END,
    oom_killed       = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_oom_killed
                            WHEN x.clear_result OR x.increment_attempt THEN 0
                            ELSE oom_killed END,
    message          = COALESCE(x.new_message, message),
    run_after        = CASE WHEN x.run_after_seconds IS NOT NULL THEN {{nowPlus "x.run_after_seconds"}}
                            WHEN x.clear_result THEN NULL
                            ELSE run_after END,
    progress         = CASE WHEN x.clear_result THEN 0 ELSE progress END,
    progress_message = CASE WHEN x.clear_result THEN '' ELSE progress_message END,
    rollback_job_id  = CASE WHEN x.clear_result THEN NULL ELSE rollback_job_id END,
    finished_at      = CASE WHEN x.mark_finished THEN {{now}}
                            WHEN x.clear_result THEN NULL
                            ELSE finished_at END,
    queued_at        = CASE WHEN x.mark_queued THEN {{now}} ELSE queued_at END,
    started_at       = CASE WHEN x.mark_started THEN {{now}} ELSE started_at END,
    dispatcher       = COALESCE(x.new_dispatcher, dispatcher),
    lease_term       = COALESCE(x.new_lease_term, lease_term)
FROM x
WHERE jobs.id = x.job_id AND jobs.version = x.expected_version AND jobs.status = x.from_status
  AND {{template "lease_current"}}
