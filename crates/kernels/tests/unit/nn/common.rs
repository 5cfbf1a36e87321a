use ferroflow_kernels::nn::common::{Padding, Window};

#[test]
fn window_sizes_match_tensorflow() {
    let w = Window::new(28, 5, 1, Padding::Same).unwrap();
    assert_eq!((w.output, w.pad), (28, 2));
    let w = Window::new(28, 2, 2, Padding::Same).unwrap();
    assert_eq!((w.output, w.pad), (14, 0));
    let w = Window::new(5, 2, 2, Padding::Same).unwrap();
    assert_eq!((w.output, w.pad), (3, 0));
    let w = Window::new(6, 3, 2, Padding::Same).unwrap();
    assert_eq!((w.output, w.pad), (3, 0));
    let w = Window::new(7, 4, 1, Padding::Same).unwrap();
    assert_eq!((w.output, w.pad), (7, 1));
    let w = Window::new(28, 5, 1, Padding::Valid).unwrap();
    assert_eq!((w.output, w.pad), (24, 0));
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
