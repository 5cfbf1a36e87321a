//! Numeric checks of the gradients an embedding lookup needs: `DynamicStitch` /
//! `ParallelDynamicStitch` (by placeholders), and `ResourceGather` and a whole partitioned
//! `embedding_lookup` (by variables: the symbolic gradient at each part's handle against
//! central differences of the loss, the parts perturbed by assignment). Also checks that
//! the gradient reaching a gathered variable carries its rows and indices
//! (`indexed_slices`).

use crate::util::{assert_grad, i32s, rand, EPS, TOL};
use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{
    embedding_lookup, global_variables_initializer, gradients, indexed_slices, ops, Output, Scope, Variable,
    VariableOptions,
};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

#[test]
fn stitch_gradients() {
    for op in ["DynamicStitch", "ParallelDynamicStitch"] {
        assert_grad(
            &format!("{op} of [2,2] and [1,2] rows"),
            |s, x| {
                s.op(op)
                    .input_list(vec![i32s(s, &[2, 0]), i32s(s, &[1])])
                    .input_list(vec![x[0].clone(), x[1].clone()])
                    .build()
                    .output(0)
            },
            &[rand(&[2, 2], 1), rand(&[1, 2], 2)],
            &[0, 1],
        );
        // Three inputs, 2-D indices, vectors.
        assert_grad(
            &format!("{op} of three inputs with 2-D indices"),
            |s, x| {
                let ix = ops::constant(s, Tensor::new(vec![2, 1], vec![4i32, 1]).unwrap());
                s.op(op)
                    .input_list(vec![i32s(s, &[0, 3]), ix, i32s(s, &[2])])
                    .input_list(vec![x[0].clone(), x[1].clone(), x[2].clone()])
                    .build()
                    .output(0)
            },
            &[rand(&[2, 3], 3), rand(&[2, 1, 3], 4), rand(&[1, 3], 5)],
            &[0, 1, 2],
        );
    }
}

/// `loss = sum(tanh(lookup(parts, ids)) * c)`: compares d loss / d part (at each part's
/// handle) with central differences.
fn check_lookup(parts_rows: &[usize], ids: Vec<i64>, use_resource: bool) {
    let dim = 2;
    let s = Scope::new_root();
    let opts = VariableOptions { use_resource, ..Default::default() };
    let values: Vec<Tensor> = parts_rows.iter().enumerate().map(|(i, &r)| rand(&[r, dim], 10 + i as u64)).collect();
    let parts: Vec<Variable> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Variable::with_options(&s, &format!("part_{i}"), ops::constant(&s, v.clone()), &opts))
        .collect();
    let n = ids.len();
    let rows = embedding_lookup(&s, &parts, ops::constant(&s, Tensor::new(vec![n], ids).unwrap())).unwrap();
    let c = ops::constant(&s, rand(&[n, dim], 99));
    let loss = ops::sum(&s, ops::mul(&s, ops::tanh(&s, rows), c), ops::constant(&s, vec![0i32, 1]), false);
    let handles: Vec<Output> = parts.iter().map(Variable::handle).collect();
    let grads = gradients(&s, std::slice::from_ref(&loss), &handles, None).unwrap();
    for (g, p) in grads.iter().zip(&parts) {
        let g = g.as_ref().unwrap_or_else(|| panic!("{} has no gradient", p.name()));
        let (values, indices) = indexed_slices(s.graph(), g).unwrap_or_else(|| panic!("{}: not sparse", p.name()));
        assert_eq!(values.dtype, DataType::Double);
        assert!(matches!(indices.dtype, DataType::Int32 | DataType::Int64));
    }
    let feeds: Vec<Output> =
        values.iter().map(|v| ops::placeholder(&s, DataType::Double, Some(&v.shape().to_i64()))).collect();
    let assigns: Vec<_> = parts.iter().zip(&feeds).map(|(p, f)| p.assign(&s, f.clone())).collect();
    let init = global_variables_initializer(&s);
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    let grad_refs: Vec<&Output> = grads.iter().map(|g| g.as_ref().unwrap()).collect();
    let symbolic = sess.run(&[], &grad_refs, &[]).unwrap();
    let loss_at = |vals: &[Tensor]| -> f64 {
        let fs: Vec<(&Output, Tensor)> = feeds.iter().zip(vals.iter().cloned()).collect();
        let targets: Vec<_> = assigns.iter().collect();
        sess.run(&fs, &[], &targets).unwrap();
        sess.run(&[], &[&loss], &[]).unwrap()[0].scalar_value::<f64>().unwrap()
    };
    for (i, v) in values.iter().enumerate() {
        for k in 0..v.num_elements() {
            let mut plus = values.clone();
            let mut minus = values.clone();
            plus[i].data_mut::<f64>().unwrap()[k] += EPS;
            minus[i].data_mut::<f64>().unwrap()[k] -= EPS;
            let numeric = (loss_at(&plus) - loss_at(&minus)) / (2.0 * EPS);
            let got = symbolic[i].as_slice::<f64>().unwrap()[k];
            let err = (got - numeric).abs() / numeric.abs().max(1.0);
            assert!(err < TOL * 10.0, "part {i}[{k}]: symbolic {got}, numeric {numeric} ({parts_rows:?})");
        }
    }
}

#[test]
fn resource_gather_gradient() {
    check_lookup(&[5], vec![3, 0, 3, 4], true);
}

#[test]
fn partitioned_lookup_gradients() {
    // 7 rows in 3 parts (3, 2, 2), repeated ids, every part used, and a part not used.
    check_lookup(&[3, 2, 2], vec![6, 0, 3, 3, 2, 5], true);
    check_lookup(&[3, 2, 2], vec![6, 0, 3, 3, 2, 5], false);
    check_lookup(&[2, 2], vec![1, 1, 0], true);
}
