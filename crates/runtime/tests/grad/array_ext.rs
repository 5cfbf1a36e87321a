//! Numeric checks of the gradients of the extended array ops: Split, SplitV, the scans,
//! ReverseV2, Roll, TopKV2, MirrorPad(Grad), GatherNd, ScatterNd, TensorScatter*,
//! MatrixBandPart, Diag(Part), ClipByValue and Einsum; the space/batch/depth block moves,
//! ReverseSequence, Cross and LRN.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::ops;
use ferroflow_graph::Output;

fn c32(s: &ferroflow_graph::Scope, v: i32) -> Output {
    ops::constant(s, v)
}

#[test]
fn split_and_split_v() {
    for mode in [Mode::Static, Mode::Rank] {
        let e = check_multi(|s, x| ops::split(s, c32(s, 1), x[0].clone(), 3), &[rand(&[2, 6], 1)], &[0], EPS, mode);
        ok("Split [2,6] axis 1 in 3", e, TOL);
        let e = check_multi(
            |s, x| ops::split_v(s, x[0].clone(), i64s(s, &[1, -1, 2]), c32(s, -2), 3),
            &[rand(&[5, 3], 2)],
            &[0],
            EPS,
            mode,
        );
        ok("SplitV [5,3] sizes [1,-1,2] axis -2", e, TOL);
    }
    // Only one of the outputs used: the other gradients are zeros.
    assert_grad(
        "Split, one output",
        |s, x| ops::split(s, c32(s, 0), x[0].clone(), 2)[1].clone(),
        &[rand(&[4, 2], 3)],
        &[0],
    );
}

#[test]
fn scans() {
    for (ex, rev) in [(false, false), (true, false), (false, true), (true, true)] {
        let what = format!("exclusive {ex} reverse {rev}");
        assert_grad(
            &format!("Cumsum {what}"),
            |s, x| ops::cumsum(s, x[0].clone(), c32(s, 1), ex, rev),
            &[rand(&[3, 4], 4)],
            &[0],
        );
        let away = values(&[2, 5], 5, 0.5, 1.5, &[], 0.0);
        assert_grad(
            &format!("Cumprod {what}"),
            |s, x| ops::cumprod(s, x[0].clone(), c32(s, -1), ex, rev),
            &[away],
            &[0],
        );
        assert_grad(
            &format!("CumulativeLogsumexp {what}"),
            |s, x| ops::cumulative_logsumexp(s, x[0].clone(), c32(s, 0), ex, rev),
            &[rand(&[4, 3], 6)],
            &[0],
        );
    }
}

#[test]
fn reverse_roll_top_k() {
    assert_grad(
        "ReverseV2 [0,2]",
        |s, x| ops::reverse_v2(s, x[0].clone(), i32s(s, &[0, 2])),
        &[rand(&[2, 3, 2], 7)],
        &[0],
    );
    assert_grad(
        "Roll shift [2,-1] axis [1,0]",
        |s, x| ops::roll(s, x[0].clone(), i32s(s, &[2, -1]), i32s(s, &[1, 0])),
        &[rand(&[3, 4], 8)],
        &[0],
    );
    assert_grad("TopKV2 k=2", |s, x| ops::top_k_v2(s, x[0].clone(), c32(s, 2), true).0, &[distinct(&[3, 5], 9)], &[0]);
    assert_grad(
        "TopKV2 k=3 rank 3",
        |s, x| ops::top_k_v2(s, x[0].clone(), c32(s, 3), true).0,
        &[distinct(&[2, 2, 4], 10)],
        &[0],
    );
}

#[test]
fn mirror_pad() {
    let p = |s: &ferroflow_graph::Scope| ops::constant(s, Tensor::new(vec![2, 2], vec![1i32, 2, 2, 0]).unwrap());
    for mode in ["REFLECT", "SYMMETRIC"] {
        assert_grad(
            &format!("MirrorPad {mode}"),
            |s, x| ops::mirror_pad(s, x[0].clone(), p(s), mode),
            &[rand(&[3, 4], 11)],
            &[0],
        );
        assert_grad(
            &format!("MirrorPadGrad {mode}"),
            |s, x| ops::mirror_pad_grad(s, x[0].clone(), p(s), mode),
            &[rand(&[6, 6], 12)],
            &[0],
        );
    }
}

