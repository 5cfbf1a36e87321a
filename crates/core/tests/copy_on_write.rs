//! Mutating a tensor whose buffer a reader still holds copies it first; that copy comes
//! through the memory budget, so a variable update that must copy a large shared buffer
//! answers RESOURCE_EXHAUSTED instead of aborting the process.
//!
//! The budget is process-wide: this binary runs alone and sets one budget.

use ferroflow_core::{set_memory_limit, Code, Tensor};

const BUDGET: u64 = 64 << 20;

/// A float tensor of 96 MiB, over the budget once copied.
fn big() -> Tensor {
    Tensor::new(vec![6usize, 4 << 20], vec![1.5f32; 24 << 20]).unwrap()
}

#[test]
fn shared_buffers_are_copied_within_the_budget() {
    set_memory_limit(BUDGET);
    // Unshared: mutated in place, no copy, so no budget check.
    let mut t = big();
    t.data_mut::<f32>().unwrap()[0] = 2.0;
    assert_eq!(t.as_slice::<f32>().unwrap()[0], 2.0);

    // Shared with a reader: the copy is over the budget.
    let reader = t.clone();
    let e = t.data_mut::<f32>().expect_err("copy of a shared 96 MiB buffer");
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    assert!(e.message.contains("OOM when allocating") && e.message.contains("[6,4194304]"), "{e}");
    // Nothing changed for either holder.
    assert_eq!(t.as_slice::<f32>().unwrap()[0], 2.0);
    assert_eq!(reader.as_slice::<f32>().unwrap()[0], 2.0);

    let e = t.clone().into_vec::<f32>().expect_err("into_vec of a shared buffer");
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    // The last holder takes the buffer without a copy.
    drop(reader);
    assert_eq!(t.into_vec::<f32>().unwrap().len(), 24 << 20);

    // Small shared buffers are copied, and the copy is independent of the reader.
    let mut s = Tensor::vec(vec![1i64, 2, 3]);
    let r = s.clone();
    s.data_mut::<i64>().unwrap()[1] = 7;
    assert_eq!(s.as_slice::<i64>().unwrap(), &[1, 7, 3]);
    assert_eq!(r.as_slice::<i64>().unwrap(), &[1, 2, 3]);
    let mut strs = Tensor::vec(vec![b"ab".to_vec(), b"c".to_vec()]);
    let r = strs.clone();
    strs.data_mut::<Vec<u8>>().unwrap()[0].push(b'!');
    assert_eq!(strs.as_slice::<Vec<u8>>().unwrap()[0], b"ab!");
    assert_eq!(r.as_slice::<Vec<u8>>().unwrap()[0], b"ab");
}
