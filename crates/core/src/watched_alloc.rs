//! [`WatchedAlloc`]: the system allocator, telling a test binary the size of every block it
//! hands out and takes back. Tests that bound what code allocates (the decoders' fuzzers,
//! the memory a registered graph holds) install it as their `#[global_allocator]`.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, calling `allocated` with the size of every block it hands out
/// and `freed` with the size of every block it takes back; a reallocation gives back the
/// old block, then hands out the new one. The calls run inside the allocator: they must
/// not allocate (atomics and `const` thread-locals do not).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use ferroflow_core::WatchedAlloc;
///
/// static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// fn note(n: usize) {
///     LARGEST.fetch_max(n, Ordering::Relaxed);
/// }
/// // In a test binary: `#[global_allocator]` in front.
/// static ALLOC: WatchedAlloc = WatchedAlloc::allocations(note);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WatchedAlloc {
    /// Called with the size of each block handed out.
    pub allocated: fn(usize),
    /// Called with the size of each block taken back.
    pub freed: fn(usize),
}

impl WatchedAlloc {
    /// Watches what is handed out only.
    pub const fn allocations(allocated: fn(usize)) -> WatchedAlloc {
        WatchedAlloc { allocated, freed: |_| {} }
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for WatchedAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        (self.allocated)(l.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        (self.allocated)(l.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        (self.freed)(l.size());
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        (self.freed)(l.size());
        (self.allocated)(new);
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { System.realloc(p, l, new) }
    }
}
