use ferroflow_kernels::nn::common::{Padding, Window};

#[test]
fn window_sizes_match_tensorflow() {
    // (input, size, stride, padding, output, pad before)
    let cases = [
        (28, 5, 1, Padding::Same, 28, 2),
        (28, 2, 2, Padding::Same, 14, 0),
        (5, 2, 2, Padding::Same, 3, 0),
        (6, 3, 2, Padding::Same, 3, 0),
        (7, 4, 1, Padding::Same, 7, 1),
        (28, 5, 1, Padding::Valid, 24, 0),
    ];
    for (input, size, stride, padding, output, pad) in cases {
        let w = Window::new(input, size, stride, padding).unwrap();
        assert_eq!((w.output, w.pad), (output, pad), "{input} {size} {stride} {padding:?}");
    }
    let w = Window::new(7, 3, 2, Padding::Valid).unwrap();
    assert_eq!(w.output, 3);
    // TensorFlow truncates toward zero: (4 - 5 + 2) / 2 = 0, not an error.
    assert_eq!(Window::new(4, 5, 2, Padding::Valid).unwrap().output, 0);
    assert!(Window::new(2, 5, 1, Padding::Valid).unwrap_err().contains("negative"));
    assert!(Window::new(2, 5, 0, Padding::Valid).is_err());
}

#[test]
fn window_ranges_clip() {
    let w = Window::new(5, 3, 1, Padding::Same).unwrap();
    assert_eq!(w.range(0), (0, 2));
    assert_eq!(w.range(2), (1, 4));
    assert_eq!(w.range(4), (3, 5));
}
