//go:build !linux

package runner

// dropInheritedCapabilities has nothing to do where there are no ambient
// capabilities.
func dropInheritedCapabilities() {}
