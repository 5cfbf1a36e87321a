//! `UnbatchDataset` (`Dataset.unbatch`): each input element is a batch whose components
//! share their first dimension; its rows become elements, in order.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status};

use super::dataset::{check_element, dataset_input, declared, Dataset, DatasetIter, DatasetRef, Element, IterCtx};
use super::dataset::{Shapes, INFINITE, UNKNOWN};
use super::tensor_util::row;
use super::BuildFn;

struct Unbatch {
    input: Arc<DatasetRef>,
    types: Vec<DataType>,
    shapes: Shapes,
    node: String,
}

struct UnbatchIter {
    ds: Arc<Unbatch>,
    input: Box<dyn DatasetIter>,
    /// The batch being split and the next row to give.
    batch: Element,
    rows: usize,
    next: usize,
}

impl Dataset for Unbatch {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(UnbatchIter { input: self.input.iter(ctx)?, ds: self, batch: Vec::new(), rows: 0, next: 0 }))
    }

    /// The input's count times the batch size when every component declares the same
    /// first dimension (TensorFlow's rule).
    fn cardinality(&self) -> i64 {
        let n = self.input.cardinality();
        let dims: Vec<Option<i64>> =
            self.input.shapes.iter().map(|s| s.as_ref().and_then(|d| d.first().copied())).collect();
        let batch = match dims.first() {
            Some(Some(b)) if *b >= 0 && dims.iter().all(|d| *d == Some(*b)) => Some(*b),
            _ => None,
        };
        match (n, batch) {
            (INFINITE, _) => INFINITE,
            (n, Some(b)) if n >= 0 => n * b,
            _ => UNKNOWN,
        }
    }
}

impl DatasetIter for UnbatchIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        while self.next >= self.rows {
            let Some(batch) = self.input.next(ctx)? else { return Ok(None) };
            let mut rows = None;
            for (k, t) in batch.iter().enumerate() {
                let Some(&b) = t.shape().dims().first() else {
                    return Err(Status::invalid_argument(format!(
                        "{}: Input element must have a non-scalar value in each component (component {k} is a \
                         scalar)",
                        self.ds.node
                    )));
                };
                match rows {
                    None => rows = Some(b),
                    Some(r) if r != b => {
                        return Err(Status::invalid_argument(format!(
                            "{}: Input element must have the same batch size in each component. Component 0 had \
                             size {r} but component {k} had size, {b}.",
                            self.ds.node
                        )))
                    }
                    Some(_) => {}
                }
            }
            self.rows = rows.unwrap_or(0);
            self.next = 0;
            self.batch = batch;
        }
        let e = self.batch.iter().map(|t| row(t, self.next)).collect::<Result<Element, _>>()?;
        self.next += 1;
        check_element(&e, &self.ds.types, &self.ds.shapes, &self.ds.node)?;
        Ok(Some(e))
    }
}

/// `UnbatchDataset`.
pub(super) fn unbatch(n: &NodeDef) -> Result<BuildFn, Status> {
    let (types, shapes) = declared(n)?;
    let node = n.name.clone();
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        Ok(Arc::new(Unbatch { input, types: types.clone(), shapes: shapes.clone(), node: node.clone() })
            as Arc<dyn Dataset>)
    }))
}
