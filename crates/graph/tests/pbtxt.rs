//! GraphDef text and binary formats against files written by TensorFlow 2.21
//! (`tests/fixtures/tf_array_graph.{pbtxt,pb}`, from `tf.io.write_graph`).

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{attr, Code, DataType, Tensor};
use ferroflow_graph::{io, ops, pbtxt, Graph, Scope};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn reads_what_tensorflow_writes() {
    let text = std::fs::read_to_string(fixture("tf_array_graph.pbtxt")).unwrap();
    let from_text = pbtxt::parse_graph_def(&text).unwrap();
    let from_bin = io::read_graph_def(fixture("tf_array_graph.pb")).unwrap();
    assert_eq!(from_text, from_bin);
    assert_eq!(from_text.node.len(), 24);
    let names = from_text.node.iter().find(|n| n.name == "names").unwrap();
    let t = Tensor::from_proto(match &names.attr["value"].value {
        Some(AV::Tensor(t)) => t,
        _ => panic!(),
    })
    .unwrap();
    assert_eq!(t.as_slice::<Vec<u8>>().unwrap()[1], b"b\x00\xff'\"\n".to_vec());
    // Our writer lays the text out exactly as TensorFlow does, except for the fields our
    // proto subset does not have (TensorFlow's `experimental_type` of node `sh`).
    let start = text.find("  experimental_type {").unwrap();
    let end = start + text[start..].find("\n  }\n").unwrap() + 5;
    let known = format!("{}{}", &text[..start], &text[end..]);
    assert_eq!(pbtxt::graph_def_to_pbtxt(&from_text), known);
    // And the graph imports: every op is known and every node validates.
    let g = Graph::from_pbtxt(&text).unwrap();
    assert_eq!(g.num_nodes(), 24);
    assert_eq!(g.shape_of(&g.output_by_name("reshaped:0").unwrap()), Some(vec![-1, 28, 28, 1]));
    assert_eq!(g.shape_of(&g.output_by_name("sl:0").unwrap()), Some(vec![-1, 2, 28]));
    assert_eq!(g.node("t").unwrap().def.device, "/job:ps/task:0");
    let g2 = Graph::read_pb(fixture("tf_array_graph.pb")).unwrap();
    assert_eq!(g2.num_nodes(), 24);
}

fn sample_graph() -> Graph {
    let s = Scope::new_root();
    let x = ops::placeholder_named(&s, "x", DataType::Float, Some(&[-1, 3]));
    let _u = ops::placeholder(&s, DataType::Int64, None);
    let w =
        ops::constant(&s, Tensor::new(vec![2, 3], vec![0.1f32, -2.5, 1e-5, f32::INFINITY, f32::NAN, 3.4e38]).unwrap());
    let _d = ops::constant(&s, vec![0.1f64, 1.0 / 3.0]);
    let _b = ops::constant(&s, vec![true, false]);
    let _st = ops::constant(&s, Tensor::vec(vec![b"\x00\x01\xfe\\\"'".to_vec(), vec![]]));
    let _u8 = ops::constant(&s, vec![0u8, 255]);
    let c = ops::concat(&s, vec![x.clone(), w.clone()], ops::constant(&s, 0i32));
    let ps = s.with_device("/job:ps/task:0");
    let t = ops::transpose(&ps, c, ops::constant(&ps, vec![1i32, 0]));
    let _pg = ops::prevent_gradient(&s, t, "line1\nline2 \u{e9}");
    let _sq = ops::squeeze(&s, w.clone(), &[]);
    let sc = s.with_control_deps(&[&x]);
    let _id = ops::identity_n(&sc, vec![w, x]);
    s.status().unwrap();
    s.graph().clone()
}

#[test]
fn text_round_trip() {
    let g = sample_graph();
    let text = g.to_pbtxt();
    let back = Graph::from_pbtxt(&text).unwrap();
    let (a, b) = (g.to_graph_def(), back.to_graph_def());
    assert_eq!(a.node.len(), b.node.len());
    for (x, y) in a.node.iter().zip(&b.node) {
        // NaN != NaN: compare the re-printed text of each node instead of values.
        assert_eq!(pbtxt::graph_def_to_pbtxt(&single(x)), pbtxt::graph_def_to_pbtxt(&single(y)));
    }
    assert_eq!(back.to_pbtxt(), text);
    assert!(text.contains("device: \"/job:ps/task:0\""));
    assert!(text.contains("input: \"^x\""));
    assert!(text.contains("s: \"line1\\nline2 \\303\\251\""));
}

fn single(n: &ferroflow_core::proto::NodeDef) -> ferroflow_core::proto::GraphDef {
    ferroflow_core::proto::GraphDef { node: vec![n.clone()], ..Default::default() }
}

#[test]
fn binary_round_trip_and_errors() {
    let g = sample_graph();
    let dir = std::env::temp_dir().join(format!("ferroflow-pb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("g.pb");
    g.write_pb(&p).unwrap();
    let back = Graph::read_pb(&p).unwrap();
    assert_eq!(back.to_pbtxt(), g.to_pbtxt());
    let pt = dir.join("g.pbtxt");
    g.write_pbtxt(&pt).unwrap();
    assert_eq!(Graph::read_pbtxt(&pt).unwrap().num_nodes(), g.num_nodes());
    std::fs::write(&p, [0x0a, 0xff, 0xff, 0x01]).unwrap();
    let code = |r: Result<Graph, ferroflow_core::Status>| r.err().map(|e| e.code);
    assert_eq!(code(Graph::read_pb(&p)), Some(Code::InvalidArgument));
    assert_eq!(code(Graph::from_pb_bytes(&[0x0a, 0x05, 0x0a])), Some(Code::InvalidArgument));
    assert_eq!(code(Graph::read_pb(dir.join("missing.pb"))), Some(Code::NotFound));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn text_errors_and_leniency() {
    let e = pbtxt::parse_graph_def("node {\n  name: \"a\"\n  op: 7\n}").unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("3:3") && e.message.contains("'op'"), "{e}");
    assert!(pbtxt::parse_graph_def("node { attr { key: \"T\" value { type: DT_NOPE } } }").is_err());
    assert!(pbtxt::parse_graph_def("node { attr { key: \"T\" value { i: 99999999999999999999999 } } }").is_err());
    assert!(pbtxt::parse_graph_def("versions { producer: 3000000000 }").is_err());
    assert!(pbtxt::parse_graph_def("node { name: \"\\377\" }").is_err());
    // Unknown fields are skipped; `<>`, lists, comments and single quotes are accepted.
    let g = pbtxt::parse_graph_def(
        "# comment\nnode < name: 'a' op: \"Const\" experimental_debug_info { original_node_names: 'z' }\n\
         attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: [1, 0x2] } } }\n\
         attr { key: 'dtype' value: { type: 3 } } >\nversions { producer: 1 min_consumer: 0 }",
    )
    .unwrap();
    assert_eq!(g.node[0].name, "a");
    let gr = Graph::import(&g).unwrap();
    assert_eq!(gr.const_value("a").unwrap().as_slice::<i32>().unwrap(), &[1, 2]);
    let n =
        pbtxt::parse_node_def("name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }").unwrap();
    assert_eq!(n.attr["dtype"], attr::ty(DataType::Float));
}
