//! TensorFlow's collective ops in graphs: `CollectiveReduceV2`, `CollectiveGatherV2`,
//! `CollectiveBcastSendV2`/`CollectiveBcastRecvV2` and their V1 forms (keys as attrs). A
//! kernel reads its group and instance keys and hands the exchange to the step's
//! rendezvous ([`crate::Rendezvous::collective`]), which resolves the group with the
//! cluster's group leader and moves the chunks between tasks (the distributed crate). The
//! element-wise arithmetic of the reductions lives here, on raw little-endian bytes, the
//! form the chunks travel in.

use std::time::{Duration, Instant};

use ferroflow_core::half::{bf16, f16};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor};

use crate::{AsyncOpKernel, CancelToken, DoneCallback, KernelRegistry, OpContext};

/// What a collective does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    /// All-reduce with `merge` (`Add`, `Mul`, `Min`, `Max`), then divided by the group size
    /// when `divide` (`final_op` `Div`).
    Reduce { merge: MergeOp, divide: bool },
    /// All-gather: the members' inputs concatenated along dimension 0 in rank order.
    Gather,
    /// Broadcast from this member.
    BcastSend,
    /// Broadcast to this member.
    BcastRecv,
}

impl CollectiveKind {
    /// TensorFlow's `CollectiveType` number (in CompleteInstance).
    pub fn type_number(&self) -> i32 {
        match self {
            CollectiveKind::Reduce { .. } => 0,
            CollectiveKind::BcastSend | CollectiveKind::BcastRecv => 1,
            CollectiveKind::Gather => 2,
        }
    }
}

/// A reduction's merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeOp {
    /// `Add`.
    Add,
    /// `Mul`.
    Mul,
    /// `Min`.
    Min,
    /// `Max`.
    Max,
}

/// One member's part of a collective, handed to the step's rendezvous.
pub struct CollectiveCall {
    /// What it does.
    pub kind: CollectiveKind,
    /// The group.
    pub group_key: i32,
    /// Members of the group.
    pub group_size: i32,
    /// The instance (one collective of the group).
    pub instance_key: i32,
    /// TensorFlow's `group_key:instance_key:frame_id:iter_id`.
    pub exec_key: String,
    /// This member's full device name.
    pub device: String,
    /// The node (for messages) and TensorFlow's instance name.
    pub node: String,
    /// The input (none for a broadcast's receivers).
    pub input: Option<Tensor>,
    /// The element type.
    pub dtype: DataType,
    /// The shape of the input (a receiver's: of the broadcast tensor).
    pub shape: Vec<usize>,
    /// A V1 reduction's subdivisions (its `subdiv_offsets`); `None` for V2.
    pub subdivs: Option<usize>,
    /// A V2 reduction's `max_subdivs_per_device` (-1: one subdivision).
    pub max_subdivs_per_device: i64,
    /// `timeout_seconds` when positive.
    pub timeout: Option<Duration>,
    /// The step's cancellation.
    pub cancel: CancelToken,
    /// The step's deadline.
    pub deadline: Option<Instant>,
}

/// Called once with a collective's output, or an error.
pub type CollectiveDone = Box<dyn FnOnce(Result<Tensor, Status>) + Send>;

/// What a step that cannot reach other tasks answers a collective of several members.
pub fn unreachable_collective(call: CollectiveCall, done: CollectiveDone) {
    done(Err(Status::unimplemented(format!(
        "{}: a collective of {} members runs on a cluster (its members on the tasks of a ferroflow or TensorFlow \
         cluster); this step runs in-process",
        call.node, call.group_size
    ))))
}

fn merge_op(n: &NodeDef) -> Result<MergeOp, Status> {
    match n.attr_string("merge_op")?.as_str() {
        "Add" => Ok(MergeOp::Add),
        "Mul" => Ok(MergeOp::Mul),
        "Min" => Ok(MergeOp::Min),
        "Max" => Ok(MergeOp::Max),
        o => Err(n.node_error(format!("merge_op must be one of Min, Max, Mul, Add, got '{o}'"))),
    }
}

fn final_div(n: &NodeDef) -> Result<bool, Status> {
    match n.attr_string("final_op")?.as_str() {
        "Id" => Ok(false),
        "Div" => Ok(true),
        o => Err(n.node_error(format!("final_op must be one of Id, Div, got '{o}'"))),
    }
}

