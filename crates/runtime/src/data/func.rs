//! A user function of a dataset stage (`map_func`, `predicate`, the `f` of `flat_map`):
//! a function of the graph's library with its captured inputs (`other_arguments`), called
//! on an element. The call runs the function's executor as a sub-step of the iterator's
//! own context; the data thread waits for it in bounded slices.

use std::sync::mpsc;
use std::sync::Arc;

use ferroflow_core::proto::{attr_value::Value as AV, FunctionDefLibrary, NodeDef};
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use ferroflow_kernels::StepCtx;

use super::dataset::{Element, IterCtx};
use crate::function::FunctionBody;

/// An instantiated function and the types of its captured arguments.
pub(crate) struct FuncSpec {
    body: Arc<FunctionBody>,
    captured_types: Vec<DataType>,
    /// How many of the captured inputs the function takes (the first ones).
    used: usize,
}

impl FuncSpec {
    /// Instantiates the function named by attr `attr` of `n`, whose captured inputs have the
    /// types of attr `Targuments`.
    pub(crate) fn new(
        n: &NodeDef,
        attr: &str,
        library: Option<&FunctionDefLibrary>,
        depth: usize,
    ) -> Result<FuncSpec, Status> {
        FuncSpec::with_captured(n, attr, "Targuments", library, depth)
    }

    /// [`FuncSpec::new`] with the captured inputs' types in attr `types_attr`.
    pub(crate) fn with_captured(
        n: &NodeDef,
        attr: &str,
        types_attr: &str,
        library: Option<&FunctionDefLibrary>,
        depth: usize,
    ) -> Result<FuncSpec, Status> {
        FuncSpec::taking(n, attr, types_attr, library, depth, None)
    }

    /// [`FuncSpec::with_captured`] for a function called on `leading` tensors followed by
    /// the captured inputs, of which it may take only the first ones (TensorFlow passes the
    /// rest and the function ignores them: `MultiDeviceIterator`'s generators capture the
    /// iterator only to keep it alive).
    pub(crate) fn taking(
        n: &NodeDef,
        attr: &str,
        types_attr: &str,
        library: Option<&FunctionDefLibrary>,
        depth: usize,
        leading: Option<usize>,
    ) -> Result<FuncSpec, Status> {
        let name = match n.attr_value(attr)?.value.as_ref() {
            Some(AV::Func(f)) => f.name.clone(),
            _ => return Err(n.node_error(format!("attr '{attr}' must name a function"))),
        };
        let captured_types = if n.has_attr(types_attr) { n.attr_list_type(types_attr)? } else { vec![] };
        let body = FunctionBody::instantiate(&name, library, depth)?;
        let k = body.arg_types.len();
        let used = match leading {
            Some(l) => captured_types.len().min(k.saturating_sub(l)),
            None => captured_types.len(),
        };
        if k < used || body.arg_types[k - used..] != captured_types[..used] {
            return Err(n.node_error(format!(
                "function '{name}' takes {:?}, which does not end with the captured arguments' types {:?}",
                body.arg_types,
                &captured_types[..used]
            )));
        }
        Ok(FuncSpec { body: Arc::new(body), captured_types, used })
    }

    /// The function bound to the captured inputs `ctx.input(first..)`.
    pub(crate) fn bind(&self, captured: Vec<Tensor>) -> Result<DataFunc, Status> {
        let got: Vec<DataType> = captured.iter().map(Tensor::dtype).collect();
        if got != self.captured_types {
            return Err(Status::invalid_argument(format!(
                "function '{}': captured arguments have types {got:?}, {:?} declared",
                self.body.name, self.captured_types
            )));
        }
        let mut captured = captured;
        captured.truncate(self.used);
        Ok(DataFunc { body: self.body.clone(), captured })
    }

    /// Types of the results.
    pub(crate) fn ret_types(&self) -> &[DataType] {
        &self.body.ret_types
    }
}

/// A function bound to its captured arguments.
#[derive(Clone)]
pub(crate) struct DataFunc {
    body: Arc<FunctionBody>,
    captured: Vec<Tensor>,
}

/// A call under way; [`PendingCall::wait`] gets its results.
pub(crate) struct PendingCall {
    rx: mpsc::Receiver<Result<Element, Status>>,
    name: String,
}

impl DataFunc {
    /// The function's name (for messages).
    pub(crate) fn name(&self) -> &str {
        &self.body.name
    }

    /// Starts a call on `element` (followed by the captured arguments).
    pub(crate) fn start(&self, ctx: &IterCtx, element: Element) -> PendingCall {
        let mut args = element;
        args.extend(self.captured.iter().cloned());
        start_call(&self.body, &ctx.own, args)
    }

    /// Calls the function on `element` and waits for its results.
    pub(crate) fn call(&self, ctx: &IterCtx, element: Element) -> Result<Element, Status> {
        self.start(ctx, element).wait(ctx)
    }
}

/// Starts a call of `body` as a sub-step of `parent`.
pub(crate) fn start_call(body: &FunctionBody, parent: &StepCtx, args: Element) -> PendingCall {
    let (tx, rx) = mpsc::sync_channel(1);
    body.call(
        parent,
        args,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    );
    PendingCall { rx, name: body.name.clone() }
}

impl PendingCall {
    /// Waits for the results, bounded by the context's cancellation and deadline.
    pub(crate) fn wait(self, ctx: &IterCtx) -> Result<Element, Status> {
        loop {
            match self.rx.recv_timeout(ctx.wait_slice()) {
                Ok(r) => return r,
                Err(mpsc::RecvTimeoutError::Timeout) => ctx.check()?,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Status::internal(format!("function '{}' ended without a result", self.name)))
                }
            }
        }
    }
}
