//! Resource handles of variables: building them (`VarHandleOp`), reading them from inputs,
//! checking their device and finding their [`Var`].

use std::sync::Arc;

use ferroflow_core::{DataType, DeviceName, ResourceHandle, Status, Tensor};

use crate::{OpContext, Var};

/// TensorFlow's type name of variables in resource handles.
pub const VAR_TYPE_NAME: &str = "N10tensorflow3VarE";

/// TensorFlow's default container name.
pub const DEFAULT_CONTAINER: &str = "localhost";

/// TensorFlow's C++ spelling of a dtype in error messages (`float`, `double`, `int32` …).
pub fn tf_type_name(d: DataType) -> &'static str {
    match d {
        DataType::Float => "float",
        DataType::Double => "double",
        DataType::Half => "half",
        d => d.name(),
    }
}

/// A handle to the variable `container/name` on the step's device.
pub fn make_var_handle(
    ctx: &OpContext,
    container: &str,
    name: &str,
    dtype: DataType,
    shape: Option<&[i64]>,
) -> ResourceHandle {
    let container = if container.is_empty() { DEFAULT_CONTAINER } else { container };
    ResourceHandle {
        // Unknown-rank shapes carry no dims (the proto form has no unknown-rank marker here).
        dtypes_and_shapes: vec![(dtype.as_i32(), shape.map(<[i64]>::to_vec).unwrap_or_default())],
        ..ResourceHandle::new(ctx.device(), container, name, VAR_TYPE_NAME)
    }
}

/// A scalar DT_RESOURCE tensor holding `h`.
pub fn handle_tensor(h: ResourceHandle) -> Tensor {
    Tensor::scalar(h)
}

/// The resource handle fed to input `i`, checked to live on this step's device.
pub fn handle_input(ctx: &OpContext, i: usize) -> Result<ResourceHandle, Status> {
    let t = ctx.input(i)?;
    if t.dtype() != DataType::Resource {
        return Err(ctx.error(format!("input {i} must be a resource handle, got a {} tensor", t.dtype())));
    }
    let hs = t.as_slice::<ResourceHandle>()?;
    let [h] = hs else {
        return Err(ctx.error(format!("input {i} must be a scalar resource handle, got shape {}", t.shape())));
    };
    check_device(ctx, h)?;
    Ok(h.clone())
}

/// TensorFlow refuses to use a resource from another device than the one that holds it.
fn check_device(ctx: &OpContext, h: &ResourceHandle) -> Result<(), Status> {
    let here = ctx.device();
    if h.device.is_empty() || here.is_empty() || h.device == here {
        return Ok(());
    }
    let same = match (DeviceName::parse(&h.device), DeviceName::parse(here)) {
        (Ok(a), Ok(b)) => a.compatible(&b),
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(ctx
            .error(format!("Trying to access resource {} located in device {} from device {here}", h.name, h.device)))
    }
}

/// The variable named by `h`, as stored (NotFound if no op created it yet).
pub fn lookup_var(ctx: &OpContext, h: &ResourceHandle) -> Result<Arc<Var>, Status> {
    ctx.resources().lookup::<Var>(&h.container, &h.name)
}

fn container_name(h: &ResourceHandle) -> &str {
    if h.container.is_empty() {
        DEFAULT_CONTAINER
    } else {
        &h.container
    }
}

/// The variable named by `h` for reading or updating: a missing one is FailedPrecondition
/// with TensorFlow's message (in TF1 graphs that means "not initialized").
pub fn existing_var(ctx: &OpContext, h: &ResourceHandle) -> Result<Arc<Var>, Status> {
    lookup_var(ctx, h).map_err(|e| {
        ctx.error_with(Status::failed_precondition(format!(
            "Could not find variable {}. This could mean that the variable has been deleted. In TF1, it can also \
             mean the variable is uninitialized. Debug info: container={}, status error message={}",
            h.name,
            container_name(h),
            e.message
        )))
    })
}

/// The resource variable of handle input 0 and its value; the variable must hold `dtype`
/// (else InvalidArgument, `mismatch(var)`). A missing or uninitialized one is
/// FailedPrecondition.
pub fn read_typed_var(
    ctx: &OpContext,
    dtype: DataType,
    mismatch: impl FnOnce(&Var) -> String,
) -> Result<(Arc<Var>, Tensor), Status> {
    let h = handle_input(ctx, 0)?;
    let var = existing_var(ctx, &h)?;
    if var.dtype != dtype {
        return Err(ctx.error(mismatch(&var)));
    }
    let value = var.read().map_err(|_| uninitialized_read(ctx, &h))?;
    Ok((var, value))
}

