use ferroflow_core::{DataType, Tensor};

use ferroflow_kernels::testutil::{run_kernel, seeded_node};

fn shuffle_node(seed: i64) -> ferroflow_core::proto::NodeDef {
    seeded_node("RandomShuffle", &[("T", DataType::Int32)], seed, 0)
}

#[test]
fn permutes_rows() {
    let t = Tensor::new(vec![5, 2], (0..10).collect::<Vec<i32>>()).unwrap();
    let out = run_kernel(shuffle_node(11), vec![t], 1).unwrap().remove(0);
    let v = out.as_slice::<i32>().unwrap();
    let mut firsts: Vec<i32> = v
        .chunks(2)
        .map(|r| {
            assert_eq!(r[1], r[0] + 1);
            r[0]
        })
        .collect();
    firsts.sort();
    assert_eq!(firsts, vec![0, 2, 4, 6, 8]);
    let scalar = run_kernel(shuffle_node(1), vec![Tensor::scalar(3i32)], 1).unwrap();
    assert_eq!(scalar[0], Tensor::scalar(3i32));
}
