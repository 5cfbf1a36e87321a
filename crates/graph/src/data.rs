//! `tf.data` from Rust: a [`Dataset`] builder over the dataset ops (sources, readers,
//! `map`/`filter`/`flat_map` with functions from [`define_function`], `batch`,
//! `shuffle`, `repeat`, `prefetch`, …) and an [`Iterator`] to read it
//! (`IteratorV2` + `MakeIterator` + `IteratorGetNext`, string handles).
//!
//! [`define_function`]: crate::define_function

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, DataType, Status, Tensor};

use crate::function_def::Function;
use crate::ops::constant;
use crate::scope::{OpBuilder, Operation, Output, Scope};
use crate::shape_fn::Dims;

/// A dataset node's output and its element's component types and shapes.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// The `DT_VARIANT` output of the node.
    pub handle: Output,
    /// Component types.
    pub types: Vec<DataType>,
    /// Component shapes (`None`: unknown rank; `-1`: unknown dimension).
    pub shapes: Vec<Dims>,
}

fn shapes_attr(shapes: &[Dims]) -> AttrValue {
    ferroflow_core::attr::list_shape(shapes.iter().map(|d| d.as_deref()))
}

fn i64c(s: &Scope, v: i64) -> Output {
    constant(s, Tensor::scalar(v))
}

impl Dataset {
    fn node(
        s: &Scope,
        op: &str,
        types: Vec<DataType>,
        shapes: Vec<Dims>,
        build: impl FnOnce(OpBuilder) -> OpBuilder,
    ) -> Result<Dataset, Status> {
        let types_attr = if matches!(op, "TensorDataset" | "TensorSliceDataset" | "PaddedBatchDatasetV2") {
            "Toutput_types"
        } else {
            "output_types"
        };
        let mut b = s.op(op);
        if !matches!(op, "TFRecordDataset" | "TextLineDataset" | "FixedLengthRecordDatasetV2") {
            b = b.attr(types_attr, attr::list_type(&types)).attr("output_shapes", shapes_attr(&shapes));
        }
        let handle = build(b).try_build()?.output(0);
        Ok(Dataset { handle, types, shapes })
    }

    fn unary(
        &self,
        s: &Scope,
        op: &str,
        shapes: Vec<Dims>,
        build: impl FnOnce(OpBuilder) -> OpBuilder,
    ) -> Result<Dataset, Status> {
        let h = self.handle.clone();
        Dataset::node(s, op, self.types.clone(), shapes, |b| build(b.input(h)))
    }

    /// One element: `components`.
    pub fn from_tensors(s: &Scope, components: &[Output]) -> Result<Dataset, Status> {
        let types = components.iter().map(|c| c.dtype).collect();
        let shapes = components.iter().map(|c| s.graph().shape_of(c)).collect();
        Dataset::node(s, "TensorDataset", types, shapes, |b| b.input_list(components.to_vec()))
    }

    /// The rows of `components` (equal first dimensions), one element each.
    pub fn from_tensor_slices(s: &Scope, components: &[Output]) -> Result<Dataset, Status> {
        let types = components.iter().map(|c| c.dtype).collect();
        let shapes =
            components.iter().map(|c| s.graph().shape_of(c).map(|d| d.get(1..).unwrap_or(&[]).to_vec())).collect();
        Dataset::node(s, "TensorSliceDataset", types, shapes, |b| b.input_list(components.to_vec()))
    }

    /// `start, start + step, …` before `stop` (int64 scalars).
    pub fn range(s: &Scope, start: i64, stop: i64, step: i64) -> Result<Dataset, Status> {
        let (a, b_, c) = (i64c(s, start), i64c(s, stop), i64c(s, step));
        Dataset::node(s, "RangeDataset", vec![DataType::Int64], vec![Some(vec![])], |b| b.input(a).input(b_).input(c))
    }

