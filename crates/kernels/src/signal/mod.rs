//! Signal processing kernels (`tf.signal`): the fast Fourier transforms.

mod fft;

use crate::KernelRegistry;

pub(crate) fn register(r: &mut KernelRegistry) {
    fft::register(r);
}
