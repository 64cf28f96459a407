{{- /*
The final attempt an ended job keeps on its row (migration 016), in the
columns of job_attempts: its end is the job's finished_at and its ending
the job's status. Read from the jobs of job_final_attempts.
*/ -}}
j.id AS job_id, j.attempt, j.node, j.started_at, j.finished_at AS ended_at, j.exit_code, j.status AS ending,
j.message, j.type AS job_type, j.job_load, j.cpu_seconds, j.peak_memory, j.wall_seconds, j.oom_killed