/// The kernel of every collective op.
struct Collective {
    kind: CollectiveKind,
    subdivs: Option<usize>,
    max_subdivs_per_device: i64,
    /// V1: keys, size (and a receiver's shape) from attrs.
    v1: Option<(i32, i32, i32, Vec<usize>)>,
    dtype: DataType,
    timeout: Option<Duration>,
}

fn scalar_key(ctx: &OpContext, i: usize, what: &str) -> Result<i32, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("Input {what} to collective op must be a scalar, got shape {}", t.shape())));
    }
    match t.dtype() {
        DataType::Int32 => t.scalar_value::<i32>(),
        d => Err(ctx.error(format!("Input {what} to collective op must be int32, got {d}"))),
    }
}

impl Collective {
    fn call(&self, ctx: &OpContext) -> Result<CollectiveCall, Status> {
        let (group_size, group_key, instance_key, mut shape) = match &self.v1 {
            Some((s, g, i, shape)) => (*s, *g, *i, shape.clone()),
            None => {
                let keys = if self.kind == CollectiveKind::BcastRecv { 0 } else { 1 };
                let s = scalar_key(ctx, keys, "group_size")?;
                let g = scalar_key(ctx, keys + 1, "group_key")?;
                let i = scalar_key(ctx, keys + 2, "instance_key")?;
                let shape = if self.kind == CollectiveKind::BcastRecv {
                    let t = ctx.input(3)?;
                    let dims: Vec<i64> = t.to_f64_vec()?.into_iter().map(|d| d as i64).collect();
                    if t.rank() != 1 || dims.iter().any(|&d| d < 0) {
                        return Err(ctx.error(format!("shape must be a vector of sizes, got {:?}", dims)));
                    }
                    dims.into_iter().map(|d| d as usize).collect()
                } else {
                    Vec::new()
                };
                (s, g, i, shape)
            }
        };
        if group_size <= 0 {
            return Err(ctx.error(format!("group_size must be positive integer but got {group_size}")));
        }
        let input = if self.kind == CollectiveKind::BcastRecv {
            None
        } else {
            let t = ctx.input(0)?;
            shape = t.dims().to_vec();
            Some(t)
        };
        if let Some(t) = &input {
            if t.dtype() != self.dtype {
                return Err(ctx.error(format!("input is {} but T is {}", t.dtype(), self.dtype)));
            }
            if self.kind == CollectiveKind::Gather && t.rank() == 0 {
                return Err(ctx.error("input to CollectiveGather must be at least rank 1"));
            }
        }
        crate::array::util::check_alloc(&shape, self.dtype).map_err(|e| ctx.error_with(e))?;
        let (frame, iter) = ctx.frame_iter();
        let step = ctx.step();
        Ok(CollectiveCall {
            kind: self.kind.clone(),
            group_key,
            group_size,
            instance_key,
            exec_key: format!("{group_key}:{instance_key}:{frame}:{iter}"),
            device: step.device.clone(),
            node: ctx.node().name.clone(),
            input,
            dtype: self.dtype,
            shape,
            subdivs: self.subdivs,
            max_subdivs_per_device: self.max_subdivs_per_device,
            timeout: self.timeout,
            cancel: step.cancel.clone(),
            deadline: step.deadline,
        })
    }
}

impl AsyncOpKernel for Collective {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let call = match self.call(&ctx) {
            Ok(c) => c,
            Err(e) => return done(ctx, Err(e)),
        };
        if call.group_size == 1 {
            // A group of one: the member's own input (divided by one).
            let r = match call.input {
                Some(t) => Ok(t),
                None => Err(ctx.error("a broadcast group of one member has no sender")),
            };
            let mut ctx = ctx;
            let r = r.and_then(|t| ctx.set_output(0, t));
            return done(ctx, r);
        }
        let rendezvous = ctx.step().rendezvous.clone();
        rendezvous.collective(
            call,
            Box::new(move |r| {
                let mut ctx = ctx;
                let r = r.map_err(|e| ctx.error_with(e)).and_then(|t| ctx.set_output(0, t));
                done(ctx, r)
            }),
        );
    }
}

