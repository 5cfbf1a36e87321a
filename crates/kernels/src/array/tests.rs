//! Tests of the family's kernels, one module per kernel file, run through the kernel
//! registry (`run_kernel`) as the executor runs them.

use ferroflow_core::{DataType, Status, Tensor};

mod concat {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    fn concat(xs: Vec<Tensor>, axis: i32) -> Result<Tensor, Status> {
        let n = node(
            "ConcatV2",
            &[("T", attr::ty(xs[0].dtype())), ("N", attr::int(xs.len() as i64)), ("Tidx", attr::ty(DataType::Int32))],
        );
        let mut inputs = xs;
        inputs.push(Tensor::scalar(axis));
        Ok(run_kernel(n, inputs, 1)?.remove(0))
    }

    #[test]
    fn concatenates() {
        let a = Tensor::new(vec![2, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
        let b = Tensor::new(vec![2, 1], vec![5.0f32, 6.]).unwrap();
        let c = concat(vec![a.clone(), b.clone()], -1).unwrap();
        assert_eq!(c.dims(), &[2, 3]);
        assert_eq!(c.as_slice::<f32>().unwrap(), &[1., 2., 5., 3., 4., 6.]);
        let d = concat(vec![a.clone(), a.clone()], 0).unwrap();
        assert_eq!(d.as_slice::<f32>().unwrap(), &[1., 2., 3., 4., 1., 2., 3., 4.]);
        let e = concat(vec![a.clone(), b.clone()], 0).unwrap_err();
        assert!(
            e.message
                .contains("ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,2] vs. shape[1] = [2,1]"),
            "{e}"
        );
        let e = concat(vec![a.clone(), b], 2).unwrap_err();
        assert!(e.message.contains("range [-2, 2), but got 2"));
        let e = concat(vec![a, Tensor::vec(vec![1.0f32])], 0).unwrap_err();
        assert!(e.message.contains("Ranks of all input tensors should match"));
        let s = concat(vec![Tensor::vec(vec![b"a".to_vec()]), Tensor::vec(vec![b"b".to_vec()])], 0).unwrap();
        assert_eq!(s.as_slice::<Vec<u8>>().unwrap(), &[b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn offsets() {
        let n = node("ConcatOffset", &[("N", attr::int(2)), ("shape_type", attr::ty(DataType::Int32))]);
        let o = run_kernel(
            n.clone(),
            vec![Tensor::scalar(1i32), Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![2i32, 5])],
            2,
        )
        .unwrap();
        assert_eq!(o[0].as_slice::<i32>().unwrap(), &[0, 0]);
        assert_eq!(o[1].as_slice::<i32>().unwrap(), &[0, 3]);
        let e = run_kernel(
            n.clone(),
            vec![Tensor::scalar(1i32), Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![3i32, 5])],
            2,
        )
        .unwrap_err();
        assert!(e.message.contains(
            "All dimensions except 1 must match. Input 1 has shape [3 5] and doesn't match input 0 with shape [2 3]."
        ));
        let e = run_kernel(n, vec![Tensor::scalar(3i32), Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![2i32, 5])], 2)
            .unwrap_err();
        assert!(e.message.contains("Concat dim is out of range: 3 vs. 2"));
    }
}

mod fill {
    use super::*;
    use ferroflow_core::attr;

    use crate::testutil::{node, run_kernel};

    #[test]
    fn fill_values_and_errors() {
        let n = node("Fill", &[("T", attr::ty(DataType::Float)), ("index_type", attr::ty(DataType::Int32))]);
        let o = run_kernel(n.clone(), vec![Tensor::vec(vec![2i32, 3]), Tensor::scalar(1.5f32)], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 3]);
        assert_eq!(o[0].as_slice::<f32>().unwrap(), &[1.5; 6]);
        let e = run_kernel(n.clone(), vec![Tensor::vec(vec![-2i32]), Tensor::scalar(1.5f32)], 1).unwrap_err();
        assert!(e.message.contains("Dimension -2 must be >= 0"));
        assert!(run_kernel(n.clone(), vec![Tensor::scalar(2i32), Tensor::scalar(1.5f32)], 1).is_err());
        let e =
            run_kernel(n.clone(), vec![Tensor::vec(vec![1i32 << 30, 1 << 30]), Tensor::scalar(1.5f32)], 1).unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::ResourceExhausted);
        assert!(run_kernel(n, vec![Tensor::vec(vec![2i32]), Tensor::vec(vec![1.5f32])], 1).is_err());
        let s = node("Fill", &[("T", attr::ty(DataType::String)), ("index_type", attr::ty(DataType::Int64))]);
        let o = run_kernel(s, vec![Tensor::vec(vec![2i64]), Tensor::from("ab")], 1).unwrap();
        assert_eq!(o[0].as_slice::<Vec<u8>>().unwrap(), &[b"ab".to_vec(), b"ab".to_vec()]);
    }

