//! Stateful random kernels: `RandomUniform`, `RandomStandardNormal`, `TruncatedNormal`,
//! `RandomUniformInt`. Seeded kernels reproduce TensorFlow's numbers bit for bit; each run
//! of a kernel continues its stream (successive runs give new numbers, as in TensorFlow).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor};

use super::distributions::{
    fill, Distribution, NormalF32, NormalF64, TruncatedF32, TruncatedF64, UniformF32, UniformF64, UniformI32,
    UniformI64,
};
use super::guarded::{GuardedPhilox, SAMPLES_PER_OUTPUT};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Parses a shape input (a vector of int32 or int64), TensorFlow's `MakeShape`.
pub fn shape_from_tensor(ctx: &OpContext, t: &Tensor) -> Result<Shape, Status> {
    if t.rank() != 1 {
        return Err(ctx.error(format!("shape must be a vector of {{int32,int64}}, got shape {}", t.shape())));
    }
    let dims: Vec<i64> = match t.dtype() {
        DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&d| d as i64).collect(),
        DataType::Int64 => t.as_slice::<i64>()?.to_vec(),
        d => return Err(ctx.error(format!("shape must be a vector of {{int32,int64}}, got {d}"))),
    };
    Shape::from_i64(&dims).map_err(|e| ctx.error(e.message))
}

#[derive(Clone, Copy)]
enum Kind {
    Uniform,
    Normal,
    Truncated,
}

struct RandomOp {
    kind: Kind,
    dtype: DataType,
    gen: GuardedPhilox,
}

fn generate<D: Distribution>(dist: &D, gen: &GuardedPhilox, n: usize) -> Vec<D::T>
where
    D::T: Default,
{
    let base = gen.reserve_outputs(n, SAMPLES_PER_OUTPUT);
    let mut v = vec![D::T::default(); n];
    fill(dist, base, &mut v);
    v
}

impl OpKernel for RandomOp {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
        ferroflow_core::check_tensor_alloc(shape.dims(), self.dtype).map_err(|e| ctx.error_with(e))?;
        let n = shape.num_elements();
        let out = match (self.kind, self.dtype) {
            (Kind::Uniform, DataType::Float) => Tensor::new(shape, generate(&UniformF32, &self.gen, n))?,
            (Kind::Uniform, _) => Tensor::new(shape, generate(&UniformF64, &self.gen, n))?,
            (Kind::Normal, DataType::Float) => Tensor::new(shape, generate(&NormalF32, &self.gen, n))?,
            (Kind::Normal, _) => Tensor::new(shape, generate(&NormalF64, &self.gen, n))?,
            (Kind::Truncated, DataType::Float) => Tensor::new(shape, generate(&TruncatedF32, &self.gen, n))?,
            (Kind::Truncated, _) => Tensor::new(shape, generate(&TruncatedF64, &self.gen, n))?,
        };
        ctx.set_output(0, out)
    }
}

fn make(node: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("dtype")?;
    if !dtype.is_float() {
        return Err(Status::unimplemented(format!(
            "node '{}' (op {}): dtype {dtype} is not supported (float32 and float64 are)",
            node.name, node.op
        )));
    }
    Ok(Box::new(RandomOp { kind, dtype, gen: GuardedPhilox::from_node(node)? }))
}

struct RandomUniformInt {
    gen: GuardedPhilox,
}

