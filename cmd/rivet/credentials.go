package main

import (
	"log/slog"
	"sync"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// noKeyWarning makes the "credentials unencrypted" warning appear once per
// process, even when one process runs the API and a conductor.
var noKeyWarning sync.Once

// credentialKeys loads [DEFAULT] credential_key_file; nil when it is unset,
// with a warning logged once.
func credentialKeys(cfg *config.Config, log *slog.Logger) (*keyring.Keyring, error) {
	if cfg.Default.CredentialKeyFile == "" {
		noKeyWarning.Do(func() {
			log.Warn("[DEFAULT] credential_key_file is not set: BMC credentials are stored unencrypted in the database; see docs/admin/security.md")
		})
		return nil, nil
	}
	return keyring.Load(cfg.Default.CredentialKeyFile)
}

// newStore returns the DB boundary for services: a Store that encrypts BMC
// credentials with the configured keys.
func newStore(cfg *config.Config, dbh *db.DB, reg *objects.Registry, pinner *release.Pinner, log *slog.Logger) (*db.Store, error) {
	keys, err := credentialKeys(cfg, log)
	if err != nil {
		return nil, err
	}
	return db.NewStore(dbh, reg, pinner).WithKeyring(keys), nil
}
