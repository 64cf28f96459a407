// Package endpoint is the wire protocol of a node's endpoint: the HTTP
// handler a node serves (the dispatch handshake, heartbeats, health and
// metrics), the Client dispatchers use to offer work and send heartbeats,
// and the TLS settings of both ends.
//
// The package decides nothing about work: the handler passes offers to an
// Acceptor — the node runtime — and translates its verdicts to HTTP
// statuses, which the Client translates back. Requests that carry or
// probe for work are authenticated with the cluster token.
package endpoint
