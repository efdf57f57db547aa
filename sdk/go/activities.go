package hyperspool

import (
	"strconv"
	"time"
)

// ActivityOptions say where an activity runs and how it is retried. The zero value is what
// ActivitySubmit sends: no requirements, one attempt, and (when retries are allowed) a 1 s
// backoff and a retry on any non-zero exit.
type ActivityOptions struct {
	// Requires lists capabilities the agent that runs it must have.
	Requires []string
	// Retries is how many times to try again after a failed attempt (attempts = Retries + 1).
	Retries int
	// RetryBackoff is the wait before the first retry; 0 means the default, 1 s.
	RetryBackoff time.Duration
	// RetryOnExit retries only on these exit codes; nil retries on any non-zero exit.
	RetryOnExit []int
}

func activityRequest(verb, name string, argv []string, opts ActivityOptions) (*Request, error) {
	if opts.Retries < 0 {
		return nil, usageError("activity '" + name + "': Retries is " + strconv.Itoa(opts.Retries) + "; it must be 0 or more")
	}
	backoff := int64(1000)
	if opts.RetryBackoff > 0 {
		backoff = millis(opts.RetryBackoff)
	}
	var retryOnExit []float64
	if opts.RetryOnExit != nil {
		retryOnExit = make([]float64, len(opts.RetryOnExit))
		for i, code := range opts.RetryOnExit {
			retryOnExit[i] = float64(code)
		}
	}
	return NewRequest(verb).With("name", name).With("argv", argv).With("requires", opts.Requires).
		With("attempts", opts.Retries+1).With("backoffMs", backoff).With("retryOnExit", retryOnExit), nil
}

// Activity runs argv as the activity name on an agent of the project and waits for it: its
// stdout, or a *StepFailed when it exited non-zero. The run holds no process while it waits.
func Activity(name string, argv ...string) (string, error) {
	return ActivityWith(name, argv, ActivityOptions{})
}

// ActivityWith is Activity with placement and a retry policy.
func ActivityWith(name string, argv []string, opts ActivityOptions) (string, error) {
	req, err := activityRequest("activity.run", name, argv, opts)
	if err != nil {
		return "", err
	}
	answer, err := process.call(req)
	if err != nil {
		return "", err
	}
	if err := checkExit(answer, name); err != nil {
		return "", err
	}
	return string(answer.Output()), nil
}

// ActivitySubmit starts argv as the activity name without waiting for it; collect it with
// ActivityCollect or ActivityWaitAll. A name may be used once per run.
func ActivitySubmit(name string, argv ...string) error {
	return ActivitySubmitWith(name, argv, ActivityOptions{})
}

// ActivitySubmitWith is ActivitySubmit with placement and a retry policy.
func ActivitySubmitWith(name string, argv []string, opts ActivityOptions) error {
	req, err := activityRequest("activity.submit", name, argv, opts)
	if err != nil {
		return err
	}
	answer, err := process.call(req)
	if err != nil {
		return err
	}
	return expectSuccess(answer, "activity_submit")
}

// ActivityCollect waits for the submitted activity name: its stdout, or a *StepFailed when it
// exited non-zero.
func ActivityCollect(name string) (string, error) {
	answer, err := process.call(NewRequest("activity.wait").With("name", name))
	if err != nil {
		return "", err
	}
	if err := checkExit(answer, name); err != nil {
		return "", err
	}
	return string(answer.Output()), nil
}

// ActivityWaitAll waits for every activity this run submitted. When any failed it returns a
// *StepFailed named "*" whose Detail names them.
func ActivityWaitAll() error {
	if err := process.require("activity_wait_all", "activity.wait"); err != nil {
		return err
	}
	answer, err := process.call(NewRequest("activity.wait").With("all", true))
	if err != nil {
		return err
	}
	return checkExit(answer, "*")
}
