//! Stages that call a user function per element: `MapDataset` and
//! `ParallelMapDataset(V2)` (up to `num_parallel_calls` calls in flight, results in input
//! order), `FilterDataset` (keeps elements whose `predicate` is true) and `FlatMapDataset`
//! (each element's `f` returns a dataset whose elements follow in order).

use std::collections::VecDeque;
use std::sync::Arc;

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::dataset::{
    check_element, dataset_input, dataset_of, declared, scalar_i64, Dataset, DatasetIter, DatasetRef, Element, IterCtx,
    Shapes, UNKNOWN,
};
use super::func::{DataFunc, FuncSpec, PendingCall};
use super::BuildFn;

/// What a function stage does with the function's results.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Map,
    Filter,
    FlatMap,
}

struct FnStage {
    input: Arc<DatasetRef>,
    f: DataFunc,
    /// `flat_map`: each result is a dataset to iterate.
    flat: bool,
    /// Calls in flight (1: sequential).
    parallel: usize,
    types: Vec<DataType>,
    shapes: Shapes,
}

struct FnStageIter {
    ds: Arc<FnStage>,
    input: Option<Box<dyn DatasetIter>>,
    /// Calls started, oldest first.
    pending: VecDeque<PendingCall>,
    /// The dataset of the current `flat_map` element.
    inner: Option<Box<dyn DatasetIter>>,
}

impl Dataset for FnStage {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let input = Some(self.input.iter(ctx)?);
        Ok(Box::new(FnStageIter { ds: self, input, pending: VecDeque::new(), inner: None }))
    }

    fn cardinality(&self) -> i64 {
        if self.flat {
            UNKNOWN
        } else {
            self.input.cardinality()
        }
    }
}

impl FnStageIter {
    /// Starts calls until `parallel` are in flight or the input ends.
    fn fill(&mut self, ctx: &IterCtx) -> Result<(), Status> {
        while self.pending.len() < self.ds.parallel {
            let Some(input) = self.input.as_mut() else { break };
            match input.next(ctx)? {
                Some(e) => self.pending.push_back(self.ds.f.start(ctx, e)),
                None => self.input = None,
            }
        }
        Ok(())
    }

    /// The next call's results (`None` when the input is exhausted).
    fn next_result(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        self.fill(ctx)?;
        match self.pending.pop_front() {
            Some(p) => p.wait(ctx).map(Some),
            None => Ok(None),
        }
    }
}

impl DatasetIter for FnStageIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        let ds = self.ds.clone();
        let who = || format!("function '{}'", ds.f.name());
        loop {
            if let Some(inner) = self.inner.as_mut() {
                match inner.next(ctx)? {
                    Some(e) => {
                        check_element(&e, &ds.types, &ds.shapes, &who())?;
                        return Ok(Some(e));
                    }
                    None => self.inner = None,
                }
            }
            let Some(out) = self.next_result(ctx)? else { return Ok(None) };
            if !ds.flat {
                check_element(&out, &ds.types, &ds.shapes, &who())?;
                return Ok(Some(out));
            }
            let [d] = out.as_slice() else {
                return Err(Status::invalid_argument(format!("{} must return one dataset", who())));
            };
            let d = dataset_of(d, &who())?;
            self.inner = Some(d.iter(ctx)?);
        }
    }
}

struct Filter {
    input: Arc<DatasetRef>,
    f: DataFunc,
}

struct FilterIter {
    ds: Arc<Filter>,
    input: Box<dyn DatasetIter>,
}

impl Dataset for Filter {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(FilterIter { input: self.input.iter(ctx)?, ds: self }))
    }
}

impl DatasetIter for FilterIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        loop {
            let Some(e) = self.input.next(ctx)? else { return Ok(None) };
            let r = self.ds.f.call(ctx, e.clone())?;
            let keep = match r.as_slice() {
                [t] if t.dtype() == DataType::Bool && t.rank() == 0 => t.scalar_value::<bool>()?,
                _ => return Err(Status::invalid_argument("Filter predicate `f` must return a scalar bool.")),
            };
            if keep {
                return Ok(Some(e));
            }
        }
    }
}

/// `MapDataset`, `ParallelMapDataset(V2)`, `FilterDataset`, `FlatMapDataset`.
pub(super) fn fn_stage(n: &NodeDef, lib: Option<&FunctionDefLibrary>, depth: usize) -> Result<BuildFn, Status> {
    let (kind, attr, parallel_input) = match n.op.as_str() {
        "MapDataset" => (Kind::Map, "f", false),
        "ParallelMapDataset" | "ParallelMapDatasetV2" => (Kind::Map, "f", true),
        "FilterDataset" => (Kind::Filter, "predicate", false),
        _ => (Kind::FlatMap, "f", false),
    };
    let spec = FuncSpec::new(n, attr, lib, depth)?;
    let (types, shapes) = declared(n)?;
    if kind == Kind::Map && spec.ret_types() != types.as_slice() {
        return Err(n.node_error(format!(
            "the map function returns {:?} but the node declares output_types {types:?}",
            spec.ret_types()
        )));
    }
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let n_captured = ctx.num_inputs() - 1 - usize::from(parallel_input);
        let captured = (1..1 + n_captured).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
        let f = spec.bind(captured).map_err(|e| ctx.error(e.message))?;
        if kind == Kind::Filter {
            return Ok(Arc::new(Filter { input, f }) as Arc<dyn Dataset>);
        }
        let parallel = if parallel_input {
            let p = scalar_i64(ctx, ctx.num_inputs() - 1, "num_parallel_calls")?;
            match p {
                -1 => std::thread::available_parallelism().map_or(2, |n| n.get()),
                p if p >= 1 => p.min(1024) as usize,
                p => return Err(ctx.error(format!("num_parallel_calls must be greater than zero, got {p}"))),
            }
        } else {
            1
        };
        Ok(Arc::new(FnStage {
            input,
            f,
            flat: kind == Kind::FlatMap,
            parallel,
            types: types.clone(),
            shapes: shapes.clone(),
        }) as Arc<dyn Dataset>)
    }))
}
