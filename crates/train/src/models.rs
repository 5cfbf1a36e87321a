//! The MNIST models of TensorFlow's distributed guide: a one-hidden-layer MLP and the
//! "Deep MNIST" CNN (conv 5x5x32 → maxpool → conv 5x5x64 → maxpool → fc 1024 → dropout →
//! fc 10), with the tutorials' initialization (truncated normal σ = 0.1, biases 0.1).

use ferroflow_core::{DataType, Status, Tensor};
use ferroflow_graph::{ops, Output, Scope, Variable};

/// Which model to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// 784 → hidden (relu) → 10.
    Mlp,
    /// The Deep MNIST CNN.
    Cnn,
}

impl std::str::FromStr for ModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mlp" => Ok(ModelKind::Mlp),
            "cnn" => Ok(ModelKind::Cnn),
            _ => Err(format!("unknown model '{s}': expected 'mlp' or 'cnn'")),
        }
    }
}

/// The tensors of a built model.
#[derive(Clone, Debug)]
pub struct Model {
    /// Images, float32 `[batch, 784]` (placeholder `x`).
    pub x: Output,
    /// Labels, int64 `[batch]` (placeholder `y`).
    pub y: Output,
    /// Dropout keep probability (CNN only; defaults to 1.0 when not fed).
    pub keep_prob: Option<Output>,
    /// Unnormalized scores `[batch, 10]`.
    pub logits: Output,
    /// Mean cross-entropy.
    pub loss: Output,
    /// Fraction of correct predictions.
    pub accuracy: Output,
}

fn weight(s: &Scope, name: &str, shape: &[i64], seed: i64) -> Variable {
    let ws = s.sub_exact(&format!("{name}/Initializer"));
    let shape_t = ops::constant(&ws, Tensor::vec(shape.iter().map(|&d| d as i32).collect::<Vec<_>>()));
    let tn = ops::truncated_normal(&ws, shape_t, DataType::Float, seed, 0);
    let init = ops::mul(&ws, tn, ops::constant(&ws, 0.1f32));
    Variable::new(s, name, init)
}

fn bias(s: &Scope, name: &str, n: usize) -> Variable {
    let init = ops::constant_named(&s.sub_exact(&format!("{name}/Initializer")), "Const", vec![0.1f32; n]);
    Variable::new(s, name, init)
}

/// A dense layer `x · weights + biases` (relu if asked) in name scope `name`.
pub fn dense(s: &Scope, name: &str, x: Output, inp: usize, out: usize, seed: i64, relu: bool) -> Output {
    let ls = s.sub(name);
    let w = weight(&ls, "weights", &[inp as i64, out as i64], seed);
    let b = bias(&ls, "biases", out);
    let y = ops::bias_add(&ls, ops::mat_mul(&ls, x, w.value(), false, false), b.value());
    if relu {
        ops::relu(&ls, y)
    } else {
        y
    }
}

/// Loss (mean sparse softmax cross-entropy), predictions and accuracy for `logits`.
pub fn head(s: &Scope, x: Output, y: Output, keep_prob: Option<Output>, logits: Output) -> Result<Model, Status> {
    let (xent, _) = ops::sparse_softmax_cross_entropy_with_logits(s, logits.clone(), y.clone());
    let loss = ops::mean(s, xent, ops::constant(s, Tensor::vec(vec![0i32])), false);
    let pred = ops::arg_max(s, logits.clone(), ops::constant(s, 1i32), DataType::Int64);
    let correct = ops::cast(s, ops::equal(s, pred, y.clone()), DataType::Float);
    let accuracy = ops::mean(s, correct, ops::constant(s, Tensor::vec(vec![0i32])), false);
    s.status()?;
    Ok(Model { x, y, keep_prob, logits, loss, accuracy })
}

/// The MLP 784 → `hidden` (relu) → 10.
pub fn mlp(s: &Scope, hidden: usize, seed: i64) -> Result<Model, Status> {
    let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 784]));
    let y = ops::placeholder_named(s, "y", DataType::Int64, Some(&[-1]));
    let h = dense(s, "hidden", x.clone(), 784, hidden, seed, true);
    let logits = dense(s, "output", h, hidden, 10, seed + 1, false);
    head(s, x, y, None, logits)
}

fn conv_layer(s: &Scope, name: &str, x: Output, k: usize, cin: usize, cout: usize, seed: i64) -> Output {
    let ls = s.sub(name);
    let w = weight(&ls, "weights", &[k as i64, k as i64, cin as i64, cout as i64], seed);
    let b = bias(&ls, "biases", cout);
    let c = ops::conv2d(&ls, x, w.value(), &[1, 1, 1, 1], "SAME");
    let r = ops::relu(&ls, ops::bias_add(&ls, c, b.value()));
    ops::max_pool(&ls, r, &[1, 2, 2, 1], &[1, 2, 2, 1], "SAME")
}

/// TensorFlow 1.x's `nn.dropout(x, keep_prob)`: keeps each element with probability
/// `keep_prob`, scaled by `1 / keep_prob`.
pub fn dropout(s: &Scope, x: Output, keep_prob: Output, seed: i64) -> Output {
    let ds = s.sub("dropout");
    let shape = ops::shape(&ds, x.clone(), DataType::Int32);
    let u = ops::random_uniform(&ds, shape, DataType::Float, seed, 0);
    let mask = ops::floor(&ds, ops::add(&ds, keep_prob.clone(), u));
    ops::mul(&ds, ops::real_div(&ds, x, keep_prob), mask)
}

/// The Deep MNIST CNN.
pub fn cnn(s: &Scope, seed: i64) -> Result<Model, Status> {
    let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 784]));
    let y = ops::placeholder_named(s, "y", DataType::Int64, Some(&[-1]));
    let keep_default = ops::constant(s, 1.0f32);
    let keep_prob = ops::placeholder_with_default(&s.sub("keep_prob"), keep_default, Some(&[]));
    let img = ops::reshape(s, x.clone(), ops::constant(s, Tensor::vec(vec![-1i32, 28, 28, 1])));
    let c1 = conv_layer(s, "conv1", img, 5, 1, 32, seed);
    let c2 = conv_layer(s, "conv2", c1, 5, 32, 64, seed + 1);
    let flat = ops::reshape(s, c2, ops::constant(s, Tensor::vec(vec![-1i32, 7 * 7 * 64])));
    let fc1 = dense(s, "fc1", flat, 7 * 7 * 64, 1024, seed + 2, true);
    let drop = dropout(s, fc1, keep_prob.clone(), seed + 3);
    let logits = dense(s, "fc2", drop, 1024, 10, seed + 4, false);
    head(s, x, y, Some(keep_prob), logits)
}

/// Builds the chosen model.
pub fn build(s: &Scope, kind: ModelKind, seed: i64) -> Result<Model, Status> {
    match kind {
        ModelKind::Mlp => mlp(s, 256, seed),
        ModelKind::Cnn => cnn(s, seed),
    }
}
