//! LevelDB-style sorted string tables, the format of a V2 checkpoint's `.index` file:
//! data blocks, an (empty) meta-index block and an index block, each followed by a 5-byte
//! trailer (compression type 0 = none, masked CRC32C of contents + type), then a 48-byte
//! footer (two block handles padded to 40 bytes, then the table magic number).

use ferroflow_core::Status;

use super::crc::{crc32c_extend, mask, unmask};
use super::table_block::{parse_block, BlockBuilder, Entries};
use super::varint::get_fixed32;
use ferroflow_core::varint;

/// The table magic number (LevelDB's), stored little-endian at the end of the footer.
pub const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Footer length: two varint block handles padded to 40 bytes, plus the 8-byte magic.
pub const FOOTER_LEN: usize = 48;
const TRAILER_LEN: usize = 5;
const NO_COMPRESSION: u8 = 0;

/// Options of a [`TableBuilder`].
#[derive(Clone, Copy, Debug)]
pub struct TableOptions {
    /// Target size of a data block before it is cut.
    pub block_size: usize,
    /// Entries between restart points.
    pub restart_interval: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions { block_size: 256 * 1024, restart_interval: 16 }
    }
}

fn put_handle(out: &mut Vec<u8>, offset: u64, size: u64) {
    varint::put(out, offset);
    varint::put(out, size);
}

/// Writes a table into memory; keys must be added in strictly increasing byte order.
pub struct TableBuilder {
    opts: TableOptions,
    out: Vec<u8>,
    block: BlockBuilder,
    index: BlockBuilder,
    last_key: Option<Vec<u8>>,
    /// The handle of the last flushed block, whose index key waits for the next key.
    pending: Option<Vec<u8>>,
}

/// A short key `k` with `start <= k < limit` (LevelDB's bytewise `FindShortestSeparator`):
/// `start` up to the first byte that differs from `limit`, that byte incremented, when
/// that stays below `limit`; otherwise `start`.
fn shortest_separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
    let common = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    if common < start.len().min(limit.len()) {
        let b = start[common];
        if b < 0xff && b + 1 < limit[common] {
            let mut k = start[..=common].to_vec();
            k[common] = b + 1;
            return k;
        }
    }
    start.to_vec()
}

/// A short key `>= key` (LevelDB's `FindShortSuccessor`): the first byte that is not 0xff
/// incremented, the rest dropped.
fn short_successor(key: &[u8]) -> Vec<u8> {
    match key.iter().position(|&b| b != 0xff) {
        Some(i) => {
            let mut k = key[..=i].to_vec();
            k[i] += 1;
            k
        }
        None => key.to_vec(),
    }
}

impl TableBuilder {
    /// An empty table.
    pub fn new(opts: TableOptions) -> TableBuilder {
        TableBuilder {
            opts,
            out: Vec::new(),
            block: BlockBuilder::new(opts.restart_interval),
            index: BlockBuilder::new(1),
            last_key: None,
            pending: None,
        }
    }

    /// Adds an entry; InvalidArgument if `key` is not after the previous key.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), Status> {
        if let Some(last) = &self.last_key {
            if key <= last.as_slice() {
                return Err(Status::invalid_argument(format!(
                    "table keys must be added in increasing order: '{}' after '{}'",
                    String::from_utf8_lossy(key),
                    String::from_utf8_lossy(last)
                )));
            }
        }
        if let Some(handle) = self.pending.take() {
            let sep = shortest_separator(self.last_key.as_deref().unwrap_or_default(), key);
            self.index.add(&sep, &handle);
        }
        self.block.add(key, value);
        self.last_key = Some(key.to_vec());
        if self.block.size_estimate() >= self.opts.block_size {
            self.flush_block();
        }
        Ok(())
    }

    fn write_block(&mut self, contents: &[u8]) -> (u64, u64) {
        let offset = self.out.len() as u64;
        self.out.extend_from_slice(contents);
        let crc = crc32c_extend(crc32c::crc32c(contents), &[NO_COMPRESSION]);
        self.out.push(NO_COMPRESSION);
        self.out.extend_from_slice(&mask(crc).to_le_bytes());
        (offset, contents.len() as u64)
    }

    fn flush_block(&mut self) {
        if self.block.is_empty() {
            return;
        }
        let contents = self.block.finish();
        let (offset, size) = self.write_block(&contents);
        let mut handle = Vec::new();
        put_handle(&mut handle, offset, size);
        // Indexed under a key between this block's last key and the next block's first
        // (as LevelDB and TensorFlow, so that the files are byte for byte theirs).
        self.pending = Some(handle);
    }

    /// Writes the remaining blocks and the footer; returns the table's bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.flush_block();
        if let Some(handle) = self.pending.take() {
            let key = short_successor(self.last_key.as_deref().unwrap_or_default());
            self.index.add(&key, &handle);
        }
        let meta = BlockBuilder::new(self.opts.restart_interval).finish();
        let (meta_off, meta_size) = self.write_block(&meta);
        let index = self.index.finish();
        let (index_off, index_size) = self.write_block(&index);
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        put_handle(&mut footer, meta_off, meta_size);
        put_handle(&mut footer, index_off, index_size);
        footer.resize(FOOTER_LEN - 8, 0);
        footer.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        self.out.extend_from_slice(&footer);
        self.out
    }
}

