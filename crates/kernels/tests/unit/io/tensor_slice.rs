use ferroflow_core::Storage;

use ferroflow_kernels::io::tensor_slice::{
    copy_storage_overlap, overlap_len, parse_shape_and_slice, Bounds, Extent, TensorSlice,
};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn keys_match_tensorflow() {
    // The slice keys in the index of a checkpoint TensorFlow 2.21 wrote for
    // `fixed_size_partitioner` variables a [10,4] (2 parts), c [2,6] (3 parts on axis 1)
    // and scope/b [300,2] (3 parts).
    let cases = [
        ("a", "10 4 0,5:0,4", "00610001010280858084"),
        ("a", "10 4 5,5:0,4", "00610001010285858084"),
        ("c", "2 6 0,2:4,2", "00630001010280828482"),
        ("scope/b", "300 2 0,100:0,2", "0073636f70652f620001010280c0648082"),
        ("scope/b", "300 2 200,100:0,2", "0073636f70652f6200010102c0c8c0648082"),
    ];
    for (name, spec, want) in cases {
        let (_, slice) = parse_shape_and_slice(spec).unwrap();
        assert_eq!(hex(&slice.key(name)), want, "{name} {spec}");
    }
    // A whole dimension is encoded as start 0, length -1.
    assert_eq!(hex(&TensorSlice::parse("-:1,2").unwrap().key("x")), "007800010102807f8182");
}

#[test]
fn parse_and_print() {
    let (full, s) = parse_shape_and_slice("10 4 0,5:-").unwrap();
    assert_eq!(full, vec![10, 4]);
    assert_eq!(s.extents(), &[Extent::Range { start: 0, length: 5 }, Extent::Full]);
    assert_eq!(s.to_string(), "0,5:-");
    assert_eq!(s.bounds(&full).unwrap(), vec![(0, 5), (0, 4)]);
    assert!(!s.covers(&full));
    assert!(TensorSlice::parse("0,10:0,4").unwrap().covers(&[10, 4]));
    assert!(TensorSlice::full(2).covers(&[10, 4]));
    assert_eq!(TensorSlice::from_proto(&s.to_proto()).unwrap(), s);
    let (full, s) = parse_shape_and_slice("7 -").unwrap();
    assert_eq!((full, s.rank()), (vec![7], 1));
    for bad in ["", "10 4", "10 4 0,5", "10 x 0,5:-", "10 4 0,11:-", "10 4 a,5:-", "10 4 0;5:-", "4 -1,2"] {
        let e = parse_shape_and_slice(bad).unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument, "{bad}");
        assert!(e.message.contains(bad), "{bad}: {}", e.message);
    }
}

/// Element (i, j, k) of a 3-d tensor of shape `full`, as a distinct value.
fn value(full: &[usize], idx: &[usize]) -> i64 {
    idx.iter().zip(full).fold(0, |acc, (&i, &d)| acc * d as i64 + i as i64)
}

fn fill(full: &[usize], b: &[(usize, usize)]) -> Vec<i64> {
    let mut out = Vec::new();
    for i in b[0].0..b[0].0 + b[0].1 {
        for j in b[1].0..b[1].0 + b[1].1 {
            for k in b[2].0..b[2].0 + b[2].1 {
                out.push(value(full, &[i, j, k]));
            }
        }
    }
    out
}

#[test]
fn pieces_reassemble_under_any_other_partitioning() {
    let full = [5usize, 6, 7];
    // Saved in 3 parts along axis 1, read back as 2 parts along axis 0 and as one whole.
    let saved: Vec<Bounds> =
        vec![vec![(0, 5), (0, 2), (0, 7)], vec![(0, 5), (2, 2), (0, 7)], vec![(0, 5), (4, 2), (0, 7)]];
    let wanted: Vec<Bounds> = vec![
        vec![(0, 3), (0, 6), (0, 7)],
        vec![(3, 2), (0, 6), (0, 7)],
        vec![(0, 5), (0, 6), (0, 7)],
        vec![(1, 3), (1, 4), (2, 3)],
    ];
    for want in &wanted {
        let n: usize = want.iter().map(|b| b.1).product();
        let mut dst = Storage::I64(vec![-1; n]);
        let mut covered = 0;
        for part in &saved {
            covered += overlap_len(part, want);
            copy_storage_overlap(&Storage::I64(fill(&full, part)), part, &mut dst, want).unwrap();
        }
        assert_eq!(covered, n);
        assert_eq!(dst, Storage::I64(fill(&full, want)), "{want:?}");
    }
    // Disjoint boxes copy nothing.
    let mut dst = Storage::I64(vec![-1; 4]);
    let b: Bounds = vec![(0, 1), (0, 2), (0, 2)];
    let far: Bounds = vec![(3, 1), (0, 2), (0, 2)];
    assert_eq!(overlap_len(&b, &far), 0);
    copy_storage_overlap(&Storage::I64(vec![7; 4]), &far, &mut dst, &b).unwrap();
    assert_eq!(dst, Storage::I64(vec![-1; 4]));
    // Strings and scalars.
    let mut s = Storage::Str(vec![Vec::new(); 3]);
    copy_storage_overlap(&Storage::Str(vec![b"x".to_vec(), b"y".to_vec()]), &[(1, 2)], &mut s, &[(0, 3)]).unwrap();
    assert_eq!(s, Storage::Str(vec![vec![], b"x".to_vec(), b"y".to_vec()]));
    let mut f = Storage::F32(vec![0.0]);
    copy_storage_overlap(&Storage::F32(vec![2.5]), &[], &mut f, &[]).unwrap();
    assert_eq!(f, Storage::F32(vec![2.5]));
    assert!(copy_storage_overlap(&Storage::F32(vec![2.5]), &[], &mut Storage::F64(vec![0.0]), &[]).is_err());
}
