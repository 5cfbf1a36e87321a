//! `BatchDataset(V2)` (consecutive elements stacked; the last batch may be smaller unless
//! `drop_remainder`) and `PaddedBatchDataset(V2)` (each component padded to
//! `padded_shapes`, where `-1` means the largest size in the batch, with its padding value).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

use super::dataset::{dataset_input, scalar_bool, scalar_i64, Dataset, DatasetIter, DatasetRef, Element, IterCtx};
use super::tensor_util::{pad_stack, stack, to_i64s};
use super::BuildFn;

struct Batch {
    input: Arc<DatasetRef>,
    size: usize,
    drop_remainder: bool,
    /// Padded batches: per component the requested shape and the padding value.
    padding: Option<Vec<(Vec<i64>, Tensor)>>,
}

struct BatchIter {
    ds: Arc<Batch>,
    input: Option<Box<dyn DatasetIter>>,
}

impl Dataset for Batch {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(BatchIter { input: Some(self.input.iter(ctx)?), ds: self }))
    }

    fn cardinality(&self) -> i64 {
        let n = self.input.cardinality();
        if n < 0 {
            return n;
        }
        let size = self.size.max(1) as i64;
        if self.drop_remainder {
            n / size
        } else {
            (n + size - 1) / size
        }
    }
}

impl Batch {
    fn assemble(&self, items: Vec<Element>) -> Result<Element, Status> {
        let n = items[0].len();
        let mut out = Vec::with_capacity(n);
        for c in 0..n {
            let col: Vec<Tensor> = items
                .iter()
                .map(|e| {
                    e.get(c).cloned().ok_or_else(|| Status::invalid_argument("elements of a batch differ in arity"))
                })
                .collect::<Result<_, _>>()?;
            out.push(match &self.padding {
                None => stack(&col).map_err(|e| e.context(format!("component {c}")))?,
                Some(p) => {
                    let (want, pad) = &p[c];
                    let rank = col[0].rank();
                    if want.len() != rank || col.iter().any(|t| t.rank() != rank) {
                        return Err(Status::invalid_argument(format!(
                            "component {c}: padded shape {want:?} has rank {} but an element has shape {}",
                            want.len(),
                            col.iter().find(|t| t.rank() != want.len()).unwrap_or(&col[0]).shape()
                        )));
                    }
                    let row: Vec<usize> = (0..rank)
                        .map(|d| {
                            if want[d] >= 0 {
                                want[d] as usize
                            } else {
                                col.iter().map(|t| t.dims()[d]).max().unwrap_or(0)
                            }
                        })
                        .collect();
                    pad_stack(&col, &row, pad).map_err(|e| e.context(format!("component {c}")))?
                }
            });
        }
        Ok(out)
    }
}

impl DatasetIter for BatchIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        let mut items = Vec::with_capacity(self.ds.size.min(4096));
        while items.len() < self.ds.size {
            let Some(input) = self.input.as_mut() else { break };
            match input.next(ctx)? {
                Some(e) => items.push(e),
                None => self.input = None,
            }
        }
        if items.is_empty() || (self.ds.drop_remainder && items.len() < self.ds.size) {
            return Ok(None);
        }
        self.ds.assemble(items).map(Some)
    }
}

/// `BatchDataset`, `BatchDatasetV2`, `PaddedBatchDataset`, `PaddedBatchDatasetV2`.
pub(super) fn batch(n: &NodeDef) -> Result<BuildFn, Status> {
    let padded = n.op.starts_with("Padded");
    let v2 = n.op.ends_with("V2");
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let size = scalar_i64(ctx, 1, "batch_size")?;
        if size <= 0 {
            return Err(ctx.error("Batch size must be greater than zero."));
        }
        let last = ctx.num_inputs() - 1;
        let drop_remainder = v2 && scalar_bool(ctx, last, "drop_remainder")?;
        let padding = if padded {
            let k = input.types.len();
            if ctx.num_inputs() < 2 + 2 * k {
                return Err(ctx.error(format!("needs {k} padded shapes and {k} padding values")));
            }
            let mut p = Vec::with_capacity(k);
            for c in 0..k {
                let shape = to_i64s(&ctx.input(2 + c)?, "padded_shapes")?;
                let value = ctx.input(2 + k + c)?;
                if value.rank() != 0 {
                    return Err(ctx.error(format!("padding value {c} must be a scalar, got shape {}", value.shape())));
                }
                p.push((shape, value));
            }
            Some(p)
        } else {
            None
        };
        let size = size.min(1 << 30) as usize;
        Ok(Arc::new(Batch { input, size, drop_remainder, padding }) as Arc<dyn Dataset>)
    }))
}
