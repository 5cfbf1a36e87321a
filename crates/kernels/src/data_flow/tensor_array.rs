//! TensorFlow's `TensorArray` resource (the state behind `TensorArrayV3` and its ops): a
//! per-step array of tensors, each written at most once (gradient arrays instead sum
//! repeated writes), read any number of times unless `clear_after_read`, growing on write
//! when `dynamic_size`. Reading an element never written gives zeros when its shape is
//! known (a gradient array knows it from the forward array; otherwise the array's element
//! shape must be fully defined), as in TensorFlow.

use std::sync::Mutex;

use ferroflow_core::{DataType, Shape, Status, Tensor};

use crate::array::util::check_alloc;

/// Most elements one TensorArray may hold (TensorFlow's sizes are int32).
pub const MAX_ELEMENTS: usize = i32::MAX as usize;

/// Most element slots one dynamic write may add at once, so that one remote write to a
/// huge index cannot make a server allocate gigabytes of empty slots.
const MAX_GROWTH: usize = 1 << 24;

#[derive(Clone, Default)]
struct Entry {
    /// The value (None while unwritten, after a clearing read, or when only the shape of
    /// a gradient is known: then reads give zeros).
    tensor: Option<Tensor>,
    /// The element's shape once written (or copied from the forward array).
    shape: Option<Shape>,
    written: bool,
    read: bool,
    cleared: bool,
}

struct State {
    closed: bool,
    dynamic_size: bool,
    gradients_disallowed: bool,
    /// The element shape as known so far (None: unknown rank; -1: unknown dimension).
    element_shape: Option<Vec<i64>>,
    entries: Vec<Entry>,
}

/// One TensorArray.
pub struct TensorArray {
    /// Its handle name (as in TensorFlow's messages).
    pub name: String,
    /// Element dtype.
    pub dtype: DataType,
    identical_element_shapes: bool,
    multiple_writes_aggregate: bool,
    clear_after_read: bool,
    is_grad: bool,
    state: Mutex<State>,
}

/// Whether a concrete shape fits a partial one.
pub fn shape_fits(partial: &Option<Vec<i64>>, dims: &[usize]) -> bool {
    match partial {
        None => true,
        Some(p) => p.len() == dims.len() && p.iter().zip(dims).all(|(&a, &b)| a < 0 || a as usize == b),
    }
}

/// TensorFlow's `PartialTensorShape::DebugString`: `<unknown>`, `[2,?]`.
pub fn partial_text(p: &Option<Vec<i64>>) -> String {
    match p {
        None => "<unknown>".to_string(),
        Some(d) => {
            let v: Vec<String> = d.iter().map(|&x| if x < 0 { "?".to_string() } else { x.to_string() }).collect();
            format!("[{}]", v.join(","))
        }
    }
}

fn fully_defined(p: &Option<Vec<i64>>) -> Option<Shape> {
    match p {
        Some(d) if d.iter().all(|&x| x >= 0) => Some(Shape::new(d.iter().map(|&x| x as usize).collect::<Vec<_>>())),
        _ => None,
    }
}

/// Options of a new array.
pub struct TensorArrayOptions {
    /// Element dtype.
    pub dtype: DataType,
    /// Initial size.
    pub size: usize,
    /// Writes may grow the array.
    pub dynamic_size: bool,
    /// Repeated writes to one index are summed (gradient arrays).
    pub multiple_writes_aggregate: bool,
    /// Whether this is a gradient array.
    pub is_grad: bool,
    /// Reads clear the element.
    pub clear_after_read: bool,
    /// Every element has one shape (learned from the first write when not given).
    pub identical_element_shapes: bool,
    /// The element shape as far as known.
    pub element_shape: Option<Vec<i64>>,
}

