-- One guarded transition. It changes the row only while the job still has
-- the status and version the caller read, so a lost race changes nothing.
-- Each optional field is switched on by its own flag; unset fields keep
-- their value. (MySQL assigns left to right with updated values, so no
-- assignment here may read a column changed before it in the same call;
-- a requeue rebases attempts but never increments them.) The usage of
-- the run a transition ends (set_usage) is kept on the job, where the
-- trigger of migration 014 copies it to the attempt; a new attempt or a
-- requeue clears it, as the exit code. A requeue (clear_result) forgets
-- the rollback job too, so a new final failure rolls back again. A start
-- made under a lease term (set_lease) records the dispatcher and its term,
-- and applies only while that term is the current, unexpired lease of
-- that dispatcher.
UPDATE jobs SET
    status           = :to,
    version          = version + 1,
    node             = CASE WHEN :set_node THEN :node ELSE node END,
    attempt          = attempt + :attempt_increment,
    attempt_base     = CASE WHEN :rebase_attempts THEN attempt ELSE attempt_base END,
    exit_code        = CASE WHEN :set_exit_code THEN :exit_code
                            WHEN :clear_result OR :attempt_increment = 1 THEN NULL
                            ELSE exit_code END,
    cpu_seconds      = CASE WHEN :set_usage THEN :cpu_seconds
                            WHEN :clear_result OR :attempt_increment = 1 THEN NULL
                            ELSE cpu_seconds END,
    peak_memory      = CASE WHEN :set_usage THEN :peak_memory
                            WHEN :clear_result OR :attempt_increment = 1 THEN NULL
                            ELSE peak_memory END,
    wall_seconds     = CASE WHEN :set_usage THEN :wall_seconds
                            WHEN :clear_result OR :attempt_increment = 1 THEN NULL
                            ELSE wall_seconds END,
    oom_killed       = CASE WHEN :set_usage THEN :oom_killed
                            WHEN :clear_result OR :attempt_increment = 1 THEN FALSE
                            ELSE oom_killed END,
    message          = CASE WHEN :set_message THEN :message ELSE message END,
    run_after        = CASE WHEN :set_run_after THEN {{nowPlus ":run_after_seconds"}}
                            WHEN :clear_result THEN NULL
                            ELSE run_after END,
    progress         = CASE WHEN :clear_result THEN 0 ELSE progress END,
    progress_message = CASE WHEN :clear_result THEN '' ELSE progress_message END,
    rollback_job_id  = CASE WHEN :clear_result THEN NULL ELSE rollback_job_id END,
    finished_at      = CASE WHEN :mark_finished THEN {{now}}
                            WHEN :clear_result THEN NULL
                            ELSE finished_at END,
    queued_at        = CASE WHEN :mark_queued THEN {{now}} ELSE queued_at END,
    started_at       = CASE WHEN :mark_started THEN {{now}} ELSE started_at END,
    dispatcher       = CASE WHEN :set_lease THEN :dispatcher ELSE dispatcher END,
    lease_term       = CASE WHEN :set_lease THEN :lease_term ELSE lease_term END,
    priority         = CASE WHEN :set_priority THEN :priority ELSE priority END
WHERE id = :id AND status = :from AND version = :version
  AND (NOT :set_lease OR EXISTS (SELECT 1 FROM lease
                                 WHERE id = 1 AND owner = :dispatcher AND term = :lease_term
                                   AND expires_at > {{now}}))