/// The resource variable of handle input 0 and its value, to gather from as `dtype`
/// ([`read_typed_var`] with the gather ops' error text).
pub fn read_gather_var(ctx: &OpContext, dtype: DataType) -> Result<(Arc<Var>, Tensor), Status> {
    let want = tf_type_name(dtype);
    read_typed_var(ctx, dtype, |var| {
        format!("Trying to gather from variable {} of {} as {want}", var.name, tf_type_name(var.dtype))
    })
}

/// Checks that a scatter's variable and its updates (of type `updates`) both hold the op's
/// `dtype`; InvalidArgument naming the three otherwise.
pub fn check_scatter_dtypes(ctx: &OpContext, var: &Var, updates: DataType, dtype: DataType) -> Result<(), Status> {
    if var.dtype != dtype || updates != dtype {
        return Err(ctx.error(format!(
            "variable {} is {} and updates are {}, the op expects {}",
            var.name,
            tf_type_name(var.dtype),
            tf_type_name(updates),
            tf_type_name(dtype)
        )));
    }
    Ok(())
}

/// Checks a row scatter into variable `var` holding `t`: `t` at least 1-D, `updates` of shape
/// `indices.shape + t.shape[1:]` (or, when `scalar_ok`, a scalar for every row) and every
/// index in `[0, t.shape[0])`, the first one outside named by `position(k)` (its place in
/// `indices`). Returns whether `updates` is that scalar.
pub fn check_row_scatter(
    ctx: &OpContext,
    var: &Var,
    t: &Tensor,
    (indices, idx): (&Tensor, &[i64]),
    updates: &Tensor,
    scalar_ok: bool,
    position: impl Fn(usize) -> String,
) -> Result<bool, Status> {
    use crate::array::util::dims_str;
    if t.rank() < 1 {
        return Err(ctx.error(format!("variable {} must be at least 1-D to scatter into, got a scalar", var.name)));
    }
    let mut want = indices.dims().to_vec();
    want.extend_from_slice(&t.dims()[1..]);
    let scalar = scalar_ok && updates.rank() == 0;
    if updates.dims() != want.as_slice() && !scalar {
        return Err(ctx.error(format!(
            "Must have updates.shape = indices.shape + params.shape[1:]{}, got updates.shape {}, indices.shape {}, \
             params.shape {}",
            if scalar_ok { " or updates.shape = []" } else { "" },
            dims_str(updates.dims()),
            dims_str(indices.dims()),
            dims_str(t.dims())
        )));
    }
    let n = t.dims()[0] as i64;
    if let Some(k) = idx.iter().position(|&v| v < 0 || v >= n) {
        return Err(ctx.error(format!(
            "indices[{}] = {} is not in [0, {n}) (variable {})",
            position(k),
            idx[k],
            var.name
        )));
    }
    Ok(scalar)
}

/// FailedPrecondition for reading an uninitialized resource variable.
pub fn uninitialized_read(ctx: &OpContext, h: &ResourceHandle) -> Status {
    ctx.error_with(Status::failed_precondition(format!(
        "Error while reading resource variable {} from Container: {}. This could mean that the variable was \
         uninitialized.",
        h.name,
        container_name(h)
    )))
}

/// FailedPrecondition for using an uninitialized variable (TensorFlow's ref-variable text).
pub fn uninitialized_use(ctx: &OpContext, var: &Var) -> Status {
    ctx.error_with(Status::failed_precondition(format!("Attempting to use uninitialized value {}", var.name)))
}

/// The first `n` inputs of a kernel that updates variables: resource handles (resolved to
/// existing variables) when `resource`, else reference inputs.
pub fn var_inputs(ctx: &OpContext, n: usize, resource: bool) -> Result<Vec<Arc<Var>>, Status> {
    if resource {
        (0..n).map(|i| handle_input(ctx, i).and_then(|h| existing_var(ctx, &h))).collect()
    } else {
        (0..n).map(|i| ctx.input_ref(i)).collect()
    }
}
