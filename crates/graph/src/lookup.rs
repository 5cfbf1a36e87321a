//! Builders for TensorFlow's lookup tables (the `V2` ops): a static [`HashTable`] filled
//! once by an initializer (from tensors or a text file) and a [`MutableHashTable`]
//! (optionally dense, TensorFlow's `DenseHashTable`). Initializers are collected by
//! [`tables_initializer`], like `tf.compat.v1.tables_initializer()`.
//!
//! ```ignore
//! let t = HashTable::new(&s, DataType::String, DataType::Int64, "vocab");
//! let init = t.init_from_tensors(&s, ops::constant(&s, keys), ops::constant(&s, ids));
//! let ids = t.find(&s, words, ops::constant(&s, -1i64));
//! sess.run(&[], &[], &[init])?;   // then fetch `ids`
//! ```

use ferroflow_core::{attr, DataType};

use crate::ops;
use crate::scope::{Operation, Output, Scope};

/// How a text file fills a table: columns split by `delimiter`, or
/// [`TextFileIndex::WHOLE_LINE`] / [`TextFileIndex::LINE_NUMBER`].
#[derive(Clone, Debug)]
pub struct TextFileInit {
    /// Column of the key (or a [`TextFileIndex`] value).
    pub key_index: i64,
    /// Column of the value (or a [`TextFileIndex`] value).
    pub value_index: i64,
    /// Lines to read (-1: all).
    pub vocab_size: i64,
    /// Column delimiter.
    pub delimiter: String,
    /// Added to line numbers used as keys or values.
    pub offset: i64,
}

/// TensorFlow's special column indices.
pub struct TextFileIndex;

impl TextFileIndex {
    /// The whole line.
    pub const WHOLE_LINE: i64 = -2;
    /// The line number (from 0, plus `offset`).
    pub const LINE_NUMBER: i64 = -1;
}

impl Default for TextFileInit {
    fn default() -> Self {
        TextFileInit { key_index: 0, value_index: 1, vocab_size: -1, delimiter: "\t".into(), offset: 0 }
    }
}

fn find(s: &Scope, handle: &Output, keys: Output, default: Output) -> Output {
    s.op("LookupTableFindV2")
        .input(handle.clone())
        .input(keys.clone())
        .input(default.clone())
        .attr("Tin", attr::ty(keys.dtype))
        .attr("Tout", attr::ty(default.dtype))
        .build()
        .output(0)
}

fn size(s: &Scope, handle: &Output) -> Output {
    s.op("LookupTableSizeV2").input(handle.clone()).build().output(0)
}

fn export(s: &Scope, handle: &Output, k: DataType, v: DataType) -> (Output, Output) {
    let op = s
        .op("LookupTableExportV2")
        .input(handle.clone())
        .attr("Tkeys", attr::ty(k))
        .attr("Tvalues", attr::ty(v))
        .build();
    (op.output(0), op.output(1))
}

fn keys_values(s: &Scope, op: &str, handle: &Output, keys: Output, values: Output) -> Operation {
    s.op(op)
        .input(handle.clone())
        .input(keys.clone())
        .input(values.clone())
        .attr("Tin", attr::ty(keys.dtype))
        .attr("Tout", attr::ty(values.dtype))
        .build()
}

/// A static hash table (`HashTableV2`).
#[derive(Clone, Debug)]
pub struct HashTable {
    /// The table's resource handle.
    pub handle: Output,
    /// Key dtype.
    pub key_dtype: DataType,
    /// Value dtype.
    pub value_dtype: DataType,
}

impl HashTable {
    /// A table shared by `shared_name` (the node's name when empty).
    pub fn new(s: &Scope, key_dtype: DataType, value_dtype: DataType, shared_name: &str) -> HashTable {
        let handle = s
            .op("HashTableV2")
            .attr("key_dtype", attr::ty(key_dtype))
            .attr("value_dtype", attr::ty(value_dtype))
            .attr("shared_name", attr::string(shared_name))
            .attr("use_node_name_sharing", attr::bool(true))
            .build()
            .output(0);
        HashTable { handle, key_dtype, value_dtype }
    }

    /// `InitializeTableV2` from a keys and a values tensor (same number of elements).
    pub fn init_from_tensors(&self, s: &Scope, keys: Output, values: Output) -> Operation {
        s.op("InitializeTableV2")
            .input(self.handle.clone())
            .input(keys.clone())
            .input(values.clone())
            .attr("Tkey", attr::ty(keys.dtype))
            .attr("Tval", attr::ty(values.dtype))
            .build()
    }