    #[test]
    fn zeros_and_ones_like() {
        let x = Tensor::new(vec![2, 1], vec![3i64, 4]).unwrap();
        let z = run_kernel(node("ZerosLike", &[("T", attr::ty(DataType::Int64))]), vec![x.clone()], 1).unwrap();
        assert_eq!(z[0].as_slice::<i64>().unwrap(), &[0, 0]);
        assert_eq!(z[0].dims(), &[2, 1]);
        let o = run_kernel(node("OnesLike", &[("T", attr::ty(DataType::Int64))]), vec![x], 1).unwrap();
        assert_eq!(o[0].as_slice::<i64>().unwrap(), &[1, 1]);
        let s = Tensor::vec(vec![b"a".to_vec()]);
        let z = run_kernel(node("ZerosLike", &[("T", attr::ty(DataType::String))]), vec![s.clone()], 1).unwrap();
        assert_eq!(z[0].as_slice::<Vec<u8>>().unwrap(), &[Vec::<u8>::new()]);
        assert!(run_kernel(node("OnesLike", &[("T", attr::ty(DataType::String))]), vec![s], 1).is_err());
    }
}

mod gather {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    fn g2(params: Tensor, indices: Tensor, axis: i32, bd: i64) -> Result<Tensor, Status> {
        let n = node(
            "GatherV2",
            &[
                ("Tparams", attr::ty(params.dtype())),
                ("Tindices", attr::ty(indices.dtype())),
                ("Taxis", attr::ty(DataType::Int32)),
                ("batch_dims", attr::int(bd)),
            ],
        );
        Ok(run_kernel(n, vec![params, indices, Tensor::scalar(axis)], 1)?.remove(0))
    }

