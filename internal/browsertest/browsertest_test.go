package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindNamesHowToInstall(t *testing.T) {
	t.Setenv(EnvPath, filepath.Join(t.TempDir(), "no-such-browser"))
	_, err := Find()
	if err == nil || !strings.Contains(err.Error(), "apt-get install --no-install-recommends chromium") {
		t.Fatalf("Find with a missing browser: %v", err)
	}
}

func TestArtifactDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvArtifacts, dir)
	got, err := ArtifactDir()
	if err != nil || got != dir {
		t.Fatalf("with %s set: %q, %v", EnvArtifacts, got, err)
	}
	t.Setenv(EnvArtifacts, "")
	got, err = ArtifactDir()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(got)
	if filepath.Base(got) != "test-artifacts" {
		t.Fatalf("default folder %s", got)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("default folder %s is not in the module's root: %v", got, err)
	}
}
