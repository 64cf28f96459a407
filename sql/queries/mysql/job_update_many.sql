-- Many guarded transitions in one statement, each exactly as job_update
-- applies it alone. The parameter is a JSON array with one object per
-- transition (see dbstore's batch_params.go); an absent key is NULL, which
-- leaves its field alone (an absent cpu_seconds leaves the whole usage of
-- the run alone). The flags are the bits of one number, absent when none
-- is set (1 increments the attempt, 2 rebases the attempts, 4 clears the
-- result, 8, 16 and 32 mark the job queued, started and finished now),
-- one key where a key per flag took JSON_TABLE a look through the whole
-- object for each flag not set. MySQL has no UPDATE … RETURNING, so the
-- store locks the rows first (job_update_many_lock), sends only the
-- transitions that match, and reads the rows back (job_update_many_read).
-- The guard stays here all the same. The lease term of a start is checked
-- in the same transaction afterwards (lease_term_current); here it is
-- only recorded.
--
-- With STRAIGHT_JOIN the rows are found by id, one by one, never by a scan
-- that would lock every row it passes.
--
-- A multi-table UPDATE assigns in no promised order, so no assignment may
-- read a column another one changes (a requeue rebases attempts but never
-- increments them).
UPDATE JSON_TABLE(:updates, '$[*]' COLUMNS (
    job_id            BIGINT       PATH '$.id',
    expected_version  BIGINT       PATH '$.version',
    from_status       VARCHAR(16)  PATH '$.from',
    to_status         VARCHAR(16)  PATH '$.to',
    new_node          VARCHAR(255) PATH '$.node',
    flags             INT          PATH '$.flags',
    new_exit_code     INT          PATH '$.exit_code',
    new_message       TEXT         PATH '$.message',
    run_after_seconds DOUBLE       PATH '$.run_after_seconds',
    new_dispatcher    VARCHAR(255) PATH '$.lease_owner',
    new_lease_term    BIGINT       PATH '$.lease_term',
    new_cpu_seconds   DOUBLE       PATH '$.cpu_seconds',
    new_peak_memory   BIGINT       PATH '$.peak_memory',
    new_wall_seconds  DOUBLE       PATH '$.wall_seconds',
    new_oom_killed    INT          PATH '$.oom_killed'
)) AS x
STRAIGHT_JOIN jobs AS j ON j.id = x.job_id
SET
    j.status           = x.to_status,
    j.version          = j.version + 1,
    j.node             = COALESCE(x.new_node, j.node),
    j.attempt_base     = CASE WHEN x.flags & 2 THEN j.attempt ELSE j.attempt_base END,
    j.attempt          = j.attempt + CASE WHEN x.flags & 1 THEN 1 ELSE 0 END,
    j.exit_code        = CASE WHEN x.new_exit_code IS NOT NULL THEN x.new_exit_code
                              WHEN x.flags & 4 OR x.flags & 1 THEN NULL
                              ELSE j.exit_code END,
    j.cpu_seconds      = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_cpu_seconds
                              WHEN x.flags & 4 OR x.flags & 1 THEN NULL
                              ELSE j.cpu_seconds END,
    j.peak_memory      = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_peak_memory
                              WHEN x.flags & 4 OR x.flags & 1 THEN NULL
                              ELSE j.peak_memory END,
    j.wall_seconds     = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_wall_seconds
                              WHEN x.flags & 4 OR x.flags & 1 THEN NULL
                              ELSE j.wall_seconds END,
    j.oom_killed       = CASE WHEN x.new_cpu_seconds IS NOT NULL THEN x.new_oom_killed
                              WHEN x.flags & 4 OR x.flags & 1 THEN FALSE
                              ELSE j.oom_killed END,
    j.message          = COALESCE(x.new_message, j.message),
    j.run_after        = CASE WHEN x.run_after_seconds IS NOT NULL THEN {{nowPlus "x.run_after_seconds"}}
                              WHEN x.flags & 4 THEN NULL
                              ELSE j.run_after END,
    j.progress         = CASE WHEN x.flags & 4 THEN 0 ELSE j.progress END,
    j.progress_message = CASE WHEN x.flags & 4 THEN '' ELSE j.progress_message END,
    j.rollback_job_id  = CASE WHEN x.flags & 4 THEN NULL ELSE j.rollback_job_id END,
    j.finished_at      = CASE WHEN x.flags & 32 THEN {{now}}
                              WHEN x.flags & 4 THEN NULL
                              ELSE j.finished_at END,
    j.queued_at        = CASE WHEN x.flags & 8 THEN {{now}} ELSE j.queued_at END,
    j.started_at       = CASE WHEN x.flags & 16 THEN {{now}} ELSE j.started_at END,
    j.dispatcher       = COALESCE(x.new_dispatcher, j.dispatcher),
    j.lease_term       = COALESCE(x.new_lease_term, j.lease_term)
WHERE j.version = x.expected_version AND j.status = x.from_status
