// Package pgtest gives a test binary a PostgreSQL server and each test a
// database of its own.
//
// A package's TestMain calls Main, which either uses the server named by
// SWAPGATE_TEST_POSTGRES (a postgres:// URL of a role allowed to create
// databases; its database is only used to create and drop the tests' own)
// or starts a temporary one for the binary: initdb into a fresh temporary
// directory, fsync on, listening on a unix socket in that directory alone
// (no TCP port, so parallel test binaries never collide and nothing else on
// the machine can connect), started with pg_ctl and, once every test has
// run, stopped and removed. The binaries are Debian's, found under
// /usr/lib/postgresql/<version>/bin (the newest version) or on PATH;
// scripts/test-deps installs Debian's postgresql package where they are
// missing.
//
// PostgreSQL refuses to run as root (initdb and pg_ctl exit with an
// error). Run as root, as on a CI machine or in a container, pgtest runs
// initdb, pg_ctl and so the server as the unprivileged "postgres" user
// that Debian's package creates (or "nobody" where there is none): the
// temporary directory is handed to that user, and the commands are started
// with its uid and gid (the process's own credentials switched for the
// child, which needs no su or sudo). Run as an ordinary user, they run as
// that user. Either way the socket directory is the data directory's,
// mode 0700, and connections are trusted: only its owner, and root, can
// reach the server.
//
// A test binary that dies before its TestMain stops the server (a test
// that panics ends the process at once) leaves it running: the next
// temporary server started on the machine stops and removes those whose
// test binary is gone.
//
// Each test gets a fresh database from DSN (CREATE DATABASE … TEMPLATE
// template0), dropped when the test ends, so tests run in parallel
// without seeing one another's rows. A test that crashes its server
// (Crash, Restart) starts one of its own with Private.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/internal/testdeps"
)

// EnvServer names the environment variable that points the tests at an
// existing server instead of a temporary one.
const EnvServer = "SWAPGATE_TEST_POSTGRES"

// superuser is the temporary cluster's superuser, the role the tests
// connect as.
const superuser = "swapgate"

// Server is a PostgreSQL server the tests create their databases on.
type Server struct {
	// admin is the connection string of the database used to create and
	// drop the tests' databases.
	admin string
	// dsnFor returns the connection string of database name.
	dsnFor func(name string) string
	// stop stops a temporary server and removes its files; nil for a
	// server given by EnvServer.
	stop func() error
	// ctl runs pg_ctl on a temporary server's data directory.
	ctl func(args ...string) error
}

// Main runs the package's tests against a server (see the package comment)
// and returns the exit code for os.Exit. It sets *srv before the tests run.
// A server that cannot start fails the binary rather than skipping: the
// tests are part of the suite.
func Main(m *testing.M, srv **Server) int {
	s, err := Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 1
	}
	*srv = s
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start returns the server named by EnvServer, or starts a temporary one.
func Start(ctx context.Context) (*Server, error) {
	if u := os.Getenv(EnvServer); u != "" {
		return existing(ctx, u)
	}
	return temporary(ctx)
}

// existing uses the server at rawURL.
func existing(ctx context.Context, rawURL string) (*Server, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("%s must be a postgres:// URL", EnvServer)
	}
	s := &Server{admin: rawURL, dsnFor: func(name string) string {
		v := *u
		v.Path = "/" + name
		return v.String()
	}}
	if err := s.ping(ctx); err != nil {
		return nil, fmt.Errorf("the server in %s: %w", EnvServer, err)
	}
	return s, nil
}

// temporary initialises and starts a cluster in a new temporary directory.
func temporary(ctx context.Context) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	reapOrphans(ctx, bin, cred)
	root, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	// The owner file names this process, so that a later run can tell a
	// server whose test binary died (a panic, a kill) from a live one.
	if err := os.WriteFile(filepath.Join(root, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(root)
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	fail := func(err error) (*Server, error) {
		_ = os.RemoveAll(root)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(root, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("hand %s to uid %d: %w", root, cred.Uid, err))
		}
	}
	data := filepath.Join(root, "data")
	logFile := filepath.Join(root, "server.log")
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		out, err := os.Create(filepath.Join(root, name+".out"))
		if err != nil {
			return err
		}
		defer out.Close()
		if cred != nil {
			_ = out.Chown(int(cred.Uid), int(cred.Gid))
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		// A file, not a pipe: the server pg_ctl leaves running inherits
		// the descriptors, and a pipe would keep Wait waiting for it.
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil {
			b, _ := os.ReadFile(out.Name())
			lb, _ := os.ReadFile(logFile)
			return fmt.Errorf("%s: %w\n%s%s", name, err, b, lb)
		}
		return nil
	}
	if err := run("initdb", "-D", data, "-U", superuser, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fail(err)
	}
	// Only the socket in the data directory: no TCP port to pick or to
	// collide on. fsync stays on (the default), so that the tests' commits
	// are as durable as in production.
	opts := strings.Join([]string{
		"-c listen_addresses=''",
		"-c unix_socket_directories=" + data,
		"-c unix_socket_permissions=0700",
		"-c fsync=on",
		"-c synchronous_commit=on",
		"-c max_connections=200",
	}, " ")
	startArgs := []string{"start", "-w", "-t", "60", "-D", data, "-l", logFile, "-o", opts}
	if err := run("pg_ctl", startArgs...); err != nil {
		return fail(err)
	}
	s := &Server{
		dsnFor: func(name string) string {
			return fmt.Sprintf("host=%s user=%s dbname=%s sslmode=disable", data, superuser, name)
		},
	}
	s.admin = s.dsnFor("postgres")
	s.ctl = func(args ...string) error {
		if args[0] == "start" {
			return run("pg_ctl", startArgs...)
		}
		return run("pg_ctl", append(args, "-D", data)...)
	}
	s.stop = func() error {
		err := run("pg_ctl", "stop", "-w", "-m", "fast", "-D", data)
		if rerr := os.RemoveAll(root); err == nil {
			err = rerr
		}
		return err
	}
	if err := s.ping(ctx); err != nil {
		_ = s.stop()
		return nil, err
	}
	return s, nil
}

