{{template "node_select"}}
WHERE n.name = :name
