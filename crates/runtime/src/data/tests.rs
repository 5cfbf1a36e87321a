//! `tf.data` pipelines built with the Rust builder and run in a `DirectSession`.

use crate::StepRunner;
use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_graph::data::{Dataset, Iterator};
use ferroflow_graph::ops::{add, constant, equal, floor_mod, mul, placeholder};
use ferroflow_graph::{define_function, Output, Scope};
use ferroflow_kernels::io::tfrecord::write_record;
use ferroflow_kernels::testutil::temp_dir;

use crate::DirectSession;

/// Every element's first component as i64, until OUT_OF_RANGE.
fn drain(sess: &DirectSession, next: &Output) -> Vec<i64> {
    let mut out = Vec::new();
    loop {
        match sess.run(&[], &[next], &[]) {
            Ok(t) => out.extend(t[0].as_slice::<i64>().unwrap()),
            Err(e) => {
                assert_eq!(e.code, Code::OutOfRange, "{e}");
                assert!(e.message.ends_with("End of sequence"), "{e}");
                return out;
            }
        }
    }
}

fn start(sess: &DirectSession, it: &Iterator) {
    sess.run(&[], &[], &[it.initializer.as_ref().unwrap()]).unwrap();
}

#[test]
fn map_filter_batch_repeat_take_skip() {
    let s = Scope::new_root();
    let g = s.graph();
    let k = placeholder(&s, DataType::Int64, Some(&[]));
    // x -> x * k (k captured), keep the even ones.
    let times = define_function(g, "times", &[DataType::Int64, DataType::Int64], |s, a| {
        Ok(vec![mul(s, a[0].clone(), a[1].clone())])
    })
    .unwrap();
    let even = define_function(g, "even", &[DataType::Int64], |s, a| {
        let two = constant(s, Tensor::scalar(2i64));
        let zero = constant(s, Tensor::scalar(0i64));
        Ok(vec![equal(s, floor_mod(s, a[0].clone(), two), zero)])
    })
    .unwrap();
    let ds = Dataset::range(&s, 0, 10, 1)
        .unwrap()
        .map(&s, &times, std::slice::from_ref(&k))
        .unwrap()
        .filter(&s, &even, &[])
        .unwrap();
    let ds = ds.skip(&s, 1).unwrap().take(&s, 3).unwrap().repeat(&s, 2).unwrap().batch(&s, 4, false).unwrap();
    let it = ds.make_initializable_iterator(&s, "").unwrap();
    let next = it.get_next(&s).unwrap();
    let sess = DirectSession::new(g);
    sess.run(&[(&k, Tensor::scalar(3i64))], &[], &[it.initializer.as_ref().unwrap()]).unwrap();
    // 0,3,..,27 -> even: 0,6,12,18,24 -> skip 1, take 3: 6,12,18 (twice) -> batches of 4.
    let b1 = sess.run(&[], &[&next[0]], &[]).unwrap();
    assert_eq!(b1[0].dims(), &[4]);
    assert_eq!(b1[0].as_slice::<i64>().unwrap(), &[6, 12, 18, 6]);
    assert_eq!(drain(&sess, &next[0]), vec![12, 18]);
    // Re-initialising with another captured value starts a new pass.
    sess.run(&[(&k, Tensor::scalar(1i64))], &[], &[it.initializer.as_ref().unwrap()]).unwrap();
    assert_eq!(drain(&sess, &next[0]), vec![2, 4, 6, 2, 4, 6]);
}

#[test]
fn shuffle_matches_tensorflow_order() {
    // Golden orders: TensorFlow 2.21, ShuffleDataset(range(10), buffer 4, seeds 5, 9),
    // repeated twice; without and with reshuffling.
    let want = [
        (false, vec![2, 0, 5, 6, 3, 7, 9, 8, 1, 4, 2, 0, 5, 6, 3, 7, 9, 8, 1, 4]),
        (true, vec![1, 3, 2, 4, 6, 5, 0, 7, 9, 8, 0, 2, 3, 1, 5, 8, 7, 6, 4, 9]),
    ];
    for (reshuffle, order) in want {
        let s = Scope::new_root();
        let ds = Dataset::range(&s, 0, 10, 1).unwrap().shuffle(&s, 4, 5, 9, reshuffle).unwrap().repeat(&s, 2).unwrap();
        let it = ds.make_initializable_iterator(&s, "").unwrap();
        let next = it.get_next(&s).unwrap();
        let sess = DirectSession::new(s.graph());
        start(&sess, &it);
        assert_eq!(drain(&sess, &next[0]), order, "reshuffle {reshuffle}");
    }
}

