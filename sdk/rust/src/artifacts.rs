//! Artifacts: files a run keeps between passes and pods (docs/artifacts.md). Bytes move in parts
//! of 512 KiB, each one request, so neither this process nor the agent holds a whole artifact.
//! SHA-256 and base64 are written here rather than taken from crates: the SDK depends on serde
//! alone, and both are a few dozen lines.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::connection::Client;
use crate::errors::{Error, Result};

const PART_BYTES: usize = 512 * 1024;

/// What `artifact_list` tells of one artifact.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    pub name: String,
    pub size: u64,
    pub sha256: String,
    pub content_type: String,
    pub created_at: String,
}

#[derive(Deserialize)]
struct Part {
    data: String,
    parts: u64,
    size: u64,
    sha256: String,
}

impl Client {
    pub(crate) fn artifact_put(
        &self,
        name: &str,
        path: &Path,
        content_type: Option<&str>,
    ) -> Result<()> {
        let mut request = json!({ "verb": "artifact.put", "name": name });
        if let Some(content_type) = content_type {
            request["contentType"] = Value::String(content_type.into());
        }
        // Looked at, not opened, before the agent is asked: a replayed put needs no file (a new pod
        // has none of the last pass's), and a new one whose file cannot be read the agent refuses.
        match fs::metadata(path) {
            Ok(meta) if meta.is_file() => request["size"] = json!(meta.len()),
            Ok(_) => request["unreadable"] = json!(format!("artifact put {name}: {} is not a file", path.display())),
            Err(e) => request["unreadable"] = json!(format!("artifact put {name}: {}: {e}", path.display())),
        }
        let answer = self.call(&request)?;
        if answer.status != "execute" {
            return Ok(()); // replayed: recorded before, nothing is read or sent
        }
        let mut file = fs::File::open(path)
            .map_err(|e| Error::usage(format!("artifact put {name}: {}: {e}", path.display())))?;
        let position = answer
            .position
            .ok_or_else(|| Error::internal("artifact put: execute without a position"))?;
        let mut digest = Sha256::new();
        let mut buffer = vec![0u8; PART_BYTES];
        let mut sent: u64 = 0;
        loop {
            let n = read_full(&mut file, &mut buffer)
                .map_err(|e| Error::usage(format!("artifact put {name}: {e}")))?;
            if n == 0 {
                break;
            }
            let part = &buffer[..n];
            self.call(&json!({ "verb": "artifact.write", "position": position, "data": base64_encode(part) }))?;
            digest.update(part);
            sent += n as u64;
        }
        self.call(&json!({ "verb": "artifact.commit", "position": position, "size": sent, "sha256": digest.hex() }))?;
        Ok(())
    }

