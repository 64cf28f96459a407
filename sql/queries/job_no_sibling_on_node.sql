{{- /*
A fragment of job_list_first_children: no child of the parent of the job
"jobs" holds load on a node (engine.Job.HoldsLoad), found through the
index of children.
*/ -}}
NOT EXISTS (
          SELECT 1
          FROM jobs sibling
          WHERE sibling.parent_id = jobs.parent_id AND sibling.parent_id IS NOT NULL
            AND sibling.status IN {{statuses "load_holding"}}
            AND (sibling.status <> 'PAUSED' OR sibling.node <> ''))