#[test]
fn slices_zip_padded_batch_prefetch_and_parallel_map() {
    let s = Scope::new_root();
    let g = s.graph();
    let rows = constant(&s, Tensor::new(vec![3, 2], vec![1i64, 2, 3, 4, 5, 6]).unwrap());
    let plus = define_function(g, "plus", &[DataType::Int64, DataType::Int64], |s, a| {
        Ok(vec![add(s, a[0].clone(), a[1].clone())])
    })
    .unwrap();
    let a = Dataset::from_tensor_slices(&s, &[rows]).unwrap();
    let b = Dataset::range(&s, 100, 300, 100).unwrap();
    let z = Dataset::zip(&s, &[a, b]).unwrap().parallel_map(&s, &plus, &[], 4).unwrap().prefetch(&s, 2).unwrap();
    let it = z.make_initializable_iterator(&s, "").unwrap();
    let next = it.get_next(&s).unwrap();
    let sess = DirectSession::new(g);
    start(&sess, &it);
    // Two rows zipped with 100, 200 (the range ends first).
    assert_eq!(drain(&sess, &next[0]), vec![101, 102, 203, 204]);

    let s = Scope::new_root();
    let v = constant(&s, Tensor::new(vec![3, 2], vec![1i64, 2, 3, 4, 5, 6]).unwrap());
    let pad = constant(&s, Tensor::scalar(-1i64));
    let d = Dataset::from_tensor_slices(&s, &[v]).unwrap().padded_batch(&s, 2, &[vec![3]], &[pad], false).unwrap();
    let it = d.make_initializable_iterator(&s, "").unwrap();
    let next = it.get_next(&s).unwrap();
    let sess = DirectSession::new(s.graph());
    start(&sess, &it);
    let t = sess.run(&[], &[&next[0]], &[]).unwrap();
    assert_eq!(t[0].dims(), &[2, 3]);
    assert_eq!(t[0].as_slice::<i64>().unwrap(), &[1, 2, -1, 3, 4, -1]);
    let t = sess.run(&[], &[&next[0]], &[]).unwrap();
    assert_eq!(t[0].as_slice::<i64>().unwrap(), &[5, 6, -1]);
}

