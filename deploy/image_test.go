package deploy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/logbuf"
)

// The image is built with buildah under chroot isolation, because there is
// no container engine and no registry here. Its two base images get local
// stand-ins: a toolchain image made from this machine's own Go, and
// scratch, which the Dockerfile's final stage already is. Modules come
// from this machine's module cache through a read-only file:// proxy, so
// the build never reaches the network.
//
// Storage lives in the user's cache directory, so a second run reuses the
// toolchain image and buildah's cache mount (the Go build cache): cold, the
// build compiles everything; warm, only what changed.

const imageVersion = "v0.0.0-imagetest"

type buildah struct {
	t    *testing.T
	base []string
}

func newBuildah(t *testing.T) buildah {
	t.Helper()
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Fatal("buildah is not installed (scripts/test installs it): apt-get install buildah")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "askbridge-test", "buildah")
	return buildah{t: t, base: []string{
		"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "overlay",
	}}
}

func (b buildah) cmd(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "buildah", append(append([]string{}, b.base...), args...)...)
}

// run runs buildah and returns its standard output, failing the test with
// its standard error.
func (b buildah) run(args ...string) string {
	b.t.Helper()
	var out, errb bytes.Buffer
	c := b.cmd(b.t.Context(), args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		b.t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

func (b buildah) exists(image string) bool {
	return b.cmd(b.t.Context(), "inspect", "--type", "image", image).Run() == nil
}

// goEnv reads one of the host toolchain's settings.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// toolchainImage makes (once per Go version) an image holding this
// machine's Go installation and CA bundle, the stand-in for the official
// Go image. It has no shell, which proves the Dockerfile needs none.
// containerName is a working container's name no other test run on the
// machine uses, so two runs (two worktrees, say) sharing the buildah
// storage never act on each other's containers.
func containerName(what string) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("askbridge-test-%s-%d-%x", what, os.Getpid(), r)
}

func toolchainImage(t *testing.T, b buildah) string {
	t.Helper()
	name := "localhost/askbridge-test/go:" + goEnv(t, "GOVERSION")
	if b.exists(name) {
		return name
	}
	goroot := goEnv(t, "GOROOT")
	empty := t.TempDir()
	c := b.run("from", "--name", containerName("toolchain"), "scratch")
	defer b.run("rm", c)
	b.run("copy", c, goroot, "/usr/local/go")
	b.run("copy", c, "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/ca-certificates.crt")
	b.run("copy", c, empty, "/tmp")
	b.run("config", "--env", "PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin", c)
	b.run("commit", "--quiet", c, name)
	return name
}

// dockerConfig is the part of the image's Docker-format configuration the
// test checks.
type dockerConfig struct {
	User         string
	Env          []string
	Entrypoint   []string
	Cmd          []string
	Volumes      map[string]struct{}
	ExposedPorts map[string]struct{}
	Healthcheck  *struct{ Test []string }
}

func TestImage(t *testing.T) {
	b := newBuildah(t)
	base := toolchainImage(t, b)

	// The module proxy's copy of what the binary needs must be in the local
	// cache before the build reads it offline.
	list := exec.Command("go", "list", "-deps", "./cmd/askbridge")
	list.Dir = ".."
	if out, err := list.CombinedOutput(); err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	proxy := filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")

	// A tag of this run's own: the cleanup's forced rmi would otherwise
	// take another run's containers of the same image with it.
	image := "localhost/askbridge-test/askbridge:" + containerName(imageVersion)
	b.run("build", "--isolation", "chroot", "--format", "docker", "--quiet",
		"-f", "deploy/Dockerfile",
		"--build-arg", "GO_IMAGE="+base,
		"--build-arg", "VERSION="+imageVersion,
		"--build-arg", "GOPROXY=file:///goproxy",
		"--volume", proxy+":/goproxy:ro",
		"--tag", image, "..")
	t.Cleanup(func() { b.cmd(context.Background(), "rmi", "--force", image).Run() })

	var inspect struct {
		Docker struct{ Config dockerConfig }
	}
	if err := json.Unmarshal([]byte(b.run("inspect", "--type", "image", image)), &inspect); err != nil {
		t.Fatal(err)
	}
	cfg := inspect.Docker.Config
	uid, _, _ := strings.Cut(cfg.User, ":")
	if uid == "" || uid == "0" || uid == "root" {
		t.Errorf("the image runs as %q, not a non-root user", cfg.User)
	}
	if _, ok := cfg.Volumes["/data"]; !ok {
		t.Errorf("/data is not a declared volume: %v", cfg.Volumes)
	}
	if _, ok := cfg.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("8080/tcp is not exposed: %v", cfg.ExposedPorts)
	}
	for _, want := range []string{"ASKBRIDGE_ADDR=0.0.0.0:8080", "ASKBRIDGE_DATA_DIR=/data"} {
		if !contains(cfg.Env, want) {
			t.Errorf("env %v lacks %s", cfg.Env, want)
		}
	}
	if got := strings.Join(append(cfg.Entrypoint, cfg.Cmd...), " "); got != "/usr/local/bin/askbridge serve" {
		t.Errorf("entrypoint and cmd: %q", got)
	}
	// The HEALTHCHECK as the Dockerfile writes it (TestHealthChecksAskLiveness
	// says why it is so), kept by the build.
	if want := append([]string{"CMD"}, dockerfileHealth(t).argv...); cfg.Healthcheck == nil || !slices.Equal(cfg.Healthcheck.Test, want) {
		t.Fatalf("healthcheck: %+v; want %q", cfg.Healthcheck, want)
	}

	ctr := b.run("from", "--quiet", "--name", containerName("image"), image)
	t.Cleanup(func() { b.cmd(context.Background(), "rm", ctr).Run() })
	root := b.run("mount", ctr)
	bin := filepath.Join(root, "usr/local/bin/askbridge")
	checkStatic(t, bin)
	checkFiles(t, root, uid)

	// The binary runs from the image's own filesystem, as the image's user.
	if out := b.run("run", "--isolation", "chroot", ctr, "--", "/usr/local/bin/askbridge", "version"); out != "askbridge "+imageVersion {
		t.Errorf("askbridge version in the image: %q", out)
	}
	// --help exits 2, as every command's does.
	help := b.cmd(t.Context(), "run", "--isolation", "chroot", ctr, "--", "/usr/local/bin/askbridge", "healthcheck", "--help")
	if out, err := help.CombinedOutput(); help.ProcessState == nil || help.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "/readyz") {
		t.Errorf("askbridge healthcheck --help in the image: %v\n%s", err, out)
	}
	checkNotes(t, root, serveAndCheck(t, b, ctr, cfg.Healthcheck.Test[1:]))
}

