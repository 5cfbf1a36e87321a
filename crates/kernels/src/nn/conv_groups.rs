//! Grouped convolutions (`tf.keras.layers.Conv2D(groups=G)`, as ConvNeXt and RegNet build
//! them): the input depth is `G` times the filter's. Group `k` convolves input channels
//! `[k·c, (k+1)·c)` with filter output channels `[k·oc, (k+1)·oc)` (`c`, `oc` of the
//! per-group geometry); each group runs the ordinary kernels on its own contiguous copy of
//! its channels, and the results are written back interleaved.

use super::im2col::ConvGeom;

/// Channels `[start, start + len)` of every row of `x` (rows of `c` channels).
fn take_channels<T: Copy>(x: &[T], c: usize, start: usize, len: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(x.len() / c.max(1) * len);
    for row in x.chunks_exact(c) {
        out.extend_from_slice(&row[start..start + len]);
    }
    out
}

/// Writes `part` (rows of `len` channels) into channels `[start, start + len)` of `out`.
fn put_channels<T: Copy>(out: &mut [T], c: usize, start: usize, part: &[T], len: usize) {
    for (row, p) in out.chunks_exact_mut(c).zip(part.chunks_exact(len)) {
        row[start..start + len].copy_from_slice(p);
    }
}

/// The forward output (NHWC, `groups·g.oc` channels) of input `x` (`groups·g.c` channels)
/// and filter `f` (`[kh, kw, g.c, groups·g.oc]`), `conv` computing one group.
pub(crate) fn forward<T: Copy + Default>(
    g: &ConvGeom,
    groups: usize,
    x: &[T],
    f: &[T],
    conv: impl Fn(&ConvGeom, &[T], &[T], &mut [T]),
) -> Vec<T> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut out = vec![T::default(); g.rows() * oc];
    let mut part = vec![T::default(); g.rows() * g.oc];
    for k in 0..groups {
        let xk = take_channels(x, c, k * g.c, g.c);
        let fk = take_channels(f, oc, k * g.oc, g.oc);
        part.fill(T::default());
        conv(g, &xk, &fk, &mut part);
        put_channels(&mut out, oc, k * g.oc, &part, g.oc);
    }
    out
}

/// The input gradient (`groups·g.c` channels) from filter `f` and output gradient `dy`,
/// `backprop` computing one group into a zeroed buffer.
pub(crate) fn backprop_input<T: Copy + Default>(
    g: &ConvGeom,
    groups: usize,
    f: &[T],
    dy: &[T],
    backprop: impl Fn(&ConvGeom, &[T], &[T], &mut [T]),
) -> Vec<T> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut dx = vec![T::default(); g.n * g.y.input * g.x.input * c];
    let mut part = vec![T::default(); g.n * g.image_len()];
    for k in 0..groups {
        let fk = take_channels(f, oc, k * g.oc, g.oc);
        let dyk = take_channels(dy, oc, k * g.oc, g.oc);
        part.fill(T::default());
        backprop(g, &fk, &dyk, &mut part);
        put_channels(&mut dx, c, k * g.c, &part, g.c);
    }
    dx
}

/// The filter gradient (`[kh, kw, g.c, groups·g.oc]`) from input `x` and output gradient
/// `dy`, `backprop` computing one group.
pub(crate) fn backprop_filter<T: Copy + Default>(
    g: &ConvGeom,
    groups: usize,
    x: &[T],
    dy: &[T],
    backprop: impl Fn(&ConvGeom, &[T], &[T]) -> Vec<T>,
) -> Vec<T> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut dw = vec![T::default(); g.y.size * g.x.size * g.c * oc];
    for k in 0..groups {
        let xk = take_channels(x, c, k * g.c, g.c);
        let dyk = take_channels(dy, oc, k * g.oc, g.oc);
        let part = backprop(g, &xk, &dyk);
        put_channels(&mut dw, oc, k * g.oc, &part, g.oc);
    }
    dw
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{DataType, Tensor};

    use crate::nn::conv::conv_reference;
    use crate::nn::conv::tests::data;
    use crate::testutil::{conv_node, run_kernel};

    /// A grouped convolution equals the per-group ordinary convolutions, concatenated.
    #[test]
    fn grouped_forward_and_gradients_match_per_group_convolutions() {
        let (n, h, w, c, kh, kw, oc, groups) = (2, 5, 6, 6, 3, 2, 4, 2);
        let (cg, ocg) = (c / groups, oc / groups);
        let x = data(n * h * w * c, 3);
        let f = data(kh * kw * cg * oc, 4);
        let node = conv_node("Conv2D", DataType::Double, &[1, 1, 1, 1], "SAME");
        let xt = Tensor::new(vec![n, h, w, c], x.clone()).unwrap();
        let ft = Tensor::new(vec![kh, kw, cg, oc], f.clone()).unwrap();
        let got = run_kernel(node.clone(), vec![xt.clone(), ft.clone()], 1).unwrap().remove(0);
        assert_eq!(got.dims(), [n, h, w, oc]);
        let got = got.as_slice::<f64>().unwrap().to_vec();
        let attrs = super::super::conv::ConvAttrs::parse(&node).unwrap();
        let (g, k) = attrs.grouped_geom(&node, "", &[n, h, w, c], &[kh, kw, cg, oc]).unwrap();
        assert_eq!(k, groups);
        for grp in 0..groups {
            let xg: Vec<f64> = x.chunks(c).flat_map(|r| r[grp * cg..(grp + 1) * cg].to_vec()).collect();
            let fg: Vec<f64> = f.chunks(oc).flat_map(|r| r[grp * ocg..(grp + 1) * ocg].to_vec()).collect();
            let want = conv_reference(&g, &xg, &fg);
            for (row, wrow) in got.chunks(oc).zip(want.chunks(ocg)) {
                for (a, b) in row[grp * ocg..(grp + 1) * ocg].iter().zip(wrow) {
                    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
                }
            }
        }
        // The gradients are the adjoints of the forward map: <dy, conv(x, f)> = <dx, x> = <dw, f>.
        let dy = data(n * h * w * oc, 5);
        let dyt = Tensor::new(vec![n, h, w, oc], dy.clone()).unwrap();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let lhs = dot(&dy, &got);
        let sizes = |d: &[usize]| Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let bi = conv_node("Conv2DBackpropInput", DataType::Double, &[1, 1, 1, 1], "SAME");
        let dx = run_kernel(bi, vec![sizes(&[n, h, w, c]), ft, dyt.clone()], 1).unwrap().remove(0);
        assert!((dot(dx.as_slice::<f64>().unwrap(), &x) - lhs).abs() < 1e-7 * lhs.abs().max(1.0));
        let bf = conv_node("Conv2DBackpropFilter", DataType::Double, &[1, 1, 1, 1], "SAME");
        let dw = run_kernel(bf, vec![xt, sizes(&[kh, kw, cg, oc]), dyt], 1).unwrap().remove(0);
        assert_eq!(dw.dims(), [kh, kw, cg, oc]);
        assert!((dot(dw.as_slice::<f64>().unwrap(), &f) - lhs).abs() < 1e-7 * lhs.abs().max(1.0));
    }
}
