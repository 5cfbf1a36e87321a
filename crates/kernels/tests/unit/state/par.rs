use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use ferroflow_kernels::state::par::{run_chunks, zip1, zip2, zip3, zip4, PAR_MIN};

#[test]
fn a_panicking_chunk_stops_the_rest_and_panics_on_the_caller_after_the_others_finish() {
    use std::sync::atomic::AtomicBool;
    for bad in [0usize, 5, 63] {
        let ran = AtomicUsize::new(0);
        let returned = AtomicBool::new(false);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run_chunks(64, &|i| {
                assert!(!returned.load(Ordering::SeqCst), "chunk {i} ran after run_chunks returned");
                std::thread::sleep(std::time::Duration::from_micros(200));
                ran.fetch_add(1, Ordering::SeqCst);
                if i == bad {
                    panic!("chunk {i} fails");
                }
            })
        }));
        returned.store(true, Ordering::SeqCst);
        let p = r.expect_err("the panic reaches the caller");
        let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(msg, format!("chunk {bad} fails"));
        let settled = ran.load(Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(ran.load(Ordering::SeqCst), settled, "no chunk runs after the call ended");
    }
}

#[test]
fn splits_cover_everything() {
    let n = 3 * PAR_MIN + 7;
    let mut a = vec![1.0f32; n];
    let mut b = vec![2.0f32; n];
    let mut c = vec![0.0f32; n];
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    zip3(&mut a, &mut b, &mut c, &x, |a, b, c, x| {
        for i in 0..a.len() {
            c[i] = a[i] + b[i] + x[i];
        }
    });
    assert!(c.iter().enumerate().all(|(i, &v)| v == 3.0 + i as f32));
    zip1(&mut a, &x, |a, x| a.iter_mut().zip(x).for_each(|(a, x)| *a += x));
    assert_eq!(a[n - 1], n as f32);
    zip2(&mut a, &mut b, &x, |a, b, _| a.iter_mut().zip(b.iter()).for_each(|(a, b)| *a = *b));
    assert!(a.iter().all(|&v| v == 2.0));
    let mut d = vec![0.0f32; n];
    zip4(&mut a, &mut b, &mut c, &mut d, &x, |a, b, c, d, x| {
        for i in 0..a.len() {
            d[i] = a[i] * b[i] + c[i] - x[i];
        }
    });
    assert!(d.iter().all(|&v| v == 7.0));
}

#[test]
fn runs_inside_a_busy_pool_without_deadlock() {
    // Every pool thread updates under a lock that the others also take.
    let lock = std::sync::Mutex::new(vec![0.0f64; PAR_MIN * 2]);
    let x = vec![1.0f64; PAR_MIN * 2];
    rayon::scope(|s| {
        for _ in 0..8 {
            s.spawn(|_| {
                let mut g = lock.lock().unwrap();
                zip1(&mut g, &x, |a, x| a.iter_mut().zip(x).for_each(|(a, x)| *a += x));
            });
        }
    });
    assert!(lock.lock().unwrap().iter().all(|&v| v == 8.0));
}
