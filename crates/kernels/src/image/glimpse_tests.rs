//! Values from TensorFlow 2.21 (the same calls through `tf.raw_ops`).

use ferroflow_core::{attr, Code, Tensor};

use crate::testutil::{node, run_kernel};

fn glimpse(
    op: &str,
    centered: bool,
    normalized: bool,
    uniform_noise: bool,
    noise: &str,
) -> ferroflow_core::proto::NodeDef {
    let attrs = [
        ("centered", attr::bool(centered)),
        ("normalized", attr::bool(normalized)),
        ("uniform_noise", attr::bool(uniform_noise)),
        ("noise", attr::string(noise)),
    ];
    node(op, &attrs)
}

/// One 4×5 image of 0..20.
fn image() -> Tensor {
    Tensor::new(vec![1, 4, 5, 1], (0..20).map(|v| v as f32).collect::<Vec<_>>()).unwrap()
}

fn run(op: &str, size: [i32; 2], offset: [f32; 2], centered: bool, normalized: bool) -> Vec<f32> {
    let inputs = vec![image(), Tensor::vec(size.to_vec()), Tensor::new(vec![1, 2], offset.to_vec()).unwrap()];
    let out = run_kernel(glimpse(op, centered, normalized, false, "zero"), inputs, 1).unwrap();
    assert_eq!(out[0].dims(), &[1, size[0] as usize, size[1] as usize, 1]);
    out[0].as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn windows_as_tensorflow_places_them() {
    // Pixel offsets: V2 at the window's corner, V1 at its centre.
    assert_eq!(run("ExtractGlimpseV2", [2, 3], [1.0, 1.0], false, false), [6.0, 7.0, 8.0, 11.0, 12.0, 13.0]);
    assert_eq!(run("ExtractGlimpse", [2, 3], [1.0, 1.0], false, false), [0.0, 1.0, 2.0, 5.0, 6.0, 7.0]);
    // Partly outside: zeros there.
    assert_eq!(
        run("ExtractGlimpseV2", [3, 3], [-1.0, 3.0], false, false),
        [0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 8.0, 9.0, 0.0]
    );
    assert_eq!(run("ExtractGlimpse", [3, 3], [-1.0, 3.0], false, false), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    // Centred and normalized.
    assert_eq!(run("ExtractGlimpseV2", [2, 2], [0.0, 0.0], true, true), [6.0, 7.0, 11.0, 12.0]);
    let want: Vec<f32> = [5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18].iter().map(|&v| v as f32).collect();
    assert_eq!(run("ExtractGlimpseV2", [3, 4], [0.5, -0.5], true, true), want);
    assert_eq!(run("ExtractGlimpse", [3, 4], [0.5, -0.5], true, true), want);
}

#[test]
fn noise_stays_within_the_image_range() {
    let inputs = || vec![image(), Tensor::vec(vec![6i32, 7]), Tensor::new(vec![1, 2], vec![0f32, 0.0]).unwrap()];
    for (uniform, noise) in [(true, "uniform"), (false, "gaussian"), (false, "")] {
        let out = run_kernel(glimpse("ExtractGlimpseV2", true, true, uniform, noise), inputs(), 1).unwrap();
        let v = out[0].as_slice::<f32>().unwrap();
        assert!(v.iter().all(|x| (0.0..=19.0).contains(x)), "{noise}: {v:?}");
        // The image itself is copied into the middle: row 1 of the window is image row 0.
        assert_eq!(&v[7 + 1..7 + 6], [0.0, 1.0, 2.0, 3.0, 4.0], "{noise}");
    }
}

#[test]
fn bad_attrs_and_inputs_are_invalid_arguments() {
    let e = crate::create_kernel(&glimpse("ExtractGlimpseV2", true, true, true, "zero")).err().unwrap();
    assert!(e.message.contains("The uniform_noise and noise could not be specified at the same time"), "{e}");
    let e = crate::create_kernel(&glimpse("ExtractGlimpseV2", true, true, false, "foo")).err().unwrap();
    assert!(e.message.contains("The noise could only be uniform, gaussian, or zero, gotfoo"), "{e}");
    let off = || Tensor::new(vec![1, 2], vec![0f32, 0.0]).unwrap();
    for (inputs, want) in [
        (vec![image(), Tensor::vec(vec![-1i32, 2]), off()], "Expected a non-negative size, got -1"),
        (vec![image(), Tensor::vec(vec![1i32, 2, 3]), off()], "input must be a vector of size 2 (height, width)[3]"),
        (
            vec![image(), Tensor::vec(vec![1i32, 2]), Tensor::new(vec![2, 2], vec![0f32; 4]).unwrap()],
            "first dimension should be batch[2,2]",
        ),
        (
            vec![Tensor::new(vec![4, 5], vec![0f32; 20]).unwrap(), Tensor::vec(vec![1i32, 2]), off()],
            "input must be 4-dimensional",
        ),
    ] {
        let e = run_kernel(glimpse("ExtractGlimpseV2", true, true, false, "zero"), inputs, 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e} (want {want})");
    }
}
