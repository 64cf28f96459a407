package dbstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// settingClusterToken names the cluster token in the settings table.
const settingClusterToken = "cluster_token"

// ClusterToken returns the cluster's dispatch token, creating it on first
// use: 32 random bytes, hex-encoded. Processes racing to create it all end up
// with the one that was stored first.
func (s *Store) ClusterToken(ctx context.Context) (string, error) {
	var token string
	err := s.get(ctx, s.q, &token, qSettingGet, args{"name": settingClusterToken})
	if err == nil {
		return token, nil
	}
	if !isNoRows(err) {
		return "", fmt.Errorf("read cluster token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate cluster token: %w", err)
	}
	a := args{"name": settingClusterToken, "value": hex.EncodeToString(raw)}
	if _, err := s.exec(ctx, s.q, qSettingInsertAbsent, a); err != nil {
		return "", fmt.Errorf("store cluster token: %w", err)
	}
	// Read back rather than return ours: another process may have won.
	if err := s.get(ctx, s.q, &token, qSettingGet, args{"name": settingClusterToken}); err != nil {
		return "", fmt.Errorf("read cluster token: %w", err)
	}
	return token, nil
}
