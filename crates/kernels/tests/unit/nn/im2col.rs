use ferroflow_kernels::nn::common::{Padding, Window};
use ferroflow_kernels::nn::im2col::{col2im_add, im2col, ConvGeom};

fn geom(h: usize, w: usize, c: usize, kh: usize, kw: usize, s: usize, p: Padding) -> ConvGeom {
    ConvGeom { n: 1, c, oc: 1, y: Window::new(h, kh, s, p).unwrap(), x: Window::new(w, kw, s, p).unwrap() }
}

#[test]
fn patches_with_same_padding() {
    // 3x3 single-channel input 1..9, 3x3 filter, SAME: the centre patch is the input.
    let g = geom(3, 3, 1, 3, 3, 1, Padding::Same);
    let input: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let mut buf = vec![-1.0f32; 9 * 9];
    im2col(&g, &input, 0, 9, &mut buf);
    assert_eq!(&buf[4 * 9..5 * 9], &input[..]);
    assert_eq!(&buf[..9], &[0., 0., 0., 0., 1., 2., 0., 4., 5.]);
    assert_eq!(&buf[8 * 9..], &[5., 6., 0., 8., 9., 0., 0., 0., 0.]);
}

#[test]
fn every_patch_element_is_written() {
    // Against the definition, on a buffer full of garbage: strides, SAME and VALID (with
    // input left over), windows wider than the input, several channels and images.
    for (h, w, k, s, p) in [
        (5, 4, 3, 2, Padding::Same),
        (7, 6, 3, 1, Padding::Same),
        (6, 6, 5, 1, Padding::Same),
        (7, 7, 2, 3, Padding::Valid),
        (3, 3, 5, 1, Padding::Same),
        (8, 5, 4, 2, Padding::Same),
    ] {
        let mut g = geom(h, w, 2, k, k, s, p);
        g.n = 2;
        let x: Vec<f32> = (0..g.n * g.image_len()).map(|v| v as f32 + 1.0).collect();
        let mut buf = vec![-7.0f32; g.rows() * g.k()];
        im2col(&g, &x, 0, g.rows(), &mut buf);
        for r in 0..g.rows() {
            let (b, oy, ox) = g.pixel(r);
            for ky in 0..k {
                for kx in 0..k {
                    for c in 0..2 {
                        let iy = (oy * s + ky) as isize - g.y.pad as isize;
                        let ix = (ox * s + kx) as isize - g.x.pad as isize;
                        let want = if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                            0.0
                        } else {
                            x[((b * h + iy as usize) * w + ix as usize) * 2 + c]
                        };
                        let got = buf[r * g.k() + (ky * k + kx) * 2 + c];
                        assert_eq!(got, want, "{h}x{w} k{k} s{s} {p:?}: row {r} ({ky}, {kx}, {c})");
                    }
                }
            }
        }
    }
}

#[test]
fn col2im_is_the_adjoint() {
    // <im2col(x), y> == <x, col2im(y)> for a strided, padded, multi-channel case.
    let g = ConvGeom {
        n: 2,
        c: 2,
        oc: 1,
        y: Window::new(5, 3, 2, Padding::Same).unwrap(),
        x: Window::new(4, 2, 2, Padding::Same).unwrap(),
    };
    let x: Vec<f64> = (0..g.n * g.image_len()).map(|v| ((v * 7) % 11) as f64).collect();
    let y: Vec<f64> = (0..g.rows() * g.k()).map(|v| ((v * 3) % 5) as f64 - 2.0).collect();
    let mut cols = vec![0.0; g.rows() * g.k()];
    im2col(&g, &x, 0, g.rows(), &mut cols);
    let lhs: f64 = cols.iter().zip(&y).map(|(a, b)| a * b).sum();
    let mut dx = vec![0.0; x.len()];
    col2im_add(&g, &y, 0, g.rows(), &mut dx, 0);
    let rhs: f64 = x.iter().zip(&dx).map(|(a, b)| a * b).sum();
    assert_eq!(lhs, rhs);
}