fn make(n: &NodeDef, kind: CollectiveKind, v1: bool) -> Result<Collective, Status> {
    let dtype = n.attr_type("T")?;
    let timeout =
        n.attr_float("timeout_seconds").ok().filter(|&t| t > 0.0).and_then(|t| Duration::try_from_secs_f32(t).ok());
    let v1 = if v1 {
        let key = |k: &str| -> Result<i32, Status> {
            i32::try_from(n.attr_int(k)?).map_err(|_| n.node_error(format!("{k} does not fit an int32")))
        };
        let shape = match kind {
            CollectiveKind::BcastRecv => n
                .attr_shape("shape")?
                .ok_or_else(|| n.node_error("shape must be fully defined"))?
                .into_iter()
                .map(|d| usize::try_from(d).map_err(|_| n.node_error("shape must be fully defined")))
                .collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        Some((key("group_size")?, key("group_key")?, key("instance_key")?, shape))
    } else {
        None
    };
    let reduce = matches!(kind, CollectiveKind::Reduce { .. });
    let subdivs = if reduce && v1.is_some() {
        Some(n.attr_list_int("subdiv_offsets").map(|o| o.len()).unwrap_or(1).max(1))
    } else {
        None
    };
    let max_subdivs_per_device = if reduce { n.attr_int("max_subdivs_per_device").unwrap_or(-1) } else { -1 };
    Ok(Collective { kind, subdivs, max_subdivs_per_device, v1, dtype, timeout })
}

fn reduce(n: &NodeDef) -> Result<CollectiveKind, Status> {
    Ok(CollectiveKind::Reduce { merge: merge_op(n)?, divide: final_div(n)? })
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("CollectiveReduceV2", |n| Ok(Box::new(make(n, reduce(n)?, false)?)));
    r.add("CollectiveReduce", |n| Ok(Box::new(make(n, reduce(n)?, true)?)));
    r.add("CollectiveGatherV2", |n| Ok(Box::new(make(n, CollectiveKind::Gather, false)?)));
    r.add("CollectiveGather", |n| Ok(Box::new(make(n, CollectiveKind::Gather, true)?)));
    r.add("CollectiveBcastSendV2", |n| Ok(Box::new(make(n, CollectiveKind::BcastSend, false)?)));
    r.add("CollectiveBcastSend", |n| Ok(Box::new(make(n, CollectiveKind::BcastSend, true)?)));
    r.add("CollectiveBcastRecvV2", |n| Ok(Box::new(make(n, CollectiveKind::BcastRecv, false)?)));
    r.add("CollectiveBcastRecv", |n| Ok(Box::new(make(n, CollectiveKind::BcastRecv, true)?)));
}

/// Merges `src` into `dst` (both raw little-endian elements of `dtype`): `dst = dst op src`,
/// as TensorFlow's `merge_op(local, received)`.
pub fn merge_bytes(dtype: DataType, op: MergeOp, dst: &mut [u8], src: &[u8]) -> Result<(), Status> {
    macro_rules! merge {
        ($t:ty, $n:expr, $from:expr, $to:expr, $add:expr, $mul:expr, $min:expr, $max:expr) => {{
            for (d, s) in dst.chunks_exact_mut($n).zip(src.chunks_exact($n)) {
                let (a, b): ($t, $t) = ($from(d), $from(s));
                let v: $t = match op {
                    MergeOp::Add => $add(a, b),
                    MergeOp::Mul => $mul(a, b),
                    MergeOp::Min => $min(a, b),
                    MergeOp::Max => $max(a, b),
                };
                d.copy_from_slice(&$to(v));
            }
        }};
    }
    let f32_of = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let f64_of = |b: &[u8]| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let i32_of = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let i64_of = |b: &[u8]| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    // NaN-propagating min/max for floats, as Eigen's scalar_min/max in TensorFlow's kernels.
    let fmin = |a: f64, b: f64| if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) };
    let fmax = |a: f64, b: f64| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) };
    // A 16-bit float type: add and mul in f32, min and max in f64, each rounded back.
    macro_rules! merge_half {
        ($t:ident) => {
            merge!(
                $t,
                2,
                |b: &[u8]| $t::from_le_bytes([b[0], b[1]]),
                $t::to_le_bytes,
                |a: $t, b: $t| $t::from_f32(a.to_f32() + b.to_f32()),
                |a: $t, b: $t| $t::from_f32(a.to_f32() * b.to_f32()),
                |a: $t, b: $t| $t::from_f64(fmin(a.into(), b.into())),
                |a: $t, b: $t| $t::from_f64(fmax(a.into(), b.into()))
            )
        };
    }
    match dtype {
        DataType::Float => merge!(
            f32,
            4,
            f32_of,
            f32::to_le_bytes,
            |a, b| a + b,
            |a, b| a * b,
            |a: f32, b: f32| fmin(a.into(), b.into()) as f32,
            |a: f32, b: f32| fmax(a.into(), b.into()) as f32
        ),
        DataType::Double => {
            merge!(f64, 8, f64_of, f64::to_le_bytes, |a, b| a + b, |a, b| a * b, fmin, fmax)
        }
        DataType::Int32 => {
            merge!(i32, 4, i32_of, i32::to_le_bytes, i32::wrapping_add, i32::wrapping_mul, std::cmp::min, std::cmp::max)
        }
        DataType::Int64 => {
            merge!(i64, 8, i64_of, i64::to_le_bytes, i64::wrapping_add, i64::wrapping_mul, std::cmp::min, std::cmp::max)
        }
        DataType::Half => merge_half!(f16),
        DataType::BFloat16 => merge_half!(bf16),
        d => return Err(Status::invalid_argument(format!("collective reductions do not take {d}"))),
    }
    Ok(())
}

