package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge/admin"
)

// TestReadmeOperatorKeyWalkthrough runs the README's operator-key commands
// as written, with bash in a fresh directory: create prints the address,
// show the same one, tx list an empty list; the key is printed nowhere.
func TestReadmeOperatorKeyWalkthrough(t *testing.T) {
	script := readmeBlock(t, "### The operator's account and its transactions")
	for _, want := range []string{"operator-key create --data ./data", "operator-key show --data ./data", "tx list --data ./data"} {
		if !strings.Contains(script, want) {
			t.Fatalf("the README's commands lack %q:\n%s", want, script)
		}
	}
	dir := t.TempDir()
	linkSwapgate(t, dir)
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWAPGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's commands: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	var created, shown admin.OperatorKeyView
	var list []admin.IntentView
	for _, v := range []any{&created, &shown, &list} {
		if err := dec.Decode(v); err != nil {
			t.Fatalf("output %q: %v", stdout.String(), err)
		}
	}
	if err := dec.Decode(new(any)); err != io.EOF {
		t.Fatalf("more output than three answers: %s", stdout.String())
	}
	if len(created.Address) != 42 || shown != created || list == nil || len(list) != 0 {
		t.Fatalf("create %+v, show %+v, tx list %v", created, shown, list)
	}
	st := openSuiteStore(t, dir+"/data")
	defer st.Close()
	raw, err := st.TxIntents.OperatorKey(t.Context(), app.OperatorKeyName)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(stdout.String()+stderr.String()), hex.EncodeToString(raw)) {
		t.Fatal("the key was printed")
	}
}
