DROP TABLE settings;
DROP TABLE lease;
DROP TABLE nodes;
DROP TABLE job_logs;
DROP TABLE jobs;
