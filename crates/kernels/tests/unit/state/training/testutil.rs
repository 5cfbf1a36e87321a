//! Tests of the apply kernels: TensorFlow 2.21's numbers (`golden.json`, written by
//! `scripts/golden/training.py`) for both the ref and the resource form, the parallel path,
//! and the error cases.

use std::sync::Arc;

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, ResourceHandle, Shape, Status, Storage, Tensor};
use serde_json::Value as J;

use ferroflow_kernels::testutil::{node, run_kernel_values, test_step};
use ferroflow_kernels::{ResourceMgr, Value, Var};

fn node_for(op: &str, dtype: DataType, attrs: &[(&str, AttrValue)]) -> ferroflow_core::proto::NodeDef {
    let mut all = vec![("T", attr::ty(dtype)), ("use_locking", attr::bool(false))];
    all.extend(attrs.iter().cloned());
    node(op, &all)
}

fn var_of(name: &str, t: &Tensor) -> Arc<Var> {
    let v = Arc::new(Var::new(name, t.dtype()));
    v.assign(t.clone()).unwrap();
    v
}

/// Runs the ref form `op`; returns the slot values after it (checking the output ref).
pub fn run_ref(
    op: &str,
    attrs: &[(&str, AttrValue)],
    slots: &[Tensor],
    args: &[Tensor],
) -> Result<Vec<Tensor>, Status> {
    let vars: Vec<Arc<Var>> = slots.iter().enumerate().map(|(i, t)| var_of(&format!("slot{i}"), t)).collect();
    let mut inputs: Vec<Value> = vars.iter().map(|v| Value::Ref(v.clone())).collect();
    inputs.extend(args.iter().map(|t| Value::Tensor(t.clone())));
    let out = run_kernel_values(node_for(op, slots[0].dtype(), attrs), inputs, 1, Arc::new(ResourceMgr::new()))?;
    match &out[0] {
        Value::Ref(v) => assert!(Arc::ptr_eq(v, &vars[0]), "{op} must output its var"),
        Value::Tensor(_) => panic!("{op} must output a ref"),
    }
    vars.iter().map(|v| v.read()).collect()
}

/// A handle to `localhost/name` on the test device.
pub fn handle(name: &str) -> Tensor {
    Tensor::scalar(ResourceHandle {
        device: test_step(Arc::new(ResourceMgr::new())).device.clone(),
        container: "localhost".into(),
        name: name.into(),
        ..Default::default()
    })
}

/// Runs `Resource<op>` on variables created in a fresh resource manager; returns the slot
/// values after it.
pub fn run_resource(
    op: &str,
    attrs: &[(&str, AttrValue)],
    slots: &[Tensor],
    args: &[Tensor],
) -> Result<Vec<Tensor>, Status> {
    let rm = Arc::new(ResourceMgr::new());
    let mut inputs = Vec::new();
    for (i, t) in slots.iter().enumerate() {
        let name = format!("slot{i}");
        rm.lookup_or_create("", &name, || Ok(Var::new(&name, t.dtype())))?.assign(t.clone())?;
        inputs.push(Value::Tensor(handle(&name)));
    }
    inputs.extend(args.iter().map(|t| Value::Tensor(t.clone())));
    let out = run_kernel_values(node_for(&format!("Resource{op}"), slots[0].dtype(), attrs), inputs, 0, rm.clone())?;
    assert!(out.is_empty());
    (0..slots.len()).map(|i| rm.lookup::<Var>("", &format!("slot{i}"))?.read()).collect()
}

