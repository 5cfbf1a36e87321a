use ferroflow_core::proto::{event, summary, Event, Message};
use ferroflow_core::{Code, Tensor};
use ferroflow_graph::{ops, Scope};
use ferroflow_kernels::testutil::temp_dir;
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

use super::*;

#[test]
fn summaries_reach_the_event_file() {
    let dir = temp_dir("events");
    let s = Scope::new_root();
    let x = ops::placeholder_named(&s, "x", ferroflow_core::DataType::Float, Some(&[]));
    scalar(&s, "loss", x.clone());
    histogram(&s, "weights", ops::constant(&s, vec![1.0f32, 2.0, 2.0, -3.0]));
    let merged = merge_all(&s).unwrap();
    let sess = DirectSession::new(s.graph());
    let mut w = FileWriter::new(&dir).unwrap();
    assert!(w.path().file_name().unwrap().to_string_lossy().starts_with("events.out.tfevents."));
    w.add_graph(&s.graph().to_graph_def()).unwrap();
    for step in 0..3 {
        let out = sess.run(&[(&x, Tensor::scalar(step as f32 * 0.5))], &[&merged], &[]).unwrap();
        w.add_summary(&out[0].scalar_value::<Vec<u8>>().unwrap(), step).unwrap();
    }
    assert_eq!(w.add_summary(b"\xff\xff", 9).unwrap_err().code, Code::InvalidArgument);
    w.close().unwrap();
    assert_eq!(w.add_scalar("x", 1.0, 1).unwrap_err().code, Code::FailedPrecondition);

    let bytes = std::fs::read(w.path()).unwrap();
    let events: Vec<Event> =
        read_records(&bytes, "events").unwrap().iter().map(|r| Event::decode(r.as_slice()).unwrap()).collect();
    assert_eq!(events.len(), 5);
    assert_eq!(events[0].what, Some(event::What::FileVersion(FILE_VERSION.into())));
    assert!(matches!(&events[1].what, Some(event::What::GraphDef(g)) if !g.is_empty()));
    for (step, e) in events[2..].iter().enumerate() {
        assert_eq!(e.step, step as i64);
        let Some(event::What::Summary(sm)) = &e.what else { panic!("not a summary") };
        assert_eq!(sm.value[0].tag, "loss");
        assert_eq!(sm.value[0].value, Some(summary::value::Value::SimpleValue(step as f32 * 0.5)));
        let Some(summary::value::Value::Histo(h)) = &sm.value[1].value else { panic!("no histogram") };
        assert_eq!((h.num, h.min, h.max), (4.0, -3.0, 2.0));
    }
    assert!(merge_all(&Scope::new_root()).is_none());
    std::fs::remove_dir_all(dir).unwrap();
}