    pub(crate) fn artifact_get(
        &self,
        name: &str,
        dest: Option<&Path>,
        run: Option<&str>,
    ) -> Result<PathBuf> {
        let target = match dest {
            Some(dest) => dest.to_path_buf(),
            None => PathBuf::from(
                name.split('/')
                    .rfind(|s| !s.is_empty() && *s != "." && *s != "..")
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "artifact get: '{name}' names no file to write to; give a dest"
                        ))
                    })?,
            ),
        };
        let mut partial = target.clone().into_os_string();
        partial.push(".spool-partial");
        let partial = PathBuf::from(partial);
        let result = self.artifact_get_into(name, run, &partial, &target);
        let _ = fs::remove_file(&partial);
        result.map(|()| target)
    }

    fn artifact_get_into(
        &self,
        name: &str,
        run: Option<&str>,
        partial: &Path,
        target: &Path,
    ) -> Result<()> {
        let io = |e: std::io::Error| Error::usage(format!("artifact get {name}: {e}"));
        let mut out = fs::File::create(partial).map_err(io)?;
        let mut digest = Sha256::new();
        let mut size: u64 = 0;
        let mut index: u64 = 0;
        loop {
            let mut request = json!({ "verb": "artifact.get", "name": name, "part": index });
            if let Some(run) = run {
                request["run"] = Value::String(run.into());
            }
            let answer = self.call(&request)?;
            let part: Part = serde_json::from_value(answer.value).map_err(|e| {
                Error::internal(format!(
                    "artifact get {name}: the agent's answer is not a part: {e}"
                ))
            })?;
            let data = base64_decode(&part.data).ok_or_else(|| {
                Error::internal(format!("artifact get {name}: part {index} is not base64"))
            })?;
            out.write_all(&data).map_err(io)?;
            digest.update(&data);
            size += data.len() as u64;
            index += 1;
            if index >= part.parts {
                if size != part.size || digest.hex() != part.sha256 {
                    return Err(Error::internal(format!("artifact get {name}: arrived as {size} bytes, not the {} bytes it was stored as", part.size)));
                }
                break;
            }
        }
        out.sync_all().map_err(io)?;
        fs::rename(partial, target).map_err(io)
    }

    pub(crate) fn artifact_list(&self, run: Option<&str>) -> Result<Vec<Artifact>> {
        let mut request = json!({ "verb": "artifact.list" });
        if let Some(run) = run {
            request["run"] = Value::String(run.into());
        }
        request["json"] = Value::Bool(true);
        let answer = self.call(&request)?;
        serde_json::from_str(&answer.raw_stdout()).map_err(|e| {
            Error::internal(format!(
                "artifact list: the agent's answer is not a list: {e}"
            ))
        })
    }
}

fn read_full(file: &mut fs::File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        let n = file.read(&mut buffer[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in text.bytes() {
        if c == b'=' {
            break;
        }
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// SHA-256 (FIPS 180-4), streaming.
pub(crate) struct Sha256 {
    state: [u32; 8],
    block: Vec<u8>,
    length: u64,
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

impl Sha256 {
    pub(crate) fn new() -> Self {
        Sha256 {
            state: [
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
                0x5be0cd19,
            ],
            block: Vec::with_capacity(64),
            length: 0,
        }
    }

    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        self.length += bytes.len() as u64;
        while !bytes.is_empty() {
            let take = (64 - self.block.len()).min(bytes.len());
            self.block.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.block.len() == 64 {
                let block: [u8; 64] = self.block[..].try_into().expect("64 bytes");
                self.compress(&block);
                self.block.clear();
            }
        }
    }

    fn compress(&mut self, block: &[u8; 64]) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([
                block[4 * i],
                block[4 * i + 1],
                block[4 * i + 2],
                block[4 * i + 3],
            ]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = self.state;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            h = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (s, v) in self.state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *s = s.wrapping_add(v);
        }
    }

    /// The digest as lower-case hex (consumes the running state's copy, so `update` may go on).
    pub(crate) fn hex(&self) -> String {
        let mut copy = Sha256 {
            state: self.state,
            block: self.block.clone(),
            length: 0,
        };
        let bits = self.length.wrapping_mul(8);
        let mut tail = vec![0x80u8];
        while (self.block.len() + tail.len()) % 64 != 56 {
            tail.push(0);
        }
        tail.extend_from_slice(&bits.to_be_bytes());
        copy.update(&tail);
        copy.state.iter().map(|v| format!("{v:08x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        let mut s = Sha256::new();
        s.update(bytes);
        s.hex()
    }

    #[test]
    fn sha256_matches_the_fips_examples() {
        assert_eq!(
            sha(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let mut split = Sha256::new();
        split.update(b"abcdbcdecdefdefgefgh");
        split.update(b"fghighijhijkijkljklmklmnlmnomnopnopq");
        assert_eq!(
            split.hex(),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn base64_round_trips_and_matches_rfc4648() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).as_deref(), Some(plain.as_bytes()));
        }
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(base64_decode(&base64_encode(&bytes)), Some(bytes));
        assert_eq!(base64_decode("Zm9v!"), None);
    }
}
