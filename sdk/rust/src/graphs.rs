//! One graph node kind, or a graph document, called from a program (docs/graphs.md), as
//! `spool call-node` and `spool call-graph` call them.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::answers::state_value;
use crate::connection::Client;
use crate::errors::{Error, Result};

impl Client {
    pub(crate) fn call_node(
        &self,
        node_type: &str,
        config: Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Value> {
        let mut req = json!({ "verb": "call.node", "type": node_type, "config": config });
        if let Some(name) = name {
            req["name"] = Value::String(name.to_string());
        }
        let answer = self.call(&req)?.check(name.unwrap_or(node_type))?;
        let output = answer.text();
        if output.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&output).map_err(|e| {
            Error::internal(format!(
                "call_node: the agent's output is not JSON ({e}): {output}"
            ))
        })
    }

    pub(crate) fn call_graph(
        &self,
        path: &Path,
        input: Option<Value>,
    ) -> Result<BTreeMap<String, Value>> {
        let file = path.display().to_string();
        let mut req =
            json!({ "verb": "call", "workflow": file, "script": "", "interpreter": "graph" });
        // Read now: the run records the graph it started, so a replayed call needs no file (a new
        // pod has none of the files the last pass made), and a new one is refused with the reason.
        match std::fs::read_to_string(path) {
            Ok(script) => req["script"] = Value::String(script),
            Err(e) => {
                req["unreadable"] = Value::String(format!("call_graph: cannot read {file}: {e}"))
            }
        }
        if let Some(input) = input {
            req["input"] = input;
        }
        let answer = self.call(&req)?.check(&file)?;
        let output = answer.text();
        if output.is_empty() {
            return Ok(BTreeMap::new());
        }
        let texts: BTreeMap<String, String> = serde_json::from_str(&output).map_err(|e| {
            Error::internal(format!(
                "call_graph: the agent's outputs are not a JSON object of texts ({e}): {output}"
            ))
        })?;
        Ok(texts
            .into_iter()
            .map(|(key, text)| (key, state_value(&text)))
            .collect())
    }
}
