//! Array kernels: shapes and reshapes, fills, transposes, concatenation, slicing, gathers
//! and scatters, tiling and broadcasting, one-hot, ranges, padding.
//!
//! Every kernel works on any dtype a ferroflow tensor holds (numeric ops on the numeric
//! ones). Pure data movement goes through [`strided::strided_gather`].

mod bitcast;
mod concat;
pub(crate) mod ext;
mod fill;
mod gather;
mod list_diff;
mod one_hot;
mod pack;
mod pad;
mod partition;
mod range;
mod reverse_sequence;
mod segment;
#[doc(hidden)]
pub mod shape_ops;
mod slice;
mod space;
pub mod strided;
mod strided_assign;
#[doc(hidden)]
pub mod strided_slice;
mod tile;
mod transpose;
mod unique;
mod unravel_index;
#[doc(hidden)]
pub mod util;
mod where_op;

pub(crate) use gather::do_gather as gather_rows;
pub use gather::multi_index;
pub(crate) use segment::unsorted_segment_args;
pub use shape_ops::reshape_dims;
pub use slice::slice_bounds;
pub use strided_slice::{strided_slice_spec, Masks, SliceSpec};
pub use tile::broadcast_tensor;
pub use transpose::{check_perm, transpose_tensor};
pub use util::{check_alloc, dims_str, index_vec, tf_type_name};

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: bitcast, concat, fill, gather, list_diff, one_hot, pack, pad, partition, range, reverse_sequence, segment,
        shape_ops, slice, space, strided_assign, strided_slice, tile, transpose, unique, unravel_index, where_op
    }
    ext::register(r);
}
