use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::math::cast::{cast_wide, DIRECT_TYPES};
use ferroflow_kernels::testutil::{node, run_kernel};
use ferroflow_kernels::OpContext;

fn cast(x: Tensor, dst: DataType) -> Result<Tensor, Status> {
    let n = node("Cast", &[("SrcT", attr::ty(x.dtype())), ("DstT", attr::ty(dst)), ("Truncate", attr::bool(false))]);
    run_kernel(n, vec![x], 1).map(|mut v| v.remove(0))
}

#[test]
fn conversions() {
    let f = Tensor::vec(vec![f32::NAN, 1e10, -1e10, 2.7, -2.7, 300., -1.]);
    let i = cast(f.clone(), DataType::Int32).unwrap();
    assert_eq!(i.as_slice::<i32>().unwrap(), &[i32::MIN, i32::MIN, i32::MIN, 2, -2, 300, -1]);
    let u = cast(f.clone(), DataType::UInt8).unwrap();
    assert_eq!(u.as_slice::<u8>().unwrap(), &[0, 0, 0, 2, 254, 44, 255]);
    let l = cast(Tensor::vec(vec![1e20f64, 3.9]), DataType::Int64).unwrap();
    assert_eq!(l.as_slice::<i64>().unwrap(), &[i64::MIN, 3]);
    let b = cast(Tensor::vec(vec![f32::NAN, 0., -0., 0.1]), DataType::Bool).unwrap();
    assert_eq!(b.as_slice::<bool>().unwrap(), &[true, false, false, true]);
    let w = cast(Tensor::vec(vec![(1i64 << 40) + 5, -(1i64 << 33) - 1]), DataType::Int32).unwrap();
    assert_eq!(w.as_slice::<i32>().unwrap(), &[5, -1]);
    let fl = cast(Tensor::vec(vec![true, false]), DataType::Double).unwrap();
    assert_eq!(fl.as_slice::<f64>().unwrap(), &[1., 0.]);
    let d = cast(Tensor::vec(vec![1e300f64]), DataType::Float).unwrap();
    assert_eq!(d.as_slice::<f32>().unwrap(), &[f32::INFINITY]);
    let same = Tensor::vec(vec![1.5f32]);
    assert!(cast(same.clone(), DataType::Float).unwrap().shares_buffer(&same));
}

#[test]
fn direct_and_wide_paths_agree() {
    let samples = || {
        vec![
            Tensor::vec(vec![f32::NAN, 1e10, -1e10, 2.7, -2.7, 300., -1., 0.0]),
            Tensor::vec(vec![1e300f64, -3.5, 255.9, 256.0, f64::NEG_INFINITY, 0.0]),
            Tensor::vec(vec![i32::MIN, -1, 0, 300, i32::MAX]),
            Tensor::vec(vec![i64::MIN, -1, 0, 1 << 40, i64::MAX]),
            Tensor::vec(vec![0u8, 1, 255]),
            Tensor::vec(vec![true, false]),
        ]
    };
    for x in samples() {
        for &d in DIRECT_TYPES {
            let src = x.dtype();
            let direct = cast(x.clone(), d).unwrap();
            let n = node("Cast", &[("SrcT", attr::ty(src)), ("DstT", attr::ty(d))]);
            let step =
                ferroflow_kernels::testutil::test_step(std::sync::Arc::new(ferroflow_kernels::ResourceMgr::new()));
            let mut ctx =
                OpContext::new(std::sync::Arc::new(n), vec![ferroflow_kernels::Value::Tensor(x.clone())], 1, step);
            cast_wide(&mut ctx, src, d, false).unwrap();
            let wide = ctx.take_outputs().unwrap().remove(0).tensor().unwrap();
            assert_eq!(direct.raw_bytes(), wide.raw_bytes(), "{src} -> {d}");
        }
    }
}

#[test]
fn errors() {
    assert_eq!(cast(Tensor::vec(vec![1.0f32]), DataType::String).unwrap_err().code, Code::NotFound);
    let n = node(
        "Cast",
        &[("SrcT", attr::ty(DataType::Int32)), ("DstT", attr::ty(DataType::Float)), ("Truncate", attr::bool(false))],
    );
    let e = run_kernel(n, vec![Tensor::vec(vec![1.0f32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}
