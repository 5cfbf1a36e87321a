use ferroflow_core::Code;

use ferroflow_kernels::io::sstable::{read_table, TableBuilder, TableOptions, FOOTER_LEN, TABLE_MAGIC};
use ferroflow_kernels::io::table_block::Entries;

fn build(n: usize, opts: TableOptions) -> (Entries, Vec<u8>) {
    let entries: Entries = (0..n)
        .map(|i| (format!("dense_{:05}/kernel", i).into_bytes(), format!("value-{i}").repeat(i % 7).into_bytes()))
        .collect();
    let mut t = TableBuilder::new(opts);
    for (k, v) in &entries {
        t.add(k, v).unwrap();
    }
    (entries, t.finish())
}

#[test]
fn many_keys_across_blocks_and_restarts() {
    let opts = TableOptions { block_size: 512, restart_interval: 4 };
    let (entries, bytes) = build(2000, opts);
    // Many data blocks: the index has one entry per block.
    let back = read_table(&bytes, "t.index").unwrap();
    assert_eq!(back, entries);
    assert_eq!(&bytes[bytes.len() - 8..], &TABLE_MAGIC.to_le_bytes());
    let (one, small) = build(3, TableOptions::default());
    assert_eq!(read_table(&small, "t").unwrap(), one);
    let empty = TableBuilder::new(TableOptions::default()).finish();
    assert!(read_table(&empty, "t").unwrap().is_empty());
}

#[test]
fn out_of_order_keys_are_rejected() {
    let mut t = TableBuilder::new(TableOptions::default());
    t.add(b"b", b"").unwrap();
    assert_eq!(t.add(b"a", b"").unwrap_err().code, Code::InvalidArgument);
    assert!(t.add(b"b", b"").is_err());
}

#[test]
fn corruption_is_data_loss() {
    let (_, bytes) = build(300, TableOptions { block_size: 256, restart_interval: 16 });
    // Everything before the footer is covered by checksums; the footer by its magic
    // number and handles (its zero padding is not checked, as in LevelDB).
    let mut positions: Vec<usize> = (0..bytes.len() - FOOTER_LEN).step_by(37).collect();
    positions.extend(bytes.len() - 8..bytes.len());
    for i in positions {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        // Every flipped byte is detected (checksums, magic, handles).
        let e = read_table(&b, "model.ckpt.index").unwrap_err();
        assert!(matches!(e.code, Code::DataLoss | Code::Unimplemented), "{e}");
        assert!(e.message.contains("model.ckpt.index"), "{e}");
    }
    assert_eq!(read_table(&bytes[..20], "f").unwrap_err().code, Code::DataLoss);
    assert_eq!(read_table(&bytes[..bytes.len() - 1], "f").unwrap_err().code, Code::DataLoss);
}
