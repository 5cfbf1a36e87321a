//! Datasets made from tensors: `TensorDataset` (one element), `TensorSliceDataset` (the
//! rows of its components), `RangeDataset` (`start`, `start + step`, … before `stop`).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::dataset::{scalar_i64, Dataset, DatasetIter, Element, IterCtx};
use super::tensor_util::row;
use super::BuildFn;

/// A dataset whose elements are at hand, each read by its index: every such dataset is a
/// [`Dataset`] whose passes count through the indices.
pub(super) trait InMemory: Send + Sync + 'static {
    /// The number of elements.
    fn num_elements(&self) -> usize;

    /// Element `i` (below [`InMemory::num_elements`]).
    fn element(&self, i: usize) -> Result<Element, Status>;
}

impl<D: InMemory> Dataset for D {
    fn make_iter(self: Arc<Self>, _: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(InMemoryIter { ds: self, next: 0 }))
    }

    fn cardinality(&self) -> i64 {
        self.num_elements() as i64
    }
}

struct InMemoryIter<D> {
    ds: Arc<D>,
    next: usize,
}

impl<D: InMemory> DatasetIter for InMemoryIter<D> {
    fn next(&mut self, _: &IterCtx) -> Result<Option<Element>, Status> {
        if self.next >= self.ds.num_elements() {
            return Ok(None);
        }
        let e = self.ds.element(self.next)?;
        self.next += 1;
        Ok(Some(e))
    }
}

/// Elements held in memory (a window's component, a completed cache).
pub(super) struct Elements(pub(super) Vec<Element>);

impl InMemory for Elements {
    fn num_elements(&self) -> usize {
        self.0.len()
    }

    fn element(&self, i: usize) -> Result<Element, Status> {
        Ok(self.0[i].clone())
    }
}

struct Tensors {
    components: Element,
    /// `None`: the whole components are the one element; else the number of rows.
    rows: Option<usize>,
}

impl InMemory for Tensors {
    fn num_elements(&self) -> usize {
        self.rows.unwrap_or(1)
    }

    fn element(&self, i: usize) -> Result<Element, Status> {
        match self.rows {
            None => Ok(self.components.clone()),
            Some(_) => self.components.iter().map(|t| row(t, i)).collect(),
        }
    }
}

/// `TensorDataset` (`slices == false`) and `TensorSliceDataset`.
pub(super) fn tensors(_: &NodeDef, slices: bool) -> Result<BuildFn, Status> {
    Ok(Box::new(move |ctx| {
        let components: Element = (0..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
        let rows = if slices {
            let mut n = None;
            for t in &components {
                let Some(&d0) = t.dims().first() else {
                    return Err(
                        ctx.error("Each component must have at least one dimension (a scalar cannot be sliced)")
                    );
                };
                if n.is_some_and(|n| n != d0) {
                    return Err(ctx.error(format!(
                        "All components must have the same size in the 0th dimension: {} and {d0}",
                        n.unwrap_or(0)
                    )));
                }
                n = Some(d0);
            }
            Some(n.unwrap_or(0))
        } else {
            None
        };
        Ok(Arc::new(Tensors { components, rows }) as Arc<dyn Dataset>)
    }))
}

struct Range {
    start: i64,
    stop: i64,
    step: i64,
    dtype: DataType,
}

struct RangeIter {
    ds: Arc<Range>,
    next: i64,
}

impl Dataset for Range {
    fn make_iter(self: Arc<Self>, _: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(RangeIter { next: self.start, ds: self }))
    }

    fn cardinality(&self) -> i64 {
        let (a, b, s) = (self.start as i128, self.stop as i128, self.step as i128);
        let n = if s > 0 { (b - a + s - 1) / s } else { (a - b - s - 1) / -s };
        n.clamp(0, i64::MAX as i128) as i64
    }
}

impl DatasetIter for RangeIter {
    fn next(&mut self, _: &IterCtx) -> Result<Option<Element>, Status> {
        let (v, d) = (self.next, &self.ds);
        if (d.step > 0 && v >= d.stop) || (d.step < 0 && v <= d.stop) {
            return Ok(None);
        }
        // Past the end of i64 the sequence ends.
        self.next = v.checked_add(d.step).unwrap_or(if d.step > 0 { i64::MAX } else { i64::MIN });
        let t = match d.dtype {
            DataType::Int32 => Tensor::scalar(v as i32),
            DataType::Float => Tensor::scalar(v as f32),
            DataType::Double => Tensor::scalar(v as f64),
            DataType::UInt8 => Tensor::scalar(v as u8),
            _ => Tensor::scalar(v),
        };
        Ok(Some(vec![t]))
    }
}

/// `RangeDataset`.
pub(super) fn range(n: &NodeDef) -> Result<BuildFn, Status> {
    let types = n.attr_list_type("output_types")?;
    let dtype = match types.as_slice() {
        [d @ (DataType::Int64 | DataType::Int32 | DataType::Float | DataType::Double | DataType::UInt8)] => *d,
        t => return Err(n.node_error(format!("RangeDataset produces one int or float component, not {t:?}"))),
    };
    Ok(Box::new(move |ctx| {
        let start = scalar_i64(ctx, 0, "start")?;
        let stop = scalar_i64(ctx, 1, "stop")?;
        let step = scalar_i64(ctx, 2, "step")?;
        if step == 0 {
            return Err(Status::invalid_argument("step must be a non-zero integer."));
        }
        Ok(Arc::new(Range { start, stop, step, dtype }) as Arc<dyn Dataset>)
    }))
}
