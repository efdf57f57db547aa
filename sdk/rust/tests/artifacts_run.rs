//! The artifacts example under a real `spool run` (the repository's engine, its embedded store):
//! put 3 MiB, a sleep (a new pass), get the same bytes back while the file holds zeros, list with
//! its content type, and a missing name refused.
//!
//! Needs node and the built CLI (`npm run build` in the repository root); without them the test
//! says so and passes without checking anything, except under CI, where it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let binary = profile_dir.join("examples/artifacts");
    // Built every time (a no-op when up to date): a binary left from an older build of the SDK
    // would test that build instead.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--example", "artifacts"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo build --example artifacts failed");
    binary.canonicalize().expect("the example binary")
}

#[test]
fn artifacts_survive_a_new_pass_in_a_real_run() {
    let root = repo_root();
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let missing = if !node.is_ok_and(|s| s.success()) {
        Some("node is not installed".to_string())
    } else if !root.join("dist/cli").is_dir() {
        Some(format!(
            "the CLI is not built (run `npm run build` in {})",
            root.display()
        ))
    } else {
        None
    };
    if let Some(why) = missing {
        assert!(std::env::var("CI").is_err(), "CI is set but {why}");
        eprintln!(
            "skipped: the artifacts example under spool run needs node and the built CLI: {why}"
        );
        return;
    }
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "hyperspool-rust-artifacts-{}-{stamp}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    std::fs::write(
        dir.join("probe.sh"),
        format!("{}\n", example_binary().display()),
    )
    .expect("probe.sh");
    let out = Command::new("node")
        .arg(root.join("bin/spool"))
        .args(["run", "probe.sh"])
        .current_dir(&dir)
        .env_remove("SPOOL_SOCKET")
        .env_remove("SPOOL_DATABASE_URL")
        .output()
        .expect("spool runs");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "spool run failed:\n{output}");
    for want in [
        "listed data.bin 3145745 application/x-test",
        "bytes match on pass 2",
        "missing: ",
    ] {
        assert!(
            output.contains(want),
            "the run's output lacks {want:?}:\n{output}"
        );
    }
    assert!(
        !output.contains("on pass 1"),
        "the sleep did not end pass 1:\n{output}"
    );
}