fn tensor(j: &J) -> Tensor {
    let shape: Vec<usize> = j["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = j["data"].as_array().unwrap();
    let storage = match j["dtype"].as_str().unwrap() {
        "float32" => Storage::F32(data.iter().map(|v| v.as_f64().unwrap() as f32).collect()),
        "float64" => Storage::F64(data.iter().map(|v| v.as_f64().unwrap()).collect()),
        "int64" => Storage::I64(data.iter().map(|v| v.as_i64().unwrap()).collect()),
        d => panic!("unexpected dtype {d}"),
    };
    Tensor::from_storage(Shape(shape), storage).unwrap()
}

fn close(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let rtol = if got.dtype() == DataType::Float { 2e-6 } else { 1e-13 };
    for (k, (g, w)) in got.to_f64_vec().unwrap().iter().zip(want.to_f64_vec().unwrap()).enumerate() {
        assert!((g - w).abs() <= rtol * w.abs().max(1e-3), "{what}[{k}]: {g} but TensorFlow gives {w}");
    }
}

/// (name, op, attrs, slots, args, want); a sparse op's args include its indices (after the
/// gradient) and its attrs `Tindices`.
type Case = (String, String, Vec<(String, AttrValue)>, Vec<Tensor>, Vec<Tensor>, Vec<Tensor>);

/// The indices of a sparse case and their dtype.
fn indices(j: &J) -> (Tensor, DataType) {
    let data: Vec<i64> = j["data"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    match j["dtype"].as_str().unwrap() {
        "int32" => (Tensor::vec(data.iter().map(|&v| v as i32).collect::<Vec<_>>()), DataType::Int32),
        _ => (Tensor::vec(data), DataType::Int64),
    }
}

fn golden_cases() -> Vec<Case> {
    let j: J = serde_json::from_str(include_str!("golden.json")).unwrap();
    j["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut attrs: Vec<(String, AttrValue)> = c["attrs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), attr::bool(v.as_bool().unwrap())))
                .collect();
            let ts = |k: &str| c[k].as_array().unwrap().iter().map(tensor).collect::<Vec<_>>();
            let mut args = ts("args");
            if !c["indices"].is_null() {
                let (ix, ty) = indices(&c["indices"]);
                let grad = args.iter().position(|t| t.rank() > 0).unwrap();
                args.insert(grad + 1, ix);
                attrs.push(("Tindices".into(), attr::ty(ty)));
            }
            (
                c["name"].as_str().unwrap().to_string(),
                c["op"].as_str().unwrap().to_string(),
                attrs,
                ts("slots"),
                args,
                ts("want"),
            )
        })
        .collect()
}