    /// The records of TFRecord files (`compression`: "", "ZLIB" or "GZIP").
    pub fn tfrecord(s: &Scope, filenames: Output, compression: &str) -> Result<Dataset, Status> {
        Dataset::reader(s, "TFRecordDataset", filenames, compression)
    }

    /// The lines of text files.
    pub fn text_lines(s: &Scope, filenames: Output, compression: &str) -> Result<Dataset, Status> {
        Dataset::reader(s, "TextLineDataset", filenames, compression)
    }

    fn reader(s: &Scope, op: &str, filenames: Output, compression: &str) -> Result<Dataset, Status> {
        let c = constant(s, Tensor::scalar(compression.as_bytes().to_vec()));
        let buf = i64c(s, 256 << 10);
        Dataset::node(s, op, vec![DataType::String], vec![Some(vec![])], |b| b.input(filenames).input(c).input(buf))
    }

    /// Fixed-length records of `record_bytes` after `header_bytes`, before `footer_bytes`.
    pub fn fixed_length_records(
        s: &Scope,
        filenames: Output,
        header: i64,
        record: i64,
        footer: i64,
    ) -> Result<Dataset, Status> {
        let ins = [i64c(s, header), i64c(s, record), i64c(s, footer), i64c(s, 256 << 10)];
        let c = constant(s, Tensor::scalar(Vec::<u8>::new()));
        Dataset::node(s, "FixedLengthRecordDatasetV2", vec![DataType::String], vec![Some(vec![])], |b| {
            ins.into_iter().fold(b.input(filenames), |b, i| b.input(i)).input(c)
        })
    }

    /// A stage calling `f`: `op` and the name of its function attr.
    fn with_fn(
        &self,
        s: &Scope,
        (op, fattr): (&str, &str),
        f: &Function,
        captured: &[Output],
        out: (Vec<DataType>, Vec<Dims>),
        extra: Vec<Output>,
    ) -> Result<Dataset, Status> {
        let h = self.handle.clone();
        let tcap: Vec<DataType> = captured.iter().map(|c| c.dtype).collect();
        Dataset::node(s, op, out.0, out.1, |b| {
            let b = b
                .input(h)
                .input_list(captured.to_vec())
                .attr(fattr, f.attr())
                .attr("Targuments", attr::list_type(&tcap));
            extra.into_iter().fold(b, |b, e| b.input(e))
        })
    }

    /// `Dataset.reduce`: every element folded into `initial` by `f` (its arguments: the
    /// state, the element's components, then `captured`; its results: the next state); the
    /// final state's tensors.
    pub fn reduce(
        &self,
        s: &Scope,
        f: &Function,
        initial: &[Output],
        captured: &[Output],
    ) -> Result<Vec<Output>, Status> {
        let tstate: Vec<DataType> = initial.iter().map(|c| c.dtype).collect();
        let tcap: Vec<DataType> = captured.iter().map(|c| c.dtype).collect();
        let op = s
            .op("ReduceDataset")
            .input(self.handle.clone())
            .input_list(initial.to_vec())
            .input_list(captured.to_vec())
            .attr("f", f.attr())
            .attr("Tstate", attr::list_type(&tstate))
            .attr("Targuments", attr::list_type(&tcap))
            .attr("output_types", attr::list_type(&tstate))
            .attr("output_shapes", shapes_attr(&vec![None; tstate.len()]))
            .try_build()?;
        Ok((0..tstate.len()).map(|i| op.output(i)).collect())
    }

    /// Each element through `f` (its arguments: the components, then `captured`).
    pub fn map(&self, s: &Scope, f: &Function, captured: &[Output]) -> Result<Dataset, Status> {
        let shapes = vec![None; f.ret_types.len()];
        self.with_fn(s, ("MapDataset", "f"), f, captured, (f.ret_types.clone(), shapes), vec![])
    }