impl TensorArray {
    /// A new array of `size` unwritten elements.
    pub fn new(name: &str, o: TensorArrayOptions) -> Result<TensorArray, Status> {
        if o.size > MAX_ELEMENTS {
            return Err(Status::invalid_argument(format!("TensorArray size {} is too large", o.size)));
        }
        let bytes = o.size.checked_mul(std::mem::size_of::<Entry>()).map(|b| b as u64);
        ferroflow_core::check_alloc_bytes(bytes, || format!("the {} element slots of TensorArray {name}", o.size))?;
        let mut entries = Vec::new();
        entries
            .try_reserve(o.size)
            .map_err(|_| Status::resource_exhausted(format!("cannot allocate a TensorArray of {} elements", o.size)))?;
        entries.resize(o.size, Entry::default());
        Ok(TensorArray {
            name: name.to_string(),
            dtype: o.dtype,
            identical_element_shapes: o.identical_element_shapes,
            multiple_writes_aggregate: o.multiple_writes_aggregate,
            clear_after_read: o.clear_after_read,
            is_grad: o.is_grad,
            state: Mutex::new(State {
                closed: false,
                dynamic_size: o.dynamic_size,
                gradients_disallowed: false,
                element_shape: o.element_shape,
                entries,
            }),
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>, Status> {
        let g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if g.closed {
            return Err(Status::invalid_argument(format!("TensorArray {} has already been closed.", self.name)));
        }
        Ok(g)
    }

    /// The number of elements.
    pub fn size(&self) -> Result<usize, Status> {
        Ok(self.lock()?.entries.len())
    }

    /// The element shape known so far.
    pub fn element_shape(&self) -> Result<Option<Vec<i64>>, Status> {
        Ok(self.lock()?.element_shape.clone())
    }

    /// Whether writes may grow the array.
    pub fn has_dynamic_size(&self) -> Result<bool, Status> {
        Ok(self.lock()?.dynamic_size)
    }

    /// Closes the array, dropping its elements.
    pub fn close(&self) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.entries.clear();
        g.closed = true;
    }

    /// Writes `values[i]` to `indices[i]`, all or nothing checked one by one in
    /// TensorFlow's order (the last first).
    pub fn write_many(&self, indices: &[i64], values: Vec<Tensor>) -> Result<(), Status> {
        let mut g = self.lock()?;
        for (&i, v) in indices.iter().zip(values).rev() {
            self.locked_write(&mut g, i, v)?;
        }
        Ok(())
    }

    /// Writes one element.
    pub fn write(&self, index: i64, value: Tensor) -> Result<(), Status> {
        let mut g = self.lock()?;
        self.locked_write(&mut g, index, value)
    }

    fn locked_write(&self, g: &mut State, index: i64, value: Tensor) -> Result<(), Status> {
        let len = g.entries.len();
        if index < 0 || (!g.dynamic_size && index as usize >= len) {
            return Err(Status::invalid_argument(format!(
                "TensorArray {}: Tried to write to index {index} but array is not resizeable and size is: {len}",
                self.name
            )));
        }
        let idx = index as usize;
        if idx >= len {
            if idx >= MAX_ELEMENTS || idx - len >= MAX_GROWTH {
                return Err(Status::invalid_argument(format!(
                    "TensorArray {}: Tried to write to index {index}, more than {MAX_GROWTH} past its size {len}",
                    self.name
                )));
            }
            g.entries.try_reserve(idx + 1 - len).map_err(|_| {
                Status::resource_exhausted(format!("TensorArray {}: cannot grow to {}", self.name, idx + 1))
            })?;
            g.entries.resize(idx + 1, Entry::default());
        }
        if value.dtype() != self.dtype {
            return Err(Status::invalid_argument(format!(
                "TensorArray {}: Could not write to TensorArray index {index} because the value dtype is {} but \
                 TensorArray dtype is {}.",
                self.name,
                tf_name(value.dtype()),
                tf_name(self.dtype)
            )));
        }
        if !shape_fits(&g.element_shape, value.dims()) {
            return Err(Status::invalid_argument(format!(
                "TensorArray {}: Could not write to TensorArray index {index} because the value shape is {} which is \
                 incompatible with the TensorArray's inferred element shape: {} (consider setting infer_shape=False).",
                self.name,
                value.shape(),
                partial_text(&g.element_shape)
            )));
        } else if self.identical_element_shapes && fully_defined(&g.element_shape).is_none() {
            g.element_shape = Some(value.shape().to_i64());
        }
        let name = self.name.clone();
        let aggregate = self.multiple_writes_aggregate;
        let t = &mut g.entries[idx];
        if t.read {
            return Err(Status::invalid_argument(format!(
                "TensorArray {name}: Could not write to TensorArray index {index} because it has already been read."
            )));
        }
        if !aggregate && t.written {
            return Err(Status::invalid_argument(format!(
                "TensorArray {name}: Could not write to TensorArray index {index} because it has already been \
                 written to."
            )));
        }
        if t.written {
            if let Some(s) = &t.shape {
                if s != value.shape() {
                    return Err(Status::invalid_argument(format!(
                        "TensorArray {name}: Could not aggregate to TensorArray index {index} because the existing \
                         shape is {s} but the new input shape is {}.",
                        value.shape()
                    )));
                }
            }
            t.tensor = Some(match t.tensor.take() {
                None => value,
                Some(cur) => add_tensors(&cur, &value)?,
            });
            t.shape = Some(value_shape(t));
            g.gradients_disallowed = true;
        } else {
            t.shape = Some(value.shape().clone());
            t.tensor = Some(value);
            t.written = true;
        }
        Ok(())
    }

    /// Reads one element (zeros for a known-shape element never written).
    pub fn read(&self, index: i64) -> Result<Tensor, Status> {
        let mut g = self.lock()?;
        self.locked_read(&mut g, index)
    }

    /// Reads several elements.
    pub fn read_many(&self, indices: &[i64]) -> Result<Vec<Tensor>, Status> {
        let mut g = self.lock()?;
        indices.iter().map(|&i| self.locked_read(&mut g, i)).collect()
    }

    /// Reads every element.
    pub fn read_all(&self) -> Result<Vec<Tensor>, Status> {
        let mut g = self.lock()?;
        let n = g.entries.len() as i64;
        (0..n).map(|i| self.locked_read(&mut g, i)).collect()
    }

    fn locked_read(&self, g: &mut State, index: i64) -> Result<Tensor, Status> {
        let len = g.entries.len();
        if index < 0 || (!self.is_grad && index as usize >= len) {
            return Err(Status::invalid_argument(format!("Tried to read from index {index} but array size is: {len}")));
        }
        let idx = index as usize;
        let unwritten = idx >= len || !g.entries[idx].written;
        if unwritten {
            let known =
                if self.is_grad && idx < len { g.entries[idx].shape.clone().filter(|s| s.rank() > 0) } else { None };
            let shape = match known.or_else(|| fully_defined(&g.element_shape)) {
                Some(s) => s,
                None => {
                    return Err(Status::invalid_argument(format!(
                        "TensorArray {}: Could not read from TensorArray index {index}.  Furthermore, the element \
                         shape is not fully defined: {}.  It is possible you are working with a resizeable \
                         TensorArray and stop_gradients is not allowing the gradients to be written.  If you set \
                         the full element_shape property on the forward TensorArray, the proper all-zeros tensor \
                         will be returned instead of incurring this error.",
                        self.name,
                        partial_text(&g.element_shape)
                    )))
                }
            };
            check_alloc(shape.dims(), self.dtype)?;
            return Tensor::zeros(self.dtype, shape);
        }
        let clear = self.clear_after_read;
        let name = self.name.clone();
        let t = &mut g.entries[idx];
        if t.cleared {
            return Err(Status::invalid_argument(format!(
                "TensorArray {name}: Could not read index {index} twice because it was cleared after a previous \
                 read (perhaps try setting clear_after_read = false?)."
            )));
        }
        let v = match &t.tensor {
            Some(v) => v.clone(),
            None => {
                let s = t.shape.clone().unwrap_or_else(Shape::scalar);
                check_alloc(s.dims(), self.dtype)?;
                Tensor::zeros(self.dtype, s)?
            }
        };
        if clear {
            t.tensor = None;
            t.cleared = true;
        }
        t.read = true;
        Ok(v)
    }

    /// Creates the gradient array of this one: same size, shapes copied from the written
    /// elements (optionally behind `prepend`), no longer resizeable.
    pub fn make_grad(&self, name: &str, prepend: Option<&[usize]>) -> Result<TensorArray, Status> {
        let mut g = self.lock()?;
        if g.gradients_disallowed {
            return Err(Status::invalid_argument(format!(
                "Unable to create a gradients TensorArray for {}.  Perhaps you used the multiple_writes_aggregate \
                 flag on a previous write?  Gradient calculation is impossible when multiple writes are performed \
                 to the same index.",
                self.name
            )));
        }
        g.dynamic_size = false;
        let with_prefix = |d: &[i64]| -> Vec<i64> {
            let mut v: Vec<i64> = prepend.unwrap_or(&[]).iter().map(|&x| x as i64).collect();
            v.extend_from_slice(d);
            v
        };
        let element_shape = g.element_shape.as_ref().map(|d| with_prefix(d));
        let grad = TensorArray::new(
            name,
            TensorArrayOptions {
                dtype: self.dtype,
                size: g.entries.len(),
                dynamic_size: false,
                multiple_writes_aggregate: true,
                is_grad: true,
                clear_after_read: true,
                identical_element_shapes: false,
                element_shape,
            },
        )?;
        grad.copy_shapes_from(&g, prepend);
        Ok(grad)
    }

    fn copy_shapes_from(&self, fwd: &State, prepend: Option<&[usize]>) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for (mine, theirs) in g.entries.iter_mut().zip(&fwd.entries) {
            if !theirs.written {
                continue;
            }
            let Some(s) = &theirs.shape else { continue };
            let mut d: Vec<usize> = prepend.unwrap_or(&[]).to_vec();
            d.extend_from_slice(s.dims());
            mine.shape = Some(Shape::new(d));
            mine.written = true;
        }
    }
}

fn value_shape(t: &Entry) -> Shape {
    t.tensor.as_ref().map(|v| v.shape().clone()).or_else(|| t.shape.clone()).unwrap_or_else(Shape::scalar)
}

fn tf_name(d: DataType) -> &'static str {
    crate::array::util::tf_type_name(d)
}

