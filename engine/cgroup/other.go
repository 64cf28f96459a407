//go:build !linux

package cgroup

import (
	"errors"
	"syscall"
)

var errNotLinux = errors.New("cgroups are a Linux feature")

// Manager makes the groups of one node's runs; off Linux there are none.
type Manager struct{}

// Open fails off Linux: the node measures runs by what the kernel
// accounts of the processes they reap.
func Open(Options) (*Manager, error) { return nil, errNotLinux }

// Support says what the node's cgroups do: nothing, off Linux.
func (m *Manager) Support() Support { return Support{} }

// Close does nothing.
func (m *Manager) Close() error { return nil }

// NewGroup fails off Linux.
func (m *Manager) NewGroup(string, Limits) (*Group, error) { return nil, errNotLinux }

// Group is the cgroup of one run; off Linux there is none.
type Group struct{}

// MemoryLimit is 0: no limit is held.
func (g *Group) MemoryLimit() int64 { return 0 }

// Place does nothing.
func (g *Group) Place(*syscall.SysProcAttr) {}

// EnterThread does nothing.
func (g *Group) EnterThread() (func() error, error) { return func() error { return nil }, nil }

// Sample measures nothing.
func (g *Group) Sample() (Sample, error) { return Sample{OOMKills: -1}, errNotLinux }

// Kill does nothing.
func (g *Group) Kill() {}

// Remove does nothing.
func (g *Group) Remove() error { return nil }
