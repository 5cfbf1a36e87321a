//! Reader kernels: the creating ops (one resource per container/shared name, as queues),
//! `ReaderReadV2` and `ReaderReadUpToV2` (asynchronous: they may wait for work),
//! `ReaderNumRecordsProducedV2`, `ReaderNumWorkUnitsCompletedV2`, `ReaderResetV2`, and
//! `ReaderSerializeStateV2` / `ReaderRestoreStateV2` (TensorFlow's `ReaderBaseState` proto;
//! only `IdentityReader` has one, the others are UNIMPLEMENTED there too).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{varint, NodeAttrs, Status, Tensor};

use super::source::ReaderKind;
use super::{read, Reader, Want};
use crate::data_flow::handles::{
    container_and_name, named_resource_at, node_err, session_private_name, set_handle_output,
};
use crate::data_flow::FifoQueue;
use crate::{AsyncOpKernel, DoneCallback, KernelRegistry, OpContext, OpKernel};

/// TensorFlow's type name of readers in resource handles.
const READER_TYPE_NAME: &str = "N10tensorflow15ReaderInterfaceE";

op_kernel! {
    struct Create {
        container: String,
        name: String,
        kind: ReaderKind,
        /// Whether `shared_name` was given (else the reader is private to the session).
        shared: bool,
    }
    fn compute(&self, ctx) {
        let kind = self.kind.clone();
        let name = if self.shared { self.name.clone() } else { session_private_name(ctx, &self.name) };
        let r =
            ctx.resources().lookup_or_create(&self.container, &name, || Ok(Reader::new(self.name.clone(), kind)))?;
        if r.kind.type_name() != self.kind.type_name() {
            return Err(ctx.error(format!(
                "reader '{}' already exists as a {} but this node makes a {}",
                self.name,
                r.kind.type_name(),
                self.kind.type_name()
            )));
        }
        set_handle_output(ctx, &self.container, &name, READER_TYPE_NAME, false)
    }
}

fn non_negative(n: &NodeDef, attr: &str) -> Result<u64, Status> {
    let v = n.attr_int(attr)?;
    u64::try_from(v).map_err(|_| n.node_error(format!("{attr} must be >= 0 not {v}")))
}

fn create(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (container, name) = container_and_name(n)?;
    let kind = match n.op.as_str() {
        "TFRecordReaderV2" => {
            let compression = n.attr_string("compression_type")?;
            if !matches!(compression.as_str(), "" | "ZLIB" | "GZIP") {
                return Err(n.node_error(format!("Unsupported compression_type: {compression}.")));
            }
            ReaderKind::TfRecord { compression }
        }
        "TextLineReaderV2" => {
            let skip_header_lines = n.attr_int("skip_header_lines")?;
            if skip_header_lines < 0 {
                return Err(n.node_error(format!("skip_header_lines must be >= 0 not {skip_header_lines}")));
            }
            ReaderKind::TextLine { skip_header_lines }
        }
        "WholeFileReaderV2" => ReaderKind::WholeFile,
        "IdentityReaderV2" => ReaderKind::Identity,
        _ => {
            let encoding = n.attr_string("encoding")?;
            if !matches!(encoding.as_str(), "" | "ZLIB" | "GZIP") {
                return Err(n.node_error(format!("Unsupported encoding: {encoding}.")));
            }
            ReaderKind::FixedLength {
                header: non_negative(n, "header_bytes")?,
                record: non_negative(n, "record_bytes")?,
                footer: non_negative(n, "footer_bytes")?,
                hop: non_negative(n, "hop_bytes")?,
                encoding,
            }
        }
    };
    let shared = !n.attr_string("shared_name")?.is_empty();
    Ok(Box::new(Create { container, name, kind, shared }))
}

fn reader(ctx: &OpContext) -> Result<Arc<Reader>, Status> {
    named_resource_at(ctx, 0, "reader")
}

struct Read {
    up_to: bool,
}

impl AsyncOpKernel for Read {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let prep = || -> Result<_, Status> {
            let r = reader(&ctx)?;
            let q: Arc<FifoQueue> = named_resource_at(&ctx, 1, "queue")?;
            let want = if self.up_to {
                let n = ctx.input(2)?.scalar_value::<i64>()?;
                if n <= 0 {
                    return Err(ctx.error(format!("num_records must be > 0 but is {n}")));
                }
                Want::UpTo(n as usize)
            } else {
                Want::One
            };
            Ok((r, q, want))
        };
        match prep() {
            Ok((r, q, want)) => {
                let node = (ctx.node().name.clone(), ctx.node().op.clone());
                let done: DoneCallback = Box::new(move |ctx, res: Result<(), Status>| {
                    done(ctx, res.map_err(|e| e.in_node(&node.0, &node.1)))
                });
                read(r, q, want, Vec::new(), ctx, done)
            }
            Err(e) => done(ctx, Err(e)),
        }
    }
}

