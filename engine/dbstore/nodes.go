package dbstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// storedService is a service as the nodes table stores it: its timeout
// also in seconds, a number job_submit reads in SQL, beside the duration
// text older releases read.
type storedService struct {
	engine.NodeService
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// NodeClaim inserts the node's row or, with p.Former, replaces the row
// that still names p.Former.Process (and, with SilentFor, was last seen
// before now less SilentFor), in one statement each: it marks the row
// ONLINE, records the new process and sets started_at and last_seen to the
// database's now. A replaced row keeps its maintenance flag; a new one
// starts without (p.Node.Maintenance is ignored). A row the statement does
// not write is an error matching engine.ErrConflict (a *NotFoundError
// when a replacement finds no row); see engine.Store.
func (s *Store) NodeClaim(ctx context.Context, p engine.NodeClaimParams) (*engine.Node, error) {
	if err := engine.ValidateNodeClaim(p); err != nil {
		return nil, err
	}
	n := p.Node
	services := make([]storedService, len(n.Services))
	for i, svc := range n.Services {
		services[i] = storedService{NodeService: svc, TimeoutSeconds: time.Duration(svc.Timeout).Seconds()}
	}
	servicesJSON, err := json.Marshal(services)
	if err != nil {
		return nil, fmt.Errorf("register node %s: %w", n.Name, err)
	}
	a := args{
		"name":             n.Name,
		"url":              n.URL,
		"max_load":         n.MaxLoad,
		"max_jobs":         n.MaxJobs,
		"weight":           n.Weight,
		"warmup_seconds":   time.Duration(n.Warmup).Seconds(),
		"accept_exceeding": n.AcceptExceeding,
		"candidate":        n.Candidate,
		"services":         string(servicesJSON),
		"load_avg":         n.LoadAvg,
		"max_load_avg":     n.MaxLoadAvg,
		"mem_available":    n.MemAvailable,
		"reserved_memory":  n.ReservedMemory,
		"cores":            n.Cores,
		"lease_ms":         time.Duration(n.Lease).Milliseconds(),
		"host_id":          n.Process.Host,
		"hostname":         n.Process.Hostname,
		"pid":              n.Process.PID,
		"proc_start":       n.Process.StartTime,
	}
	var node *engine.Node
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		written, err := s.nodeWrite(ctx, tx, p.Former, a)
		if err != nil {
			return err
		}
		if !written {
			if _, err := s.nodeGet(ctx, tx, n.Name); err != nil {
				return err
			}
			return fmt.Errorf("register node %s: its row is not as expected: %w", n.Name, engine.ErrConflict)
		}
		node, err = s.nodeGet(ctx, tx, n.Name)
		return err
	})
	if err != nil {
		if isDomainError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("register node %s: %w", n.Name, err)
	}
	return node, nil
}

// nodeWrite inserts the row of a, or replaces the row that is still as
// former says, and reports whether it wrote one.
func (s *Store) nodeWrite(ctx context.Context, q querier, former *engine.NodeFormer, a args) (bool, error) {
	if former == nil {
		inserted, err := s.exec(ctx, q, qNodeInsertAbsent, a)
		return inserted > 0, err
	}
	a["old_host_id"], a["old_pid"], a["old_proc_start"] = former.Process.Host, former.Process.PID, former.Process.StartTime
	a["by_silence"] = former.SilentFor > 0
	a["stale_offset_seconds"] = -former.SilentFor.Seconds()
	taken, err := s.exec(ctx, q, qNodeTakeover, a)
	return taken > 0, err
}

// NodeGet returns the node with its live load, or a *NotFoundError.
func (s *Store) NodeGet(ctx context.Context, name string) (*engine.Node, error) {
	return s.nodeGet(ctx, s.q, name)
}

func (s *Store) nodeGet(ctx context.Context, q querier, name string) (*engine.Node, error) {
	var row nodeRow
	if err := s.get(ctx, q, &row, qNodeGet, args{"name": name}); err != nil {
		if isNoRows(err) {
			return nil, nodeNotFound(name)
		}
		return nil, fmt.Errorf("read node %s: %w", name, err)
	}
	return row.node()
}