    #[test]
    fn gathers() {
        let p = Tensor::new(vec![3, 2], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
        let o = g2(p.clone(), Tensor::vec(vec![2i64, 0, 2]), 0, 0).unwrap();
        assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize, 2][..], &[5., 6., 1., 2., 5., 6.][..]));
        let o = g2(p.clone(), Tensor::new(vec![1, 2], vec![1i32, 0]).unwrap(), -1, 0).unwrap();
        assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize, 1, 2][..], &[2., 1., 4., 3., 6., 5.][..]));
        let o = g2(p.clone(), Tensor::scalar(1i32), 1, 0).unwrap();
        assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize][..], &[2., 4., 6.][..]));
        let o = g2(p.clone(), Tensor::new(vec![3, 1], vec![1i32, 0, 1]).unwrap(), 1, 1).unwrap();
        assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize, 1][..], &[2., 3., 6.][..]));
        let big = Tensor::new(vec![1000, 64], (0..64000).collect::<Vec<i32>>()).unwrap();
        let o = g2(big, Tensor::vec((0..1000).rev().collect::<Vec<i32>>()), 0, 0).unwrap();
        assert_eq!(o.as_slice::<i32>().unwrap()[64], 998 * 64);
    }

    #[test]
    fn errors() {
        let p = Tensor::vec((0..10).map(|x| x as f32).collect::<Vec<_>>());
        let e = g2(p.clone(), Tensor::vec(vec![1i32, 2, 3, 12]), 0, 0).unwrap_err();
        assert!(e.message.contains("indices[3] = 12 is not in [0, 10)"), "{e}");
        let q = Tensor::new(vec![4, 5], vec![0.0f32; 20]).unwrap();
        let e = g2(q.clone(), Tensor::new(vec![1, 2], vec![1i32, 7]).unwrap(), 1, 0).unwrap_err();
        assert!(e.message.contains("indices[0,1] = 7 is not in [0, 5)"));
        assert!(g2(q.clone(), Tensor::vec(vec![0i32]), 2, 0).unwrap_err().message.contains("at least rank 3"));
        let e = g2(q.clone(), Tensor::new(vec![4, 1], vec![0i32; 4]).unwrap(), 0, 1).unwrap_err();
        assert!(e.message.contains("batch_dims (1) must be less than or equal to axis (0)."));
        let e = g2(q, Tensor::new(vec![3, 1], vec![0i32; 3]).unwrap(), 1, 1).unwrap_err();
        assert!(e.message.contains("params.shape[0]: 4 should be equal to indices.shape[0]: 3"));
        let n = node(
            "Gather",
            &[
                ("Tparams", attr::ty(DataType::Float)),
                ("Tindices", attr::ty(DataType::Int32)),
                ("validate_indices", attr::bool(true)),
            ],
        );
        let e = run_kernel(n, vec![p, Tensor::vec(vec![-1i32])], 1).unwrap_err();
        assert!(e.message.contains("indices[0] = -1 is not in [0, 10)"));
    }
}

mod one_hot {
    use super::*;
    use ferroflow_core::attr;

    use crate::testutil::{node, run_kernel};

    fn oh(idx: Tensor, depth: i32, axis: i64) -> Result<Tensor, Status> {
        let n = node(
            "OneHot",
            &[("T", attr::ty(DataType::Float)), ("TI", attr::ty(idx.dtype())), ("axis", attr::int(axis))],
        );
        Ok(run_kernel(n, vec![idx, Tensor::scalar(depth), Tensor::scalar(1.0f32), Tensor::scalar(-1.0f32)], 1)?
            .remove(0))
    }

    #[test]
    fn encodes() {
        let o = oh(Tensor::vec(vec![0i64, 2, -1, 5]), 3, -1).unwrap();
        assert_eq!(o.dims(), &[4, 3]);
        assert_eq!(o.as_slice::<f32>().unwrap(), &[1., -1., -1., -1., -1., 1., -1., -1., -1., -1., -1., -1.]);
        let o = oh(Tensor::vec(vec![0i32, 2]), 3, 0).unwrap();
        assert_eq!(o.dims(), &[3, 2]);
        assert_eq!(o.as_slice::<f32>().unwrap(), &[1., -1., -1., -1., -1., 1.]);
        assert!(oh(Tensor::vec(vec![0i32]), -1, -1)
            .unwrap_err()
            .message
            .contains("depth must be non-negative, got: -1"));
        assert!(oh(Tensor::vec(vec![0i32]), 2, 2)
            .unwrap_err()
            .message
            .contains("Expected axis to be -1 or between [0, 2)"));
    }
}

