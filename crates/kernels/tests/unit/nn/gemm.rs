use ferroflow_kernels::nn::gemm::{copies_better, transposes_better, GemmScalar, Mat, PAR_GEMM_MIN};

fn naive(m: usize, n: usize, k: usize, a: Mat<f64>, b: Mat<f64>) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                c[i * n + j] += a.data[i * a.rs + p * a.cs] * b.data[p * b.rs + j * b.cs];
            }
        }
    }
    c
}

/// The m×k and k×n operands of the tests: small integers, so every product is exact.
fn operands(m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let a = (0..m * k).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
    let b = (0..k * n).map(|x| ((x * 5) % 11) as f64 - 5.0).collect();
    (a, b)
}

/// Row-major views of the operands, each transposed (stored k×m, n×k) when asked.
fn views<'a>(
    a: &'a [f64],
    b: &'a [f64],
    (m, n, k): (usize, usize, usize),
    (ta, tb): (bool, bool),
) -> (Mat<'a, f64>, Mat<'a, f64>) {
    (Mat::row_major(a, if ta { m } else { k }, ta), Mat::row_major(b, if tb { k } else { n }, tb))
}

#[test]
fn strided_products_match_naive() {
    let (m, n, k) = (37, 29, 53);
    let (a, b) = operands(m, n, k);
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let (am, bm) = views(&a, &b, (m, n, k), (ta, tb));
        let want = naive(m, n, k, am, bm);
        let mut c = vec![1.0; m * n];
        f64::gemm(m, n, k, am, bm, &mut c, n, false, true);
        assert_eq!(c, want);
        let mut ci = vec![1i64; m * n];
        let ai: Vec<i64> = a.iter().map(|&x| x as i64).collect();
        let bi: Vec<i64> = b.iter().map(|&x| x as i64).collect();
        i64::gemm(m, n, k, Mat { data: &ai, ..cast(am) }, Mat { data: &bi, ..cast(bm) }, &mut ci, n, true, false);
        assert_eq!(ci, want.iter().map(|&x| x as i64 + 1).collect::<Vec<_>>());
    }
}

/// `m`'s strides with no data, to fill in for another element type.
fn cast(m: Mat<f64>) -> Mat<'static, i64> {
    Mat { data: &[], rs: m.rs, cs: m.cs }
}

/// Products above [`PAR_GEMM_MIN`] are split into blocks along the longer output
/// dimension (rows for tall, columns for wide); every block must land in place, also
/// with a padded destination and when accumulating.
#[test]
fn split_products_match_naive() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    for (m, n, k) in [(131, 45, 97), (45, 131, 97)] {
        assert!(m * n * k >= PAR_GEMM_MIN);
        let (a, b) = operands(m, n, k);
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let (am, bm) = views(&a, &b, (m, n, k), (ta, tb));
            let want = naive(m, n, k, am, bm);
            let ldc = n + 3;
            let mut c = vec![2.0; m * ldc];
            pool.install(|| f64::gemm(m, n, k, am, bm, &mut c, ldc, true, true));
            for i in 0..m {
                for j in 0..n {
                    assert_eq!(c[i * ldc + j], want[i * n + j] + 2.0, "({i}, {j}) of {m}x{n}x{k} ta={ta} tb={tb}");
                }
                assert_eq!(&c[i * ldc + n..i * ldc + ldc], &[2.0; 3], "padding of row {i} untouched");
            }
        }
    }
}

/// `a · b` into a destination with two padding columns, accumulating or not, split or not,
/// and into a fresh buffer, against `want`.
fn check_padded(
    pool: &rayon::ThreadPool,
    (m, n, k): (usize, usize, usize),
    am: Mat<f64>,
    bm: Mat<f64>,
    want: &[f64],
    label: &str,
) {
    for (accumulate, parallel) in [(false, false), (true, true), (false, true)] {
        let ldc = n + 2;
        let mut c = vec![2.0; m * ldc];
        pool.install(|| f64::gemm(m, n, k, am, bm, &mut c, ldc, accumulate, parallel));
        for i in 0..m {
            for j in 0..n {
                let w = want[i * n + j] + if accumulate { 2.0 } else { 0.0 };
                assert_eq!(c[i * ldc + j], w, "({i}, {j}) {label} accumulate={accumulate}");
            }
            assert_eq!(&c[i * ldc + n..i * ldc + ldc], &[2.0; 2], "padding of row {i} untouched");
        }
    }
    assert_eq!(pool.install(|| f64::product(m, n, k, am, bm, true).unwrap()), want);
}

