// Package webhook holds the model and the pure rules of partner webhooks:
// the registration and its per-partner limit, the outbox entry each owed
// delivery is, the delivery history record and its states, the event names
// of the specification's table, the payload shape, the HMAC-SHA256
// signature, the URL policy that keeps deliveries away from internal
// networks, and the retry schedule. It performs no I/O of its own (name
// resolution goes through an injected Resolver), so the storage in package
// store, the delivery pool in actors/webhook and the edge share one
// definition of each type and rule.
package webhook