    /// Like [`Dataset::map`] with up to `parallel` calls at once (results stay in order).
    pub fn parallel_map(&self, s: &Scope, f: &Function, captured: &[Output], parallel: i64) -> Result<Dataset, Status> {
        let shapes = vec![None; f.ret_types.len()];
        let p = i64c(s, parallel);
        self.with_fn(s, ("ParallelMapDatasetV2", "f"), f, captured, (f.ret_types.clone(), shapes), vec![p])
    }

    /// The elements for which `predicate` (returning a bool scalar) is true.
    pub fn filter(&self, s: &Scope, predicate: &Function, captured: &[Output]) -> Result<Dataset, Status> {
        self.with_fn(
            s,
            ("FilterDataset", "predicate"),
            predicate,
            captured,
            (self.types.clone(), self.shapes.clone()),
            vec![],
        )
    }

    /// The elements of the dataset `f` returns for each element, in order; `types` and
    /// `shapes` describe those elements.
    pub fn flat_map(
        &self,
        s: &Scope,
        f: &Function,
        captured: &[Output],
        types: Vec<DataType>,
        shapes: Vec<Dims>,
    ) -> Result<Dataset, Status> {
        self.with_fn(s, ("FlatMapDataset", "f"), f, captured, (types, shapes), vec![])
    }

    /// `Dataset.interleave`: the datasets `f` returns, up to `cycle_length` open at once,
    /// `block_length` elements from each in turn; `types` and `shapes` describe their elements.
    pub fn interleave(
        &self,
        s: &Scope,
        f: &Function,
        captured: &[Output],
        (cycle_length, block_length): (i64, i64),
        (types, shapes): (Vec<DataType>, Vec<Dims>),
    ) -> Result<Dataset, Status> {
        let extra = vec![i64c(s, cycle_length), i64c(s, block_length)];
        self.with_fn(s, ("InterleaveDataset", "f"), f, captured, (types, shapes), extra)
    }

    /// The rows of each element (whose components share their first dimension).
    pub fn unbatch(&self, s: &Scope) -> Result<Dataset, Status> {
        let shapes =
            self.shapes.iter().map(|sh| sh.as_ref().map(|d| d.get(1..).unwrap_or_default().to_vec())).collect();
        self.unary(s, "UnbatchDataset", shapes, |b| b)
    }

    /// `Dataset.window`: each element is a window of `size` elements (every `stride`-th,
    /// windows starting `shift` apart), given as one dataset per component (a `DT_VARIANT`
    /// scalar each, whose elements have that component's type and shape: wrap it in a
    /// [`Dataset`] inside a `flat_map` function to batch it).
    pub fn window(
        &self,
        s: &Scope,
        size: i64,
        shift: i64,
        stride: i64,
        drop_remainder: bool,
    ) -> Result<Dataset, Status> {
        let args = [i64c(s, size), i64c(s, shift), i64c(s, stride), constant(s, Tensor::scalar(drop_remainder))];
        let n = self.types.len();
        let h = self.handle.clone();
        Dataset::node(s, "WindowDataset", vec![DataType::Variant; n], vec![Some(vec![]); n], |b| {
            args.into_iter().fold(b.input(h), |b, a| b.input(a))
        })
    }

    /// The elements of the first complete pass kept in memory for every later pass.
    pub fn cache(&self, s: &Scope) -> Result<Dataset, Status> {
        self.cache_file(s, "")
    }

    /// The elements of the first complete pass, kept in the tensor bundle `filename`
    /// (TensorFlow's cache files; read by every later pass, also in another process) or, with
    /// `""`, in memory.
    pub fn cache_file(&self, s: &Scope, filename: &str) -> Result<Dataset, Status> {
        let filename = constant(s, Tensor::scalar(filename.as_bytes().to_vec()));
        self.unary(s, "CacheDataset", self.shapes.clone(), |b| b.input(filename))
    }

