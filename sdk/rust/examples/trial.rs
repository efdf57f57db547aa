//! A trial period, tested through `hyperspool::testing` (tests/testing_run.rs): it charges a card
//! (a step the cases stub: `./charge-card` is not there), sleeps out two weeks, then waits a week
//! for an upgrade. Its cases, `examples/trial.test.yaml`, go beside the `.sh` that execs it:
//!
//! ```sh
//! cargo build --example trial
//! printf 'exec %s\n' "$PWD/target/debug/examples/trial" > trial.sh && cp examples/trial.test.yaml .
//! spool test trial.sh
//! ```

use std::time::Duration;

const DAY: Duration = Duration::from_secs(86_400);

fn trial() -> hyperspool::Result<()> {
    let receipt = hyperspool::step("charge", ["./charge-card", "--amount", "0"])?;
    hyperspool::sleep(14 * DAY)?;
    let plan = hyperspool::wait_signal_timeout("upgrade", 7 * DAY)?;
    hyperspool::output_set("receipt", receipt.trim())?;
    hyperspool::output_set("plan", plan.as_deref().unwrap_or("free"))
}

fn main() {
    if let Err(error) = trial() {
        eprintln!("trial: {error}");
        std::process::exit(error.exit_code());
    }
}
