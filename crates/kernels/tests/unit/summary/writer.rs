//! TensorFlow 2's summary-writer kernels driven directly: events written, then read back
//! from the event file with ferroflow's own record reader; look-up-or-create, queueing and
//! flush, close, and TensorFlow's error codes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferroflow_core::proto::{event, summary, Event, GraphDef, Message, NodeDef, Summary, SummaryMetadata};
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::io::tfrecord::read_records;
use ferroflow_kernels::summary::FILE_VERSION;
use ferroflow_kernels::testutil::{expect_error, node, run_kernel_values, temp_dir};
use ferroflow_kernels::{ResourceMgr, Value};

/// One task's resource manager and a writer handle in it.
struct W {
    rm: Arc<ResourceMgr>,
    handle: Tensor,
}

fn s(x: &str) -> Tensor {
    Tensor::scalar(x.as_bytes().to_vec())
}

impl W {
    fn new(shared_name: &str) -> W {
        let rm = Arc::new(ResourceMgr::new());
        let n = node("SummaryWriter", &[("shared_name", attr::string(shared_name)), ("container", attr::string(""))]);
        let out = run_kernel_values(n, vec![], 1, rm.clone()).unwrap();
        W { rm, handle: out[0].tensor().unwrap() }
    }

    /// Runs `n` on the handle followed by `inputs`.
    fn run(&self, n: NodeDef, inputs: Vec<Tensor>) -> Result<(), Status> {
        let values = std::iter::once(self.handle.clone()).chain(inputs).map(Value::Tensor).collect();
        run_kernel_values(n, values, 0, self.rm.clone()).map(|_| ())
    }

    fn create(&self, logdir: &Path, max_queue: i32, suffix: &str) -> Result<(), Status> {
        let dir = s(&logdir.to_string_lossy());
        let inputs = vec![dir, Tensor::scalar(max_queue), Tensor::scalar(1_000_000i32), s(suffix)];
        self.run(node("CreateSummaryFileWriter", &[]), inputs)
    }

    fn scalar(&self, step: i64, tag: &str, v: f64) -> Result<(), Status> {
        let n = node("WriteScalarSummary", &[("T", attr::ty(DataType::Double))]);
        self.run(n, vec![Tensor::scalar(step), s(tag), Tensor::scalar(v)])
    }

    fn op(&self, op: &str) -> Result<(), Status> {
        self.run(node(op, &[]), vec![])
    }
}

/// The one event file in `dir`.
fn event_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn events(path: &Path) -> Vec<Event> {
    let bytes = std::fs::read(path).unwrap();
    let records = read_records(&bytes, "events").unwrap();
    records.iter().map(|r| Event::decode(r.as_slice()).unwrap()).collect()
}

/// The one value of a summary event.
fn value(e: &Event) -> &summary::Value {
    let Some(event::What::Summary(s)) = &e.what else { panic!("not a summary: {e:?}") };
    assert_eq!(s.value.len(), 1);
    &s.value[0]
}

