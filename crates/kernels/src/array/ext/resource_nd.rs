//! Variable forms: ResourceGatherNd, ResourceScatterNd{Update,Add,Sub,Max,Min} and the
//! reference-variable ScatterNd{Update,Add,Sub,Max,Min} (index tuples, as
//! GatherNd/TensorScatter*; `tf.compat.v1.scatter_nd_update` ...), ResourceScatter{Mul,Div,
//! Min,Max} and the reference-variable Scatter{Mul,Div,Min,Max} (rows, as the Add/Sub/Update
//! forms of `state/sparse.rs`). Updates happen in place under the variable's write lock; the
//! reference forms output the updated reference.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::gather_nd::{check_updates, resolve, scatter_into, Mode};
use crate::array::util::index_vec;
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::state::handle::{check_row_scatter, check_scatter_dtypes, read_gather_var, uninitialized_use, var_inputs};
use crate::{KernelRegistry, OpContext, OpKernel, Value, Var};

op_kernel! {
    struct GatherNd { dtype: DataType }
    fn compute(&self, ctx) {
        let (_, params) = read_gather_var(ctx, self.dtype)?;
        let indices = ctx.input(1)?;
        let s = resolve(ctx, &indices, params.dims(), "param")?;
        let depth = indices.dims()[indices.rank() - 1];
        let mut dims = indices.dims()[..indices.rank() - 1].to_vec();
        dims.extend_from_slice(&params.dims()[depth..]);
        let out = ferroflow_core::with_dtype!(params.dtype(), T => {
            let src = params.as_slice::<T>()?;
            let mut v = ferroflow_core::alloc::with_capacity(&dims)?;
            for &o in &s.offsets {
                v.extend_from_slice(&src[o..o + s.slice]);
            }
            Tensor::new(dims, v)
        })?;
        ctx.set_output(0, out)
    }
}

/// How a row scatter combines the variable's element with the update.
#[derive(Clone, Copy, PartialEq)]
enum Row {
    Mul,
    Div,
    Min,
    Max,
}

fn combine_rows<T: Num>(dst: &mut [T], idx: &[i64], row: usize, upd: &[T], scalar: bool, op: Row) {
    for (i, &r) in idx.iter().enumerate() {
        let d = &mut dst[r as usize * row..(r as usize + 1) * row];
        for (j, a) in d.iter_mut().enumerate() {
            let u = if scalar { upd[0] } else { upd[i * row + j] };
            *a = match op {
                Row::Mul => a.mul(u),
                Row::Div => a.div(u),
                Row::Min => a.tf_min(u),
                Row::Max => a.tf_max(u),
            };
        }
    }
}

op_kernel! {
    /// ND (`nd` = Some(mode)) or row (`row` = Some(op)) scatter into a resource variable
    /// (`resource`) or a reference input.
    struct Scatter { nd: Option<Mode>, row: Option<Row>, dtype_attr: DataType, resource: bool }
    fn compute(&self, ctx) {
        let var = var_inputs(ctx, 1, self.resource)?.remove(0);
        self.update(ctx, &var)?;
        if !self.resource {
            ctx.set_output_value(0, Value::Ref(var))?;
        }
        Ok(())
    }
}

impl Scatter {
    fn update(&self, ctx: &mut OpContext, var: &Var) -> Result<(), Status> {
        let indices = ctx.input(1)?;
        let updates = ctx.input(2)?;
        check_scatter_dtypes(ctx, var, updates.dtype(), self.dtype_attr)?;
        let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
        let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, var)) };
        if let Some(mode) = self.nd {
            let s = resolve(ctx, &indices, t.dims(), "tensor")?;
            check_updates(ctx, &indices, &updates, t.dims())?;
            if mode == Mode::Update {
                return ferroflow_core::with_dtype!(t.dtype(), T => {
                    let upd = updates.as_slice::<T>()?;
                    let dst = t.data_mut::<T>()?;
                    for (i, &o) in s.offsets.iter().enumerate() {
                        dst[o..o + s.slice].clone_from_slice(&upd[i * s.slice..(i + 1) * s.slice]);
                    }
                    Ok(())
                });
            }
            return dispatch!(t.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| {
                scatter_into::<T>(t.data_mut::<T>()?, &s, updates.as_slice::<T>()?, mode);
                Ok(())
            });
        }
        let Some(op) = self.row else {
            return Err(ctx.error_with(Status::internal("a scatter kernel with neither an nd nor a row mode")));
        };
        let idx = index_vec(&indices).map_err(|e| ctx.error(e.message))?;
        // Only the resource forms take a scalar update for every row (TensorFlow's rule).
        let scalar = check_row_scatter(ctx, var, t, (&indices, &idx), &updates, self.resource, |k| k.to_string())?;
        let row: usize = t.dims()[1..].iter().product();
        dispatch!(t.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| {
            combine_rows::<T>(t.data_mut::<T>()?, &idx, row, updates.as_slice::<T>()?, scalar, op);
            Ok(())
        })
    }
}

fn nd(n: &NodeDef, mode: Mode, resource: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Scatter { nd: Some(mode), row: None, dtype_attr: n.attr_type("T")?, resource }))
}

fn row(n: &NodeDef, op: Row, resource: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype_attr = n.attr_type(if resource { "dtype" } else { "T" })?;
    Ok(Box::new(Scatter { nd: None, row: Some(op), dtype_attr, resource }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ResourceGatherNd", |n| Ok(Box::new(GatherNd { dtype: n.attr_type("dtype")? })));
    r.add("ResourceScatterNdUpdate", |n| nd(n, Mode::Update, true));
    r.add("ResourceScatterNdAdd", |n| nd(n, Mode::Add, true));
    r.add("ResourceScatterNdSub", |n| nd(n, Mode::Sub, true));
    r.add("ResourceScatterNdMax", |n| nd(n, Mode::Max, true));
    r.add("ResourceScatterNdMin", |n| nd(n, Mode::Min, true));
    r.add("ScatterNdUpdate", |n| nd(n, Mode::Update, false));
    r.add("ScatterNdAdd", |n| nd(n, Mode::Add, false));
    r.add("ScatterNdSub", |n| nd(n, Mode::Sub, false));
    r.add("ScatterNdMax", |n| nd(n, Mode::Max, false));
    r.add("ScatterNdMin", |n| nd(n, Mode::Min, false));
    r.add("ResourceScatterMul", |n| row(n, Row::Mul, true));
    r.add("ResourceScatterDiv", |n| row(n, Row::Div, true));
    r.add("ResourceScatterMin", |n| row(n, Row::Min, true));
    r.add("ResourceScatterMax", |n| row(n, Row::Max, true));
    r.add("ScatterMul", |n| row(n, Row::Mul, false));
    r.add("ScatterDiv", |n| row(n, Row::Div, false));
    r.add("ScatterMin", |n| row(n, Row::Min, false));
    r.add("ScatterMax", |n| row(n, Row::Max, false));
}
