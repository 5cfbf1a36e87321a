use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, Shape, Status, Storage, Tensor};

use ferroflow_kernels::string::string_tensor;
use ferroflow_kernels::testutil::run_kernel;

fn run(n: &NodeDef, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, Status> {
    run_kernel(n.clone(), inputs, 1)
}

fn s(v: &[&str]) -> Tensor {
    let shape = if v.len() == 1 { vec![] } else { vec![v.len()] };
    string_tensor(Shape::from(shape), v.iter().map(|x| x.as_bytes().to_vec()).collect()).unwrap()
}

fn texts(t: &Tensor) -> Vec<String> {
    match t.storage() {
        Storage::Str(v) => v.iter().map(|b| String::from_utf8(b.clone()).unwrap()).collect(),
        _ => panic!("not strings"),
    }
}

fn node(op: &str, n_inputs: usize, attrs: &[(&str, ferroflow_core::proto::AttrValue)]) -> NodeDef {
    let mut n = NodeDef { name: "n".into(), op: op.into(), ..Default::default() };
    n.input = (0..n_inputs).map(|i| format!("i{i}")).collect();
    for (k, v) in attrs {
        n.attr.insert(k.to_string(), v.clone());
    }
    n
}

#[test]
fn string_join_broadcasts_scalars() {
    let n = node("StringJoin", 3, &[("separator", attr::string("/"))]);
    let out = run(&n, vec![s(&["ckpt"]), s(&["a", "b"]), s(&["x"])]).unwrap();
    assert_eq!(texts(&out[0]), ["ckpt/a/x", "ckpt/b/x"]);
    assert_eq!(out[0].dims(), [2]);
    // The sharded saver's temporary prefix: no separator, all scalars.
    let n = node("StringJoin", 2, &[]);
    let out = run(&n, vec![s(&["/tmp/model.ckpt-0"]), s(&["_temp/part"])]).unwrap();
    assert_eq!(texts(&out[0]), ["/tmp/model.ckpt-0_temp/part"]);
    assert_eq!(out[0].rank(), 0);
    let e = run(&n, vec![s(&["a", "b"]), s(&["a", "b", "c"])]).unwrap_err();
    assert!(e.message.contains("Input shapes do not match"), "{e}");
}

#[test]
fn regex_full_match_matches_whole_strings() {
    let n = node("StaticRegexFullMatch", 1, &[("pattern", attr::string("^s3://.*"))]);
    let out = run(&n, vec![s(&["s3://bucket/x", "/tmp/s3://x", "s3:/"])]).unwrap();
    assert_eq!(out[0].as_slice::<bool>().unwrap(), [true, false, false]);
    let n = node("StaticRegexFullMatch", 1, &[("pattern", attr::string("ab|c"))]);
    let out = run(&n, vec![s(&["ab", "c", "abc"])]).unwrap();
    assert_eq!(out[0].as_slice::<bool>().unwrap(), [true, true, false], "alternation is anchored as a whole");
    let bad = node("StaticRegexFullMatch", 1, &[("pattern", attr::string("(("))]);
    let e = ferroflow_kernels::create_kernel(&bad).err().unwrap();
    assert_eq!(e.code, Code::InvalidArgument);
    let n = node("RegexFullMatch", 2, &[]);
    let out = run(&n, vec![s(&["a1", "b2"]), s(&["[a-z][0-9]"])]).unwrap();
    assert_eq!(out[0].as_slice::<bool>().unwrap(), [true, true]);
}

#[test]
fn sharded_file_names() {
    let n = node("ShardedFilename", 3, &[]);
    let out = run(&n, vec![s(&["/d/m_temp/part"]), Tensor::scalar(3i32), Tensor::scalar(12i32)]).unwrap();
    assert_eq!(texts(&out[0]), ["/d/m_temp/part-00003-of-00012"]);
    let n = node("ShardedFilespec", 2, &[]);
    let out = run(&n, vec![s(&["/d/m"]), Tensor::scalar(2i32)]).unwrap();
    assert_eq!(texts(&out[0]), ["/d/m-?????-of-00002"]);
    let n = node("ShardedFilename", 3, &[]);
    let e = run(&n, vec![s(&["a", "b"]), Tensor::scalar(0i32), Tensor::scalar(1i32)]).unwrap_err();
    assert!(e.message.contains("basename must be a scalar"), "{e}");
}
