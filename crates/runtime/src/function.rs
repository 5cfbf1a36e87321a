//! Functions of a graph's library, run by the function-calling ops: `If` and `StatelessIf`
//! (what `tf.cond` builds under TensorFlow 2 behaviour, also from `tf.compat.v1` code, e.g.
//! the global-step read of `MonitoredTrainingSession`'s hooks), `Case` and `StatelessCase`
//! (`tf.switch_case`: the branch `branch_index` names, the last one when it is out of
//! range, as TensorFlow's kernel picks), `While` and
//! `StatelessWhile` (`tf.while_loop`: the `cond` function on the loop variables, then the
//! `body` function, until `cond` is false; one iteration at a time), `PartitionedCall` and
//! `StatefulPartitionedCall` (a call of a `tf.function`).
//!
//! A function is instantiated when the calling node's executor is built: its `FunctionDef`
//! becomes a graph whose arguments are fed and whose results are fetched (the `_Recv`/`_Send`
//! rewrite a session uses), pruned to the results, the control results and the stateful
//! nodes, with an executor of its own. A call runs that executor as a sub-step of the
//! caller's step (same resources and deadline, cancelled with it; its own rendezvous, whose
//! `RemoteCall`s to other tasks go out through the caller's), entirely
//! on the caller's device. TensorFlow instead lowers `If` into `Switch`/`Merge` before
//! placement and places the branch nodes one by one; ferroflow's placer puts a call with
//! the producers of the resources it takes, so a branch that reads a variable runs where
//! the variable lives.

use std::sync::Arc;

use ferroflow_core::proto::{attr_value::Value as AV, FunctionDefLibrary, NodeDef};
use ferroflow_core::{DataType, NodeAttrs, Status, Storage, Tensor};
use ferroflow_kernels::{AsyncOpKernel, CancelToken, DoneCallback, OpContext, OpKernel, Rendezvous, StepCtx};

use crate::executor::Executor;
use crate::function_graph::{function_graph, FunctionGraph};
use crate::rendezvous::LocalRendezvous;

/// Ops whose kernels call functions of the library.
pub(crate) const CALL_OPS: &[&str] = &[
    "If",
    "StatelessIf",
    "Case",
    "StatelessCase",
    "PartitionedCall",
    "StatefulPartitionedCall",
    "While",
    "StatelessWhile",
    "RemoteCall",
];

/// How deep calls may nest (instantiation is eager, so a recursive function must stop).
const MAX_DEPTH: usize = 32;

/// Device named in a body's rendezvous keys (the rendezvous is private to one call).
const BODY_DEVICE: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

pub(crate) type CallDone = Box<dyn FnOnce(Result<Vec<Tensor>, Status>) + Send>;

/// An instantiated function.
pub(crate) struct FunctionBody {
    pub(crate) name: String,
    exec: Arc<Executor>,
    pub(crate) arg_types: Vec<DataType>,
    pub(crate) ret_types: Vec<DataType>,
    feed_keys: Vec<String>,
    fetch_keys: Vec<String>,
    /// For each result, its position in `fetch_keys` (two results may be one tensor).
    ret_fetch: Vec<usize>,
}

impl FunctionBody {
    /// Instantiates function `name` of `library`; `depth` counts the enclosing calls.
    pub(crate) fn instantiate(
        name: &str,
        library: Option<&FunctionDefLibrary>,
        depth: usize,
    ) -> Result<FunctionBody, Status> {
        if depth >= MAX_DEPTH {
            return Err(Status::invalid_argument(format!(
                "calls nest more than {MAX_DEPTH} deep (does a function call itself?)"
            ))
            .in_function(name, format_args!("function '{name}'")));
        }
        let FunctionGraph { graph: gd, feeds, fetches, ret_fetch, targets, arg_types, ret_types } =
            function_graph(name, library)?;
        let rw = ferroflow_graph::rewrite_for_client(&gd, &feeds, &fetches, &targets, BODY_DEVICE, 1)
            .map_err(|e| e.context(format!("function '{name}'")))?;
        let (feed_keys, fetch_keys) = (rw.feed_keys(), rw.fetch_keys());
        let exec = Executor::build(rw.graph.node, library, depth + 1)
            .map_err(|e| e.in_function(name, format_args!("function '{name}'")))?;
        Ok(FunctionBody {
            name: name.to_string(),
            exec: Arc::new(exec),
            arg_types,
            ret_types,
            feed_keys,
            fetch_keys,
            ret_fetch,
        })
    }

