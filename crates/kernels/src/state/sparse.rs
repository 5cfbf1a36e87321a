//! Row-wise access to variables, the sparse side of embeddings on parameter servers:
//! `ResourceGather` (rows of a resource variable), the scatter updates
//! `Scatter{Add,Sub,Update}` (reference variables) and `ResourceScatter{Add,Sub,Update}`,
//! and `DisableCopyOnRead` (a hint TensorFlow's sparse readers send; ferroflow's variables
//! are always copy-on-write, so it only checks the handle).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::handle::{
    check_row_scatter, check_scatter_dtypes, existing_var, handle_input, read_gather_var, uninitialized_use, var_inputs,
};
use crate::array::{dims_str, index_vec, multi_index};
use crate::{KernelRegistry, OpKernel, Value};

op_kernel! {
    struct ResourceGather { batch_dims: i64, dtype: DataType }
    fn compute(&self, ctx) {
        let (var, params) = read_gather_var(ctx, self.dtype)?;
        let indices = ctx.input(1)?;
        let bd = self.batch_dims;
        if bd < 0 || bd as usize > indices.rank() || (bd as usize) >= params.rank().max(1) {
            return Err(ctx.error(format!(
                "batch_dims = {bd} must be in [0, min(rank(indices) = {}, rank(params) - 1 = {})]",
                indices.rank(),
                params.rank() as i64 - 1
            )));
        }
        if params.rank() < 1 {
            return Err(ctx.error(format!("params of variable {} must be at least 1 dimensional", var.name)));
        }
        let bd = bd as usize;
        if params.dims()[..bd] != indices.dims()[..bd] {
            return Err(ctx.error(format!(
                "params.shape {} and indices.shape {} differ in their first {bd} (batch) dimensions",
                dims_str(params.dims()),
                dims_str(indices.dims())
            )));
        }
        let out = crate::array::gather_rows(ctx, &params, &indices, bd, bd)?;
        ctx.set_output(0, out)
    }
}

/// How a scatter combines a row of `updates` with the variable's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scatter {
    Add,
    Sub,
    Update,
}

trait ScatterElem: TensorType + Copy {
    fn combine(self, u: Self, op: Scatter) -> Self;
}
macro_rules! scatter_elem {
    (float: $($t:ty),*) => {$(impl ScatterElem for $t {
        fn combine(self, u: Self, op: Scatter) -> Self {
            match op { Scatter::Add => self + u, Scatter::Sub => self - u, Scatter::Update => u }
        }
    })*};
    (int: $($t:ty),*) => {$(impl ScatterElem for $t {
        fn combine(self, u: Self, op: Scatter) -> Self {
            match op { Scatter::Add => self.wrapping_add(u), Scatter::Sub => self.wrapping_sub(u), Scatter::Update => u }
        }
    })*};
}
scatter_elem!(float: f32, f64);
scatter_elem!(int: i32, i64, u8);

/// `var[idx[i], …] op= updates[i, …]` for every i (or the scalar `updates` for every row).
fn scatter_typed<T: ScatterElem>(var: &mut Tensor, idx: &[i64], updates: &Tensor, op: Scatter) -> Result<(), Status> {
    let inner: usize = var.dims()[1..].iter().product();
    let u = updates.as_slice::<T>()?;
    let scalar = updates.rank() == 0;
    let dst = var.data_mut::<T>()?;
    for (i, &row) in idx.iter().enumerate() {
        let d = &mut dst[row as usize * inner..(row as usize + 1) * inner];
        if scalar {
            d.iter_mut().for_each(|x| *x = x.combine(u[0], op));
        } else {
            for (x, &v) in d.iter_mut().zip(&u[i * inner..(i + 1) * inner]) {
                *x = x.combine(v, op);
            }
        }
    }
    Ok(())
}

op_kernel! {
    struct ScatterKernel { op: Scatter, resource: bool, dtype: DataType }
    fn compute(&self, ctx) {
        let var = var_inputs(ctx, 1, self.resource)?.remove(0);
        let indices = ctx.input(1)?;
        let updates = ctx.input(2)?;
        check_scatter_dtypes(ctx, &var, updates.dtype(), self.dtype)?;
        let idx = index_vec(&indices).map_err(|e| ctx.error(e.message))?;
        let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
        let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
        check_row_scatter(ctx, &var, t, (&indices, &idx), &updates, self.resource, |k| multi_index(k, indices.dims()))?;
        let op = self.op;
        match (self.dtype, op) {
            (DataType::Float, _) => scatter_typed::<f32>(t, &idx, &updates, op),
            (DataType::Double, _) => scatter_typed::<f64>(t, &idx, &updates, op),
            (DataType::Int32, _) => scatter_typed::<i32>(t, &idx, &updates, op),
            (DataType::Int64, _) => scatter_typed::<i64>(t, &idx, &updates, op),
            (DataType::UInt8, _) => scatter_typed::<u8>(t, &idx, &updates, op),
            (d, _) => Err(Status::unimplemented(format!("scatter into a {d} variable is not supported"))),
        }
        .map_err(|e| ctx.error(e.message))?;
        drop(g);
        if !self.resource {
            ctx.set_output_value(0, Value::Ref(var))?;
        }
        Ok(())
    }
}

fn scatter(n: &NodeDef, op: Scatter, resource: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type(if resource { "dtype" } else { "T" })?;
    Ok(Box::new(ScatterKernel { op, resource, dtype }))
}

op_kernel! {
    struct DisableCopyOnRead;
    fn compute(&self, ctx) {
        existing_var(ctx, &handle_input(ctx, 0)?).map(|_| ())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ResourceGather", |n| {
        Ok(Box::new(ResourceGather { batch_dims: n.attr_int("batch_dims").unwrap_or(0), dtype: n.attr_type("dtype")? }))
    });
    r.add("ScatterAdd", |n| scatter(n, Scatter::Add, false));
    r.add("ScatterSub", |n| scatter(n, Scatter::Sub, false));
    r.add("ScatterUpdate", |n| scatter(n, Scatter::Update, false));
    r.add("ResourceScatterAdd", |n| scatter(n, Scatter::Add, true));
    r.add("ResourceScatterSub", |n| scatter(n, Scatter::Sub, true));
    r.add("ResourceScatterUpdate", |n| scatter(n, Scatter::Update, true));
    r.add_cheap("DisableCopyOnRead", |_| Ok(Box::new(DisableCopyOnRead)));
}
