package app

// When the configuration file is read again: on SIGHUP at once, and after
// a change seen by watching the directories that lead to it (reload.go
// holds what a reading does).

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDebounce is the quiet spell a change must be followed by before
// the file is read, which gathers the burst of events one change makes
// (an editor's rename and write, a ConfigMap's new directory and link
// swap) into one reading; and the spell after which it must read the same
// again before it is taken (see loop).
const reloadDebounce = 200 * time.Millisecond

// maxLinks bounds the symbolic links followed to the file, as the system
// bounds them (ELOOP): a loop of links ends.
const maxLinks = 40

// dirWatcher is what the reload loop needs of fsnotify.Watcher.
type dirWatcher interface {
	Add(name string) error
	Remove(name string) error
	Close() error
}

// watched is the reloader's watch on the directories that lead to the
// file (watchedNames), kept up to date as links are re-pointed (rewatch).
type watched struct {
	watcher dirWatcher // nil: nothing is watched
	events  <-chan fsnotify.Event
	errs    <-chan error
	path    string          // the configuration's path, absolute
	dirs    map[string]bool // the directories watched now
	names   watchSet        // the names in them whose change is the file's
}

// watch starts watching the directories that lead to the file: its own,
// which sees an edit in place and a file replaced by rename, and those of
// every symbolic link on the way to it and of the file it ends at, so a
// file reached through a link (a Kubernetes ConfigMap's ..data swapped
// under a link from elsewhere, a link to a file in another directory) is
// seen to change too. Run calls it before it returns, and the loop's
// first reading covers the changes made before it (loop). A watch that
// cannot be set up is logged: the file is then read again on SIGHUP only.
func (r *reloader) watch() {
	path := r.m.Settings.ConfigPath
	if path == "" {
		return
	}
	abs, err := filepath.Abs(path)
	var w *fsnotify.Watcher
	if err == nil {
		w, err = fsnotify.NewWatcher()
	}
	if err == nil {
		if err = w.Add(filepath.Dir(abs)); err != nil {
			w.Close()
		}
	}
	if err != nil {
		r.m.Log.Warn().Err(err).Str("path", path).Msg("cannot watch the configuration's directory: it is read again on SIGHUP only")
		return
	}
	r.watched = watched{watcher: w, events: w.Events, errs: w.Errors, path: abs, dirs: map[string]bool{filepath.Dir(abs): true}}
	r.rewatch()
}

// close stops the watch, for a program that stops before runReloads ran.
func (r *reloader) close() {
	if r.watcher != nil {
		r.watcher.Close()
	}
}

// rewatch watches the directories that lead to the file now, and only
// those: a link re-pointed (a ConfigMap's ..data swapped) leads through
// another. A directory that cannot be watched (gone already) is tried
// again at the next reading.
func (r *reloader) rewatch() {
	if r.watcher == nil {
		return
	}
	r.names = watchedNames(r.path)
	for dir := range r.names {
		if !r.dirs[dir] && r.watcher.Add(dir) == nil {
			r.dirs[dir] = true
		}
	}
	for dir := range r.dirs {
		if r.names[dir] == nil {
			_ = r.watcher.Remove(dir)
			delete(r.dirs, dir)
		}
	}
}

// changes reports whether ev may change what the file reads: an event
// on one of the watched names, or a watched directory itself removed or
// moved (whose watch is then dropped, for rewatch to set up anew). Events
// of the other files in the directories are not: a busy neighbour (a log,
// a lock file, a ConfigMap's other keys) must not keep putting a reading
// off.
func (r *reloader) changes(ev fsnotify.Event) bool {
	if r.dirs[ev.Name] && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		_ = r.watcher.Remove(ev.Name)
		delete(r.dirs, ev.Name)
		return true
	}
	return r.names.has(ev.Name)
}

// runReloads is the reload loop, until ctx ends (loop, taking each
// reading as reload.go does).
func (r *reloader) runReloads(ctx context.Context, hangups <-chan os.Signal) error {
	defer r.close()
	r.loop(ctx, hangups, r.take)
	return nil
}

