//! `ReduceDataset` (`Dataset.reduce(initial_state, reduce_func)`): folds every element of a
//! dataset into a state with a user function, `state = f(state..., element...,
//! captured...)`, and outputs the final state (tensors, not a dataset). It runs on a data
//! thread, as `IteratorGetNext` does: the fold waits on the function's sub-steps.

use std::sync::Arc;

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::{NodeAttrs, Status};
use ferroflow_kernels::{AsyncOpKernel, DoneCallback, OpContext, OpKernel};

use super::dataset::{check_element, dataset_input, declared, in_node, IterCtx, Shapes};
use super::func::FuncSpec;
use super::iterator::set_element;
use super::pool;

struct Reduce {
    f: Arc<FuncSpec>,
    states: usize,
    types: Vec<ferroflow_core::DataType>,
    shapes: Shapes,
}

impl AsyncOpKernel for Reduce {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let (f, states, types, shapes) = (self.f.clone(), self.states, self.types.clone(), self.shapes.clone());
        pool::spawn_kernel(ctx, done, move |mut ctx, done| {
            let r = (|| -> Result<Vec<ferroflow_core::Tensor>, Status> {
                let ds = dataset_input(&ctx, 0)?;
                let mut state = (1..1 + states).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
                let captured = (1 + states..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
                let func = f.bind(captured)?;
                let step = ctx.step().clone();
                let ictx = IterCtx::for_iterator(&step).with_caller(&step);
                let node = ctx.node().name.clone();
                let mut it = ds.iter(&ictx)?;
                while let Some(e) = it.next(&ictx)? {
                    ictx.check()?;
                    let mut args = std::mem::take(&mut state);
                    args.extend(e);
                    state = func.call(&ictx, args).map_err(|e| in_node(e.context("reduce_func"), &node))?;
                    check_element(&state, &types, &shapes, &node)?;
                }
                Ok(state)
            })();
            let node = ctx.node().name.clone();
            let r = r.and_then(|s| set_element(&mut ctx, &node, s));
            done(ctx, r)
        });
    }
}

/// The kernel of a `ReduceDataset` node.
pub(super) fn kernel(n: &NodeDef, lib: Option<&FunctionDefLibrary>, depth: usize) -> Result<Box<dyn OpKernel>, Status> {
    let states = n.attr_list_type("Tstate")?.len();
    let (types, shapes) = declared(n)?;
    if types.len() != states {
        return Err(n.node_error(format!("{} output types for a state of {states} tensors", types.len())));
    }
    let f = FuncSpec::with_captured(n, "f", "Targuments", lib, depth)?;
    Ok(Box::new(Reduce { f: Arc::new(f), states, types, shapes }))
}
