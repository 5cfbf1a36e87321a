//! [`PartitionedVariable`]: one logical variable stored as several variables (its parts),
//! split along one axis, as `tf.compat.v1.get_variable(..., partitioner=
//! fixed_size_partitioner(n))` makes them. Under a replica device setter each part is placed
//! on its own parameter server; a [`Saver`](../ferroflow_train/saver) stores the parts as
//! slices of one checkpoint tensor named after the full variable, which TensorFlow reads
//! (and which restores under any other partitioning).

use ferroflow_core::{DataType, Status};

use crate::ops;
use crate::scope::{Output, Scope};
use crate::variable::{Variable, VariableOptions};

/// Sizes of `n` parts of a dimension of `dim` (TensorFlow's `fixed_size_partitioner`: the
/// first `dim % n` parts get one more row). At most `dim` parts (at least one).
pub fn fixed_size_partitions(dim: usize, n: usize) -> Vec<usize> {
    let n = n.clamp(1, dim.max(1));
    (0..n).map(|i| dim / n + usize::from(i < dim % n)).collect()
}

/// A variable split into parts along `axis`.
#[derive(Clone, Debug)]
pub struct PartitionedVariable {
    name: String,
    full_shape: Vec<usize>,
    axis: usize,
    parts: Vec<Variable>,
}

impl PartitionedVariable {
    /// Creates `name` of `full_shape` as `num_parts` variables `name/part_0`, … split along
    /// `axis` ([`fixed_size_partitions`]); `init(scope, part_shape, offset)` gives each
    /// part's initial value (`offset` is the part's first index along `axis`).
    pub fn new(
        s: &Scope,
        name: &str,
        full_shape: &[usize],
        axis: usize,
        num_parts: usize,
        opts: &VariableOptions,
        init: impl Fn(&Scope, &[usize], usize) -> Output,
    ) -> Result<PartitionedVariable, Status> {
        if axis >= full_shape.len() {
            return Err(Status::invalid_argument(format!(
                "partitioned variable '{name}': axis {axis} is out of range for shape {full_shape:?}"
            )));
        }
        let dims: Vec<String> = full_shape.iter().map(|d| d.to_string()).collect();
        let full_name = if s.prefix().is_empty() { name.to_string() } else { format!("{}/{name}", s.prefix()) };
        let mut parts = Vec::new();
        let mut offset = 0;
        for (i, len) in fixed_size_partitions(full_shape[axis], num_parts).into_iter().enumerate() {
            let mut shape = full_shape.to_vec();
            shape[axis] = len;
            let spec: Vec<String> = (0..shape.len())
                .map(|d| if d == axis { format!("{offset},{len}") } else { format!("0,{}", full_shape[d]) })
                .collect();
            let o = VariableOptions {
                save_slice: Some((full_name.clone(), format!("{} {}", dims.join(" "), spec.join(":")))),
                ..opts.clone()
            };
            let value = init(s, &shape, offset);
            let v = Variable::with_options(s, &format!("{name}/part_{i}"), value, &o);
            if v.dtype() != parts.first().map(Variable::dtype).unwrap_or(v.dtype()) {
                return Err(Status::invalid_argument(format!(
                    "partitioned variable '{name}': part {i} is {} but part 0 is {}",
                    v.dtype(),
                    parts[0].dtype()
                )));
            }
            parts.push(v);
            offset += len;
        }
        s.graph().status()?;
        Ok(PartitionedVariable { name: full_name, full_shape: full_shape.to_vec(), axis, parts })
    }

    /// The full variable's name (the checkpoint key).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full shape.
    pub fn shape(&self) -> &[usize] {
        &self.full_shape
    }

    /// The parts, in order along the axis.
    pub fn parts(&self) -> &[Variable] {
        &self.parts
    }

    /// Element type.
    pub fn dtype(&self) -> DataType {
        self.parts[0].dtype()
    }

    /// The axis the parts split.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The whole value: the parts' values concatenated along the axis (a gradient through
    /// it reaches each part).
    pub fn value(&self, s: &Scope) -> Output {
        let values: Vec<Output> = self.parts.iter().map(Variable::value).collect();
        if values.len() == 1 {
            return values[0].clone();
        }
        ops::concat(s, values, ops::constant(s, self.axis as i32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_tensorflow() {
        assert_eq!(fixed_size_partitions(20, 3), vec![7, 7, 6]);
        assert_eq!(fixed_size_partitions(7, 3), vec![3, 2, 2]);
        assert_eq!(fixed_size_partitions(2, 5), vec![1, 1]);
        assert_eq!(fixed_size_partitions(6, 2), vec![3, 3]);
    }

    #[test]
    fn parts_carry_their_slices() {
        let s = Scope::new_root();
        let w = PartitionedVariable::new(
            &s.sub("layer"),
            "w",
            &[5, 4],
            0,
            2,
            &VariableOptions::default(),
            |s, shape, _| ops::constant(s, ferroflow_core::Tensor::zeros(DataType::Float, shape.to_vec()).unwrap()),
        )
        .unwrap();
        assert_eq!(w.name(), "layer/w");
        let names: Vec<&str> = w.parts().iter().map(Variable::name).collect();
        assert_eq!(names, ["layer/w/part_0", "layer/w/part_1"]);
        assert_eq!(w.parts()[1].save_slice(), Some(("layer/w", "5 4 3,2:0,4")));
        let again = Variable::from_graph(s.graph(), "layer/w/part_0").unwrap();
        assert_eq!(again.save_slice(), Some(("layer/w", "5 4 0,3:0,4")));
        assert!(PartitionedVariable::new(&s, "bad", &[5], 1, 2, &VariableOptions::default(), |s, _, _| {
            ops::constant(s, 0.0f32)
        })
        .is_err());
    }
}