#[test]
fn apply_ops_match_tensorflow() {
    let cases = golden_cases();
    assert_eq!(cases.len(), 104);
    assert_eq!(cases.iter().filter(|c| c.1.starts_with("Sparse")).count(), 44);
    // tf_keras's optimizers have only the resource form.
    let resource_only = ["ApplyKerasMomentum", "SparseApplyKerasMomentum", "ApplyAdamWithAmsgrad"];
    for (name, op, attrs, slots, args, want) in cases {
        let attrs: Vec<(&str, AttrValue)> = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let by_res = run_resource(&op, &attrs, &slots, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (i, w) in want.iter().enumerate() {
            close(&by_res[i], w, &format!("{name} (resource) slot {i}"));
        }
        if resource_only.contains(&op.as_str()) {
            let e = run_ref(&op, &attrs, &slots, &args).unwrap_err();
            assert_eq!(e.code, Code::NotFound, "{name}: {e}");
            continue;
        }
        let by_ref = run_ref(&op, &attrs, &slots, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (i, w) in want.iter().enumerate() {
            close(&by_ref[i], w, &format!("{name} (ref) slot {i}"));
        }
    }
}

fn tile(t: &Tensor, times: usize) -> Tensor {
    let v = t.to_f64_vec().unwrap();
    let n = v.len() * times;
    match t.dtype() {
        DataType::Float => Tensor::vec((0..n).map(|i| v[i % v.len()] as f32).collect::<Vec<_>>()),
        _ => Tensor::vec((0..n).map(|i| v[i % v.len()]).collect::<Vec<_>>()),
    }
}

#[test]
fn large_updates_run_in_parallel_with_the_same_results() {
    let times = 100_000 / 12 + 1;
    for (name, op, attrs, slots, args, want) in golden_cases().into_iter().filter(|c| {
        ["ApplyAdam", "ApplyMomentum", "ApplyCenteredRMSProp", "ApplyFtrl", "ApplyAdamWithAmsgrad", "ApplyAddSign"]
            .contains(&c.1.as_str())
    }) {
        let attrs: Vec<(&str, AttrValue)> = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let big: Vec<Tensor> = slots.iter().map(|t| tile(t, times)).collect();
        let mut big_args = args.clone();
        let g = args.iter().position(|t| t.rank() > 0).unwrap();
        big_args[g] = tile(&args[g], times);
        let out = run_resource(&op, &attrs, &big, &big_args).unwrap();
        for (i, w) in want.iter().enumerate() {
            close(&out[i], &tile(w, times), &format!("{name} (large) slot {i}"));
        }
    }
}

#[test]
fn errors_name_the_problem() {
    let s = |v: f32| Tensor::scalar(v);
    let var = Tensor::vec(vec![1.0f32, 2.0]);
    // Shape mismatch between var and gradient.
    let e = run_ref("ApplyGradientDescent", &[], std::slice::from_ref(&var), &[s(0.1), Tensor::vec(vec![1.0f32; 3])])
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("var and delta do not have the same shape[2] [3]"), "{e}");
    let e = run_resource(
        "ApplyMomentum",
        &[("use_nesterov", attr::bool(false))],
        &[var.clone(), Tensor::vec(vec![0f32; 3])],
        &[s(0.1), var.clone(), s(0.9)],
    )
    .unwrap_err();
    assert!(e.message.contains("var and accum do not have the same shape[2] [3]"), "{e}");
    // Non-scalar hyper-parameter.
    let e = run_ref("ApplyGradientDescent", &[], std::slice::from_ref(&var), &[Tensor::vec(vec![0.1f32]), var.clone()])
        .unwrap_err();
    assert!(e.message.contains("alpha is not a scalar: [1]"), "{e}");
    // Wrong dtype for a hyper-parameter.
    let e = run_ref("ApplyGradientDescent", &[], std::slice::from_ref(&var), &[Tensor::scalar(0.1f64), var.clone()])
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    // Uninitialized ref variable.
    let v = Arc::new(Var::new("w", DataType::Float));
    let n = node_for("ApplyGradientDescent", DataType::Float, &[]);
    let e = run_kernel_values(
        n,
        vec![Value::Ref(v), Value::Tensor(s(0.1)), Value::Tensor(var.clone())],
        1,
        Arc::new(ResourceMgr::new()),
    )
    .err()
    .unwrap();
    assert_eq!(e.code, Code::FailedPrecondition);
    assert!(e.message.contains("Attempting to use uninitialized value w"), "{e}");
    // Missing resource variable.
    let n = node_for("ResourceApplyGradientDescent", DataType::Float, &[]);
    let e = run_kernel_values(
        n,
        vec![Value::Tensor(handle("nope")), Value::Tensor(s(0.1)), Value::Tensor(var.clone())],
        0,
        Arc::new(ResourceMgr::new()),
    )
    .err()
    .unwrap();
    assert_eq!(e.code, Code::FailedPrecondition);
    assert!(e.message.contains("Could not find variable nope"), "{e}");
    // The same variable as var and slot.
    let w = var_of("w", &var);
    let n = node_for("ApplyMomentum", DataType::Float, &[("use_nesterov", attr::bool(false))]);
    let inputs = vec![
        Value::Ref(w.clone()),
        Value::Ref(w),
        Value::Tensor(s(0.1)),
        Value::Tensor(var.clone()),
        Value::Tensor(s(0.9)),
    ];
    let e = run_kernel_values(n, inputs, 1, Arc::new(ResourceMgr::new())).err().unwrap();
    assert!(e.message.contains("same variable"), "{e}");
    // Unsupported T.
    assert_eq!(
        ferroflow_kernels::create_kernel(&node_for(
            "ApplyAdam",
            DataType::Int32,
            &[("use_nesterov", attr::bool(false))]
        ))
        .err()
        .unwrap()
        .code,
        Code::Unimplemented
    );
}

#[test]
fn ftrl_and_sparse_errors_name_the_problem() {
    let s = |v: f32| Tensor::scalar(v);
    let m = Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let by_lr = [("multiply_linear_by_lr", attr::bool(false))];
    let slots = [m.clone(), m.clone(), m.clone()];
    // FTRL checks its hyper-parameters as TensorFlow does.
    for (args, want) in [
        ([s(0.1), s(0.0), s(0.0), s(0.5)], "lr_power is not a non-positive scalar"),
        ([s(0.0), s(0.0), s(0.0), s(-0.5)], "lr is not a positive scalar"),
        ([s(0.1), s(-1.0), s(0.0), s(-0.5)], "l1 regularization strength is not a non-negative scalar"),
    ] {
        let mut all = vec![m.clone()];
        all.extend(args);
        let e = run_resource("ApplyFtrl", &by_lr, &slots, &all).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains(want), "{e}");
    }
    // ProximalAdagrad's rate must be positive; AdagradDA's step must be an int64 scalar.
    let e = run_resource("ApplyProximalAdagrad", &[], &[m.clone(), m.clone()], &[s(0.0), s(0.0), s(0.0), m.clone()])
        .unwrap_err();
    assert!(e.message.contains("lr is not a positive scalar"), "{e}");
    let da = |step: Tensor| run_resource("ApplyAdagradDA", &[], &slots, &[m.clone(), s(0.1), s(0.0), s(0.0), step]);
    let e = da(s(3.0)).unwrap_err();
    assert!(e.message.contains("global_step is not an int64 scalar: float"), "{e}");
    let e = da(Tensor::vec(vec![3i64])).unwrap_err();
    assert!(e.message.contains("global_step is not an int64 scalar: int64 [1]"), "{e}");
    assert!(da(Tensor::scalar(3i64)).is_ok());
    let sparse = |ix: Tensor, grad: Tensor| {
        run_resource(
            "SparseApplyMomentum",
            &[("use_nesterov", attr::bool(false)), ("Tindices", attr::ty(ix.dtype()))],
            &[m.clone(), m.clone()],
            &[s(0.1), grad, ix, s(0.9)],
        )
    };
    // Indices out of range, not a vector, or not matching the gradient's rows.
    let row = Tensor::new(vec![1, 2], vec![1.0f32, 1.0]).unwrap();
    let e = sparse(Tensor::vec(vec![2i32]), row.clone()).unwrap_err();
    assert!(e.message.contains("Index 2 at offset 0 in indices is out of range [0, 2)"), "{e}");
    let e = sparse(Tensor::new(vec![1, 1], vec![0i64]).unwrap(), row.clone()).unwrap_err();
    assert!(e.message.contains("indices must be one-dimensional"), "{e}");
    let e = sparse(Tensor::vec(vec![0i64, 1]), row.clone()).unwrap_err();
    assert!(e.message.contains("grad must be the slices of var at indices: shape [2,2] expected, got [1,2]"), "{e}");
    // Only the named rows change; the repeated row is updated twice.
    let out = sparse(Tensor::vec(vec![1i64, 1]), Tensor::new(vec![2, 2], vec![1.0f32; 4]).unwrap()).unwrap();
    let (var, accum) = (out[0].as_slice::<f32>().unwrap(), out[1].as_slice::<f32>().unwrap());
    assert_eq!(&var[..2], &[1.0, 2.0]);
    // accum: 3 -> 3.7 -> 4.33; var: 3 - 0.37 - 0.433.
    assert!((accum[2] - 4.33).abs() < 1e-5 && (var[2] - (3.0 - 0.37 - 0.433)).abs() < 1e-5, "{var:?} {accum:?}");
}

