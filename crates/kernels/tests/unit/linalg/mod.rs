mod kernels;
mod spectral;
