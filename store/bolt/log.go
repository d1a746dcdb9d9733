package bolt

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Log is a store file's event log opened only to be read, as `askbridge
// audit verify` reads it. Open would create the file's buckets and mark
// its schema, making a store of whatever file it is given; a check must
// change nothing, and report a file that holds no store as such rather
// than as an empty log that holds. The file is opened read-only, so bbolt
// itself refuses any write, and a Log has no method that writes.
type Log struct {
	s *Store
}

// OpenLog opens the store file at path read-only (of opts, only Timeout
// counts: how long to wait while a serve holds the file). It refuses a
// file that holds no askbridge store, or one of a newer schema.
func OpenLog(path string, opts Options) (*Log, error) {
	const op = "open bolt log"
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	db, err := openChecked(path, &bbolt.Options{Timeout: timeout, ReadOnly: true})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, core.Internal(op, fmt.Errorf("%s is locked by another process (waited %s): is askbridge serve running on it?", path, timeout))
	}
	if err != nil {
		return nil, core.Internal(op, err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil || meta.Get(metaSchema) == nil || tx.Bucket(bucketEvents) == nil {
			return fmt.Errorf("%s holds no askbridge store (it has no schema mark or no event log)", path)
		}
		v := meta.Get(metaSchema)
		if n, err := strconv.Atoi(string(v)); err != nil || n > schemaVersion {
			return fmt.Errorf("%s has schema version %q; this askbridge reads up to %d", path, v, schemaVersion)
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, core.Internal(op, err)
	}
	return &Log{s: &Store{db: db, path: path, audit: opts.AuditKey}}, nil
}

// Events reads events as Store.Events does.
func (l *Log) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	return l.s.Events(ctx, since, limit)
}

// Close closes the file.
func (l *Log) Close() error {
	return l.s.db.Close()
}

// Ends is the store's keyed record of where its chain ends, as
// audit.Options.Ends takes it (chain.go).
func (l *Log) Ends() (map[int]string, error) {
	var out map[int]string
	err := l.s.view("chain ends", func(tx *bbolt.Tx) error {
		out = ends(tx)
		return nil
	})
	return out, err
}
