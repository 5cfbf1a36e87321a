//! Numeric gradient checks of the TensorArray gradients (read ↔ write, gather ↔ scatter,
//! concat ↔ split), built with the Rust `TensorArray` builder, including elements read
//! several times (their gradients add up in the gradient array), and the forward values.

use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_graph::{gradients, ops, Output, Scope, TensorArray, TensorArrayOptions};
use ferroflow_runtime::grad_check::check_gradient;
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

const EPS: f64 = 1e-6;
const TOL: f64 = 1e-6;

fn rand(dims: &[usize], seed: u64) -> Tensor {
    let mut r = ferroflow_runtime::grad_check::Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let n: usize = dims.iter().product();
    Tensor::new(dims.to_vec(), (0..n).map(|_| r.signed()).collect::<Vec<f64>>()).unwrap()
}

fn i32c(s: &Scope, v: i32) -> Output {
    ops::constant(s, v)
}

fn keep() -> TensorArrayOptions {
    TensorArrayOptions { clear_after_read: false, ..Default::default() }
}

fn check(name: &str, build: impl Fn(&Scope, &[Output]) -> Output, values: &[Tensor], diff: &[usize]) {
    let r = check_gradient(build, values, diff, EPS).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(r.checked > 0, "{name}: nothing checked");
    assert!(r.max_rel_error < TOL, "{name}: relative error {} over {} elements", r.max_rel_error, r.checked);
}

#[test]
fn write_then_stack() {
    check(
        "write x0, x1 at 1, 0; stack; multiply",
        |s, x| {
            let ta = TensorArray::new(s, DataType::Double, i32c(s, 2), &TensorArrayOptions::default());
            let ta = ta.write(s, i32c(s, 1), x[0].clone()).write(s, i32c(s, 0), x[1].clone());
            ops::mul(s, ta.stack(s), x[1].clone())
        },
        &[rand(&[3], 1), rand(&[3], 2)],
        &[0, 1],
    );
}

#[test]
fn unstack_then_read_twice() {
    check(
        "unstack; read row 1 twice and row 0 once",
        |s, x| {
            let ta = TensorArray::new(s, DataType::Double, i32c(s, 3), &keep()).unstack(s, x[0].clone());
            let a = ta.read(s, i32c(s, 1));
            let b = ta.read(s, i32c(s, 1));
            let c = ta.read(s, i32c(s, 0));
            ops::mul(s, ops::mul(s, a, b), c)
        },
        &[rand(&[3, 2], 3)],
        &[0],
    );
}

#[test]
fn scatter_then_gather_repeated() {
    check(
        "scatter to [2, 0]; gather [0, 0, 2]",
        |s, x| {
            let idx = ops::constant(s, Tensor::vec(vec![2i32, 0]));
            let ta = TensorArray::new(s, DataType::Double, i32c(s, 3), &keep()).scatter(s, idx, x[0].clone());
            let g = ta.gather(s, ops::constant(s, Tensor::vec(vec![0i32, 0, 2])));
            ops::mul(s, g.clone(), g)
        },
        &[rand(&[2, 2], 4)],
        &[0],
    );
}

#[test]
fn split_then_concat() {
    check(
        "split [1, 3] rows; concat",
        |s, x| {
            let lens = ops::constant(s, Tensor::vec(vec![1i64, 3]));
            // Elements of different shapes: no shape inference (TensorFlow's infer_shape=False).
            let o = TensorArrayOptions { identical_element_shapes: false, ..Default::default() };
            let ta = TensorArray::new(s, DataType::Double, i32c(s, 2), &o);
            let (c, _) = ta.split(s, x[0].clone(), lens).concat(s);
            ops::mul(s, c, x[0].clone())
        },
        &[rand(&[4, 2], 5)],
        &[0],
    );
}

#[test]
fn forward_values_and_errors() {
    let s = Scope::new_root();
    let x = ops::constant(&s, Tensor::new(vec![3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap());
    let ta = TensorArray::new(&s, DataType::Float, i32c(&s, 3), &keep()).unstack(&s, x);
    let row = ta.read(&s, i32c(&s, 2));
    let back = ta.gather(&s, ops::constant(&s, Tensor::vec(vec![1i32, 0])));
    let size = ta.size(&s);
    let (cat, lens) = ta.concat(&s);
    let dynamic = TensorArrayOptions { dynamic_size: true, ..Default::default() };
    let grown = TensorArray::new(&s, DataType::Int32, i32c(&s, 0), &dynamic).write(&s, i32c(&s, 4), i32c(&s, 7));
    let grown_size = grown.size(&s);
    let fixed = TensorArray::new(&s, DataType::Float, i32c(&s, 1), &TensorArrayOptions::default());
    let past = fixed.write(&s, i32c(&s, 1), ops::constant(&s, 1.0f32)).flow;
    let twice = fixed.write(&s, i32c(&s, 0), ops::constant(&s, 1.0f32));
    let twice = twice.write(&s, i32c(&s, 0), ops::constant(&s, 2.0f32)).flow;
    s.status().unwrap();
    let sess = DirectSession::new(s.graph());
    let got = sess.run(&[], &[&row, &back, &size, &cat, &lens, &grown_size], &[]).unwrap();
    assert_eq!(got[0].as_slice::<f32>().unwrap(), &[5.0, 6.0]);
    assert_eq!(got[1].as_slice::<f32>().unwrap(), &[3.0, 4.0, 1.0, 2.0]);
    assert_eq!(got[2].scalar_value::<i32>().unwrap(), 3);
    assert_eq!(got[3].dims(), &[6]);
    assert_eq!(got[4].as_slice::<i64>().unwrap(), &[2, 2, 2]);
    assert_eq!(got[5].scalar_value::<i32>().unwrap(), 5);
    for (what, f) in [("past the size", &past), ("written twice", &twice)] {
        let e = sess.run(&[], &[f], &[]).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{what}: {e}");
    }
    // A gradient of the stack with respect to the written value.
    let s = Scope::new_root();
    let v = ops::placeholder_named(&s, "v", DataType::Float, Some(&[2]));
    let ta = TensorArray::new(&s, DataType::Float, i32c(&s, 2), &TensorArrayOptions::default());
    let st = ta.write(&s, i32c(&s, 0), v.clone()).write(&s, i32c(&s, 1), v.clone()).stack(&s);
    let g = gradients(&s, &[st], std::slice::from_ref(&v), None).unwrap().remove(0).unwrap();
    let sess = DirectSession::new(s.graph());
    let out = sess.run(&[(&v, Tensor::vec(vec![1.0f32, 2.0]))], &[&g], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0, 2.0]);
}
