//! Optimizer apply kernels (`ApplyGradientDescent`, `ResourceApplyAdam`, …), both styles:
//! `Apply*` update ref-variables and output the reference, `ResourceApply*` update
//! resource variables and have no outputs. float32 and float64. `(Resource)SparseApplyAdagrad`
//! updates only the rows a sparse gradient names.

mod adagrad;
mod adam;
mod apply;
mod gradient_descent;
mod momentum;
mod real;
mod rms_prop;
mod sparse_adagrad;

#[cfg(test)]
mod testutil;

pub use real::Real;

use crate::KernelRegistry;

pub(crate) fn register(r: &mut KernelRegistry) {
    apply::register::<gradient_descent::GradientDescent>(r, "ApplyGradientDescent", "ResourceApplyGradientDescent");
    apply::register::<momentum::Momentum>(r, "ApplyMomentum", "ResourceApplyMomentum");
    apply::register::<adagrad::Adagrad>(r, "ApplyAdagrad", "ResourceApplyAdagrad");
    apply::register::<adagrad::AdagradV2>(r, "ApplyAdagradV2", "ResourceApplyAdagradV2");
    apply::register::<adam::Adam>(r, "ApplyAdam", "ResourceApplyAdam");
    apply::register::<rms_prop::RmsProp>(r, "ApplyRMSProp", "ResourceApplyRMSProp");
    sparse_adagrad::register(r);
}
