// Command trial is a trial period, tested through spooltest (spooltest/spooltest_test.go): it
// charges a card (a step the cases stub: ./charge-card is not there), sleeps out two weeks, then
// waits a week for an upgrade. Its cases, trial.test.yaml, go beside the .sh that execs it:
//
//	go build -o /tmp/trial ./examples/trial
//	printf 'exec /tmp/trial\n' > trial.sh && cp examples/trial/trial.test.yaml .
//	spool test trial.sh
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	hyperspool "hyperspool.dev/go"
)

const day = 24 * time.Hour

func trial() error {
	receipt, err := hyperspool.Step("charge", "./charge-card", "--amount", "0")
	if err != nil {
		return err
	}
	if err := hyperspool.Sleep(14 * day); err != nil {
		return err
	}
	plan, upgraded, err := hyperspool.WaitSignalTimeout("upgrade", 7*day)
	if err != nil {
		return err
	}
	if !upgraded {
		plan = "free"
	}
	if err := hyperspool.OutputSet("receipt", strings.TrimSpace(receipt)); err != nil {
		return err
	}
	return hyperspool.OutputSet("plan", plan)
}

func main() {
	if err := trial(); err != nil {
		fmt.Fprintln(os.Stderr, "trial:", err)
		os.Exit(hyperspool.ExitCode(err))
	}
}