    /// Consecutive elements stacked in batches of `size` (the last smaller unless
    /// `drop_remainder`).
    pub fn batch(&self, s: &Scope, size: i64, drop_remainder: bool) -> Result<Dataset, Status> {
        let (n, d) = (i64c(s, size), constant(s, Tensor::scalar(drop_remainder)));
        let first = if drop_remainder { size } else { -1 };
        let shapes = self.shapes.iter().map(|sh| sh.as_ref().map(|d| [&[first][..], d].concat())).collect();
        self.unary(s, "BatchDatasetV2", shapes, |b| b.input(n).input(d))
    }

    /// Batches whose components are padded to `padded_shapes` (-1: the batch's largest)
    /// with `padding_values` (scalars of the component types).
    pub fn padded_batch(
        &self,
        s: &Scope,
        size: i64,
        padded_shapes: &[Vec<i64>],
        padding_values: &[Output],
        drop_remainder: bool,
    ) -> Result<Dataset, Status> {
        let k = self.types.len();
        if padded_shapes.len() != k || padding_values.len() != k {
            return Err(Status::invalid_argument(format!(
                "padded_batch needs {k} padded shapes and {k} padding values"
            )));
        }
        let n = i64c(s, size);
        let shapes_in: Vec<Output> = padded_shapes.iter().map(|p| constant(s, Tensor::vec(p.clone()))).collect();
        let d = constant(s, Tensor::scalar(drop_remainder));
        let first = if drop_remainder { size } else { -1 };
        let shapes = padded_shapes.iter().map(|p| Some([&[first][..], p].concat())).collect();
        let h = self.handle.clone();
        let vals = padding_values.to_vec();
        Dataset::node(s, "PaddedBatchDatasetV2", self.types.clone(), shapes, |b| {
            b.input(h).input(n).input_list(shapes_in).input_list(vals).input(d).attr("N", attr::int(k as i64))
        })
    }

    /// Elements drawn at random from a buffer of `buffer_size` (TensorFlow's order for the
    /// same seeds; seeds 0, 0: random); each pass reshuffles when `reshuffle`.
    pub fn shuffle(
        &self,
        s: &Scope,
        buffer_size: i64,
        seed: i64,
        seed2: i64,
        reshuffle: bool,
    ) -> Result<Dataset, Status> {
        let ins = [i64c(s, buffer_size), i64c(s, seed), i64c(s, seed2)];
        self.unary(s, "ShuffleDataset", self.shapes.clone(), |b| {
            ins.into_iter().fold(b, |b, i| b.input(i)).attr("reshuffle_each_iteration", attr::bool(reshuffle))
        })
    }

    fn counted(&self, s: &Scope, op: &str, count: i64) -> Result<Dataset, Status> {
        let c = i64c(s, count);
        self.unary(s, op, self.shapes.clone(), |b| b.input(c))
    }

    /// The number of elements as an int64 scalar (-1: infinite, -2: unknown;
    /// `tf.data.Dataset.cardinality()`).
    pub fn cardinality(&self, s: &Scope) -> Result<Output, Status> {
        Ok(s.op("DatasetCardinality").input(self.handle.clone()).try_build()?.output(0))
    }

    /// `count` passes (-1: for ever).
    pub fn repeat(&self, s: &Scope, count: i64) -> Result<Dataset, Status> {
        self.counted(s, "RepeatDataset", count)
    }

    /// The first `count` elements (-1: all).
    pub fn take(&self, s: &Scope, count: i64) -> Result<Dataset, Status> {
        self.counted(s, "TakeDataset", count)
    }

    /// All but the first `count` elements.
    pub fn skip(&self, s: &Scope, count: i64) -> Result<Dataset, Status> {
        self.counted(s, "SkipDataset", count)
    }

    /// Up to `buffer_size` elements produced ahead by a background thread (-1: autotune).
    pub fn prefetch(&self, s: &Scope, buffer_size: i64) -> Result<Dataset, Status> {
        self.counted(s, "PrefetchDataset", buffer_size)
    }

