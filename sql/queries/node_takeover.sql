-- A new process takes over the node's row, only while the row still names
-- the former process (old_*) and, with by_silence, was last seen before now
-- plus stale_offset_seconds (a negative offset), so a row another process
-- took, or a holder that spoke, since the caller read it stays. Changing
-- no row means it is not as the caller read it. The maintenance flag is
-- left alone, so an operator's maintenance outlives a restart. The new
-- process runs nothing yet.
UPDATE nodes SET
    url              = :url,
    max_load         = :max_load,
    max_jobs         = :max_jobs,
    weight           = :weight,
    warmup_seconds   = :warmup_seconds,
    accept_exceeding = :accept_exceeding,
    candidate        = :candidate,
    services         = :services,
    state            = 'ONLINE',
    started_at       = {{now}},
    last_seen        = {{now}},
    load_avg         = :load_avg,
    max_load_avg     = :max_load_avg,
    mem_available    = :mem_available,
    reserved_memory  = :reserved_memory,
    cores            = :cores,
    lease_ms         = :lease_ms,
    host_id          = :host_id,
    hostname         = :hostname,
    pid              = :pid,
    proc_start       = :proc_start,
    beat_missed_at   = NULL,
    running_usage    = '[]'
WHERE name = :name
  AND host_id = :old_host_id AND pid = :old_pid AND proc_start = :old_proc_start
  AND (NOT :by_silence OR last_seen < {{nowPlus ":stale_offset_seconds"}})
