mod farmhash;
mod kernels;
