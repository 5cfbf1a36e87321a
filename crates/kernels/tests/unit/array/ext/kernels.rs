//! Unit tests of the extended array kernels, run through the kernel registry.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, attrs: &[(&str, AttrValue)], inputs: Vec<Tensor>, outs: usize) -> Result<Vec<Tensor>, Status> {
    run_kernel(node(op, attrs), inputs, outs)
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}

fn m23() -> Tensor {
    Tensor::new(vec![2usize, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap()
}

#[test]
fn split_and_split_v() {
    let a = [("T", attr::ty(DataType::Float)), ("num_split", attr::int(3))];
    let o = run("Split", &a, vec![Tensor::scalar(-1i32), m23()], 3).unwrap();
    assert_eq!(o[1].dims(), &[2, 1]);
    assert_eq!(f32s(&o[2]), vec![3., 6.]);
    let e = run("Split", &a, vec![Tensor::scalar(0i32), m23()], 3).unwrap_err();
    assert!(e.message.contains("evenly divide the split dimension"), "{e}");
    let e = run("Split", &a, vec![Tensor::scalar(2i32), m23()], 3).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let a = [("T", attr::ty(DataType::Float)), ("num_split", attr::int(2)), ("Tlen", attr::ty(DataType::Int64))];
    let o = run("SplitV", &a, vec![m23(), Tensor::vec(vec![-1i64, 2]), Tensor::scalar(1i32)], 2).unwrap();
    assert_eq!((o[0].dims(), f32s(&o[0])), (&[2usize, 1][..], vec![1., 4.]));
    assert_eq!(f32s(&o[1]), vec![2., 3., 5., 6.]);
    let e = run("SplitV", &a, vec![m23(), Tensor::vec(vec![-1i64, -1]), Tensor::scalar(1i32)], 2).unwrap_err();
    assert!(e.message.contains("only be one -1"), "{e}");
    let e = run("SplitV", &a, vec![m23(), Tensor::vec(vec![1i64, 1]), Tensor::scalar(1i32)], 2).unwrap_err();
    assert!(e.message.contains("Determined shape must either match"), "{e}");
}

fn scan(op: &str, x: Tensor, axis: i32, excl: bool, rev: bool) -> Result<Tensor, Status> {
    let a = [
        ("T", attr::ty(x.dtype())),
        ("Tidx", attr::ty(DataType::Int32)),
        ("exclusive", attr::bool(excl)),
        ("reverse", attr::bool(rev)),
    ];
    Ok(run(op, &a, vec![x, Tensor::scalar(axis)], 1)?.remove(0))
}

#[test]
fn scans() {
    assert_eq!(f32s(&scan("Cumsum", m23(), 1, false, false).unwrap()), vec![1., 3., 6., 4., 9., 15.]);
    assert_eq!(f32s(&scan("Cumsum", m23(), 0, true, false).unwrap()), vec![0., 0., 0., 1., 2., 3.]);
    assert_eq!(f32s(&scan("Cumsum", m23(), -1, true, true).unwrap()), vec![5., 3., 0., 11., 6., 0.]);
    assert_eq!(f32s(&scan("Cumprod", m23(), 1, false, true).unwrap()), vec![6., 6., 3., 120., 30., 6.]);
    let l = scan("CumulativeLogsumexp", Tensor::vec(vec![0.0f64, 0.0]), 0, false, false).unwrap();
    let v = l.as_slice::<f64>().unwrap();
    assert!((v[0] - 0.0).abs() < 1e-12 && (v[1] - 2f64.ln()).abs() < 1e-12, "{v:?}");
    let l = scan("CumulativeLogsumexp", Tensor::vec(vec![1.0f64]), 0, true, false).unwrap();
    assert_eq!(l.as_slice::<f64>().unwrap(), &[f64::NEG_INFINITY]);
    let e = scan("Cumsum", m23(), 2, false, false).unwrap_err();
    assert!(e.message.contains("Expected scan axis in the range [-2, 2), but got 2"), "{e}");
}

#[test]
fn reverse_and_roll() {
    let a = [("T", attr::ty(DataType::Float)), ("Tidx", attr::ty(DataType::Int32))];
    let o = run("ReverseV2", &a, vec![m23(), Tensor::vec(vec![1i32, -2])], 1).unwrap();
    assert_eq!(f32s(&o[0]), vec![6., 5., 4., 3., 2., 1.]);
    let e = run("ReverseV2", &a, vec![m23(), Tensor::vec(vec![1i32, -1])], 1).unwrap_err();
    assert!(e.message.contains("specified more than once"), "{e}");
    let a =
        [("T", attr::ty(DataType::Float)), ("Tshift", attr::ty(DataType::Int32)), ("Taxis", attr::ty(DataType::Int32))];
    let o = run("Roll", &a, vec![m23(), Tensor::vec(vec![1i32, -4]), Tensor::vec(vec![1i32, 0])], 1).unwrap();
    assert_eq!(f32s(&o[0]), vec![3., 1., 2., 6., 4., 5.]);
    let e = run("Roll", &a, vec![m23(), Tensor::vec(vec![1i32]), Tensor::vec(vec![3i32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn top_k() {
    let a = [
        ("T", attr::ty(DataType::Float)),
        ("Tk", attr::ty(DataType::Int32)),
        ("index_type", attr::ty(DataType::Int32)),
        ("sorted", attr::bool(true)),
    ];
    let x = Tensor::new(vec![2usize, 4], vec![1.0f32, 3., 3., 2., -1., -2., 5., 0.]).unwrap();
    let o = run("TopKV2", &a, vec![x.clone(), Tensor::scalar(2i32)], 2).unwrap();
    assert_eq!(f32s(&o[0]), vec![3., 3., 5., 0.]);
    assert_eq!(o[1].as_slice::<i32>().unwrap(), &[1, 2, 2, 3]);
    let o = run("TopKV2", &a, vec![x.clone(), Tensor::scalar(1i32)], 2).unwrap();
    assert_eq!(o[1].as_slice::<i32>().unwrap(), &[1, 2]);
    let e = run("TopKV2", &a, vec![x.clone(), Tensor::scalar(5i32)], 2).unwrap_err();
    assert!(e.message.contains("Had 4, needed 5"), "{e}");
    let e = run("TopKV2", &a, vec![x, Tensor::scalar(-1i32)], 2).unwrap_err();
    assert!(e.message.contains("Need k >= 0"), "{e}");
}

#[test]
fn einsum_kernel() {
    let ein = |eq: &str, xs: Vec<Tensor>| {
        let a = [("T", attr::ty(xs[0].dtype())), ("N", attr::int(xs.len() as i64)), ("equation", attr::string(eq))];
        run("Einsum", &a, xs, 1).map(|mut v| v.remove(0))
    };
    let b = Tensor::new(vec![3usize, 2], vec![1.0f32, 0., 0., 1., 1., 1.]).unwrap();
    let o = ein("ij,jk->ik", vec![m23(), b.clone()]).unwrap();
    assert_eq!((o.dims(), f32s(&o)), (&[2usize, 2][..], vec![4., 5., 10., 11.]));
    let o = ein("ij,jk->ki", vec![m23(), b.clone()]).unwrap();
    assert_eq!(f32s(&o), vec![4., 10., 5., 11.]);
    let sq = Tensor::new(vec![2usize, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
    assert_eq!(f32s(&ein("ii->", vec![sq.clone()]).unwrap()), vec![5.]);
    assert_eq!(f32s(&ein("ii->i", vec![sq.clone()]).unwrap()), vec![1., 4.]);
    assert_eq!(f32s(&ein("ij->j", vec![m23()]).unwrap()), vec![5., 7., 9.]);
    // Repeated output labels inflate onto the diagonal (the gradient of a trace).
    let o = ein("i->ii", vec![Tensor::vec(vec![1.0f32, 2.])]).unwrap();
    assert_eq!((o.dims(), f32s(&o)), (&[2usize, 2][..], vec![1., 0., 0., 2.]));
    assert_eq!(f32s(&ein("ii->ii", vec![sq.clone()]).unwrap()), vec![1., 0., 0., 4.]);
    let o = ein("ij->jij", vec![m23()]).unwrap();
    assert_eq!(o.dims(), &[3, 2, 3]);
    assert_eq!(f32s(&o).iter().sum::<f32>(), 21.);
    assert_eq!(f32s(&o)[7], 2.); // [j=1, i=0, j=1] = x[0, 1]
    let o = ein("...j,j->...", vec![m23(), Tensor::vec(vec![1.0f32, 1., 1.])]).unwrap();
    assert_eq!((o.dims(), f32s(&o)), (&[2usize][..], vec![6., 15.]));
    let e = ein("ij,jk->ik", vec![m23(), m23()]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Expected dimension 3"), "{e}");
    let e = ein("ij,jk", vec![m23(), b.clone()]).unwrap_err();
    assert!(e.message.contains("Expecting exactly one '->'"), "{e}");
    let e = ein("ij->iz", vec![m23()]).unwrap_err();
    assert!(e.message.contains("not present in the inputs"), "{e}");
    let e = ein("ijk->i", vec![m23()]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn gather_scatter_nd_errors() {
    let a = [
        ("Tparams", attr::ty(DataType::Float)),
        ("Tindices", attr::ty(DataType::Int32)),
        ("bad_indices_policy", attr::string("")),
    ];
    let idx = Tensor::new(vec![1usize, 2], vec![1i32, 3]).unwrap();
    let e = run("GatherNd", &a, vec![m23(), idx], 1).unwrap_err();
    assert!(e.message.contains("indices[0] = [1, 3] does not index into param shape [2,3]"), "{e}");
    let ok = Tensor::new(vec![2usize, 2], vec![1i32, 2, 0, 0]).unwrap();
    assert_eq!(f32s(&run("GatherNd", &a, vec![m23(), ok], 1).unwrap()[0]), vec![6., 1.]);
    let a = [
        ("T", attr::ty(DataType::Float)),
        ("Tindices", attr::ty(DataType::Int32)),
        ("bad_indices_policy", attr::string("")),
    ];
    let idx = Tensor::new(vec![2usize, 1], vec![1i32, 1]).unwrap();
    let o = run("ScatterNd", &a, vec![idx.clone(), Tensor::vec(vec![2.0f32, 3.]), Tensor::vec(vec![3i32])], 1).unwrap();
    assert_eq!(f32s(&o[0]), vec![0., 5., 0.]);
    let e = run("ScatterNd", &a, vec![idx.clone(), Tensor::vec(vec![2.0f32]), Tensor::vec(vec![3i32])], 1).unwrap_err();
    assert!(e.message.contains("updates must have shape [2]"), "{e}");
    let e = run("ScatterNd", &a, vec![idx, Tensor::vec(vec![2.0f32, 3.]), Tensor::vec(vec![-3i32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn pads_bands_searches() {
    let a =
        [("T", attr::ty(DataType::Float)), ("Tpaddings", attr::ty(DataType::Int32)), ("mode", attr::string("REFLECT"))];
    let x = Tensor::vec(vec![1.0f32, 2., 3.]);
    let p = Tensor::new(vec![1usize, 2], vec![2i32, 1]).unwrap();
    assert_eq!(f32s(&run("MirrorPad", &a, vec![x.clone(), p], 1).unwrap()[0]), vec![3., 2., 1., 2., 3., 2.]);
    let p = Tensor::new(vec![1usize, 2], vec![3i32, 0]).unwrap();
    let e = run("MirrorPad", &a, vec![x.clone(), p.clone()], 1).unwrap_err();
    assert!(e.message.contains("paddings must be less than the dimension size: 3, 0 not less than 3"), "{e}");
    let a = [
        ("T", attr::ty(DataType::Float)),
        ("Tpaddings", attr::ty(DataType::Int32)),
        ("mode", attr::string("SYMMETRIC")),
    ];
    let g = run("MirrorPadGrad", &a, vec![Tensor::vec(vec![1.0f32, 1., 1., 1., 1., 1.]), p], 1).unwrap();
    assert_eq!(f32s(&g[0]), vec![2., 2., 2.]);
    let a = [("T", attr::ty(DataType::Float)), ("Tindex", attr::ty(DataType::Int64))];
    let o = run("MatrixBandPart", &a, vec![m23(), Tensor::scalar(0i64), Tensor::scalar(1i64)], 1).unwrap();
    assert_eq!(f32s(&o[0]), vec![1., 2., 0., 0., 5., 6.]);
    let e = run("MatrixBandPart", &a, vec![m23(), Tensor::scalar(3i64), Tensor::scalar(1i64)], 1).unwrap_err();
    assert!(e.message.contains("num_lower must be negative or less or equal to number of rows"), "{e}");
    let a = [("T", attr::ty(DataType::Float)), ("out_type", attr::ty(DataType::Int32))];
    let srt = Tensor::new(vec![1usize, 4], vec![1.0f32, 2., 2., 3.]).unwrap();
    let v = Tensor::new(vec![1usize, 3], vec![2.0f32, 0., 4.]).unwrap();
    assert_eq!(
        run("LowerBound", &a, vec![srt.clone(), v.clone()], 1).unwrap()[0].as_slice::<i32>().unwrap(),
        &[1, 0, 4]
    );
    assert_eq!(run("UpperBound", &a, vec![srt, v], 1).unwrap()[0].as_slice::<i32>().unwrap(), &[3, 0, 4]);
    let a = [("T", attr::ty(DataType::Float)), ("boundaries", attr::list_float(&[1.0, 0.0]))];
    assert!(run("Bucketize", &a, vec![x.clone()], 1).unwrap_err().message.contains("Expected sorted boundaries"));
    let a = [("T", attr::ty(DataType::Float))];
    let e = run("ClipByValue", &a, vec![m23(), Tensor::vec(vec![0.0f32, 1.]), Tensor::scalar(1.0f32)], 1).unwrap_err();
    assert!(e.message.contains("clip_value_min and clip_value_max must be either of the same shape"), "{e}");
    let a = [("dtype", attr::ty(DataType::Int64)), ("init", attr::bool(true))];
    let o = run("Empty", &a, vec![Tensor::vec(vec![2i32, 0, 3])], 1).unwrap();
    assert_eq!((o[0].dims(), o[0].dtype()), (&[2usize, 0, 3][..], DataType::Int64));
    let e = run("Empty", &a, vec![Tensor::vec(vec![-2i32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn matrix_diag_errors() {
    let a = [("T", attr::ty(DataType::Float)), ("align", attr::string("RIGHT_LEFT"))];
    let e =
        run("MatrixDiagPartV3", &a, vec![m23(), Tensor::vec(vec![1i32, 0]), Tensor::scalar(0.0f32)], 1).unwrap_err();
    assert!(e.message.contains("lower_diag_index must not be larger than upper_diag_index"), "{e}");
    let e = run("MatrixDiagPartV3", &a, vec![m23(), Tensor::scalar(3i32), Tensor::scalar(0.0f32)], 1).unwrap_err();
    assert!(e.message.contains("upper_diag_index is out of bound") || e.message.contains("out of bound"), "{e}");
    let o = run("MatrixDiagPartV3", &a, vec![m23(), Tensor::vec(vec![-1i32, 1]), Tensor::scalar(9.0f32)], 1).unwrap();
    // Diagonals 1, 0, -1 of [[1,2,3],[4,5,6]]: superdiagonals right-aligned, subdiagonals left.
    assert_eq!((o[0].dims(), f32s(&o[0])), (&[3usize, 2][..], vec![2., 6., 1., 5., 4., 9.]));
    let a = [("T", attr::ty(DataType::Float))];
    let e = run("MatrixSetDiag", &a, vec![m23(), Tensor::vec(vec![1.0f32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}