    /// `InitializeTableFromTextFileV2` from the file named by `filename` (a string scalar).
    pub fn init_from_text_file(&self, s: &Scope, filename: Output, o: &TextFileInit) -> Operation {
        s.op("InitializeTableFromTextFileV2")
            .input(self.handle.clone())
            .input(filename)
            .attr("key_index", attr::int(o.key_index))
            .attr("value_index", attr::int(o.value_index))
            .attr("vocab_size", attr::int(o.vocab_size))
            .attr("delimiter", attr::string(&o.delimiter))
            .attr("offset", attr::int(o.offset))
            .build()
    }

    /// The values of `keys`, `default` where absent.
    pub fn find(&self, s: &Scope, keys: Output, default: Output) -> Output {
        find(s, &self.handle, keys, default)
    }

    /// Number of entries (int64).
    pub fn size(&self, s: &Scope) -> Output {
        size(s, &self.handle)
    }

    /// Every (key, value).
    pub fn export(&self, s: &Scope) -> (Output, Output) {
        export(s, &self.handle, self.key_dtype, self.value_dtype)
    }
}

/// A mutable hash table (`MutableHashTableV2`, `MutableHashTableOfTensorsV2` or
/// `MutableDenseHashTableV2`).
#[derive(Clone, Debug)]
pub struct MutableHashTable {
    /// The table's resource handle.
    pub handle: Output,
    /// Key dtype.
    pub key_dtype: DataType,
    /// Value dtype.
    pub value_dtype: DataType,
}

impl MutableHashTable {
    /// A table of scalar values, or of tensors of `value_shape`.
    pub fn new(
        s: &Scope,
        key_dtype: DataType,
        value_dtype: DataType,
        value_shape: Option<&[i64]>,
        shared_name: &str,
    ) -> MutableHashTable {
        let b = match value_shape {
            Some(shape) => s.op("MutableHashTableOfTensorsV2").attr("value_shape", attr::shape(Some(shape))),
            None => s.op("MutableHashTableV2"),
        };
        let handle = b
            .attr("key_dtype", attr::ty(key_dtype))
            .attr("value_dtype", attr::ty(value_dtype))
            .attr("shared_name", attr::string(shared_name))
            .attr("use_node_name_sharing", attr::bool(true))
            .build()
            .output(0);
        MutableHashTable { handle, key_dtype, value_dtype }
    }

    /// A dense table (`MutableDenseHashTableV2`): `empty_key` and `deleted_key` (scalars of
    /// the key dtype, different) may not be used as keys.
    pub fn dense(
        s: &Scope,
        empty_key: Output,
        deleted_key: Output,
        value_dtype: DataType,
        shared_name: &str,
    ) -> MutableHashTable {
        let key_dtype = empty_key.dtype;
        let handle = s
            .op("MutableDenseHashTableV2")
            .input(empty_key)
            .input(deleted_key)
            .attr("key_dtype", attr::ty(key_dtype))
            .attr("value_dtype", attr::ty(value_dtype))
            .attr("shared_name", attr::string(shared_name))
            .attr("use_node_name_sharing", attr::bool(true))
            .build()
            .output(0);
        MutableHashTable { handle, key_dtype, value_dtype }
    }

    /// Inserts or replaces entries.
    pub fn insert(&self, s: &Scope, keys: Output, values: Output) -> Operation {
        keys_values(s, "LookupTableInsertV2", &self.handle, keys, values)
    }

    /// Replaces the whole content.
    pub fn import(&self, s: &Scope, keys: Output, values: Output) -> Operation {
        keys_values(s, "LookupTableImportV2", &self.handle, keys, values)
    }

    /// Removes entries (absent keys are ignored).
    pub fn remove(&self, s: &Scope, keys: Output) -> Operation {
        s.op("LookupTableRemoveV2")
            .input(self.handle.clone())
            .input(keys.clone())
            .attr("Tin", attr::ty(keys.dtype))
            .build()
    }

    /// The values of `keys`, `default` where absent (one value, or one per key).
    pub fn find(&self, s: &Scope, keys: Output, default: Output) -> Output {
        find(s, &self.handle, keys, default)
    }

    /// Number of entries (int64).
    pub fn size(&self, s: &Scope) -> Output {
        size(s, &self.handle)
    }

    /// Every (key, value), sorted by key.
    pub fn export(&self, s: &Scope) -> (Output, Output) {
        export(s, &self.handle, self.key_dtype, self.value_dtype)
    }
}

/// One op running every given table initializer (`tf.compat.v1.tables_initializer`).
pub fn tables_initializer(s: &Scope, inits: &[Operation]) -> Operation {
    let refs: Vec<&Operation> = inits.iter().collect();
    ops::group_named(s, "init_all_tables", &refs)
}
