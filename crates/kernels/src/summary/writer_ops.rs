//! TensorFlow 2's summary-writer kernels: `SummaryWriter` (the handle), `CreateSummaryFileWriter`
//! (makes the writer once; again on a live writer is a no-op, as TensorFlow's look-up-or-create),
//! `Write{Scalar,Histogram,Image,Audio,RawProto,Graph}Summary`, `WriteSummary` (a tensor with
//! its serialized `SummaryMetadata`, what `tf.summary.scalar` / `text` / `image` / `histogram`
//! emit), `ImportEvent`, `FlushSummaryWriter` and `CloseSummaryWriter` (deletes the resource).
//! `CreateSummaryDbWriter` (TensorFlow's SQLite writer) is UNIMPLEMENTED. A writer's log
//! directory obeys the task's `--file_root`.

use std::sync::Arc;

use ferroflow_core::proto::{event, summary, Event, GraphDef, Message, NodeDef, Summary, SummaryMetadata};
use ferroflow_core::{Code, DataType, NodeAttrs, Status, TensorType};

use super::writer::{SummaryWriter, WRITER_TYPE_NAME};
use super::{histogram::histogram_of, media, tagged, utf8};
use crate::data_flow::handles::{container_and_name, handle_names, set_handle_output};
use crate::{KernelRegistry, OpContext, OpKernel};

/// The scalar of type `T` at input `i` (`what` names it in errors).
fn scalar_at<T: TensorType>(ctx: &OpContext, i: usize, what: &str) -> Result<T, Status> {
    let t = ctx.input(i)?;
    match t.as_slice::<T>() {
        Ok([v]) if t.rank() == 0 => Ok(v.clone()),
        _ => Err(ctx.error(format!("{what} must be a scalar, got a {} tensor of shape {}", t.dtype(), t.shape()))),
    }
}

/// The string scalar at input `i` as UTF-8.
fn string_at(ctx: &OpContext, i: usize, what: &str) -> Result<String, Status> {
    utf8(ctx, &scalar_at::<Vec<u8>>(ctx, i, what)?, what)
}

/// The writer named by input 0; NOT_FOUND (TensorFlow's code) naming it if its
/// `CreateSummaryFileWriter` has not run or it was closed.
fn writer(ctx: &OpContext) -> Result<Arc<SummaryWriter>, Status> {
    let (c, n) = handle_names(ctx, 0)?;
    ctx.resources().lookup::<SummaryWriter>(&c, &n).map_err(|_| {
        ctx.error_with(Status::not_found(format!(
            "summary writer '{c}/{n}' is not initialized: run its CreateSummaryFileWriter (the writer's init op) \
             first; a closed writer must be created again"
        )))
    })
}

/// The writer and the step (input 1), the inputs every `Write*` op starts with.
fn writer_and_step(ctx: &OpContext) -> Result<(Arc<SummaryWriter>, i64), Status> {
    Ok((writer(ctx)?, scalar_at::<i64>(ctx, 1, "step")?))
}

/// Writes one summary value at `step`.
fn write_value(ctx: &OpContext, w: &SummaryWriter, step: i64, v: summary::Value) -> Result<(), Status> {
    w.write(step, event::What::Summary(Summary { value: vec![v] })).map_err(|e| ctx.error_with(e))
}

op_kernel! {
    struct Handle { container: String, name: String }
    fn compute(&self, ctx) {
        set_handle_output(ctx, &self.container, &self.name, WRITER_TYPE_NAME, false)
    }
}

fn handle(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let (container, name) = container_and_name(n)?;
    Ok(Box::new(Handle { container, name }))
}

