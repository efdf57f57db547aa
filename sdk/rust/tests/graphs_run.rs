//! `examples/graphs.rs` under a real `spool run --fresh-dir` (the repository's engine, its embedded
//! store), each pass in a new, empty directory, against a local server that counts the charges per
//! `Idempotency-Key` and answers the key it got. Pass 1 ends at the graph's child run, pass 2 at the
//! sleep, pass 3 replays everything. The charge is sent once and passes 2 and 3 print the output
//! pass 1 recorded (the same key); a 404 node is `StepFailed` on every pass; a config the kind does
//! not take is a usage `Script` error; the graph's outputs come back on passes 2 and 3, whose
//! directories have no graph file.
//!
//! Needs node and the built CLI (`npm run build` in the repository root); without them the test
//! says so and passes without checking anything, except under CI, where it fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

mod common;

/// A server on a free port that records each POST's `Idempotency-Key` and answers `{"key": …}`,
/// and answers anything else 404. One request per connection.
fn counting_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&keys);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
            let (mut request_line, mut key, mut length) = (String::new(), String::new(), 0usize);
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    match name.trim().to_ascii_lowercase().as_str() {
                        "idempotency-key" => key = value.trim().to_string(),
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let (status, answer) = if request_line.starts_with("POST ") {
                seen.lock().expect("the keys").push(key.clone());
                ("200 OK", format!("{{\"key\":\"{key}\"}}"))
            } else {
                ("404 Not Found", "{}".to_string())
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, keys)
}

#[test]
fn call_node_and_call_graph_replay_in_a_new_directory() {
    let Some(root) = common::engine_root_or_skip("call_node and call_graph under spool run") else {
        return;
    };
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "hyperspool-rust-graphs-{}-{stamp}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    std::fs::write(
        dir.join("probe.sh"),
        format!("{}\n", common::example_binary("graphs").display()),
    )
    .expect("probe.sh");
    let (url, keys) = counting_server();
    let out = Command::new("node")
        .arg(root.join("bin/spool"))
        .args(["run", "probe.sh", "--fresh-dir"])
        .current_dir(&dir)
        .env_remove("SPOOL_SOCKET")
        .env_remove("SPOOL_DATABASE_URL")
        .env("COUNTER_URL", &url)
        .output()
        .expect("spool runs");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "spool run failed:\n{output}");
    let keys = keys.lock().expect("the keys").clone();
    assert!(
        keys.len() == 1 && keys[0].starts_with("spool-"),
        "the charge should be sent once, with the node's key; the server got {keys:?}\n{output}"
    );
    for want in [
        format!("pass 1: charge 200 key {}", keys[0]),
        format!("pass 2: charge 200 key {}", keys[0]),
        format!("pass 3: charge 200 key {}", keys[0]),
        "pass 2: failed missing exit 1".to_string(),
        "pass 2: refused usage exit 2: spool call-node: unknown key 'nope'".to_string(),
        "pass 2: graph y=5 (file there: false)".to_string(),
        "pass 3: graph y=5 (file there: false)".to_string(),
    ] {
        assert!(
            output.contains(&want),
            "the run's output lacks {want:?}:\n{output}"
        );
    }
}
