//! Tests of the family's shape, slicing and reordering kernels (`tests.rs` has the rest),
//! one module per kernel file, run through the kernel registry as the executor runs them.

use ferroflow_core::{DataType, Status, Tensor};

mod shape_ops {
    use super::*;
    use ferroflow_core::{attr, Code};

    use super::super::shape_ops::*;
    use crate::testutil::{node, run_kernel};

    fn t(dims: Vec<usize>, n: usize) -> Tensor {
        Tensor::new(dims, (0..n as i32).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn reshape_infers_and_checks() {
        assert_eq!(reshape_dims(&[2, 3], &[-1, 2]).unwrap(), vec![3, 2]);
        assert_eq!(reshape_dims(&[0, 3], &[-1, 0]).unwrap(), vec![3, 0]);
        assert_eq!(reshape_dims(&[0, 3], &[-1, 3]).unwrap(), vec![0, 3]);
        assert_eq!(
            reshape_dims(&[2, 3], &[4]).unwrap_err(),
            "Input to reshape is a tensor with 6 values, but the requested shape has 4"
        );
        assert_eq!(
            reshape_dims(&[2, 3], &[-1, 4]).unwrap_err(),
            "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4"
        );
        assert_eq!(reshape_dims(&[2, 3], &[-1, -1]).unwrap_err(), "Only one input size may be -1, not both 0 and 1");
        assert_eq!(reshape_dims(&[2, 3], &[-2, 3]).unwrap_err(), "Size 0 must be non-negative, not -2");
        assert!(reshape_dims(&[2], &[1 << 40, 1 << 40, 0]).is_err());
        let n = node("Reshape", &[("T", attr::ty(DataType::Int32)), ("Tshape", attr::ty(DataType::Int64))]);
        let x = t(vec![2, 3], 6);
        let out = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, -1])], 1).unwrap();
        assert_eq!(out[0].dims(), &[3, 2]);
        assert!(out[0].shares_buffer(&x));
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![4i64])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("node 'test'") && e.message.contains("6 values"), "{e}");
        assert!(run_kernel(n, vec![x, Tensor::scalar(6i64)], 1).is_err());
    }

    #[test]
    fn shape_size_rank() {
        let x = t(vec![2, 3, 1], 6);
        let s = run_kernel(node("Shape", &[("out_type", attr::ty(DataType::Int64))]), vec![x.clone()], 1).unwrap();
        assert_eq!(s[0].as_slice::<i64>().unwrap(), &[2, 3, 1]);
        let s = run_kernel(node("Size", &[("out_type", attr::ty(DataType::Int32))]), vec![x.clone()], 1).unwrap();
        assert_eq!(s[0].scalar_value::<i32>().unwrap(), 6);
        let s = run_kernel(node("Rank", &[]), vec![x.clone()], 1).unwrap();
        assert_eq!(s[0].scalar_value::<i32>().unwrap(), 3);
        let n = node("ShapeN", &[("out_type", attr::ty(DataType::Int32)), ("N", attr::int(2))]);
        let s = run_kernel(n, vec![x, Tensor::scalar(1.0f32)], 2).unwrap();
        assert_eq!(s[0].as_slice::<i32>().unwrap(), &[2, 3, 1]);
        assert_eq!(s[1].dims(), &[0]);
    }

    #[test]
    fn expand_and_squeeze() {
        let n = node("ExpandDims", &[("Tdim", attr::ty(DataType::Int32))]);
        let x = t(vec![2, 3], 6);
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::scalar(-1i32)], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 3, 1]);
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![0i32])], 1).unwrap();
        assert_eq!(o[0].dims(), &[1, 2, 3]);
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::scalar(3i32)], 1).unwrap_err();
        assert!(e.message.contains("Tried to expand dim index 3 for tensor with 2 dimensions."));
        let e = run_kernel(n, vec![x, Tensor::vec(vec![0i32, 1])], 1).unwrap_err();
        assert!(e.message.contains("'dim' must be a tensor with a single value"));
        let y = t(vec![1, 2, 1], 2);
        let sq = |d: &[i64]| node("Squeeze", &[("squeeze_dims", attr::list_int(d))]);
        assert_eq!(run_kernel(sq(&[]), vec![y.clone()], 1).unwrap()[0].dims(), &[2]);
        assert_eq!(run_kernel(sq(&[-1]), vec![y.clone()], 1).unwrap()[0].dims(), &[1, 2]);
        let e = run_kernel(sq(&[1]), vec![y.clone()], 1).unwrap_err();
        assert!(e.message.contains("Can not squeeze dim[1], expected a dimension of 1, got 2"));
        assert!(run_kernel(sq(&[3]), vec![y], 1).is_err());
    }
}

