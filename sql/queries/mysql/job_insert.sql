-- MySQL has no INSERT … RETURNING; the store reads the new id from the driver.
{{template "job_insert_values"}}
