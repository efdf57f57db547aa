//! A fake agent on a real unix socket, for the crate's own tests: it checks each request line
//! against the one expected and answers the scripted reply, or drops the connection on a null one.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::connection::{Client, DialOptions};

/// What the suspension hook unwinds with in these tests.
pub(crate) struct Suspended;

pub(crate) fn suspend_by_unwinding(_message: &str) -> ! {
    // resume_unwind skips the panic hook: a suspension is an expected outcome, not a test failure.
    std::panic::resume_unwind(Box::new(Suspended))
}

fn socket_path() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("hyperspool-rust-{}-{n}.sock", std::process::id()))
}

/// A fake agent serving one scripted connection in a thread of its own.
pub(crate) struct FakeAgent {
    path: PathBuf,
    finished: Arc<AtomicBool>,
    thread: JoinHandle<Result<(), String>>,
}

impl FakeAgent {
    /// Listens on a fresh socket for a client that sends each request and gets each reply.
    pub(crate) fn start(exchanges: Vec<(Value, Value)>) -> Result<FakeAgent, String> {
        let path = socket_path();
        let _ = std::fs::remove_file(&path);
        let listener =
            UnixListener::bind(&path).map_err(|e| format!("bind {}: {e}", path.display()))?;
        let finished = Arc::new(AtomicBool::new(false));
        let thread = {
            let finished = Arc::clone(&finished);
            thread::spawn(move || fake_agent(&listener, &exchanges, &finished))
        };
        Ok(FakeAgent {
            path,
            finished,
            thread,
        })
    }

    /// A client of this agent whose suspensions unwind with [`Suspended`].
    pub(crate) fn client(&self) -> Client {
        Client::new(
            Some(self.path.clone()),
            DialOptions::from_env(),
            suspend_by_unwinding,
        )
    }

    /// Ends the test's side: closing the client's connection is how the agent learns the client
    /// sent all it was going to. What the agent found wrong, if anything, is the error.
    pub(crate) fn finish(self, client: Client) -> Result<(), String> {
        drop(client);
        self.finished.store(true, Ordering::SeqCst);
        let result = self
            .thread
            .join()
            .map_err(|_| "the fake agent panicked".to_string());
        let _ = std::fs::remove_file(&self.path);
        result?
    }
}

/// Serves one connection: checks each request line against the vector, answers its reply (or
/// closes on a null one), and then insists the client sends nothing more, on this connection or
/// a new one.
fn fake_agent(
    listener: &UnixListener,
    exchanges: &[(Value, Value)],
    finished: &AtomicBool,
) -> Result<(), String> {
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let Some(stream) = accept(listener, finished)? else {
        return match exchanges.first() {
            None => Ok(()),
            Some((request, _)) => Err(format!("the client never connected; expected {request}")),
        };
    };
    stream.set_nonblocking(false).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    for (expected, reply) in exchanges {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("reading a request: {e}"))?;
        if line.is_empty() {
            return Err(format!(
                "the client closed the connection; expected {expected}"
            ));
        }
        let request: Value = serde_json::from_str(&line)
            .map_err(|e| format!("a request that is not JSON ({e}): {line}"))?;
        if &request != expected {
            return Err(format!("sent {request}\n    expected {expected}"));
        }
        if reply.is_null() {
            drop(reader);
            drop(writer);
            return match accept(listener, finished)? {
                Some(_) => Err("the client connected again after the agent went away".into()),
                None => Ok(()),
            };
        }
        writer
            .write_all(format!("{reply}\n").as_bytes())
            .map_err(|e| format!("answering: {e}"))?;
    }
    let mut rest = String::new();
    reader
        .read_line(&mut rest)
        .map_err(|e| format!("after the last exchange: {e}"))?;
    if !rest.is_empty() {
        return Err(format!(
            "sent more after the last exchange: {}",
            rest.trim_end()
        ));
    }
    Ok(())
}

/// The next connection, or `None` once the test's call has finished without making one.
fn accept(listener: &UnixListener, finished: &AtomicBool) -> Result<Option<UnixStream>, String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match listener.accept() {
            Ok((stream, _)) => return Ok(Some(stream)),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if finished.load(Ordering::SeqCst) {
                    return Ok(None);
                }
                if Instant::now() > deadline {
                    return Err("timed out waiting for the client".into());
                }
                thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
}
