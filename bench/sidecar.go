package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// composeFile is where main keeps the policy sidecar's command line.
const composeFile = "compose/toolgate.yaml"

// sidecarArgs returns the OPA sidecar's arguments as compose runs them, so
// the bench measures the sidecar users get: the listen address is replaced
// by addr, and paths the container mounts from the repository are mapped to
// the repository's own files.
func sidecarArgs(repo, addr string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(repo, composeFile))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", composeFile, err)
	}
	svc, ok := doc.Services["policy"]
	if !ok || len(svc.Command) == 0 {
		return nil, fmt.Errorf("%s: no policy service command", composeFile)
	}
	mounts := map[string]string{} // container path -> host path
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && strings.HasPrefix(parts[0], "./") {
			mounts[parts[1]] = filepath.Join(repo, parts[0])
		}
	}
	var args []string
	for _, a := range svc.Command {
		switch {
		case strings.HasPrefix(a, "--addr="):
			a = "--addr=" + addr
		case mounts[a] != "":
			a = mounts[a]
		}
		args = append(args, a)
	}
	// No call home from a benchmark: it stays on loopback.
	return append(args, "--skip-version-check"), nil
}
