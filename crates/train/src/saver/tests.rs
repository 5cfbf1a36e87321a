use ferroflow_core::{Code, Tensor};
use ferroflow_graph::{
    get_or_create_global_step, global_variables, global_variables_initializer, ops, Scope, Variable,
};
use ferroflow_kernels::io::{BundleReader, BundleWriter};
use ferroflow_kernels::testutil::temp_dir;
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

use super::*;
use crate::optimizer::{Adagrad, Optimizer};

struct Model {
    s: Scope,
    train: ferroflow_graph::Operation,
    init: ferroflow_graph::Operation,
}

/// Two layers' variables, Adagrad slots and a global step; gradients are constants so the
/// updates are deterministic.
fn model(resource: bool) -> Model {
    let s = Scope::new_root();
    let h = s.sub_exact("hidden");
    let mk = |sc: &Scope, name: &str, t: Tensor| {
        let init = ops::constant(sc, t);
        if resource {
            Variable::new(sc, name, init)
        } else {
            Variable::new_ref(sc, name, init)
        }
    };
    let w = mk(&h, "weights", Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap());
    let b = mk(&h, "biases", Tensor::vec(vec![0.5f32, -0.5]));
    let step = get_or_create_global_step(&s);
    let gw = ops::constant(&s, Tensor::new(vec![2, 2], vec![0.1f32, -0.2, 0.3, -0.4]).unwrap());
    let gb = ops::constant(&s, Tensor::vec(vec![1.0f32, 2.0]));
    let train = Adagrad::new(0.5).apply_gradients(&s, &[(gw, w), (gb, b)], Some(&step), "Adagrad").unwrap();
    let init = global_variables_initializer(&s);
    Model { s, train, init }
}

fn values(sess: &DirectSession, s: &Scope) -> Vec<(String, Tensor)> {
    let vars = global_variables(s.graph()).unwrap();
    let outs: Vec<_> = vars.iter().map(|v| v.read()).collect();
    let refs: Vec<_> = outs.iter().collect();
    let got = sess.run(&[], &refs, &[]).unwrap();
    vars.iter().map(|v| v.name().to_string()).zip(got).collect()
}

