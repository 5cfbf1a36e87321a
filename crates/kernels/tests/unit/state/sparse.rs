//! Row-wise variable kernels over one shared resource manager, as a step runs them; the
//! sparse Adagrad numbers are TensorFlow 2.21's (`ResourceSparseApplyAdagrad`, eager).

// TensorFlow's float32 values printed as exact decimals.
#![allow(clippy::excessive_precision)]

use std::sync::Arc;

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel_values};
use ferroflow_kernels::{ResourceMgr, Value, Var};

use super::run;

/// A resource variable named `name` holding `t`; returns its handle.
fn resource(rm: &Arc<ResourceMgr>, name: &str, t: Tensor) -> Value {
    let mut n = node(
        "VarHandleOp",
        &[
            ("container", attr::string("")),
            ("shared_name", attr::string(name)),
            ("dtype", attr::ty(t.dtype())),
            ("shape", attr::shape(None)),
        ],
    );
    n.name = name.into();
    let h = run_kernel_values(n, vec![], 1, rm.clone()).unwrap().remove(0);
    let a = [("dtype", attr::ty(t.dtype())), ("validate_shape", attr::bool(false))];
    run(rm, "AssignVariableOp", &a, vec![h.clone(), Value::Tensor(t)], 0).unwrap();
    h
}

fn read(rm: &Arc<ResourceMgr>, h: &Value, dtype: DataType) -> Tensor {
    run(rm, "ReadVariableOp", &[("dtype", attr::ty(dtype))], vec![h.clone()], 1).unwrap()[0].tensor().unwrap()
}

fn reference(t: Tensor) -> (Arc<Var>, Value) {
    let v = Arc::new(Var::new("ref", t.dtype()));
    *v.value.write().unwrap() = Some(t);
    (v.clone(), Value::Ref(v))
}

fn m(rows: usize, v: Vec<f32>) -> Tensor {
    let cols = v.len() / rows;
    Tensor::new(vec![rows, cols], v).unwrap()
}

#[test]
fn resource_gather_reads_rows() {
    let rm = Arc::new(ResourceMgr::new());
    let h = resource(&rm, "emb", m(3, vec![1., 2., 3., 4., 5., 6.]));
    let g = |idx: Tensor| {
        let a =
            [("dtype", attr::ty(DataType::Float)), ("Tindices", attr::ty(idx.dtype())), ("batch_dims", attr::int(0))];
        run(&rm, "ResourceGather", &a, vec![h.clone(), Value::Tensor(idx)], 1).map(|v| v[0].tensor().unwrap())
    };
    assert_eq!(g(Tensor::vec(vec![2i64, 0, 2])).unwrap(), m(3, vec![5., 6., 1., 2., 5., 6.]));
    let o = g(Tensor::new(vec![2, 1], vec![1i32, 0]).unwrap()).unwrap();
    assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[2usize, 1, 2][..], &[3., 4., 1., 2.][..]));
    let e = g(Tensor::vec(vec![3i64])).err().unwrap();
    assert!(e.message.contains("indices[0] = 3 is not in [0, 3)"), "{e}");
    let a = [("dtype", attr::ty(DataType::Double)), ("Tindices", attr::ty(DataType::Int64))];
    let e = run(&rm, "ResourceGather", &a, vec![h.clone(), Value::Tensor(Tensor::vec(vec![0i64]))], 1).err().unwrap();
    assert!(e.message.contains("variable emb of float as double"), "{e}");
    run(&rm, "DisableCopyOnRead", &[], vec![h], 0).unwrap();
}

