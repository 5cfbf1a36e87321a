//! TensorFlow's lookup tables as one resource: a static `HashTable` (filled once by an
//! initializer, then read-only), a `MutableHashTable` (scalars or tensors of `value_shape`)
//! and a `MutableDenseHashTable` (a mutable table whose `empty_key` and `deleted_key` may
//! not be used as keys). Keys are int32, int64 or strings; values any dtype, each value a
//! tensor of the table's `value_shape`.

use std::collections::HashMap;
use std::sync::Mutex;

use ferroflow_core::{DataType, Shape, Status, Tensor};

use crate::array::util::{check_alloc, tf_type_name};

/// A table key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableKey {
    /// An int32 key.
    I32(i32),
    /// An int64 key.
    I64(i64),
    /// A string key.
    Str(Vec<u8>),
}

impl std::fmt::Display for TableKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableKey::I32(v) => write!(f, "{v}"),
            TableKey::I64(v) => write!(f, "{v}"),
            TableKey::Str(s) => write!(f, "{}", String::from_utf8_lossy(s)),
        }
    }
}

/// The keys of a tensor, in order.
pub fn keys_of(t: &Tensor) -> Result<Vec<TableKey>, Status> {
    Ok(match t.dtype() {
        DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&v| TableKey::I32(v)).collect(),
        DataType::Int64 => t.as_slice::<i64>()?.iter().map(|&v| TableKey::I64(v)).collect(),
        DataType::String => t.as_slice::<Vec<u8>>()?.iter().map(|v| TableKey::Str(v.clone())).collect(),
        d => return Err(Status::invalid_argument(format!("table keys must be int32, int64 or string, got {d}"))),
    })
}

/// Keys back into a vector tensor of `dtype`.
pub fn keys_tensor(dtype: DataType, keys: &[TableKey]) -> Result<Tensor, Status> {
    macro_rules! collect {
        ($pat:ident, $T:ty) => {
            Tensor::vec(
                keys.iter()
                    .map(|k| match k {
                        TableKey::$pat(v) => Ok(v.clone()),
                        other => Err(Status::internal(format!("table key {other:?} is not a {dtype}"))),
                    })
                    .collect::<Result<Vec<$T>, Status>>()?,
            )
        };
    }
    Ok(match dtype {
        DataType::Int32 => collect!(I32, i32),
        DataType::Int64 => collect!(I64, i64),
        DataType::String => collect!(Str, Vec<u8>),
        d => return Err(Status::invalid_argument(format!("table keys must be int32, int64 or string, got {d}"))),
    })
}

/// What kind of table.
#[derive(Clone, Debug, PartialEq)]
pub enum TableKind {
    /// `HashTable`: initialized once, then read-only.
    Static,
    /// `MutableHashTable` / `MutableHashTableOfTensors`.
    Mutable,
    /// `MutableDenseHashTable`.
    Dense {
        /// The key marking empty buckets.
        empty: TableKey,
        /// The key marking deleted buckets.
        deleted: TableKey,
    },
}

#[derive(Default)]
struct State {
    initialized: bool,
    map: HashMap<TableKey, Tensor>,
}

/// One lookup table.
pub struct LookupTable {
    /// Kind of table.
    pub kind: TableKind,
    /// Key dtype.
    pub key_dtype: DataType,
    /// Value dtype.
    pub value_dtype: DataType,
    /// Shape of each value (empty for scalars).
    pub value_shape: Vec<usize>,
    state: Mutex<State>,
}

fn shape_text(d: &[usize]) -> String {
    Shape::new(d.to_vec()).to_string()
}

/// The value rows of `values` (shape `[n] + row_shape`) as `n` tensors of `row_shape`.
fn rows(values: &Tensor, n: usize, row_shape: &[usize]) -> Result<Vec<Tensor>, Status> {
    let row: usize = row_shape.iter().product();
    ferroflow_core::with_dtype!(values.dtype(), T => {
        let data = values.as_slice::<T>()?;
        (0..n)
            .map(|i| {
                let part = data.get(i * row..(i + 1) * row).ok_or_else(|| Status::internal("value row out of range"))?;
                Tensor::new(row_shape.to_vec(), part.to_vec())
            })
            .collect::<Result<Vec<_>, Status>>()
    })
}