impl OpKernel for RandomUniformInt {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
        let (lo, hi) = (ctx.input(1)?, ctx.input(2)?);
        if hi.rank() != 0 {
            return Err(ctx.error(format!("maxval must be 0-D, got shape {}", hi.shape())));
        }
        if lo.rank() != 0 {
            return Err(ctx.error(format!("minval must be 0-D, got shape {}", lo.shape())));
        }
        let n = shape.num_elements();
        if lo.dtype() != hi.dtype() {
            return Err(ctx.error(format!("minval is {} but maxval is {}", lo.dtype(), hi.dtype())));
        }
        ferroflow_core::check_tensor_alloc(shape.dims(), lo.dtype()).map_err(|e| ctx.error_with(e))?;
        if n == 0 {
            return ctx.set_output(0, Tensor::zeros(lo.dtype(), shape)?);
        }
        let out = match lo.dtype() {
            DataType::Int32 => {
                let (l, h) = (lo.scalar_value::<i32>()?, hi.scalar_value::<i32>()?);
                if l >= h {
                    return Err(ctx.error(format!("Need minval < maxval: {l} >= {h}")));
                }
                let d = UniformI32 { lo: l, range: (h as u32).wrapping_sub(l as u32) };
                Tensor::new(shape, generate(&d, &self.gen, n))?
            }
            DataType::Int64 => {
                let (l, h) = (lo.scalar_value::<i64>()?, hi.scalar_value::<i64>()?);
                if l >= h {
                    return Err(ctx.error(format!("Need minval < maxval: {l} >= {h}")));
                }
                let d = UniformI64 { lo: l, range: (h as u64).wrapping_sub(l as u64) };
                Tensor::new(shape, generate(&d, &self.gen, n))?
            }
            d => return Err(ctx.error(format!("minval and maxval must be int32 or int64, got {d}"))),
        };
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomUniform", |n| make(n, Kind::Uniform));
    r.add("RandomStandardNormal", |n| make(n, Kind::Normal));
    r.add("TruncatedNormal", |n| make(n, Kind::Truncated));
    r.add("RandomUniformInt", |n| Ok(Box::new(RandomUniformInt { gen: GuardedPhilox::from_node(n)? })));
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};
    use crate::ResourceMgr;

    fn rnd(op: &str, dtype: DataType, seed: i64, seed2: i64) -> NodeDef {
        node(
            op,
            &[
                ("dtype", attr::ty(dtype)),
                ("T", attr::ty(DataType::Int32)),
                ("seed", attr::int(seed)),
                ("seed2", attr::int(seed2)),
            ],
        )
    }

    fn run_twice(n: NodeDef, shape: Tensor) -> (Tensor, Tensor) {
        let k = crate::create_kernel(&n).unwrap();
        let step = crate::testutil::test_step(Arc::new(ResourceMgr::new()));
        let run = || {
            let mut ctx =
                OpContext::new(Arc::new(n.clone()), vec![crate::Value::Tensor(shape.clone())], 1, step.clone());
            k.compute(&mut ctx).unwrap();
            ctx.take_outputs().unwrap().remove(0).tensor().unwrap()
        };
        (run(), run())
    }

    #[test]
    fn seeded_uniform_matches_tensorflow_and_advances() {
        // TensorFlow 2.21: RandomUniform(shape=[7], float32, seed=1, seed2=2), run twice.
        let (a, b) = run_twice(rnd("RandomUniform", DataType::Float, 1, 2), Tensor::vec(vec![7i32]));
        let want_a = [0.40639675f32, 0.8575996, 0.05539584, 0.08587229, 0.4121536, 0.03663087, 0.65721333];
        let want_b = [0.4326129f32, 0.868968, 0.26664758, 0.6024519, 0.8833823, 0.24750876, 0.32722437];
        for (g, w) in a.as_slice::<f32>().unwrap().iter().zip(want_a) {
            assert!((g - w).abs() < 1e-7, "{g} vs {w}");
        }
        for (g, w) in b.as_slice::<f32>().unwrap().iter().zip(want_b) {
            assert!((g - w).abs() < 1e-7, "{g} vs {w}");
        }
    }

    #[test]
    fn unseeded_runs_differ_and_stats_hold() {
        let n = 200_000usize;
        let shape = Tensor::vec(vec![n as i64]);
        let mut nd = rnd("RandomStandardNormal", DataType::Double, 0, 0);
        nd.attr.insert("T".into(), attr::ty(DataType::Int64));
        let (a, b) = run_twice(nd, shape.clone());
        assert_ne!(a, b);
        let v = a.as_slice::<f64>().unwrap();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02 && (var.sqrt() - 1.0).abs() < 0.02, "mean {mean} var {var}");

        let mut nd = rnd("TruncatedNormal", DataType::Float, 5, 0);
        nd.attr.insert("T".into(), attr::ty(DataType::Int64));
        let (a, _) = run_twice(nd, shape.clone());
        let v = a.as_slice::<f32>().unwrap();
        assert!(v.iter().all(|x| x.abs() < 2.0));
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let sd = (v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        // Standard deviation of a standard normal truncated to (-2, 2).
        assert!(mean.abs() < 0.02 && (sd - 0.8796).abs() < 0.01, "mean {mean} sd {sd}");

        let mut nd = rnd("RandomUniform", DataType::Double, 0, 9);
        nd.attr.insert("T".into(), attr::ty(DataType::Int64));
        let (a, _) = run_twice(nd, shape);
        let v = a.as_slice::<f64>().unwrap();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = v.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01);
    }

    #[test]
    fn uniform_int_range_and_errors() {
        let n = node(
            "RandomUniformInt",
            &[
                ("Tout", attr::ty(DataType::Int64)),
                ("T", attr::ty(DataType::Int32)),
                ("seed", attr::int(3)),
                ("seed2", attr::int(4)),
            ],
        );
        let out =
            run_kernel(n.clone(), vec![Tensor::vec(vec![1000i32]), Tensor::scalar(-3i64), Tensor::scalar(5i64)], 1)
                .unwrap();
        let v = out[0].as_slice::<i64>().unwrap();
        assert!(v.iter().all(|x| (-3..5).contains(x)));
        assert!((-3..5).all(|k| v.contains(&k)));
        let e = run_kernel(n.clone(), vec![Tensor::vec(vec![2i32]), Tensor::scalar(5i64), Tensor::scalar(5i64)], 1)
            .unwrap_err();
        assert!(e.message.contains("Need minval < maxval: 5 >= 5"), "{e}");
        let empty =
            run_kernel(n, vec![Tensor::vec(vec![0i32]), Tensor::scalar(5i64), Tensor::scalar(5i64)], 1).unwrap();
        assert_eq!(empty[0].num_elements(), 0);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let n = rnd("RandomUniform", DataType::Float, 1, 1);
        let e = run_kernel(n.clone(), vec![Tensor::vec(vec![2i32, -1])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        let e = run_kernel(n, vec![Tensor::scalar(2i32)], 1).unwrap_err();
        assert!(e.message.contains("must be a vector"), "{e}");
        let e = crate::create_kernel(&rnd("RandomUniform", DataType::Int32, 1, 1)).err().unwrap();
        assert_eq!(e.code, Code::Unimplemented);
    }
}