// loop reads the file on each of hangups (Main.Hangups) and hands the
// reading to take at once: whoever sends SIGHUP says the file is
// written. A change seen by the watch is read after a quiet spell
// (reloadDebounce), and handed to take only once a second reading, one
// more quiet spell later, finds the same bytes: a file caught mid-write
// (an editor writing it in two steps, a copy still under way) may well be
// valid YAML, and would take routes and tokens away until the rest
// arrived. Only a writer that stops mid-file for longer than both spells
// is taken at its half; fsnotify offers no portable "closed after
// writing" to wait for instead. A reading of the file in force, or of the one last refused,
// is not handed on (unchanged).
func (r *reloader) loop(ctx context.Context, hangups <-chan os.Signal, take func(ctx context.Context, trigger string, raw []byte, err error)) {
	events, errs := r.events, r.errs
	// The first quiet spell reads the file as the watch begins: a change
	// made after serve read it, while the store opened and before the
	// watch was on, made no event, and would have left this replica on
	// the file it started with until the next change.
	settle := time.NewTimer(reloadDebounce)
	if r.watcher == nil {
		settle.Stop()
	}
	var first string // what the last quiet spell read, not yet taken
	for {
		select {
		case <-ctx.Done():
			return
		case <-hangups:
			first = ""
			if r.m.Settings.ConfigPath == "" {
				r.m.Log.Info().Str("trigger", reloadSIGHUP).Msg("no configuration file to read again (ASKBRIDGE_CONFIG is not set)")
				continue
			}
			r.rewatch()
			raw, err := os.ReadFile(r.m.Settings.ConfigPath)
			take(ctx, reloadSIGHUP, raw, err)
		case ev, ok := <-events:
			if !ok {
				events = nil // the watch ended: SIGHUP still reads the file
				continue
			}
			if r.changes(ev) {
				settle.Reset(reloadDebounce)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			r.m.Log.Warn().Err(err).Msg("watching the configuration's directory")
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				settle.Reset(reloadDebounce) // the events lost may have been the file's
			}
		case <-settle.C:
			r.rewatch()
			raw, err := os.ReadFile(r.m.Settings.ConfigPath)
			digest := configDigest(raw)
			reading := digest
			if err != nil {
				reading = "unreadable: " + err.Error()
			}
			switch {
			case r.unchanged(digest, err):
				first = ""
			case reading != first:
				first = reading
				settle.Reset(reloadDebounce)
			default:
				first = ""
				take(ctx, reloadFile, raw, err)
			}
		}
	}
}

// watchSet is, for each directory to watch, the names in it whose change
// changes what the configuration's path reads.
type watchSet map[string]map[string]bool

// has reports whether path (an event's) is one of the names.
func (w watchSet) has(path string) bool {
	return w[filepath.Dir(path)][filepath.Base(path)]
}

func (w watchSet) add(path string) {
	dir := filepath.Dir(path)
	if w[dir] == nil {
		w[dir] = map[string]bool{}
	}
	w[dir][filepath.Base(path)] = true
}

// watchedNames is the watch set of path (absolute and clean): its own
// name, the name of each symbolic link the system follows on the way to
// the file, and the file's; or, where a name on the way does not exist,
// that name, in the directory that does (a create there makes the way
// again). For a Kubernetes ConfigMap's /etc/askbridge/askbridge.yaml, a
// link to ..data/askbridge.yaml, with ..data a link to
// ..2026_12_04_22_00_00.1, that is askbridge.yaml and ..data in
// /etc/askbridge, and askbridge.yaml in the dated directory.
func watchedNames(path string) watchSet {
	set := watchSet{}
	set.add(path)
	for range maxLinks {
		link, target, rest, missing := walk(path)
		if missing != "" {
			set.add(missing)
			break
		}
		if link == "" {
			break
		}
		set.add(link)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(link), target)
		}
		path = filepath.Join(target, rest)
	}
	set.add(path)
	return set
}

// walk finds the first name in path (absolute and clean), from the root,
// that is a symbolic link (link, what it points to, and the rest of path
// after it) or that cannot be read (missing: it does not exist, say).
// All are empty when path leads to a file with no link on the way.
func walk(path string) (link, target, rest, missing string) {
	names := strings.Split(strings.TrimPrefix(path, string(filepath.Separator)), string(filepath.Separator))
	at := string(filepath.Separator)
	for i, name := range names {
		at = filepath.Join(at, name)
		fi, err := os.Lstat(at)
		if err != nil {
			return "", "", "", at
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if target, err = os.Readlink(at); err != nil {
			return "", "", "", at
		}
		return at, target, filepath.Join(names[i+1:]...), ""
	}
	return "", "", "", ""
}
