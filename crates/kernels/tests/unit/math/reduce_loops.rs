use ferroflow_kernels::math::reduce_loops::{reduce_axes, MaxR, MinR, ProdR, SumR};

/// Reference: sum by explicit coordinates.
fn naive_sum(x: &[i64], dims: &[usize], reduced: &[bool]) -> Vec<i64> {
    let out_dims: Vec<usize> = dims.iter().zip(reduced).filter(|(_, &r)| !r).map(|(&d, _)| d).collect();
    let mut out = vec![0i64; out_dims.iter().product()];
    for (flat, &v) in x.iter().enumerate() {
        let mut rem = flat;
        let mut coords = vec![0; dims.len()];
        for j in (0..dims.len()).rev() {
            coords[j] = rem % dims[j];
            rem /= dims[j];
        }
        let mut o = 0;
        for (j, &c) in coords.iter().enumerate() {
            if !reduced[j] {
                o = o * dims[j] + c;
            }
        }
        out[o] += v;
    }
    out
}

fn check(dims: &[usize], reduced: &[bool]) {
    let n: usize = dims.iter().product();
    let x: Vec<i64> = (0..n as i64).map(|v| v % 7 - 3 + v / 5).collect();
    assert_eq!(
        reduce_axes::<i64, SumR>(&x, dims, reduced).unwrap(),
        naive_sum(&x, dims, reduced),
        "{dims:?} {reduced:?}"
    );
}

#[test]
fn matches_naive() {
    check(&[5], &[true]);
    check(&[3, 4], &[false, true]);
    check(&[3, 4], &[true, false]);
    check(&[2, 3, 4], &[false, true, false]);
    check(&[2, 3, 4], &[true, false, true]);
    check(&[2, 3, 4, 5], &[true, false, true, false]);
    check(&[2, 1, 4, 5], &[false, true, true, false]);
    check(&[3, 1], &[false, true]);
    check(&[2, 3], &[false, false]);
    // Parallel paths: long row, wide columns, narrow columns, many middles.
    check(&[3, 50_000], &[false, true]);
    check(&[100_000], &[true]);
    check(&[10, 5000], &[true, false]);
    check(&[20_000, 3], &[true, false]);
    check(&[40, 100, 30], &[false, true, false]);
    check(&[2, 30_000, 2], &[true, false, true]);
}

#[test]
fn empty_and_reducers() {
    assert_eq!(reduce_axes::<f32, MaxR>(&[], &[0, 3], &[true, false]).unwrap(), vec![f32::NEG_INFINITY; 3]);
    assert_eq!(reduce_axes::<i32, ProdR>(&[], &[0, 2], &[true, false]).unwrap(), vec![1, 1]);
    assert_eq!(reduce_axes::<f32, SumR>(&[], &[0, 2], &[false, true]).unwrap(), Vec::<f32>::new());
    let m = reduce_axes::<f32, MaxR>(&[1., f32::NAN, 2.], &[3], &[true]).unwrap();
    assert!(m[0].is_nan());
    assert_eq!(reduce_axes::<u8, MinR>(&[5, 3, 9, 1], &[2, 2], &[false, true]).unwrap(), vec![3, 1]);
}
