//! What decoding a small TensorProto may allocate: never what its shape declares. These
//! are the regression tests of the fuzzer's findings (`crates/distributed/tests/fuzz_*`):
//! the test binary's allocator notes the largest single allocation of the decoding thread.

use std::cell::Cell;

use bytes::Bytes;
use ferroflow_core::proto::tensor_shape_proto::Dim;
use ferroflow_core::proto::{TensorProto, TensorShapeProto};
use ferroflow_core::{decode_string_list, DataType, Tensor, WatchedAlloc};

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(n: usize) {
    let _ = LARGEST.try_with(|c| c.set(c.get().max(n)));
}

#[global_allocator]
static ALLOC: WatchedAlloc = WatchedAlloc::allocations(note);

/// The largest allocation `f` makes on this thread.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|c| c.set(0));
    f();
    LARGEST.with(Cell::get)
}

#[test]
fn a_string_list_reserves_no_more_than_its_bytes() {
    // Found by the fuzzer: 2^33 declared strings in 6 bytes reserved 8 MiB of lengths.
    let content = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x80];
    let n = largest_allocation(|| assert!(decode_string_list(&content, 1 << 33).is_err()));
    assert!(n < 4096, "{n} bytes for a 6-byte list");
    let p = TensorProto {
        dtype: DataType::String.as_i32(),
        tensor_shape: Some(TensorShapeProto {
            dim: vec![Dim { size: 1 << 40, name: String::new() }],
            unknown_rank: false,
        }),
        tensor_content: Bytes::from_static(&[2, 0, b'a', b'b']),
        ..Default::default()
    };
    let n = largest_allocation(|| assert!(Tensor::from_proto(&p).is_err()));
    assert!(n < 4096, "{n} bytes for a 4-byte list");
    // A well-formed list still decodes.
    assert_eq!(decode_string_list(&[2, 0, b'a', b'b'], 2).unwrap(), vec![b"ab".to_vec(), Vec::new()]);
}
