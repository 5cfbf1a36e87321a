//! Segment reductions and sparse-tensor kernels: `Segment*`, `UnsortedSegment{Max,Min,Prod}`,
//! `SparseSegment*` and their gradient ops; `SparseToDense`, `SparseReshape`,
//! `SparseFillEmptyRows[Grad]`, `SparseReorder`, `SparseTensorDense{MatMul,Add}`, the
//! bincounts; `SparseConcat`, `SparseSlice`, `SparseAdd`, `SparseReduceSum`, `SparseReduceMax`, `SparseSoftmax`,
//! `SparseDenseCwise{Add,Mul,Div}`;
//! the feature-column crosses `SparseCross`, `SparseCrossV2`, `SparseCrossHashed`.

mod bincount;
mod combine;
mod cross;
mod cwise;
mod elem;
mod fill_empty_rows;
mod reduce;
mod reorder;
mod reshape;
mod segment_reduce;
mod sparse_dense;
mod sparse_segment;
mod to_dense;
mod util;

pub use elem::SegElem;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: bincount, combine, cross, cwise, fill_empty_rows, reduce, reorder, reshape, segment_reduce, sparse_dense, sparse_segment, to_dense
    }
}
