-- Many guarded transitions in one statement, each exactly as job_update
-- applies it alone. The parameter is a JSON array with one object per
-- transition (see dbstore's batch.go); an absent key is NULL, which leaves
-- its field alone or switches its flag off. A transition whose job is no
-- longer at its status and version matches no row, and only the changed
-- rows come back.
UPDATE jobs SET
    status           = x.to_status,
    version          = version + 1,
    node             = COALESCE(x.new_node, node),
    attempt          = attempt + CASE WHEN x.increment_attempt THEN 1 ELSE 0 END,
    attempt_base     = CASE WHEN x.rebase_attempts THEN attempt ELSE attempt_base END,
    exit_code        = CASE WHEN x.new_exit_code IS NOT NULL THEN x.new_exit_code
                            WHEN x.clear_result THEN NULL
                            ELSE exit_code END,
    message          = COALESCE(x.new_message, message),
    run_after        = CASE WHEN x.run_after_seconds IS NOT NULL THEN {{nowPlus "x.run_after_seconds"}}
                            WHEN x.clear_result THEN NULL
                            ELSE run_after END,
    progress         = CASE WHEN x.clear_result THEN 0 ELSE progress END,
    progress_message = CASE WHEN x.clear_result THEN '' ELSE progress_message END,
    finished_at      = CASE WHEN x.mark_finished THEN {{now}}
                            WHEN x.clear_result THEN NULL
                            ELSE finished_at END,
    queued_at        = CASE WHEN x.mark_queued THEN {{now}} ELSE queued_at END,
    started_at       = CASE WHEN x.mark_started THEN {{now}} ELSE started_at END
FROM (
    SELECT value ->> 'id'                AS job_id,
           value ->> 'version'           AS expected_version,
           value ->> 'from'              AS from_status,
           value ->> 'to'                AS to_status,
           value ->> 'node'              AS new_node,
           value ->> 'increment_attempt' AS increment_attempt,
           value ->> 'rebase_attempts'   AS rebase_attempts,
           value ->> 'exit_code'         AS new_exit_code,
           value ->> 'message'           AS new_message,
           value ->> 'run_after_seconds' AS run_after_seconds,
           value ->> 'clear_result'      AS clear_result,
           value ->> 'mark_queued'       AS mark_queued,
           value ->> 'mark_started'      AS mark_started,
           value ->> 'mark_finished'     AS mark_finished
    FROM json_each(:updates)
) AS x
WHERE jobs.id = x.job_id AND jobs.version = x.expected_version AND jobs.status = x.from_status
