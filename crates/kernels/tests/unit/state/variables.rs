//! Variable kernels run in sequence over one shared resource manager, as a step would.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, DataType, ResourceHandle, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel_values};
use ferroflow_kernels::{ResourceMgr, Value, Var};

use super::run;

fn named(mut n: NodeDef, name: &str) -> NodeDef {
    n.name = name.into();
    n
}

fn var_handle(rm: &Arc<ResourceMgr>, name: &str, shared: &str, dtype: DataType) -> Tensor {
    let n = node(
        "VarHandleOp",
        &[
            ("container", attr::string("")),
            ("shared_name", attr::string(shared)),
            ("debug_name", attr::string("")),
            ("dtype", attr::ty(dtype)),
            ("shape", attr::shape(Some(&[2]))),
            ("allowed_devices", attr::list_string::<&str>(&[])),
        ],
    );
    let out = run_kernel_values(named(n, name), vec![], 1, rm.clone()).unwrap();
    out[0].tensor().unwrap()
}

fn read(rm: &Arc<ResourceMgr>, h: &Tensor, dtype: DataType) -> Result<Tensor, Status> {
    run(rm, "ReadVariableOp", &[("dtype", attr::ty(dtype))], vec![h.clone()], 1).and_then(|v| v[0].tensor())
}

fn assign(rm: &Arc<ResourceMgr>, h: &Tensor, v: Tensor, validate: bool) -> Result<(), Status> {
    let attrs = [("dtype", attr::ty(v.dtype())), ("validate_shape", attr::bool(validate))];
    run(rm, "AssignVariableOp", &attrs, vec![h.clone(), v], 0).map(|_| ())
}

#[test]
fn resource_variable_lifecycle() {
    let rm = Arc::new(ResourceMgr::new());
    let h = var_handle(&rm, "w", "", DataType::Float);
    let hv = h.scalar_value::<ResourceHandle>().unwrap();
    assert_eq!((hv.container.as_str(), hv.name.as_str()), ("localhost", "w"));
    assert_eq!(hv.device, "/job:localhost/replica:0/task:0/device:CPU:0");
    assert_eq!(hv.maybe_type_name, "N10tensorflow3VarE");
    assert_eq!(hv.dtypes_and_shapes, vec![(DataType::Float.as_i32(), vec![2])]);
    let is_init =
        |rm: &Arc<ResourceMgr>| run(rm, "VarIsInitializedOp", &[], vec![h.clone()], 1).unwrap()[0].tensor().unwrap();
    assert_eq!(is_init(&rm), Tensor::scalar(false));

    let e = read(&rm, &h, DataType::Float).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition);
    assert!(e.message.contains("Could not find variable w"), "{e}");

    assign(&rm, &h, Tensor::vec(vec![1.0f32, 2.0]), false).unwrap();
    assert_eq!(is_init(&rm), Tensor::scalar(true));
    let before = read(&rm, &h, DataType::Float).unwrap();
    assert_eq!(before.as_slice::<f32>().unwrap(), &[1.0, 2.0]);

    let add = |op: &str, v: Tensor| run(&rm, op, &[("dtype", attr::ty(v.dtype()))], vec![h.clone(), v], 0);
    add("AssignAddVariableOp", Tensor::vec(vec![10.0f32, 20.0])).unwrap();
    add("AssignSubVariableOp", Tensor::vec(vec![1.0f32, 1.0])).unwrap();
    assert_eq!(read(&rm, &h, DataType::Float).unwrap().as_slice::<f32>().unwrap(), &[10.0, 21.0]);
    // The earlier read is a snapshot.
    assert_eq!(before.as_slice::<f32>().unwrap(), &[1.0, 2.0]);

    let e = add("AssignAddVariableOp", Tensor::vec(vec![1.0f32; 3])).unwrap_err();
    assert!(e.message.contains("Cannot update variable with shape [2] using a Tensor with shape [3]"), "{e}");
    let e = add("AssignAddVariableOp", Tensor::vec(vec![1i32, 1])).unwrap_err();
    assert!(e.message.contains("DType of variable handle and value does not match."), "{e}");

    // Shapes: validate_shape=false replaces, validate_shape=true refuses.
    let e = assign(&rm, &h, Tensor::vec(vec![1.0f32; 3]), true).unwrap_err();
    assert!(
        e.message.contains("Trying to assign to variable with tensor with wrong shape. Expected [2] got [3]"),
        "{e}"
    );
    assign(&rm, &h, Tensor::vec(vec![5.0f32; 3]), false).unwrap();
    assert_eq!(read(&rm, &h, DataType::Float).unwrap().dims(), &[3]);

    // Dtypes.
    let e = assign(&rm, &h, Tensor::vec(vec![1i32, 2]), false).unwrap_err();
    assert!(e.message.contains("Trying to assign variable with wrong dtype. Expected float got int32"), "{e}");
    let e = read(&rm, &h, DataType::Double).unwrap_err();
    assert!(e.message.contains("Trying to read variable with wrong dtype. Expected double got float"), "{e}");
    let e = run(
        &rm,
        "AssignVariableOp",
        &[("dtype", attr::ty(DataType::Double)), ("validate_shape", attr::bool(false))],
        vec![h.clone(), Tensor::vec(vec![1.0f32])],
        0,
    )
    .unwrap_err();
    assert!(e.message.contains("Variable and value dtypes don't match; respectively, double and float"), "{e}");

    // A handle with the same shared name names the same variable.
    let h2 = var_handle(&rm, "other", "w", DataType::Float);
    assert_eq!(read(&rm, &h2, DataType::Float).unwrap().as_slice::<f32>().unwrap(), &[5.0; 3]);

    // Destroy.
    let destroy = |ignore: bool| {
        run(&rm, "DestroyResourceOp", &[("ignore_lookup_error", attr::bool(ignore))], vec![h.clone()], 0)
    };
    destroy(false).unwrap();
    assert_eq!(destroy(false).unwrap_err().code, Code::NotFound);
    destroy(true).unwrap();
    assert_eq!(is_init(&rm), Tensor::scalar(false));
    let e = add("AssignAddVariableOp", Tensor::vec(vec![1.0f32; 3])).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
}

