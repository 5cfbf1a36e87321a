//! `GeneratorDataset`: elements made by functions — `init_func` makes a state once per
//! pass, `next_func(state)` makes each element until it fails with OUT_OF_RANGE, then
//! `finalize_func(state)` runs. TensorFlow's `MultiDeviceIterator` builds its per-device
//! datasets this way (each `next_func` reads one shard of the multi-device iterator).

use std::sync::Arc;

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::{Code, NodeAttrs, Status};

use super::dataset::{Dataset, DatasetIter, Element, IterCtx};
use super::func::{DataFunc, FuncSpec};
use super::BuildFn;

struct Generator {
    init: DataFunc,
    next: DataFunc,
    finalize: DataFunc,
}

struct GeneratorIter {
    ds: Arc<Generator>,
    /// The state `init_func` made; `None` once the pass ended.
    state: Option<Element>,
}

impl Dataset for Generator {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let state = self.init.call(ctx, vec![])?;
        Ok(Box::new(GeneratorIter { ds: self, state: Some(state) }))
    }
}

impl DatasetIter for GeneratorIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        let Some(state) = self.state.as_ref() else { return Ok(None) };
        match self.ds.next.call(ctx, state.clone()) {
            Ok(e) => Ok(Some(e)),
            Err(e) if e.code == Code::OutOfRange => {
                let state = self.state.take().unwrap_or_default();
                self.ds.finalize.call(ctx, state)?;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// `GeneratorDataset(init_func_other_args, next_func_other_args, finalize_func_other_args)`.
pub(super) fn generator(n: &NodeDef, lib: Option<&FunctionDefLibrary>, depth: usize) -> Result<BuildFn, Status> {
    let init = FuncSpec::taking(n, "init_func", "Tinit_func_args", lib, depth, Some(0))?;
    // The other two take the state `init_func` makes, then their captured inputs.
    let state = Some(init.ret_types().len());
    let next = FuncSpec::taking(n, "next_func", "Tnext_func_args", lib, depth, state)?;
    let finalize = FuncSpec::taking(n, "finalize_func", "Tfinalize_func_args", lib, depth, state)?;
    let counts = [
        n.attr_list_type("Tinit_func_args")?.len(),
        n.attr_list_type("Tnext_func_args")?.len(),
        n.attr_list_type("Tfinalize_func_args")?.len(),
    ];
    Ok(Box::new(move |ctx| {
        let mut at = 0;
        let mut take = |k: usize| {
            let r = (at..at + k).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>();
            at += k;
            r
        };
        let (a, b, c) = (take(counts[0])?, take(counts[1])?, take(counts[2])?);
        let bind = |f: &FuncSpec, args| f.bind(args).map_err(|e| ctx.error(e.message));
        Ok(Arc::new(Generator { init: bind(&init, a)?, next: bind(&next, b)?, finalize: bind(&finalize, c)? })
            as Arc<dyn Dataset>)
    }))
}
