// Package loadgen drives HTTP load against a Swapgate listening on loopback
// and reports latency as HDR percentiles, one line per second and a JSON
// summary at the end, in the manner of cockroachdb/pebble's bench tool.
//
// Two loops are offered. The closed loop runs N workers with one request in
// flight each: it measures the service at its own pace, which is what an
// operator sizing actor pools wants to see. The open loop issues requests at
// a target rate (fixed or Poisson arrivals) and measures each latency from
// the request's intended send time, not from the moment a worker got round
// to sending it, so that a stalled server is charged for the requests it
// delayed (coordinated omission).
//
// A run may start with a warm-up whose requests are sent and shown in the
// interval lines but kept out of the summary, so that figures describe the
// steady state rather than connection setup and cold caches. The summary
// carries the percentile curve of the measured part for HDR plots.
//
// Every run is bounded both in duration and in total requests and stops by
// itself, and it refuses any target that is not on loopback: load is only
// ever aimed at the machine the generator runs on.
package loadgen
