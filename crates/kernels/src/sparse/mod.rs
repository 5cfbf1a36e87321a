//! Segment reductions and sparse-tensor kernels: `Segment*`, `UnsortedSegment{Max,Min,Prod}`,
//! `SparseSegment*` and their gradient ops; `SparseToDense`, `SparseReshape`,
//! `SparseFillEmptyRows[Grad]`, `SparseReorder`, `SparseTensorDense{MatMul,Add}`, the
//! bincounts; `SparseConcat`, `SparseSlice`, `SparseAdd`, `SparseReduceSum`, `SparseReduceMax`, their `...Sparse` forms, `SparseSoftmax`,
//! `SparseDenseCwise{Add,Mul,Div}`; `SerializeSparse`, `SerializeManySparse`, `DeserializeSparse`,
//! `DeserializeManySparse`; `SparseAddGrad`, `SparseSliceGrad`; `SparseSparseMaximum`/`Minimum`;
//! the sparse-output counts (`DenseCountSparseOutput`, `SparseCountSparseOutput`,
//! `RaggedCountSparseOutput`);
//! the feature-column crosses `SparseCross`, `SparseCrossV2`, `SparseCrossHashed`; `SparseSplit`;
//! the `tf.sets` ops (`SetSize`, `{DenseToDense,DenseToSparse,SparseToSparse}SetOperation`);
//! `EditDistance`.

mod bincount;
mod combine;
mod count;
mod cross;
mod cwise;
mod edit_distance;
mod elem;
mod fill_empty_rows;
mod grad_ops;
mod groups;
mod reduce;
mod reduce_groups;
mod reorder;
mod reshape;
mod segment_reduce;
mod serialize;
mod set_input;
mod sets;
mod sparse_dense;
mod sparse_segment;
mod sparse_sparse;
mod split;
mod to_dense;
mod util;

pub use elem::SegElem;

use crate::KernelRegistry;

/// Registers this family's kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    ferroflow_core::register_modules! {
        r: bincount, combine, count, cross, cwise, edit_distance, fill_empty_rows, grad_ops, reduce, reorder, reshape,
        segment_reduce, serialize, sets, sparse_dense, sparse_segment, sparse_sparse, split, to_dense
    }
}
