//! Shape inference: each op's shape function computes output shapes from input shapes
//! (and constant inputs when known) at graph-construction time.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor};

/// A partially known shape: `None` = unknown rank; a dim of -1 = unknown size.
pub type Dims = Option<Vec<i64>>;

/// What a shape function sees.
pub struct ShapeCtx<'a> {
    /// The node (attrs include defaults).
    pub node: &'a NodeDef,
    /// Shapes of the data inputs, in order.
    pub inputs: &'a [Dims],
    /// Values of inputs that are `Const` nodes, when known.
    pub consts: &'a [Option<Tensor>],
}

/// A shape function: one entry per output.
pub type ShapeFn = fn(&ShapeCtx) -> Result<Vec<Dims>, Status>;

impl ShapeCtx<'_> {
    /// Shape of input `i` (unknown if out of range).
    pub fn input(&self, i: usize) -> Dims {
        self.inputs.get(i).cloned().flatten()
    }

    /// Constant value of input `i`, if known.
    pub fn const_input(&self, i: usize) -> Option<&Tensor> {
        self.consts.get(i).and_then(|c| c.as_ref())
    }

    /// An InvalidArgument naming the node.
    pub fn error(&self, msg: impl std::fmt::Display) -> Status {
        Status::invalid_argument(format!("node '{}' (op {}): {msg}", self.node.name, self.node.op))
            .with_node(&self.node.name)
    }
}

/// Output 0 has the shape of input 0.
pub fn unchanged(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![c.input(0)])
}

/// One scalar output.
pub fn scalar(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![])])
}

/// NumPy broadcasting of inputs 0 and 1; an error if the known dims are incompatible.
pub fn broadcast(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![broadcast_dims(c, &c.input(0), &c.input(1))?])
}

/// Broadcasts two partial shapes.
pub fn broadcast_dims(c: &ShapeCtx, a: &Dims, b: &Dims) -> Result<Dims, Status> {
    let (Some(a), Some(b)) = (a, b) else { return Ok(None) };
    let n = a.len().max(b.len());
    let mut out = vec![0i64; n];
    for i in 0..n {
        let da = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
        let db = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (-1, _) | (_, -1) => -1,
            _ => {
                return Err(c.error(format!("incompatible shapes for broadcasting: {a:?} and {b:?}")));
            }
        };
    }
    Ok(Some(out))
}
