//! A builder for TensorFlow's `TensorArray` (the V3 ops), functional like TensorFlow 1.x's
//! `tf.TensorArray`: every write returns a new `TensorArray` value whose `flow` orders it
//! after the write, and reads take that flow.
//!
//! ```ignore
//! let ta = TensorArray::new(&s, DataType::Float, ops::constant(&s, 3), &TensorArrayOptions::default());
//! let ta = ta.unstack(&s, x);            // x: [3, ...]
//! let y = ta.read(&s, ops::constant(&s, 1));
//! let all = ta.stack(&s);
//! ```

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, DataType, Tensor};

use crate::ops::{self, op_output};
use crate::scope::{Operation, Output, Scope};

/// Options of a new TensorArray (TensorFlow's attrs of `TensorArrayV3`).
#[derive(Clone, Debug)]
pub struct TensorArrayOptions {
    /// Writes may grow the array.
    pub dynamic_size: bool,
    /// A read frees the element (a second read is an error).
    pub clear_after_read: bool,
    /// Every element has one shape, learned from the first write.
    pub identical_element_shapes: bool,
    /// The element shape as far as known (`None`: unknown; -1: unknown dimension).
    pub element_shape: Option<Vec<i64>>,
    /// Name of the array in error messages (the node name when empty).
    pub tensor_array_name: String,
}

impl Default for TensorArrayOptions {
    fn default() -> Self {
        TensorArrayOptions {
            dynamic_size: false,
            clear_after_read: true,
            identical_element_shapes: true,
            element_shape: None,
            tensor_array_name: String::new(),
        }
    }
}

/// A TensorArray value: its handle, the flow that orders its uses, its element dtype.
#[derive(Clone, Debug)]
pub struct TensorArray {
    /// The resource handle.
    pub handle: Output,
    /// The flow scalar (float).
    pub flow: Output,
    /// Element dtype.
    pub dtype: DataType,
    /// Element shape passed to gathers and concats when known.
    pub element_shape: Option<Vec<i64>>,
}

fn shape_attr(d: &Option<Vec<i64>>) -> ferroflow_core::proto::AttrValue {
    attr::shape(d.as_deref())
}

impl TensorArray {
    /// `TensorArrayV3` of `size` (an int32 scalar) elements.
    pub fn new(s: &Scope, dtype: DataType, size: Output, o: &TensorArrayOptions) -> TensorArray {
        let op = s
            .op("TensorArrayV3")
            .input(size)
            .attr("dtype", attr::ty(dtype))
            .attr("element_shape", shape_attr(&o.element_shape))
            .attr("dynamic_size", attr::bool(o.dynamic_size))
            .attr("clear_after_read", attr::bool(o.clear_after_read))
            .attr("identical_element_shapes", attr::bool(o.identical_element_shapes))
            .attr("tensor_array_name", attr::string(&o.tensor_array_name))
            .build();
        TensorArray { handle: op.output(0), flow: op.output(1), dtype, element_shape: o.element_shape.clone() }
    }

    /// Wraps an existing handle and flow (e.g. of a gradient array).
    pub fn from_parts(handle: Output, flow: Output, dtype: DataType) -> TensorArray {
        TensorArray { handle, flow, dtype, element_shape: None }
    }

    fn with_flow(&self, flow: Output) -> TensorArray {
        TensorArray { flow, ..self.clone() }
    }

    /// `op` (a write or a scatter) of `value` at `index`: the array with the op's flow.
    fn put(&self, s: &Scope, op: &str, index: Output, value: Output) -> TensorArray {
        let f = s
            .op(op)
            .input(self.handle.clone())
            .input(index)
            .input(value.clone())
            .input(self.flow.clone())
            .attr("T", attr::ty(value.dtype))
            .build()
            .output(0);
        self.with_flow(f)
    }

    /// `TensorArrayWriteV3`: element `index` (int32 scalar) := `value`.
    pub fn write(&self, s: &Scope, index: Output, value: Output) -> TensorArray {
        self.put(s, "TensorArrayWriteV3", index, value)
    }

