//! The instruction-set path the process computes with, decided once.
//!
//! [`current`] detects the CPU on its first call: [`Isa::Avx512`] when it has AVX-512
//! (F, BW, VL) with AVX2 and FMA, [`Isa::Avx2`] with AVX2 and FMA, else [`Isa::Portable`]
//! (always on other architectures). `FERROFLOW_ISA=avx512|avx2|portable` forces a lower
//! path; asking for more than the CPU has falls back to the best it has, and an unknown value
//! is ignored, both with a warning. The choice is logged once and never changes afterwards.
//!
//! The hand-written kernels (the direct convolutions) ask [`current`] which code to run.
//! Matrix products go through the `gemm` crate, which picks its own kernels at run time
//! (AVX-512, FMA or scalar) and has no way to be told a lower one, so `FERROFLOW_ISA`
//! does not change them.

use std::fmt;
use std::sync::OnceLock;

/// The environment variable that forces a lower path.
pub const ENV: &str = "FERROFLOW_ISA";

/// An instruction-set path, ordered from the most portable to the widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust, whatever the compiler targets by default (SSE2 on x86-64).
    Portable,
    /// AVX2 with FMA.
    Avx2,
    /// AVX-512 F/BW/VL with AVX2 and FMA.
    Avx512,
}

impl Isa {
    /// Every path, lowest first.
    pub const ALL: [Isa; 3] = [Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// The name `FERROFLOW_ISA` accepts for this path.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The path named `s` (case and surrounding spaces ignored).
    pub fn parse(s: &str) -> Option<Isa> {
        let s = s.trim();
        Isa::ALL.into_iter().find(|i| i.name().eq_ignore_ascii_case(s))
    }

    /// Whether code compiled for AVX2 and FMA may run on this path.
    pub fn has_avx2_fma(self) -> bool {
        self >= Isa::Avx2
    }

    /// The widest path this CPU supports (detected at every call; [`current`] caches).
    pub fn detect() -> Isa {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
            if avx2
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
            {
                return Isa::Avx512;
            }
            if avx2 {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }

    /// Every path this CPU can run, lowest first (always starts with `Portable`).
    pub fn available() -> Vec<Isa> {
        let best = Isa::detect();
        Isa::ALL.into_iter().filter(|&i| i <= best).collect()
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The path for a CPU whose best is `best` when `FERROFLOW_ISA` is `request`, and the
/// warning to log when the request cannot be honoured.
pub fn choose(request: Option<&str>, best: Isa) -> (Isa, Option<String>) {
    let Some(raw) = request.filter(|r| !r.trim().is_empty()) else {
        return (best, None);
    };
    match Isa::parse(raw) {
        Some(want) if want <= best => (want, None),
        Some(want) => (best, Some(format!("{ENV}={raw}: this CPU has no {want} path; using {best}"))),
        None => (best, Some(format!("{ENV}={raw}: unknown (expected avx512, avx2 or portable); using {best}"))),
    }
}

static CURRENT: OnceLock<(Isa, Option<String>)> = OnceLock::new();

fn decided() -> &'static (Isa, Option<String>) {
    CURRENT.get_or_init(|| {
        let best = Isa::detect();
        let request = std::env::var(ENV).ok();
        let (isa, warning) = choose(request.as_deref(), best);
        if let Some(w) = &warning {
            tracing::warn!("{w}");
        }
        tracing::info!(isa = isa.name(), cpu_best = best.name(), "compute path: {isa}");
        (isa, warning)
    })
}

/// The path this process uses: decided (and logged) on the first call, then fixed.
pub fn current() -> Isa {
    decided().0
}

/// Why `FERROFLOW_ISA` was not honoured, if it was set and was not.
pub fn request_warning() -> Option<&'static str> {
    decided().1.as_deref()
}

/// The name of [`current`]'s path.
pub fn name() -> &'static str {
    current().name()
}

/// Runs `f` compiled for the process's path: its body (inlined here) may use AVX-512 or
/// AVX2+FMA instructions. For element-wise loops whose code the compiler vectorizes by
/// itself; `f` must not need a feature beyond the path (nothing here checks that). The
/// compiler fuses no multiply-add it was not asked to, so results equal the portable ones.
#[inline(always)]
pub fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    match current() {
        // SAFETY: the path was detected with these features (or chosen lower than them).
        Isa::Avx512 => return unsafe { with_avx512(f) },
        // SAFETY: as above.
        Isa::Avx2 => return unsafe { with_avx2(f) },
        Isa::Portable => {}
    }
    f()
}

/// A loop body compiled once per path by [`run`]. Implement [`PathKernel::run`] with
/// `#[inline(always)]`: it is then inlined into one function per path, each compiled with
/// that path's instructions. (A large closure given to [`vectorized`] from more than one
/// place may instead be kept as one function compiled for the baseline CPU.)
pub trait PathKernel {
    /// The loop.
    fn run(self);
}

/// Runs `k` compiled for the process's path.
#[inline]
pub fn run<K: PathKernel>(k: K) {
    #[cfg(target_arch = "x86_64")]
    match current() {
        // SAFETY: the path was detected with these features (or chosen lower than them).
        Isa::Avx512 => return unsafe { run_avx512(k) },
        // SAFETY: as above.
        Isa::Avx2 => return unsafe { run_avx2(k) },
        Isa::Portable => {}
    }
    k.run()
}

/// # Safety
/// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn run_avx512<K: PathKernel>(k: K) {
    k.run()
}

/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<K: PathKernel>(k: K) {
    k.run()
}

/// # Safety
/// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
unsafe fn with_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
