(:type, :operation, :args, :payload, :load, :status, :job_key, :parent_id, :max_attempts,
 :backoff_seconds, :rollback, :run_after, :timeout_seconds, :creator, {{now}},
 CASE WHEN :queued THEN {{now}} END, :rollback_type, :priority, :memory_limit)