mod slice {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    #[test]
    fn slices() {
        let n = node("Slice", &[("T", attr::ty(DataType::Int32)), ("Index", attr::ty(DataType::Int64))]);
        let x = Tensor::new(vec![3, 4], (0..12).collect::<Vec<i32>>()).unwrap();
        let run = |b: Vec<i64>, s: Vec<i64>| run_kernel(n.clone(), vec![x.clone(), Tensor::vec(b), Tensor::vec(s)], 1);
        let o = run(vec![1, 1], vec![2, -1]).unwrap();
        assert_eq!(o[0].dims(), &[2, 3]);
        assert_eq!(o[0].as_slice::<i32>().unwrap(), &[5, 6, 7, 9, 10, 11]);
        assert!(run(vec![0, 0], vec![-1, -1]).unwrap()[0].shares_buffer(&x));
        assert_eq!(run(vec![3, 0], vec![0, 4]).unwrap()[0].dims(), &[0, 4]);
        assert!(run(vec![0, 0], vec![4, 1]).unwrap_err().message.contains("Expected size[0] in [0, 3], but got 4"));
        assert!(run(vec![0, 5], vec![1, 1]).unwrap_err().message.contains("Expected begin[1] in [0, 4], but got 5"));
        assert!(run(vec![0, -1], vec![1, 1]).unwrap_err().message.contains("Expected begin[1] in [0, 4], but got -1"));
        assert!(run(vec![0, 0, 0], vec![1, 1]).unwrap_err().message.contains("1-D tensors of size 2"));
        assert!(run(vec![i64::MIN, 0], vec![-1, 1]).is_err());
    }
}

mod strided {

    use super::super::strided::*;

    fn naive(src: &[i32], offset: isize, dims: &[usize], strides: &[isize]) -> Vec<i32> {
        let n: usize = dims.iter().product();
        (0..n)
            .map(|mut i| {
                let mut p = offset;
                for k in (0..dims.len()).rev() {
                    p += (i % dims[k]) as isize * strides[k];
                    i /= dims[k];
                }
                src[p as usize]
            })
            .collect()
    }

    #[test]
    fn matches_naive_gathers() {
        let src: Vec<i32> = (0..200_000).collect();
        let cases: Vec<(isize, Vec<usize>, Vec<isize>)> = vec![
            (0, vec![3, 4], vec![4, 1]),
            (0, vec![4, 3], vec![1, 4]),
            (11, vec![2, 1, 3], vec![-5, 7, -1]),
            (0, vec![2, 3, 4], vec![0, 1, 0]),
            (0, vec![300, 500], vec![1, 300]),
            (0, vec![3, 70, 90], vec![6300, 1, 70]),
            (0, vec![2, 200, 150], vec![1, 300, 2]),
            (5, vec![], vec![]),
            (0, vec![0, 4], vec![4, 1]),
        ];
        for (off, d, s) in cases {
            assert_eq!(strided_gather(&src, off, &d, &s), naive(&src, off, &d, &s), "{d:?} {s:?}");
        }
        let strs: Vec<Vec<u8>> = (0..6).map(|i| vec![i as u8]).collect();
        assert_eq!(
            strided_gather(&strs, 0, &[3, 2], &[1, 3]),
            vec![vec![0], vec![3], vec![1], vec![4], vec![2], vec![5]]
        );
    }
}

mod strided_slice {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use super::super::strided_slice::*;
    use crate::testutil::{node, run_kernel};

