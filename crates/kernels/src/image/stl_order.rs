//! The orders libstdc++ leaves among equal elements, for kernels whose ties TensorFlow breaks
//! with `std::priority_queue` (a binary heap: `std::push_heap` / `std::pop_heap`) and
//! `std::sort` (introsort: median-of-three quicksort, heapsort past the depth limit, a final
//! insertion sort), compared only by a key. Reproducing these algorithms step by step gives
//! TensorFlow's outputs even where the comparison cannot tell elements apart.
//!
//! `less(a, b)` is the C++ comparator (`a` goes after `b` in a max-heap, before it in a sort).

/// `std::__push_heap`: moves `value` up from `hole` towards `top`.
fn push_up<T: Copy>(v: &mut [T], mut hole: usize, top: usize, value: T, less: &impl Fn(&T, &T) -> bool) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[parent], &value) {
            break;
        }
        v[hole] = v[parent];
        hole = parent;
    }
    v[hole] = value;
}

/// `std::__adjust_heap`: fills the hole at `hole` of the heap `v[..len]` and places `value`.
fn adjust<T: Copy>(v: &mut [T], mut hole: usize, len: usize, value: T, less: &impl Fn(&T, &T) -> bool) {
    let top = hole;
    let mut child = hole;
    while len >= 1 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len >= 2 && len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    push_up(v, hole, top, value, less);
}

/// `std::priority_queue::push`: appends `x` and restores the heap.
pub(crate) fn heap_push<T: Copy>(v: &mut Vec<T>, x: T, less: &impl Fn(&T, &T) -> bool) {
    v.push(x);
    let last = v.len() - 1;
    push_up(v, last, 0, x, less);
}

/// `std::priority_queue::top` then `pop`: the greatest element by `less`.
pub(crate) fn heap_pop<T: Copy>(v: &mut Vec<T>, less: &impl Fn(&T, &T) -> bool) -> Option<T> {
    let top = *v.first()?;
    let last = v.len() - 1;
    if last > 0 {
        let value = v[last];
        v[last] = v[0];
        adjust(v, 0, last, value, less);
    }
    v.pop();
    Some(top)
}

/// `std::__make_heap`.
fn make_heap<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = v[parent];
        adjust(v, parent, len, value, less);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// `std::__partial_sort(first, last, last)`: heapsort.
fn heap_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    make_heap(v, less);
    let mut last = v.len();
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust(v, 0, last, value, less);
    }
}

/// `std::__move_median_to_first`.
fn median_to_first<T: Copy>(v: &mut [T], a: usize, b: usize, c: usize, less: &impl Fn(&T, &T) -> bool) {
    let m = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(0, m);
}

/// `std::__unguarded_partition_pivot`: the cut after partitioning around the median of three.
fn partition<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) -> usize {
    let n = v.len();
    median_to_first(v, 1, n / 2, n - 1, less);
    let (mut first, mut last) = (1, n);
    loop {
        while less(&v[first], &v[0]) {
            first += 1;
        }
        last -= 1;
        while less(&v[0], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

const THRESHOLD: usize = 16;

fn introsort_loop<T: Copy>(v: &mut [T], mut depth: u32, less: &impl Fn(&T, &T) -> bool) {
    let mut end = v.len();
    while end > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[..end], less);
            return;
        }
        depth -= 1;
        let cut = partition(&mut v[..end], less);
        introsort_loop(&mut v[cut..end], depth, less);
        end = cut;
    }
}

/// `std::__unguarded_linear_insert`.
fn linear_insert<T: Copy>(v: &mut [T], mut i: usize, less: &impl Fn(&T, &T) -> bool) {
    let value = v[i];
    while i > 0 && less(&value, &v[i - 1]) {
        v[i] = v[i - 1];
        i -= 1;
    }
    v[i] = value;
}

/// `std::__insertion_sort`.
fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            let value = v[i];
            v.copy_within(0..i, 1);
            v[0] = value;
        } else {
            linear_insert(v, i, less);
        }
    }
}

/// `std::sort` with comparator `less`.
pub(crate) fn sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let n = v.len();
    if n == 0 {
        return;
    }
    introsort_loop(v, 2 * n.ilog2(), less);
    if n > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..n {
            linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (key, original position) pairs compared by key only.
    fn keyed(keys: &[i32]) -> Vec<(i32, usize)> {
        keys.iter().copied().zip(0..).collect()
    }

    #[test]
    fn sort_orders_keys_like_any_sort() {
        let less = |a: &(i32, usize), b: &(i32, usize)| a.0 < b.0;
        for n in [0usize, 1, 2, 5, 16, 17, 40, 300] {
            let keys: Vec<i32> = (0..n).map(|i| ((i * 7919 + 13) % 23) as i32).collect();
            let mut v = keyed(&keys);
            sort(&mut v, &less);
            let mut want = keys.clone();
            want.sort_unstable();
            assert_eq!(v.iter().map(|p| p.0).collect::<Vec<_>>(), want, "n = {n}");
        }
    }

    #[test]
    fn small_sorts_keep_ties_in_order_and_large_ones_follow_introsort() {
        let less = |a: &(i32, usize), b: &(i32, usize)| a.0 < b.0;
        // At most 16 elements: insertion sort, stable.
        let mut v = keyed(&[2, 1, 2, 1, 2, 1]);
        sort(&mut v, &less);
        assert_eq!(v.iter().map(|p| p.1).collect::<Vec<_>>(), [1, 3, 5, 0, 2, 4]);
        // 20 equal keys: the median-of-three partition moves them (g++'s std::sort gives this).
        let mut v = keyed(&[0; 20]);
        sort(&mut v, &less);
        let order: Vec<usize> = v.iter().map(|p| p.1).collect();
        assert_eq!(order, [10, 19, 18, 17, 16, 15, 14, 13, 12, 11, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    }

    #[test]
    fn heap_pops_greatest_first_and_breaks_ties_like_libstdcxx() {
        // The order g++'s std::priority_queue pops these in.
        let less = |a: &(i32, usize), b: &(i32, usize)| a.0 < b.0;
        let mut h = Vec::new();
        for x in keyed(&[3, 5, 5, 1, 5, 3]) {
            heap_push(&mut h, x, &less);
        }
        let mut out = Vec::new();
        while let Some(x) = heap_pop(&mut h, &less) {
            out.push(x);
        }
        assert_eq!(out, [(5, 1), (5, 2), (5, 4), (3, 5), (3, 0), (1, 3)]);
    }
}
