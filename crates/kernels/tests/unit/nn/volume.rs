use ferroflow_kernels::nn::common::{Padding, Window};
use ferroflow_kernels::nn::volume::{batch_major, depth_major, tap};

#[test]
fn depth_major_round_trips() {
    let src: Vec<i32> = (0..24).collect();
    let t = depth_major(&src, 2, 3, 4).unwrap();
    assert_eq!(&t[..8], &[0, 1, 2, 3, 12, 13, 14, 15]);
    assert_eq!(batch_major(t.into_owned(), 2, 3, 4).unwrap(), src);
    let w = Window::new(5, 3, 2, Padding::Same).unwrap();
    assert_eq!((w.output, w.pad), (3, 1));
    assert_eq!([tap(&w, 0, 0), tap(&w, 0, 1), tap(&w, 2, 2)], [None, Some(0), None]);
}
