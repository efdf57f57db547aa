//! The artifacts example under a real `spool run` (the repository's engine, its embedded store):
//! put 3 MiB, a sleep (a new pass), get the same bytes back while the file holds zeros, list with
//! its content type, and a missing name refused.
//!
//! Needs node and the built CLI (`npm run build` in the repository root); without them the test
//! says so and passes without checking anything, except under CI, where it fails.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

mod common;

#[test]
fn artifacts_survive_a_new_pass_in_a_real_run() {
    let Some(root) = common::engine_root_or_skip("the artifacts example under spool run") else {
        return;
    };
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
        format!("{}\n", common::example_binary("artifacts").display()),
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
