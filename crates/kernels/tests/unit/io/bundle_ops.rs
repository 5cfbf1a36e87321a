use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::io::bundle_ops::merge_checkpoints;
use ferroflow_kernels::io::bundle_reader::BundleReader;
use ferroflow_kernels::io::bundle_writer::{data_path, index_path, write_bundle, BundleWriter};
use ferroflow_kernels::testutil::{node, run_kernel, temp_paths};

fn strs(v: &[&str]) -> Tensor {
    Tensor::vec(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

fn sample() -> Vec<(String, Tensor)> {
    vec![
        ("hidden/weights".into(), Tensor::new(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()),
        ("global_step".into(), Tensor::scalar(42i64)),
        ("hidden/weights/Adagrad".into(), Tensor::new(vec![2, 3], vec![0.1f32; 6]).unwrap()),
        ("vocab".into(), strs(&["a", "", "ccc"])),
        ("flags".into(), Tensor::vec(vec![true, false])),
        ("d".into(), Tensor::vec(vec![0.5f64])),
    ]
}

#[test]
fn write_then_read_back() {
    let (dir, [prefix]) = temp_paths("bundle", ["model.ckpt-1"]);
    write_bundle(&prefix, &sample()).unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    let mut names: Vec<String> = sample().into_iter().map(|(n, _)| n).collect();
    names.sort();
    assert_eq!(r.names(), names);
    for (n, t) in sample() {
        assert_eq!(r.read(&n).unwrap(), t, "{n}");
        let e = r.entry(&n).unwrap();
        assert_eq!((e.dtype, e.shape.clone()), (t.dtype(), t.shape().clone()));
    }
    assert_eq!(r.read("nope").unwrap_err().code, Code::NotFound);
    // Only the final files remain: no temporaries.
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(files, vec!["model.ckpt-1.data-00000-of-00001", "model.ckpt-1.index"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn save_and_restore_kernels() {
    let (dir, [prefix]) = temp_paths("savev2", ["ckpt"]);
    let save = node("SaveV2", &[("dtypes", attr::list_type(&[DataType::Float, DataType::Int64]))]);
    let w = Tensor::vec(vec![1.0f32, 2.0]);
    run_kernel(
        save.clone(),
        vec![strs(&[&prefix]), strs(&["w", "step"]), strs(&["", ""]), w.clone(), Tensor::scalar(5i64)],
        0,
    )
    .unwrap();
    let restore = node("RestoreV2", &[("dtypes", attr::list_type(&[DataType::Int64, DataType::Float]))]);
    let out = run_kernel(restore, vec![strs(&[&prefix]), strs(&["step", "w"]), strs(&["", ""])], 2).unwrap();
    assert_eq!(out[0], Tensor::scalar(5i64));
    assert_eq!(out[1], w);
    // Wrong dtype, missing tensor, slices, missing checkpoint.
    let bad = node("RestoreV2", &[("dtypes", attr::list_type(&[DataType::Int32]))]);
    let e = run_kernel(bad.clone(), vec![strs(&[&prefix]), strs(&["w"]), strs(&[""])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("'w'"), "{e}");
    let e = run_kernel(bad.clone(), vec![strs(&[&prefix]), strs(&["x"]), strs(&[""])], 1).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    let e = run_kernel(bad.clone(), vec![strs(&[&prefix]), strs(&["w"]), strs(&["3 0,1"])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("w;") && e.message.contains("does not match"), "{e}");
    let missing = dir.join("none").display().to_string();
    let e = run_kernel(bad, vec![strs(&[&missing]), strs(&["w"]), strs(&[""])], 1).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    let e = run_kernel(save, vec![strs(&[&prefix]), strs(&["w"]), strs(&[""]), w.clone(), w], 0).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn corrupt_files_are_errors_naming_the_file() {
    let (dir, [prefix]) = temp_paths("corrupt", ["m"]);
    write_bundle(&prefix, &sample()).unwrap();
    let data = data_path(&prefix, 0, 1);
    let index = index_path(&prefix);
    let good_data = std::fs::read(&data).unwrap();
    let good_index = std::fs::read(&index).unwrap();
    // A flipped data byte: the tensor holding it fails its checksum, naming file and tensor.
    let r = BundleReader::open(&prefix).unwrap();
    let e = r.entry("hidden/weights").unwrap();
    let mut d = good_data.clone();
    d[e.proto.offset as usize + 1] ^= 0x40;
    std::fs::write(&data, &d).unwrap();
    let err = r.read("hidden/weights").unwrap_err();
    assert_eq!(err.code, Code::DataLoss);
    assert!(err.message.contains("hidden/weights") && err.message.contains(".data-00000-of-00001"), "{err}");
    // A truncated data file.
    std::fs::write(&data, &good_data[..good_data.len() / 2]).unwrap();
    assert!(sample().iter().any(|(n, _)| r.read(n).map_err(|e| e.code) == Err(Code::DataLoss)));
    std::fs::write(&data, &good_data).unwrap();
    // A corrupt or truncated index.
    for bad in [good_index[..10].to_vec(), good_index[..good_index.len() - 3].to_vec(), {
        let mut b = good_index.clone();
        b[5] ^= 1;
        b
    }] {
        std::fs::write(&index, &bad).unwrap();
        let err = BundleReader::open(&prefix).unwrap_err();
        assert_eq!(err.code, Code::DataLoss, "{err}");
        assert!(err.message.contains("m.index"), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn interrupted_write_leaves_previous_checkpoint() {
    let (dir, [prefix]) = temp_paths("interrupt", ["model"]);
    write_bundle(&prefix, &[("w".into(), Tensor::vec(vec![1.0f32]))]).unwrap();
    {
        let mut w = BundleWriter::new(&prefix).unwrap();
        w.add("w", &Tensor::vec(vec![9.0f32])).unwrap();
        // Dropped before finish (a crash mid-save).
    }
    let r = BundleReader::open(&prefix).unwrap();
    assert_eq!(r.read("w").unwrap(), Tensor::vec(vec![1.0f32]));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn merge_moves_tensors_and_deletes_sources() {
    let (dir, [a, b, dest]) = temp_paths("merge", ["tmp/part-0", "tmp/part-1", "merged"]);
    write_bundle(&a, &[("x".into(), Tensor::scalar(1i32))]).unwrap();
    write_bundle(&b, &[("y".into(), strs(&["hi"]))]).unwrap();
    let n = node("MergeV2Checkpoints", &[("delete_old_dirs", attr::bool(true))]);
    run_kernel(n, vec![strs(&[&a, &b]), strs(&[&dest])], 0).unwrap();
    let r = BundleReader::open(&dest).unwrap();
    assert_eq!(r.read("x").unwrap(), Tensor::scalar(1i32));
    assert_eq!(r.read("y").unwrap(), strs(&["hi"]));
    assert!(!dir.join("tmp").exists());
    write_bundle(&a, &[("x".into(), Tensor::scalar(1i32))]).unwrap();
    let e = merge_checkpoints(&[a.clone(), dest.clone()], &dir.join("m2").display().to_string(), false, false);
    assert_eq!(e.unwrap_err().code, Code::InvalidArgument);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn save_and_restore_every_width_and_complex() {
    use ferroflow_core::half::{bf16, f16};
    use ferroflow_core::C128;
    let (dir, [prefix]) = temp_paths("savev2-dtypes", ["ckpt"]);
    let ts = vec![
        Tensor::new(vec![2, 2], vec![f16::from_f32(0.5), f16::MAX, f16::NEG_INFINITY, f16::from_f32(-3.25)]).unwrap(),
        Tensor::vec(vec![bf16::from_f32(1.5e30), bf16::from_f32(-0.125)]),
        Tensor::vec(vec![-128i8, 0, 127]),
        Tensor::vec(vec![u64::MAX, 0, 1 << 63]),
        Tensor::vec(vec![C128::new(1.5, -2.0), C128::new(f64::MIN_POSITIVE, 1e300)]),
    ];
    let names = ["half", "bf16", "int8", "uint64", "complex128"];
    let dtypes: Vec<DataType> = ts.iter().map(Tensor::dtype).collect();
    let save = node("SaveV2", &[("dtypes", attr::list_type(&dtypes))]);
    let mut inputs = vec![strs(&[&prefix]), strs(&names), strs(&[""; 5])];
    inputs.extend(ts.iter().cloned());
    run_kernel(save, inputs, 0).unwrap();
    let restore = node("RestoreV2", &[("dtypes", attr::list_type(&dtypes))]);
    let out = run_kernel(restore, vec![strs(&[&prefix]), strs(&names), strs(&[""; 5])], 5).unwrap();
    assert_eq!(out, ts);
    std::fs::remove_dir_all(dir).unwrap();
}
