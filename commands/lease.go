package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// NewCmdLease builds `jobctl lease` and its subcommands; on its own it
// shows the lease.
func NewCmdLease(f *Factory) *cobra.Command {
	show := NewCmdLeaseShow(f, nil)
	cmd := &cobra.Command{
		Use:   "lease",
		Short: "Show or release the dispatcher lease",
		Long: `The lease names the one node that dispatches jobs now. 'jobctl lease' shows
it (the same as 'jobctl lease show'); 'jobctl lease release' frees it.`,
		Example: `  # who dispatches
  jobctl lease

  # make the dispatcher step down now
  jobctl lease release`,
		Args: subcommandArgs,
		RunE: show.RunE,
	}
	// The bare group command shows, so it takes the show's flags too.
	cmd.Flags().AddFlagSet(show.Flags())
	cmd.AddCommand(show, NewCmdLeaseRelease(f, nil))
	return cmd
}

// LeaseShowOptions are the parsed flags of `jobctl lease show`.
type LeaseShowOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Output outputOptions
}

// leaseView is the stable JSON form of the lease.
type leaseView struct {
	Owner            string     `json:"owner"`
	ExpiresAt        *time.Time `json:"expires_at"` // null when nobody holds it
	Valid            bool       `json:"valid"`
	RemainingSeconds float64    `json:"remaining_seconds"`
	// Term counts the takings of the lease (a renewal keeps it); the jobs
	// started under it record it as lease_term. AcquiredAt is when the
	// term began; null before the lease was ever taken.
	Term       int64      `json:"term"`
	AcquiredAt *time.Time `json:"acquired_at"`
}

// NewCmdLeaseShow builds `jobctl lease show`. runF replaces the action in tests.
func NewCmdLeaseShow(f *Factory, runF func(context.Context, *LeaseShowOptions) error) *cobra.Command {
	opts := &LeaseShowOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the dispatcher lease",
		Long: `Show which node holds the dispatcher lease and for how long, judged on the
database's clock, and its term: a counter that goes up whenever the lease is
taken after it expired or was released, or by another node (a renewal keeps
it). Each job records the holder and term its attempt was started under.
-o json gives owner, expires_at, valid, remaining_seconds, term and
acquired_at (when the term began).`,
		Example: `  # is anyone dispatching?
  jobctl lease show -o json | jq .valid`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return leaseShowRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	return cmd
}

func leaseShowRun(ctx context.Context, opts *LeaseShowOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	l, err := store.LeaseGet(ctx)
	if err != nil {
		return err
	}
	v := leaseView{Owner: l.Owner, Valid: l.Valid(), RemainingSeconds: l.Remaining().Seconds(), Term: l.Term}
	if l.Owner != "" {
		v.ExpiresAt = &l.ExpiresAt
	}
	if l.Term > 0 {
		v.AcquiredAt = &l.AcquiredAt
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, v)
	}
	ios := opts.IO
	p := newPalette(ios)
	kv := &keyValues{ios: ios}
	kv.add("owner", l.Owner)
	if l.Term > 0 {
		kv.add("term", fmt.Sprintf("%d since %s", l.Term, timeValue(ios, l.Now, &l.AcquiredAt)))
	}
	if l.Owner != "" {
		// Judged on the database clock the lease was read with, so a skewed
		// local clock cannot make a valid lease look expired.
		kv.add("expires", timeValue(ios, l.Now, &l.ExpiresAt))
	}
	if v.Valid {
		kv.add("valid", p.green("yes"))
		kv.add("remaining", l.Remaining().Round(time.Millisecond).String())
	} else {
		kv.add("valid", p.yellow("no")+" (no node dispatches now)")
	}
	return kv.render()
}

// LeaseReleaseOptions are the parsed flags of `jobctl lease release`.
type LeaseReleaseOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Audit auditOptions
}

// NewCmdLeaseRelease builds `jobctl lease release`. runF replaces the action in tests.
func NewCmdLeaseRelease(f *Factory, runF func(context.Context, *LeaseReleaseOptions) error) *cobra.Command {
	opts := &LeaseReleaseOptions{IO: f.IO, Store: f.Store, Audit: newAudit(f)}
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Free the dispatcher lease",
		Long: `Free the dispatcher lease, whoever holds it. The holder stops dispatching when
its next renewal fails, and the first candidate to try next takes over, so
dispatch moves without waiting for the lease to expire. A node that is still
a candidate may win it back.`,
		Example: `  # hand dispatch to another node
  jobctl lease release`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return leaseReleaseRun(cmd.Context(), opts)
		},
	}
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

func leaseReleaseRun(ctx context.Context, opts *LeaseReleaseOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	before, err := store.LeaseGet(ctx)
	if err != nil {
		return err
	}
	released := false
	e := engine.EventAppendParams{Verb: engine.EventLeaseRelease, Node: before.Owner, Detail: fmt.Sprintf("term %d", before.Term)}
	err = engine.Recorded(ctx, store, opts.Audit.actor(), e, func(tx engine.TxStore, _ *engine.EventAppendParams) error {
		var err error
		if released, err = tx.LeaseRelease(ctx, ""); err == nil && !released {
			err = engine.ErrNoChange
		}
		return err
	})
	if err != nil {
		return err
	}
	if !released || !before.Valid() {
		fmt.Fprintln(opts.IO.Out, "the lease was not held; nothing to release")
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "released the lease held by %s\n", before.Owner)
	return nil
}
