use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{pool_node, run_kernel};

#[test]
fn forward_and_grad_2x2() {
    // One image 3x3x1, 2x2 pool stride 2 SAME -> 2x2 output.
    let x = Tensor::new(vec![1, 3, 3, 1], vec![1.0f32, 5., 2., 4., 3., 9., 7., 8., 6.]).unwrap();
    let y = run_kernel(pool_node("MaxPool", DataType::Float, 2, 2, "SAME"), vec![x.clone()], 1).unwrap().remove(0);
    assert_eq!(y.dims(), &[1, 2, 2, 1]);
    assert_eq!(y.as_slice::<f32>().unwrap(), &[5., 9., 8., 6.]);
    let gr = Tensor::new(vec![1, 2, 2, 1], vec![1.0f32, 2., 3., 4.]).unwrap();
    let dx = run_kernel(pool_node("MaxPoolGrad", DataType::Float, 2, 2, "SAME"), vec![x, y, gr], 1).unwrap().remove(0);
    assert_eq!(dx.as_slice::<f32>().unwrap(), &[0., 1., 0., 0., 0., 2., 0., 3., 4.]);
}

#[test]
fn ties_go_to_the_first_maximum_and_overlaps_accumulate() {
    let x = Tensor::new(vec![1, 2, 3, 1], vec![1.0f64, 1., 1., 1., 1., 1.]).unwrap();
    let nd = pool_node("MaxPoolGrad", DataType::Double, 2, 1, "VALID");
    let y = Tensor::new(vec![1, 1, 2, 1], vec![1.0f64, 1.]).unwrap();
    let gr = Tensor::new(vec![1, 1, 2, 1], vec![10.0f64, 20.]).unwrap();
    let dx = run_kernel(nd, vec![x, y, gr], 1).unwrap().remove(0);
    assert_eq!(dx.as_slice::<f64>().unwrap(), &[10., 20., 0., 0., 0., 0.]);
}

/// TensorFlow's rule written plainly: each window's first maximum gets its gradient.
fn grad_reference(x: &[f32], dims: [usize; 4], k: usize, s: usize, same: bool, grad: &[f32]) -> Vec<f32> {
    let [n, h, w, c] = dims;
    let out = |i: usize| if same { i.div_ceil(s) } else { (i - k + s) / s };
    let (oh, ow) = (out(h), out(w));
    let pad = |i: usize, o: usize| if same { ((o - 1) * s + k).saturating_sub(i) / 2 } else { 0 };
    let (py, px) = (pad(h, oh), pad(w, ow));
    let mut dx = vec![0.0f32; x.len()];
    for b in 0..n {
        for (oy, ox, ch) in (0..oh).flat_map(|oy| (0..ow).flat_map(move |ox| (0..c).map(move |ch| (oy, ox, ch)))) {
            let mut best: Option<(f32, usize)> = None;
            for iy in (oy * s).saturating_sub(py)..(oy * s + k).saturating_sub(py).min(h) {
                for ix in (ox * s).saturating_sub(px)..(ox * s + k).saturating_sub(px).min(w) {
                    let i = ((b * h + iy) * w + ix) * c + ch;
                    if best.is_none_or(|(v, _)| v < x[i]) {
                        best = Some((x[i], i));
                    }
                }
            }
            if let Some((_, i)) = best {
                dx[i] += grad[((b * oh + oy) * ow + ox) * c + ch];
            }
        }
    }
    dx
}

#[test]
fn grad_matches_the_reference_whether_windows_tile_leave_gaps_or_overlap() {
    for (h, k, s, same) in [(6, 2, 2, true), (5, 2, 2, true), (5, 2, 2, false), (7, 2, 3, false), (7, 3, 2, true)] {
        let dims: [usize; 4] = [2, h, h + 1, 3];
        let len = dims.iter().product::<usize>();
        // Distinct values in a scrambled order: no ties.
        let x: Vec<f32> = (0..len).map(|i| ((i * 37) % len) as f32).collect();
        let xt = Tensor::new(dims.to_vec(), x.clone()).unwrap();
        let padding = if same { "SAME" } else { "VALID" };
        let y =
            run_kernel(pool_node("MaxPool", DataType::Float, k, s, padding), vec![xt.clone()], 1).unwrap().remove(0);
        let gr: Vec<f32> = (0..y.num_elements()).map(|i| i as f32 + 1.0).collect();
        let grt = Tensor::new(y.dims().to_vec(), gr.clone()).unwrap();
        let dx = run_kernel(pool_node("MaxPoolGrad", DataType::Float, k, s, padding), vec![xt, y, grt], 1)
            .unwrap()
            .remove(0);
        assert_eq!(
            dx.as_slice::<f32>().unwrap(),
            grad_reference(&x, dims, k as usize, s as usize, same, &gr),
            "{:?}",
            (h, k, s, same)
        );
    }
}

#[test]
fn errors() {
    let x = Tensor::zeros(DataType::Float, vec![3, 3, 1]).unwrap();
    let e = run_kernel(pool_node("MaxPool", DataType::Float, 2, 2, "SAME"), vec![x], 1).unwrap_err();
    assert!(e.message.contains("4-dimensional"), "{e}");
    let mut nd = pool_node("MaxPool", DataType::Float, 2, 2, "SAME");
    nd.attr.insert("ksize".into(), attr::list_int(&[2, 2, 2, 1]));
    assert_eq!(ferroflow_kernels::create_kernel(&nd).err().unwrap().code, Code::Unimplemented);
    let x = Tensor::zeros(DataType::Float, vec![1, 4, 4, 1]).unwrap();
    let gr = Tensor::zeros(DataType::Float, vec![1, 3, 3, 1]).unwrap();
    let y = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
    let e = run_kernel(pool_node("MaxPoolGrad", DataType::Float, 2, 2, "SAME"), vec![x, y, gr], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Expected grad shape to be [1,2,2,1], but got [1,3,3,1]"), "{e}");
}
