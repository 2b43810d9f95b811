package dbsync

import (
	"context"
	"fmt"
	"time"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/db"
)

// RotateKey re-encrypts every BMC credential in node driver_info with
// keys' current key (and encrypts credentials stored before a key was
// configured), online and in batches of batch nodes (0 means
// db.DefaultRotateBatch), printing progress on Out. No key is refused
// (exit 2); a credential sealed with a key missing from the file is an
// error naming the key id (exit 1). Running it again finds nothing to do.
func (s *Syncer) RotateKey(ctx context.Context, keys *keyring.Keyring, batch int) error {
	if keys == nil {
		return refusal("rotate-key: [DEFAULT] credential_key_file is not set; there is no key to encrypt with")
	}
	d, err := db.Open(ctx, s.Connection, s.Options)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	lastPrint := time.Time{}
	p, err := d.RotateCredentials(ctx, keys, batch, func(p db.RotateProgress) {
		if time.Since(lastPrint) >= time.Second || p.Scanned == p.Total {
			s.printf("rotate-key: %d/%d nodes scanned, %d re-encrypted\n", p.Scanned, p.Total, p.Rewritten)
			lastPrint = time.Now()
		}
	})
	if err != nil {
		return fmt.Errorf("rotate-key: stopped after %d/%d nodes (run it again when fixed): %w", p.Scanned, p.Total, err)
	}
	s.printf("rotate-key: done in %v: %d nodes scanned, %d re-encrypted with key %q (%d retried after a concurrent write)\n",
		time.Since(start).Round(time.Millisecond), p.Scanned, p.Rewritten, keys.Current(), p.Raced)
	return nil
}