mod pack {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    #[test]
    fn pack_and_unpack() {
        let a = Tensor::vec(vec![1i32, 2]);
        let b = Tensor::vec(vec![3i32, 4]);
        let pack =
            |axis| node("Pack", &[("T", attr::ty(DataType::Int32)), ("N", attr::int(2)), ("axis", attr::int(axis))]);
        let o = run_kernel(pack(0), vec![a.clone(), b.clone()], 1).unwrap();
        assert_eq!((o[0].dims(), o[0].as_slice::<i32>().unwrap()), (&[2usize, 2][..], &[1, 2, 3, 4][..]));
        let o = run_kernel(pack(-1), vec![a.clone(), b.clone()], 1).unwrap();
        assert_eq!(o[0].as_slice::<i32>().unwrap(), &[1, 3, 2, 4]);
        assert!(run_kernel(pack(2), vec![a.clone(), b.clone()], 1)
            .unwrap_err()
            .message
            .contains("axis = 2 not in [-2, 2)"));
        let e = run_kernel(pack(0), vec![a, Tensor::vec(vec![1i32])], 1).unwrap_err();
        assert!(e.message.contains("Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [1]"));
        let x = Tensor::new(vec![2, 3], (0..6).collect::<Vec<i32>>()).unwrap();
        let un = |num, axis| {
            node("Unpack", &[("T", attr::ty(DataType::Int32)), ("num", attr::int(num)), ("axis", attr::int(axis))])
        };
        let o = run_kernel(un(3, 1), vec![x.clone()], 3).unwrap();
        assert_eq!(o[2].as_slice::<i32>().unwrap(), &[2, 5]);
        assert_eq!(o[2].dims(), &[2]);
        let e = run_kernel(un(3, 0), vec![x], 3).unwrap_err();
        assert!(e.message.contains("Input shape axis 0 must equal 3, got shape [2,3]"));
    }
}

mod pad {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

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
}

