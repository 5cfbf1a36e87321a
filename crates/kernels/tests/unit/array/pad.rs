use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn pads() {
    let n = node("Pad", &[("T", attr::ty(DataType::Int32)), ("Tpaddings", attr::ty(DataType::Int32))]);
    let x = Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap();
    let p = Tensor::new(vec![2, 2], vec![1i32, 0, 0, 2]).unwrap();
    let o = run_kernel(n.clone(), vec![x.clone(), p.clone()], 1).unwrap();
    assert_eq!(o[0].dims(), &[3, 4]);
    assert_eq!(o[0].as_slice::<i32>().unwrap(), &[0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0]);
    let v2 = node("PadV2", &[("T", attr::ty(DataType::Int32)), ("Tpaddings", attr::ty(DataType::Int32))]);
    let o = run_kernel(v2.clone(), vec![x.clone(), p.clone(), Tensor::scalar(9i32)], 1).unwrap();
    assert_eq!(&o[0].as_slice::<i32>().unwrap()[..6], &[9, 9, 9, 9, 1, 2]);
    let e = run_kernel(v2, vec![x.clone(), p, Tensor::vec(vec![9i32])], 1).unwrap_err();
    assert!(e.message.contains("constant_values must be a scalar. Found: [1]"));
    let bad = Tensor::new(vec![1, 2], vec![1i32, 1]).unwrap();
    let e = run_kernel(n.clone(), vec![x.clone(), bad], 1).unwrap_err();
    assert!(e.message.contains("The first dimension of paddings must be the rank of inputs[1,2] [2,2]"));
    let neg = Tensor::new(vec![2, 2], vec![1i32, -1, 0, 0]).unwrap();
    assert!(run_kernel(n, vec![x, neg], 1).unwrap_err().message.contains("Paddings must be non-negative: 1 -1"));
}

/// The definition: `out[idx] = x[idx - before]` inside, `value` elsewhere.
fn pad_reference(x: &[f32], dims: &[usize], before: &[usize], after: &[usize], value: f32) -> Vec<f32> {
    let out_dims: Vec<usize> = dims.iter().zip(before).zip(after).map(|((d, b), a)| d + b + a).collect();
    let n: usize = out_dims.iter().product();
    (0..n)
        .map(|mut i| {
            let mut src = 0;
            let mut inside = true;
            let mut scale = 1;
            for k in (0..out_dims.len()).rev() {
                let o = i % out_dims[k];
                i /= out_dims[k];
                if o < before[k] || o >= before[k] + dims[k] {
                    inside = false;
                } else {
                    src += (o - before[k]) * scale;
                }
                scale *= dims[k];
            }
            if inside {
                x[src]
            } else {
                value
            }
        })
        .collect()
}

/// (input dims, paddings before, paddings after, PadV2's constant).
type PadCase = ([usize; 4], [usize; 4], [usize; 4], Option<f32>);

/// Large pads that leave the batch alone take the per-image parallel path; a pad of the
/// batch and a small one do not. All equal the definition.
#[test]
fn large_pads_equal_the_definition() {
    let cases: [PadCase; 4] = [
        ([3, 40, 41, 8], [0, 1, 0, 0], [0, 2, 1, 0], None),
        ([16, 20, 20, 12], [0, 0, 1, 2], [0, 1, 0, 1], Some(7.5)),
        ([2, 40, 40, 12], [1, 1, 1, 0], [0, 0, 0, 0], Some(-1.0)),
        ([2, 3, 3, 2], [0, 1, 1, 0], [0, 1, 1, 0], None),
    ];
    for (dims, before, after, value) in cases {
        let len: usize = dims.iter().product();
        let x: Vec<f32> = (0..len).map(|i| (i % 97) as f32 + 0.5).collect();
        let p: Vec<i32> = (0..4).flat_map(|k| [before[k] as i32, after[k] as i32]).collect();
        let op = if value.is_some() { "PadV2" } else { "Pad" };
        let nd = node(op, &[("T", attr::ty(DataType::Float)), ("Tpaddings", attr::ty(DataType::Int32))]);
        let mut inputs = vec![Tensor::new(dims.to_vec(), x.clone()).unwrap(), Tensor::new(vec![4, 2], p).unwrap()];
        if let Some(v) = value {
            inputs.push(Tensor::scalar(v));
        }
        let out = run_kernel(nd, inputs, 1).unwrap().remove(0);
        let want = pad_reference(&x, &dims, &before, &after, value.unwrap_or(0.0));
        assert_eq!(out.as_slice::<f32>().unwrap(), &want[..], "{dims:?} {before:?} {after:?}");
    }
}
