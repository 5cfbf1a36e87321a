//! The text ops beyond the golden cases: `PrintV2` to a file, and the errors of
//! `StringNGrams`, `ReduceJoin`, the Unicode ops, `StringFormat` and `Fingerprint`.

use ferroflow_core::{attr, Code, DataType, Status, Storage, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel, temp_dir};

fn strs(v: &[&str]) -> Tensor {
    Tensor::from_storage(vec![v.len()].into(), Storage::Str(v.iter().map(|s| s.as_bytes().to_vec()).collect())).unwrap()
}

fn scalar_str(s: &str) -> Tensor {
    Tensor::from_storage(Vec::<usize>::new().into(), Storage::Str(vec![s.as_bytes().to_vec()])).unwrap()
}

fn print(stream: &str, msg: &str) -> Result<Vec<Tensor>, Status> {
    let n = node("PrintV2", &[("output_stream", attr::string(stream)), ("end", attr::string("!\n"))]);
    run_kernel(n, vec![scalar_str(msg)], 0)
}

#[test]
fn print_appends_to_a_file_and_refuses_unknown_streams() {
    let dir = temp_dir("printv2");
    let path = dir.join("out.txt");
    let stream = format!("file://{}", path.display());
    print(&stream, "one").unwrap();
    print(&stream, "two").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one!\ntwo!\n");
    let e = print("nowhere", "x").unwrap_err();
    assert!(e.code == Code::InvalidArgument && e.message.contains("not a valid output stream"), "{e}");
    let n = node("PrintV2", &[("output_stream", attr::string("stderr")), ("end", attr::string("\n"))]);
    let e = run_kernel(n, vec![strs(&["a", "b"])], 0).unwrap_err();
    assert!(e.message.contains("Input is expected to be scalar"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn text_op_errors() {
    let ngrams = |splits: Vec<i64>, widths: &[i64]| {
        let n = node(
            "StringNGrams",
            &[
                ("separator", attr::string(" ")),
                ("ngram_widths", attr::list_int(widths)),
                ("left_pad", attr::string("")),
                ("right_pad", attr::string("")),
                ("pad_width", attr::int(0)),
                ("preserve_short_sequences", attr::bool(false)),
                ("Tsplits", attr::ty(DataType::Int64)),
            ],
        );
        run_kernel(n, vec![strs(&["a", "b", "c"]), Tensor::vec(splits)], 2)
    };
    assert!(ngrams(vec![1, 3], &[2]).unwrap_err().message.contains("First split value must be 0, got 1"));
    assert!(ngrams(vec![0, 4], &[2]).unwrap_err().message.contains("Invalid split value 4, must be in [0, 3]"));
    assert!(ngrams(vec![0, 3], &[0]).unwrap_err().message.contains("ngram_widths must contain positive values"));
    let ok = ngrams(vec![0, 3], &[2]).unwrap();
    assert_eq!(ok[0].dims(), &[2]);

    let join = |axes: Vec<i32>| {
        let n = node("ReduceJoin", &[("keep_dims", attr::bool(false)), ("separator", attr::string(""))]);
        run_kernel(n, vec![strs(&["a", "b"]), Tensor::vec(axes)], 1)
    };
    assert!(join(vec![0, 0]).unwrap_err().message.contains("Duplicate reduction dimension 0"));
    assert!(join(vec![1]).unwrap_err().message.contains("Invalid reduction dimension 1 for input with 1 dimensions"));

    let encode = |errors: &str| {
        let n = node(
            "UnicodeEncode",
            &[
                ("errors", attr::string(errors)),
                ("output_encoding", attr::string("UTF-8")),
                ("replacement_char", attr::int(65533)),
                ("Tsplits", attr::ty(DataType::Int64)),
            ],
        );
        run_kernel(n, vec![Tensor::vec(vec![104i32, -5]), Tensor::vec(vec![0i64, 2])], 1)
    };
    assert!(encode("strict").unwrap_err().message.contains("Code point is out of range for Unicode"));
    assert_eq!(encode("replace").unwrap()[0].as_slice::<Vec<u8>>().unwrap()[0], "h\u{fffd}".as_bytes());
    let decode = node(
        "UnicodeDecode",
        &[
            ("input_encoding", attr::string("UTF-8")),
            ("errors", attr::string("strict")),
            ("replacement_char", attr::int(65533)),
            ("replace_control_characters", attr::bool(false)),
            ("Tsplits", attr::ty(DataType::Int64)),
        ],
    );
    let bad = Tensor::from_storage(vec![1].into(), Storage::Str(vec![vec![b'a', 0xff]])).unwrap();
    assert!(run_kernel(decode, vec![bad], 2).unwrap_err().message.contains("Invalid formatting on input string"));
    let latin = node("UnicodeDecode", &[("input_encoding", attr::string("ISO-8859-1"))]);
    assert!(ferroflow_kernels::create_kernel(&latin).is_err());

    let format = node(
        "StringFormat",
        &[
            ("T", attr::list_type(&[DataType::Int32])),
            ("template", attr::string("{} {}")),
            ("placeholder", attr::string("{}")),
            ("summarize", attr::int(3)),
        ],
    );
    let e = run_kernel(format, vec![Tensor::scalar(1i32)], 1).unwrap_err();
    assert!(e.message.contains("num placeholders in template and num inputs must match: 2 vs. 1"), "{e}");

    let fp = node("Fingerprint", &[("T", attr::ty(DataType::Int32))]);
    let e = run_kernel(fp.clone(), vec![Tensor::vec(vec![1i32]), scalar_str("md5")], 1).unwrap_err();
    assert!(e.message.contains("Unsupported fingerprint method: md5"), "{e}");
    let e = run_kernel(fp, vec![Tensor::scalar(1i32), scalar_str("farmhash64")], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
}
