//! One block of a LevelDB-style table: entries with prefix-compressed keys
//! (`varint shared, varint unshared, varint value_len, key suffix, value`), then the
//! restart offsets (fixed32 each, where a key is stored whole) and their count.

use ferroflow_core::Status;

use super::varint::{get_fixed32, get_varint32};
use ferroflow_core::varint;

/// Key/value pairs of a table or block, in key order.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Builds one block. Keys must be added in increasing order (checked by the table).
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    since_restart: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// An empty block storing a whole key every `restart_interval` entries.
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            since_restart: 0,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Appends an entry.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart < self.restart_interval {
            key.iter().zip(&self.last_key).take_while(|(a, b)| a == b).count()
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        };
        varint::put(&mut self.buf, shared as u64);
        varint::put(&mut self.buf, (key.len() - shared) as u64);
        varint::put(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Bytes the finished block will take (without its trailer).
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// The finished block contents; the builder is reset for the next block.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        *self = BlockBuilder::new(self.restart_interval);
        out
    }
}

/// Decodes every entry of a block (its contents, trailer removed). `what` names the block
/// in errors (file and block kind).
pub fn parse_block(data: &[u8], what: &str) -> Result<Entries, Status> {
    let bad = |m: &str| Status::data_loss(format!("corrupted table block in {what}: {m}"));
    if data.len() < 4 {
        return Err(bad("block shorter than its restart count"));
    }
    let num_restarts = get_fixed32(data, data.len() - 4).unwrap_or(0) as usize;
    let restarts_bytes = num_restarts.checked_mul(4).ok_or_else(|| bad("restart count overflows"))?;
    let limit = data
        .len()
        .checked_sub(4 + restarts_bytes)
        .ok_or_else(|| bad(&format!("{num_restarts} restarts do not fit in a {}-byte block", data.len())))?;
    if num_restarts == 0 && limit > 0 {
        return Err(bad("entries without a restart point"));
    }
    let mut restarts = Vec::with_capacity(num_restarts);
    for i in 0..num_restarts {
        let r = get_fixed32(data, limit + 4 * i).unwrap_or(u32::MAX) as usize;
        if r > limit || (i == 0 && r != 0 && limit > 0) {
            return Err(bad(&format!("restart offset {r} out of range")));
        }
        restarts.push(r);
    }
    let mut out: Entries = Vec::new();
    let mut pos = 0usize;
    let mut key: Vec<u8> = Vec::new();
    while pos < limit {
        let at_restart = restarts.binary_search(&pos).is_ok();
        let body = &data[..limit];
        let shared = get_varint32(body, &mut pos).ok_or_else(|| bad("truncated entry header"))? as usize;
        let unshared = get_varint32(body, &mut pos).ok_or_else(|| bad("truncated entry header"))? as usize;
        let vlen = get_varint32(body, &mut pos).ok_or_else(|| bad("truncated entry header"))? as usize;
        if shared > key.len() || (at_restart && shared != 0) {
            return Err(bad(&format!("entry shares {shared} key bytes with a {}-byte previous key", key.len())));
        }
        let end = pos
            .checked_add(unshared)
            .and_then(|p| p.checked_add(vlen))
            .filter(|&e| e <= limit)
            .ok_or_else(|| bad("entry runs past the end of the block"))?;
        key.truncate(shared);
        key.extend_from_slice(&body[pos..pos + unshared]);
        let value = body[pos + unshared..end].to_vec();
        pos = end;
        if let Some((prev, _)) = out.last() {
            if *prev >= key {
                return Err(bad("keys are not in increasing order"));
            }
        }
        out.push((key.clone(), value));
    }
    Ok(out)
}
