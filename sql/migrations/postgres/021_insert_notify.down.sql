CREATE TRIGGER jobs_notify_insert
    AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT
    EXECUTE FUNCTION jobs_notify_change();
