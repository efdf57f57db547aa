//! The SDK's artifact calls in a real run (tests/artifacts_run.rs): pass 1 writes 3 MiB of bytes
//! and puts them; a sleep ends the pass; pass 2 overwrites the file with zeros before the replayed
//! put (which must send nothing), gets the artifact back and compares it with what pass 1 recorded.

use std::fs;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn bytes_of_pass_one() -> Vec<u8> {
    // A varied pattern seeded by the time: different on every run, the same nowhere else.
    let mut x = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    (0..3 * 1024 * 1024 + 17)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn main() -> hyperspool::Result<()> {
    let pass = std::env::var("SPOOL_PASS").unwrap_or_default();
    let data = if pass == "1" {
        bytes_of_pass_one()
    } else {
        vec![0u8; 3 * 1024 * 1024 + 17]
    };
    fs::write("data.bin", &data).expect("data.bin written");
    let want: Vec<u8> = hyperspool::step_fn("bytes-head", || data[..64].to_vec())?;
    hyperspool::artifact_put("data.bin", "data.bin", Some("application/x-test"))?;
    hyperspool::sleep(Duration::from_secs(1))?;
    fs::remove_file("data.bin").expect("data.bin removed");
    let got = hyperspool::artifact_get("data.bin", None, None)?;
    let bytes = fs::read(&got).expect("the artifact read back");
    for artifact in hyperspool::artifact_list(None)? {
        println!(
            "listed {} {} {}",
            artifact.name, artifact.size, artifact.content_type
        );
    }
    if bytes[..64] == want[..] && bytes.len() == data.len() {
        println!("bytes match on pass {pass}");
    } else {
        println!("bytes differ on pass {pass}");
    }
    if let Err(error) = hyperspool::artifact_get("missing", Some(std::path::Path::new("x")), None) {
        println!("missing: {error}");
    }
    Ok(())
}
