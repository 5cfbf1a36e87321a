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

use std::marker::PhantomData;

use ferroflow_core::{attr, DataType};

use crate::ops;
use crate::scope::{OpBuilder, Operation, Output, Scope};

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

/// A lookup table: its resource handle and dtypes. `K` is [`Static`] (TensorFlow's
/// `StaticHashTable`, filled once by an initializer) or [`Mutable`] (its `MutableHashTable`
/// family, changed by insert, import and remove); `find`, `size` and `export` are the
/// same op on either (TensorFlow's `LookupInterface`).
#[derive(Clone, Debug)]
pub struct Table<K> {
    /// The table's resource handle.
    pub handle: Output,
    /// Key dtype.
    pub key_dtype: DataType,
    /// Value dtype.
    pub value_dtype: DataType,
    kind: PhantomData<K>,
}

/// The kind of a table filled once by an initializer.
#[derive(Clone, Copy, Debug)]
pub struct Static;

/// The kind of a table changed by insert, import and remove.
#[derive(Clone, Copy, Debug)]
pub struct Mutable;

/// A static hash table (`HashTableV2`).
pub type HashTable = Table<Static>;

/// A mutable hash table (`MutableHashTableV2`, `MutableHashTableOfTensorsV2` or
/// `MutableDenseHashTableV2`).
pub type MutableHashTable = Table<Mutable>;

impl<K> Table<K> {
    fn with_handle(handle: Output, key_dtype: DataType, value_dtype: DataType) -> Table<K> {
        Table { handle, key_dtype, value_dtype, kind: PhantomData }
    }

    /// The values of `keys`, `default` where absent (a static table: one value; a mutable
    /// one: one value, or one per key).
    pub fn find(&self, s: &Scope, keys: Output, default: Output) -> Output {
        keys_values(s, "LookupTableFindV2", &self.handle, keys, default, ["Tin", "Tout"]).output(0)
    }

    /// Number of entries (int64).
    pub fn size(&self, s: &Scope) -> Output {
        s.op("LookupTableSizeV2").input(self.handle.clone()).build().output(0)
    }

    /// Every (key, value); a mutable table's sorted by key.
    pub fn export(&self, s: &Scope) -> (Output, Output) {
        let op = s
            .op("LookupTableExportV2")
            .input(self.handle.clone())
            .attr("Tkeys", attr::ty(self.key_dtype))
            .attr("Tvalues", attr::ty(self.value_dtype))
            .build();
        (op.output(0), op.output(1))
    }
}

/// A table's handle op with its dtypes, shared by `shared_name` (the node's name when empty).
fn table_handle(b: OpBuilder, key_dtype: DataType, value_dtype: DataType, shared_name: &str) -> Output {
    b.attr("key_dtype", attr::ty(key_dtype))
        .attr("value_dtype", attr::ty(value_dtype))
        .attr("shared_name", attr::string(shared_name))
        .attr("use_node_name_sharing", attr::bool(true))
        .build()
        .output(0)
}

/// `op(handle, keys, values)` with the keys' and the values' dtypes as attrs `types`.
fn keys_values(s: &Scope, op: &str, handle: &Output, keys: Output, values: Output, types: [&str; 2]) -> Operation {
    s.op(op)
        .input(handle.clone())
        .input(keys.clone())
        .input(values.clone())
        .attr(types[0], attr::ty(keys.dtype))
        .attr(types[1], attr::ty(values.dtype))
        .build()
}

impl Table<Static> {
    /// A table shared by `shared_name` (the node's name when empty).
    pub fn new(s: &Scope, key_dtype: DataType, value_dtype: DataType, shared_name: &str) -> HashTable {
        let handle = table_handle(s.op("HashTableV2"), key_dtype, value_dtype, shared_name);
        Table::with_handle(handle, key_dtype, value_dtype)
    }

    /// `InitializeTableV2` from a keys and a values tensor (same number of elements).
    pub fn init_from_tensors(&self, s: &Scope, keys: Output, values: Output) -> Operation {
        keys_values(s, "InitializeTableV2", &self.handle, keys, values, ["Tkey", "Tval"])
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
}

impl Table<Mutable> {
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
        let handle = table_handle(b, key_dtype, value_dtype, shared_name);
        Table::with_handle(handle, key_dtype, value_dtype)
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
        let b = s.op("MutableDenseHashTableV2").input(empty_key).input(deleted_key);
        let handle = table_handle(b, key_dtype, value_dtype, shared_name);
        Table::with_handle(handle, key_dtype, value_dtype)
    }

    /// Inserts or replaces entries.
    pub fn insert(&self, s: &Scope, keys: Output, values: Output) -> Operation {
        keys_values(s, "LookupTableInsertV2", &self.handle, keys, values, ["Tin", "Tout"])
    }

    /// Replaces the whole content.
    pub fn import(&self, s: &Scope, keys: Output, values: Output) -> Operation {
        keys_values(s, "LookupTableImportV2", &self.handle, keys, values, ["Tin", "Tout"])
    }

    /// Removes entries (absent keys are ignored).
    pub fn remove(&self, s: &Scope, keys: Output) -> Operation {
        s.op("LookupTableRemoveV2")
            .input(self.handle.clone())
            .input(keys.clone())
            .attr("Tin", attr::ty(keys.dtype))
            .build()
    }
}

/// One op running every given table initializer (`tf.compat.v1.tables_initializer`).
pub fn tables_initializer(s: &Scope, inits: &[Operation]) -> Operation {
    let refs: Vec<&Operation> = inits.iter().collect();
    ops::group_named(s, "init_all_tables", &refs)
}
