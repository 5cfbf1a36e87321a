use ferroflow_core::Code;

use ferroflow_kernels::io::tfrecord::{read_records, write_record};

#[test]
fn frames_round_trip_and_detect_corruption() {
    let mut buf = Vec::new();
    write_record(&mut buf, b"hello").unwrap();
    write_record(&mut buf, b"").unwrap();
    assert_eq!(buf.len(), 12 + 5 + 4 + 12 + 4);
    assert_eq!(&buf[..8], &5u64.to_le_bytes());
    assert_eq!(read_records(&buf, "f").unwrap(), vec![b"hello".to_vec(), vec![]]);
    for i in 0..buf.len() {
        let mut b = buf.clone();
        b[i] ^= 0x20;
        assert_eq!(read_records(&b, "events").unwrap_err().code, Code::DataLoss, "byte {i}");
    }
    for cut in 1..buf.len() {
        if cut == 21 {
            continue; // a whole first record
        }
        assert_eq!(read_records(&buf[..cut], "f").unwrap_err().code, Code::DataLoss, "cut at {cut}");
    }
}