#[test]
fn gather_scatter_nd() {
    let idx =
        |s: &ferroflow_graph::Scope| ops::constant(s, Tensor::new(vec![3, 2], vec![0i32, 1, 2, 0, 0, 1]).unwrap());
    assert_grad(
        "GatherNd duplicate tuples",
        |s, x| ops::gather_nd(s, x[0].clone(), idx(s)),
        &[rand(&[3, 2, 2], 13)],
        &[0],
    );
    assert_grad(
        "ScatterNd",
        |s, x| ops::scatter_nd(s, idx(s), x[0].clone(), i32s(s, &[3, 2, 2])),
        &[rand(&[3, 2], 14)],
        &[0],
    );
    let rows = |s: &ferroflow_graph::Scope| ops::constant(s, Tensor::new(vec![2, 1], vec![2i64, 0]).unwrap());
    for op in ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub"] {
        assert_grad(
            op,
            |s, x| ops::tensor_scatter(s, op, x[0].clone(), rows(s), x[1].clone()),
            &[rand(&[4, 3], 15), rand(&[2, 3], 16)],
            &[0, 1],
        );
    }
}

#[test]
fn band_diag_clip() {
    assert_grad(
        "MatrixBandPart (1, 0)",
        |s, x| ops::matrix_band_part(s, x[0].clone(), ops::constant(s, 1i64), ops::constant(s, 0i64)),
        &[rand(&[2, 3, 4], 17)],
        &[0],
    );
    assert_grad("Diag", |s, x| ops::diag(s, x[0].clone()), &[rand(&[2, 3], 18)], &[0]);
    assert_grad("DiagPart", |s, x| ops::diag_part(s, x[0].clone()), &[rand(&[3, 3], 19)], &[0]);
    // Values at least 0.05 from the bounds (no kinks within eps).
    let x = values(&[3, 4], 20, -1.0, 1.0, &[-0.4, 0.3], 0.05);
    let lo = ops_const_f64(-0.4);
    let hi = ops_const_f64(0.3);
    assert_grad(
        "ClipByValue scalar bounds",
        |s, v| ops::clip_by_value(s, v[0].clone(), v[1].clone(), v[2].clone()),
        &[x, lo, hi],
        &[0, 1, 2],
    );
}

fn ops_const_f64(v: f64) -> Tensor {
    Tensor::scalar(v)
}

#[test]
fn einsum() {
    let cases: Vec<(&str, Vec<Vec<usize>>, bool)> = vec![
        ("ij,jk->ik", vec![vec![3, 4], vec![4, 2]], true),
        ("bij,bjk->bik", vec![vec![2, 3, 4], vec![2, 4, 2]], true),
        ("aecd,abcd->acbe", vec![vec![2, 3, 2, 2], vec![2, 4, 2, 2]], true),
        ("abc,cd->abd", vec![vec![2, 3, 4], vec![4, 5]], true),
        ("i,j->ij", vec![vec![3], vec![4]], true),
        ("i,i->", vec![vec![5], vec![5]], true),
        ("ijk->kij", vec![vec![2, 3, 4]], true),
        ("ij->i", vec![vec![3, 4]], false),
        ("ij,jk->i", vec![vec![3, 4], vec![4, 2]], false),
        ("...ij,...jk->...ik", vec![vec![2, 1, 3, 4], vec![3, 4, 2]], false),
        ("...ij,jk->...ik", vec![vec![2, 3, 4], vec![4, 2]], true),
    ];
    for (k, (eq, shapes, any_shape)) in cases.into_iter().enumerate() {
        let vals: Vec<Tensor> = shapes.iter().enumerate().map(|(i, d)| rand(d, 30 + 2 * k as u64 + i as u64)).collect();
        let diff: Vec<usize> = (0..vals.len()).collect();
        let build = |s: &ferroflow_graph::Scope, x: &[Output]| ops::einsum(s, x.to_vec(), eq);
        if any_shape {
            assert_grad(eq, build, &vals, &diff);
        } else {
            ok(eq, check(build, &vals, &diff, Mode::Static), TOL);
        }
    }
}

