use ferroflow_kernels::array::strided::strided_gather;

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
        // Large enough for the parallel path (rows written into uninitialized room):
        // contiguous rows (a Slice), broadcast rows, strided rows.
        (7, vec![16, 80, 96], vec![9000, 100, 1]),
        (3, vec![200, 300], vec![500, 0]),
        (1, vec![100, 400], vec![1000, 2]),
    ];
    for (off, d, s) in cases {
        assert_eq!(strided_gather(&src, off, &d, &s).unwrap(), naive(&src, off, &d, &s), "{d:?} {s:?}");
    }
    let strs: Vec<Vec<u8>> = (0..6).map(|i| vec![i as u8]).collect();
    assert_eq!(
        strided_gather(&strs, 0, &[3, 2], &[1, 3]).unwrap(),
        vec![vec![0], vec![3], vec![1], vec![4], vec![2], vec![5]]
    );
}