/// Stacks equally shaped tensors into one with a new leading dimension of `n`.
pub fn stack_tensors(dtype: DataType, elem: &Shape, parts: &[Tensor]) -> Result<Tensor, Status> {
    let mut dims = vec![parts.len()];
    dims.extend_from_slice(elem.dims());
    concat_rows(dtype, dims, parts)
}

/// Concatenates tensors' elements in order into a tensor of shape `dims`.
pub fn concat_rows(dtype: DataType, dims: Vec<usize>, parts: &[Tensor]) -> Result<Tensor, Status> {
    check_alloc(&dims, dtype)?;
    ferroflow_core::with_dtype!(dtype, T => {
        let mut out: Vec<T> = ferroflow_core::alloc::with_capacity(&dims)?;
        for p in parts {
            out.extend_from_slice(p.as_slice::<T>()?);
        }
        Tensor::new(dims, out)
    })
}

/// The elementwise sum of two tensors of one shape (repeated writes to a gradient array).
fn add_tensors(a: &Tensor, b: &Tensor) -> Result<Tensor, Status> {
    macro_rules! add {
        ($T:ty, $f:expr) => {{
            let (x, y) = (a.as_slice::<$T>()?, b.as_slice::<$T>()?);
            Tensor::new(a.shape().clone(), x.iter().zip(y).map(|(&p, &q)| $f(p, q)).collect::<Vec<$T>>())
        }};
    }
    match a.dtype() {
        DataType::Float => add!(f32, |p: f32, q: f32| p + q),
        DataType::Double => add!(f64, |p: f64, q: f64| p + q),
        DataType::Int32 => add!(i32, i32::wrapping_add),
        DataType::Int64 => add!(i64, i64::wrapping_add),
        d => Err(Status::invalid_argument(format!("tensor_array::AddToTensor type not supported: {}", tf_name(d)))),
    }
}