#[test]
fn matrix_diag_ops() {
    let k = |s: &ferroflow_graph::Scope| i32s(s, &[-1, 1]);
    let zero = |s: &ferroflow_graph::Scope| ops::constant(s, 0f64);
    assert_grad(
        "MatrixDiagPartV3 k [-1,1]",
        |s, x| ops::matrix_diag_part_v3(s, x[0].clone(), k(s), zero(s), "RIGHT_LEFT"),
        &[rand(&[2, 3, 4], 40)],
        &[0],
    );
    assert_grad(
        "MatrixDiagV3 k [-1,1]",
        |s, x| ops::matrix_diag_v3(s, x[0].clone(), k(s), c32(s, 3), c32(s, 4), zero(s), "LEFT_RIGHT"),
        &[rand(&[2, 3, 3], 41)],
        &[0],
    );
    assert_grad(
        "MatrixSetDiagV3 k [-1,1]",
        |s, x| ops::matrix_set_diag_v3(s, x[0].clone(), x[1].clone(), k(s), "RIGHT_LEFT"),
        &[rand(&[2, 3, 4], 42), rand(&[2, 3, 3], 43)],
        &[0, 1],
    );
}

#[test]
fn space_batch_depth_moves() {
    // The N-D moves, block [2,3], with their [2,2] paddings / crops.
    type NdMove = fn(&ferroflow_graph::Scope, Output, Output, Output) -> Output;
    let nd: [(_, NdMove, [usize; 4], [i32; 4], _); 2] = [
        ("SpaceToBatchND [2,4,6,3] block [2,3] paddings", ops::space_to_batch_nd, [2, 4, 6, 3], [1, 1, 0, 3], 41),
        ("BatchToSpaceND [12,2,3,2] block [2,3] crops", ops::batch_to_space_nd, [12, 2, 3, 2], [1, 2, 0, 3], 42),
    ];
    for (name, op, shape, edges, seed) in nd {
        let edges = Tensor::new(vec![2, 2], edges.to_vec()).unwrap();
        assert_grad(
            name,
            |s, x| op(s, x[0].clone(), i32s(s, &[2, 3]), ops::constant(s, edges.clone())),
            &[rand(&shape, seed)],
            &[0],
        );
    }
    assert_grad(
        "SpaceToDepth [2,4,6,3] block 2",
        |s, x| ops::space_to_depth(s, x[0].clone(), 2),
        &[rand(&[2, 4, 6, 3], 43)],
        &[0],
    );
    assert_grad(
        "DepthToSpace [1,2,3,18] block 3",
        |s, x| ops::depth_to_space(s, x[0].clone(), 3),
        &[rand(&[1, 2, 3, 18], 44)],
        &[0],
    );
    assert_grad(
        "ReverseSequence [3,5,2] seq 1 batch 0",
        |s, x| ops::reverse_sequence(s, x[0].clone(), i64s(s, &[5, 0, 3]), 1, 0),
        &[rand(&[3, 5, 2], 45)],
        &[0],
    );
    assert_grad(
        "Cross [4,3]",
        |s, x| ops::cross(s, x[0].clone(), x[1].clone()),
        &[rand(&[4, 3], 46), rand(&[4, 3], 47)],
        &[0, 1],
    );
}

#[test]
fn lrn() {
    // LRN computes in float32 (TensorFlow registers no float64 kernel).
    let vals = [to_f32(&rand(&[2, 2, 3, 7], 48))];
    for mode in [Mode::Static, Mode::Rank] {
        let e = check_multi(|s, x| vec![ops::lrn(s, x[0].clone(), 2, 1.5, 0.3, 0.75)], &vals, &[0], EPS32, mode);
        ok(&format!("LRN radius 2 {mode:?}"), e, TOL32);
    }
}
