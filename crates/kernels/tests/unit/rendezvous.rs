use ferroflow_core::rendezvous_key;

use ferroflow_kernels::ParsedKey;

#[test]
fn key_round_trip() {
    let k = rendezvous_key(
        "/job:worker/replica:0/task:0/device:CPU:0",
        0xa1b2c3d4e5f607,
        "/job:ps/replica:0/task:0/device:CPU:0",
        "edge_7_grad/AddN",
    );
    assert_eq!(k, "/job:worker/replica:0/task:0/device:CPU:0;00a1b2c3d4e5f607;/job:ps/replica:0/task:0/device:CPU:0;edge_7_grad/AddN;0:0");
    let p = ParsedKey::parse(&k).unwrap();
    assert_eq!(p.incarnation, 0xa1b2c3d4e5f607);
    assert_eq!(p.tensor_name, "edge_7_grad/AddN");
    assert!(ParsedKey::parse("a;b;c").is_err());
    assert!(ParsedKey::parse("a;zz;c;d;0:0").is_err());
}