// NodeList returns every node ordered by name, with Load and Running from
// its load-holding jobs and Dispatcher set for the valid lease holder.
func (s *Store) NodeList(ctx context.Context) ([]*engine.Node, error) {
	var rows []nodeRow
	if err := s.selectRows(ctx, s.withKept(s.q), &rows, qNodeList, nil, false); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	nodes := make([]*engine.Node, 0, len(rows))
	for i := range rows {
		n, err := rows[i].node()
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// NodeTouch sets last_seen to the database's now and records the node's
// reported health; a *NotFoundError for an unknown node, and an error
// matching engine.ErrNodeOnline when p.Process no longer holds the row. It
// leaves the state alone: marking a node OFFLINE or back is the heartbeat's
// decision. With its health it stores what the node measured of the jobs it
// runs (p.RunningUsage). It returns the node's stored state and maintenance
// flag.
//
// It runs on a connection of the main pool while the pool has room, else on
// the control connection (controlConn), as an urgent write, so a node's
// liveness gets through however busy its main pool is; the statement waits
// for no lock that job work holds (nothing else writes a node's row but
// operators and heartbeats, in one short statement each).
func (s *Store) NodeTouch(ctx context.Context, p engine.NodeTouchParams) (engine.NodeTouched, error) {
	running := p.RunningUsage
	if running == nil {
		running = []engine.LiveUsage{}
	}
	usage, err := json.Marshal(running)
	if err != nil {
		return engine.NodeTouched{}, fmt.Errorf("touch node %s: %w", p.Name, err)
	}
	link, release, err := s.controlConn(ctx)
	if err != nil {
		return engine.NodeTouched{}, fmt.Errorf("touch node %s: %w", p.Name, err)
	}
	defer release()
	a := args{"name": p.Name, "load_avg": p.LoadAvg, "mem_available": p.MemAvailable, "cores": p.Cores,
		"by_process": p.Process != nil, "host_id": "", "pid": 0, "proc_start": int64(0),
		"running_usage": string(usage)}
	if pr := p.Process; pr != nil {
		a["host_id"], a["pid"], a["proc_start"] = pr.Host, pr.PID, pr.StartTime
	}
	var rows []nodeTouchedRow
	if s.dialect.updateReturns {
		err = func() error {
			defer s.writing(true)()
			return s.selectRows(ctx, link, &rows, qNodeTouch, a, false)
		}()
	} else {
		err = runTx(ctx, link, func(tx *sqlx.Tx) error {
			n, err := s.exec(ctx, tx, qNodeTouch, a)
			if err != nil || n == 0 {
				return err
			}
			return s.selectRows(ctx, tx, &rows, qNodeTouched, a, false)
		})
	}
	if err != nil {
		return engine.NodeTouched{}, fmt.Errorf("touch node %s: %w", p.Name, err)
	}
	if len(rows) == 0 {
		held, err := s.nodeGet(ctx, link, p.Name)
		if err != nil {
			return engine.NodeTouched{}, err
		}
		return engine.NodeTouched{}, engine.NodeTakenError(held)
	}
	return engine.NodeTouched{State: engine.NodeState(rows[0].State), Maintenance: rows[0].Maintenance}, nil
}

// nodeTouchedRow is what node_touch returns (node_touched reads on MySQL).
type nodeTouchedRow struct {
	State       string `db:"state"`
	Maintenance bool   `db:"maintenance"`
}

// NodeSetState records a node's health, ONLINE, OFFLINE or ERROR, and
// leaves its maintenance flag alone; a *NotFoundError for an unknown node.
func (s *Store) NodeSetState(ctx context.Context, name string, state engine.NodeState) error {
	if err := engine.ValidateHealthState(name, state); err != nil {
		return err
	}
	n, err := s.exec(ctx, s.q, qNodeSetState, args{"name": name, "state": string(state)})
	if err != nil {
		return fmt.Errorf("set state of node %s: %w", name, err)
	}
	if n == 0 {
		return nodeNotFound(name)
	}
	return nil
}

// NodeSetMaintenance sets or clears a node's maintenance flag and leaves its
// health state alone; a *NotFoundError for an unknown node.
func (s *Store) NodeSetMaintenance(ctx context.Context, name string, on bool) error {
	n, err := s.exec(ctx, s.q, qNodeSetMaintenance, args{"name": name, "maintenance": on})
	if err != nil {
		return fmt.Errorf("set maintenance of node %s: %w", name, err)
	}
	if n == 0 {
		return nodeNotFound(name)
	}
	return nil
}

// NodeSetBeatMissed records that a heartbeat to the node went unanswered
// (keeping the time of the first miss in a row) or clears that; a
// *NotFoundError for an unknown node.
func (s *Store) NodeSetBeatMissed(ctx context.Context, name string, missed bool) error {
	n, err := s.exec(ctx, s.q, qNodeSetBeatMissed, args{"name": name, "missed": missed})
	if err != nil {
		return fmt.Errorf("record the heartbeat of node %s: %w", name, err)
	}
	if n == 0 {
		return nodeNotFound(name)
	}
	return nil
}