#[test]
fn every_write_op_reaches_the_event_file_on_flush() {
    let dir = temp_dir("summary-writer").join("logs");
    let w = W::new("writer");
    w.create(&dir, 100, "v2").unwrap();
    let path = event_file(&dir);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("events.out.tfevents."), "{name}");
    assert!(name.contains(&format!(".{}.", std::process::id())) && name.ends_with(".v2"), "{name}");

    w.scalar(3, "loss", 2.5).unwrap();
    let histo = node("WriteHistogramSummary", &[("T", attr::ty(DataType::Float))]);
    w.run(histo, vec![Tensor::scalar(4i64), s("h"), Tensor::vec(vec![1.0f32, 2.0, 2.0, -3.0])]).unwrap();
    let meta = SummaryMetadata {
        plugin_data: Some(ferroflow_core::proto::summary_metadata::PluginData {
            plugin_name: "scalars".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let tensor = node("WriteSummary", &[("T", attr::ty(DataType::Float))]);
    w.run(tensor, vec![Tensor::scalar(5i64), Tensor::scalar(0.5f32), s("t"), Tensor::scalar(meta.encode_to_vec())])
        .unwrap();
    let text = node("WriteSummary", &[("T", attr::ty(DataType::String))]);
    w.run(text, vec![Tensor::scalar(6i64), Tensor::vec(vec![b"a".to_vec(), b"b".to_vec()]), s("txt"), s("")]).unwrap();
    let image = node("WriteImageSummary", &[("T", attr::ty(DataType::UInt8)), ("max_images", attr::int(3))]);
    let pixels = Tensor::new(vec![1, 2, 2, 1], vec![0u8, 64, 128, 255]).unwrap();
    w.run(image, vec![Tensor::scalar(7i64), s("img"), pixels, Tensor::vec(vec![255u8, 0, 0, 255])]).unwrap();
    let audio = node("WriteAudioSummary", &[("max_outputs", attr::int(1))]);
    let clip = Tensor::new(vec![1, 4], vec![0.0f32, 0.5, -0.5, 1.0]).unwrap();
    w.run(audio, vec![Tensor::scalar(8i64), s("snd"), clip, Tensor::scalar(8000.0f32)]).unwrap();
    let raw = |tag: &str| {
        let v = summary::Value {
            tag: tag.into(),
            value: Some(summary::value::Value::SimpleValue(1.0)),
            ..Default::default()
        };
        Summary { value: vec![v] }.encode_to_vec()
    };
    w.run(node("WriteRawProtoSummary", &[]), vec![Tensor::scalar(9i64), Tensor::vec(vec![raw("r0"), raw("r1")])])
        .unwrap();
    let graph = GraphDef { node: vec![Default::default()], ..Default::default() }.encode_to_vec();
    w.run(node("WriteGraphSummary", &[]), vec![Tensor::scalar(10i64), Tensor::scalar(graph.clone())]).unwrap();
    let imported = Event {
        wall_time: 1.5,
        step: 11,
        what: Some(event::What::FileVersion("imported".into())),
        source_metadata: None,
    };
    w.run(node("ImportEvent", &[]), vec![Tensor::scalar(imported.encode_to_vec())]).unwrap();

    // Under max_queue and flush_millis nothing but the file version is on disk yet.
    assert_eq!(events(&path).len(), 1);
    w.op("FlushSummaryWriter").unwrap();
    let ev = events(&path);
    assert_eq!(ev.len(), 11);
    assert_eq!(ev[0].what, Some(event::What::FileVersion(FILE_VERSION.into())));
    let writer = ev[0].source_metadata.as_ref().map(|m| m.writer.as_str());
    assert_eq!(writer, Some("tensorflow.core.util.events_writer"));
    assert!(ev[1..].iter().all(|e| e.source_metadata.is_none()));
    let steps: Vec<i64> = ev[1..].iter().map(|e| e.step).collect();
    assert_eq!(steps, [3, 4, 5, 6, 7, 8, 9, 9, 10, 11]);
    assert_eq!(value(&ev[1]).tag, "loss");
    assert_eq!(value(&ev[1]).value, Some(summary::value::Value::SimpleValue(2.5)));
    let Some(summary::value::Value::Histo(h)) = &value(&ev[2]).value else { panic!("no histogram") };
    assert_eq!((h.num, h.min, h.max, h.sum, h.sum_squares), (4.0, -3.0, 2.0, 2.0, 18.0));
    let t = value(&ev[3]);
    assert_eq!(t.metadata.as_ref(), Some(&meta));
    let Some(summary::value::Value::Tensor(tp)) = &t.value else { panic!("no tensor") };
    assert_eq!(Tensor::from_proto(tp).unwrap().scalar_value::<f32>().unwrap(), 0.5);
    let txt = value(&ev[4]);
    assert!(txt.metadata.is_none(), "empty metadata is left out, as TensorFlow does");
    let Some(summary::value::Value::Tensor(tp)) = &txt.value else { panic!("no tensor") };
    assert_eq!(tp.string_val, vec![b"a".to_vec(), b"b".to_vec()]);
    let Some(summary::value::Value::Image(img)) = &value(&ev[5]).value else { panic!("no image") };
    assert_eq!((value(&ev[5]).tag.as_str(), img.height, img.width, img.colorspace), ("img/image/0", 2, 2, 1));
    assert!(img.encoded_image_string.starts_with(b"\x89PNG"));
    let Some(summary::value::Value::Audio(a)) = &value(&ev[6]).value else { panic!("no audio") };
    assert_eq!((value(&ev[6]).tag.as_str(), a.length_frames, a.sample_rate), ("snd/audio", 4, 8000.0));
    assert_eq!((value(&ev[7]).tag.as_str(), value(&ev[8]).tag.as_str()), ("r0", "r1"));
    assert_eq!(ev[9].what, Some(event::What::GraphDef(graph)));
    assert_eq!(ev[10], imported);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn create_is_once_close_deletes_and_max_queue_flushes() {
    let root = temp_dir("summary-writer-life");
    let w = W::new("w");
    // Writing before the writer is created: NOT_FOUND naming it, as TensorFlow.
    expect_error(w.scalar(0, "x", 1.0), Code::NotFound, "summary writer 'localhost/w' is not initialized");
    w.create(&root.join("a"), 0, "").unwrap();
    // Again, even with another logdir: the live writer stays (TensorFlow's look-up-or-create).
    w.create(&root.join("b"), 0, "").unwrap();
    assert!(!root.join("b").exists());
    let path = event_file(&root.join("a"));
    assert!(path.to_string_lossy().ends_with('.'), "an empty suffix still gets TensorFlow's '.'");
    // max_queue 0: every write is flushed at once.
    w.scalar(1, "x", 1.0).unwrap();
    assert_eq!(events(&path).len(), 2);
    w.op("CloseSummaryWriter").unwrap();
    expect_error(w.scalar(2, "x", 1.0), Code::NotFound, "not initialized");
    expect_error(w.op("FlushSummaryWriter"), Code::NotFound, "not initialized");
    // Created again after a close: a new file.
    w.create(&root.join("b"), 10, ".x").unwrap();
    w.scalar(3, "x", 3.0).unwrap();
    w.op("CloseSummaryWriter").unwrap();
    let b = events(&event_file(&root.join("b")));
    assert_eq!(b.iter().map(|e| e.step).collect::<Vec<_>>(), [0, 3]);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn errors_as_tensorflow() {
    let root = temp_dir("summary-writer-errors");
    let file = root.join("afile");
    std::fs::write(&file, b"x").unwrap();
    let w = W::new("e");
    expect_error(w.create(&file, 10, ""), Code::FailedPrecondition, "is not a directory");
    expect_error(w.create(&file.join("sub"), 10, ""), Code::FailedPrecondition, "create log directory");
    let db = node("CreateSummaryDbWriter", &[]);
    expect_error(w.run(db, vec![s("sqlite:x"), s("e"), s("r"), s("u")]), Code::Unimplemented, "SQLite");
    w.create(&root.join("ok"), 10, "").unwrap();
    let raw = w.run(node("WriteRawProtoSummary", &[]), vec![Tensor::scalar(1i64), Tensor::vec(vec![vec![0xffu8]])]);
    expect_error(raw, Code::DataLoss, "at index 0");
    let histo = node("WriteHistogramSummary", &[("T", attr::ty(DataType::Float))]);
    let nan = w.run(histo, vec![Tensor::scalar(1i64), s("h"), Tensor::vec(vec![f32::NAN])]);
    expect_error(nan, Code::InvalidArgument, "Nan in summary histogram for: h");
    expect_error(
        w.run(node("WriteScalarSummary", &[]), vec![s("x"), s("t"), Tensor::scalar(1.0f32)]),
        Code::InvalidArgument,
        "step",
    );
    w.op("CloseSummaryWriter").unwrap();
    std::fs::remove_dir_all(root).unwrap();
}
