use ferroflow_kernels::math::bcast::{
    bcast_apply, bcast_apply_inplace_a, bcast_apply_inplace_b, broadcast_shape, map_inplace, map_unary, Plan,
};

/// Reference broadcast by explicit index arithmetic.
fn naive(a: &[i64], sa: &[usize], b: &[i64], sb: &[usize]) -> (Vec<usize>, Vec<i64>) {
    let out = broadcast_shape(sa, sb).unwrap();
    let n: usize = out.iter().product();
    let idx_of = |flat: usize, s: &[usize]| -> usize {
        let mut rem = flat;
        let mut coords = vec![0; out.len()];
        for j in (0..out.len()).rev() {
            coords[j] = rem % out[j];
            rem /= out[j];
        }
        let off = out.len() - s.len();
        let mut i = 0;
        for (j, &d) in s.iter().enumerate() {
            i = i * d + if d == 1 { 0 } else { coords[j + off] };
        }
        i
    };
    (out.clone(), (0..n).map(|f| a[idx_of(f, sa)] * 1000 + b[idx_of(f, sb)]).collect())
}

fn check(sa: &[usize], sb: &[usize]) {
    let a: Vec<i64> = (0..sa.iter().product::<usize>() as i64).collect();
    let b: Vec<i64> = (0..sb.iter().product::<usize>() as i64).collect();
    let (shape, want) = naive(&a, sa, &b, sb);
    let plan = Plan::new([sa, sb]).unwrap();
    assert_eq!(plan.out_shape(), &shape[..]);
    let mut out = vec![0i64; plan.len()];
    bcast_apply(&plan, &a, &b, &mut out, |x, y| x * 1000 + y);
    assert_eq!(out, want, "{sa:?} vs {sb:?}");
    if a.len() == plan.len() {
        let mut a2 = a.clone();
        bcast_apply_inplace_a(&plan, &mut a2, &b, |x, y| x * 1000 + y);
        assert_eq!(a2, want);
    }
    if b.len() == plan.len() {
        let mut b2 = b.clone();
        bcast_apply_inplace_b(&plan, &a, &mut b2, |x, y| x * 1000 + y);
        assert_eq!(b2, want);
    }
}

#[test]
fn shapes_and_values() {
    check(&[2, 3], &[2, 3]);
    check(&[], &[4]);
    check(&[4], &[]);
    check(&[], &[]);
    check(&[2, 3], &[3]);
    check(&[2, 3], &[2, 1]);
    check(&[2, 1, 4], &[3, 1]);
    check(&[1, 3, 1, 5], &[2, 1, 4, 1]);
    check(&[2, 3, 4], &[2, 1, 4]);
    check(&[5, 1], &[1, 1, 7]);
    check(&[0, 3], &[3]);
    check(&[1, 1], &[1]);
    // Large enough to take the parallel path, with a broadcast middle dimension.
    check(&[40, 30, 50], &[40, 1, 50]);
    check(&[300, 200], &[300, 1]);
    check(&[70000], &[1]);
}

#[test]
fn incompatible() {
    assert!(broadcast_shape(&[2, 3], &[4]).is_none());
    assert!(broadcast_shape(&[0], &[5]).is_none());
    assert_eq!(broadcast_shape(&[0], &[1]).unwrap(), vec![0]);
    assert!(Plan::new([&[2usize][..], &[2][..], &[3][..]]).is_none());
}

#[test]
fn runs_cover_ranges() {
    let plan = Plan::new([&[3usize, 4][..], &[4][..]]).unwrap();
    let mut seen = vec![];
    plan.for_each_run(2, 9, |pos, n, offs, steps| seen.push((pos, n, offs, steps)));
    // Collapses to dims [3, 4]: b broadcast along rows.
    assert_eq!(seen, vec![(2, 2, [2, 2], [1, 1]), (4, 4, [4, 0], [1, 1]), (8, 1, [8, 0], [1, 1])]);
    let mut s = vec![0u8; 100];
    map_inplace(&mut s, |v| v + 1);
    assert_eq!(map_unary(&[100], &s, |v| v as i32 * 2).unwrap()[99], 2);
}
