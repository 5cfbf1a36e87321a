//! Convolutions with a 3×3 or 5×5 filter and stride 1 by Winograd's minimal filtering
//! F(m×m, r×r) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016),
//! with tiles of 2×2 or 4×4 outputs (`winograd_tile.rs`, `winograd_tile3.rs`).
//!
//! Each `m × m` block of outputs ("tile") comes from the `n × n` input patch `d` around it
//! (`n = m + r - 1`) as `Aᵀ [U ⊙ (Bᵀ d B)] A`, where `U = G g Gᵀ` is the `r × r` filter `g`
//! transformed once per call (in f64, `winograd_weights.rs`). Summed over input channels,
//! the `n²` element-wise products become `n²` matrix products `M[p] = V[p] · U[p]` (tiles ×
//! input channels times input × output channels): per output, input and output channel,
//! with 5×5 filters 9 multiply-adds with 2×2 tiles and 4 with 4×4 ones where the direct
//! sum takes 25; with 3×3 filters 4 and 2.25 where it takes 9.
//! The gradients (`backprop_input` here, `winograd_filter.rs`) take the tile size with
//! fewer products for the shape ([`Shape::tile`]): 4×4 unless rounding the output up to
//! whole tiles wastes more than that saves. The forward convolution keeps 2×2 tiles for
//! their smaller rounding error ([`forward`]).
//!
//! Used for `Conv2D` (and `_FusedConv2D`) and `Conv2DBackpropInput` in float32 when the
//! channel counts are multiples of 16 and the CPU has AVX2 with FMA (the products are
//! hand-written for AVX-512 and AVX2, `winograd_simd.rs`); every image is one rayon task (a
//! batch smaller than the thread count is split into bands of tile rows), its tiles taken
//! a few at a time (`Tile::TILES`) so their transforms and products stay in L2.

use rayon::prelude::*;

use super::im2col::ConvGeom;
#[cfg(target_arch = "x86_64")]
use super::winograd_simd as simd;
use super::winograd_tile::{Tile, F2, F4};
use super::winograd_tile3::{F2R3, F4R3};
use super::winograd_weights::transform_filter;

/// Channels handled together by the transforms; both channel counts must be multiples.
const GROUP: usize = 16;

/// Floats between the transformed matrices of a block of `rows` tiles of `width`
/// channels: one cache line more than they need, so that the stores of one tile's
/// transform do not fall on addresses a multiple of 4 KiB apart (which share L1 sets).
pub(super) fn plane(rows: usize, width: usize) -> usize {
    rows * width + 16
}

/// One stride-1 `r × r` convolution (`r` 3 or 5): NHWC input `n × ih × iw × c`, output
/// `n × oh × ow × k`, output (y, x) reading inputs from (y - pad_y, x - pad_x) on (zero
/// outside the input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub n: usize,
    pub ih: usize,
    pub iw: usize,
    pub c: usize,
    pub oh: usize,
    pub ow: usize,
    pub k: usize,
    pub pad_y: usize,
    pub pad_x: usize,
    /// The filter's side.
    pub r: usize,
}

impl Shape {
    /// The forward convolution `g` (input `x`, output `y`).
    pub(super) fn forward(g: &ConvGeom) -> Shape {
        Shape {
            n: g.n,
            ih: g.y.input,
            iw: g.x.input,
            c: g.c,
            oh: g.y.output,
            ow: g.x.output,
            k: g.oc,
            pad_y: g.y.pad,
            pad_x: g.x.pad,
            r: g.y.size,
        }
    }

    /// Tiles of `m × m` outputs per row of an image.
    pub(super) fn tiles_x(&self, m: usize) -> usize {
        self.ow.div_ceil(m)
    }

    /// Tiles of `m × m` outputs per image.
    pub(super) fn tiles(&self, m: usize) -> usize {
        self.oh.div_ceil(m) * self.tiles_x(m)
    }