    fn ss(x: &Tensor, b: Vec<i32>, e: Vec<i32>, s: Vec<i32>, m: Masks) -> Result<Tensor, Status> {
        let n = node(
            "StridedSlice",
            &[
                ("T", attr::ty(x.dtype())),
                ("Index", attr::ty(DataType::Int32)),
                ("begin_mask", attr::int(m.begin)),
                ("end_mask", attr::int(m.end)),
                ("ellipsis_mask", attr::int(m.ellipsis)),
                ("new_axis_mask", attr::int(m.new_axis)),
                ("shrink_axis_mask", attr::int(m.shrink_axis)),
            ],
        );
        Ok(run_kernel(n, vec![x.clone(), Tensor::vec(b), Tensor::vec(e), Tensor::vec(s)], 1)?.remove(0))
    }

    fn vals(t: &Tensor) -> (Vec<usize>, Vec<i32>) {
        (t.dims().to_vec(), t.as_slice::<i32>().unwrap().to_vec())
    }

    #[test]
    fn common_forms() {
        let x = Tensor::new(vec![3, 4], (0..12).collect::<Vec<i32>>()).unwrap();
        let none = Masks::default();
        // x[1:3]
        assert_eq!(vals(&ss(&x, vec![1], vec![3], vec![1], none).unwrap()), (vec![2, 4], (4..12).collect()));
        // x[:, 0]
        let m = Masks { begin: 1, end: 1, shrink_axis: 2, ..none };
        assert_eq!(vals(&ss(&x, vec![0, 0], vec![0, 1], vec![1, 1], m).unwrap()), (vec![3], vec![0, 4, 8]));
        // x[..., 1]
        let m = Masks { ellipsis: 1, shrink_axis: 2, ..none };
        assert_eq!(vals(&ss(&x, vec![0, 1], vec![0, 2], vec![1, 1], m).unwrap()), (vec![3], vec![1, 5, 9]));
        // x[::-1]
        let m = Masks { begin: 1, end: 1, ..none };
        assert_eq!(
            vals(&ss(&x, vec![0], vec![0], vec![-1], m).unwrap()),
            (vec![3, 4], vec![8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3])
        );
        // x[None]
        let m = Masks { new_axis: 1, ..none };
        let y = ss(&x, vec![0], vec![0], vec![1], m).unwrap();
        assert_eq!(y.dims(), &[1, 3, 4]);
        assert!(y.shares_buffer(&x));
        // x[-1, ::-2]
        let m = Masks { begin: 2, end: 2, shrink_axis: 1, ..none };
        assert_eq!(vals(&ss(&x, vec![-1, 0], vec![0, 0], vec![1, -2], m).unwrap()), (vec![2], vec![11, 9]));
        // x[5:1] is empty
        assert_eq!(ss(&x, vec![5], vec![1], vec![1], none).unwrap().dims(), &[0, 4]);
    }

    #[test]
    fn errors() {
        let x = Tensor::new(vec![2, 3], (0..6).collect::<Vec<i32>>()).unwrap();
        let none = Masks::default();
        let e = ss(&x, vec![0], vec![1], vec![0], none).unwrap_err();
        assert!(e.message.contains("strides[0] must be non-zero"));
        let m = Masks { shrink_axis: 1, ..none };
        let e = ss(&x, vec![5], vec![6], vec![1], m).unwrap_err();
        assert!(e.message.contains("slice index 5 of dimension 0 out of bounds."));
        let e = ss(&x, vec![0, 0, 0], vec![1, 1, 1], vec![1, 1, 1], none).unwrap_err();
        assert!(e.message.contains("Index out of range using input dim 2; input has only 2 dims"));
        let m = Masks { ellipsis: 3, ..none };
        assert!(ss(&x, vec![0, 0], vec![1, 1], vec![1, 1], m).unwrap_err().message.contains("Multiple ellipses"));
        let n = node("StridedSlice", &[("T", attr::ty(DataType::Int32)), ("Index", attr::ty(DataType::Int32))]);
        assert!(crate::create_kernel(&n).is_err());
    }