#[test]
fn handles_from_other_devices_and_bad_inputs_are_refused() {
    let rm = Arc::new(ResourceMgr::new());
    let h = Tensor::scalar(ResourceHandle {
        device: "/job:ps/replica:0/task:0/device:CPU:0".into(),
        container: "localhost".into(),
        name: "w".into(),
        ..Default::default()
    });
    let e = read(&rm, &h, DataType::Float).unwrap_err();
    assert!(e.message.contains("Trying to access resource w located in device /job:ps"), "{e}");
    let e = read(&rm, &Tensor::scalar(1.0f32), DataType::Float).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

fn ref_var(rm: &Arc<ResourceMgr>, name: &str, dtype: DataType) -> Arc<Var> {
    let n = node(
        "VariableV2",
        &[
            ("shape", attr::shape(Some(&[2]))),
            ("dtype", attr::ty(dtype)),
            ("container", attr::string("")),
            ("shared_name", attr::string("")),
        ],
    );
    match run_kernel_values(named(n, name), vec![], 1, rm.clone()).unwrap().remove(0) {
        Value::Ref(v) => v,
        Value::Tensor(_) => panic!("VariableV2 must output a ref"),
    }
}

fn run_ref(
    rm: &Arc<ResourceMgr>,
    op: &str,
    attrs: &[(&str, ferroflow_core::proto::AttrValue)],
    var: &Arc<Var>,
    value: Tensor,
) -> Result<Arc<Var>, Status> {
    let out = run(rm, op, attrs, vec![Value::Ref(var.clone()), Value::Tensor(value)], 1)?;
    match &out[0] {
        Value::Ref(v) => Ok(v.clone()),
        Value::Tensor(_) => panic!("{op} must output a ref"),
    }
}

#[test]
fn ref_variable_lifecycle() {
    let rm = Arc::new(ResourceMgr::new());
    let w = ref_var(&rm, "w", DataType::Float);
    assert!(Arc::ptr_eq(&w, &ref_var(&rm, "w", DataType::Float)), "one variable per name");
    assert_eq!(rm.variables().len(), 1);
    let init = |w: &Arc<Var>| {
        let n = node("IsVariableInitialized", &[("dtype", attr::ty(DataType::Float))]);
        run_kernel_values(n, vec![Value::Ref(w.clone())], 1, rm.clone()).unwrap()[0].tensor().unwrap()
    };
    assert_eq!(init(&w), Tensor::scalar(false));
    let t = [("T", attr::ty(DataType::Float)), ("use_locking", attr::bool(false))];
    let e = run_ref(&rm, "AssignAdd", &t, &w, Tensor::vec(vec![1.0f32, 1.0])).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition);
    assert!(e.message.contains("Attempting to use uninitialized value w"), "{e}");
    let e = Value::Ref(w.clone()).tensor().unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition);

    let a = [("T", attr::ty(DataType::Float)), ("validate_shape", attr::bool(true)), ("use_locking", attr::bool(true))];
    let out = run_ref(&rm, "Assign", &a, &w, Tensor::vec(vec![1.0f32, 2.0])).unwrap();
    assert!(Arc::ptr_eq(&out, &w));
    assert_eq!(init(&w), Tensor::scalar(true));
    let e = run_ref(&rm, "Assign", &a, &w, Tensor::vec(vec![1.0f32; 3])).unwrap_err();
    assert!(
        e.message.contains("Assign requires shapes of both tensors to match. lhs shape= [2] rhs shape= [3]"),
        "{e}"
    );
    run_ref(&rm, "AssignAdd", &t, &w, Tensor::vec(vec![1.0f32, 1.0])).unwrap();
    run_ref(&rm, "AssignSub", &t, &w, Tensor::vec(vec![0.5f32, 0.5])).unwrap();
    assert_eq!(w.read().unwrap().as_slice::<f32>().unwrap(), &[1.5, 2.5]);
    let e = run_ref(&rm, "AssignSub", &t, &w, Tensor::vec(vec![0.5f32])).unwrap_err();
    assert!(e.message.contains("Parameters and update must be the same size"), "{e}");
    let e = run_ref(&rm, "Assign", &a, &w, Tensor::vec(vec![1i32, 2])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);

    let no_validate =
        [("T", attr::ty(DataType::Float)), ("validate_shape", attr::bool(false)), ("use_locking", attr::bool(true))];
    run_ref(&rm, "Assign", &no_validate, &w, Tensor::vec(vec![7.0f32; 3])).unwrap();
    assert_eq!(w.read().unwrap().as_slice::<f32>().unwrap(), &[7.0; 3]);

    // A ref op fed a plain tensor is refused.
    let n = node("AssignAdd", &t);
    let e = run_kernel_values(
        n,
        vec![Value::Tensor(Tensor::vec(vec![1.0f32])), Value::Tensor(Tensor::vec(vec![1.0f32]))],
        1,
        rm.clone(),
    )
    .err()
    .unwrap();
    assert!(e.message.contains("must be a reference"), "{e}");
}

#[test]
fn reference_and_resource_variables_of_one_name_are_apart() {
    // As in TensorFlow (LegacyVar and Var): a graph with ref variables and one with
    // resource variables of the same names can share a server.
    let rm = Arc::new(ResourceMgr::new());
    let r = ref_var(&rm, "w", DataType::Float);
    *r.value.write().unwrap() = Some(Tensor::vec(vec![1.0f32; 3]));
    let h = var_handle(&rm, "w", "", DataType::Float);
    assign(&rm, &h, Tensor::vec(vec![2.0f32, 2.0]), true).unwrap();
    assert_eq!(read(&rm, &h, DataType::Float).unwrap(), Tensor::vec(vec![2.0f32, 2.0]));
    assert_eq!(r.value.read().unwrap().clone().unwrap(), Tensor::vec(vec![1.0f32; 3]));
    assert!(Arc::ptr_eq(&r, &ref_var(&rm, "w", DataType::Float)));
}
