//! Optimizer apply kernels (`ApplyGradientDescent`, `ResourceApplyAdam`, …, every
//! `tf.compat.v1.train` optimizer's), both styles:
//! `Apply*` update ref-variables and output the reference, `ResourceApply*` update
//! resource variables and have no outputs. float32 and float64. The `(Resource)SparseApply*`
//! forms update only the rows a sparse gradient names. tf_keras's `ResourceApplyKerasMomentum`
//! (and its sparse form) and `ResourceApplyAdamWithAmsgrad` exist in the resource form only.

mod adadelta;
mod adagrad;
#[doc(hidden)]
pub mod adagrad_da;
mod adam;
mod adam_amsgrad;
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
mod sign;
mod sparse_apply;

use crate::KernelRegistry;

/// Registers each optimizer of `dense` as `Apply{name}` and `ResourceApply{name}`, and each
/// of `sparse_too` also as `SparseApply{name}` and `ResourceSparseApply{name}`.
macro_rules! register_optimizers {
    ($r:ident, dense: [$($d:ty => $dn:literal),* $(,)?], sparse_too: [$($s:ty => $sn:literal),* $(,)?] $(,)?) => {
        $(apply::register::<$d>($r, concat!("Apply", $dn), concat!("ResourceApply", $dn));)*
        $(
            apply::register::<$s>($r, concat!("Apply", $sn), concat!("ResourceApply", $sn));
            apply::register_sparse::<$s>($r, concat!("SparseApply", $sn), concat!("ResourceSparseApply", $sn));
        )*
    };
}

pub(crate) fn register(r: &mut KernelRegistry) {
    register_optimizers!(
        r,
        dense: [
            gradient_descent::GradientDescent => "GradientDescent",
            adam::Adam => "Adam",
            adamax::AdaMax => "AdaMax",
            sign::Sign<false> => "AddSign",
            sign::Sign<true> => "PowerSign",
        ],
        sparse_too: [
            momentum::Momentum => "Momentum",
            adagrad::Adagrad<false> => "Adagrad",
            adagrad::Adagrad<true> => "AdagradV2",
            rms_prop::RmsProp => "RMSProp",
            centered_rms_prop::CenteredRmsProp => "CenteredRMSProp",
            adadelta::Adadelta => "Adadelta",
            ftrl::Ftrl => "Ftrl",
            ftrl::FtrlV2 => "FtrlV2",
            proximal::ProximalGradientDescent => "ProximalGradientDescent",
            proximal::ProximalAdagrad => "ProximalAdagrad",
            adagrad_da::AdagradDa => "AdagradDA",
        ],
    );
    // tf_keras's own optimizers: TensorFlow has only their resource forms.
    apply::register_resource::<momentum::Momentum>(
        r,
        "ResourceApplyKerasMomentum",
        Some("ResourceSparseApplyKerasMomentum"),
    );
    apply::register_resource::<adam_amsgrad::AdamWithAmsgrad>(r, "ResourceApplyAdamWithAmsgrad", None);
}