fn restore_brings_back(resource: bool) {
    let dir = temp_dir(if resource { "saver-res" } else { "saver-ref" });
    let m = model(resource);
    let saver = Saver::new(&m.s).unwrap();
    let mut keys = saver.keys().to_vec();
    keys.sort();
    assert_eq!(
        keys,
        vec!["global_step", "hidden/biases", "hidden/biases/Adagrad", "hidden/weights", "hidden/weights/Adagrad"]
    );
    let sess = DirectSession::new(m.s.graph());
    sess.run(&[], &[], &[&m.init]).unwrap();
    for _ in 0..3 {
        sess.run(&[], &[], &[&m.train]).unwrap();
    }
    let saved = values(&sess, &m.s);
    let prefix = dir.join("model.ckpt").display().to_string();
    let path = saver.save(&sess, &prefix, Some(3)).unwrap();
    assert_eq!(path, format!("{prefix}-3"));
    assert_eq!(latest_checkpoint(&dir).unwrap(), Some(path.clone()));
    // The checkpoint holds exactly the session's values under TensorFlow's key names.
    let r = BundleReader::open(&path).unwrap();
    for (name, t) in &saved {
        assert_eq!(&r.read(name).unwrap(), t, "{name}");
    }
    assert_eq!(r.read("global_step").unwrap(), Tensor::scalar(3i64));
    // Train on: every variable moves.
    sess.run(&[], &[], &[&m.train]).unwrap();
    sess.run(&[], &[], &[&m.train]).unwrap();
    let moved = values(&sess, &m.s);
    for ((n, a), (_, b)) in saved.iter().zip(&moved) {
        assert_ne!(a, b, "{n} did not change");
    }
    saver.restore(&sess, &path).unwrap();
    assert_eq!(values(&sess, &m.s), saved);
    // A fresh session (variables never initialized) restores too.
    let fresh = DirectSession::new(m.s.graph());
    saver.restore(&fresh, &path).unwrap();
    assert_eq!(values(&fresh, &m.s), saved);
    let e = saver.restore(&sess, &dir.join("nope").display().to_string()).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn restore_brings_back_saved_values_resource_variables() {
    restore_brings_back(true);
}

#[test]
fn restore_brings_back_saved_values_ref_variables() {
    restore_brings_back(false);
}

#[test]
fn max_to_keep_deletes_old_checkpoints() {
    let dir = temp_dir("saver-keep");
    let m = model(true);
    let saver = Saver::with_options(&m.s, SaverOptions { max_to_keep: 2, ..Default::default() }).unwrap();
    let sess = DirectSession::new(m.s.graph());
    sess.run(&[], &[], &[&m.init]).unwrap();
    let prefix = dir.join("model.ckpt").display().to_string();
    for step in 1..=4 {
        saver.save(&sess, &prefix, Some(step)).unwrap();
    }
    let mut files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(
        files,
        vec![
            "checkpoint",
            "model.ckpt-3.data-00000-of-00001",
            "model.ckpt-3.index",
            "model.ckpt-4.data-00000-of-00001",
            "model.ckpt-4.index"
        ]
    );
    let st = get_checkpoint_state(&dir).unwrap().unwrap();
    assert_eq!(st.model_checkpoint_path, "model.ckpt-4");
    assert_eq!(st.all_model_checkpoint_paths, vec!["model.ckpt-3", "model.ckpt-4"]);
    assert_eq!(saver.last_checkpoints(), vec![format!("{prefix}-3"), format!("{prefix}-4")]);
    // A new saver (a restarted process) continues the list.
    let saver2 = Saver::with_options(&m.s, SaverOptions { max_to_keep: 2, ..Default::default() }).unwrap();
    saver2.save(&sess, &prefix, Some(5)).unwrap();
    assert!(!dir.join("model.ckpt-3.index").exists());
    assert!(dir.join("model.ckpt-4.index").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn interrupted_save_leaves_previous_latest_checkpoint_valid() {
    let dir = temp_dir("saver-crash");
    let m = model(true);
    let saver = Saver::new(&m.s).unwrap();
    let sess = DirectSession::new(m.s.graph());
    sess.run(&[], &[], &[&m.init]).unwrap();
    sess.run(&[], &[], &[&m.train]).unwrap();
    let saved = values(&sess, &m.s);
    let prefix = dir.join("model.ckpt").display().to_string();
    let first = saver.save(&sess, &prefix, Some(1)).unwrap();
    // A save that fails midway (a variable cannot be read in this fresh session) …
    let broken = DirectSession::new(m.s.graph());
    assert!(saver.save(&broken, &prefix, Some(2)).is_err());
    // … and a writer that died before finishing leave no step-2 checkpoint behind.
    {
        let mut w = BundleWriter::new(&format!("{prefix}-2")).unwrap();
        w.add("hidden/weights", &Tensor::vec(vec![9.0f32])).unwrap();
    }
    std::fs::write(dir.join("model.ckpt-2.index.tempstate1"), b"partial").unwrap();
    assert!(!dir.join("model.ckpt-2.index").exists());
    assert_eq!(latest_checkpoint(&dir).unwrap(), Some(first.clone()));
    sess.run(&[], &[], &[&m.train]).unwrap();
    saver.restore(&sess, &first).unwrap();
    assert_eq!(values(&sess, &m.s), saved);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn save_ops_go_on_the_given_device_and_assigns_stay_with_variables() {
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    let w = Variable::new(&ps, "w", ops::constant(&ps, vec![1.0f32]));
    let v = Variable::new_ref(&ps, "v", ops::constant(&ps, vec![1.0f32]));
    let opts = SaverOptions { var_list: Some(vec![w, v]), device: "/job:worker/task:0".into(), ..Default::default() };
    let saver = Saver::with_options(&s, opts).unwrap();
    let g = s.graph();
    assert_eq!(g.node("save/SaveV2").unwrap().def.device, "/job:worker/task:0");
    assert_eq!(g.node("save/RestoreV2").unwrap().def.device, "/job:worker/task:0");
    assert_eq!(g.node("save/AssignVariableOp").unwrap().def.device, "/job:ps/task:0");
    assert_eq!(g.node("save/Assign").unwrap().def.device, "/job:ps/task:0");
    assert_eq!(saver.save_tensor_name(), "save/control_dependency:0");
    assert_eq!(saver.restore_op_name(), "save/restore_all");
    assert_eq!(saver.filename_tensor_name(), "save/filename:0");
    assert!(Saver::with_options(&Scope::new_root(), SaverOptions::default()).is_err());
}

/// A [5,4] variable whose element (i, j) is 10 i + j, in `parts` parts on axis 0.
fn partitioned(parts: usize, resource: bool, filled: bool) -> (Scope, ferroflow_graph::PartitionedVariable) {
    let s = Scope::new_root();
    let opts = ferroflow_graph::VariableOptions { use_resource: resource, ..Default::default() };
    let w =
        ferroflow_graph::PartitionedVariable::new(&s.sub("emb"), "w", &[5, 4], 0, parts, &opts, |sc, shape, off| {
            let v: Vec<f32> = (0..shape[0])
                .flat_map(|i| (0..4).map(move |j| if filled { (10 * (i + off) + j) as f32 } else { 0.0 }))
                .collect();
            ops::constant(sc, Tensor::new(shape.to_vec(), v).unwrap())
        })
        .unwrap();
    (s, w)
}

#[test]
fn partitioned_variables_save_as_slices_and_restore_repartitioned() {
    let dir = temp_dir("saver-partitioned");
    let want: Vec<f32> = (0..5).flat_map(|i| (0..4).map(move |j| (10 * i + j) as f32)).collect();
    for resource in [true, false] {
        let (s, w) = partitioned(2, resource, true);
        let init = global_variables_initializer(&s);
        let saver = Saver::new(&s).unwrap();
        assert_eq!(saver.keys(), ["emb/w", "emb/w"]);
        let sess = DirectSession::new(s.graph());
        sess.run(&[], &[], &[&init]).unwrap();
        let path = saver.save(&sess, &dir.join("model").display().to_string(), Some(1)).unwrap();
        let r = BundleReader::open(&path).unwrap();
        assert_eq!(r.names(), ["emb/w"]);
        assert_eq!(r.stored_slices("emb/w").unwrap().len(), 2);
        assert_eq!(r.read("emb/w").unwrap(), Tensor::new(vec![5, 4], want.clone()).unwrap());
        // Three parts of zeros restore the two-part checkpoint.
        let (s3, w3) = partitioned(3, resource, false);
        let init3 = global_variables_initializer(&s3);
        let saver3 = Saver::new(&s3).unwrap();
        let sess3 = DirectSession::new(s3.graph());
        sess3.run(&[], &[], &[&init3]).unwrap();
        saver3.restore(&sess3, &path).unwrap();
        let full = w3.value(&s3);
        assert_eq!(sess3.run(&[], &[&full], &[]).unwrap()[0], Tensor::new(vec![5, 4], want.clone()).unwrap());
        let part2 = sess3.run(&[], &[&w3.parts()[2].value()], &[]).unwrap().remove(0);
        assert_eq!(part2.as_slice::<f32>().unwrap(), &want[16..]);
        let _ = w;
    }
    // A part listed twice, or whole beside its slices, is refused.
    let (s, w) = partitioned(2, true, true);
    let twice = SaverOptions { var_list: Some(vec![w.parts()[0].clone(), w.parts()[0].clone()]), ..Default::default() };
    assert!(Saver::with_options(&s, twice).err().unwrap().message.contains("twice"));
    let other = Scope::new_root();
    let whole = Variable::new(&other, "emb/w", ops::constant(&other, 0.0f32));
    let mixed = SaverOptions { var_list: Some(vec![whole, w.parts()[1].clone()]), ..Default::default() };
    assert!(Saver::with_options(&s, mixed).err().unwrap().message.contains("both whole and as slice"));
    std::fs::remove_dir_all(dir).unwrap();
}