    #[test]
    fn grad_scatters() {
        let n = node(
            "StridedSliceGrad",
            &[
                ("T", attr::ty(DataType::Float)),
                ("Index", attr::ty(DataType::Int32)),
                ("begin_mask", attr::int(0)),
                ("end_mask", attr::int(0)),
                ("ellipsis_mask", attr::int(0)),
                ("new_axis_mask", attr::int(0)),
                ("shrink_axis_mask", attr::int(1)),
            ],
        );
        let dy = Tensor::vec(vec![1.0f32, 2.0, 3.0]);
        let inputs = vec![
            Tensor::vec(vec![2i32, 3]),
            Tensor::vec(vec![1i32]),
            Tensor::vec(vec![2i32]),
            Tensor::vec(vec![1i32]),
            dy,
        ];
        let o = run_kernel(n.clone(), inputs.clone(), 1).unwrap();
        assert_eq!(o[0].as_slice::<f32>().unwrap(), &[0., 0., 0., 1., 2., 3.]);
        let mut bad = inputs;
        bad[4] = Tensor::vec(vec![1.0f32]);
        assert!(run_kernel(n, bad, 1).unwrap_err().message.contains("shape of dy was [1] instead of [3]"));
    }
}

mod tile {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    #[test]
    fn tiles() {
        let n = node("Tile", &[("T", attr::ty(DataType::Int32)), ("Tmultiples", attr::ty(DataType::Int32))]);
        let x = Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i32, 3])], 1).unwrap();
        assert_eq!(o[0].dims(), &[4, 6]);
        assert_eq!(&o[0].as_slice::<i32>().unwrap()[..12], &[1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4]);
        assert_eq!(run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![0i32, 3])], 1).unwrap()[0].dims(), &[0, 6]);
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32])], 1).unwrap_err();
        assert!(e.message.contains("Expected multiples argument to be a vector of length 2 but got length 1"));
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32, -1])], 1).unwrap_err();
        assert!(e.message.contains("Expected multiples[1] >= 0, but got -1"));
        let huge = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32 << 20, 1 << 20])], 1).unwrap_err();
        assert_eq!(huge.code, ferroflow_core::Code::ResourceExhausted);
        let n64 = node("Tile", &[("T", attr::ty(DataType::Int32)), ("Tmultiples", attr::ty(DataType::Int64))]);
        assert!(run_kernel(n64, vec![x, Tensor::vec(vec![i64::MAX, 2])], 1).is_err());
    }

    #[test]
    fn broadcasts() {
        let n = node("BroadcastTo", &[("T", attr::ty(DataType::Float)), ("Tidx", attr::ty(DataType::Int64))]);
        let x = Tensor::new(vec![2, 1], vec![1.0f32, 2.0]).unwrap();
        let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i64, 2, 3])], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 2, 3]);
        assert_eq!(&o[0].as_slice::<f32>().unwrap()[..6], &[1., 1., 1., 2., 2., 2.]);
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, 3])], 1).unwrap_err();
        assert!(e.message.contains("Incompatible shapes: [2,1] vs. [3,3]"));
        let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i64])], 1).unwrap_err();
        assert!(e.message.contains("Rank of input (2) must be no greater than rank of output shape (1)."));
        let e = run_kernel(n, vec![x, Tensor::vec(vec![-1i64, 1])], 1).unwrap_err();
        assert!(e.message.contains("Dimension -1 must be >= 0"));
    }
}

mod transpose {
    use super::*;
    use ferroflow_core::attr;

    use crate::testutil::{node, run_kernel};

    fn tp(x: Tensor, perm: Vec<i32>) -> Result<Tensor, Status> {
        let n = node("Transpose", &[("T", attr::ty(x.dtype())), ("Tperm", attr::ty(DataType::Int32))]);
        Ok(run_kernel(n, vec![x, Tensor::vec(perm)], 1)?.remove(0))
    }

