use ferroflow_kernels::io::table_block::{parse_block, BlockBuilder};

#[test]
fn prefix_compression_and_restarts() {
    let mut b = BlockBuilder::new(2);
    let keys: Vec<String> = (0..5).map(|i| format!("layer/weights/{i}")).collect();
    for (i, k) in keys.iter().enumerate() {
        b.add(k.as_bytes(), &[i as u8; 3]);
    }
    let data = b.finish();
    assert!(b.is_empty());
    // 3 restart points (entries 0, 2, 4) + count.
    let n = u32::from_le_bytes(data[data.len() - 4..].try_into().unwrap());
    assert_eq!(n, 3);
    // The second entry shares all but the last byte with the first.
    let first_len = 3 + keys[0].len() + 3;
    assert_eq!(data[first_len], (keys[0].len() - 1) as u8);
    let parsed = parse_block(&data, "test").unwrap();
    assert_eq!(parsed.len(), 5);
    for (i, (k, v)) in parsed.iter().enumerate() {
        assert_eq!(k, keys[i].as_bytes());
        assert_eq!(v, &vec![i as u8; 3]);
    }
}

#[test]
fn corrupt_blocks_are_data_loss() {
    let mut b = BlockBuilder::new(16);
    b.add(b"a", b"1");
    b.add(b"b", b"2");
    let data = b.finish();
    for bad in [&data[..2], &data[..data.len() - 1], &[0xff, 0xff, 0xff, 0xff][..]] {
        let e = parse_block(bad, "x.index").unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::DataLoss, "{e}");
        assert!(e.message.contains("x.index"));
    }
    let mut trunc = data.clone();
    trunc[2] = 200; // value length far past the end
    assert!(parse_block(&trunc, "x").is_err());
    let empty = BlockBuilder::new(16).finish();
    assert!(parse_block(&empty, "x").unwrap().is_empty());
}
