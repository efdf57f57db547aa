//! The preview environment of the seed's "A complete workflow": deploy, wait for the PR to close
//! (holding no process), then tear down what the deploy recorded.
//!
//! Build it, then submit a workflow that execs it:
//!
//! ```sh
//! cargo build --example preview
//! printf 'exec %s\n' "$PWD/target/debug/examples/preview" > preview.sh
//! spool submit preview.sh --input '{"host":"pr-7"}'
//! spool event emit pr.closed --payload '{"pr":7}'
//! ```

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// What a deploy leaves behind. `deployed_at` (milliseconds: the journal keeps JSON numbers as
/// doubles, exact only up to 2^53) differs on every real deploy, so a replay that ran the deploy
/// again instead of reading the journal would show.
#[derive(Debug, Serialize, Deserialize)]
struct PreviewEnv {
    host: String,
    url: String,
    deployed_at: u64,
}

fn deploy(host: &str) -> PreviewEnv {
    eprintln!("deploying {host}");
    let deployed_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    PreviewEnv {
        host: host.to_string(),
        url: format!("https://{host}.preview"),
        deployed_at,
    }
}

fn teardown(env: PreviewEnv) -> String {
    eprintln!("tearing down {}", env.url);
    format!("torn down {} deployed at {}", env.url, env.deployed_at)
}

/// The host from the run's input (`{"host": ...}`), as the code around step_fn should be: cheap,
/// and the same on every pass.
fn host() -> String {
    std::env::var("SPOOL_INPUT_FILE")
        .ok()
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|doc| doc["input"]["host"].as_str().map(String::from))
        .unwrap_or_else(|| "pr-7".to_string())
}

fn preview() -> hyperspool::Result<()> {
    let host = host();
    let env: PreviewEnv = hyperspool::step_fn("deploy", || deploy(&host))?;
    let closed = hyperspool::wait_event("pr.closed")?;
    eprintln!("pr.closed: {closed}");
    let done: String = hyperspool::step_fn("teardown", || teardown(env))?;
    println!("{done}");
    Ok(())
}

fn main() {
    if let Err(e) = preview() {
        eprintln!("preview: {e}");
        std::process::exit(e.exit_code());
    }
}
