-- Records the rollback job of a failed job (job_rollback_guarded); the
-- number of rows changed tells whether it applied.
{{template "job_rollback_guarded"}}