    #[test]
    fn transposes() {
        let x = Tensor::new(vec![2, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
        let y = tp(x.clone(), vec![1, 0]).unwrap();
        assert_eq!(y.dims(), &[3, 2]);
        assert_eq!(y.as_slice::<f32>().unwrap(), &[1., 4., 2., 5., 3., 6.]);
        let z = Tensor::new(vec![2, 2, 2], (0..8).collect::<Vec<i32>>()).unwrap();
        assert_eq!(tp(z.clone(), vec![2, 0, 1]).unwrap().as_slice::<i32>().unwrap(), &[0, 2, 4, 6, 1, 3, 5, 7]);
        assert!(tp(z.clone(), vec![0, 1, 2]).unwrap().shares_buffer(&z));
        let big = Tensor::new(vec![300, 257], (0..300 * 257).collect::<Vec<i32>>()).unwrap();
        let bt = tp(big, vec![1, 0]).unwrap();
        assert_eq!(bt.as_slice::<i32>().unwrap()[2 * 300 + 7], 7 * 257 + 2);
        assert!(tp(x.clone(), vec![0, 1, 2]).unwrap_err().message.contains("transpose expects a vector of size 2"));
        assert!(tp(x.clone(), vec![1, 1]).unwrap_err().message.contains("0 is missing from {1,1}."));
        assert!(tp(x, vec![0, 2]).unwrap_err().message.contains("2 is out of range [0 .. 2)"));
    }

    #[test]
    fn inverts() {
        let n = node("InvertPermutation", &[("T", attr::ty(DataType::Int32))]);
        let o = run_kernel(n.clone(), vec![Tensor::vec(vec![3i32, 4, 0, 2, 1])], 1).unwrap();
        assert_eq!(o[0].as_slice::<i32>().unwrap(), &[2, 4, 3, 0, 1]);
        assert!(run_kernel(n.clone(), vec![Tensor::vec(vec![0i32, 5, 1])], 1)
            .unwrap_err()
            .message
            .contains("5 is not between 0 and 3"));
        assert!(run_kernel(n, vec![Tensor::vec(vec![0i32, 0, 1])], 1).unwrap_err().message.contains("0 is duplicated"));
    }
}

mod unique {
    use super::*;
    use ferroflow_core::attr;

    use crate::testutil::{node, run_kernel};

    #[test]
    fn first_appearance_order_and_indices() {
        let n = node("Unique", &[("T", attr::ty(DataType::Int64)), ("out_idx", attr::ty(DataType::Int32))]);
        let o = run_kernel(n.clone(), vec![Tensor::vec(vec![7i64, 3, 7, 9, 3, 3])], 2).unwrap();
        assert_eq!(o[0], Tensor::vec(vec![7i64, 3, 9]));
        assert_eq!(o[1], Tensor::vec(vec![0i32, 1, 0, 2, 1, 1]));
        let e = run_kernel(n, vec![Tensor::scalar(1i64)], 2).unwrap_err();
        assert!(e.message.contains("unique expects a 1D vector"), "{e}");
        let n = node("Unique", &[("T", attr::ty(DataType::Float)), ("out_idx", attr::ty(DataType::Int64))]);
        let o = run_kernel(n, vec![Tensor::vec(vec![0.0f32, -0.0, f32::NAN, 1.5, f32::NAN, 1.5])], 2).unwrap();
        assert_eq!(o[0].dims(), &[4]);
        assert_eq!(o[1], Tensor::vec(vec![0i64, 0, 1, 2, 3, 2]));
    }
}

mod util {
    use super::super::util::*;
    use super::*;

    #[test]
    fn alloc_guard() {
        assert!(check_alloc(&[1 << 20, 4], DataType::Float).is_ok());
        let e = check_alloc(&[1 << 40], DataType::Float).unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::ResourceExhausted);
        assert!(e.message.contains("shape[1099511627776] and type float"), "{e}");
        assert!(e.message.contains("memory limit"), "{e}");
        assert!(check_alloc(&[usize::MAX, 2], DataType::UInt8).is_err());
    }
}

mod where_op {
    use super::*;
    use ferroflow_core::attr;

    use crate::testutil::{node, run_kernel};

    #[test]
    fn coordinates() {
        let x = Tensor::new(vec![2, 2], vec![0.0f32, 1.0, 2.0, 0.0]).unwrap();
        let o = run_kernel(node("Where", &[("T", attr::ty(DataType::Float))]), vec![x], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 2]);
        assert_eq!(o[0].as_slice::<i64>().unwrap(), &[0, 1, 1, 0]);
        let s = run_kernel(node("Where", &[("T", attr::ty(DataType::Bool))]), vec![Tensor::scalar(true)], 1).unwrap();
        assert_eq!(s[0].dims(), &[1, 0]);
    }
}
