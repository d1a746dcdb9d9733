package app

import (
	"fmt"
	"os"
)

// LoadSettings reads the environment (through getenv) and the YAML file it
// names, and checks both. Every error names the variable or key at fault.
func LoadSettings(getenv func(string) string) (Settings, error) {
	s, _, err := loadSettings(getenv)
	return s, err
}

// loadSettings is LoadSettings, also returning the file's bytes as it
// read them (nil with no file), for config check to judge those very
// bytes as a reload would (refuseNothing).
func loadSettings(getenv func(string) string) (s Settings, raw []byte, err error) {
	if s, err = readEnv(getenv); err != nil {
		return s, nil, err
	}
	if err = s.check(); err != nil || s.ConfigPath == "" {
		return s, nil, err
	}
	if raw, err = os.ReadFile(s.ConfigPath); err != nil {
		return s, nil, fmt.Errorf("ASKBRIDGE_CONFIG: %w", err)
	}
	if s.File, err = parseFile(raw, getenv); err != nil {
		return s, raw, fmt.Errorf("%s: %w", s.ConfigPath, err)
	}
	s.fileDigest = configDigest(raw)
	return s, raw, nil
}

// fileError is err, found in the configuration file, prefixed with the
// file's path as LoadSettings prefixes its errors.
func (s Settings) fileError(err error) error {
	if s.ConfigPath == "" {
		return err
	}
	return fmt.Errorf("%s: %w", s.ConfigPath, err)
}
