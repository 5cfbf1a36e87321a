//! Requests whose outputs are far larger than their inputs (issue #42): broadcasts, repeats,
//! concatenations of one tensor many times, string growth, lists of unset items, and a
//! queue filled with tensors each under the large-allocation size. Every one ends with
//! RESOURCE_EXHAUSTED naming the node (or, for the queue, the bytes held) and the task keeps
//! serving; before, each either aborted the process or ran it out of memory.

use super::*;
use ferroflow::{DataType, Output, Tensor};

/// `Fill(dims, v)` on the default device.
fn fill(s: &Scope, dims: &[i64], v: Tensor) -> Output {
    ops::fill(s, ops::constant(s, dims.to_vec()), ops::constant(s, v))
}

type Build = Box<dyn FnOnce(&Scope) -> Output>;

#[test]
fn outputs_that_amplify_their_inputs_are_refused_and_the_task_stays_up() {
    let p = Proc::start(&["--port", "0", "--memory_limit", "1G"], &[]);
    let t = p.target.as_str();
    let col = |s: &Scope| fill(s, &[1 << 16, 1], 1.0f32.into());
    let row = |s: &Scope| fill(s, &[1, 1 << 16], 2.0f32.into());
    // One 4 MiB row, and a 1 MiB string.
    let wide = |s: &Scope| fill(s, &[1, 1 << 20], 1.0f32.into());
    let mib = |s: &Scope| ops::constant(s, Tensor::scalar(vec![b'x'; 1 << 20]));
    let cases: Vec<(&str, Build)> = vec![
        ("AddV2", Box::new(move |s: &Scope| s.op("AddV2").input(col(s)).input(row(s)).build().output(0))),
        ("Greater", Box::new(move |s: &Scope| s.op("Greater").input(col(s)).input(row(s)).build().output(0))),
        (
            "SelectV2",
            Box::new(move |s: &Scope| {
                let c = fill(s, &[1 << 16, 1], true.into());
                ops::select_v2(s, c, row(s), ops::constant(s, 0.0f32))
            }),
        ),
        (
            "BatchMatMulV2",
            Box::new(|s: &Scope| {
                let x = fill(s, &[1 << 16, 1, 1, 1], 1.0f32.into());
                let y = fill(s, &[1, 1 << 16, 1, 1], 1.0f32.into());
                ops::batch_mat_mul_v2(s, x, y, false, false)
            }),
        ),
        (
            "GatherV2",
            Box::new(move |s: &Scope| {
                let idx = ops::constant(s, Tensor::vec(vec![0i32; 1 << 14]));
                ops::gather_v2(s, wide(s), idx, ops::constant(s, 0i32))
            }),
        ),
        (
            "ConcatV2",
            Box::new(move |s: &Scope| {
                let w = wide(s);
                ops::concat(s, vec![w; 1 << 14], ops::constant(s, 0i32))
            }),
        ),
        (
            "Pack",
            Box::new(move |s: &Scope| {
                let w = wide(s);
                ops::stack(s, vec![w; 1 << 14], 0)
            }),
        ),
        (
            "StringJoin",
            Box::new(move |s: &Scope| {
                let m = mib(s);
                s.op("StringJoin").input_list(vec![m; 1 << 17]).build().output(0)
            }),
        ),
        (
            "TensorListStack",
            Box::new(|s: &Scope| {
                let shape = ops::constant(s, vec![1i32 << 18]);
                let list = s
                    .op("TensorListReserve")
                    .input(shape.clone())
                    .input(ops::constant(s, 1i32 << 14))
                    .attr("element_dtype", ferroflow::attr::ty(DataType::Float))
                    .build()
                    .output(0);
                s.op("TensorListStack")
                    .input(list)
                    .input(shape)
                    .attr("element_dtype", ferroflow::attr::ty(DataType::Float))
                    .build()
                    .output(0)
            }),
        ),
    ];
    for (op, build) in cases {
        let e = step_err(t, build);
        assert_eq!(e.code, Code::ResourceExhausted, "{op}: {e}");
        assert!(e.message.contains("OOM when allocating"), "{op}: {e}");
        assert!(e.message.contains(&format!("(op {op})")), "{op}: the node is named: {e}");
        assert!(e.message.contains("memory limit of 1073741824 bytes"), "{op}: the budget is named: {e}");
        answers(t);
    }
}

#[test]
fn a_queue_filled_with_tensors_under_16_mib_is_bounded_by_the_budget() {
    let p = Proc::start(&["--port", "0", "--memory_limit", "1G"], &[]);
    let t = p.target.as_str();
    let s = Scope::new_root();
    let q = ops::fifo_queue(&s, &[DataType::Float], &[], -1, "", true);
    let x = ops::placeholder(&s, DataType::Float, None);
    let enqueue = ops::queue_enqueue(&s, q, vec![x.clone()], -1);
    let sess = GrpcSession::new(t, s.graph()).unwrap();
    // 15 MiB each: 1 GiB is reached after about 68 of them, less what the process holds.
    let item = Tensor::vec(vec![0.5f32; 15 << 18]);
    let mut held = 0;
    let refused = loop {
        match sess.run(&[(&x, item.clone())], &[], &[&enqueue]) {
            Ok(_) => held += 1,
            Err(e) => break e,
        }
        assert!(held < 100, "100 x 15 MiB enqueued under a 1 GiB budget");
    };
    assert_eq!(refused.code, Code::ResourceExhausted, "after {held}: {refused}");
    assert!(refused.message.contains("already holds"), "{refused}");
    assert!(held >= 20, "only {held} tensors fit: {refused}");
    answers(t);
    drop(sess);
}

#[test]
fn the_shape_and_size_of_a_huge_broadcast_are_answered_without_computing_it() {
    // 2^16 x 2^16 floats are 16 GiB, far over the 1 GiB budget; their shape is known from
    // the constants alone, so Shape/Size/Rank answer without the broadcast running.
    let p = Proc::start(&["--port", "0", "--memory_limit", "1G"], &[]);
    let s = Scope::new_root();
    let col = fill(&s, &[1 << 16, 1], 1.0f32.into());
    let row = fill(&s, &[1, 1 << 16], 2.0f32.into());
    let sum = s.op("AddV2").input(col).input(row).build().output(0);
    let size = ops::size(&s, sum.clone(), DataType::Int64);
    let shape = ops::shape(&s, sum.clone(), DataType::Int32);
    let rank = ops::rank(&s, sum.clone());
    let sess = GrpcSession::new(&p.target, s.graph()).unwrap();
    let out = sess.run(&[], &[&size, &shape, &rank], &[]).unwrap();
    assert_eq!(out[0].scalar_value::<i64>().unwrap(), 1 << 32);
    assert_eq!(out[1].as_slice::<i32>().unwrap(), [1 << 16, 1 << 16]);
    assert_eq!(out[2].scalar_value::<i32>().unwrap(), 2);
    // The broadcast itself is still refused, naming the node.
    let e = sess.run(&[], &[&sum], &[]).unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    answers(&p.target);
}
