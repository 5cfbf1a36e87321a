//! The process allocator (mimalloc) and the one option this binary changes in it.

/// mimalloc's environment variable for how long freed memory stays committed (ms; -1: always).
pub const PURGE_DELAY_ENV: &str = "MIMALLOC_PURGE_DELAY";

/// `mi_option_purge_delay` in mimalloc.h (the bindings name no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps the pages the process frees committed, unless the user set [`PURGE_DELAY_ENV`].
///
/// A training step allocates and frees the same large tensors every few milliseconds;
/// by default mimalloc hands pages back to the OS a second after they are freed, and every
/// step then faults them in again, zero-filled by the kernel. The resident size stays at its
/// high-water mark instead, as with TensorFlow's own allocator.
pub fn keep_freed_pages() {
    if std::env::var_os(PURGE_DELAY_ENV).is_some() {
        return;
    }
    // SAFETY: sets an integer option; mimalloc reads it on its next purge decision.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mimalloc's current purge delay (ms; -1: never).
    fn purge_delay() -> i64 {
        // SAFETY: reads an integer option.
        unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) as i64 }
    }

    #[test]
    fn the_option_index_is_the_purge_delay() {
        // mimalloc v3's default purge delay is 1000 ms; no other option of it defaults to
        // that value, so this pins the index before the test changes it.
        if std::env::var_os(PURGE_DELAY_ENV).is_none() {
            assert_eq!(purge_delay(), 1000);
            keep_freed_pages();
            assert_eq!(purge_delay(), -1);
        }
    }
}
