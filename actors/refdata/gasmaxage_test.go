package refdata

import (
	"errors"
	"testing"
)

// TestGasMaxAge: a gas record is served while the oracle keeps answering
// and is absent once its last answer is older than the maximum age (by
// default, here an hour on), whether or not the actor has dropped it yet,
// its version moving with it so that answers encoded from it are not
// served again; the oracle answering again serves a record under a newer
// version. Nothing stands in for it meanwhile.
func TestGasMaxAge(t *testing.T) {
	f := start(t, nil)
	if _, ok := f.svc.Gas(1); !ok {
		t.Fatal("no gas record after the first refresh")
	}
	v0 := f.svc.GasVersion(1)
	f.gas.set(func(g *fakeGas) { g.err = errors.New("node down") })

	f.now.Add(3_600)
	if rec, ok := f.svc.Gas(1); ok {
		t.Errorf("a record last read an hour ago is served: %+v", rec)
	}
	v1 := f.svc.GasVersion(1)
	if v1 == v0 {
		t.Errorf("version %d did not move when the record grew too old", v1)
	}
	if err := f.refresh(t, 1); err == nil {
		t.Fatal("the failing oracle's refresh reported no error")
	}
	if rec, ok := f.svc.Gas(1); ok {
		t.Errorf("a failed refresh brought the old record back: %+v", rec)
	}
	if v := f.svc.GasVersion(1); v != v1 {
		t.Errorf("version %d after the actor dropped the record, %d before: one absence, one version", v, v1)
	}

	f.gas.set(func(g *fakeGas) { g.err = nil })
	if err := f.refresh(t, 1); err != nil {
		t.Fatal(err)
	}
	if rec, ok := f.svc.Gas(1); !ok || rec.Speed.Standard.GasPrice != "100" {
		t.Errorf("the oracle answered again: record %+v, %v", rec, ok)
	}
	if v := f.svc.GasVersion(1); v <= v1 {
		t.Errorf("version %d after the record came back, not past %d", v, v1)
	}
}