/// A large transposed right operand goes through the transposed product
/// ([`transposes_better`]) when the left operand has few rows, or more rows but still
/// fewer moves than copying the operand would take: with a padded destination,
/// accumulating or not, split or not, the result lands in place.
#[test]
fn large_transposed_rhs_matches_naive() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for (m, n, k) in [(5, 1030, 520), (130, 1030, 520)] {
        let (a, b) = operands(m, n, k);
        for ta in [false, true] {
            let am = Mat::row_major(&a, if ta { m } else { k }, ta);
            let bm = Mat::row_major(&b, k, true);
            assert!(!copies_better(m, n, k, &bm) && transposes_better(m, n, k, &bm));
            let want = naive(m, n, k, am, bm);
            check_padded(&pool, (m, n, k), am, bm, &want, &format!("{m}x{n}x{k} ta={ta}"));
        }
    }
}

/// A large transposed right operand with many rows on the left is copied row by row first
/// ([`copies_better`]): tall and wide results, padded, accumulating or not, split or not,
/// and an operand view that starts inside a larger buffer with a wider stride.
#[test]
fn copied_transposed_rhs_matches_naive() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for (m, n, k) in [(300, 70, 260), (130, 333, 97)] {
        let (a, b) = operands(m, n, k);
        // `b` stored n × (k + 3) from element 2: a transposed view with row stride 1.
        let mut wide = vec![9.0; 2 + n * (k + 3)];
        for j in 0..n {
            for p in 0..k {
                wide[2 + j * (k + 3) + p] = b[j * k + p];
            }
        }
        let bm = Mat { data: &wide[2..], rs: 1, cs: k + 3 };
        assert!(copies_better(m, n, k, &bm));
        for ta in [false, true] {
            let am = Mat::row_major(&a, if ta { m } else { k }, ta);
            let want = naive(m, n, k, am, bm);
            check_padded(&pool, (m, n, k), am, bm, &want, &format!("{m}x{n}x{k} ta={ta}"));
        }
    }
}

#[test]
fn empty_inner_dim_zeroes_or_keeps() {
    let mut c = vec![3.0f32; 4];
    f32::gemm(2, 2, 0, Mat { data: &[], rs: 0, cs: 1 }, Mat { data: &[], rs: 2, cs: 1 }, &mut c, 2, true, false);
    assert_eq!(c, vec![3.0; 4]);
    f32::gemm(2, 2, 0, Mat { data: &[], rs: 0, cs: 1 }, Mat { data: &[], rs: 2, cs: 1 }, &mut c, 2, false, false);
    assert_eq!(c, vec![0.0; 4]);
}

/// `product` writes into fresh, unfilled memory: small, split and deep (several passes
/// over k) products equal the naive ones, and empty shapes give zeros.
#[test]
fn products_into_fresh_buffers_match_naive() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for (m, n, k) in [(7, 5, 3), (131, 45, 97), (45, 131, 97), (9, 70, 1500)] {
        let (a, b) = operands(m, n, k);
        for (ta, tb) in [(false, false), (true, true)] {
            let (am, bm) = views(&a, &b, (m, n, k), (ta, tb));
            let got = pool.install(|| f64::product(m, n, k, am, bm, true).unwrap());
            assert_eq!(got, naive(m, n, k, am, bm), "{m}x{n}x{k} ta={ta} tb={tb}");
            let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
            let b32: Vec<f32> = b.iter().map(|&x| x as f32).collect();
            let am32 = Mat { data: &a32[..], rs: am.rs, cs: am.cs };
            let bm32 = Mat { data: &b32[..], rs: bm.rs, cs: bm.cs };
            let got32 = f32::product(m, n, k, am32, bm32, false).unwrap();
            assert!(got32.iter().zip(&got).all(|(x, y)| (*x as f64 - y).abs() <= 1e-3 * y.abs().max(1.0)));
        }
    }
    let empty = Mat { data: &[][..], rs: 0, cs: 1 };
    assert_eq!(f32::product(2, 3, 0, empty, Mat { data: &[][..], rs: 3, cs: 1 }, true).unwrap(), vec![0.0; 6]);
    assert!(f64::product(
        0,
        3,
        4,
        Mat { data: &[][..], rs: 4, cs: 1 },
        Mat { data: &[0.0; 12][..], rs: 3, cs: 1 },
        true
    )
    .unwrap()
    .is_empty());
    assert_eq!(
        i32::product(1, 1, 2, Mat { data: &[2, 3][..], rs: 2, cs: 1 }, Mat { data: &[4, 5][..], rs: 1, cs: 1 }, false)
            .unwrap(),
        vec![23]
    );
}