#[test]
fn scatters_update_rows_in_place() {
    let rm = Arc::new(ResourceMgr::new());
    let h = resource(&rm, "v", m(3, vec![1., 2., 3., 4., 5., 6.]));
    let sc = |op: &str, idx: Vec<i64>, upd: Tensor| {
        let a = [("dtype", attr::ty(DataType::Float)), ("Tindices", attr::ty(DataType::Int64))];
        run(&rm, op, &a, vec![h.clone(), Value::Tensor(Tensor::vec(idx)), Value::Tensor(upd)], 0)
    };
    // Repeated indices accumulate.
    sc("ResourceScatterAdd", vec![0, 2, 0], m(3, vec![10., 10., 1., 1., 100., 100.])).unwrap();
    assert_eq!(read(&rm, &h, DataType::Float), m(3, vec![111., 112., 3., 4., 6., 7.]));
    sc("ResourceScatterSub", vec![1], m(1, vec![3., 4.])).unwrap();
    sc("ResourceScatterUpdate", vec![2], Tensor::scalar(9.0f32)).unwrap();
    assert_eq!(read(&rm, &h, DataType::Float), m(3, vec![111., 112., 0., 0., 9., 9.]));
    let e = sc("ResourceScatterAdd", vec![3], m(1, vec![1., 1.])).err().unwrap();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("indices[0] = 3 is not in [0, 3) (variable v)"), "{e}");
    let e = sc("ResourceScatterAdd", vec![0, 1], m(1, vec![1., 1.])).err().unwrap();
    assert!(e.message.contains("Must have updates.shape = indices.shape + params.shape[1:]"), "{e}");

    // Reference variables: the op outputs the reference.
    let (var, r) = reference(Tensor::vec(vec![1i64, 2, 3]));
    let a =
        [("T", attr::ty(DataType::Int64)), ("Tindices", attr::ty(DataType::Int32)), ("use_locking", attr::bool(false))];
    let idx = || Value::Tensor(Tensor::vec(vec![2i32, 2]));
    let out = run(&rm, "ScatterAdd", &a, vec![r.clone(), idx(), Value::Tensor(Tensor::vec(vec![5i64, 5]))], 1).unwrap();
    assert!(matches!(&out[0], Value::Ref(v) if Arc::ptr_eq(v, &var)));
    run(&rm, "ScatterSub", &a, vec![r.clone(), idx(), Value::Tensor(Tensor::vec(vec![1i64, 1]))], 1).unwrap();
    assert_eq!(var.value.read().unwrap().clone().unwrap(), Tensor::vec(vec![1i64, 2, 11]));
    run(&rm, "ScatterUpdate", &a, vec![r, idx(), Value::Tensor(Tensor::vec(vec![7i64, 8]))], 1).unwrap();
    assert_eq!(var.value.read().unwrap().clone().unwrap(), Tensor::vec(vec![1i64, 2, 8]));
    let (_, empty) = {
        let v = Arc::new(Var::new("unset", DataType::Int64));
        (v.clone(), Value::Ref(v))
    };
    let e = run(&rm, "ScatterAdd", &a, vec![empty, idx(), Value::Tensor(Tensor::vec(vec![5i64, 5]))], 1).err().unwrap();
    assert_eq!(e.code, Code::FailedPrecondition);
}

const VAR0: [f32; 12] = [
    0.4412274956703186,
    -0.3308701515197754,
    2.4307711124420166,
    -0.2520921230316162,
    0.10960984230041504,
    1.5824811458587646,
    -0.9092323780059814,
    -0.5916366577148438,
    0.18760322034358978,
    -0.32986995577812195,
    -1.1927646398544312,
    -0.20487651228904724,
];
const ACC0: [f32; 12] = [
    0.8919433355331421,
    0.3466778099536896,
    0.4728115200996399,
    0.36647194623947144,
    0.6659091114997864,
    0.6218540072441101,
    0.6399362683296204,
    0.3392372131347656,
    0.35621729493141174,
    0.3282293975353241,
    0.3948075473308563,
    0.22974787652492523,
];
const GRAD: [f32; 9] = [
    0.9964398145675659,
    0.7124212980270386,
    0.059144243597984314,
    -0.36331087350845337,
    0.003288842970505357,
    -0.10593044012784958,
    0.7930533289909363,
    -0.6315716505050659,
    -0.0061949086375534534,
];
/// TensorFlow's var and accum after lr 0.1, indices [2, 0, 2], update_slots true.
const TF_VAR: [f32; 12] = [
    0.4771313965320587,
    -0.3314287066459656,
    2.4459969997406006,
    -0.2520921230316162,
    0.10960984230041504,
    1.5824811458587646,
    -1.0399445295333862,
    -0.6124686002731323,
    0.17877478897571564,
    -0.32986995577812195,
    -1.1927646398544312,
    -0.20487651228904724,
];
const TF_ACC: [f32; 12] = [
    1.0239381790161133,
    0.3466886281967163,
    0.4840327799320221,
    0.36647194623947144,
    0.6659091114997864,
    0.6218540072441101,
    2.2617621421813965,
    1.245664119720459,
    0.35975372791290283,
    0.3282293975353241,
    0.3948075473308563,
    0.22974787652492523,
];
/// The same with update_slots false (accum unchanged).
const TF_VAR_NO_SLOTS: [f32; 12] = [
    0.4796963930130005,
    -0.33142873644828796,
    2.446176528930664,
    -0.2520921230316162,
    0.10960984230041504,
    1.5824811458587646,
    -1.1329301595687866,
    -0.6055178642272949,
    0.17873160541057587,
    -0.32986995577812195,
    -1.1927646398544312,
    -0.20487651228904724,
];