mod partition {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    #[test]
    fn partitions_rows_in_order() {
        let n = node("DynamicPartition", &[("T", attr::ty(DataType::Float)), ("num_partitions", attr::int(3))]);
        let data = Tensor::new(vec![4, 2], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
        let o = run_kernel(n.clone(), vec![data.clone(), Tensor::vec(vec![2i32, 0, 2, 0])], 3).unwrap();
        assert_eq!(o[0], Tensor::new(vec![2, 2], vec![3.0f32, 4., 7., 8.]).unwrap());
        assert_eq!(o[1].dims(), &[0, 2]);
        assert_eq!(o[2], Tensor::new(vec![2, 2], vec![1.0f32, 2., 5., 6.]).unwrap());
        let e = run_kernel(n.clone(), vec![data.clone(), Tensor::vec(vec![0i32, 3, 0, 0])], 3).unwrap_err();
        assert!(e.message.contains("partitions[1] = 3 is not in [0, 3)"), "{e}");
        let e = run_kernel(n.clone(), vec![data.clone(), Tensor::vec(vec![0i32, 1])], 3).unwrap_err();
        assert!(e.message.contains("data.shape must start with partitions.shape"), "{e}");
        let e = run_kernel(n, vec![data, Tensor::vec(vec![0i64, 1, 1, 1])], 3).unwrap_err();
        assert!(e.message.contains("partitions must be int32"), "{e}");
        // A 2-d partitions tensor over strings.
        let n = node("DynamicPartition", &[("T", attr::ty(DataType::String)), ("num_partitions", attr::int(2))]);
        let s: Vec<Vec<u8>> = ["a", "b", "c", "d"].iter().map(|x| x.as_bytes().to_vec()).collect();
        let o = run_kernel(
            n,
            vec![Tensor::new(vec![2, 2], s).unwrap(), Tensor::new(vec![2, 2], vec![1i32, 0, 0, 1]).unwrap()],
            2,
        )
        .unwrap();
        assert_eq!(o[0].as_slice::<Vec<u8>>().unwrap(), &[b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(o[1].as_slice::<Vec<u8>>().unwrap(), &[b"a".to_vec(), b"d".to_vec()]);
    }
}

mod range {
    use super::*;
    use ferroflow_core::attr;

    use crate::testutil::{node, run_kernel};

    fn rng<T: ferroflow_core::TensorType>(s: T, l: T, d: T) -> Result<Tensor, Status> {
        let n = node("Range", &[("Tidx", attr::ty(T::DTYPE))]);
        Ok(run_kernel(n, vec![Tensor::scalar(s), Tensor::scalar(l), Tensor::scalar(d)], 1)?.remove(0))
    }

    #[test]
    fn ranges() {
        assert_eq!(rng(0i32, 5, 2).unwrap().as_slice::<i32>().unwrap(), &[0, 2, 4]);
        assert_eq!(rng(5i64, 0, -2).unwrap().as_slice::<i64>().unwrap(), &[5, 3, 1]);
        assert_eq!(rng(0i32, 0, 1).unwrap().dims(), &[0]);
        assert_eq!(rng(0.5f64, 2.0, 0.3).unwrap().num_elements(), 5);
        assert_eq!(rng(0.0f32, 1.0, 0.25).unwrap().as_slice::<f32>().unwrap(), &[0.0, 0.25, 0.5, 0.75]);
        assert!(rng(0i32, 5, 0).unwrap_err().message.contains("Requires delta != 0: 0"));
        assert!(rng(5i32, 1, 1).unwrap_err().message.contains("Requires start <= limit when delta > 0: 5/1"));
        assert!(rng(1i32, 5, -1).unwrap_err().message.contains("Requires start >= limit when delta < 0: 1/5"));
        assert!(rng(0.0f32, f32::INFINITY, 1.0).unwrap_err().message.contains("Requires ((limit - start) / delta) <="));
        assert!(rng(0.0f32, f32::NAN, 1.0).is_err());
    }
}

mod segment {
    use super::*;
    use ferroflow_core::{attr, DataType};

    use crate::testutil::{node, run_kernel};

    #[test]
    fn segment_sums() {
        let n = node(
            "UnsortedSegmentSum",
            &[
                ("T", attr::ty(DataType::Float)),
                ("Tindices", attr::ty(DataType::Int32)),
                ("Tnumsegments", attr::ty(DataType::Int32)),
            ],
        );
        let data = Tensor::new(vec![4, 2], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
        let run = |ids: Vec<i32>, num: i32| {
            run_kernel(n.clone(), vec![data.clone(), Tensor::vec(ids), Tensor::scalar(num)], 1)
        };
        let o = run(vec![0, 2, 0, -1], 3).unwrap();
        assert_eq!(o[0].dims(), &[3, 2]);
        assert_eq!(o[0].as_slice::<f32>().unwrap(), &[6., 8., 0., 0., 3., 4.]);
        assert!(run(vec![0, 1, 5, -1], 4).unwrap_err().message.contains("segment_ids[2] = 5 is out of range [0, 4)"));
        assert!(run(vec![0, 1, 1, 2], -1)
            .unwrap_err()
            .message
            .contains("Input num_segments == -1 must not be negative."));
        assert!(run(vec![0, 1], 4)
            .unwrap_err()
            .message
            .contains("data.shape = [4,2] does not start with segment_ids.shape = [2]"));
    }

    #[test]
    fn stitches() {
        let n = node("DynamicStitch", &[("T", attr::ty(DataType::Float)), ("N", attr::int(2))]);
        let i0 = Tensor::vec(vec![0i32, 3]);
        let i1 = Tensor::vec(vec![1i32, 3]);
        let d0 = Tensor::new(vec![2, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
        let d1 = Tensor::new(vec![2, 2], vec![5.0f32, 6., 7., 8.]).unwrap();
        let o = run_kernel(n.clone(), vec![i0.clone(), i1.clone(), d0.clone(), d1], 1).unwrap();
        assert_eq!(o[0].dims(), &[4, 2]);
        assert_eq!(o[0].as_slice::<f32>().unwrap(), &[1., 2., 5., 6., 0., 0., 7., 8.]);
        let e = run_kernel(n.clone(), vec![i0.clone(), Tensor::vec(vec![-1i32, 2]), d0.clone(), d0.clone()], 1)
            .unwrap_err();
        assert!(e.message.contains("indices[0] is out of range"));
        let e = run_kernel(n.clone(), vec![i0.clone(), Tensor::vec(vec![i32::MAX, 2]), d0.clone(), d0.clone()], 1)
            .unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument);
        assert!(e.message.contains("2147483648 rows"), "{e}");
        let bad = Tensor::new(vec![2, 3], vec![0.0f32; 6]).unwrap();
        let e = run_kernel(n, vec![i0, i1, d0, bad], 1).unwrap_err();
        assert!(e.message.contains("Need data[0].shape[1:] = data[1].shape[1:]"));
    }
}