op_kernel! {
    struct CreateFileWriter;
    fn compute(&self, ctx) {
        let (c, n) = handle_names(ctx, 0)?;
        let logdir = string_at(ctx, 1, "logdir")?;
        let max_queue = scalar_at::<i32>(ctx, 2, "max_queue")?;
        let flush_millis = scalar_at::<i32>(ctx, 3, "flush_millis")?;
        let suffix = string_at(ctx, 4, "filename_suffix")?;
        ferroflow_core::check_file_path(if logdir.is_empty() { "." } else { &logdir }, "summary writer logdir")
            .map_err(|e| ctx.error_with(e))?;
        ctx.resources()
            .lookup_or_create(&c, &n, || SummaryWriter::create(&n, &logdir, max_queue, flush_millis, &suffix))
            .map_err(|e| ctx.error_with(e))?;
        Ok(())
    }
}

op_kernel! {
    struct CreateDbWriter;
    fn compute(&self, ctx) {
        Err(ctx.error_with(Status::unimplemented(
            "CreateSummaryDbWriter (TensorFlow's SQLite summary writer) is not supported by ferroflow; \
             use a file writer (tf.summary.create_file_writer)",
        )))
    }
}

op_kernel! {
    struct WriteScalar;
    fn compute(&self, ctx) {
        let (w, step) = writer_and_step(ctx)?;
        let tag = string_at(ctx, 2, "tag")?;
        let t = ctx.input(3)?;
        let v = match t.to_f64_vec() {
            Ok(v) if t.rank() == 0 && v.len() == 1 => v[0],
            _ => {
                return Err(ctx.error(format!(
                    "value must be a real scalar, got a {} tensor of shape {}",
                    t.dtype(),
                    t.shape()
                )))
            }
        };
        write_value(ctx, &w, step, tagged(tag, summary::value::Value::SimpleValue(v as f32)))
    }
}

op_kernel! {
    struct WriteHistogram;
    fn compute(&self, ctx) {
        let (w, step) = writer_and_step(ctx)?;
        let tag = string_at(ctx, 2, "tag")?;
        let h = histogram_of(ctx, &tag, &ctx.input(3)?)?;
        write_value(ctx, &w, step, tagged(tag, summary::value::Value::Histo(h)))
    }
}

op_kernel! {
    /// `WriteImageSummary` (`bad_color` an input) and `WriteAudioSummary` (`sample_rate` one).
    struct WriteMedia { image: bool, max: i64 }
    fn compute(&self, ctx) {
        let (w, step) = writer_and_step(ctx)?;
        let tag = media::base_tag(ctx, 2)?;
        let t = ctx.input(3)?;
        let values = if self.image {
            let bad = ctx.input(4)?;
            let bad = match bad.as_slice::<u8>() {
                Ok(b) if bad.rank() == 1 => b.to_vec(),
                _ => return Err(ctx.error(format!("bad_color must be a uint8 vector, got shape {}", bad.shape()))),
            };
            media::image_values(ctx, &tag, &t, self.max, &bad)?
        } else {
            let rate = media::sample_rate_input(ctx, 4)?;
            media::audio_values(ctx, &tag, &t, rate, self.max)?
        };
        w.write(step, event::What::Summary(Summary { value: values })).map_err(|e| ctx.error_with(e))
    }
}

fn write_media(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let image = n.op == "WriteImageSummary";
    let attr = if image { "max_images" } else { "max_outputs" };
    let max = n.attr_int(attr)?;
    if !(1..1 << 31).contains(&max) {
        return Err(n.node_error(format!("{attr} must be in [1, 2^31), got {max}")));
    }
    Ok(Box::new(WriteMedia { image, max }))
}

op_kernel! {
    struct WriteTensor;
    fn compute(&self, ctx) {
        let (w, step) = writer_and_step(ctx)?;
        let t = ctx.input(2)?;
        let tag = string_at(ctx, 3, "tag")?;
        let meta = scalar_at::<Vec<u8>>(ctx, 4, "summary_metadata")?;
        let metadata = if meta.is_empty() {
            None
        } else {
            Some(SummaryMetadata::decode(meta.as_slice()).map_err(|e| {
                ctx.error(format!("summary_metadata of '{tag}' is not a serialized SummaryMetadata: {e}"))
            })?)
        };
        // Strings in the typed field (what Python's make_ndarray reads), the rest as bytes.
        let proto = if t.dtype() == DataType::String { t.to_proto_field() } else { t.to_proto() };
        let v =
            summary::Value { tag, metadata, value: Some(summary::value::Value::Tensor(proto)), ..Default::default() };
        write_value(ctx, &w, step, v)
    }
}

