{{template "node_select"}}
ORDER BY n.name