// checkNotes holds the chart's NOTES to the image: each command a
// "kubectl exec" there runs is a file in the image (FROM scratch has no
// cat), and the text a "kubectl logs | grep" there looks for is what serve
// in the image printed on its first start, with the admin token on the
// line after it.
func checkNotes(t *testing.T, root, serveLog string) {
	t.Helper()
	m, err := render(t, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	execs, phrase := notesCommands(m.notes)
	for _, argv := range execs {
		bin := argv[0]
		if !strings.HasPrefix(bin, "/") {
			bin = "/usr/local/bin/" + bin
		}
		if fi, err := os.Stat(filepath.Join(root, bin)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("NOTES run %q in the pod, which the image does not have: %v", argv[0], err)
		}
	}
	if phrase == "" {
		t.Fatalf("NOTES give no way to find the admin token:\n%s", m.notes)
	}
	_, after, found := strings.Cut(serveLog, phrase)
	lines := strings.SplitN(after, "\n", 3)
	if !found || len(lines) < 2 || len(strings.TrimSpace(lines[1])) != 64 {
		t.Fatalf("NOTES grep the log for %q and the line after it; serve in the image printed:\n%s", phrase, serveLog)
	}
	if b, err := os.ReadFile(filepath.Join(root, "data/admin.token")); err == nil && strings.TrimSpace(string(b)) != strings.TrimSpace(lines[1]) {
		t.Errorf("the line after %q is not the token in /data/admin.token", phrase)
	}
}

// serveAndCheck starts the image's own command (serve, as the image user,
// writing to /data) and runs its HEALTHCHECK command, check, against it
// until it passes, then healthcheck's readiness check too: chroot
// isolation shares this machine's network, so a free loopback port stands
// in for the container's 8080. It returns what serve printed by then.
func serveAndCheck(t *testing.T, b buildah, ctr string, check []string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := "ASKBRIDGE_ADDR=" + addr

	ctx, cancel := context.WithCancel(t.Context())
	serve := b.cmd(ctx, "run", "--isolation", "chroot", "--env", env, ctr, "--", "/usr/local/bin/askbridge", "serve")
	var log logbuf.Buffer
	serve.Stdout, serve.Stderr = &log, &log
	serve.Cancel = func() error { return serve.Process.Signal(syscall.SIGTERM) }
	serve.WaitDelay = 15 * time.Second
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer func() {
		cancel()
		<-exited
	}()

	var last []byte
	for deadline := time.Now().Add(60 * time.Second); ; {
		out, err := b.cmd(t.Context(), append([]string{"run", "--isolation", "chroot", "--env", env, ctr, "--"}, check...)...).CombinedOutput()
		if err == nil {
			break
		}
		last = out
		if time.Now().After(deadline) {
			t.Fatalf("the image's healthcheck never passed: %s\nserve: %s", last, log.String())
		}
		// The probe is run again as an orchestrator would, a moment later,
		// unless serve has exited meanwhile.
		select {
		case err := <-exited:
			t.Fatalf("serve in the image exited: %v\n%s", err, log.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	// Serving on the embedded store, it is ready too.
	if out, err := b.cmd(t.Context(), "run", "--isolation", "chroot", "--env", env, ctr, "--", "/usr/local/bin/askbridge", "healthcheck").CombinedOutput(); err != nil {
		t.Errorf("askbridge healthcheck (readiness) in the image: %v\n%s", err, out)
	}
	// The first-start notice follows the listener being up.
	if !log.WaitFor("/data/admin.token", 5*time.Second) {
		t.Errorf("serve did not keep its admin token in /data:\n%s", log.String())
	}
	return log.String()
}

// checkStatic proves the binary needs no loader and no shared library and
// was built with cgo off and trimmed paths. (With -trimpath the build info
// leaves out -ldflags; "askbridge version" proves the stamp instead.)
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): it is not static")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v (%v)", libs, err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings: CGO_ENABLED=%q -trimpath=%q", settings["CGO_ENABLED"], settings["-trimpath"])
	}
}

// checkFiles looks at the image's filesystem: CA certificates that parse,
// the user named in /etc/passwd, and /data owned by that user so a fresh
// named volume is writable.
func checkFiles(t *testing.T, root, uid string) {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		t.Error("the CA bundle holds no certificate")
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(passwd), fmt.Sprintf(":x:%s:", uid)) {
		t.Errorf("/etc/passwd does not name uid %s:\n%s", uid, passwd)
	}
	fi, err := os.Stat(filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fmt.Sprint(st.Uid) != uid {
		t.Errorf("/data: dir %v, owner %d; want a directory owned by %s", fi.IsDir(), st.Uid, uid)
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "data etc usr" {
		t.Errorf("the image's top level is %q; want only data, etc and usr (no shell, no extras)", got)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
