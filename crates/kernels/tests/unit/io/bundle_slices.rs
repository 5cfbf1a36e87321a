//! Partitioned tensors in checkpoints: saved as slices, read whole or in other slices.

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::io::bundle_ops::merge_checkpoints;
use ferroflow_kernels::io::bundle_reader::BundleReader;
use ferroflow_kernels::io::bundle_writer::BundleWriter;
use ferroflow_kernels::io::tensor_slice::TensorSlice;
use ferroflow_kernels::testutil::{node, run_kernel, temp_paths};

fn strs(v: &[&str]) -> Tensor {
    Tensor::vec(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

/// Rows `r0..r1` of the 4x3 matrix with element (i, j) = 10 i + j.
fn rows(r0: usize, r1: usize) -> Tensor {
    let v: Vec<f32> = (r0..r1).flat_map(|i| (0..3).map(move |j| (10 * i + j) as f32)).collect();
    Tensor::new(vec![r1 - r0, 3], v).unwrap()
}

fn cols(c0: usize, c1: usize) -> Tensor {
    let v: Vec<f32> = (0..4).flat_map(|i| (c0..c1).map(move |j| (10 * i + j) as f32)).collect();
    Tensor::new(vec![4, c1 - c0], v).unwrap()
}

fn save(prefix: &str, names: &[&str], specs: &[&str], values: Vec<Tensor>) -> Result<(), ferroflow_core::Status> {
    let dtypes: Vec<DataType> = values.iter().map(|t| t.dtype()).collect();
    let save = node("SaveV2", &[("dtypes", attr::list_type(&dtypes))]);
    let mut inputs = vec![strs(&[prefix]), strs(names), strs(specs)];
    inputs.extend(values);
    run_kernel(save, inputs, 0).map(|_| ())
}

fn restore(
    prefix: &str,
    names: &[&str],
    specs: &[&str],
    dtypes: &[DataType],
) -> Result<Vec<Tensor>, ferroflow_core::Status> {
    let restore = node("RestoreV2", &[("dtypes", attr::list_type(dtypes))]);
    run_kernel(restore, vec![strs(&[prefix]), strs(names), strs(specs)], dtypes.len())
}

#[test]
fn sliced_save_restores_whole_and_in_any_slice() {
    let (dir, [prefix]) = temp_paths("slices", ["ckpt"]);
    // Two partitions of w (rows 0-1 and 2-3) and a whole tensor, as a tf.compat.v1 Saver
    // saves a fixed_size_partitioner(2) variable.
    save(
        &prefix,
        &["w", "w", "b"],
        &["4 3 0,2:0,3", "4 3 2,2:0,3", ""],
        vec![rows(0, 2), rows(2, 4), Tensor::scalar(7i64)],
    )
    .unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    assert_eq!(r.names(), vec!["b", "w"]);
    let e = r.entry("w").unwrap();
    assert_eq!((e.dtype, e.shape.dims()), (DataType::Float, &[4usize, 3][..]));
    assert_eq!(r.stored_slices("w").unwrap().iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["0,2:0,3", "2,2:0,3"]);
    assert_eq!(r.read("w").unwrap(), rows(0, 4));
    let f = [DataType::Float];
    // Whole, by an empty spec and by a full one; a stored slice; slices across both parts.
    assert_eq!(restore(&prefix, &["w"], &[""], &f).unwrap(), vec![rows(0, 4)]);
    assert_eq!(restore(&prefix, &["w"], &["4 3 -:-"], &f).unwrap(), vec![rows(0, 4)]);
    assert_eq!(restore(&prefix, &["w"], &["4 3 2,2:0,3"], &f).unwrap(), vec![rows(2, 4)]);
    assert_eq!(restore(&prefix, &["w"], &["4 3 1,2:-"], &f).unwrap(), vec![rows(1, 3)]);
    assert_eq!(restore(&prefix, &["w"], &["4 3 -:1,2"], &f).unwrap(), vec![cols(1, 3)]);
    // A whole stored tensor read in slices.
    save(&prefix, &["m"], &[""], vec![rows(0, 4)]).unwrap();
    assert_eq!(restore(&prefix, &["m"], &["4 3 -:0,1"], &f).unwrap(), vec![cols(0, 1)]);
    // The spec's full shape must be the stored one.
    let e = restore(&prefix, &["m"], &["4 4 -:0,1"], &f).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("does not match the shape stored"), "{e}");
    let e = restore(&prefix, &["m"], &["4 3 0,5:-"], &f).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("'4 3 0,5:-'"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn missing_and_conflicting_slices_are_errors() {
    let (dir, [prefix]) = temp_paths("slices-bad", ["ckpt"]);
    save(&prefix, &["w"], &["4 3 0,2:-"], vec![rows(0, 2)]).unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    let e = r.read("w").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Does not have sufficient slices for partitioned tensor w"), "{e}");
    assert_eq!(r.read_slice("w", &TensorSlice::parse("1,1:-").unwrap()).unwrap(), rows(1, 2));
    // Overlapping, wrongly shaped, mixed whole/sliced and mismatched slices.
    let mut w = BundleWriter::new(&prefix).unwrap();
    let s = |spec: &str| TensorSlice::parse(spec).unwrap();
    w.add_slice("w", &[4, 3], &s("0,2:-"), &rows(0, 2)).unwrap();
    let e = w.add_slice("w", &[4, 3], &s("1,2:-"), &rows(1, 3)).unwrap_err();
    assert!(e.message.contains("overlaps slice '0,2:-'"), "{e}");
    let e = w.add_slice("w", &[4, 3], &s("2,2:-"), &rows(2, 3)).unwrap_err();
    assert!(e.message.contains("the slice has shape [2, 3]"), "{e}");
    let e = w.add_slice("w", &[5, 3], &s("2,2:-"), &rows(2, 4)).unwrap_err();
    assert!(e.message.contains("earlier slices of 'w'"), "{e}");
    let e = w.add("w", &rows(0, 4)).unwrap_err();
    assert!(e.message.contains("added twice"), "{e}");
    w.add("m", &rows(0, 4)).unwrap();
    let e = w.add_slice("m", &[4, 3], &s("2,2:-"), &rows(2, 4)).unwrap_err();
    assert!(e.message.contains("already added whole"), "{e}");
    // A slice that is the whole tensor is stored whole.
    w.add_slice("z", &[4, 3], &s("0,4:0,3"), &rows(0, 4)).unwrap();
    w.finish().unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    assert!(r.stored_slices("z").unwrap().is_empty());
    assert_eq!(r.read("z").unwrap(), rows(0, 4));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn merge_combines_the_slices_of_each_shard() {
    // A sharded save: each ps task writes its partitions, then MergeV2Checkpoints.
    let (dir, [p0, p1, dest]) = temp_paths("slices-merge", ["tmp/part-0", "tmp/part-1", "model"]);
    save(&p0, &["w", "a"], &["4 3 0,2:-", ""], vec![rows(0, 2), Tensor::scalar(1i64)]).unwrap();
    save(&p1, &["w", "b"], &["4 3 2,2:-", ""], vec![rows(2, 4), Tensor::scalar(2i64)]).unwrap();
    merge_checkpoints(&[p0.clone(), p1.clone()], &dest, true, false).unwrap();
    let r = BundleReader::open(&dest).unwrap();
    assert_eq!(r.names(), vec!["a", "b", "w"]);
    assert_eq!(r.read("w").unwrap(), rows(0, 4));
    assert_eq!(r.stored_slices("w").unwrap().len(), 2);
    // The same slice from two shards is an error.
    save(&p0, &["w"], &["4 3 0,2:-"], vec![rows(0, 2)]).unwrap();
    save(&p1, &["w"], &["4 3 0,2:-"], vec![rows(0, 2)]).unwrap();
    let e = merge_checkpoints(&[p0, p1], &dest, true, false).unwrap_err();
    assert!(e.message.contains("added twice") || e.message.contains("overlaps"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn huge_sliced_shapes_are_errors_not_aborts() {
    // An index (from a damaged or hostile file) claiming slices of enormous tensors.
    let (dir, [prefix]) = temp_paths("slices-huge", ["ckpt"]);
    let (big, huge) = ((1usize << 20).to_string(), (1usize << 40).to_string());
    let one = || Tensor::new(vec![1, 1], vec![1.0f32]).unwrap();
    save(
        &prefix,
        &["w", "x"],
        &[&format!("{big} {big} 0,1:0,1"), &format!("{huge} {huge} 0,1:0,1")],
        vec![one(), one()],
    )
    .unwrap();
    let r = BundleReader::open(&prefix).unwrap();
    let e = r.read("w").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    let e = r.read_slice("w", &TensorSlice::parse(&format!("0,{big}:0,1")).unwrap()).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert_eq!(r.read_slice("w", &TensorSlice::parse("0,1:0,1").unwrap()).unwrap(), one());
    // 2^80 elements do not even make a shape.
    assert_eq!(r.read("x").unwrap_err().code, Code::DataLoss);
    std::fs::remove_dir_all(dir).unwrap();
}
