//! Stages that only count or combine: `RepeatDataset` (`count` passes, `-1` for ever),
//! `TakeDataset` / `SkipDataset` (the first `count` elements / all after them; `-1` means
//! all), `ZipDataset` (tuples of the inputs' elements until one ends) and
//! `ConcatenateDataset`.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::dataset::{
    dataset_input, scalar_i64, Dataset, DatasetIter, DatasetRef, Element, IterCtx, INFINITE, UNKNOWN,
};
use super::BuildFn;

struct Repeat {
    input: Arc<DatasetRef>,
    count: i64,
}

struct RepeatIter {
    ds: Arc<Repeat>,
    input: Option<Box<dyn DatasetIter>>,
    pass: i64,
    /// Whether the current pass produced an element (an empty input ends a `-1` repeat).
    produced: bool,
}

impl Dataset for Repeat {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let input = if self.count == 0 { None } else { Some(self.input.iter(ctx)?) };
        Ok(Box::new(RepeatIter { ds: self, input, pass: 0, produced: false }))
    }

    fn cardinality(&self) -> i64 {
        let n = self.input.cardinality();
        match (n, self.count) {
            (0, _) | (_, 0) => 0,
            (INFINITE, _) => INFINITE,
            (_, c) if c < 0 => INFINITE,
            (UNKNOWN, _) => UNKNOWN,
            (n, c) => n.saturating_mul(c),
        }
    }
}

impl DatasetIter for RepeatIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        loop {
            let Some(input) = self.input.as_mut() else { return Ok(None) };
            if let Some(e) = input.next(ctx)? {
                self.produced = true;
                return Ok(Some(e));
            }
            self.pass += 1;
            let more = if self.ds.count < 0 { self.produced } else { self.pass < self.ds.count };
            self.input = if more { Some(self.ds.input.iter(ctx)?) } else { None };
            self.produced = false;
        }
    }
}

struct TakeSkip {
    input: Arc<DatasetRef>,
    count: i64,
    skip: bool,
}

struct TakeSkipIter {
    ds: Arc<TakeSkip>,
    input: Box<dyn DatasetIter>,
    seen: i64,
}

impl Dataset for TakeSkip {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(TakeSkipIter { input: self.input.iter(ctx)?, ds: self, seen: 0 }))
    }

    fn cardinality(&self) -> i64 {
        let n = self.input.cardinality();
        match (n, self.skip, self.count) {
            (UNKNOWN, ..) => UNKNOWN,
            (INFINITE, false, c) if c >= 0 => c,
            (INFINITE, ..) => INFINITE,
            (n, false, c) => {
                if c < 0 {
                    n
                } else {
                    n.min(c)
                }
            }
            (_, true, c) if c < 0 => 0,
            (n, true, c) => (n - c).max(0),
        }
    }
}

impl DatasetIter for TakeSkipIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        let count = self.ds.count;
        if self.ds.skip {
            while count < 0 || self.seen < count {
                if self.input.next(ctx)?.is_none() {
                    return Ok(None);
                }
                self.seen += 1;
            }
            return self.input.next(ctx);
        }
        if count >= 0 && self.seen >= count {
            return Ok(None);
        }
        let e = self.input.next(ctx)?;
        self.seen += 1;
        Ok(e)
    }
}

struct Zip {
    inputs: Vec<Arc<DatasetRef>>,
}

struct ZipIter {
    inputs: Vec<Box<dyn DatasetIter>>,
    done: bool,
}

impl Dataset for Zip {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let inputs = self.inputs.iter().map(|d| d.iter(ctx)).collect::<Result<_, _>>()?;
        Ok(Box::new(ZipIter { inputs, done: false }))
    }

    fn cardinality(&self) -> i64 {
        let all: Vec<i64> = self.inputs.iter().map(|d| d.cardinality()).collect();
        let finite = all.iter().copied().filter(|&n| n >= 0).min();
        match finite {
            Some(n) => n,
            None if all.contains(&UNKNOWN) => UNKNOWN,
            None => INFINITE,
        }
    }
}

impl DatasetIter for ZipIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        if self.done {
            return Ok(None);
        }
        let mut out = Vec::new();
        for i in self.inputs.iter_mut() {
            match i.next(ctx)? {
                Some(e) => out.extend(e),
                None => {
                    self.done = true;
                    return Ok(None);
                }
            }
        }
        Ok(Some(out))
    }
}

struct Concat {
    first: Arc<DatasetRef>,
    second: Arc<DatasetRef>,
}

struct ConcatIter {
    ds: Arc<Concat>,
    cur: Option<Box<dyn DatasetIter>>,
    on_second: bool,
}

impl Dataset for Concat {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(ConcatIter { cur: Some(self.first.iter(ctx)?), ds: self, on_second: false }))
    }

    fn cardinality(&self) -> i64 {
        match (self.first.cardinality(), self.second.cardinality()) {
            (INFINITE, _) | (_, INFINITE) => INFINITE,
            (UNKNOWN, _) | (_, UNKNOWN) => UNKNOWN,
            (a, b) => a.saturating_add(b),
        }
    }
}

impl DatasetIter for ConcatIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        loop {
            let Some(cur) = self.cur.as_mut() else { return Ok(None) };
            if let Some(e) = cur.next(ctx)? {
                return Ok(Some(e));
            }
            self.cur = if self.on_second { None } else { Some(self.ds.second.iter(ctx)?) };
            self.on_second = true;
        }
    }
}

/// `RepeatDataset`, `TakeDataset`, `SkipDataset`, `ZipDataset`, `ConcatenateDataset`.
pub(super) fn simple(n: &NodeDef) -> Result<BuildFn, Status> {
    let op = n.op.clone();
    Ok(Box::new(move |ctx| {
        Ok(match op.as_str() {
            "ZipDataset" => {
                let inputs = (0..ctx.num_inputs()).map(|i| dataset_input(ctx, i)).collect::<Result<_, _>>()?;
                Arc::new(Zip { inputs }) as Arc<dyn Dataset>
            }
            "ConcatenateDataset" => {
                let (first, second) = (dataset_input(ctx, 0)?, dataset_input(ctx, 1)?);
                if first.types != second.types {
                    return Err(ctx.error(format!(
                        "input dataset and dataset to concatenate have different types: {:?} and {:?}",
                        first.types, second.types
                    )));
                }
                Arc::new(Concat { first, second })
            }
            o => {
                let input = dataset_input(ctx, 0)?;
                let count = scalar_i64(ctx, 1, "count")?;
                if o == "RepeatDataset" {
                    Arc::new(Repeat { input, count })
                } else {
                    Arc::new(TakeSkip { input, count, skip: o == "SkipDataset" })
                }
            }
        })
    }))
}
