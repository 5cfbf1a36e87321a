//! An allocator for the fuzz tests that notes the largest single allocation of each
//! thread: a small input must not make a decoder reserve what it declares. A test binary
//! installs it with `#[global_allocator] static ALLOC: WatchedAlloc = largest::ALLOCATOR;`.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferroflow_core::WatchedAlloc;

/// The system allocator, noting each thread's largest allocation.
pub const ALLOCATOR: WatchedAlloc = WatchedAlloc::allocations(note);

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// The largest allocation of any thread since [`reset_anywhere`] (kernels run on the
/// executor's threads, not the test's).
static ANYWHERE: AtomicUsize = AtomicUsize::new(0);

fn note(n: usize) {
    let _ = LARGEST.try_with(|c| c.set(c.get().max(n)));
    ANYWHERE.fetch_max(n, Ordering::Relaxed);
}

/// Forgets the largest allocation of every thread so far.
#[allow(dead_code)] // The kernel fuzzer's; the framing tests include this file too.
pub fn reset_anywhere() {
    ANYWHERE.store(0, Ordering::Relaxed);
}

/// The largest allocation of any thread since [`reset_anywhere`].
#[allow(dead_code)] // As above.
pub fn largest_anywhere() -> usize {
    ANYWHERE.load(Ordering::Relaxed)
}

/// Forgets this thread's largest allocation so far.
pub fn reset() {
    LARGEST.with(|c| c.set(0));
}

/// This thread's largest allocation since [`reset`].
pub fn largest() -> usize {
    LARGEST.with(Cell::get)
}