    /// Runs the body as a sub-step of `parent` with `args`; `done` gets the results.
    pub(crate) fn call(&self, parent: &StepCtx, args: Vec<Tensor>, done: CallDone) {
        if args.len() != self.arg_types.len() {
            return done(Err(Status::invalid_argument(format!(
                "function '{}' takes {} arguments, got {}",
                self.name,
                self.arg_types.len(),
                args.len()
            ))));
        }
        // RemoteCalls in the body reach other tasks the way the caller's step does.
        let rendezvous = Arc::new(LocalRendezvous::calling_through(parent.rendezvous.clone()));
        for (i, (t, key)) in args.into_iter().zip(&self.feed_keys).enumerate() {
            if t.dtype() != self.arg_types[i] {
                return done(Err(Status::invalid_argument(format!(
                    "function '{}': argument {i} is {} but {} is declared",
                    self.name,
                    t.dtype(),
                    self.arg_types[i]
                ))));
            }
            if let Err(e) = rendezvous.send(key, t, false) {
                return done(Err(e));
            }
        }
        // The body's own token, cancelled with the caller's step; a failing body fails the
        // call (with the function named), and through it the caller.
        let cancel = CancelToken::new();
        let link = {
            let c = cancel.clone();
            parent.cancel.register(move |s| c.cancel(s.clone()))
        };
        let Some(link) = link else {
            let s = parent.cancel.status().unwrap_or_else(|| Status::cancelled("step cancelled"));
            return done(Err(s));
        };
        let step = Arc::new(StepCtx {
            step_id: parent.step_id,
            rendezvous: rendezvous.clone(),
            resources: parent.resources.clone(),
            step_container: parent.step_container.clone(),
            cancel,
            device: parent.device.clone(),
            deadline: parent.deadline,
            session: parent.session.clone(),
            trace: parent.trace.clone(),
        });
        let parent_cancel = parent.cancel.clone();
        let name = self.name.clone();
        let keys = self.fetch_keys.clone();
        let ret_fetch = self.ret_fetch.clone();
        self.exec.run_async(
            step,
            Box::new(move |r| {
                parent_cancel.deregister(link);
                let out = r.and_then(|_| {
                    let got = keys
                        .iter()
                        .map(|k| {
                            rendezvous
                                .try_take(k)
                                .map(|(t, _)| t)
                                .ok_or_else(|| Status::internal(format!("result '{k}' was not produced")))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(ret_fetch.iter().map(|&p| got[p].clone()).collect())
                });
                done(out.map_err(|e| e.in_function(&name, format_args!("in function '{name}'"))))
            }),
        );
    }
}

/// TensorFlow's truth value of an `If` condition: a scalar is true when non-zero (numbers)
/// or non-empty (strings); any other tensor when it has elements.
pub(crate) fn truth(t: &Tensor) -> Result<bool, Status> {
    if t.rank() != 0 {
        return Ok(t.num_elements() > 0);
    }
    Ok(match t.storage() {
        Storage::Bool(v) => v[0],
        Storage::F32(v) => v[0] != 0.0,
        Storage::F64(v) => v[0] != 0.0,
        Storage::I32(v) => v[0] != 0,
        Storage::I64(v) => v[0] != 0,
        Storage::U8(v) => v[0] != 0,
        Storage::Str(v) => !v[0].is_empty(),
        _ => return Err(Status::invalid_argument(format!("a {} scalar is not a condition", t.dtype()))),
    })
}

/// Which body a call runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pick {
    /// The only one (a call of `f`).
    Only,
    /// `then` or `else` by the truth of input 0.
    If,
    /// The one input 0 (an int32 scalar) names; the last when out of range.
    Case,
}

/// The body `pick` chooses among `n` for the selector `sel` (input 0 of `If`/`Case`).
fn pick_body(pick: Pick, n: usize, sel: Option<&Tensor>) -> Result<usize, Status> {
    let sel = || sel.ok_or_else(|| Status::internal("a call that picks a body has no selector input"));
    match pick {
        Pick::Only => Ok(0),
        Pick::If => Ok(if truth(sel()?)? { 0 } else { 1 }),
        Pick::Case => {
            let t = sel()?;
            let i = match t.storage() {
                Storage::I32(v) if t.rank() == 0 => v[0],
                _ => {
                    return Err(Status::invalid_argument(format!(
                        "branch_index must be an int32 scalar, got a {} tensor of shape {:?}",
                        t.dtype(),
                        t.dims()
                    )))
                }
            };
            Ok(usize::try_from(i).ok().filter(|&i| i < n).unwrap_or(n - 1))
        }
    }
}

/// The kernel of a function-calling node.
struct CallKernel {
    /// `If`: [then, else]; `Case`: the branches; a call: [f].
    bodies: Vec<Arc<FunctionBody>>,
    pick: Pick,
}

impl AsyncOpKernel for CallKernel {
    fn start(&self, mut ctx: OpContext, done: DoneCallback) {
        let picked = (|| -> Result<(usize, Vec<Tensor>), Status> {
            let sel = if self.pick == Pick::Only { None } else { Some(ctx.input(0)?) };
            let body = pick_body(self.pick, self.bodies.len(), sel.as_ref())?;
            let first = usize::from(sel.is_some());
            let args = (first..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
            Ok((body, args))
        })();
        let (body, args) = match picked {
            Ok(p) => p,
            Err(e) => return done(ctx, Err(e)),
        };
        let step = ctx.step().clone();
        self.bodies[body].call(
            &step,
            args,
            Box::new(move |r| {
                let r = r.and_then(|outs| outs.into_iter().enumerate().try_for_each(|(i, t)| ctx.set_output(i, t)));
                done(ctx, r)
            }),
        );
    }
}

/// Builds the kernel of a function-calling node (`def` has its defaults filled).
pub(crate) fn call_kernel(
    def: &NodeDef,
    library: Option<&FunctionDefLibrary>,
    depth: usize,
) -> Result<Box<dyn OpKernel>, Status> {
    let func = |a: &str| -> Result<String, Status> {
        match def.attr_value(a)?.value.as_ref() {
            Some(AV::Func(f)) => Ok(f.name.clone()),
            _ => Err(Status::invalid_argument(format!("attr '{a}' must name a function"))),
        }
    };
    if def.op.ends_with("While") {
        let t = def.attr_list_type("T")?;
        let cond = FunctionBody::instantiate(&func("cond")?, library, depth)?;
        let body = FunctionBody::instantiate(&func("body")?, library, depth)?;
        if cond.arg_types != t || cond.ret_types.len() != 1 {
            return Err(Status::invalid_argument(format!(
                "while loop condition '{}' takes {:?} and returns {:?}; the loop variables are {t:?} and it \
                 must return one value",
                cond.name, cond.arg_types, cond.ret_types
            )));
        }
        if body.arg_types != t || body.ret_types != t {
            return Err(Status::invalid_argument(format!(
                "while loop body '{}' takes {:?} and returns {:?}; both must be the loop variables' types {t:?}",
                body.name, body.arg_types, body.ret_types
            )));
        }
        return Ok(Box::new(crate::while_loop::WhileKernel::new(Arc::new(cond), Arc::new(body))));
    }
    if def.op == "RemoteCall" {
        let tout = def.attr_list_type("Tout")?;
        let b = checked_body(&func("f")?, library, depth, &def.attr_list_type("Tin")?, &tout)?;
        return Ok(Box::new(crate::remote_call::RemoteCallKernel::new(b, library, tout)));
    }
    let (pick, names) = if def.op.ends_with("If") {
        (Pick::If, vec![func("then_branch")?, func("else_branch")?])
    } else if def.op.ends_with("Case") {
        let branches = match def.attr_value("branches")?.value.as_ref() {
            Some(AV::List(l)) if !l.func.is_empty() => l.func.iter().map(|f| f.name.clone()).collect(),
            _ => return Err(Status::invalid_argument("attr 'branches' must list at least one function")),
        };
        (Pick::Case, branches)
    } else {
        (Pick::Only, vec![func("f")?])
    };
    let tin = def.attr_list_type("Tin")?;
    let tout = def.attr_list_type("Tout")?;
    let mut bodies = Vec::with_capacity(names.len());
    for n in names {
        bodies.push(Arc::new(checked_body(&n, library, depth, &tin, &tout)?));
    }
    Ok(Box::new(CallKernel { bodies, pick }))
}

/// Instantiates function `name`, which must take `tin` and return `tout`.
fn checked_body(
    name: &str,
    library: Option<&FunctionDefLibrary>,
    depth: usize,
    tin: &[DataType],
    tout: &[DataType],
) -> Result<FunctionBody, Status> {
    let b = FunctionBody::instantiate(name, library, depth)?;
    if b.arg_types != tin || b.ret_types != tout {
        return Err(Status::invalid_argument(format!(
            "function '{name}' takes {:?} and returns {:?}, but the node passes Tin {:?} and expects Tout {:?}",
            b.arg_types, b.ret_types, tin, tout
        )));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_picks_the_named_branch_and_the_last_when_out_of_range() {
        let idx = |i: i32| Tensor::scalar(i);
        assert_eq!(pick_body(Pick::Case, 3, Some(&idx(0))).unwrap(), 0);
        assert_eq!(pick_body(Pick::Case, 3, Some(&idx(2))).unwrap(), 2);
        assert_eq!(pick_body(Pick::Case, 3, Some(&idx(3))).unwrap(), 2, "past the end: the default branch");
        assert_eq!(pick_body(Pick::Case, 3, Some(&idx(-1))).unwrap(), 2, "negative: the default branch");
        let e = pick_body(Pick::Case, 3, Some(&Tensor::scalar(1i64))).unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument);
        assert!(e.message.contains("int32 scalar"), "{e}");
        assert_eq!(pick_body(Pick::If, 2, Some(&Tensor::scalar(false))).unwrap(), 1);
        assert_eq!(pick_body(Pick::Only, 1, None).unwrap(), 0);
    }
}
