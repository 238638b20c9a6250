package pebblestore

import (
	"context"
	"fmt"
	"log/slog"
)

// pebbleLogger adapts Pebble's printf-style logger to slog. Informational
// lines are dropped; errors go to the service log when one is configured.
type pebbleLogger struct {
	log *slog.Logger
}

// Infof drops Pebble's routine start-up and compaction messages.
func (pebbleLogger) Infof(string, ...any) {}

// Errorf forwards Pebble's error reports, which an operator must see.
func (l pebbleLogger) Errorf(format string, args ...any) {
	if l.log != nil {
		l.log.LogAttrs(context.Background(), slog.LevelError, fmt.Sprintf(format, args...),
			slog.String("component", "pebble"))
	}
}

// Fatalf reports an unrecoverable Pebble state and panics: Pebble expects
// Fatalf not to return, and continuing could corrupt the store.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.Errorf("%s", msg)
	panic("pebble: " + msg)
}