op_kernel! {
    /// `WriteRawProtoSummary` (every element a serialized `Summary`, one event each) and
    /// `WriteGraphSummary` (a serialized `GraphDef`).
    struct WriteRaw { graph: bool }
    fn compute(&self, ctx) {
        let (w, step) = writer_and_step(ctx)?;
        if self.graph {
            let bytes = scalar_at::<Vec<u8>>(ctx, 2, "tensor")?;
            GraphDef::decode(bytes.as_slice()).map_err(|e| {
                ctx.error_with(Status::new(Code::DataLoss, format!("Bad tf.GraphDef binary proto tensor string: {e}")))
            })?;
            return w.write(step, event::What::GraphDef(bytes)).map_err(|e| ctx.error_with(e));
        }
        let t = ctx.input(2)?;
        let items =
            t.as_slice::<Vec<u8>>().map_err(|_| ctx.error(format!("tensor must be strings, got {}", t.dtype())))?;
        for (i, b) in items.iter().enumerate() {
            let s = Summary::decode(b.as_slice()).map_err(|e| {
                ctx.error_with(Status::new(
                    Code::DataLoss,
                    format!("Bad tf.compat.v1.Summary binary proto tensor string at index {i}: {e}"),
                ))
            })?;
            w.write(step, event::What::Summary(s)).map_err(|e| ctx.error_with(e))?;
        }
        Ok(())
    }
}

op_kernel! {
    struct ImportEvent;
    fn compute(&self, ctx) {
        let w = writer(ctx)?;
        let bytes = scalar_at::<Vec<u8>>(ctx, 1, "event")?;
        let e = Event::decode(bytes.as_slice()).map_err(|e| {
            ctx.error_with(Status::new(Code::DataLoss, format!("Bad tf.Event binary proto tensor string: {e}")))
        })?;
        w.write_event(&e).map_err(|e| ctx.error_with(e))
    }
}

op_kernel! {
    /// `FlushSummaryWriter` and `CloseSummaryWriter`.
    struct FlushOrClose { close: bool }
    fn compute(&self, ctx) {
        let w = writer(ctx)?;
        if !self.close {
            return w.flush().map_err(|e| ctx.error_with(e));
        }
        let (c, n) = handle_names(ctx, 0)?;
        // Deleted first: a racing close finds nothing to delete, as in TensorFlow.
        ctx.resources().delete::<SummaryWriter>(&c, &n).map_err(|e| ctx.error_with(e))?;
        w.close().map_err(|e| ctx.error_with(e))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SummaryWriter", handle);
    r.add("CreateSummaryFileWriter", |_| Ok(Box::new(CreateFileWriter)));
    r.add("CreateSummaryDbWriter", |_| Ok(Box::new(CreateDbWriter)));
    r.add("WriteScalarSummary", |_| Ok(Box::new(WriteScalar)));
    r.add("WriteHistogramSummary", |_| Ok(Box::new(WriteHistogram)));
    r.add("WriteImageSummary", write_media);
    r.add("WriteAudioSummary", write_media);
    r.add("WriteSummary", |_| Ok(Box::new(WriteTensor)));
    r.add("WriteRawProtoSummary", |_| Ok(Box::new(WriteRaw { graph: false })));
    r.add("WriteGraphSummary", |_| Ok(Box::new(WriteRaw { graph: true })));
    r.add("ImportEvent", |_| Ok(Box::new(ImportEvent)));
    r.add("FlushSummaryWriter", |_| Ok(Box::new(FlushOrClose { close: false })));
    r.add("CloseSummaryWriter", |_| Ok(Box::new(FlushOrClose { close: true })));
}