    /// The tile side with fewer products for this shape: 4 unless rounding the output up
    /// to whole 4×4 tiles costs more than their `(r + 3)²` products per 16 outputs save
    /// over 2×2 tiles' `(r + 1)²` per 4.
    pub fn tile(&self) -> usize {
        if self.tiles(4) * (self.r + 3).pow(2) < self.tiles(2) * (self.r + 1).pow(2) {
            4
        } else {
            2
        }
    }

    /// `out` = the convolution of `x` with the filter whose weight at tap `ky·r + kx`
    /// from input channel `ci` to output channel `co` is `w(tap, ci, co)`, by tiles of
    /// `tile × tile` outputs (2 or 4). False (and `out` untouched) as [`conv`].
    fn run(&self, tile: usize, x: &[f32], w: impl Fn(usize, usize, usize) -> f32 + Sync, out: &mut [f32]) -> bool {
        let (c, k) = (self.c, self.k);
        match (self.r, tile) {
            (3, 4) => conv::<F4R3, 4, 6>(self, x, &transform_filter(F4R3::G, c, k, w), out),
            (3, _) => conv::<F2R3, 2, 4>(self, x, &transform_filter(F2R3::G, c, k, w), out),
            (_, 4) => conv::<F4, 4, 8>(self, x, &transform_filter(F4::G, c, k, w), out),
            _ => conv::<F2, 2, 6>(self, x, &transform_filter(F2::G, c, k, w), out),
        }
    }
}

/// Computes the float32 convolution `out = conv(x, f)` (HWIO filter) here when it has a
/// 3×3 or 5×5 filter, unit strides and channels [`applies`] takes; false otherwise.
pub fn forward(g: &ConvGeom, x: &[f32], f: &[f32], out: &mut [f32]) -> bool {
    if !fits(g) {
        return false;
    }
    let (c, k) = (g.c, g.oc);
    // Always 2×2 tiles: a ReLU and a max pool follow this convolution in a CNN, and its
    // output's rounding decides which of two near-zero or near-equal values they pass on.
    // 4×4 tiles round about four times as much, which changed enough of those decisions
    // to move the CNN's gradients away from TensorFlow's (BENCHMARKS.md, session 31); the
    // gradients below feed no such decision. 3×3 filters the same way.
    Shape::forward(g).run(2, x, |tap, ci, co| f[(tap * c + ci) * k + co], out)
}

/// Computes the float32 input gradient `dx` of the convolution `g` from `dy` here, as the
/// convolution of `dy` with the filter turned by 180° and its channels swapped, when
/// [`forward`] would take `g`; false otherwise. Writes every element of `dx`.
pub fn backprop_input(g: &ConvGeom, f: &[f32], dy: &[f32], dx: &mut [f32]) -> bool {
    if !fits(g) {
        return false;
    }
    let (c, k, r) = (g.oc, g.c, g.y.size);
    let last = r * r - 1;
    let s = Shape {
        n: g.n,
        ih: g.y.output,
        iw: g.x.output,
        c,
        oh: g.y.input,
        ow: g.x.input,
        k,
        pad_y: r - 1 - g.y.pad,
        pad_x: r - 1 - g.x.pad,
        r,
    };
    s.run(s.tile(), dy, |tap, ci, co| f[((last - tap) * k + co) * c + ci], dx)
}

/// 2×2 output tiles below which the im2col and direct kernels are faster, by filter side:
/// the filter transform costs the same for any batch. With 5×5 filters the MNIST CNN's
/// second layer (32 → 64 channels, 7 × 7 tiles per image) only gained from Winograd's
/// algorithm from a batch of 8 (BENCHMARKS.md).
fn min_tiles(r: usize) -> usize {
    if r == 3 {
        MIN_TILES_3
    } else {
        384
    }
}

/// [`min_tiles`] for 3×3 filters.
const MIN_TILES_3: usize = 64;

/// The largest transformed filter (floats, `U` of 4×4 tiles) this path takes: each block
/// of an image's tiles streams all of `U`, which with more (ResNet50's 256 and 512
/// channels: 9 and 38 MiB) comes from memory and made the products slower than the gemm
/// path's (BENCHMARKS.md, session 62).
const MAX_FILTER_FLOATS: usize = 1 << 20;

