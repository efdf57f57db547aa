//! The preview example against the real engine: a `.sh` workflow that execs the example binary,
//! submitted to `spool dev`. The deploy runs once, the run waits holding no process, the event
//! wakes it, and the teardown receives the value the deploy recorded.
//!
//! Needs node and the built CLI (`npm run build` in the repository root); without them the test
//! says so and passes without checking anything, except under CI, where it fails.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

mod common;

/// `spool dev` in the background, ended (by its own pid) when the test ends, pass or fail.
struct DevServer {
    child: Child,
    url: String,
    log: PathBuf,
}

impl DevServer {
    fn start(root: &Path, dir: &Path) -> DevServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = dir.join("dev.log");
        let out = fs::File::create(&log).expect("the dev server's log");
        let child = Command::new("node")
            .arg(root.join("bin/spool"))
            .args(["dev", "--port", &port.to_string(), "--data-dir"])
            .arg(dir.join("data"))
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("a second handle"))
            .stderr(out)
            .spawn()
            .expect("node starts");
        let mut server = DevServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("spool dev exited ({status}):\n{}", server.log_text());
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "spool dev did not start:\n{}",
                server.log_text()
            );
            sleep(Duration::from_millis(200));
        }
        server
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Spool<'a> {
    root: &'a Path,
    server: &'a DevServer,
    cwd: &'a Path,
}

impl Spool<'_> {
    fn run(&self, args: &[&str]) -> String {
        let output = Command::new("node")
            .arg(self.root.join("bin/spool"))
            .args(args)
            .env("SPOOL_SERVER", &self.server.url)
            .current_dir(self.cwd)
            .stdin(Stdio::null())
            .output()
            .expect("node runs");
        assert!(
            output.status.success(),
            "spool {} failed ({}): {}\nspool dev said:\n{}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr),
            self.server.log_text()
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let text = self.run(args);
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("spool {} printed no JSON ({e}): {text}", args.join(" ")))
    }

    /// Polls the run until it reaches `status`, failing at once on any other final one.
    fn await_status(&self, run: &str, status: &str) -> Value {
        let started = Instant::now();
        loop {
            let shown = self.json(&["status", run, "--json"]);
            let now = shown["status"].as_str().unwrap_or_default().to_string();
            if now == status {
                return shown;
            }
            let log = self.run(&["logs", run]);
            assert!(
                !["succeeded", "failed", "cancelled"].contains(&now.as_str()),
                "the run ended {now}: {shown}\n{log}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "the run is still {now}, not {status}: {shown}\n{log}"
            );
            sleep(Duration::from_millis(200));
        }
    }

    fn result_value(&self, run: &str, name: &str) -> Value {
        let journal = self.json(&["journal", run, "--json"]);
        let results: Vec<&Value> = journal
            .as_array()
            .expect("a journal")
            .iter()
            .filter(|e| e["kind"] == "result" && e["verb"] == "step_fn" && e["name"] == name)
            .collect();
        assert_eq!(results.len(), 1, "one recorded result of {name}: {journal}");
        results[0]["data"]["value"].clone()
    }
}

/// Processes whose program is `binary` (by /proc/PID/exe).
fn processes_running(binary: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| fs::read_link(e.path().join("exe")).is_ok_and(|exe| exe == binary))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn preview_environment_under_spool_dev() {
    let Some(root) = common::engine_root_or_skip("the preview example against spool dev") else {
        return;
    };
    let binary = common::example_binary("preview");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "hyperspool-rust-preview-{}-{nanos}",
        std::process::id()
    ));
    fs::create_dir_all(&dir).expect("a scratch directory");
    fs::write(
        dir.join("preview.sh"),
        format!("exec '{}'\n", binary.display()),
    )
    .expect("the workflow");

    let server = DevServer::start(&root, &dir);
    let spool = Spool {
        root: &root,
        server: &server,
        cwd: &dir,
    };
    let run = spool
        .run(&["submit", "preview.sh", "--input", r#"{"host":"pr-42"}"#])
        .trim()
        .to_string();

    let waiting = spool.await_status(&run, "waiting");
    assert_eq!(waiting["awaiting"], "event pr.closed", "{waiting}");
    assert_eq!(waiting["passes"], 1, "{waiting}");
    let deployed = spool.result_value(&run, "deploy");
    assert_eq!(deployed["url"], "https://pr-42.preview", "{deployed}");
    let started = Instant::now();
    while !processes_running(&binary).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the waiting run still has a process: {:?}",
            processes_running(&binary)
        );
        sleep(Duration::from_millis(100));
    }

    spool.run(&["event", "emit", "pr.closed", "--payload", r#"{"pr":42}"#]);
    let done = spool.await_status(&run, "succeeded");
    assert_eq!(done["passes"], 2, "{done}");

    let torn_down = spool.result_value(&run, "teardown");
    let expected = format!(
        "torn down https://pr-42.preview deployed at {}",
        deployed["deployed_at"]
    );
    assert_eq!(
        torn_down,
        Value::String(expected),
        "teardown received the recorded deploy"
    );
    let logs = spool.run(&["logs", &run]);
    assert_eq!(
        logs.matches("deploying pr-42").count(),
        1,
        "the deploy ran once:\n{logs}"
    );
    assert_eq!(
        logs.matches("tearing down https://pr-42.preview").count(),
        1,
        "{logs}"
    );
    assert!(logs.contains(r#"pr.closed: {"pr":42}"#), "{logs}");

    drop(server);
    let _ = fs::remove_dir_all(&dir);
}
