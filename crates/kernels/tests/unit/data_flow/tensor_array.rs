//! The TensorArray and stack kernels driven directly within one step: reads, writes,
//! gradient arrays (shared by source, aggregating, zeros for elements never written back),
//! TensorFlow's errors, bounds on remote sizes, and per-step lifetime.

use std::sync::Arc;

use ferroflow_core::proto::{AttrValue, NodeDef};
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::data_flow::tensor_array::{TensorArray, TensorArrayOptions};
use ferroflow_kernels::testutil::{node, test_step};
use ferroflow_kernels::{create_kernel, OpContext, ResourceMgr, StepCtx, Value};

fn run(step: &Arc<StepCtx>, n: NodeDef, inputs: Vec<Tensor>, outs: usize) -> Result<Vec<Tensor>, Status> {
    let k = create_kernel(&n)?;
    let mut ctx = OpContext::new(Arc::new(n), inputs.into_iter().map(Value::Tensor).collect(), outs, step.clone());
    k.compute(&mut ctx)?;
    ctx.take_outputs()?.into_iter().map(|v| v.tensor()).collect()
}

fn create_attrs(dynamic: bool, clear: bool, shape: Option<&[i64]>) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("dtype", attr::ty(DataType::Float)),
        ("element_shape", attr::shape(shape)),
        ("dynamic_size", attr::bool(dynamic)),
        ("clear_after_read", attr::bool(clear)),
        ("identical_element_shapes", attr::bool(true)),
        ("tensor_array_name", attr::string("")),
    ]
}

fn new_array(step: &Arc<StepCtx>, size: i32, dynamic: bool, clear: bool, shape: Option<&[i64]>) -> (Tensor, Tensor) {
    let mut o =
        run(step, node("TensorArrayV3", &create_attrs(dynamic, clear, shape)), vec![Tensor::scalar(size)], 2).unwrap();
    let flow = o.pop().unwrap();
    (o.pop().unwrap(), flow)
}

fn write(step: &Arc<StepCtx>, h: &Tensor, i: i32, v: Tensor) -> Result<Vec<Tensor>, Status> {
    let n = node("TensorArrayWriteV3", &[("T", attr::ty(v.dtype()))]);
    run(step, n, vec![h.clone(), Tensor::scalar(i), v, Tensor::scalar(0f32)], 1)
}

fn read(step: &Arc<StepCtx>, h: &Tensor, i: i32) -> Result<Tensor, Status> {
    let n = node("TensorArrayReadV3", &[("dtype", attr::ty(DataType::Float))]);
    run(step, n, vec![h.clone(), Tensor::scalar(i), Tensor::scalar(0f32)], 1).map(|mut v| v.remove(0))
}

fn grad(step: &Arc<StepCtx>, h: &Tensor, source: &str) -> Tensor {
    let n = node("TensorArrayGradV3", &[("source", attr::string(source))]);
    run(step, n, vec![h.clone(), Tensor::scalar(0f32)], 2).unwrap().remove(0)
}