/// The first element of a value as text (TensorFlow's messages about duplicate keys).
fn value_text(t: &Tensor) -> String {
    if let Ok(s) = t.as_slice::<Vec<u8>>() {
        return s.first().map(|v| String::from_utf8_lossy(v).into_owned()).unwrap_or_default();
    }
    match t.to_f64_vec() {
        Ok(v) => v.first().map(|x| x.to_string()).unwrap_or_default(),
        Err(_) => format!("{t:?}"),
    }
}

fn same_value(a: &Tensor, b: &Tensor) -> bool {
    a.shape() == b.shape() && a.storage() == b.storage()
}

impl LookupTable {
    /// A new empty table.
    pub fn new(kind: TableKind, key_dtype: DataType, value_dtype: DataType, value_shape: Vec<usize>) -> LookupTable {
        LookupTable { kind, key_dtype, value_dtype, value_shape, state: Mutex::new(State::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// TensorFlow's signature check: the op's key and value dtypes must be the table's.
    pub fn check_signature(&self, keys: DataType, values: DataType, has_output: bool) -> Result<(), Status> {
        if keys == self.key_dtype && values == self.value_dtype {
            return Ok(());
        }
        let out = |v: DataType| if has_output { tf_type_name(v) } else { "" };
        Err(Status::invalid_argument(format!(
            "Signature mismatch, have: resource, {}, {}->{} expected: resource, {}, {}->{}",
            tf_type_name(keys),
            tf_type_name(values),
            out(values),
            tf_type_name(self.key_dtype),
            tf_type_name(self.value_dtype),
            out(self.value_dtype)
        )))
    }

    fn check_special(&self, keys: &[TableKey]) -> Result<(), Status> {
        if let TableKind::Dense { empty, deleted } = &self.kind {
            for k in keys {
                if k == empty {
                    return Err(Status::invalid_argument("Using the empty_key as a table key is not allowed"));
                }
                if k == deleted {
                    return Err(Status::invalid_argument("Using the deleted_key as a table key is not allowed"));
                }
            }
        }
        Ok(())
    }

    /// Number of entries.
    pub fn size(&self) -> usize {
        self.lock().map.len()
    }

    /// Looks up `keys`; missing keys get `default` (one value, or one per key).
    pub fn find(&self, keys: &Tensor, default: &Tensor) -> Result<Tensor, Status> {
        let st = self.lock();
        if self.kind == TableKind::Static && !st.initialized {
            return Err(Status::failed_precondition("Table not initialized."));
        }
        let ks = keys_of(keys)?;
        self.check_special(&ks)?;
        let mut out_dims = keys.dims().to_vec();
        out_dims.extend_from_slice(&self.value_shape);
        let per_key = if default.dims() == self.value_shape.as_slice() {
            false
        } else if default.dims() == out_dims.as_slice() {
            true
        } else {
            return Err(Status::invalid_argument(format!(
                "Expected shape {} or {} for default value, got {}",
                shape_text(&self.value_shape),
                shape_text(&out_dims),
                default.shape()
            )));
        };
        check_alloc(&out_dims, self.value_dtype)?;
        let row: usize = self.value_shape.iter().product();
        ferroflow_core::with_dtype!(self.value_dtype, T => {
            let d = default.as_slice::<T>()?;
            let mut out: Vec<T> = ferroflow_core::alloc::with_capacity(&out_dims)?;
            for (i, k) in ks.iter().enumerate() {
                match st.map.get(k) {
                    Some(v) => out.extend_from_slice(v.as_slice::<T>()?),
                    None if per_key => out.extend_from_slice(&d[i * row..(i + 1) * row]),
                    None => out.extend_from_slice(d),
                }
            }
            Tensor::new(out_dims, out)
        })
    }

    /// The (key, value) pairs `keys`/`values` describe, checking shapes.
    fn pairs(&self, keys: &Tensor, values: &Tensor) -> Result<Vec<(TableKey, Tensor)>, Status> {
        let ks = keys_of(keys)?;
        let mut want = keys.dims().to_vec();
        want.extend_from_slice(&self.value_shape);
        if values.dims() != want.as_slice() {
            return Err(Status::invalid_argument(format!(
                "Expected shape {} for value, got {}",
                shape_text(&want),
                values.shape()
            )));
        }
        let vs = rows(values, ks.len(), &self.value_shape)?;
        Ok(ks.into_iter().zip(vs).collect())
    }

    /// Inserts or replaces entries (mutable tables).
    pub fn insert(&self, keys: &Tensor, values: &Tensor) -> Result<(), Status> {
        if self.kind == TableKind::Static {
            return Err(Status::unimplemented("Insert not supported by InitializableLookupTable implementations"));
        }
        let pairs = self.pairs(keys, values)?;
        let ks: Vec<TableKey> = pairs.iter().map(|p| p.0.clone()).collect();
        self.check_special(&ks)?;
        let mut st = self.lock();
        st.map.extend(pairs);
        Ok(())
    }

    /// Removes entries (mutable tables); absent keys are ignored.
    pub fn remove(&self, keys: &Tensor) -> Result<(), Status> {
        if self.kind == TableKind::Static {
            return Err(Status::unimplemented("Remove not supported by InitializableLookupTable implementations"));
        }
        let ks = keys_of(keys)?;
        self.check_special(&ks)?;
        let mut st = self.lock();
        for k in &ks {
            st.map.remove(k);
        }
        Ok(())
    }

    /// Fills a static table once (see [`LookupTable::initialize_pairs`]).
    pub fn initialize(&self, keys: &Tensor, values: &Tensor) -> Result<(), Status> {
        if self.kind != TableKind::Static {
            return Err(Status::invalid_argument(
                "Table initializers only apply to HashTable (an initializable table)",
            ));
        }
        if keys.num_elements() != values.num_elements() {
            return Err(Status::invalid_argument(format!(
                "Keys and values must have the same size {} vs {}",
                keys.num_elements(),
                values.num_elements()
            )));
        }
        let ks = keys_of(keys)?;
        let vs = rows(values, ks.len(), &[])?;
        self.initialize_pairs(ks.into_iter().zip(vs).collect())
    }

    /// Fills a static table from (key, value) pairs (see [`LookupTable::initialize`]). As in
    /// TensorFlow, an initialized table takes a second initialization of as many entries
    /// as it holds as a repeat (keeping its data); any other count is FailedPrecondition.
    pub fn initialize_pairs(&self, pairs: Vec<(TableKey, Tensor)>) -> Result<(), Status> {
        let total = pairs.len();
        let mut st = self.lock();
        if st.initialized {
            return if total == st.map.len() {
                Ok(())
            } else {
                Err(Status::failed_precondition("Table was already initialized with different data."))
            };
        }
        let mut map: HashMap<TableKey, Tensor> = HashMap::new();
        for (k, v) in pairs {
            if let Some(old) = map.get(&k) {
                if !same_value(old, &v) {
                    return Err(Status::failed_precondition(format!(
                        "HashTable has different value for same key. Key {k} has {} and trying to add value {}",
                        value_text(old),
                        value_text(&v)
                    )));
                }
                continue;
            }
            map.insert(k, v);
        }
        st.map = map;
        st.initialized = true;
        Ok(())
    }

    /// Replaces the whole content (`LookupTableImportV2`).
    /// A static table is initialized by it (TensorFlow's `KeyValueTensorInitializer`
    /// imports), with the rules of [`LookupTable::initialize_pairs`].
    pub fn import(&self, keys: &Tensor, values: &Tensor) -> Result<(), Status> {
        if self.kind == TableKind::Static {
            return self.initialize(keys, values);
        }
        let pairs = self.pairs(keys, values)?;
        let ks: Vec<TableKey> = pairs.iter().map(|p| p.0.clone()).collect();
        self.check_special(&ks)?;
        let mut st = self.lock();
        st.map = pairs.into_iter().collect();
        st.initialized = true;
        Ok(())
    }

    /// Every entry as (keys `[n]`, values `[n] + value_shape`), sorted by key.
    pub fn export(&self) -> Result<(Tensor, Tensor), Status> {
        let st = self.lock();
        let mut entries: Vec<(&TableKey, &Tensor)> = st.map.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let keys: Vec<TableKey> = entries.iter().map(|e| e.0.clone()).collect();
        let mut dims = vec![entries.len()];
        dims.extend_from_slice(&self.value_shape);
        let values = ferroflow_core::with_dtype!(self.value_dtype, T => {
            let mut out: Vec<T> = Vec::new();
            for (_, v) in &entries {
                out.extend_from_slice(v.as_slice::<T>()?);
            }
            Tensor::new(dims, out)
        })?;
        Ok((keys_tensor(self.key_dtype, &keys)?, values))
    }
}
