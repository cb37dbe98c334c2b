-- A claim reads due jobs in run order through jobs_due and stops after its batch. An index that
-- starts with (state, kind) drew the planner away from it: every claim sorted every queued job.
-- The operator's reads get partial indexes of their own instead.
DROP INDEX jobs_state;
CREATE INDEX jobs_dead ON jobs (updated_at) WHERE state = 'dead';
CREATE INDEX jobs_done ON jobs (finished_at) WHERE state = 'done';