/// Divides every element of `buf` (raw `dtype`) by `n` (`final_op` `Div`; integers
/// truncate, as TensorFlow's `Div`).
pub fn divide_bytes(dtype: DataType, buf: &mut [u8], n: i32) -> Result<(), Status> {
    macro_rules! div {
        ($w:expr, $from:expr, $to:expr, $f:expr) => {
            for d in buf.chunks_exact_mut($w) {
                d.copy_from_slice(&$to($f($from(&*d))));
            }
        };
    }
    let nf = f64::from(n);
    match dtype {
        DataType::Float => {
            div!(4, |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]), f32::to_le_bytes, |a: f32| a / n as f32)
        }
        DataType::Double => div!(
            8,
            |b: &[u8]| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            f64::to_le_bytes,
            |a: f64| a / nf
        ),
        DataType::Int32 => {
            div!(4, |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]), i32::to_le_bytes, |a: i32| a / n)
        }
        DataType::Int64 => div!(
            8,
            |b: &[u8]| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            i64::to_le_bytes,
            |a: i64| a / i64::from(n)
        ),
        DataType::Half => {
            div!(2, |b: &[u8]| f16::from_le_bytes([b[0], b[1]]), f16::to_le_bytes, |a: f16| f16::from_f32(
                a.to_f32() / n as f32
            ))
        }
        DataType::BFloat16 => {
            div!(2, |b: &[u8]| bf16::from_le_bytes([b[0], b[1]]), bf16::to_le_bytes, |a: bf16| bf16::from_f32(
                a.to_f32() / n as f32
            ))
        }
        d => return Err(Status::invalid_argument(format!("collective reductions do not take {d}"))),
    }
    Ok(())
}

/// A tensor of `dtype` and `shape` from raw little-endian bytes.
pub fn tensor_of_bytes(dtype: DataType, shape: &[usize], bytes: &[u8]) -> Result<Tensor, Status> {
    Tensor::from_content(dtype, Shape::new(shape.to_vec()), bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn merges_and_divides() {
        let mut a = bytes_f32(&[1.0, -2.0, f32::NAN]);
        merge_bytes(DataType::Float, MergeOp::Add, &mut a, &bytes_f32(&[0.5, 2.0, 1.0])).unwrap();
        divide_bytes(DataType::Float, &mut a, 2).unwrap();
        let t = tensor_of_bytes(DataType::Float, &[3], &a).unwrap();
        let v = t.as_slice::<f32>().unwrap();
        assert_eq!(&v[..2], &[0.75, 0.0]);
        assert!(v[2].is_nan());
        let mut m = bytes_f32(&[1.0, 5.0]);
        merge_bytes(DataType::Float, MergeOp::Max, &mut m, &bytes_f32(&[3.0, f32::NAN])).unwrap();
        let t = tensor_of_bytes(DataType::Float, &[2], &m).unwrap();
        assert_eq!(t.as_slice::<f32>().unwrap()[0], 3.0);
        assert!(t.as_slice::<f32>().unwrap()[1].is_nan());
        let mut i: Vec<u8> = [7i64, -7].iter().flat_map(|x| x.to_le_bytes()).collect();
        divide_bytes(DataType::Int64, &mut i, 2).unwrap();
        assert_eq!(tensor_of_bytes(DataType::Int64, &[2], &i).unwrap().as_slice::<i64>().unwrap(), [3, -3]);
        assert!(merge_bytes(DataType::Bool, MergeOp::Add, &mut [0u8], &[1u8]).is_err());
    }
}
