package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
	auditlog "github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/store/bolt"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// auditKeyFile is where serve keeps the audit key it made, in the data
// directory, when ASKBRIDGE_AUDIT_KEY is not set.
const auditKeyFile = "audit.key"

// auditKey is the key the event log is chained under: ASKBRIDGE_AUDIT_KEY,
// or the one kept in the data directory. serve makes that one on first
// use (create); verify only reads it, since a key made now could verify
// nothing. Every replica on one Redis must share it, as they share the
// actor key.
func (s *Settings) auditKey(create bool) (auditlog.Key, error) {
	if k := s.AuditKey.Reveal(); k != "" {
		return auditlog.Key(k), nil
	}
	path := filepath.Join(s.DataDir, auditKeyFile)
	if create {
		k, _, err := readOrCreateSecret(path)
		return auditlog.Key(k), err
	}
	k, err := readAuditKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no audit key: set ASKBRIDGE_AUDIT_KEY, or ASKBRIDGE_DATA_DIR to the directory serve keeps %s in", auditKeyFile)
	}
	return k, err
}

// maxKeyFile and maxReport bound what verify reads of a key file and of
// an earlier report: far above what either holds (a key is a line; a
// report names a head for each of at most core.MaxShards streams), so
// that a file given by mistake (an export, /dev/zero) is refused by name
// rather than read into memory whole, or for ever.
const (
	maxKeyFile = 64 << 10
	maxReport  = 1 << 20
)

// readBounded is the content of the file at path, refused when it holds
// more than limit bytes; holds names what it should hold, for the error.
func readBounded(path string, limit int64, holds string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than %d KiB: it should hold %s", path, limit>>10, holds)
	}
	return b, nil
}

// readAuditKey reads a key kept in a file, as serve keeps audit.key.
func readAuditKey(path string) (auditlog.Key, error) {
	b, err := readBounded(path, maxKeyFile, "an audit key")
	if err != nil {
		return nil, err
	}
	k := strings.TrimSpace(string(b))
	if k == "" {
		return nil, fmt.Errorf("%s holds no key", path)
	}
	return auditlog.Key(k), nil
}

// cmdAudit is "askbridge audit verify [FILE...]": it walks the event log,
// from the files given (NDJSON exports, read as one log in the order
// given) or else through the store serve is configured with, checks its
// audit chain, and reports the first broken link with its seq. Exit 0:
// the chain holds; 1: it is broken (or could not be read); 2: usage.
func cmdAudit(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, stdout, stderr io.Writer) int {
	const synopsis = "audit verify [--json] [--heads REPORT] [--old-key FILE]... [--allow-unchained] [--whole] [FILE...]"
	if !subcommand(args, "verify", synopsis, stderr) {
		return exitUsage
	}
	fs := newFlags("audit verify", stderr, synopsis+"\n\nChecks the event log's audit chain: the NDJSON exports given (GET /v1/audit/export, oldest first),\nor else the log in the store askbridge serve is configured with (on the embedded store, while serve is stopped).")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	headsFile := fs.String("heads", "", "an earlier check's --json report: the log must still hold the heads it found, or the files given continue from them (events cut off a stream's end show only so)")
	// Only the operator knows that the log began before the chain: the
	// store holds nothing that whoever strips the chains could not forge.
	allowUnchained := fs.Bool("allow-unchained", false, "the log began before askbridge chained its events (a store an earlier version made): take its unchained first events as not covered rather than as a break")
	// An export taken with since starts mid-chain, and its first link
	// cannot be checked: only the operator knows that the files given
	// are meant to be the whole log, where a first event that continues
	// an earlier one means events were cut off its start.
	whole := fs.Bool("whole", false, "the files given are the whole log, from its beginning (exports taken without since): a first event that continues an earlier one is a break, not a note")
	// After a change of audit key the log holds events under each key it
	// has had; only the operator holds the earlier ones.
	var oldKeys []auditlog.Key
	var oldKeyFiles []string
	fs.Func("old-key", "a file holding an audit key the log was chained under before the one set now (as audit.key does); repeat it for each earlier key, oldest first", func(path string) error {
		k, err := readAuditKey(path)
		if err == nil {
			oldKeys, oldKeyFiles = append(oldKeys, k), append(oldKeyFiles, path)
		}
		return err
	})
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	var heads map[int]string
	if *headsFile != "" {
		var err error
		if heads, err = earlierHeads(*headsFile); err != nil {
			fmt.Fprintln(stderr, "askbridge audit verify: --heads:", err)
			return exitUsage
		}
	}
	settings, err := LoadSettings(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge:", err)
		return exitUsage
	}
	key, err := settings.auditKey(false)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge audit verify:", err)
		return exitError
	}
	var (
		walk auditlog.Walk
		opt  auditlog.Options
	)
	if files := fs.Args(); len(files) > 0 {
		if err := regularFiles(files); err != nil {
			fmt.Fprintln(stderr, "askbridge audit verify:", err)
			return exitUsage
		}
		walk, opt = fileWalk(files), auditlog.Options{MidChain: !*whole}
	} else {
		st, err := openAuditStore(ctx, settings, key)
		if err != nil {
			fmt.Fprintln(stderr, "askbridge audit verify:", err)
			return exitError
		}
		defer st.Close()
		walk = auditlog.StoreWalk(ctx, st)
		if e, ok := st.(endRecords); ok {
			if opt.Ends, err = e.Ends(); err != nil {
				fmt.Fprintln(stderr, "askbridge audit verify:", err)
				return exitError
			}
		}
	}
	opt.Heads = heads // files or the store alike: each stream must reach or continue from its head
	opt.AllowUnchained = *allowUnchained
	opt.OldKeys = oldKeys
	rep, err := auditlog.Verify(key, walk, opt)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge audit verify:", err)
		return exitError
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ") // plain data always encodes
		fmt.Fprintln(stdout, string(b))
	} else {
		printReport(stdout, rep, *allowUnchained, oldKeyFiles)
	}
	if rep.Break != nil {
		return exitError
	}
	return 0
}