#[test]
fn files_string_handles_and_errors() {
    let dir = temp_dir("datasets");
    let rec = dir.join("r.tfrecord");
    let mut bytes = Vec::new();
    for i in 0..3u8 {
        write_record(&mut bytes, &vec![i; usize::from(i) + 1]).unwrap();
    }
    std::fs::write(&rec, &bytes).unwrap();
    std::fs::write(dir.join("t.txt"), b"a\r\nbb\n\nccc").unwrap();
    let name = |p: &std::path::Path| p.to_string_lossy().as_bytes().to_vec();

    let s = Scope::new_root();
    let g = s.graph();
    let len = define_function(g, "len", &[DataType::String], |s, a| {
        let l = s.op("StringLength").input(a[0].clone()).try_build()?.output(0);
        Ok(vec![s.op("Cast").input(l).attr("DstT", ferroflow_core::attr::ty(DataType::Int64)).try_build()?.output(0)])
    })
    .unwrap();
    let files = constant(&s, Tensor::vec(vec![name(&rec)]));
    let r = Dataset::tfrecord(&s, files, "").unwrap().map(&s, &len, &[]).unwrap();
    let t = Dataset::text_lines(&s, constant(&s, Tensor::scalar(name(&dir.join("t.txt")))), "")
        .unwrap()
        .map(&s, &len, &[])
        .unwrap();
    let missing = Dataset::tfrecord(&s, constant(&s, Tensor::scalar(name(&dir.join("none")))), "").unwrap();
    let (ri, ti, mi) = (
        r.make_initializable_iterator(&s, "").unwrap(),
        t.make_initializable_iterator(&s, "").unwrap(),
        missing.make_initializable_iterator(&s, "").unwrap(),
    );
    let h = placeholder(&s, DataType::String, Some(&[]));
    let generic = Iterator::from_string_handle(&s, h.clone(), vec![DataType::Int64], vec![Some(vec![])]).unwrap();
    let gnext = generic.get_next(&s).unwrap();
    let (rh, th) = (ri.string_handle(&s).unwrap(), ti.string_handle(&s).unwrap());
    let mnext = mi.get_next(&s).unwrap();
    let never = Dataset::range(&s, 0, 1, 1).unwrap().make_initializable_iterator(&s, "").unwrap();
    let nnext = never.get_next(&s).unwrap();
    let sess = DirectSession::new(g);
    for it in [&ri, &ti, &mi] {
        start(&sess, it);
    }
    let handles = sess.run(&[], &[&rh, &th], &[]).unwrap();
    let via = |k: usize| sess.run(&[(&h, handles[k].clone())], &[&gnext[0]], &[]);
    // Interleaved reads through one generic iterator keep each iterator's position.
    assert_eq!(via(0).unwrap()[0].scalar_value::<i64>().unwrap(), 1);
    assert_eq!(via(1).unwrap()[0].scalar_value::<i64>().unwrap(), 1);
    assert_eq!(via(0).unwrap()[0].scalar_value::<i64>().unwrap(), 2);
    assert_eq!(via(1).unwrap()[0].scalar_value::<i64>().unwrap(), 2);
    assert_eq!(via(1).unwrap()[0].scalar_value::<i64>().unwrap(), 0);
    assert_eq!(via(1).unwrap()[0].scalar_value::<i64>().unwrap(), 3);
    assert_eq!(via(1).unwrap_err().code, Code::OutOfRange);
    assert_eq!(via(0).unwrap()[0].scalar_value::<i64>().unwrap(), 3);
    let e = sess.run(&[], &[&mnext[0]], &[]).unwrap_err();
    assert_eq!(e.code, Code::NotFound, "{e}");
    let e = sess.run(&[], &[&nnext[0]], &[]).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition, "{e}");
    // A corrupted record is DATA_LOSS.
    let mut bad = bytes.clone();
    bad[14] ^= 1;
    std::fs::write(&rec, &bad).unwrap();
    start(&sess, &ri);
    let e = via(0).unwrap_err();
    assert_eq!(e.code, Code::DataLoss, "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn cardinality_as_tensorflow_counts_it() {
    // Values from TensorFlow 2.21's `Dataset.cardinality()` of the same pipelines.
    let s = Scope::new_root();
    let g = s.graph();
    let even = define_function(g, "even_c", &[DataType::Int64], |s, a| {
        let two = constant(s, Tensor::scalar(2i64));
        let zero = constant(s, Tensor::scalar(0i64));
        Ok(vec![equal(s, floor_mod(s, a[0].clone(), two), zero)])
    })
    .unwrap();
    let r = Dataset::range(&s, 0, 10, 3).unwrap();
    let cases = [
        (r.clone(), 4),
        (r.batch(&s, 3, false).unwrap(), 2),
        (r.batch(&s, 3, true).unwrap(), 1),
        (r.repeat(&s, 3).unwrap(), 12),
        (r.repeat(&s, -1).unwrap(), -1),
        (r.repeat(&s, -1).unwrap().take(&s, 5).unwrap(), 5),
        (r.skip(&s, 1).unwrap(), 3),
        (r.skip(&s, 9).unwrap(), 0),
        (r.take(&s, 9).unwrap(), 4),
        (r.filter(&s, &even, &[]).unwrap(), -2),
        (r.filter(&s, &even, &[]).unwrap().repeat(&s, -1).unwrap(), -1),
        (r.shuffle(&s, 10, 1, 2, true).unwrap().prefetch(&s, 2).unwrap(), 4),
        (Dataset::range(&s, 10, 0, -4).unwrap(), 3),
    ];
    let outs: Vec<Output> = cases.iter().map(|(d, _)| d.cardinality(&s).unwrap()).collect();
    let sess = DirectSession::new(g);
    let refs: Vec<&Output> = outs.iter().collect();
    let got = sess.run(&[], &refs, &[]).unwrap();
    for (i, ((_, want), t)) in cases.iter().zip(&got).enumerate() {
        assert_eq!(t.as_slice::<i64>().unwrap(), &[*want], "case {i}");
    }
}