    /// `op` (a read or a gather) at `index`: the op's output, with the element dtype and `attrs`.
    fn get<const N: usize>(&self, s: &Scope, op: &str, index: Output, attrs: [(&str, AttrValue); N]) -> Output {
        let attrs = attrs.into_iter().chain([("dtype", attr::ty(self.dtype))]);
        op_output(s, op, [self.handle.clone(), index, self.flow.clone()], attrs)
    }

    /// `TensorArrayReadV3`: element `index`.
    pub fn read(&self, s: &Scope, index: Output) -> Output {
        self.get(s, "TensorArrayReadV3", index, [])
    }

    /// `TensorArrayGatherV3`: the elements at `indices` (int32 vector), stacked.
    pub fn gather(&self, s: &Scope, indices: Output) -> Output {
        self.get(s, "TensorArrayGatherV3", indices, [("element_shape", shape_attr(&self.element_shape))])
    }

    /// Every element, stacked (a gather of `0..size`).
    pub fn stack(&self, s: &Scope) -> Output {
        let n = self.size(s);
        let idx = ops::range(s, ops::constant(s, 0i32), n, ops::constant(s, 1i32));
        self.gather(s, idx)
    }

    /// `TensorArrayScatterV3`: element `indices[i]` := `value[i]`.
    pub fn scatter(&self, s: &Scope, indices: Output, value: Output) -> TensorArray {
        self.put(s, "TensorArrayScatterV3", indices, value)
    }

    /// Element `i` := `value[i]` for every row of `value`.
    pub fn unstack(&self, s: &Scope, value: Output) -> TensorArray {
        let shape = ops::shape(s, value.clone(), DataType::Int32);
        let first =
            ops::slice(s, shape, ops::constant(s, Tensor::vec(vec![0i32])), ops::constant(s, Tensor::vec(vec![1i32])));
        let n = ops::reshape(s, first, ops::constant(s, Tensor::vec(Vec::<i32>::new())));
        let idx = ops::range(s, ops::constant(s, 0i32), n, ops::constant(s, 1i32));
        self.scatter(s, idx, value)
    }

    /// `TensorArrayConcatV3`: the elements concatenated along dimension 0, and each
    /// element's length (int64).
    pub fn concat(&self, s: &Scope) -> (Output, Output) {
        let rest = self.element_shape.as_ref().and_then(|d| d.get(1..).map(|r| r.to_vec()));
        let op = s
            .op("TensorArrayConcatV3")
            .input(self.handle.clone())
            .input(self.flow.clone())
            .attr("dtype", attr::ty(self.dtype))
            .attr("element_shape_except0", shape_attr(&rest))
            .build();
        (op.output(0), op.output(1))
    }

    /// `TensorArraySplitV3`: element `i` := the next `lengths[i]` (int64) rows of `value`.
    pub fn split(&self, s: &Scope, value: Output, lengths: Output) -> TensorArray {
        let f = s
            .op("TensorArraySplitV3")
            .input(self.handle.clone())
            .input(value.clone())
            .input(lengths)
            .input(self.flow.clone())
            .attr("T", attr::ty(value.dtype))
            .build()
            .output(0);
        self.with_flow(f)
    }

    /// `TensorArraySizeV3` (int32).
    pub fn size(&self, s: &Scope) -> Output {
        s.op("TensorArraySizeV3").input(self.handle.clone()).input(self.flow.clone()).build().output(0)
    }

    /// `TensorArrayCloseV3`.
    pub fn close(&self, s: &Scope) -> Operation {
        s.op("TensorArrayCloseV3").input(self.handle.clone()).build()
    }

    /// `TensorArrayGradV3`: the gradient array of this one for `source` (shared by every
    /// gradient op of one `gradients` call), ordered after `flow`.
    pub fn grad(&self, s: &Scope, source: &str, flow: Output) -> TensorArray {
        let op = s
            .op("TensorArrayGradV3")
            .input(self.handle.clone())
            .input(flow)
            .attr("source", attr::string(source))
            .build();
        TensorArray { handle: op.output(0), flow: op.output(1), dtype: self.dtype, element_shape: None }
    }
}
