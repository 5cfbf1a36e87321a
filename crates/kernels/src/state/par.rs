//! Splitting an element-wise update over the cores. Variable updates run under the
//! variable's write lock, so they use scoped OS threads, not rayon: a rayon thread waiting
//! for its chunks may pick up another queued kernel that needs the same lock, and deadlock.

use std::sync::OnceLock;

/// Tensors at least this large are updated on several threads.
pub const PAR_MIN: usize = 32 * 1024;

fn cores() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8))
}

/// Number of parts to split `n` elements into.
fn parts(n: usize) -> usize {
    if n < PAR_MIN {
        1
    } else {
        cores().min(n / (PAR_MIN / 2)).max(1)
    }
}

/// Runs `jobs` concurrently: all but the first on scoped threads (inline if a thread
/// cannot be started), the first on the calling thread.
fn run_all<J: FnOnce() + Send>(jobs: Vec<J>) {
    std::thread::scope(|s| {
        let mut it = jobs.into_iter();
        let first = it.next();
        let mut inline = Vec::new();
        for j in it {
            // On failure the closure is lost with the error, so spawn a shim holding it.
            let cell = std::sync::Mutex::new(Some(j));
            let cell = std::sync::Arc::new(cell);
            let c2 = cell.clone();
            let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                if let Some(j) = c2.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    j()
                }
            });
            if spawned.is_err() {
                inline.push(cell);
            }
        }
        if let Some(j) = first {
            j();
        }
        for c in inline {
            if let Some(j) = c.lock().unwrap_or_else(|e| e.into_inner()).take() {
                j()
            }
        }
    });
}

/// `f(a_part, x_part)` over matching parts.
pub fn zip1<T: Send + Sync>(a: &mut [T], x: &[T], f: impl Fn(&mut [T], &[T]) + Sync) {
    let k = parts(a.len());
    if k <= 1 {
        return f(a, x);
    }
    let len = a.len().div_ceil(k);
    let f = &f;
    run_all(a.chunks_mut(len).zip(x.chunks(len)).map(|(a, x)| move || f(a, x)).collect());
}

/// `f(a_part, b_part, x_part)` over matching parts.
pub fn zip2<T: Send + Sync>(a: &mut [T], b: &mut [T], x: &[T], f: impl Fn(&mut [T], &mut [T], &[T]) + Sync) {
    let k = parts(a.len());
    if k <= 1 {
        return f(a, b, x);
    }
    let len = a.len().div_ceil(k);
    let f = &f;
    run_all(
        a.chunks_mut(len).zip(b.chunks_mut(len)).zip(x.chunks(len)).map(|((a, b), x)| move || f(a, b, x)).collect(),
    );
}

/// `f(a_part, b_part, c_part, x_part)` over matching parts.
pub fn zip3<T: Send + Sync>(
    a: &mut [T],
    b: &mut [T],
    c: &mut [T],
    x: &[T],
    f: impl Fn(&mut [T], &mut [T], &mut [T], &[T]) + Sync,
) {
    let k = parts(a.len());
    if k <= 1 {
        return f(a, b, c, x);
    }
    let len = a.len().div_ceil(k);
    let f = &f;
    run_all(
        a.chunks_mut(len)
            .zip(b.chunks_mut(len))
            .zip(c.chunks_mut(len))
            .zip(x.chunks(len))
            .map(|(((a, b), c), x)| move || f(a, b, c, x))
            .collect(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
