//! `InterleaveDataset` and `ParallelInterleaveDatasetV2`/`V3`/`V4` (`Dataset.interleave`):
//! each input element's `f` returns a dataset; up to `cycle_length` of them are open at once
//! and `block_length` elements are taken from each in turn. A finished dataset's place in
//! the cycle goes to the next input element's. The parallel forms give the same order (the
//! one TensorFlow's deterministic order is, and a valid one where `deterministic` is
//! "false" or `sloppy` is set); they read the open datasets one after another here.

use std::sync::Arc;

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::Status;
use ferroflow_kernels::OpContext;

use super::dataset::{
    check_element, dataset_input, dataset_of, declared, scalar_i64, Dataset, DatasetIter, DatasetRef, Element, IterCtx,
    Shapes, INFINITE, UNKNOWN,
};
use super::func::{DataFunc, FuncSpec};
use super::BuildFn;

struct Interleave {
    input: Arc<DatasetRef>,
    f: DataFunc,
    cycle_length: usize,
    block_length: usize,
    types: Vec<ferroflow_core::DataType>,
    shapes: Shapes,
}

struct InterleaveIter {
    ds: Arc<Interleave>,
    input: Option<Box<dyn DatasetIter>>,
    /// The open datasets of the cycle (`None`: an empty place).
    cycle: Vec<Option<Box<dyn DatasetIter>>>,
    /// The place being read and how many elements of its block were taken.
    at: usize,
    taken: usize,
}

impl Dataset for Interleave {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let cycle = (0..self.cycle_length).map(|_| None).collect();
        Ok(Box::new(InterleaveIter { input: Some(self.input.iter(ctx)?), ds: self, cycle, at: 0, taken: 0 }))
    }

    fn cardinality(&self) -> i64 {
        match self.input.cardinality() {
            INFINITE => INFINITE,
            0 => 0,
            _ => UNKNOWN,
        }
    }
}

impl InterleaveIter {
    fn advance(&mut self) {
        self.taken = 0;
        self.at = (self.at + 1) % self.cycle.len();
    }

    /// The dataset `f` makes of the next input element (`None` at the input's end).
    fn open_next(&mut self, ctx: &IterCtx) -> Result<Option<Box<dyn DatasetIter>>, Status> {
        let Some(input) = self.input.as_mut() else { return Ok(None) };
        let Some(e) = input.next(ctx)? else {
            self.input = None;
            return Ok(None);
        };
        let out = self.ds.f.call(ctx, e)?;
        let [d] = out.as_slice() else {
            return Err(Status::invalid_argument(format!(
                "interleave function '{}' must return one dataset, returned {} values",
                self.ds.f.name(),
                out.len()
            )));
        };
        Ok(Some(dataset_of(d, &format!("interleave function '{}'", self.ds.f.name()))?.iter(ctx)?))
    }
}

impl DatasetIter for InterleaveIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        loop {
            ctx.check()?;
            if let Some(open) = self.cycle[self.at].as_mut() {
                match open.next(ctx)? {
                    Some(e) => {
                        check_element(
                            &e,
                            &self.ds.types,
                            &self.ds.shapes,
                            &format!("function '{}'", self.ds.f.name()),
                        )?;
                        self.taken += 1;
                        if self.taken == self.ds.block_length {
                            self.advance();
                        }
                        return Ok(Some(e));
                    }
                    None => {
                        self.cycle[self.at] = None;
                        self.advance();
                    }
                }
            } else if self.input.is_some() {
                // An empty place takes the next input element's dataset and is read at once.
                self.cycle[self.at] = self.open_next(ctx)?;
            } else if self.cycle.iter().all(Option::is_none) {
                return Ok(None);
            } else {
                self.advance();
            }
        }
    }
}

/// A positive length, or `AUTOTUNE` (-1): TensorFlow then uses the number of cores.
fn length(ctx: &OpContext, i: usize, what: &str, autotune_ok: bool) -> Result<usize, Status> {
    let v = scalar_i64(ctx, i, what)?;
    match v {
        -1 if autotune_ok => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        v if v >= 1 => Ok(v as usize),
        v => Err(ctx.error(format!("{what} must be greater than zero, got {v}"))),
    }
}

/// `InterleaveDataset`, `ParallelInterleaveDatasetV2`/`V3`/`V4`.
pub(super) fn interleave(n: &NodeDef, lib: Option<&FunctionDefLibrary>, depth: usize) -> Result<BuildFn, Status> {
    // Scalars after the captured arguments.
    let trailing = match n.op.as_str() {
        "InterleaveDataset" => 2,
        "ParallelInterleaveDatasetV4" => 5,
        _ => 3,
    };
    let spec = FuncSpec::new(n, "f", lib, depth)?;
    let (types, shapes) = declared(n)?;
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let first = ctx.num_inputs() - trailing;
        let captured = (1..first).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
        let f = spec.bind(captured).map_err(|e| ctx.error(e.message))?;
        let cycle_length = length(ctx, first, "cycle_length", true)?;
        let block_length = length(ctx, first + 1, "block_length", false)?;
        if trailing == 5 {
            for (i, what) in [(first + 2, "buffer_output_elements"), (first + 3, "prefetch_input_elements")] {
                let v = scalar_i64(ctx, i, what)?;
                if v < -1 || (v == 0 && what == "buffer_output_elements") {
                    return Err(ctx.error(format!("{what} must be greater than zero or AUTOTUNE, got {v}")));
                }
            }
        }
        if trailing > 2 {
            let p = scalar_i64(ctx, ctx.num_inputs() - 1, "num_parallel_calls")?;
            if p != -1 && p < 1 {
                return Err(ctx.error(format!("num_parallel_calls must be greater than zero, got {p}")));
            }
        }
        Ok(Arc::new(Interleave { input, f, cycle_length, block_length, types: types.clone(), shapes: shapes.clone() })
            as Arc<dyn Dataset>)
    }))
}