fn close(got: &Tensor, want: &[f32]) {
    let g = got.as_slice::<f32>().unwrap();
    assert_eq!(g.len(), want.len());
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "element {i}: {a} vs TensorFlow's {b}");
    }
}

#[test]
fn sparse_adagrad_matches_tensorflow() {
    for update_slots in [true, false] {
        let (want_var, want_acc) = if update_slots { (TF_VAR, TF_ACC) } else { (TF_VAR_NO_SLOTS, ACC0) };
        let attrs = |idx: DataType| {
            vec![
                ("T", attr::ty(DataType::Float)),
                ("Tindices", attr::ty(idx)),
                ("use_locking", attr::bool(false)),
                ("update_slots", attr::bool(update_slots)),
            ]
        };
        let args = |idx: Vec<i64>| {
            vec![
                Value::Tensor(Tensor::scalar(0.1f32)),
                Value::Tensor(m(idx.len(), GRAD[..3 * idx.len()].to_vec())),
                Value::Tensor(Tensor::vec(idx)),
            ]
        };
        // Resource form.
        let rm = Arc::new(ResourceMgr::new());
        let v = resource(&rm, "var", m(4, VAR0.to_vec()));
        let a = resource(&rm, "accum", m(4, ACC0.to_vec()));
        let mut inputs = vec![v.clone(), a.clone()];
        inputs.extend(args(vec![2, 0, 2]));
        run(&rm, "ResourceSparseApplyAdagrad", &attrs(DataType::Int64), inputs, 0).unwrap();
        close(&read(&rm, &v, DataType::Float), &want_var);
        close(&read(&rm, &a, DataType::Float), &want_acc);
        // Reference form.
        let (rv, r1) = reference(m(4, VAR0.to_vec()));
        let (ra, r2) = reference(m(4, ACC0.to_vec()));
        let mut inputs = vec![r1, r2];
        inputs.extend(args(vec![2, 0, 2]));
        let out = run(&rm, "SparseApplyAdagrad", &attrs(DataType::Int64), inputs, 1).unwrap();
        assert!(matches!(&out[0], Value::Ref(x) if Arc::ptr_eq(x, &rv)));
        close(&rv.value.read().unwrap().clone().unwrap(), &want_var);
        close(&ra.value.read().unwrap().clone().unwrap(), &want_acc);
        // Out-of-range index and a gradient of the wrong shape.
        let mut inputs = vec![v.clone(), a.clone()];
        inputs.extend(args(vec![4]));
        let e = run(&rm, "ResourceSparseApplyAdagrad", &attrs(DataType::Int64), inputs, 0).err().unwrap();
        assert!(e.message.contains("Index 4 at offset 0 in indices is out of range [0, 4)"), "{e}");
        let mut inputs = vec![v.clone(), a.clone()];
        inputs.extend(args(vec![1, 2]));
        inputs[3] = Value::Tensor(m(1, GRAD[..3].to_vec()));
        let e = run(&rm, "ResourceSparseApplyAdagrad", &attrs(DataType::Int64), inputs, 0).err().unwrap();
        assert!(
            e.message.contains("grad must be the slices of var at indices: shape [2,3] expected, got [1,3]"),
            "{e}"
        );
    }
}