#[test]
fn write_read_and_errors() {
    let step = test_step(Arc::new(ResourceMgr::new()));
    let (h, flow) = new_array(&step, 2, false, true, None);
    assert_eq!(flow.scalar_value::<f32>().unwrap(), 0.0);
    write(&step, &h, 0, Tensor::vec(vec![1.0f32, 2.0])).unwrap();
    assert_eq!(read(&step, &h, 0).unwrap().as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    let again = read(&step, &h, 0).unwrap_err();
    assert!(again.message.contains("twice because it was cleared"), "{again}");
    let twice = write(&step, &h, 0, Tensor::vec(vec![1.0f32, 2.0])).unwrap_err();
    assert!(twice.message.contains("because it has already been read"), "{twice}");
    let past = write(&step, &h, 2, Tensor::vec(vec![1.0f32, 2.0])).unwrap_err();
    assert!(past.message.contains("Tried to write to index 2 but array is not resizeable and size is: 2"), "{past}");
    let shape = write(&step, &h, 1, Tensor::vec(vec![1.0f32])).unwrap_err();
    assert!(shape.message.contains("inferred element shape: [2]"), "{shape}");
    let dtype = write(&step, &h, 1, Tensor::vec(vec![1i32, 2])).unwrap_err();
    assert!(dtype.message.contains("TensorArray dtype is float but Op is trying to write dtype int32"), "{dtype}");
    // Never written, but the inferred shape [2] is fully defined: zeros.
    assert_eq!(read(&step, &h, 1).unwrap().as_slice::<f32>().unwrap(), &[0.0, 0.0]);
    let e = read(&step, &h, -1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    // A TensorArray lives for one step only.
    let other = test_step(step.resources.clone());
    assert_eq!(read(&other, &h, 0).unwrap_err().code, Code::NotFound);
}

#[test]
fn gradient_arrays_share_by_source_and_aggregate() {
    let step = test_step(Arc::new(ResourceMgr::new()));
    let (h, _) = new_array(&step, 3, true, false, None);
    write(&step, &h, 0, Tensor::vec(vec![1.0f32, 1.0])).unwrap();
    write(&step, &h, 2, Tensor::vec(vec![1.0f32, 1.0])).unwrap();
    let g1 = grad(&step, &h, "gradients");
    let g2 = grad(&step, &h, "gradients");
    write(&step, &g1, 0, Tensor::vec(vec![1.0f32, 2.0])).unwrap();
    write(&step, &g2, 0, Tensor::vec(vec![0.5f32, 0.5])).unwrap();
    assert_eq!(read(&step, &g1, 0).unwrap().as_slice::<f32>().unwrap(), &[1.5, 2.5]);
    // Element 2 was written forward but got no gradient: zeros of its shape.
    assert_eq!(read(&step, &g1, 2).unwrap().as_slice::<f32>().unwrap(), &[0.0, 0.0]);
    let n = node("TensorArraySizeV3", &[]);
    let size = run(&step, n, vec![g1.clone(), Tensor::scalar(0f32)], 1).unwrap().remove(0);
    assert_eq!(size.scalar_value::<i32>().unwrap(), 3);
    // The forward array is no longer resizeable once it has a gradient.
    let e = write(&step, &h, 5, Tensor::vec(vec![1.0f32, 1.0])).unwrap_err();
    assert!(e.message.contains("not resizeable"), "{e}");
    let other = grad(&step, &h, "gradients_1");
    assert_ne!(
        other.as_slice::<ferroflow_core::ResourceHandle>().unwrap()[0].name,
        g1.as_slice::<ferroflow_core::ResourceHandle>().unwrap()[0].name
    );
    // Shapes behind a prefix (TensorArrayGradWithShape).
    let n = node("TensorArrayGradWithShape", &[("source", attr::string("g"))]);
    let gs = run(&step, n, vec![h.clone(), Tensor::scalar(0f32), Tensor::vec(vec![3i32])], 2).unwrap().remove(0);
    assert_eq!(read(&step, &gs, 0).unwrap().dims(), &[3, 2]);
}

#[test]
fn bounds_on_remote_sizes() {
    let step = test_step(Arc::new(ResourceMgr::new()));
    let e = run(&step, node("TensorArrayV3", &create_attrs(false, true, None)), vec![Tensor::scalar(-1i32)], 2)
        .unwrap_err();
    assert!(e.message.contains("Size should be >= 0."), "{e}");
    let (h, _) = new_array(&step, 0, true, true, None);
    let e = write(&step, &h, i32::MAX - 1, Tensor::scalar(1f32)).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    let ta = TensorArray::new(
        "t",
        TensorArrayOptions {
            dtype: DataType::Float,
            size: 1,
            dynamic_size: false,
            multiple_writes_aggregate: false,
            is_grad: false,
            clear_after_read: true,
            identical_element_shapes: false,
            element_shape: Some(vec![1 << 40, 1 << 40]),
        },
    )
    .unwrap();
    assert_eq!(ta.read(0).unwrap_err().code, Code::ResourceExhausted);
    ta.close();
    assert!(ta.size().unwrap_err().message.contains("has already been closed"));
}

#[test]
fn stacks_push_and_pop_in_reverse() {
    let step = test_step(Arc::new(ResourceMgr::new()));
    let attrs = [("elem_type", attr::ty(DataType::Float)), ("stack_name", attr::string(""))];
    let h = run(&step, node("StackV2", &attrs), vec![Tensor::scalar(2i32)], 1).unwrap().remove(0);
    let push = |v: f32| {
        let n = node("StackPushV2", &[("T", attr::ty(DataType::Float)), ("swap_memory", attr::bool(false))]);
        run(&step, n, vec![h.clone(), Tensor::scalar(v)], 1)
    };
    let pop = || run(&step, node("StackPopV2", &[("elem_type", attr::ty(DataType::Float))]), vec![h.clone()], 1);
    assert_eq!(push(1.0).unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
    push(2.0).unwrap();
    assert!(push(3.0).unwrap_err().message.contains("overflowed its max_size (2)"));
    assert_eq!(pop().unwrap()[0].scalar_value::<f32>().unwrap(), 2.0);
    assert_eq!(pop().unwrap()[0].scalar_value::<f32>().unwrap(), 1.0);
    assert!(pop().unwrap_err().message.contains("is empty."));
}

#[test]
fn v1_stacks_take_a_string_handle() {
    let step = test_step(Arc::new(ResourceMgr::new()));
    let attrs = [("elem_type", attr::ty(DataType::Int64)), ("stack_name", attr::string("s"))];
    let h = run(&step, node("Stack", &attrs), vec![], 1).unwrap().remove(0);
    assert_eq!(h.dtype(), DataType::String);
    assert_eq!(h.dims(), [2]);
    let push = |v: i64| {
        let n = node("StackPush", &[("T", attr::ty(DataType::Int64)), ("swap_memory", attr::bool(false))]);
        run(&step, n, vec![h.clone(), Tensor::scalar(v)], 1)
    };
    let pop = || run(&step, node("StackPop", &[("elem_type", attr::ty(DataType::Int64))]), vec![h.clone()], 1);
    for v in 0..5 {
        assert_eq!(push(v).unwrap()[0].scalar_value::<i64>().unwrap(), v);
    }
    assert_eq!(pop().unwrap()[0].scalar_value::<i64>().unwrap(), 4);
    assert_eq!(pop().unwrap()[0].scalar_value::<i64>().unwrap(), 3);
    let wrong = node("StackPush", &[("T", attr::ty(DataType::Float)), ("swap_memory", attr::bool(false))]);
    assert!(run(&step, wrong, vec![h.clone(), Tensor::scalar(1.0f32)], 1).is_err());
    run(&step, node("StackClose", &[]), vec![h.clone()], 0).unwrap();
    assert!(pop().unwrap_err().message.contains("has already been closed."));
}
