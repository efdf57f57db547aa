//! What the tests that run an example against the repository's real engine share.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root, when this machine can run an example against its engine (node and the
/// built CLI: `npm run build` there). Otherwise the test says it skipped `what` and gets None;
/// under CI, which builds the CLI first (`.ci/run`), a missing one fails the test instead of
/// letting it pass without checking anything.
pub fn engine_root_or_skip(what: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root");
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let missing = if !node.is_ok_and(|s| s.success()) {
        "node is not installed".to_string()
    } else if !root.join("bin/spool").exists() || !root.join("dist/cli").is_dir() {
        format!(
            "the CLI is not built (run `npm run build` in {})",
            root.display()
        )
    } else {
        return Some(root);
    };
    assert!(std::env::var("CI").is_err(), "CI is set but {missing}");
    eprintln!("skipped: {what} needs node and the built CLI: {missing}");
    None
}

/// An example's binary, beside the test's own (target/<profile>/examples). Built each time, a
/// moment when nothing changed: `cargo test --test <name>` builds no examples, and a binary left
/// from before may be of older source.
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--example", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo build --example {name} failed");
    profile_dir
        .join("examples")
        .join(name)
        .canonicalize()
        .expect("the example binary")
}