op_kernel! {
    struct Count { completed: bool }
    fn compute(&self, ctx) {
        let (produced, completed) = reader(ctx)?.counts();
        ctx.set_output(0, Tensor::scalar(if self.completed { completed } else { produced }))
    }
}

op_kernel! {
    struct Reset;
    fn compute(&self, ctx) {
        reader(ctx)?.reset();
        Ok(())
    }
}

op_kernel! {
    struct Serialize;
    fn compute(&self, ctx) {
        let s = reader(ctx)?.serialize().map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, Tensor::scalar(s))
    }
}

op_kernel! {
    struct Restore;
    fn compute(&self, ctx) {
        let t = ctx.input(1)?;
        let s = t.as_slice::<Vec<u8>>()?;
        let [state] = s else { return Err(ctx.error(format!("state must be a scalar, got shape {}", t.shape()))) };
        reader(ctx)?.restore(state).map_err(|e| node_err(ctx, e))
    }
}

/// TensorFlow's `ReaderBaseState` (work_started = 1, work_finished = 2,
/// num_records_produced = 3, current_work = 4).
pub(super) fn encode_state(started: i64, finished: i64, produced: i64, work: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (field, v) in [(1u64, started), (2, finished), (3, produced)] {
        if v != 0 {
            varint::put(&mut out, field << 3);
            varint::put(&mut out, v as u64);
        }
    }
    if !work.is_empty() {
        varint::put(&mut out, 4 << 3 | 2);
        varint::put(&mut out, work.len() as u64);
        out.extend_from_slice(work);
    }
    out
}

/// Parses a `ReaderBaseState` and checks it as TensorFlow does.
pub(super) fn decode_state(b: &[u8], reader: &str) -> Result<(i64, i64, i64, Vec<u8>), Status> {
    let bad = || Status::invalid_argument(format!("Could not parse state for IdentityReader '{reader}'"));
    let (mut v, mut work, mut pos) = ([0i64; 3], Vec::new(), 0);
    while pos < b.len() {
        let tag = varint::get(b, &mut pos).ok_or_else(bad)?;
        match (tag >> 3, tag & 7) {
            (f @ 1..=3, 0) => v[f as usize - 1] = varint::get(b, &mut pos).ok_or_else(bad)? as i64,
            (4, 2) => {
                let n = varint::get(b, &mut pos).ok_or_else(bad)? as usize;
                let end = pos.checked_add(n).filter(|&e| e <= b.len()).ok_or_else(bad)?;
                work = b[pos..end].to_vec();
                pos = end;
            }
            _ => return Err(bad()),
        }
    }
    let [started, finished, produced] = v;
    if started < 0 || finished < 0 || produced < 0 {
        return Err(Status::invalid_argument(format!("Unexpected negative value when restoring in {reader}")));
    }
    if started > finished {
        return Err(Status::invalid_argument(format!(
            "Inconsistent work started vs. finished when restoring in {reader}"
        )));
    }
    Ok((started, finished, produced, work))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    for op in
        ["TFRecordReaderV2", "TextLineReaderV2", "WholeFileReaderV2", "IdentityReaderV2", "FixedLengthRecordReaderV2"]
    {
        r.add_cheap(op, create);
    }
    r.add("ReaderReadV2", |_| Ok(Box::new(Read { up_to: false })));
    r.add("ReaderReadUpToV2", |_| Ok(Box::new(Read { up_to: true })));
    r.add_cheap("ReaderNumRecordsProducedV2", |_| Ok(Box::new(Count { completed: false })));
    r.add_cheap("ReaderNumWorkUnitsCompletedV2", |_| Ok(Box::new(Count { completed: true })));
    r.add_cheap("ReaderResetV2", |_| Ok(Box::new(Reset)));
    r.add_cheap("ReaderSerializeStateV2", |_| Ok(Box::new(Serialize)));
    r.add_cheap("ReaderRestoreStateV2", |_| Ok(Box::new(Restore)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_state_round_trips_and_rejects_inconsistent_counts() {
        let b = encode_state(3, 3, 17, b"f.txt");
        assert_eq!(decode_state(&b, "r").unwrap(), (3, 3, 17, b"f.txt".to_vec()));
        assert!(decode_state(&encode_state(4, 3, 0, b""), "r").is_err());
        assert!(decode_state(&[0xff], "r").is_err());
    }
}
