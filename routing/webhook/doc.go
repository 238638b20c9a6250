// Package webhook holds the pure rules of partner webhooks: the event names
// of the specification's table, the payload shape, the HMAC-SHA256 signature,
// the URL policy that keeps deliveries away from internal networks, and the
// retry schedule. It performs no I/O of its own (name resolution goes through
// an injected Resolver), so the storage in package persistence and the
// delivery pool in actors/webhook share one definition of each rule.
package webhook
