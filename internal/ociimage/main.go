// Command ociimage builds Swapgate's container image without Docker, as
// an OCI image layout in a tar archive, which `docker load`, `podman load`,
// `kind load image-archive` and `ctr images import` all read. It is the
// image the repository's Dockerfile builds, for machines without Docker:
// one layer holding
//
//   - /swapgate, a static build of cmd/swapgate (CGO_ENABLED=0; make image
//     builds it), the entrypoint;
//   - /etc/ssl/certs/ca-certificates.crt, the build machine's CA bundle,
//     which Go's TLS reads for the live upstreams and webhooks;
//   - /etc/passwd and /etc/group naming root and nonroot (65532), the user
//     the image runs as (distroless's nonroot, which the Kubernetes
//     manifests' securityContext names too), and its home and /tmp;
//
// and nothing else: no shell, no package manager. Every file's time and
// the image's creation time are SOURCE_DATE_EPOCH (default 0), so that the
// same inputs make the same archive.
//
//	go run ./internal/ociimage --binary bin/image/swapgate --name swapgate:latest --out bin/swapgate-image.tar
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts, which the Dockerfile states too (its test holds
// the two together).
const (
	// Entrypoint is the binary's path in the image.
	Entrypoint = "/swapgate"
	// User is the uid:gid the image runs as: distroless's nonroot.
	User = "65532:65532"
	// CertsPath is where the CA bundle is, where Go looks first on Linux.
	CertsPath = "/etc/ssl/certs/ca-certificates.crt"
)

// Options is what an image is built from.
type Options struct {
	// Binary is the static swapgate binary.
	Binary string
	// Certs is the CA bundle to install at CertsPath.
	Certs string
	// Name is the image's reference, as docker and containerd name it on
	// load (swapgate:latest).
	Name string
	// Arch is the binary's architecture (GOARCH).
	Arch string
	// Created is every file's and the image's time.
	Created time.Time
}

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.Binary, "binary", "", "the static swapgate binary (CGO_ENABLED=0)")
	fs.StringVar(&o.Certs, "certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle the image trusts")
	fs.StringVar(&o.Name, "name", "swapgate:latest", "the image's name on load")
	fs.StringVar(&o.Arch, "arch", runtime.GOARCH, "the binary's GOARCH")
	out := fs.String("out", "bin/swapgate-image.tar", "the OCI archive to write")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.Binary == "" {
		fmt.Fprintln(stderr, "ociimage: --binary is required")
		return 2
	}
	created, err := sourceDateEpoch()
	if err != nil {
		fmt.Fprintf(stderr, "ociimage: %v\n", err)
		return 2
	}
	o.Created = created
	if err := WriteArchive(o, *out); err != nil {
		fmt.Fprintf(stderr, "ociimage: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "ociimage: %s written to %s\n", o.Name, *out)
	return 0
}

// sourceDateEpoch is SOURCE_DATE_EPOCH's time (reproducible builds'
// convention), the Unix epoch when unset.
func sourceDateEpoch() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", v, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

// Image builds the image from o.
func Image(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("the binary: %w", err)
	}
	if !isStatic(bin) {
		return nil, fmt.Errorf("the binary %s is dynamically linked: build it with CGO_ENABLED=0, the image has no libc", o.Binary)
	}
	certs, err := os.ReadFile(o.Certs)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle: %w", err)
	}
	files, err := rootfs(bin, certs, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("the layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: o.Created}, CreatedBy: "internal/ociimage: swapgate, CA certificates, nonroot user"}})
	if err != nil {
		return nil, fmt.Errorf("the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.Arch
	cf.Created = v1.Time{Time: o.Created}
	cf.Config.Entrypoint = []string{Entrypoint}
	cf.Config.Cmd = []string{"serve"}
	cf.Config.User = User
	cf.Config.WorkingDir = "/home/nonroot"
	cf.Config.Env = []string{"PATH=/", "SSL_CERT_FILE=" + CertsPath}
	return mutate.ConfigFile(img, cf)
}

// isStatic reports whether an ELF binary asks for no interpreter (no
// PT_INTERP program header): a dynamically linked one would not start in
// an image without libc.
func isStatic(b []byte) bool {
	return !bytes.Contains(b, []byte("/lib64/ld-linux")) && !bytes.Contains(b, []byte("/lib/ld-linux")) &&
		!bytes.Contains(b, []byte("/lib/ld-musl"))
}

// rootfs is the layer's tar: the binary, the CA bundle, the users and
// their folders, every entry owned by root but nonroot's home, and
// timestamped created.
func rootfs(bin, certs []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: created, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(b)), ModTime: created, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\n"
	var errs []error
	for _, d := range []struct {
		name string
		mode int64
		uid  int
	}{{"etc", 0o755, 0}, {"etc/ssl", 0o755, 0}, {"etc/ssl/certs", 0o755, 0}, {"home", 0o755, 0},
		{"home/nonroot", 0o700, 65532}, {"root", 0o700, 0}, {"tmp", 0o1777, 0}} {
		errs = append(errs, dir(d.name, d.mode, d.uid))
	}
	errs = append(errs,
		file(strings.TrimPrefix(CertsPath, "/"), 0o644, certs),
		file("etc/passwd", 0o644, []byte(passwd)),
		file("etc/group", 0o644, []byte(group)),
		file(strings.TrimPrefix(Entrypoint, "/"), 0o755, bin),
		tw.Close())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("the layer's files: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteArchive builds the image and writes it to out as a tar of an OCI
// image layout, the image named in its index the ways docker and
// containerd read a name on load.
func WriteArchive(o Options, out string) error {
	img, err := Image(o)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("the layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tagOf(o.Name),
		"io.containerd.image.name":          fullName(o.Name),
	})); err != nil {
		return fmt.Errorf("the layout: %w", err)
	}
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return tarDir(tmp, out, o.Created)
}

// tagOf is a reference's tag (latest when it names none).
func tagOf(name string) string {
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[i+1:]
	}
	return "latest"
}

// fullName is a reference as containerd names it: docker.io/library/ for
// a bare name, :latest for no tag.
func fullName(name string) string {
	if tagOf(name) == "latest" && !strings.HasSuffix(name, ":latest") {
		name += ":latest"
	}
	first, _, found := strings.Cut(name, "/")
	switch {
	case !found:
		return "docker.io/library/" + name
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		return "docker.io/" + name
	}
	return name
}

// tarDir writes the files under dir to the tar out, in a stable order.
func tarDir(dir, out string, created time.Time) (err error) {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	err = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: created, Mode: 0o644, Format: tar.FormatPAX}
		if info.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		h.Typeflag, h.Size = tar.TypeReg, info.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return fmt.Errorf("the archive: %w", err)
	}
	return tw.Close()
}
