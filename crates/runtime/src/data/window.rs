//! `WindowDataset` (`Dataset.window(size, shift, stride, drop_remainder)`): each element is a
//! window of the input, given as one dataset per component (a `DT_VARIANT` scalar each),
//! which a user function then batches or reduces (`window(...).flat_map(lambda w: w.batch(n))`).
//!
//! TensorFlow's order: a window takes every `stride`-th of the next `(size - 1) * stride + 1`
//! buffered elements, then the buffer moves on by `shift` (skipping input elements when
//! `shift` is larger than the buffer). The last windows are shorter unless `drop_remainder`.

use std::collections::VecDeque;
use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::dataset::{dataset_input, dataset_tensor, scalar_bool, scalar_i64, Dataset, DatasetIter, DatasetRef};
use super::dataset::{Element, IterCtx, INFINITE, UNKNOWN};
use super::sources::Elements;
use super::BuildFn;

struct Window {
    input: Arc<DatasetRef>,
    size: usize,
    shift: usize,
    stride: usize,
    drop_remainder: bool,
    node: String,
}

impl Window {
    /// The buffer a full window spans.
    fn span(&self) -> usize {
        (self.size - 1) * self.stride + 1
    }
}

struct WindowIter {
    ds: Arc<Window>,
    /// `None` once the input has ended.
    input: Option<Box<dyn DatasetIter>>,
    buffer: VecDeque<Element>,
}

impl Dataset for Window {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(WindowIter { input: Some(self.input.iter(ctx)?), ds: self, buffer: VecDeque::new() }))
    }

    fn cardinality(&self) -> i64 {
        let n = self.input.cardinality();
        if n == INFINITE || n == UNKNOWN {
            return n;
        }
        let (shift, span) = (self.shift as i64, self.span() as i64);
        if self.drop_remainder {
            if n >= span {
                (n - span) / shift + 1
            } else {
                0
            }
        } else {
            (n + shift - 1) / shift
        }
    }
}

impl DatasetIter for WindowIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        let span = self.ds.span();
        while self.buffer.len() < span {
            let Some(input) = self.input.as_mut() else { break };
            match input.next(ctx)? {
                Some(e) => self.buffer.push_back(e),
                None => self.input = None,
            }
        }
        if self.buffer.is_empty() || (self.ds.drop_remainder && self.buffer.len() < span) {
            return Ok(None);
        }
        let count = 1 + (self.buffer.len() - 1) / self.ds.stride;
        let window: Vec<Element> = (0..count).map(|i| self.buffer[i * self.ds.stride].clone()).collect();
        // Move on by `shift`, reading past the buffer when the shift is longer.
        if self.ds.shift >= self.buffer.len() {
            for _ in self.buffer.len()..self.ds.shift {
                let Some(input) = self.input.as_mut() else { break };
                if input.next(ctx)?.is_none() {
                    self.input = None;
                }
            }
            self.buffer.clear();
        } else {
            self.buffer.drain(..self.ds.shift);
        }
        let input = &self.ds.input;
        let out = (0..input.types.len())
            .map(|k| {
                let elems: Vec<Element> = window.iter().map(|e| vec![e[k].clone()]).collect();
                dataset_tensor(DatasetRef {
                    ds: Arc::new(Elements(elems)),
                    types: vec![input.types[k]],
                    shapes: vec![input.shapes[k].clone()],
                    node: format!("{} (window)", self.ds.node),
                    options: input.options.clone(),
                })
            })
            .collect();
        Ok(Some(out))
    }
}

/// `WindowDataset`: inputs `input_dataset`, `size`, `shift`, `stride`, `drop_remainder`.
pub(super) fn window(n: &NodeDef) -> Result<BuildFn, Status> {
    let node = n.name.clone();
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let mut args = [0usize; 3];
        for (k, what) in ["size", "shift", "stride"].iter().enumerate() {
            let v = scalar_i64(ctx, k + 1, what)?;
            if v <= 0 {
                return Err(ctx.error(format!("Window {what} must be greater than zero, but got {v}.")));
            }
            args[k] = usize::try_from(v).map_err(|_| ctx.error(format!("Window {what} {v} is too large")))?;
        }
        let [size, shift, stride] = args;
        if size.checked_sub(1).and_then(|s| s.checked_mul(stride)).is_none_or(|s| s > (1 << 40)) {
            return Err(ctx.error(format!("Window size {size} with stride {stride} spans too many elements")));
        }
        let drop_remainder = scalar_bool(ctx, 4, "drop_remainder")?;
        Ok(Arc::new(Window { input, size, shift, stride, drop_remainder, node: node.clone() }) as Arc<dyn Dataset>)
    }))
}