fn read_handle(buf: &[u8], pos: &mut usize) -> Option<(u64, u64)> {
    Some((varint::get(buf, pos)?, varint::get(buf, pos)?))
}

/// Reads the block at `(offset, size)` and checks its trailer.
fn read_block<'a>(file: &'a [u8], handle: (u64, u64), what: &str) -> Result<&'a [u8], Status> {
    let (offset, size) = handle;
    let end = offset
        .checked_add(size)
        .and_then(|e| e.checked_add(TRAILER_LEN as u64))
        .filter(|&e| e <= (file.len() - FOOTER_LEN) as u64)
        .ok_or_else(|| {
            Status::data_loss(format!("{what}: block at offset {offset} size {size} lies outside the file"))
        })? as usize;
    let start = offset as usize;
    let contents = &file[start..end - TRAILER_LEN];
    let kind = file[end - TRAILER_LEN];
    let stored = unmask(get_fixed32(file, end - 4).unwrap_or(0));
    let actual = crc32c_extend(crc32c::crc32c(contents), &[kind]);
    if stored != actual {
        return Err(Status::data_loss(format!("{what}: block checksum mismatch at offset {offset}")));
    }
    if kind != NO_COMPRESSION {
        return Err(Status::unimplemented(format!(
            "{what}: block at offset {offset} uses compression type {kind}; only uncompressed tables are supported"
        )));
    }
    Ok(contents)
}

/// Reads a whole table (`file` names it in errors) into its sorted entries.
pub fn read_table(data: &[u8], file: &str) -> Result<Entries, Status> {
    if data.len() < FOOTER_LEN {
        return Err(Status::data_loss(format!(
            "{file}: {} bytes is too short to be a table (the footer alone is {FOOTER_LEN})",
            data.len()
        )));
    }
    let footer = &data[data.len() - FOOTER_LEN..];
    let magic = u64::from_le_bytes(footer[40..48].try_into().unwrap_or([0; 8]));
    if magic != TABLE_MAGIC {
        return Err(Status::data_loss(format!("{file}: not a table (bad magic number {magic:#x})")));
    }
    let mut pos = 0;
    let handles = read_handle(&footer[..40], &mut pos).zip(read_handle(&footer[..40], &mut pos));
    let (meta_handle, index_handle) =
        handles.ok_or_else(|| Status::data_loss(format!("{file}: corrupted table footer")))?;
    // The meta-index block carries nothing we use, but its checksum must hold.
    read_block(data, meta_handle, file)?;
    let index = parse_block(read_block(data, index_handle, file)?, &format!("{file} (index block)"))?;
    let mut out: Entries = Vec::new();
    for (sep, handle) in index {
        let mut p = 0;
        let h = read_handle(&handle, &mut p)
            .filter(|_| p == handle.len())
            .ok_or_else(|| Status::data_loss(format!("{file}: corrupted block handle in the index")))?;
        let entries = parse_block(read_block(data, h, file)?, &format!("{file} (data block at {})", h.0))?;
        for (k, v) in entries {
            if k > sep {
                return Err(Status::data_loss(format!("{file}: key beyond its index separator")));
            }
            if out.last().is_some_and(|(prev, _)| *prev >= k) {
                return Err(Status::data_loss(format!("{file}: keys are not in increasing order across blocks")));
            }
            out.push((k, v));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{short_successor, shortest_separator};

    #[test]
    fn index_keys_are_leveldbs_short_ones() {
        assert_eq!(shortest_separator(b"abc1", b"abe"), b"abd");
        // The next byte up would reach the limit, or one key is a prefix of the other.
        assert_eq!(shortest_separator(b"abc1", b"abd"), b"abc1");
        assert_eq!(shortest_separator(b"ab", b"abc"), b"ab");
        assert_eq!(shortest_separator(b"a\xff1", b"b"), b"a\xff1");
        assert_eq!(short_successor(b"\x00model"), b"\x01");
        assert_eq!(short_successor(b"\xff\xffa"), b"\xff\xffb");
        assert_eq!(short_successor(b"\xff\xff"), b"\xff\xff");
    }
}
