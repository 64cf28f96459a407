SELECT pg_advisory_unlock(hashtext('jobctl migrate ' || COALESCE(current_schema(), '')))
