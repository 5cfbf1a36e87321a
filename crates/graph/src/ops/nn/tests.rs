use ferroflow_core::{Code, DataType, Tensor};

use crate::ops::test_util::ph;
use crate::ops::*;
use crate::Scope;

#[test]
fn matmul_shapes_and_errors() {
    let s = Scope::new_root();
    let a = ph(&s, &[2, 3]);
    let b = ph(&s, &[4, 3]);
    let c = mat_mul(&s, a.clone(), b.clone(), false, true);
    assert_eq!(s.graph().shape_of(&c), Some(vec![2, 4]));
    let d = mat_mul(&s, a.clone(), b.clone(), true, false);
    assert_eq!(s.graph().shape_of(&d), None);
    let e = s.status().unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("MatMul_1") && e.message.contains("In[0]: [2,3], In[1]: [4,3]"), "{e}");

    let s = Scope::new_root();
    let x = ph(&s, &[5, 1, 2, 3]);
    let y = ph(&s, &[4, 3, 7]);
    let z = batch_mat_mul_v2(&s, x.clone(), y.clone(), false, false);
    assert_eq!(s.graph().shape_of(&z), Some(vec![5, 4, 2, 7]));
    batch_mat_mul_v2(&s, x, y, true, false);
    assert!(s.status().unwrap_err().message.contains("Dimensions must be equal"));
}

#[test]
fn activation_shapes() {
    let s = Scope::new_root();
    let x = ph(&s, &[-1, 10]);
    let b = ph(&s, &[10]);
    let y = bias_add(&s, x.clone(), b);
    assert_eq!(s.graph().shape_of(&y), Some(vec![-1, 10]));
    assert_eq!(s.graph().shape_of(&bias_add_grad(&s, y.clone())), Some(vec![10]));
    for o in [
        relu(&s, y.clone()),
        relu6(&s, y.clone()),
        elu(&s, y.clone()),
        softmax(&s, y.clone()),
        log_softmax(&s, y.clone()),
    ] {
        assert_eq!(s.graph().shape_of(&o), Some(vec![-1, 10]));
    }
    let g = relu_grad(&s, y.clone(), x.clone());
    assert_eq!(s.graph().shape_of(&g), Some(vec![-1, 10]));
    relu6_grad(&s, y.clone(), x.clone());
    elu_grad(&s, y.clone(), x.clone());
    let labels = ph(&s, &[-1, 10]);
    let (loss, bp) = softmax_cross_entropy_with_logits(&s, y.clone(), labels);
    assert_eq!(s.graph().shape_of(&loss), Some(vec![-1]));
    assert_eq!(s.graph().shape_of(&bp), Some(vec![-1, 10]));
    let idx = placeholder(&s, DataType::Int64, Some(&[50]));
    let (loss, bp) = sparse_softmax_cross_entropy_with_logits(&s, y, idx);
    assert_eq!(s.graph().shape_of(&loss), Some(vec![50]));
    assert_eq!(s.graph().shape_of(&bp), Some(vec![50, 10]));
    s.status().unwrap();
    let bad = ph(&s, &[3]);
    bias_add(&s, x, bad);
    assert!(s.status().unwrap_err().message.contains("biases"));
}

#[test]
fn conv_and_pool_shapes() {
    let s = Scope::new_root();
    let x = ph(&s, &[-1, 28, 28, 1]);
    let w = ph(&s, &[5, 5, 1, 32]);
    let y = conv2d(&s, x.clone(), w.clone(), &[1, 1, 1, 1], "SAME");
    assert_eq!(s.graph().shape_of(&y), Some(vec![-1, 28, 28, 32]));
    let v = conv2d(&s, x.clone(), w.clone(), &[1, 2, 2, 1], "VALID");
    assert_eq!(s.graph().shape_of(&v), Some(vec![-1, 12, 12, 32]));
    let p = max_pool(&s, y.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "SAME");
    assert_eq!(s.graph().shape_of(&p), Some(vec![-1, 14, 14, 32]));
    let a = avg_pool(&s, y.clone(), &[1, 3, 3, 1], &[1, 2, 2, 1], "VALID");
    assert_eq!(s.graph().shape_of(&a), Some(vec![-1, 13, 13, 32]));
    let g = max_pool_grad(&s, y.clone(), p.clone(), p.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "SAME");
    assert_eq!(s.graph().shape_of(&g), Some(vec![-1, 28, 28, 32]));
    let sizes = constant(&s, Tensor::vec(vec![50i32, 28, 28, 32]));
    let ag = avg_pool_grad(&s, sizes.clone(), p.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "SAME");
    assert_eq!(s.graph().shape_of(&ag), Some(vec![50, 28, 28, 32]));
    let in_sizes = constant(&s, Tensor::vec(vec![50i32, 28, 28, 1]));
    let dx = conv2d_backprop_input(&s, in_sizes, w.clone(), y.clone(), &[1, 1, 1, 1], "SAME");
    assert_eq!(s.graph().shape_of(&dx), Some(vec![50, 28, 28, 1]));
    let f_sizes = constant(&s, Tensor::vec(vec![5i32, 5, 1, 32]));
    let dw = conv2d_backprop_filter(&s, x.clone(), f_sizes, y, &[1, 1, 1, 1], "SAME");
    assert_eq!(s.graph().shape_of(&dw), Some(vec![5, 5, 1, 32]));
    s.status().unwrap();
    let small = ph(&s, &[1, 2, 2, 1]);
    conv2d(&s, small, w, &[1, 1, 1, 1], "VALID");
    assert!(s.status().unwrap_err().message.contains("negative"));
}

#[test]
fn defaults_are_filled() {
    let s = Scope::new_root();
    let x = ph(&s, &[1, 4, 4, 1]);
    let w = ph(&s, &[1, 1, 1, 1]);
    let y = conv2d(&s, x, w, &[1, 1, 1, 1], "SAME");
    let n = s.graph().node(&y.node).unwrap().def;
    for a in ["data_format", "dilations", "explicit_paddings", "use_cudnn_on_gpu", "T"] {
        assert!(n.attr.contains_key(a), "missing {a}");
    }
}