#[test]
fn window_then_batch() {
    let s = Scope::new_root();
    let g = s.graph();
    // Each window (a dataset of int64 scalars) batched whole.
    let batched = define_function(g, "batch_window", &[DataType::Variant], |s, a| {
        let w = Dataset { handle: a[0].clone(), types: vec![DataType::Int64], shapes: vec![Some(vec![])] };
        Ok(vec![w.batch(s, 3, false)?.handle])
    })
    .unwrap();
    let batch_type = (vec![DataType::Int64], vec![Some(vec![-1])]);
    let ds = Dataset::range(&s, 0, 7, 1).unwrap().window(&s, 3, 2, 1, false).unwrap();
    let ds = ds.flat_map(&s, &batched, &[], batch_type.0.clone(), batch_type.1.clone()).unwrap();
    let it = ds.make_initializable_iterator(&s, "").unwrap();
    let next = it.get_next(&s).unwrap();
    let strided = Dataset::range(&s, 0, 12, 1).unwrap().window(&s, 3, 4, 2, true).unwrap();
    let strided = strided.flat_map(&s, &batched, &[], batch_type.0, batch_type.1).unwrap();
    let it2 = strided.make_initializable_iterator(&s, "").unwrap();
    let next2 = it2.get_next(&s).unwrap();
    let sess = DirectSession::new(g);
    // TensorFlow 2.21's windows for the same pipelines.
    start(&sess, &it);
    assert_eq!(drain(&sess, &next[0]), vec![0, 1, 2, 2, 3, 4, 4, 5, 6, 6]);
    start(&sess, &it2);
    assert_eq!(drain(&sess, &next2[0]), vec![0, 2, 4, 4, 6, 8]);
    // A window size of 0 is TensorFlow's INVALID_ARGUMENT.
    let bad = Dataset::range(&s, 0, 3, 1).unwrap().window(&s, 0, 1, 1, false).unwrap();
    let bad_it = bad.make_initializable_iterator(&s, "").unwrap();
    let sess = DirectSession::new(g);
    let e = sess.run(&[], &[], &[bad_it.initializer.as_ref().unwrap()]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Window size must be greater than zero, but got 0."), "{e}");
}

#[test]
fn reduce_folds_every_element() {
    let s = Scope::new_root();
    let g = s.graph();
    let k = placeholder(&s, DataType::Int64, Some(&[]));
    // state + x * k, from 1: 1 + k * (0 + 1 + ... + 4).
    let f = define_function(g, "fold", &[DataType::Int64, DataType::Int64, DataType::Int64], |s, a| {
        Ok(vec![add(s, a[0].clone(), mul(s, a[1].clone(), a[2].clone()))])
    })
    .unwrap();
    let ds = Dataset::range(&s, 0, 5, 1).unwrap();
    let one = constant(&s, Tensor::scalar(1i64));
    let out = ds.reduce(&s, &f, &[one], std::slice::from_ref(&k)).unwrap();
    let sess = DirectSession::new(g);
    let got = sess.run(&[(&k, Tensor::scalar(3i64))], &[&out[0]], &[]).unwrap();
    assert_eq!(got[0].scalar_value::<i64>().unwrap(), 31);
}

#[test]
fn interleave_unbatch_cache() {
    let s = Scope::new_root();
    let g = s.graph();
    // Each x becomes [x, x]; two open at once, one element from each in turn.
    let twice = define_function(g, "twice", &[DataType::Int64], |s, a| {
        Ok(vec![Dataset::from_tensors(s, &[a[0].clone()])?.repeat(s, 2)?.handle])
    })
    .unwrap();
    let ds = Dataset::range(&s, 1, 6, 1).unwrap();
    let ds = ds.interleave(&s, &twice, &[], (2, 1), (vec![DataType::Int64], vec![Some(vec![])])).unwrap();
    let it = ds.make_initializable_iterator(&s, "").unwrap();
    let next = it.get_next(&s).unwrap();
    // Batches of three, split again; a reshuffling pass cached: every pass is the first.
    let rows = Dataset::range(&s, 0, 7, 1).unwrap().batch(&s, 3, false).unwrap().unbatch(&s).unwrap();
    let rows_it = rows.make_initializable_iterator(&s, "").unwrap();
    let rows_next = rows_it.get_next(&s).unwrap();
    let cached = Dataset::range(&s, 0, 6, 1).unwrap().shuffle(&s, 6, 3, 4, true).unwrap().cache(&s).unwrap();
    let cached_it = cached.repeat(&s, 3).unwrap().make_initializable_iterator(&s, "").unwrap();
    let cached_next = cached_it.get_next(&s).unwrap();
    let sess = DirectSession::new(g);
    start(&sess, &it);
    // TensorFlow 2.21's order for the same pipeline.
    assert_eq!(drain(&sess, &next[0]), vec![1, 2, 1, 2, 3, 4, 3, 4, 5, 5]);
    start(&sess, &rows_it);
    assert_eq!(drain(&sess, &rows_next[0]), (0..7).collect::<Vec<i64>>());
    start(&sess, &cached_it);
    let got = drain(&sess, &cached_next[0]);
    assert_eq!(got.len(), 18);
    assert_eq!(got[0..6], got[6..12]);
    assert_eq!(got[0..6], got[12..18]);
    let mut first = got[0..6].to_vec();
    first.sort();
    assert_eq!(first, (0..6).collect::<Vec<i64>>());
}

#[test]
fn cache_to_files_in_tensorflows_format() {
    let dir = temp_dir("file_cache");
    let prefix = |name: &str| dir.join("cache").join(name).to_string_lossy().into_owned();
    let s = Scope::new_root();
    let g = s.graph();
    let pass = |ds: Dataset| {
        let it = ds.make_initializable_iterator(&s, "").unwrap();
        let next = it.get_next(&s).unwrap();
        (it, next)
    };
    let (full, full_next) =
        pass(Dataset::range(&s, 0, 5, 1).unwrap().cache_file(&s, &prefix("a")).unwrap().repeat(&s, 2).unwrap());
    // Another input over the same files: the cache is read, its input never.
    let (other, other_next) = pass(Dataset::range(&s, 100, 103, 1).unwrap().cache_file(&s, &prefix("a")).unwrap());
    let (part, part_next) =
        pass(Dataset::range(&s, 0, 4, 1).unwrap().cache_file(&s, &prefix("b")).unwrap().take(&s, 2).unwrap());
    let (w1, w1_next) = pass(Dataset::range(&s, 0, 4, 1).unwrap().cache_file(&s, &prefix("c")).unwrap());
    let (w2, w2_next) = pass(Dataset::range(&s, 0, 4, 1).unwrap().cache_file(&s, &prefix("c")).unwrap());
    let sess = DirectSession::new(g);
    start(&sess, &full);
    assert_eq!(drain(&sess, &full_next[0]), vec![0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    let reader = ferroflow_kernels::io::bundle_reader::BundleReader::open(&prefix("a")).unwrap();
    // TensorFlow's keys: the element index right-aligned in 7 places, the component index in 1.
    assert_eq!(reader.names(), ["      0_0", "      1_0", "      2_0", "      3_0", "      4_0"]);
    assert!(!std::path::Path::new(&format!("{}_0.lockfile", prefix("a"))).exists());
    start(&sess, &other);
    assert_eq!(drain(&sess, &other_next[0]), vec![0, 1, 2, 3, 4]);
    // A pass cut short leaves neither a cache nor a lock behind.
    start(&sess, &part);
    assert_eq!(drain(&sess, &part_next[0]), vec![0, 1]);
    start(&sess, &part); // the first pass's iterator is dropped
    assert!(!std::path::Path::new(&format!("{}.index", prefix("b"))).exists());
    assert!(!std::path::Path::new(&format!("{}_0.lockfile", prefix("b"))).exists());
    // Two passes writing the same cache at once: the second is refused.
    start(&sess, &w1);
    start(&sess, &w2);
    sess.run(&[], &[&w1_next[0]], &[]).unwrap();
    let e = sess.run(&[], &[&w2_next[0]], &[]).unwrap_err();
    assert_eq!(e.code, Code::AlreadyExists, "{e}");
    assert!(e.message.contains("concurrent caching iterator"), "{e}");
    assert_eq!(drain(&sess, &w1_next[0]), vec![1, 2, 3]);
}