#[test]
fn readers_keep_their_snapshot() {
    let rm = Arc::new(ResourceMgr::new());
    let v = rm.lookup_or_create("", "w", || Ok(Var::new("w", DataType::Float))).unwrap();
    v.assign(Tensor::vec(vec![1.0f32, 2.0])).unwrap();
    let snapshot = v.read().unwrap();
    let n = node_for("ResourceApplyGradientDescent", DataType::Float, &[]);
    let inputs = vec![
        Value::Tensor(handle("w")),
        Value::Tensor(Tensor::scalar(1.0f32)),
        Value::Tensor(Tensor::vec(vec![1.0f32, 1.0])),
    ];
    run_kernel_values(n, inputs, 0, rm).unwrap();
    assert_eq!(snapshot.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    assert_eq!(v.read().unwrap().as_slice::<f32>().unwrap(), &[0.0, 1.0]);
}

/// A variable whose buffer a reader still holds is updated into a new buffer (copied part
/// by part as the update goes); the result is bit for bit the in-place update's, for a
/// one-slot and a three-slot optimizer, small and parallel sizes, and the reader's
/// snapshot is untouched.
#[test]
fn shared_and_unshared_variables_update_alike() {
    for n in [7usize, 100_003] {
        let val = |k: usize| (0..n).map(|i| ((i * 37 + k) % 101) as f32 / 7.0 - 5.0).collect::<Vec<f32>>();
        let s = |v: f32| Value::Tensor(Tensor::scalar(v));
        let adam_attrs = [("use_nesterov", attr::bool(false))];
        for (op, slots, scalars, attrs) in [
            ("ResourceApplyGradientDescent", 1, vec![s(0.37)], &[][..]),
            ("ResourceApplyAdam", 3, vec![s(0.9), s(0.99), s(0.01), s(0.9), s(0.999), s(1e-7)], &adam_attrs[..]),
        ] {
            let mut results = Vec::new();
            for shared in [false, true] {
                let rm = Arc::new(ResourceMgr::new());
                let mut held = Vec::new();
                let mut inputs = Vec::new();
                for k in 0..slots {
                    let name = format!("slot{k}");
                    let mut init = val(k);
                    if k > 0 {
                        init.iter_mut().for_each(|x| *x = x.abs());
                    }
                    let t = Tensor::vec(init.clone());
                    if shared {
                        held.push((t.clone(), init));
                    }
                    rm.lookup_or_create("", &name, || Ok(Var::new(&name, DataType::Float))).unwrap().assign(t).unwrap();
                    inputs.push(Value::Tensor(handle(&name)));
                }
                let mut args = scalars.clone();
                args.push(Value::Tensor(Tensor::vec(val(5))));
                inputs.extend(args);
                run_kernel_values(node_for(op, DataType::Float, attrs), inputs, 0, rm.clone()).unwrap();
                for (t, init) in &held {
                    assert_eq!(t.as_slice::<f32>().unwrap(), &init[..], "{op}: a reader's snapshot changed");
                }
                let out: Vec<Vec<u32>> = (0..slots)
                    .map(|k| {
                        let t = rm.lookup::<Var>("", &format!("slot{k}")).unwrap().read().unwrap();
                        t.as_slice::<f32>().unwrap().iter().map(|x| x.to_bits()).collect()
                    })
                    .collect();
                results.push(out);
            }
            assert_eq!(results[0], results[1], "{op} n = {n}: the shared variable's update differs");
            assert_ne!(results[0][0], val(0).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{op}: no update");
        }
    }
}
