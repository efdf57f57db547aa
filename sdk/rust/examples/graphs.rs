//! The SDK's call_node and call_graph in a real run (tests/graphs_run.rs), under `spool run
//! --fresh-dir` so each pass starts in a new, empty directory: a step writes the graph file (so
//! later passes have none and their replayed call_graph must not need it), an http node charges
//! the test's counting server with `node.idempotency_key`, a 404 node fails, a config the kind does
//! not take is refused, the graph's child run ends pass 1 and a sleep pass 2. Each pass prints what
//! it got back.

use std::time::Duration;

use serde_json::{json, Value};

const TINY_GRAPH: &str = r#"{"nodes": [{"id": "one", "type": "script", "config": {"interpreter": "bash", "body": "true"}}], "outputs": {"y": {"$expr": "input.x"}}}
"#;

fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("a json! object"),
    }
}

fn main() -> hyperspool::Result<()> {
    let pass = std::env::var("SPOOL_PASS").unwrap_or_default();
    let url = std::env::var("COUNTER_URL").expect("COUNTER_URL");
    hyperspool::step_fn("write-graph", || {
        std::fs::write("tiny.json", TINY_GRAPH).expect("tiny.json written");
        true
    })?;
    let charge = hyperspool::call_node(
        "http",
        object(json!({
            "method": "POST",
            "url": url,
            "headers": { "Idempotency-Key": { "$expr": "node.idempotency_key" } },
        })),
        Some("charge"),
    )?;
    println!(
        "pass {pass}: charge {} key {}",
        charge["status"],
        charge["body"]["key"].as_str().unwrap_or("?")
    );
    match hyperspool::call_node(
        "http",
        object(json!({ "url": format!("{url}/missing") })),
        Some("missing"),
    ) {
        Err(hyperspool::Error::StepFailed {
            name, exit_code, ..
        }) => {
            println!("pass {pass}: failed {name} exit {exit_code}")
        }
        other => panic!("the 404 node gave {other:?}, not a StepFailed"),
    }
    match hyperspool::call_node("http", object(json!({ "url": url, "nope": 1 })), None) {
        Err(hyperspool::Error::Script {
            kind,
            message,
            exit_code,
        }) => {
            println!("pass {pass}: refused {kind} exit {exit_code}: {message}")
        }
        other => panic!("the bad config gave {other:?}, not a Script error"),
    }
    let there = std::path::Path::new("tiny.json").exists();
    let outputs = hyperspool::call_graph("tiny.json", Some(json!({ "x": "5" })))?;
    println!(
        "pass {pass}: graph y={} (file there: {there})",
        outputs["y"]
    );
    hyperspool::sleep(Duration::from_millis(1))
}