    /// Tuples of the datasets' elements until one ends.
    pub fn zip(s: &Scope, datasets: &[Dataset]) -> Result<Dataset, Status> {
        let types = datasets.iter().flat_map(|d| d.types.clone()).collect();
        let shapes = datasets.iter().flat_map(|d| d.shapes.clone()).collect();
        let hs = datasets.iter().map(|d| d.handle.clone()).collect();
        Dataset::node(s, "ZipDataset", types, shapes, |b| b.input_list(hs).attr("N", attr::int(datasets.len() as i64)))
    }

    /// This dataset's elements, then `other`'s.
    pub fn concatenate(&self, s: &Scope, other: &Dataset) -> Result<Dataset, Status> {
        let o = other.handle.clone();
        self.unary(s, "ConcatenateDataset", self.shapes.clone(), |b| b.input(o))
    }

    /// An iterator over this dataset and its initializer (run it to start a pass).
    pub fn make_initializable_iterator(&self, s: &Scope, shared_name: &str) -> Result<Iterator, Status> {
        let it = Iterator::new(s, self.types.clone(), self.shapes.clone(), shared_name)?;
        let init = it.make_initializer(s, self)?;
        Ok(Iterator { initializer: Some(init), ..it })
    }
}

/// An iterator resource.
#[derive(Clone, Debug)]
pub struct Iterator {
    /// The resource handle.
    pub handle: Output,
    /// Component types and shapes.
    pub types: Vec<DataType>,
    /// Component shapes.
    pub shapes: Vec<Dims>,
    /// `MakeIterator` over the dataset it was made for.
    pub initializer: Option<Operation>,
}

impl Iterator {
    /// An `IteratorV2` (shared by sessions under `shared_name` when not empty).
    pub fn new(s: &Scope, types: Vec<DataType>, shapes: Vec<Dims>, shared_name: &str) -> Result<Iterator, Status> {
        let handle = s
            .op("IteratorV2")
            .attr("shared_name", attr::string(shared_name))
            .attr("container", attr::string(""))
            .attr("output_types", attr::list_type(&types))
            .attr("output_shapes", shapes_attr(&shapes))
            .try_build()?
            .output(0);
        Ok(Iterator { handle, types, shapes, initializer: None })
    }

    /// The iterator named by a string handle (from [`Iterator::string_handle`]).
    pub fn from_string_handle(
        s: &Scope,
        string_handle: Output,
        types: Vec<DataType>,
        shapes: Vec<Dims>,
    ) -> Result<Iterator, Status> {
        let handle = s
            .op("IteratorFromStringHandleV2")
            .input(string_handle)
            .attr("output_types", attr::list_type(&types))
            .attr("output_shapes", shapes_attr(&shapes))
            .try_build()?
            .output(0);
        Ok(Iterator { handle, types, shapes, initializer: None })
    }

    /// `MakeIterator`: starts a pass over `ds`.
    pub fn make_initializer(&self, s: &Scope, ds: &Dataset) -> Result<Operation, Status> {
        s.op("MakeIterator").input(ds.handle.clone()).input(self.handle.clone()).try_build()
    }

    /// The next element's components (OUT_OF_RANGE at the end).
    pub fn get_next(&self, s: &Scope) -> Result<Vec<Output>, Status> {
        let op = s
            .op("IteratorGetNext")
            .input(self.handle.clone())
            .attr("output_types", attr::list_type(&self.types))
            .attr("output_shapes", shapes_attr(&self.shapes))
            .try_build()?;
        Ok(op.outputs())
    }

    /// A string naming this iterator, to feed to [`Iterator::from_string_handle`].
    pub fn string_handle(&self, s: &Scope) -> Result<Output, Status> {
        Ok(s.op("IteratorToStringHandle").input(self.handle.clone()).try_build()?.output(0))
    }
}
