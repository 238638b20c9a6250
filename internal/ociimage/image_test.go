package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// root is the repository's root, from this package's folder.
const root = "../.."

// TestArchiveRunsSwapgate builds a static swapgate, makes the image
// archive of it as make image does, then reads the archive as a runtime
// would (oci-layout, index → manifest → config → layers, every blob
// checked against its digest and every layer against its diff id),
// unpacks its layers and runs the entrypoint with --help. The image runs
// as nonroot, has the CA bundle, no shell, and the same inputs make the
// same bytes.
func TestArchiveRunsSwapgate(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "swapgate")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/swapgate")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	certs := filepath.Join(dir, "ca.crt")
	const bundle = "-----BEGIN CERTIFICATE-----\nthe build machine's bundle\n-----END CERTIFICATE-----\n"
	if err := os.WriteFile(certs, []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, Certs: certs, Name: "swapgate:latest", Arch: runtime.GOARCH, Created: time.Unix(0, 0).UTC()}
	archive := filepath.Join(dir, "out", "image.tar")
	if err := WriteArchive(o, archive); err != nil {
		t.Fatal(err)
	}

	// Unpack the archive and walk the layout.
	layoutDir := filepath.Join(dir, "layout")
	untar(t, mustOpen(t, archive), layoutDir)
	var ociLayout struct {
		Version string `json:"imageLayoutVersion"`
	}
	readJSON(t, filepath.Join(layoutDir, "oci-layout"), &ociLayout)
	if ociLayout.Version != "1.0.0" {
		t.Fatalf("oci-layout version %q", ociLayout.Version)
	}
	type descriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int64             `json:"size"`
		Annotations map[string]string `json:"annotations"`
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	readJSON(t, filepath.Join(layoutDir, "index.json"), &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("index: %d manifests, want 1", len(index.Manifests))
	}
	m := index.Manifests[0]
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" ||
		m.Annotations["org.opencontainers.image.ref.name"] != "latest" ||
		m.Annotations["io.containerd.image.name"] != "docker.io/library/swapgate:latest" {
		t.Fatalf("index's manifest %+v: want an OCI manifest named swapgate:latest for docker and containerd", m)
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		alg, hexDigest, _ := strings.Cut(d.Digest, ":")
		b, err := os.ReadFile(filepath.Join(layoutDir, "blobs", alg, hexDigest))
		if err != nil {
			t.Fatalf("blob %s: %v", d.Digest, err)
		}
		if sum := sha256.Sum256(b); alg != "sha256" || hex.EncodeToString(sum[:]) != hexDigest || int64(len(b)) != d.Size {
			t.Fatalf("blob %s: its bytes do not match its descriptor (size %d)", d.Digest, len(b))
		}
		return b
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(m), &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Config       struct {
			User       string   `json:"User"`
			Entrypoint []string `json:"Entrypoint"`
			Cmd        []string `json:"Cmd"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if manifest.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Fatalf("config media type %q", manifest.Config.MediaType)
	}
	if err := json.Unmarshal(blob(manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	if config.OS != "linux" || config.Architecture != runtime.GOARCH {
		t.Fatalf("platform %s/%s", config.OS, config.Architecture)
	}
	if u := config.Config.User; u == "" || u == "0" || u == "root" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root:") {
		t.Fatalf("the image runs as %q: want a user other than root", u)
	}
	if !slices.Equal(config.Config.Entrypoint, []string{"/swapgate"}) || !slices.Equal(config.Config.Cmd, []string{"serve"}) {
		t.Fatalf("entrypoint %q, cmd %q", config.Config.Entrypoint, config.Config.Cmd)
	}
	if len(manifest.Layers) != len(config.RootFS.DiffIDs) || len(manifest.Layers) == 0 {
		t.Fatalf("%d layers, %d diff ids", len(manifest.Layers), len(config.RootFS.DiffIDs))
	}
	rootfs := filepath.Join(dir, "rootfs")
	var names []string
	for i, l := range manifest.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			t.Fatalf("layer %d media type %q", i, l.MediaType)
		}
		zr, err := gzip.NewReader(bytes.NewReader(blob(l)))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != config.RootFS.DiffIDs[i] {
			t.Fatalf("layer %d does not match its diff id", i)
		}
		names = append(names, untar(t, io.NopCloser(bytes.NewReader(raw)), rootfs)...)
	}
	for _, want := range []string{"swapgate", "etc/ssl/certs/ca-certificates.crt", "etc/passwd", "etc/group", "tmp/"} {
		if !slices.Contains(names, want) {
			t.Errorf("the image lacks %s: %q", want, names)
		}
	}
	for _, n := range names {
		if base := path.Base(n); base == "sh" || base == "bash" || base == "busybox" {
			t.Errorf("the image has a shell: %s", n)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt")); string(b) != bundle {
		t.Errorf("CA bundle %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(rootfs, "etc/passwd")); !regexp.MustCompile(`(?m)^nonroot:x:65532:65532:`).Match(b) {
		t.Errorf("/etc/passwd has no nonroot 65532:\n%s", b)
	}

	// The entrypoint runs.
	var stdout, stderr bytes.Buffer
	help := exec.Command(filepath.Join(rootfs, config.Config.Entrypoint[0]), "--help")
	help.Stdout, help.Stderr = &stdout, &stderr
	if err := help.Run(); err != nil {
		t.Fatalf("%s --help: %v\n%s", config.Config.Entrypoint[0], err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "serve") {
		t.Fatalf("--help printed no serve command:\n%s", stdout.String())
	}

	// The same inputs, the same archive.
	again := filepath.Join(dir, "again.tar")
	if err := WriteArchive(o, again); err != nil {
		t.Fatal(err)
	}
	a, b := mustRead(t, archive), mustRead(t, again)
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same inputs differ")
	}
}

// TestRefusesDynamicBinary: a binary linked against libc would not start
// in an image without one.
func TestRefusesDynamicBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "swapgate")
	if err := os.WriteFile(bin, []byte("\x7fELF…/lib64/ld-linux-x86-64.so.2…"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Image(Options{Binary: bin, Certs: bin, Name: "swapgate:latest", Arch: runtime.GOARCH})
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("a dynamic binary: %v", err)
	}
}

// TestNames: the reference written into the index, for docker and
// containerd.
func TestNames(t *testing.T) {
	for _, tt := range []struct{ in, tag, full string }{
		{"swapgate:latest", "latest", "docker.io/library/swapgate:latest"},
		{"swapgate", "latest", "docker.io/library/swapgate:latest"},
		{"acme/swapgate:v1", "v1", "docker.io/acme/swapgate:v1"},
		{"registry.example:5000/swapgate:v2", "v2", "registry.example:5000/swapgate:v2"},
		{"localhost/swapgate", "latest", "localhost/swapgate:latest"},
	} {
		if tag, full := tagOf(tt.in), fullName(tt.in); tag != tt.tag || full != tt.full {
			t.Errorf("%s: tag %q, name %q; want %q, %q", tt.in, tag, full, tt.tag, tt.full)
		}
	}
}

// TestDockerfileBuildsTheSameImage holds the Dockerfile to what make
// image builds: a Go build stage making a static binary, a final stage
// with CA certificates and no shell, the same user, entrypoint and
// command.
func TestDockerfileBuildsTheSameImage(t *testing.T) {
	b := string(mustRead(t, filepath.Join(root, "Dockerfile")))
	var froms []string
	for _, l := range strings.Split(b, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "FROM" {
			froms = append(froms, f[1])
		}
	}
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:") || !strings.HasPrefix(froms[1], "gcr.io/distroless/static") || !strings.HasSuffix(froms[1], ":nonroot") {
		t.Errorf("stages %q: want a golang build stage and distroless static's nonroot (CA certificates, user 65532, no shell)", froms)
	}
	for _, want := range []string{
		"CGO_ENABLED=0 go build",
		"COPY --from=build /out/swapgate " + Entrypoint + "\n",
		"USER " + User + "\n",
		`ENTRYPOINT ["` + Entrypoint + `"]` + "\n",
		`CMD ["serve"]` + "\n",
		"ENV SSL_CERT_FILE=" + CertsPath + "\n",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(mustRead(t, filepath.Join(root, "go.mod")))); m == nil ||
		!strings.Contains(b, "ARG GO_VERSION="+m[1]+"\n") {
		t.Errorf("the Dockerfile's GO_VERSION is not go.mod's go %v", m)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustOpen(t *testing.T, p string) io.ReadCloser {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	if err := json.Unmarshal(mustRead(t, p), v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// untar extracts a tar's directories and regular files under dir,
// refusing any other entry and any name that leaves dir, and returns the
// entries' names.
func untar(t *testing.T, r io.ReadCloser, dir string) []string {
	t.Helper()
	defer r.Close()
	var names []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		clean := path.Clean(h.Name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			t.Fatalf("tar entry %q leaves its root", h.Name)
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, filepath.FromSlash(clean))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode&0o777)|0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("tar entry %q of type %c: want only folders and files", h.Name, h.Typeflag)
		}
	}
}
