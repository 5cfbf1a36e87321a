//! Optimizer apply kernels (`ApplyGradientDescent`, `ResourceApplyAdam`, …, every
//! `tf.compat.v1.train` optimizer's), both styles:
//! `Apply*` update ref-variables and output the reference, `ResourceApply*` update
//! resource variables and have no outputs. float32 and float64. The `(Resource)SparseApply*`
//! forms update only the rows a sparse gradient names.

mod adadelta;
mod adagrad;
#[doc(hidden)]
pub mod adagrad_da;
mod adam;
mod adamax;
#[doc(hidden)]
pub mod apply;
mod centered_rms_prop;
mod ftrl;
mod gradient_descent;
mod momentum;
#[doc(hidden)]
pub mod proximal;
mod rms_prop;
mod sparse_apply;

use crate::KernelRegistry;

pub(crate) fn register(r: &mut KernelRegistry) {
    use apply::register as dense;
    use apply::register_sparse as sparse;
    dense::<gradient_descent::GradientDescent>(r, "ApplyGradientDescent", "ResourceApplyGradientDescent");
    dense::<momentum::Momentum>(r, "ApplyMomentum", "ResourceApplyMomentum");
    sparse::<momentum::Momentum>(r, "SparseApplyMomentum", "ResourceSparseApplyMomentum");
    dense::<adagrad::Adagrad>(r, "ApplyAdagrad", "ResourceApplyAdagrad");
    sparse::<adagrad::Adagrad>(r, "SparseApplyAdagrad", "ResourceSparseApplyAdagrad");
    dense::<adagrad::AdagradV2>(r, "ApplyAdagradV2", "ResourceApplyAdagradV2");
    sparse::<adagrad::AdagradV2>(r, "SparseApplyAdagradV2", "ResourceSparseApplyAdagradV2");
    dense::<adam::Adam>(r, "ApplyAdam", "ResourceApplyAdam");
    dense::<adamax::AdaMax>(r, "ApplyAdaMax", "ResourceApplyAdaMax");
    dense::<rms_prop::RmsProp>(r, "ApplyRMSProp", "ResourceApplyRMSProp");
    sparse::<rms_prop::RmsProp>(r, "SparseApplyRMSProp", "ResourceSparseApplyRMSProp");
    dense::<centered_rms_prop::CenteredRmsProp>(r, "ApplyCenteredRMSProp", "ResourceApplyCenteredRMSProp");
    sparse::<centered_rms_prop::CenteredRmsProp>(r, "SparseApplyCenteredRMSProp", "ResourceSparseApplyCenteredRMSProp");
    dense::<adadelta::Adadelta>(r, "ApplyAdadelta", "ResourceApplyAdadelta");
    sparse::<adadelta::Adadelta>(r, "SparseApplyAdadelta", "ResourceSparseApplyAdadelta");
    dense::<ftrl::Ftrl>(r, "ApplyFtrl", "ResourceApplyFtrl");
    sparse::<ftrl::Ftrl>(r, "SparseApplyFtrl", "ResourceSparseApplyFtrl");
    dense::<ftrl::FtrlV2>(r, "ApplyFtrlV2", "ResourceApplyFtrlV2");
    sparse::<ftrl::FtrlV2>(r, "SparseApplyFtrlV2", "ResourceSparseApplyFtrlV2");
    use proximal::{ProximalAdagrad, ProximalGradientDescent};
    dense::<ProximalGradientDescent>(r, "ApplyProximalGradientDescent", "ResourceApplyProximalGradientDescent");
    sparse::<ProximalGradientDescent>(
        r,
        "SparseApplyProximalGradientDescent",
        "ResourceSparseApplyProximalGradientDescent",
    );
    dense::<ProximalAdagrad>(r, "ApplyProximalAdagrad", "ResourceApplyProximalAdagrad");
    sparse::<ProximalAdagrad>(r, "SparseApplyProximalAdagrad", "ResourceSparseApplyProximalAdagrad");
    dense::<adagrad_da::AdagradDa>(r, "ApplyAdagradDA", "ResourceApplyAdagradDA");
    sparse::<adagrad_da::AdagradDa>(r, "SparseApplyAdagradDA", "ResourceSparseApplyAdagradDA");
}