func printReport(w io.Writer, rep auditlog.Report, allowUnchained bool, oldKeyFiles []string) {
	if rep.Break != nil {
		fmt.Fprintf(w, "BROKEN at seq %d (stream %d): %s\n", rep.Break.Seq, rep.Break.Stream, rep.Break.Reason)
		fmt.Fprintf(w, "%s read up to it\n", count(rep.Events, "event"))
		switch {
		case rep.Break.Unchained && !allowUnchained && rep.Events == 1:
			fmt.Fprintln(w, "if this log began before askbridge chained its events (a store an earlier version made), check it with --allow-unchained: its unchained first events are then reported as not covered")
		case rep.Break.Unrecorded && !allowUnchained:
			fmt.Fprintln(w, "if an earlier version of askbridge wrote this store last, check it with --allow-unchained, which reports the end it left as not covered")
		case rep.Break.KeyMismatch:
			fmt.Fprintln(w, "if the audit key was changed, give each earlier key with --old-key FILE, oldest first")
		}
		return
	}
	fmt.Fprintf(w, "the audit chain holds: %s in %s; %s checked, %s\n",
		count(rep.Events, "event"), count(rep.Streams, "stream"), count(rep.Witnessed, "witness"), count(rep.Checkpoints, "purge checkpoint"))
	if rep.Unchained > 0 {
		fmt.Fprintf(w, "%d events before them were written before the chain began (--allow-unchained), and are not covered\n", rep.Unchained)
	}
	for _, seq := range rep.Unrecorded {
		fmt.Fprintf(w, "seq %d: the store kept no keyed record that the chain ended there (an earlier version wrote it, --allow-unchained): events cut off after it would not show\n", seq)
	}
	for _, c := range rep.Keys {
		name := "the audit key set now"
		if c.Key < len(oldKeyFiles) {
			name = "the key in " + oldKeyFiles[c.Key]
		}
		fmt.Fprintf(w, "stream %d is under %s from seq %d\n", c.Stream, name, c.Seq)
	}
	for _, seq := range rep.MidChain {
		fmt.Fprintf(w, "seq %d continues an earlier export: its link to the event before it was not checked\n", seq)
	}
	for _, s := range slices.Sorted(maps.Keys(rep.Heads)) {
		fmt.Fprintf(w, "stream %d ends at %s (keep the --json report, and check the next time with --heads)\n", s, rep.Heads[s])
	}
}

// earlierHeads reads the heads of an earlier check's --json report.
func earlierHeads(path string) (map[int]string, error) {
	b, err := readBounded(path, maxReport, "a report of audit verify --json")
	if err != nil {
		return nil, err
	}
	var rep auditlog.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s is not a report of audit verify --json: %w", path, err)
	}
	if len(rep.Heads) == 0 {
		return nil, fmt.Errorf("%s names no heads", path)
	}
	return rep.Heads, nil
}

// regularFiles refuses a file given that is not a regular one (a pipe,
// /dev/stdin, a process substitution): Verify walks the log twice, and
// the second read of a pipe finds nothing, so every export piped in
// would hold, with no events checked. A file that cannot be opened is
// left to the walk, which names it.
func regularFiles(paths []string) error {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file: verify reads each file twice (for the purges' runs, then every link), and a pipe can be read once; save the export to a file first", p)
		}
	}
	return nil
}

// fileWalk reads the files as one log, in order, each time it is walked.
func fileWalk(paths []string) auditlog.Walk {
	return func(yield func(core.Event) error) error {
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			err = auditlog.Lines(f, yield)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	}
}

// auditStore is what verify reads of a store.
type auditStore interface {
	auditlog.EventLog
	Close() error
}

// endRecords is a store that keeps a keyed record of where its chain
// ends (the embedded one): verify checks the log ends there.
type endRecords interface {
	Ends() (map[int]string, error)
}

// openAuditStore opens the event log of the store serve is configured
// with, read-only: a check writes nothing, migrates nothing, and refuses
// a database or file that holds no store rather than report it empty.
func openAuditStore(ctx context.Context, s Settings, key auditlog.Key) (auditStore, error) {
	dial, redisVar, err := s.redisDial()
	if err != nil {
		return nil, err
	}
	if redisVar != "" {
		st, err := redisstore.OpenLog(ctx, dial, redisstore.Options{Shards: s.File.Policies.Shards, AuditKey: key})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", redisVar, err)
		}
		return st, nil
	}
	path := filepath.Join(s.DataDir, "askbridge.db")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("embedded store %s: %w", path, err)
	}
	return bolt.OpenLog(path, bolt.Options{AuditKey: key})
}

// count is n and noun, plural when n is not 1.
func count(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case noun == "person":
		return fmt.Sprintf("%d people", n)
	case strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
