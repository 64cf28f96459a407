package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// userConfig is the config file of a user's jobctl commands,
// $XDG_CONFIG_HOME/jobctl/config.yaml (else ~/.config/jobctl/config.yaml):
//
//	db: postgres://jobctl@db.example/jobctl   # the default --db
//
// It has the format of 'serve --config', so one file can be both: the
// services and preferred nodes in it are for serve, which reads them only
// from the file its --config names.
type userConfig struct {
	DB        string    `yaml:"db"`
	Services  yaml.Node `yaml:"services"`
	Preferred yaml.Node `yaml:"preferred"`
}

// UserConfigPath is where jobctl looks for its config file.
func UserConfigPath() string {
	// The XDG spec says to ignore a relative XDG_CONFIG_HOME.
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "jobctl", "config.yaml")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "jobctl", "config.yaml")
}

// readUserConfig reads the config file at path; a missing file is an empty
// config, not an error.
func readUserConfig(path string) (userConfig, error) {
	var c userConfig
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("config file %s: %w (it may set db, services and preferred)", path, err)
	}
	return c, nil
}