/// Whether `g` has the 3×3 or 5×5 filter and unit strides this path is written for, with
/// channels it takes and enough output tiles to pay for the filter transform.
pub(super) fn fits(g: &ConvGeom) -> bool {
    let r = g.y.size;
    (r == 3 || r == 5)
        && (g.x.size, g.y.stride, g.x.stride) == (r, 1, 1)
        && g.y.pad < r
        && g.x.pad < r
        && g.n * g.y.output.div_ceil(2) * g.x.output.div_ceil(2) >= min_tiles(r)
        && (r + 3) * (r + 3) * g.c * g.oc <= MAX_FILTER_FLOATS
        && applies(g.c, g.oc)
}

/// Whether this path computes a convolution with `c` input and `k` output channels here.
pub fn applies(c: usize, k: usize) -> bool {
    c.is_multiple_of(GROUP)
        && k.is_multiple_of(GROUP)
        && c >= GROUP
        && k >= GROUP
        && crate::isa::current().has_avx2_fma()
}

/// `out` = the convolution of `x` with the filter `u` transformed for the tile `T`
/// (`transform_filter(&T::G, ..)`). Returns false (and leaves `out` alone) when the CPU has
/// no path for it ([`applies`] was false).
pub fn conv<T: Tile<M, N>, const M: usize, const N: usize>(s: &Shape, x: &[f32], u: &[f32], out: &mut [f32]) -> bool {
    assert!(
        s.c.is_multiple_of(GROUP) && s.k.is_multiple_of(GROUP),
        "winograd: channels {} and {} must be multiples of {GROUP}",
        s.c,
        s.k
    );
    assert_eq!(x.len(), s.n * s.ih * s.iw * s.c, "winograd: input size");
    assert_eq!(u.len(), N * N * s.c * s.k, "winograd: filter size");
    assert_eq!(out.len(), s.n * s.oh * s.ow * s.k, "winograd: output size");
    #[cfg(target_arch = "x86_64")]
    {
        let isa = crate::isa::current();
        if !isa.has_avx2_fma() || out.is_empty() {
            return out.is_empty();
        }
        let (in_len, out_len) = (s.ih * s.iw * s.c, s.oh * s.ow * s.k);
        // One task per image, or, for fewer images than threads, per band of tile rows.
        let (threads, tile_rows) = (rayon::current_num_threads(), s.oh.div_ceil(M));
        let bands = if s.n >= threads { 1 } else { threads.div_ceil(s.n).min(tile_rows) };
        let band_rows = tile_rows.div_ceil(bands);
        let band_len = (M * band_rows * s.ow * s.k).min(out_len);
        let scratch = || simd::Scratch::new::<T, M, N>(s);
        let band = |sc: &mut simd::Scratch, (b, i, o): (usize, usize, &mut [f32])| {
            let xi = &x[b * in_len..(b + 1) * in_len];
            let rows = i * band_rows..((i + 1) * band_rows).min(tile_rows);
            // SAFETY: the path was detected with these features (or chosen lower), and the
            // sizes were checked above; `o` is output rows M·rows.start.. of image b.
            unsafe {
                if isa == crate::isa::Isa::Avx512 {
                    simd::image512::<T, M, N>(s, xi, u, (o, rows), sc)
                } else {
                    simd::image256::<T, M, N>(s, xi, u, (o, rows), sc)
                }
            }
        };
        let units = out
            .chunks_mut(out_len)
            .enumerate()
            .flat_map(|(b, o)| o.chunks_mut(band_len).enumerate().map(move |(i, ob)| (b, i, ob)));
        if s.n * bands > 1 && threads > 1 {
            units.collect::<Vec<_>>().into_par_iter().for_each_init(scratch, band);
        } else {
            let mut sc = scratch();
            units.for_each(|u| band(&mut sc, u));
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, u);
        out.is_empty()
    }
}