// Private starts a temporary server for t alone, stopped and removed when
// t ends, whatever EnvServer says: a test that crashes its server (Crash)
// must not take other tests' down with it.
//
// Where EnvServer names a server and no PostgreSQL binaries are installed
// here, the test is skipped (it needs a server of its own to crash), or
// fails under CI=true (testdeps.Unmet): scripts/test-deps installs the
// binaries whatever EnvServer says.
func Private(t testing.TB) *Server {
	t.Helper()
	if _, err := binDir(); err != nil && os.Getenv(EnvServer) != "" {
		testdeps.Unmet(t, "pgtest: %s names a server, and a test that crashes its own needs PostgreSQL's binaries here: %v", EnvServer, err)
	}
	s, err := temporary(context.Background())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// Crash stops a temporary server the way a crash would: "immediate" mode
// kills every server process without a checkpoint or a flush, so that
// only what had reached the write-ahead log's files survives, replayed by
// Restart.
func (s *Server) Crash(t testing.TB) {
	t.Helper()
	if s.ctl == nil {
		t.Fatal("pgtest: only a temporary server can be crashed")
	}
	if err := s.ctl("stop", "-w", "-m", "immediate"); err != nil {
		t.Fatalf("pgtest: crash: %v", err)
	}
}

// Restart starts a temporary server stopped by Crash again; it recovers
// from its write-ahead log before it accepts connections.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if s.ctl == nil {
		t.Fatal("pgtest: only a temporary server can be restarted")
	}
	if err := s.ctl("start"); err != nil {
		t.Fatalf("pgtest: restart: %v", err)
	}
}

// tempPrefix starts the names of the temporary servers' directories, and
// ownerFile in each names the process that started it.
const (
	tempPrefix = "swapgate-pg-"
	ownerFile  = "owner.pid"
)

// reapOrphans stops and removes the temporary servers left behind by test
// binaries that died before their TestMain could (a panicking test ends
// the process at once): those whose owner process is gone. It is best
// effort: what it cannot stop or remove it leaves.
func reapOrphans(ctx context.Context, bin string, cred *syscall.Credential) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, root := range dirs {
		b, err := os.ReadFile(filepath.Join(root, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // alive, or not ours to judge
		}
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_ctl"), "stop", "-w", "-m", "immediate", "-D", filepath.Join(root, "data"))
		cmd.Dir = os.TempDir()
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		_ = cmd.Run() // fails harmlessly when the server is not running
		_ = os.RemoveAll(root)
	}
}

// binDir finds initdb: the newest /usr/lib/postgresql/<version>/bin, or
// the directory of one on PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no PostgreSQL found (initdb under /usr/lib/postgresql/*/bin or on PATH): run scripts/test-deps, or set %s", EnvServer)
}

// credential is the user the server runs as when this process is root
// (nil otherwise: it runs as this process's user).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")
}

func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close(ctx)
	return c.Ping(ctx)
}

// Close stops and removes a temporary server; a given one is left as is.
func (s *Server) Close() error {
	if s.stop == nil {
		return nil
	}
	return s.stop()
}

// DSN creates a fresh, empty database for t and returns its connection
// string; the database is dropped when t ends (connections still open are
// ended with it).
func (s *Server) DSN(t testing.TB) string {
	t.Helper()
	name := NewName()
	ctx := context.Background()
	if err := s.exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.dsnFor(name)
}

// NewName returns a fresh database name, safe to splice into SQL.
func NewName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "swapgate_test_" + hex.EncodeToString(b[:])
}

func (s *Server) exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, s.admin)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}
